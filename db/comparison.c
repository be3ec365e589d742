/* Artifacts and comparisons, with the stored summary. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

void db_artifact_release(struct db_artifact *a)
{
	if (!a)
		return;
	free(a->path);
	a->path = NULL;
}

int db_artifact_put(struct db *db, int64_t *out_id, const struct db_artifact *a)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = db_prepare(db, &st,
		       "INSERT INTO artifacts (path, size, sha256) VALUES (?, ?, ?)"
		       " ON CONFLICT (path, size, sha256) DO UPDATE SET size = excluded.size"
		       " RETURNING id");
	if (r < 0)
		return r;
	db_bind_text(st, 1, a->path);
	sqlite3_bind_int64(st, 2, a->size);
	db_bind_text(st, 3, a->sha256);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		r = db_fail(db, rc, "recording an artifact");
		goto out;
	}
	*out_id = sqlite3_column_int64(st, 0);
	sqlite3_step(st);
out:
	db_finish(st);
	return r;
}

int db_artifact_load(struct db *db, struct db_artifact *out, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT path, size, sha256 FROM artifacts WHERE id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r = err_set(-ENOENT, "no artifact %lld", (long long)id);
		goto out;
	}
	if (rc != SQLITE_ROW) {
		r = db_fail(db, rc, "loading an artifact");
		goto out;
	}
	out->id = id;
	out->path = db_column_strdup(st, 0);
	out->size = sqlite3_column_int64(st, 1);
	db_column_copy(out->sha256, sizeof(out->sha256), st, 2);
out:
	db_finish(st);
	return r;
}

void db_summary_release(struct db_summary *s)
{
	size_t i;

	if (!s)
		return;
	free(s->metric);
	free(s->pair_gains);
	for (i = 0; i < s->nflags; i++)
		free(s->flags[i]);
	free(s->flags);
	for (i = 0; i < s->nreasons; i++)
		free(s->reasons[i]);
	free(s->reasons);
	for (i = 0; i < s->nprocesses; i++)
		free(s->process_reason[i]);
	free(s->process_reason);
	free(s->process_valid);
	memset(s, 0, sizeof(*s));
}

void db_comparison_release(struct db_comparison *c)
{
	size_t i;

	if (!c)
		return;
	free(c->rule);
	free(c->case_name);
	free(c->metric_requested);
	free(c->metric);
	free(c->host);
	free(c->fingerprint);
	free(c->args_json);
	free(c->job_head);
	db_artifact_release(&c->old);
	db_artifact_release(&c->new);
	db_summary_release(&c->summary);
	for (i = 0; i < c->nprocesses; i++)
		db_process_release(&c->processes[i]);
	free(c->processes);
	memset(c, 0, sizeof(*c));
}

int db_comparison_insert(struct db *db, int64_t *out_id, const struct db_comparison *c)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = db_prepare(db, &st,
		       "INSERT INTO comparisons (created_at, state, rule, case_name,"
		       " metric_requested, metric, host, fingerprint, old_artifact,"
		       " new_artifact, pairs, warmup, timeout_s, min_effect, noise, args,"
		       " job_id, base_build, head_build)"
		       " VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, c->created_at);
	db_bind_text(st, 2, c->rule);
	db_bind_text(st, 3, c->case_name);
	db_bind_text(st, 4, c->metric_requested);
	db_bind_text(st, 5, c->metric);
	db_bind_text(st, 6, c->host);
	db_bind_text(st, 7, c->fingerprint);
	sqlite3_bind_int64(st, 8, c->old.id);
	sqlite3_bind_int64(st, 9, c->new.id);
	sqlite3_bind_int(st, 10, c->pairs);
	sqlite3_bind_int(st, 11, c->warmup);
	db_bind_real(st, 12, c->timeout_s);
	db_bind_real(st, 13, c->min_effect);
	db_bind_real(st, 14, c->noise);
	db_bind_text(st, 15, c->args_json ? c->args_json : "{}");
	if (c->job_id) {
		sqlite3_bind_int64(st, 16, c->job_id);
		sqlite3_bind_int64(st, 17, c->base_build);
		sqlite3_bind_int64(st, 18, c->head_build);
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE) {
		r = db_fail(db, rc, "recording a comparison");
		goto out;
	}
	*out_id = sqlite3_last_insert_rowid(db->h);
out:
	db_finish(st);
	return r;
}

static void bind_arm(sqlite3_stmt *st, int i, const struct db_arm_stats *a)
{
	db_bind_real(st, i, a->set ? a->median : NAN);
	db_bind_real(st, i + 1, a->set ? a->min : NAN);
	db_bind_real(st, i + 2, a->set ? a->max : NAN);
	db_bind_real(st, i + 3, a->set ? a->spread : NAN);
}

static int store_notes(struct db *db, int64_t id, const char *kind, char **texts, size_t n)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int r;

	r = db_prepare(db, &st, "INSERT INTO comparison_notes (comparison_id, kind, idx, text)"
		       " VALUES (?, ?, ?, ?)");
	if (r < 0)
		return r;
	for (i = 0; i < n && r == 0; i++) {
		sqlite3_bind_int64(st, 1, id);
		db_bind_text(st, 2, kind);
		sqlite3_bind_int(st, 3, (int)i);
		db_bind_text(st, 4, texts[i]);
		r = db_step(db, st, "recording the summary");
	}
	db_finish(st);
	return r;
}

int db_comparison_finish(struct db *db, int64_t id, enum db_state state,
			 const struct db_summary *s, const struct db_process *procs,
			 size_t nprocs)
{
	sqlite3_stmt *st = NULL;
	char now[TIME_ISO_LEN];
	size_t i;
	int r;

	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st,
		       "UPDATE comparisons SET state = ?, finished_at = ?, verdict = ?,"
		       " gain_median = ?, gain_min = ?, gain_max = ?,"
		       " old_median = ?, old_min = ?, old_max = ?, old_spread = ?,"
		       " new_median = ?, new_min = ?, new_max = ?, new_spread = ?,"
		       " digests_equal = ?, metric = ? WHERE id = ?");
	if (r < 0)
		goto out;
	db_bind_text(st, 1, db_state_name(state));
	db_bind_text(st, 2, now);
	db_bind_text(st, 3, s->verdict);
	db_bind_real(st, 4, s->has_gain ? s->gain_median : NAN);
	db_bind_real(st, 5, s->has_gain ? s->gain_min : NAN);
	db_bind_real(st, 6, s->has_gain ? s->gain_max : NAN);
	bind_arm(st, 7, &s->old);
	bind_arm(st, 11, &s->new);
	sqlite3_bind_int(st, 15, s->digests_equal);
	db_bind_text(st, 16, s->metric);
	sqlite3_bind_int64(st, 17, id);
	r = db_step(db, st, "recording the summary");
	if (r < 0)
		goto out;
	db_finish(st);
	st = NULL;

	/* A summary replaces any earlier one: finishing is idempotent. */
	r = db_prepare(db, &st, "DELETE FROM comparison_notes WHERE comparison_id = ?1;");
	if (r < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	r = db_step(db, st, "recording the summary");
	if (r < 0)
		goto out;
	db_finish(st);
	r = db_prepare(db, &st, "DELETE FROM pair_gains WHERE comparison_id = ?1;");
	if (r < 0)
		goto out;
	sqlite3_bind_int64(st, 1, id);
	r = db_step(db, st, "recording the summary");
	if (r < 0)
		goto out;
	db_finish(st);

	r = store_notes(db, id, "flag", s->flags, s->nflags);
	if (r < 0)
		goto out;
	r = store_notes(db, id, "reason", s->reasons, s->nreasons);
	if (r < 0)
		goto out;

	r = db_prepare(db, &st, "INSERT INTO pair_gains (comparison_id, pair, gain) VALUES (?, ?, ?)");
	if (r < 0)
		goto out;
	for (i = 0; i < s->npair_gains; i++) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int(st, 2, (int)i + 1);
		db_bind_real(st, 3, s->pair_gains[i]);
		r = db_step(db, st, "recording the pair gains");
		if (r < 0)
			goto out;
	}
	db_finish(st);

	r = db_prepare(db, &st, "UPDATE processes SET valid = ?, invalid_reason = ?,"
		       " state = CASE WHEN state = 'running' THEN 'abandoned' ELSE state END"
		       " WHERE id = ?");
	if (r < 0)
		goto out;
	for (i = 0; i < nprocs && i < s->nprocesses; i++) {
		sqlite3_bind_int(st, 1, s->process_valid[i]);
		db_bind_text(st, 2, s->process_reason[i]);
		sqlite3_bind_int64(st, 3, procs[i].id);
		r = db_step(db, st, "recording process validity");
		if (r < 0)
			goto out;
	}
	r = db_commit(db);
