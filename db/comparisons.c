/*
 * Comparisons with their derived rows (pair_gains, comparison_notes): the
 * record perfd pair and the agent write and finish, and every read of it:
 * one comparison whole, the ids and rows of many, the hub's filters and
 * cells, a host and case's timeline, a commit's and a job's comparisons.
 * The hub's reads are bounded by the caller's max and each filter is served
 * by an index (schema version 3), so a page costs the same on a database of
 * a thousand comparisons or of a million process records.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

void db_summary_release(struct db_summary *s)
{
	size_t i;

	if (!s)
		return;
	free(s->metric);
	free(s->pair_gains);
	free(s->stages);
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

void db_calibration_release(struct db_calibration *c)
{
	if (!c)
		return;
	free(c->metric);
	free(c->gains);
	free(c->loads);
	memset(c, 0, sizeof(*c));
}

void db_comparison_release(struct db_comparison *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->ncalibration; i++)
		db_calibration_release(&c->calibration[i]);
	free(c->calibration);
	free(c->old_manifest);
	free(c->new_manifest);
	free(c->rule);
	free(c->case_name);
	free(c->metric_requested);
	free(c->metric);
	free(c->host);
	free(c->fingerprint);
	free(c->args_json);
	free(c->job_head);
	free(c->abandoned_reason);
	db_artifact_release(&c->old);
	db_artifact_release(&c->new);
	db_summary_release(&c->summary);
	for (i = 0; i < c->nprocesses; i++)
		db_process_release(&c->processes[i]);
	free(c->processes);
	memset(c, 0, sizeof(*c));
}

/* The columns a comparison has from its start, as parameters 1 to 24 of
 * both inserts below; metric is the one chosen so far. */
static void bind_settings(sqlite3_stmt *st, const struct db_comparison *c, const char *metric)
{
	db_bind_text(st, 1, c->created_at);
	db_bind_text(st, 2, c->rule);
	db_bind_text(st, 3, c->case_name);
	db_bind_text(st, 4, c->metric_requested);
	db_bind_text(st, 5, metric);
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
	/* An A/A of the agent has its build and no job. */
	if (c->job_id)
		sqlite3_bind_int64(st, 16, c->job_id);
	if (c->base_build)
		sqlite3_bind_int64(st, 17, c->base_build);
	if (c->head_build)
		sqlite3_bind_int64(st, 18, c->head_build);
	db_bind_text(st, 19, c->aa ? "aa" : "compare");
	db_bind_text(st, 20, c->higher_better ? "higher" : "lower");
	sqlite3_bind_int(st, 21, c->max_pairs > 0 ? c->max_pairs : c->pairs);
	if (c->ncalibration) {
		struct strbuf ids = STRBUF_INIT;
		size_t i;

		for (i = 0; i < c->ncalibration; i++)
			strbuf_addf(&ids, "%s%lld", i ? "," : "[",
				    (long long)c->calibration[i].comparison_id);
		strbuf_adds(&ids, "]");
		sqlite3_bind_text(st, 22, ids.buf, -1, SQLITE_TRANSIENT);
		strbuf_release(&ids);
	}
	db_bind_text(st, 23, c->old_manifest);
	db_bind_text(st, 24, c->new_manifest);
}

int db_comparison_insert(struct db *db, int64_t *out_id, const struct db_comparison *c)
{
	sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st,
		       "INSERT INTO comparisons (created_at, state, rule, case_name,"
		       " metric_requested, metric, host, fingerprint, old_artifact,"
		       " new_artifact, pairs, warmup, timeout_s, min_effect, noise, args,"
		       " job_id, base_build, head_build, kind, better, max_pairs, calibration,"
		       " old_manifest, new_manifest, owner)"
		       " VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
		       " ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)");
	if (r < 0)
		return r;
	bind_settings(st, c, c->metric);
	db_bind_text(st, 25, db->owner);
	return db_step_insert(db, st, out_id, "recording a comparison");
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
	size_t i;
	int r = 0;

	for (i = 0; i < n && r == 0; i++)
		r = db_run(db, "INSERT INTO comparison_notes (comparison_id, kind, idx, text)"
			   " VALUES (?, ?, ?, ?)",
			   DB_ARGS(DB_INT(id), DB_TEXT(kind), DB_INT(i), DB_TEXT(texts[i])),
			   "recording the summary");
	return r;
}

/* The derived rows a summary writes anew (string literals: db_prepare's
 * cache key). */
static const char *const derived_deletes[] = {
	"DELETE FROM comparison_notes WHERE comparison_id = ?1",
	"DELETE FROM pair_gains WHERE comparison_id = ?1",
	"DELETE FROM comparison_stages WHERE comparison_id = ?1",
};

static int store_stages(struct db *db, int64_t id, const struct db_summary *s)
{
	size_t i;
	int r = 0;

	for (i = 0; i < s->nstages && r == 0; i++) {
		const struct db_stage *g = &s->stages[i];

		r = db_run(db, "INSERT INTO comparison_stages (comparison_id, stage, pairs,"
			   " test, calibration_gains, alpha, p_faster, p_slower, p_below, p_above,"
			   " cal_p_faster, cal_p_slower, cal_p_below, cal_p_above, gate_p,"
			   " spread_ratio, load_p, load_above, verdict)"
			   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			   DB_ARGS(DB_INT(id), DB_INT(i + 1), DB_INT(g->pairs), DB_TEXT(g->test),
				   DB_INT(g->calibration_gains), DB_REAL(g->alpha),
				   DB_REAL(g->p_faster), DB_REAL(g->p_slower), DB_REAL(g->p_below),
				   DB_REAL(g->p_above), DB_REAL(g->cal_p_faster),
				   DB_REAL(g->cal_p_slower), DB_REAL(g->cal_p_below),
				   DB_REAL(g->cal_p_above), DB_REAL(g->gate_p),
				   DB_REAL(g->spread_ratio), DB_REAL(g->load_p),
				   DB_REAL(g->load_above), DB_TEXT(g->verdict)),
			   "recording the stages");
	}
	return r;
}

