/*
 * Jobs: one per new head commit, with its base, queued for the agent; and
 * the jobs as the hub lists them, each with its comparisons.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

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

static void job_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_job *j = elem;

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
		job_fill(out, st, NULL);
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

static void job_release(void *elem)
{
	db_job_release(elem);
}

int db_commit_jobs(struct db *db, struct db_job *out, size_t max, const char *commit)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = job_fill, .release = job_release,
		.doing = "listing a commit's jobs",
	};
	sqlite3_stmt *st;
	int r;

	r = db_prepare(db, &st, "SELECT " JOB_COLUMNS " FROM jobs WHERE commit_oid = ?1"
		       " ORDER BY id LIMIT ?2");
	if (r < 0)
		return r;
	db_bind_text(st, 1, commit);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	return db_rows_fill(db, st, &how, out);
}

int db_job_list(struct db *db, struct db_job *out, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = job_fill, .release = job_release,
		.doing = "listing jobs",
	};
	sqlite3_stmt *st;
	int r;

	r = db_prepare(db, &st, "SELECT " JOB_COLUMNS " FROM jobs ORDER BY id DESC LIMIT ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
	return db_rows_fill(db, st, &how, out);
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

void db_job_info_release(struct db_job_info *j)
{
	if (!j)
		return;
	free(j->subject);
	free(j->detail);
	free(j->comparisons);
	j->subject = j->detail = NULL;
	j->comparisons = NULL;
	j->ncomparisons = 0;
}

#define JOB_INFO_COLUMNS "id, head, commit_oid, coalesce(base_oid, ''), subject, state, detail," \
	" created_at, coalesce(started_at, ''), coalesce(finished_at, '')"

static void job_info_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_job_info *j = elem;

	j->id = sqlite3_column_int64(st, 0);
	db_column_copy(j->head, sizeof(j->head), st, 1);
	db_column_copy(j->commit, sizeof(j->commit), st, 2);
	db_column_copy(j->base, sizeof(j->base), st, 3);
	j->subject = db_column_strdup(st, 4);
	db_column_copy(j->state, sizeof(j->state), st, 5);
	j->detail = db_column_strdup(st, 6);
	db_column_copy(j->created_at, sizeof(j->created_at), st, 7);
	db_column_copy(j->started_at, sizeof(j->started_at), st, 8);
	db_column_copy(j->finished_at, sizeof(j->finished_at), st, 9);
}

static void job_info_release(void *elem)
{
	db_job_info_release(elem);
}

static void job_comparison_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_job_comparison *c = elem;

	c->id = sqlite3_column_int64(st, 0);
	db_column_copy(c->case_name, sizeof(c->case_name), st, 1);
	db_column_copy(c->verdict, sizeof(c->verdict), st, 2);
	c->has_gain = sqlite3_column_type(st, 3) != SQLITE_NULL;
	c->gain_median = db_column_real(st, 3);
	c->aa = !strcmp((const char *)sqlite3_column_text(st, 4), "aa");
}

static int job_comparisons(struct db *db, struct db_job_info *j)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_job_comparison), .max = SIZE_MAX,
		.fill = job_comparison_fill, .doing = "loading a job's comparisons",
	};
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	r = db_prepare(db, &st, "SELECT id, case_name, coalesce(verdict, ''), gain_median, kind"
		       " FROM comparisons WHERE job_id = ? ORDER BY id");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, j->id);
	r = db_rows_load(db, st, &how, &v, &j->ncomparisons);
	j->comparisons = v;
	return r;
}

int db_job_infos(struct db *db, struct db_job_info *out, size_t max, int64_t before_id)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = job_info_fill,
		.release = job_info_release, .doing = "listing jobs",
	};
	sqlite3_stmt *st = NULL;
	int i, n, r;

	r = db_prepare(db, &st, "SELECT " JOB_INFO_COLUMNS " FROM jobs WHERE id < ?"
		       " ORDER BY id DESC LIMIT ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, before_id > 0 ? before_id : INT64_MAX);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	n = db_rows_fill(db, st, &how, out);
	/* The row statement is reset before the per-job queries run. */
	for (i = 0; r == 0 && i < n; i++)
		r = job_comparisons(db, &out[i]);
	if (r < 0) {
		for (i = 0; i < n; i++)
			db_job_info_release(&out[i]);
		return r;
	}
	return n;
}