out:
	db_finish(st);
	if (r < 0)
		db_rollback(db);
	return r;
}

static void load_arm(sqlite3_stmt *st, int i, struct db_arm_stats *a)
{
	a->set = sqlite3_column_type(st, i) != SQLITE_NULL;
	a->median = db_column_real(st, i);
	a->min = db_column_real(st, i + 1);
	a->max = db_column_real(st, i + 2);
	a->spread = db_column_real(st, i + 3);
}

static int load_notes(struct db *db, struct db_comparison *c)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = db_prepare(db, &st, "SELECT kind, text FROM comparison_notes"
		       " WHERE comparison_id = ? ORDER BY kind, idx");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, c->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *kind = (const char *)sqlite3_column_text(st, 0);
		struct db_summary *s = &c->summary;

		if (kind && !strcmp(kind, "flag")) {
			s->flags = xrealloc(s->flags, (s->nflags + 1) * sizeof(char *));
			s->flags[s->nflags++] = db_column_strdup(st, 1);
		} else {
			s->reasons = xrealloc(s->reasons, (s->nreasons + 1) * sizeof(char *));
			s->reasons[s->nreasons++] = db_column_strdup(st, 1);
		}
	}
	if (rc != SQLITE_DONE)
		r = db_fail(db, rc, "loading the summary");
	db_finish(st);
	if (r < 0)
		return r;

	r = db_prepare(db, &st, "SELECT gain FROM pair_gains WHERE comparison_id = ? ORDER BY pair");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, c->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_summary *s = &c->summary;

		s->pair_gains = xrealloc(s->pair_gains, (s->npair_gains + 1) * sizeof(double));
		s->pair_gains[s->npair_gains++] = db_column_real(st, 0);
	}
	if (rc != SQLITE_DONE)
		r = db_fail(db, rc, "loading the pair gains");
	db_finish(st);
	return r;
}