/* A summary's derived rows: its stages, flags, reasons and pair gains. */
static int store_derived(struct db *db, int64_t id, const struct db_summary *s)
{
	size_t i;
	int r;

	r = store_stages(db, id, s);
	if (r == 0)
		r = store_notes(db, id, "flag", s->flags, s->nflags);
	if (r == 0)
		r = store_notes(db, id, "reason", s->reasons, s->nreasons);
	for (i = 0; i < s->npair_gains && r == 0; i++)
		r = db_run(db, "INSERT INTO pair_gains (comparison_id, pair, gain) VALUES (?, ?, ?)",
			   DB_ARGS(DB_INT(id), DB_INT(i + 1), DB_REAL(s->pair_gains[i])),
			   "recording the pair gains");
	return r;
}

/* The summary's columns of a comparison's row. */
static int finish_row(struct db *db, int64_t id, enum db_state state, const char *now,
		      const struct db_summary *s)
{
	sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st,
		       "UPDATE comparisons SET owner = NULL, state = ?, finished_at = ?, verdict = ?,"
		       " gain_median = ?, gain_min = ?, gain_max = ?,"
		       " old_median = ?, old_min = ?, old_max = ?, old_spread = ?,"
		       " new_median = ?, new_min = ?, new_max = ?, new_spread = ?,"
		       " digests_equal = ?, metric = ?, pairs_run = nullif(?, 0) WHERE id = ?");
	if (r < 0)
		return r;
	db_bind_args(st, DB_ARGS(DB_TEXT(db_state_name(state)), DB_TEXT(now),
				 DB_TEXT(s->verdict), DB_REAL(s->has_gain ? s->gain_median : NAN),
				 DB_REAL(s->has_gain ? s->gain_min : NAN),
				 DB_REAL(s->has_gain ? s->gain_max : NAN)));
	bind_arm(st, 7, &s->old);
	bind_arm(st, 11, &s->new);
	sqlite3_bind_int(st, 15, s->digests_equal);
	db_bind_text(st, 16, s->metric);
	sqlite3_bind_int(st, 17, s->pairs_run > 0 ? s->pairs_run : 0);
	sqlite3_bind_int64(st, 18, id);
	return db_step(db, st, "recording the summary");
}

int db_comparison_finish(struct db *db, int64_t id, enum db_state state,
			 const struct db_summary *s, const struct db_process *procs,
			 size_t nprocs)
{
	char now[TIME_ISO_LEN];
	size_t i;
	int r;

	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	r = finish_row(db, id, state, now, s);
	if (r == 0)
		r = db_receipt_forget(db, id);
	/* A summary replaces any earlier one: finishing is idempotent. */
	for (i = 0; r == 0 && i < ARRAY_SIZE(derived_deletes); i++)
		r = db_run(db, derived_deletes[i], DB_ARGS(DB_INT(id)), "recording the summary");
	if (r == 0)
		r = store_derived(db, id, s);
	for (i = 0; r == 0 && i < nprocs && i < s->nprocesses; i++)
		r = db_run(db, "UPDATE processes SET valid = ?, invalid_reason = ?,"
			   " state = CASE WHEN state = 'running' THEN 'abandoned' ELSE state END"
			   " WHERE id = ?", DB_ARGS(DB_INT(s->process_valid[i]),
						    DB_TEXT(s->process_reason[i]), DB_INT(procs[i].id)),
			   "recording process validity");
	return db_end(db, r);
}

/* The row db_comparison_insert, db_comparison_finish (state done) and the
 * ingest's own columns leave, written once: finished_at and job_id are c's,
 * the metric is the summary's. */
int db_comparison_store(struct db *db, int64_t *out_id, const struct db_comparison *c,
			const struct db_summary *s)
{
	sqlite3_stmt *st = NULL;
	int64_t id = 0;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st,
		       "INSERT INTO comparisons (created_at, state, rule, case_name,"
		       " metric_requested, metric, host, fingerprint, old_artifact,"
		       " new_artifact, pairs, warmup, timeout_s, min_effect, noise, args,"
		       " job_id, base_build, head_build, kind, better, max_pairs, calibration,"
		       " old_manifest, new_manifest, finished_at, verdict,"
		       " gain_median, gain_min, gain_max,"
		       " old_median, old_min, old_max, old_spread,"
		       " new_median, new_min, new_max, new_spread, digests_equal, pairs_run,"
		       " time_budget_s)"
		       " VALUES (?1, 'done', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
		       " ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28,"
		       " ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40)");
	if (r < 0)
		goto out;
	bind_settings(st, c, s->metric);
	db_bind_text(st, 25, c->finished_at);
	db_bind_text(st, 26, s->verdict);
	db_bind_real(st, 27, s->has_gain ? s->gain_median : NAN);
	db_bind_real(st, 28, s->has_gain ? s->gain_min : NAN);
	db_bind_real(st, 29, s->has_gain ? s->gain_max : NAN);
	bind_arm(st, 30, &s->old);
	bind_arm(st, 34, &s->new);
	sqlite3_bind_int(st, 38, s->digests_equal);
	if (s->pairs_run > 0)
		sqlite3_bind_int(st, 39, s->pairs_run);
	if (c->time_budget_s > 0)
		db_bind_real(st, 40, c->time_budget_s);
	r = db_step_insert(db, st, &id, "recording a comparison");
	if (r == 0)
		r = store_derived(db, id, s);
out:
	r = db_end(db, r);
	if (r == 0)
		*out_id = id;
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

static void gain_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	*(double *)elem = db_column_real(st, 0);
}

