/* The agent's rows: heads, jobs, builds, runner results. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

/* ---- heads ---- */

int db_head_get(struct db *db, char out_oid[DB_OID_HEX], const char *name)
{
	sqlite3_stmt *st;
	int rc, r;

	out_oid[0] = '\0';
	r = db_prepare(db, &st, "SELECT oid FROM heads WHERE name = ?");
	if (r < 0)
		return r;
	db_bind_text(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		db_column_copy(out_oid, DB_OID_HEX, st, 0);
	else if (rc == SQLITE_DONE)
		r = -ENOENT;
	else
		r = db_fail(db, rc, "reading a head");
	db_finish(st);
	return r;
}

int db_head_set(struct db *db, const char *name, const char *oid, bool is_pull)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT INTO heads (name, oid, is_pull, seen_at) VALUES (?1, ?2, ?3, ?4)"
		       " ON CONFLICT (name) DO UPDATE SET oid = ?2, seen_at = ?4");
	if (r < 0)
		return r;
	db_bind_text(st, 1, name);
	db_bind_text(st, 2, oid);
	sqlite3_bind_int(st, 3, is_pull);
	db_bind_text(st, 4, now);
	return db_step(db, st, "recording a head");
}

int db_heads_keep_only(struct db *db, const char *const *names, size_t n)
{
	sqlite3_stmt *st;
	size_t i;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_exec(db, "CREATE TEMP TABLE IF NOT EXISTS keep_heads (name TEXT PRIMARY KEY);"
		    " DELETE FROM keep_heads;", "forgetting heads");
	for (i = 0; r == 0 && i < n; i++) {
		r = db_prepare(db, &st, "INSERT OR IGNORE INTO keep_heads (name) VALUES (?)");
		if (r < 0)
			break;
		db_bind_text(st, 1, names[i]);
		r = db_step(db, st, "forgetting heads");
	}
	if (r == 0)
		r = db_exec(db, "DELETE FROM heads WHERE name NOT IN (SELECT name FROM keep_heads)",
			    "forgetting heads");
	if (r < 0) {
		db_rollback(db);
		return r;
	}
	return db_commit(db);
}

/* ---- jobs ---- */

static const char *const job_states[] = { "queued", "running", "done", "failed" };

const char *db_job_state_name(enum db_job_state s)
{
	return job_states[s];
}

static enum db_job_state job_state(const char *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(job_states); i++)
		if (s && !strcmp(s, job_states[i]))
			return (enum db_job_state)i;
	return DB_JOB_QUEUED;
}

void db_job_release(struct db_job *j)
{
	if (!j)
		return;
	free(j->subject);
	free(j->detail);
	j->subject = j->detail = NULL;
}

int db_job_add(struct db *db, int64_t *out_id, const char *head, const char *commit,
	       const char *base, const char *subject)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int r, rc;

	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT INTO jobs (head, commit_oid, base_oid, subject, state,"
		       " created_at) VALUES (?, ?, ?, ?, 'queued', ?)"
		       " ON CONFLICT (head, commit_oid) DO NOTHING RETURNING id");
	if (r < 0)
		return r;
	db_bind_text(st, 1, head);
	db_bind_text(st, 2, commit);
	db_bind_text(st, 3, base && *base ? base : NULL);
	db_bind_text(st, 4, subject);
	db_bind_text(st, 5, now);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out_id = sqlite3_column_int64(st, 0);
		r = 1;
		rc = sqlite3_step(st);
	} else {
		r = 0;
	}
	if (rc != SQLITE_DONE)
		r = db_fail(db, rc, "queueing a job");
	db_finish(st);
	return r;
}

#define JOB_COLUMNS "id, head, commit_oid, coalesce(base_oid, ''), subject, state, detail"

static void job_fill(struct db_job *j, sqlite3_stmt *st)
{
	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(st, 0);
	db_column_copy(j->head, sizeof(j->head), st, 1);
	db_column_copy(j->commit, sizeof(j->commit), st, 2);
	db_column_copy(j->base, sizeof(j->base), st, 3);
	j->subject = db_column_strdup(st, 4);
	j->state = job_state((const char *)sqlite3_column_text(st, 5));
	j->detail = db_column_strdup(st, 6);
}