int db_comparison_load(struct db *db, struct db_comparison *out, int64_t id)
{
	struct db_comparison c;
	sqlite3_stmt *st = NULL;
	int64_t old_id, new_id;
	size_t i;
	int rc, r;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	r = db_prepare(db, &st,
		       "SELECT c.created_at, c.finished_at, c.state, c.rule, c.case_name,"
		       " c.metric_requested, c.metric, c.host, c.fingerprint, c.old_artifact,"
		       " c.new_artifact, c.pairs, c.warmup, c.timeout_s, c.min_effect, c.noise,"
		       " c.args, c.verdict, c.gain_median, c.gain_min, c.gain_max,"
		       " c.old_median, c.old_min, c.old_max, c.old_spread,"
		       " c.new_median, c.new_min, c.new_max, c.new_spread, c.digests_equal,"
		       " coalesce(c.job_id, 0), coalesce(c.base_build, 0), coalesce(c.head_build, 0),"
		       " j.head, j.commit_oid, j.base_oid"
		       " FROM comparisons c LEFT JOIN jobs j ON j.id = c.job_id WHERE c.id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r = err_set(-ENOENT, "no comparison %lld in '%s'", (long long)id, db->path);
		goto out;
	}
	if (rc != SQLITE_ROW) {
		r = db_fail(db, rc, "loading a comparison");
		goto out;
	}
	c.id = id;
	db_column_copy(c.created_at, sizeof(c.created_at), st, 0);
	db_column_copy(c.finished_at, sizeof(c.finished_at), st, 1);
	c.state = db_state_from_name((const char *)sqlite3_column_text(st, 2));
	c.rule = db_column_strdup(st, 3);
	c.case_name = db_column_strdup(st, 4);
	c.metric_requested = db_column_strdup(st, 5);
	c.metric = db_column_strdup(st, 6);
	c.host = db_column_strdup(st, 7);
	c.fingerprint = db_column_strdup(st, 8);
	old_id = sqlite3_column_int64(st, 9);
	new_id = sqlite3_column_int64(st, 10);
	c.pairs = sqlite3_column_int(st, 11);
	c.warmup = sqlite3_column_int(st, 12);
	c.timeout_s = db_column_real(st, 13);
	c.min_effect = db_column_real(st, 14);
	c.noise = db_column_real(st, 15);
	c.args_json = db_column_strdup(st, 16);
	c.has_summary = sqlite3_column_type(st, 17) != SQLITE_NULL;
	db_column_copy(c.summary.verdict, sizeof(c.summary.verdict), st, 17);
	c.summary.has_gain = sqlite3_column_type(st, 18) != SQLITE_NULL;
	c.summary.gain_median = db_column_real(st, 18);
	c.summary.gain_min = db_column_real(st, 19);
	c.summary.gain_max = db_column_real(st, 20);
	load_arm(st, 21, &c.summary.old);
	load_arm(st, 25, &c.summary.new);
	c.summary.digests_equal = sqlite3_column_int(st, 29);
	c.job_id = sqlite3_column_int64(st, 30);
	c.base_build = sqlite3_column_int64(st, 31);
	c.head_build = sqlite3_column_int64(st, 32);
	c.job_head = db_column_strdup(st, 33);
	db_column_copy(c.job_commit, sizeof(c.job_commit), st, 34);
	db_column_copy(c.job_base, sizeof(c.job_base), st, 35);
	if (c.metric)
		c.summary.metric = xstrdup(c.metric);
	db_finish(st);
	st = NULL;

	r = db_artifact_load(db, &c.old, old_id);
	if (r < 0)
		goto out;
	r = db_artifact_load(db, &c.new, new_id);
	if (r < 0)
		goto out;
	r = load_notes(db, &c);
	if (r < 0)
		goto out;
	r = db_processes_load(db, &c.processes, &c.nprocesses, id);
	if (r < 0)
		goto out;
	c.summary.nprocesses = c.nprocesses;
	c.summary.process_valid = xcalloc(c.nprocesses, sizeof(bool));
	c.summary.process_reason = xcalloc(c.nprocesses, sizeof(char *));
	for (i = 0; i < c.nprocesses; i++) {
		c.summary.process_valid[i] = c.processes[i].valid;
		if (c.processes[i].invalid_reason)
			c.summary.process_reason[i] = xstrdup(c.processes[i].invalid_reason);
	}
out:
	db_finish(st);
	if (r < 0) {
		db_comparison_release(&c);
		return r;
	}
	*out = c;
	return 0;
}