/* The comparison's notes of one kind, flag or reason, in order. */
static int notes_load(struct db *db, char ***out, size_t *out_n, int64_t id, const char *kind)
{
	static const struct db_rows how = {
		.size = sizeof(char *), .max = SIZE_MAX, .fill = db_fill_string,
		.release = db_release_string, .doing = "loading the summary",
	};

	return db_rows_select(db, "SELECT text FROM comparison_notes"
			      " WHERE comparison_id = ? AND kind = ? ORDER BY idx",
			      DB_ARGS(DB_INT(id), DB_TEXT(kind)), &how, out, out_n);
}

/* A comparison's pair gains, in pair order. */
static int gains_load(struct db *db, double **out, size_t *out_n, int64_t id, const char *doing)
{
	const struct db_rows how = {
		.size = sizeof(double), .max = SIZE_MAX, .fill = gain_fill, .doing = doing,
	};

	return db_rows_select(db, "SELECT gain FROM pair_gains WHERE comparison_id = ?"
			      " ORDER BY pair", DB_ARGS(DB_INT(id)), &how, out, out_n);
}

static void load_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	*(double *)elem = db_process_load(db_column_real(st, 0), db_column_real(st, 1));
}

/* The load of each counted process of a comparison (db_process_load, NAN
 * where it has none), in execution order. */
static int loads_load(struct db *db, double **out, size_t *out_n, int64_t id)
{
	const struct db_rows how = {
		.size = sizeof(double), .max = SIZE_MAX, .fill = load_fill,
		.doing = "loading a calibration's CPU pressure",
	};

	return db_rows_select(db, "SELECT cpu_wait_ms, wall_ms FROM processes"
			      " WHERE comparison_id = ? AND NOT warmup AND state = 'done'"
			      " ORDER BY seq", DB_ARGS(DB_INT(id)), &how, out, out_n);
}

/* The stored summary's derived rows: flags, reasons and pair gains. */
static int load_notes(struct db *db, struct db_comparison *c)
{
	struct db_summary *s = &c->summary;
	int r;

	r = notes_load(db, &s->flags, &s->nflags, c->id, "flag");
	if (r == 0)
		r = notes_load(db, &s->reasons, &s->nreasons, c->id, "reason");
	if (r == 0)
		r = gains_load(db, &s->pair_gains, &s->npair_gains, c->id, "loading the pair gains");
	return r;
}

static void stage_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_stage *g = elem;

	g->pairs = sqlite3_column_int(st, 0);
	db_column_copy(g->test, sizeof(g->test), st, 1);
	g->calibration_gains = sqlite3_column_int(st, 2);
	g->alpha = db_column_real(st, 3);
	g->p_faster = db_column_real(st, 4);
	g->p_slower = db_column_real(st, 5);
	g->p_below = db_column_real(st, 6);
	g->p_above = db_column_real(st, 7);
	g->cal_p_faster = db_column_real(st, 8);
	g->cal_p_slower = db_column_real(st, 9);
	g->cal_p_below = db_column_real(st, 10);
	g->cal_p_above = db_column_real(st, 11);
	g->gate_p = db_column_real(st, 12);
	g->spread_ratio = db_column_real(st, 13);
	db_column_copy(g->verdict, sizeof(g->verdict), st, 14);
	g->load_p = db_column_real(st, 15);
	g->load_above = db_column_real(st, 16);
}

/* The stored judgement of each stage (none for a version 1 row). */
static int load_stages(struct db *db, struct db_summary *s, int64_t id)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_stage), .max = SIZE_MAX, .fill = stage_fill,
		.doing = "loading the stages",
	};

	return db_rows_select(db, "SELECT pairs, test, calibration_gains, alpha, p_faster,"
			      " p_slower, p_below, p_above, cal_p_faster, cal_p_slower,"
			      " cal_p_below, cal_p_above, gate_p, spread_ratio, verdict, load_p,"
			      " load_above FROM comparison_stages"
			      " WHERE comparison_id = ? ORDER BY stage", DB_ARGS(DB_INT(id)), &how,
			      &s->stages, &s->nstages);
}

/* The ids of a calibration column: "[12,14,15]". */
static int calibration_ids(int64_t **out, size_t *out_n, const char *text, int64_t id)
{
	const char *p = text;
	char *end;

	*out = NULL;
	*out_n = 0;
	if (*p++ != '[')
		goto bad;
	while (*p && *p != ']') {
		long long v = strtoll(p, &end, 10);

		if (end == p || v <= 0)
			goto bad;
		*out = xrealloc(*out, (*out_n + 1) * sizeof(**out));
		(*out)[(*out_n)++] = v;
		p = end;
		if (*p == ',')
			p++;
	}
	if (*p != ']' || p[1])
		goto bad;
	return 0;
bad:
	free(*out);
	*out = NULL;
	*out_n = 0;
	return err_set(-EPROTO, "comparison %lld: its calibration '%s' is not a list of ids",
		       (long long)id, text);
}

int db_calibration_load(struct db *db, struct db_calibration *cal, size_t n)
{
	size_t i;
	int r = 0;

	for (i = 0; i < n && r == 0; i++) {
		int64_t id = cal[i].comparison_id;

		free(cal[i].metric);
		free(cal[i].gains);
		free(cal[i].loads);
		cal[i].metric = NULL;
		cal[i].gains = NULL;
		cal[i].ngains = 0;
		cal[i].loads = NULL;
		cal[i].nloads = 0;
		r = db_run_row(db, db_fill_string, &cal[i].metric, "SELECT metric FROM comparisons"
			       " WHERE id = ?", DB_ARGS(DB_INT(id)), "loading a calibration");
		if (r == -ENOENT)
			r = err_set(-ENOENT, "no comparison %lld in '%s' to calibrate with",
				    (long long)id, db->path);
		if (r == 0)
			r = gains_load(db, &cal[i].gains, &cal[i].ngains, id,
				       "loading a calibration's pair gains");
		if (r == 0)
			r = loads_load(db, &cal[i].loads, &cal[i].nloads, id);
	}
	return r;
}