/* The one job a prepared statement selects, or -ENOENT. */
static int job_one(struct db *db, sqlite3_stmt *st, struct db_job *out, const char *doing)
{
	int rc = sqlite3_step(st), r = 0;

	if (rc == SQLITE_ROW)
		job_fill(out, st);
	else if (rc == SQLITE_DONE)
		r = -ENOENT;
	else
		r = db_fail(db, rc, doing);
	db_finish(st);
	return r;
}

int db_job_next(struct db *db, struct db_job *out)
{
	sqlite3_stmt *st;
	int r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT " JOB_COLUMNS " FROM jobs"
		       " WHERE state IN ('queued', 'running') ORDER BY id LIMIT 1");
	return r < 0 ? r : job_one(db, st, out, "reading the queue");
}

int db_job_get(struct db *db, struct db_job *out, const char *head, const char *commit)
{
	sqlite3_stmt *st;
	int r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT " JOB_COLUMNS " FROM jobs"
		       " WHERE head = ?1 AND commit_oid = ?2");
	if (r < 0)
		return r;
	db_bind_text(st, 1, head);
	db_bind_text(st, 2, commit);
	return job_one(db, st, out, "reading a job");
}

int db_commit_jobs(struct db *db, struct db_job *out, size_t max, const char *commit)
{
	sqlite3_stmt *st;
	size_t n = 0;
	int rc = SQLITE_DONE, r;

	r = db_prepare(db, &st, "SELECT " JOB_COLUMNS " FROM jobs WHERE commit_oid = ?1"
		       " ORDER BY id LIMIT ?2");
	if (r < 0)
		return r;
	db_bind_text(st, 1, commit);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
		job_fill(&out[n++], st);
	if (n < max && rc != SQLITE_DONE)
		r = db_fail(db, rc, "listing a commit's jobs");
	db_finish(st);
	if (r < 0) {
		while (n > 0)
			db_job_release(&out[--n]);
		return r;
	}
	return (int)n;
}

int db_job_list(struct db *db, struct db_job *out, size_t max)
{
	sqlite3_stmt *st;
	size_t n = 0;
	int rc, r;

	r = db_prepare(db, &st, "SELECT " JOB_COLUMNS " FROM jobs ORDER BY id DESC LIMIT ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
		job_fill(&out[n++], st);
	if (n < max && rc != SQLITE_DONE)
		r = db_fail(db, rc, "listing jobs");
	db_finish(st);
	if (r < 0) {
		/* No count reaches the caller, so it releases none of them. */
		while (n > 0)
			db_job_release(&out[--n]);
		return r;
	}
	return (int)n;
}

int db_job_set_state(struct db *db, int64_t id, enum db_job_state state, const char *detail)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "UPDATE jobs SET state = ?1, detail = ?2,"
		       " started_at = CASE WHEN ?1 = 'running' THEN coalesce(started_at, ?3) ELSE started_at END,"
		       " finished_at = CASE WHEN ?1 IN ('done', 'failed') THEN ?3 ELSE NULL END"
		       " WHERE id = ?4");
	if (r < 0)
		return r;
	db_bind_text(st, 1, db_job_state_name(state));
	db_bind_text(st, 2, detail);
	db_bind_text(st, 3, now);
	sqlite3_bind_int64(st, 4, id);
	return db_step(db, st, "recording a job's state");
}

/* ---- builds ---- */

static const char *const build_states[] = { "running", "done", "failed", "abandoned" };

const char *db_build_state_name(enum db_build_state s)
{
	return build_states[s];
}

static enum db_build_state build_state(const char *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(build_states); i++)
		if (s && !strcmp(s, build_states[i]))
			return (enum db_build_state)i;
	return DB_BUILD_RUNNING;
}