int db_comparison_list(struct db *db, struct db_comparison_row *out, size_t max,
		       int64_t before_id)
{
	sqlite3_stmt *st = NULL;
	int rc, r;
	size_t n = 0;

	r = db_prepare(db, &st,
		       "SELECT c.id, c.created_at, c.state, c.host, c.case_name,"
		       " coalesce(c.metric, ''), coalesce(c.verdict, ''), c.gain_median,"
		       " o.sha256, n.sha256 FROM comparisons c"
		       " JOIN artifacts o ON o.id = c.old_artifact"
		       " JOIN artifacts n ON n.id = c.new_artifact"
		       " WHERE c.id < ? ORDER BY c.id DESC LIMIT ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, before_id > 0 ? before_id : INT64_MAX);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_comparison_row *row = &out[n++];

		row->id = sqlite3_column_int64(st, 0);
		db_column_copy(row->created_at, sizeof(row->created_at), st, 1);
		row->state = db_state_from_name((const char *)sqlite3_column_text(st, 2));
		db_column_copy(row->host, sizeof(row->host), st, 3);
		db_column_copy(row->case_name, sizeof(row->case_name), st, 4);
		db_column_copy(row->metric, sizeof(row->metric), st, 5);
		db_column_copy(row->verdict, sizeof(row->verdict), st, 6);
		row->has_gain = sqlite3_column_type(st, 7) != SQLITE_NULL;
		row->gain_median = db_column_real(st, 7);
		db_column_copy(row->old_sha256, sizeof(row->old_sha256), st, 8);
		db_column_copy(row->new_sha256, sizeof(row->new_sha256), st, 9);
	}
	if (n < max && rc != SQLITE_DONE) {
		r = db_fail(db, rc, "listing comparisons");
		goto out;
	}
	r = (int)n;
out:
	db_finish(st);
	return r;
}

/* The ids of comparisons in one state, or in any when state is NULL. */
static int ids_query(struct db *db, int64_t **out, size_t *out_n, const char *state)
{
	sqlite3_stmt *st = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	int rc, r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT id FROM comparisons WHERE ?1 IS NULL OR state = ?1"
		       " ORDER BY id");
	if (r < 0)
		return r;
	db_bind_text(st, 1, state);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ids = xrealloc(ids, (n + 1) * sizeof(*ids));
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	db_finish(st);
	if (rc != SQLITE_DONE) {
		free(ids);
		return db_fail(db, rc, "listing comparisons");
	}
	*out = ids;
	*out_n = n;
	return 0;
}

int db_comparison_ids(struct db *db, int64_t **out, size_t *out_n)
{
	return ids_query(db, out, out_n, NULL);
}

int db_comparison_ids_in_state(struct db *db, int64_t **out, size_t *out_n, enum db_state state)
{
	return ids_query(db, out, out_n, db_state_name(state));
}