/* The A/A comparisons a comparison names as its calibration, each with its
 * metric and its stored pair gains. */
static int load_calibration(struct db *db, struct db_comparison *c, const char *text)
{
	int64_t *ids;
	size_t n, i;
	int r;

	if (!text)
		return 0;
	r = calibration_ids(&ids, &n, text, c->id);
	if (r < 0)
		return r;
	c->calibration = xcalloc(n + 1, sizeof(*c->calibration));
	for (i = 0; i < n; i++)
		c->calibration[i].comparison_id = ids[i];
	c->ncalibration = n;
	free(ids);
	r = db_calibration_load(db, c->calibration, n);
	if (r == -ENOENT)
		r = err_set(-EPROTO, "comparison %lld names a calibration that is not stored: %s",
			    (long long)c->id, err_last());
	return r;
}

/* A comparison's row as db_comparison_load reads it: into c, but for the
 * ids of its artifacts and its calibration's text, which name what is
 * loaded next. */
struct comparison_row {
	struct db_comparison *c;
	int64_t old_id, new_id;
	char *calibration;
};

static void comparison_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct comparison_row *x = elem;
	struct db_comparison *c = x->c;

	db_column_copy(c->created_at, sizeof(c->created_at), st, 0);
	db_column_copy(c->finished_at, sizeof(c->finished_at), st, 1);
	c->state = db_state_from_name((const char *)sqlite3_column_text(st, 2));
	c->rule = db_column_strdup(st, 3);
	c->case_name = db_column_strdup(st, 4);
	c->metric_requested = db_column_strdup(st, 5);
	c->metric = db_column_strdup(st, 6);
	c->host = db_column_strdup(st, 7);
	c->fingerprint = db_column_strdup(st, 8);
	x->old_id = sqlite3_column_int64(st, 9);
	x->new_id = sqlite3_column_int64(st, 10);
	c->pairs = sqlite3_column_int(st, 11);
	c->warmup = sqlite3_column_int(st, 12);
	c->timeout_s = db_column_real(st, 13);
	c->min_effect = db_column_real(st, 14);
	c->noise = db_column_real(st, 15);
	c->args_json = db_column_strdup(st, 16);
	c->has_summary = sqlite3_column_type(st, 17) != SQLITE_NULL;
	db_column_copy(c->summary.verdict, sizeof(c->summary.verdict), st, 17);
	c->summary.has_gain = sqlite3_column_type(st, 18) != SQLITE_NULL;
	c->summary.gain_median = db_column_real(st, 18);
	c->summary.gain_min = db_column_real(st, 19);
	c->summary.gain_max = db_column_real(st, 20);
	load_arm(st, 21, &c->summary.old);
	load_arm(st, 25, &c->summary.new);
	c->summary.digests_equal = sqlite3_column_int(st, 29);
	c->job_id = sqlite3_column_int64(st, 30);
	c->base_build = sqlite3_column_int64(st, 31);
	c->head_build = sqlite3_column_int64(st, 32);
	c->job_head = db_column_strdup(st, 33);
	db_column_copy(c->job_commit, sizeof(c->job_commit), st, 34);
	db_column_copy(c->job_base, sizeof(c->job_base), st, 35);
	c->aa = !strcmp((const char *)sqlite3_column_text(st, 36), "aa");
	c->higher_better = !strcmp((const char *)sqlite3_column_text(st, 37), "higher");
	c->max_pairs = sqlite3_column_int(st, 38);
	x->calibration = db_column_strdup(st, 39);
	c->old_manifest = db_column_strdup(st, 40);
	c->new_manifest = db_column_strdup(st, 41);
	c->summary.pairs_run = sqlite3_column_int(st, 42);
	c->abandoned_reason = db_column_strdup(st, 43);
	c->time_budget_s = db_column_real(st, 44);
	if (c->metric)
		c->summary.metric = xstrdup(c->metric);
}

/* What the rows beside a comparison's own hold: its artifacts, notes,
 * stages, calibration and processes, and the processes' validity in the
 * summary. */
static int load_parts(struct db *db, struct db_comparison *c, const struct comparison_row *x)
{
	int r;

	r = db_artifact_load(db, &c->old, x->old_id);
	if (r == 0)
		r = db_artifact_load(db, &c->new, x->new_id);
	if (r == 0)
		r = load_notes(db, c);
	if (r == 0)
		r = load_stages(db, &c->summary, c->id);
	if (r == 0)
		r = load_calibration(db, c, x->calibration);
	if (r == 0)
		r = db_processes_load(db, &c->processes, &c->nprocesses, c->id);
	if (r < 0)
		return r;
	db_summary_validity_fill(c);
	return 0;
}

void db_summary_validity_fill(struct db_comparison *c)
{
	size_t i;

	c->summary.nprocesses = c->nprocesses;
	c->summary.process_valid = xcalloc(c->nprocesses + 1, sizeof(bool));
	c->summary.process_reason = xcalloc(c->nprocesses + 1, sizeof(char *));
	for (i = 0; i < c->nprocesses; i++) {
		c->summary.process_valid[i] = c->processes[i].valid;
		if (c->processes[i].invalid_reason)
			c->summary.process_reason[i] = xstrdup(c->processes[i].invalid_reason);
	}
}