void db_build_release(struct db_build *b)
{
	size_t i;

	if (!b)
		return;
	free(b->dir);
	free(b->log);
	free(b->toolchain);
	free(b->fingerprint);
	free(b->detail);
	for (i = 0; i < b->nartifacts; i++) {
		free(b->artifacts[i].name);
		db_artifact_release(&b->artifacts[i].artifact);
	}
	free(b->artifacts);
	memset(b, 0, sizeof(*b));
}

#define BUILD_COLUMNS "id, host, commit_oid, tree_oid, recipe_hash, state, dir, started_at," \
	" coalesce(finished_at, ''), coalesce(exit_code, -1), coalesce(signal, 0)," \
	" coalesce(timed_out, 0), wall_ms, log, coalesce(log_bytes, 0), toolchain, fingerprint, detail"

static int build_fill(struct db *db, struct db_build *b, sqlite3_stmt *st)
{
	sqlite3_stmt *at;
	int rc, r;

	memset(b, 0, sizeof(*b));
	b->id = sqlite3_column_int64(st, 0);
	db_column_copy(b->host, sizeof(b->host), st, 1);
	db_column_copy(b->commit, sizeof(b->commit), st, 2);
	db_column_copy(b->tree, sizeof(b->tree), st, 3);
	db_column_copy(b->recipe_hash, sizeof(b->recipe_hash), st, 4);
	b->state = build_state((const char *)sqlite3_column_text(st, 5));
	b->dir = db_column_strdup(st, 6);
	db_column_copy(b->started_at, sizeof(b->started_at), st, 7);
	db_column_copy(b->finished_at, sizeof(b->finished_at), st, 8);
	b->exit_code = sqlite3_column_int(st, 9);
	b->signal = sqlite3_column_int(st, 10);
	b->timed_out = sqlite3_column_int(st, 11);
	b->wall_ms = db_column_real(st, 12);
	b->log_len = (size_t)sqlite3_column_bytes(st, 13);
	b->log = xmalloc(b->log_len + 1);
	if (b->log_len)
		memcpy(b->log, sqlite3_column_blob(st, 13), b->log_len);
	b->log[b->log_len] = '\0';
	b->log_bytes = sqlite3_column_int64(st, 14);
	b->toolchain = db_column_strdup(st, 15);
	b->fingerprint = db_column_strdup(st, 16);
	b->detail = db_column_strdup(st, 17);

	r = db_prepare(db, &at, "SELECT b.name, a.id, a.path, a.size, a.sha256"
		       " FROM build_artifacts b JOIN artifacts a ON a.id = b.artifact_id"
		       " WHERE b.build_id = ? ORDER BY b.name");
	if (r < 0)
		return r;
	sqlite3_bind_int64(at, 1, b->id);
	while ((rc = sqlite3_step(at)) == SQLITE_ROW) {
		struct db_build_artifact *ba;

		b->artifacts = xrealloc(b->artifacts, (b->nartifacts + 1) * sizeof(*b->artifacts));
		ba = &b->artifacts[b->nartifacts++];
		memset(ba, 0, sizeof(*ba));
		ba->name = db_column_strdup(at, 0);
		ba->artifact.id = sqlite3_column_int64(at, 1);
		ba->artifact.path = db_column_strdup(at, 2);
		ba->artifact.size = sqlite3_column_int64(at, 3);
		db_column_copy(ba->artifact.sha256, sizeof(ba->artifact.sha256), at, 4);
	}
	if (rc != SQLITE_DONE)
		r = db_fail(db, rc, "loading a build's artifacts");
	db_finish(at);
	return r;
}

static int build_query(struct db *db, struct db_build *out, sqlite3_stmt *st)
{
	struct db_build b;
	int rc, r = 0;

	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		db_finish(st);
		return -ENOENT;
	}
	if (rc != SQLITE_ROW) {
		r = db_fail(db, rc, "loading a build");
		db_finish(st);
		return r;
	}
	/* Copy the row out before the artifact query reuses the connection. */
	r = build_fill(db, &b, st);
	db_finish(st);
	if (r < 0) {
		db_build_release(&b);
		return r;
	}
	*out = b;
	return 0;
}