int db_comparison_load(struct db *db, struct db_comparison *out, int64_t id)
{
	struct db_comparison c;
	struct comparison_row x = { &c, 0, 0, NULL };
	int r;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.id = id;
	r = db_run_row(db, comparison_fill, &x,
		       "SELECT c.created_at, c.finished_at, c.state, c.rule, c.case_name,"
		       " c.metric_requested, c.metric, c.host, c.fingerprint, c.old_artifact,"
		       " c.new_artifact, c.pairs, c.warmup, c.timeout_s, c.min_effect, c.noise,"
		       " c.args, c.verdict, c.gain_median, c.gain_min, c.gain_max,"
		       " c.old_median, c.old_min, c.old_max, c.old_spread,"
		       " c.new_median, c.new_min, c.new_max, c.new_spread, c.digests_equal,"
		       " coalesce(c.job_id, 0), coalesce(c.base_build, 0), coalesce(c.head_build, 0),"
		       " j.head, j.commit_oid, j.base_oid, c.kind, c.better,"
		       " coalesce(c.max_pairs, c.pairs), c.calibration, c.old_manifest,"
		       " c.new_manifest, coalesce(c.pairs_run, 0), c.abandoned_reason,"
		       " coalesce(c.time_budget_s, 0)"
		       " FROM comparisons c LEFT JOIN jobs j ON j.id = c.job_id WHERE c.id = ?",
		       DB_ARGS(DB_INT(id)), "loading a comparison");
	if (r == -ENOENT)
		r = err_set(-ENOENT, "no comparison %lld in '%s'", (long long)id, db->path);
	if (r == 0)
		r = load_parts(db, &c, &x);
	free(x.calibration);
	if (r < 0) {
		db_comparison_release(&c);
		return r;
	}
	*out = c;
	return 0;
}

struct calibration_pick {
	int64_t id;
	int pairs;
};

static void pick_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct calibration_pick *p = elem;

	p->id = sqlite3_column_int64(st, 0);
	p->pairs = sqlite3_column_int(st, 1);
}

int db_calibration_select(struct db *db, struct db_calibration **out, size_t *out_n,
			  const char *rule, const char *host, const char *case_name,
			  bool higher_better, const char *fingerprint, size_t max_gains)
{
	/* Enough rows to fill max_gains with A/A comparisons of one pair. */
	struct db_rows how = {
		.size = sizeof(struct calibration_pick), .max = max_gains, .fill = pick_fill,
		.doing = "choosing a calibration",
	};
	struct calibration_pick *picks;
	size_t n, i, take = 0, total = 0;
	int r;

	*out = NULL;
	*out_n = 0;
	if (max_gains == 0)
		return 0;
	r = db_rows_select(db, "SELECT id, coalesce(pairs_run, pairs) FROM comparisons"
			   " WHERE host = ? AND case_name = ? AND kind = 'aa' AND state = 'done'"
			   " AND rule = ? AND better = ? AND fingerprint IS ?"
			   " AND verdict IS NOT NULL AND verdict != 'invalid'"
			   " ORDER BY id DESC",
			   DB_ARGS(DB_TEXT(host), DB_TEXT(case_name), DB_TEXT(rule),
				   DB_TEXT(higher_better ? "higher" : "lower"), DB_TEXT(fingerprint)),
			   &how, &picks, &n);
	if (r < 0)
		return r;
	while (take < n && total + (size_t)picks[take].pairs <= max_gains)
		total += (size_t)picks[take++].pairs;
	if (take) {
		*out = xcalloc(take, sizeof(**out));
		for (i = 0; i < take; i++)
			(*out)[i].comparison_id = picks[take - 1 - i].id;
		*out_n = take;
	}
	free(picks);
	return 0;
}

/* The columns of a comparison_row, first in every list of them. */
static void row_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_comparison_row *row = elem;

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
	db_column_copy(row->old_manifest, sizeof(row->old_manifest), st, 10);
	db_column_copy(row->new_manifest, sizeof(row->new_manifest), st, 11);
	row->aa = !strcmp((const char *)sqlite3_column_text(st, 12), "aa");
}

int db_comparison_list(struct db *db, struct db_comparison_row *out, size_t max,
		       int64_t before_id)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = row_fill,
		.doing = "listing comparisons",
	};

	return db_rows_select_fill(db, "SELECT c.id, c.created_at, c.state, c.host, c.case_name,"
				   " coalesce(c.metric, ''), coalesce(c.verdict, ''), c.gain_median,"
				   " o.sha256, n.sha256, c.old_manifest, c.new_manifest, c.kind"
				   " FROM comparisons c JOIN artifacts o ON o.id = c.old_artifact"
				   " JOIN artifacts n ON n.id = c.new_artifact"
				   " WHERE c.id < ? ORDER BY c.id DESC LIMIT ?",
				   DB_ARGS(DB_INT(before_id > 0 ? before_id : INT64_MAX),
					   DB_INT(max)), &how, out);
}

/* The ids of comparisons in one state, or in any when state is NULL. */
static int ids_query(struct db *db, int64_t **out, size_t *out_n, const char *state)
{
	return db_ids_select(db, out, out_n, SIZE_MAX, "SELECT id FROM comparisons"
			     " WHERE ?1 IS NULL OR state = ?1 ORDER BY id", DB_ARGS(DB_TEXT(state)),
			     "listing comparisons");
}

int db_comparison_ids(struct db *db, int64_t **out, size_t *out_n)
{
	return ids_query(db, out, out_n, NULL);
}

int db_comparison_ids_in_state(struct db *db, int64_t **out, size_t *out_n, enum db_state state)
{
	return ids_query(db, out, out_n, db_state_name(state));
}

static void orphan_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_orphan *o = elem;

	o->id = sqlite3_column_int64(st, 0);
	o->pid = owner_pid((const char *)sqlite3_column_text(st, 1));
}

int db_comparison_orphans(struct db *db, struct db_orphan **out, size_t *out_n, bool unowned)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_orphan), .max = SIZE_MAX, .fill = orphan_fill,
		.doing = "finding the comparisons left running",
	};

	return db_rows_select(db, "SELECT id, owner FROM comparisons WHERE state = 'running' AND"
			      " (perfd_owner_gone(owner) OR (?1 AND owner IS NULL AND id NOT IN"
			      " (SELECT comparison_id FROM comparison_origins))) ORDER BY id",
			      DB_ARGS(DB_INT(unowned)), &how, out, out_n);
}

int db_comparison_abandoned_reason_set(struct db *db, int64_t id, const char *reason)
{
	int r;

	r = db_run(db, "UPDATE comparisons SET abandoned_reason = ? WHERE id = ? AND"
		   " state = 'running'", DB_ARGS(DB_TEXT(reason), DB_INT(id)),
		   "recording why a comparison was abandoned");
	if (r == 0 && sqlite3_changes(db->h) == 0)
		r = err_set(-EALREADY, "comparison %lld in '%s' is not running",
			    (long long)id, db->path);
	return r;
}

/* A comparison's id and state, for db_job_comparison. */
struct id_state {
	int64_t *id;
	enum db_state *state;
};

static void id_state_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct id_state *x = elem;

	*x->id = sqlite3_column_int64(st, 0);
	*x->state = db_state_from_name((const char *)sqlite3_column_text(st, 1));
}

int db_job_comparison(struct db *db, int64_t *out_id, enum db_state *out_state,
		      int64_t job_id, const char *case_name)
{
	struct id_state x = { out_id, out_state };

	return db_run_row(db, id_state_fill, &x, "SELECT id, state FROM comparisons"
			  " WHERE job_id = ? AND case_name = ? ORDER BY id DESC LIMIT 1",
			  DB_ARGS(DB_INT(job_id), DB_TEXT(case_name)),
			  "finding a job's comparison");
}

/*
 * Per job of the commit and per host and case, only the newest done
 * comparison counts: an older one was measured again and is superseded.
 * Two jobs at one commit (a branch and a pull head) are replications and
 * both count. The order groups the rows of one cell together.
 */
int db_commit_comparison_ids(struct db *db, int64_t *out, size_t max, const char *commit)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = db_fill_int64,
		.doing = "finding a commit's comparisons",
	};

	return db_rows_select_fill(db, "SELECT c.id FROM comparisons c"
				   " JOIN artifacts o ON o.id = c.old_artifact"
				   " JOIN artifacts n ON n.id = c.new_artifact"
				   " WHERE c.id IN (SELECT max(c2.id) FROM jobs j"
				   "  JOIN comparisons c2 ON c2.job_id = j.id"
				   "  WHERE j.commit_oid = ?1 AND j.kind = 'head' AND c2.state = 'done'"
				   "  GROUP BY c2.job_id, c2.host, c2.case_name)"
				   " ORDER BY c.host, c.case_name, c.old_manifest, c.new_manifest,"
				   " o.sha256, n.sha256, c.id LIMIT ?2",
				   DB_ARGS(DB_TEXT(commit), DB_INT(max)), &how, out);
}

#define ENTRY_COLUMNS "c.id, c.created_at, c.state, c.host, c.case_name," \
	" coalesce(c.metric, ''), coalesce(c.verdict, ''), c.gain_median, o.sha256, n.sha256," \
	" c.old_manifest, c.new_manifest, c.kind," \
	" coalesce(c.job_id, 0), coalesce(j.head, ''), coalesce(j.commit_oid, '')," \
	" CASE WHEN c.job_id IS NOT NULL OR g.origin_job > 0 THEN 'job'" \
	" WHEN c.head_build IS NOT NULL OR g.origin_head_build > 0 THEN 'calibration'" \
	" ELSE 'pair' END"

/* At a hub, what the pushing agent named (its job, its build) says who made
 * a comparison before that job or build has come itself. */
#define ENTRY_FROM " FROM comparisons c JOIN artifacts o ON o.id = c.old_artifact" \
	" JOIN artifacts n ON n.id = c.new_artifact LEFT JOIN jobs j ON j.id = c.job_id" \
	" LEFT JOIN comparison_origins g ON g.comparison_id = c.id"

static void entry_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_comparison_entry *e = elem;

	row_fill(&e->row, st, NULL);
	e->job_id = sqlite3_column_int64(st, 13);
	db_column_copy(e->head, sizeof(e->head), st, 14);
	db_column_copy(e->commit, sizeof(e->commit), st, 15);
	db_column_copy(e->made_by, sizeof(e->made_by), st, 16);
}

/* The entries sql (built per call, so prepared for this call alone and
 * not cached) selects with args bound, into out (how->max of them): the
 * count, or a negative errno. */
static int entries_query(struct db *db, struct db_comparison_entry *out,
			 const struct db_rows *how, const char *sql, const struct db_arg *args,
			 size_t nargs)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		r = db_fail(db, rc, how->doing);
		goto out;
	}
	db_bind_args(st, args, nargs);
	r = db_rows_fill(db, st, how, out);
out:
	sqlite3_finalize(st);
	return r;
}

/*
 * The WHERE clause is built from the filters present, so that the planner
 * sees plain equalities it can serve with comparisons_host_case,
 * comparisons_host, comparisons_verdict or jobs_commit; "(? IS NULL OR ...)"
 * would hide them. A filter that is absent leaves its parameter unused
 * (bound to NULL).
 */
int db_comparison_find(struct db *db, struct db_comparison_entry *out, size_t max,
		       const struct db_comparison_filter *f)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = entry_fill,
		.doing = "listing comparisons",
	};
	struct strbuf sql = STRBUF_INIT;
	char hi[DB_OID_HEX + 1] = "";
	int r;

	strbuf_adds(&sql, "SELECT " ENTRY_COLUMNS ENTRY_FROM " WHERE c.id < ?1");
	if (f->host)
		strbuf_adds(&sql, " AND c.host = ?2");
	if (f->case_name)
		strbuf_adds(&sql, " AND c.case_name = ?3");
	if (f->verdict)
		strbuf_adds(&sql, " AND c.verdict = ?4");
	if (f->commit) {
		/* A hex prefix as a range: every oid that starts with it lies in
		 * [prefix, prefix "g"), since 'g' follows every hex digit. */
		strbuf_adds(&sql, " AND c.job_id IN (SELECT id FROM jobs WHERE"
			    " commit_oid >= ?5 AND commit_oid < ?6)");
		snprintf(hi, sizeof(hi), "%sg", f->commit);
	}
	strbuf_adds(&sql, " ORDER BY c.id DESC LIMIT ?7");
	r = entries_query(db, out, &how, sql.buf,
			  DB_ARGS(DB_INT(f->before_id > 0 ? f->before_id : INT64_MAX),
				  DB_TEXT(f->host), DB_TEXT(f->case_name), DB_TEXT(f->verdict),
				  DB_TEXT(f->commit), DB_TEXT(f->commit ? hi : NULL), DB_INT(max)));
	strbuf_release(&sql);
	return r;
}