int db_build_find(struct db *db, struct db_build *out, const char *host, const char *tree,
		  const char *recipe_hash)
{
	sqlite3_stmt *st;
	int r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT " BUILD_COLUMNS " FROM builds WHERE host = ? AND"
		       " tree_oid = ? AND recipe_hash = ? AND state != 'abandoned'"
		       " ORDER BY id DESC LIMIT 1");
	if (r < 0)
		return r;
	db_bind_text(st, 1, host);
	db_bind_text(st, 2, tree);
	db_bind_text(st, 3, recipe_hash);
	return build_query(db, out, st);
}

int db_build_load(struct db *db, struct db_build *out, int64_t id)
{
	sqlite3_stmt *st;
	int r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT " BUILD_COLUMNS " FROM builds WHERE id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	r = build_query(db, out, st);
	if (r == -ENOENT)
		r = err_set(-ENOENT, "no build %lld in '%s'", (long long)id, db->path);
	return r;
}

int db_build_insert(struct db *db, int64_t *out_id, const struct db_build *b)
{
	sqlite3_stmt *st;
	int r;

	r = db_prepare(db, &st, "INSERT INTO builds (host, commit_oid, tree_oid, recipe_hash,"
		       " state, dir, started_at, fingerprint) VALUES (?, ?, ?, ?, 'running', ?, ?, ?)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, b->host);
	db_bind_text(st, 2, b->commit);
	db_bind_text(st, 3, b->tree);
	db_bind_text(st, 4, b->recipe_hash);
	db_bind_text(st, 5, b->dir);
	db_bind_text(st, 6, b->started_at);
	db_bind_text(st, 7, b->fingerprint);
	return db_step_insert(db, st, out_id, "recording a build");
}

int db_build_finish(struct db *db, const struct db_build *b)
{
	sqlite3_stmt *st;
	size_t i;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st, "UPDATE builds SET state = ?, finished_at = ?, exit_code = ?,"
		       " signal = ?, timed_out = ?, wall_ms = ?, log = ?, log_bytes = ?,"
		       " toolchain = ?, detail = ? WHERE id = ?");
	if (r < 0)
		goto out;
	db_bind_text(st, 1, db_build_state_name(b->state));
	db_bind_text(st, 2, b->finished_at);
	sqlite3_bind_int(st, 3, b->exit_code);
	sqlite3_bind_int(st, 4, b->signal);
	sqlite3_bind_int(st, 5, b->timed_out);
	db_bind_real(st, 6, b->wall_ms);
	sqlite3_bind_blob(st, 7, b->log ? b->log : "", (int)b->log_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, b->log_bytes);
	db_bind_text(st, 9, b->toolchain);
	db_bind_text(st, 10, b->detail);
	sqlite3_bind_int64(st, 11, b->id);
	r = db_step(db, st, "recording a build's end");
	for (i = 0; r == 0 && i < b->nartifacts; i++) {
		r = db_prepare(db, &st, "INSERT OR REPLACE INTO build_artifacts (build_id, name,"
			       " artifact_id) VALUES (?, ?, ?)");
		if (r < 0)
			break;
		sqlite3_bind_int64(st, 1, b->id);
		db_bind_text(st, 2, b->artifacts[i].name);
		sqlite3_bind_int64(st, 3, b->artifacts[i].artifact.id);
		r = db_step(db, st, "recording a build's artifacts");
	}
out:
	if (r < 0) {
		db_rollback(db);
		return r;
	}
	return db_commit(db);
}

int db_build_abandon(struct db *db, int64_t id)
{
	sqlite3_stmt *st;
	int r;

	r = db_prepare(db, &st, "UPDATE builds SET state = 'abandoned' WHERE id = ? AND state = 'running'");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	return db_step(db, st, "abandoning a build");
}