int db_comparison_cells(struct db *db, struct db_comparison_entry *out, size_t max,
			const char *host, const char *case_name)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = entry_fill,
		.doing = "pooling comparisons",
	};
	struct strbuf sql = STRBUF_INIT;
	int r;

	/* Built like db_comparison_find's, for the same reason. */
	strbuf_adds(&sql, "SELECT " ENTRY_COLUMNS ENTRY_FROM " WHERE 1");
	if (host)
		strbuf_adds(&sql, " AND c.host = ?1");
	if (case_name)
		strbuf_adds(&sql, " AND c.case_name = ?2");
	strbuf_adds(&sql, " ORDER BY c.host, c.case_name, c.old_manifest, c.new_manifest,"
		    " o.sha256, n.sha256, c.id LIMIT ?3");
	r = entries_query(db, out, &how, sql.buf,
			  DB_ARGS(DB_TEXT(host), DB_TEXT(case_name), DB_INT(max)));
	strbuf_release(&sql);
	return r;
}

void db_timeline_point_release(struct db_timeline_point *p)
{
	if (!p)
		return;
	free(p->fingerprint);
	free(p->values);
	p->fingerprint = NULL;
	p->values = NULL;
	p->nvalues = 0;
}

/* The points a timeline's values are handed out to, in id order, and the
 * one the last value went to. */
struct timeline_walk {
	struct db_timeline_point *pts;
	size_t n, at;
};

static void timeline_value_add(sqlite3_stmt *st, void *arg)
{
	struct timeline_walk *w = arg;
	int64_t cid = sqlite3_column_int64(st, 0);
	struct db_timeline_point *pt;
	struct db_timeline_value *v;

	while (w->at < w->n && w->pts[w->at].id < cid)
		w->at++;
	if (w->at == w->n || w->pts[w->at].id != cid)
		return;  /* a comparison stored since the points were read */
	pt = &w->pts[w->at];
	pt->values = xrealloc(pt->values, (pt->nvalues + 1) * sizeof(*pt->values));
	v = &pt->values[pt->nvalues++];
	memset(v, 0, sizeof(*v));
	v->seq = sqlite3_column_int(st, 1);
	db_column_copy(v->arm, sizeof(v->arm), st, 2);
	v->pair = sqlite3_column_int(st, 3);
	v->valid = sqlite3_column_int(st, 4);
	v->has_value = sqlite3_column_type(st, 5) != SQLITE_NULL;
	v->value = db_column_real(st, 5);
}

/* Every process value of the points, in one statement: a process's value
 * as the rule reads it, the metric's row, or its wall time when the metric
 * is wall_ms and it ran to its end. pts is sorted by id, as are the rows. */
static int timeline_values(struct db *db, struct db_timeline_point *pts, size_t n,
			   const char *host, const char *case_name, size_t max)
{
	struct timeline_walk w = { pts, n, 0 };
	sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare_bound(db, &st, "SELECT p.comparison_id, p.seq, p.arm, p.pair, coalesce(p.valid, 0),"
		       " coalesce(m.value, CASE WHEN c.metric = 'wall_ms' AND p.state = 'done'"
		       "  AND p.spawn_error IS NULL THEN p.wall_ms END)"
		       " FROM comparisons c JOIN processes p ON p.comparison_id = c.id"
		       " LEFT JOIN metrics m ON m.process_id = p.id AND m.name = c.metric"
		       " WHERE c.id IN (SELECT c2.id FROM comparisons c2 LEFT JOIN jobs j"
		       "  ON j.id = c2.job_id WHERE c2.host = ?1 AND c2.case_name = ?2 AND"
		       "  c2.kind = 'compare' AND coalesce(j.kind, 'head') = 'head'"
		       "  ORDER BY c2.id DESC LIMIT ?3)"
		       " ORDER BY p.comparison_id, p.seq",
		       DB_ARGS(DB_TEXT(host), DB_TEXT(case_name), DB_INT(max)));
	if (r < 0)
		return r;
	r = db_rows_each(db, st, SIZE_MAX, timeline_value_add, &w, "loading a timeline's values");
	return r < 0 ? r : 0;
}

static void timeline_point_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_timeline_point *p = elem;

	p->id = sqlite3_column_int64(st, 0);
	db_column_copy(p->created_at, sizeof(p->created_at), st, 1);
	p->job_id = sqlite3_column_int64(st, 2);
	db_column_copy(p->head, sizeof(p->head), st, 3);
	db_column_copy(p->commit, sizeof(p->commit), st, 4);
	db_column_copy(p->metric, sizeof(p->metric), st, 5);
	db_column_copy(p->verdict, sizeof(p->verdict), st, 6);
	p->has_gain = sqlite3_column_type(st, 7) != SQLITE_NULL;
	p->gain_median = db_column_real(st, 7);
	p->old_median = db_column_real(st, 8);
	p->new_median = db_column_real(st, 9);
	p->fingerprint = db_column_strdup(st, 10);
}

static void timeline_point_release(void *elem)
{
	db_timeline_point_release(elem);
}

int db_timeline(struct db *db, struct db_timeline_point **out, size_t *out_n,
		const char *host, const char *case_name, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(struct db_timeline_point), .max = max,
		.fill = timeline_point_fill, .release = timeline_point_release,
		.doing = "loading a timeline",
	};
	struct db_timeline_point *pts;
	size_t n, i;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_rows_select(db, "SELECT * FROM (SELECT c.id, c.created_at, coalesce(c.job_id, 0),"
			   " coalesce(j.head, ''), coalesce(j.commit_oid, ''),"
			   " coalesce(c.metric, ''), coalesce(c.verdict, ''), c.gain_median,"
			   " c.old_median, c.new_median, c.fingerprint FROM comparisons c"
			   " LEFT JOIN jobs j ON j.id = c.job_id"
			   " WHERE c.host = ? AND c.case_name = ? AND c.kind = 'compare'"
			   " AND coalesce(j.kind, 'head') = 'head'"
			   " ORDER BY c.id DESC LIMIT ?)"
			   " ORDER BY 1", DB_ARGS(DB_TEXT(host), DB_TEXT(case_name), DB_INT(max)),
			   &how, &pts, &n);
	if (r < 0)
		return r;
	r = timeline_values(db, pts, n, host, case_name, max);
	if (r < 0) {
		for (i = 0; i < n; i++)
			db_timeline_point_release(&pts[i]);
		free(pts);
		return r;
	}
	*out = pts;
	*out_n = n;
	return 0;
}

static void series_point_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_series_point *p = elem;
	const unsigned char *fp;
	char hash[SHA256_HEX_SIZE];

	(void)arg;
	p->comparison_id = sqlite3_column_int64(st, 0);
	p->job_id = sqlite3_column_int64(st, 1);
	db_column_copy(p->commit, sizeof(p->commit), st, 2);
	db_column_copy(p->metric, sizeof(p->metric), st, 3);
	p->value = db_column_real(st, 4);
	fp = sqlite3_column_text(st, 5);
	/* A libcrypto that cannot hash leaves it "", as the timeline has it. */
	if (fp && sha256_hex(hash, fp, (size_t)sqlite3_column_bytes(st, 5)) == 0) {
		memcpy(p->fingerprint_hash, hash, sizeof(p->fingerprint_hash) - 1);
		p->fingerprint_hash[sizeof(p->fingerprint_hash) - 1] = '\0';
	}
}

int db_series_load(struct db *db, struct db_series_point *out, size_t max, const char *host,
		   const char *case_name, const char *branch)
{
	const struct db_rows how = {
		.size = sizeof(struct db_series_point), .max = max,
		.fill = series_point_fill, .doing = "loading a branch's series",
	};

	return db_rows_select_fill(db, "SELECT * FROM (SELECT c.id, j.id, j.commit_oid,"
				   " coalesce(c.metric, ''), c.new_median, c.fingerprint"
				   " FROM comparisons c JOIN jobs j ON j.id = c.job_id"
				   " WHERE c.host = ?1 AND c.case_name = ?2 AND c.kind = 'compare'"
				   " AND c.state = 'done' AND coalesce(c.verdict, '') <> 'invalid'"
				   " AND c.new_median IS NOT NULL AND j.kind = 'head' AND j.head = ?3"
				   " ORDER BY j.id DESC, c.id DESC LIMIT ?4)"
				   " ORDER BY 2, 1", DB_ARGS(DB_TEXT(host), DB_TEXT(case_name),
							     DB_TEXT(branch), DB_INT(max)),
				   &how, out);
}

int db_series_known(struct db *db, struct db_series_known *out, const char *host,
		    const char *case_name, const char *branch)
{
	int64_t bits = 0;
	int r;

	memset(out, 0, sizeof(*out));
	/* Each an index's lookup (comparisons_host, comparisons_host_case,
	 * jobs' unique (host, head, commit_oid)): a jobs row of a host at a
	 * hub, or '' for the agent's own. */
	r = db_run_count(db, &bits, "SELECT EXISTS (SELECT 1 FROM comparisons WHERE host = ?1)"
			 " + 2 * EXISTS (SELECT 1 FROM comparisons WHERE host = ?1"
			 " AND case_name = ?2)"
			 " + 4 * EXISTS (SELECT 1 FROM jobs WHERE host IN ('', ?1) AND head = ?3"
			 " AND kind = 'head')",
			 DB_ARGS(DB_TEXT(host), DB_TEXT(case_name), DB_TEXT(branch)),
			 "looking for a series' host, case and branch");
	if (r < 0)
		return r;
	out->host = bits & 1;
	out->case_name = bits & 2;
	out->branch = bits & 4;
	return 0;
}

int db_comparison_time_budget_set(struct db *db, int64_t id, double budget_s)
{
	return db_run(db, "UPDATE comparisons SET time_budget_s = ? WHERE id = ?",
		      DB_ARGS(DB_REAL(budget_s), DB_INT(id)), "recording a comparison's time budget");
}

static void mean_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	*(double *)elem = sqlite3_column_double(st, 0);
}

int db_comparisons_process_mean_s(struct db *db, double *out, const int64_t *ids, size_t n)
{
	struct strbuf list = STRBUF_INIT;
	size_t i;
	int r;

	*out = 0;
	for (i = 0; i < n; i++)
		strbuf_addf(&list, "%s%lld", i ? "," : "[", (long long)ids[i]);
	strbuf_adds(&list, "]");
	/* An aggregate: a row always comes back, NULL (0) when no process has
	 * a wall time. */
	r = db_run_row(db, mean_fill, out, "SELECT coalesce(avg(p.wall_ms), 0) / 1000.0"
		       " FROM processes p JOIN comparisons c ON c.id = p.comparison_id"
		       " WHERE c.state = 'done' AND p.warmup = 0 AND p.wall_ms IS NOT NULL"
		       " AND c.id IN (SELECT value FROM json_each(?))",
		       DB_ARGS(DB_TEXT(n ? list.buf : "[]")), "averaging process times");
	strbuf_release(&list);
	return r;
}