int db_build_count(struct db *db, enum db_build_state state)
{
	sqlite3_stmt *st;
	int rc, r;

	r = db_prepare(db, &st, "SELECT count(*) FROM builds WHERE state = ?");
	if (r < 0)
		return r;
	db_bind_text(st, 1, db_build_state_name(state));
	rc = sqlite3_step(st);
	r = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : db_fail(db, rc, "counting builds");
	db_finish(st);
	return r;
}

/* ---- runner results ---- */

void db_runner_result_release(struct db_runner_result *r)
{
	size_t i;

	if (!r)
		return;
	free(r->binary_sha256);
	free(r->spawn_error);
	free(r->output);
	for (i = 0; i < r->nlines; i++) {
		free(r->lines[i].kind);
		free(r->lines[i].text);
	}
	free(r->lines);
	memset(r, 0, sizeof(*r));
}

int db_runner_result_done(struct db *db, int64_t build_id, const char *runner, int chunk)
{
	sqlite3_stmt *st;
	int rc, r;

	r = db_prepare(db, &st, "SELECT count(*) FROM runner_results WHERE build_id = ? AND"
		       " runner = ? AND chunk = ? AND state = 'done'");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, build_id);
	db_bind_text(st, 2, runner);
	sqlite3_bind_int(st, 3, chunk);
	rc = sqlite3_step(st);
	r = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) > 0 : db_fail(db, rc, "reading results");
	db_finish(st);
	return r;
}

int db_runner_result_insert(struct db *db, int64_t *out_id, const struct db_runner_result *r)
{
	sqlite3_stmt *st;
	int ret;

	ret = db_prepare(db, &st, "INSERT INTO runner_results (build_id, runner, chunk, chunks,"
			 " state, binary_sha256, started_at) VALUES (?, ?, ?, ?, 'running', ?, ?)");
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, r->build_id);
	db_bind_text(st, 2, r->runner);
	sqlite3_bind_int(st, 3, r->chunk);
	sqlite3_bind_int(st, 4, r->chunks);
	db_bind_text(st, 5, r->binary_sha256);
	db_bind_text(st, 6, r->started_at);
	return db_step_insert(db, st, out_id, "recording a runner's start");
}

int db_runner_result_finish(struct db *db, const struct db_runner_result *r)
{
	sqlite3_stmt *st;
	size_t i;
	int ret;

	ret = db_begin(db);
	if (ret < 0)
		return ret;
	ret = db_prepare(db, &st, "UPDATE runner_results SET state = 'done', ended_at = ?,"
			 " exit_code = ?, signal = ?, timed_out = ?, elapsed_ms = ?,"
			 " spawn_error = ?, output = ? WHERE id = ?");
	if (ret < 0)
		goto out;
	db_bind_text(st, 1, r->ended_at);
	sqlite3_bind_int(st, 2, r->exit_code);
	sqlite3_bind_int(st, 3, r->signal);
	sqlite3_bind_int(st, 4, r->timed_out);
	db_bind_real(st, 5, r->elapsed_ms);
	db_bind_text(st, 6, r->spawn_error);
	sqlite3_bind_blob(st, 7, r->output ? r->output : "", (int)r->output_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 8, r->id);
	ret = db_step(db, st, "recording a runner's end");
	for (i = 0; ret == 0 && i < r->nlines; i++) {
		char *fixed;

		ret = db_prepare(db, &st, "INSERT INTO runner_lines (result_id, idx, kind, text)"
				 " VALUES (?, ?, ?, ?)");
		if (ret < 0)
			break;
		/* Stored repaired (utf8_repair); the bytes as printed stay in output. */
		fixed = utf8_repair_dup(r->lines[i].text);
		sqlite3_bind_int64(st, 1, r->id);
		sqlite3_bind_int(st, 2, (int)i);
		db_bind_text(st, 3, r->lines[i].kind);
		db_bind_text(st, 4, fixed);
		ret = db_step(db, st, "recording a runner's lines");
		free(fixed);
	}
out:
	if (ret < 0) {
		db_rollback(db);
		return ret;
	}
	return db_commit(db);
}

int db_runner_results_load(struct db *db, struct db_runner_result **out, size_t *out_n,
			   int64_t build_id)
{
	struct db_runner_result *res = NULL;
	sqlite3_stmt *st;
	size_t n = 0, i;
	int rc, r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT id, runner, chunk, chunks, binary_sha256, started_at,"
		       " coalesce(ended_at, ''), coalesce(exit_code, -1), coalesce(signal, 0),"
		       " coalesce(timed_out, 0), elapsed_ms, spawn_error FROM runner_results"
		       " WHERE build_id = ? AND state = 'done' ORDER BY runner, chunk");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, build_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_runner_result *x;

		res = xrealloc(res, (n + 1) * sizeof(*res));
		x = &res[n++];
		memset(x, 0, sizeof(*x));
		x->id = sqlite3_column_int64(st, 0);
		x->build_id = build_id;
		db_column_copy(x->runner, sizeof(x->runner), st, 1);
		x->chunk = sqlite3_column_int(st, 2);
		x->chunks = sqlite3_column_int(st, 3);
		x->binary_sha256 = db_column_strdup(st, 4);
		db_column_copy(x->started_at, sizeof(x->started_at), st, 5);
		db_column_copy(x->ended_at, sizeof(x->ended_at), st, 6);
		x->exit_code = sqlite3_column_int(st, 7);
		x->signal = sqlite3_column_int(st, 8);
		x->timed_out = sqlite3_column_int(st, 9);
		x->elapsed_ms = db_column_real(st, 10);
		x->spawn_error = db_column_strdup(st, 11);
		x->state = DB_STATE_DONE;
	}
	db_finish(st);
	if (rc != SQLITE_DONE) {
		r = db_fail(db, rc, "loading runner results");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		r = db_prepare(db, &st, "SELECT kind, text FROM runner_lines WHERE result_id = ?"
			       " ORDER BY idx");
		if (r < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, res[i].id);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			res[i].lines = xrealloc(res[i].lines, (res[i].nlines + 1) * sizeof(struct db_line));
			res[i].lines[res[i].nlines].kind = db_column_strdup(st, 0);
			res[i].lines[res[i].nlines].text = db_column_strdup(st, 1);
			res[i].nlines++;
		}
		db_finish(st);
		if (rc != SQLITE_DONE) {
			r = db_fail(db, rc, "loading runner lines");
			goto fail;
		}
	}
	*out = res;
	*out_n = n;
	return 0;
fail:
	for (i = 0; i < n; i++)
		db_runner_result_release(&res[i]);
	free(res);
	return r;
}

/* ---- resuming ---- */

int db_abandon_running(struct db *db)
{
	int r, n = 0;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_exec(db, "UPDATE builds SET state = 'abandoned' WHERE state = 'running'",
		    "abandoning builds");
	n += sqlite3_changes(db->h);
	if (r == 0) {
		r = db_exec(db, "UPDATE runner_results SET state = 'abandoned' WHERE state = 'running'",
			    "abandoning runner results");
		n += sqlite3_changes(db->h);
	}
	if (r < 0) {
		db_rollback(db);
		return r;
	}
	r = db_commit(db);
	return r < 0 ? r : n;
}

int db_job_comparison(struct db *db, int64_t *out_id, enum db_state *out_state,
		      int64_t job_id, const char *case_name)
{
	sqlite3_stmt *st;
	int rc, r;

	r = db_prepare(db, &st, "SELECT id, state FROM comparisons WHERE job_id = ? AND"
		       " case_name = ? ORDER BY id DESC LIMIT 1");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job_id);
	db_bind_text(st, 2, case_name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out_id = sqlite3_column_int64(st, 0);
		*out_state = db_state_from_name((const char *)sqlite3_column_text(st, 1));
	} else if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else {
		r = db_fail(db, rc, "finding a job's comparison");
	}
	db_finish(st);
	return r;
}
