/*
 * Jobs: one per new head commit, with its base, queued for the agent; and
 * the jobs as the hub lists them, each with its comparisons.
 */
#include <errno.h>
#include <stdio.h>
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

static const char *const job_kinds[] = { "head", "span", "confirm", "bisect" };

const char *db_job_kind_name(enum db_job_kind k)
{
	return job_kinds[k];
}

int db_job_kind_parse(enum db_job_kind *out, const char *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(job_kinds); i++)
		if (s && !strcmp(s, job_kinds[i])) {
			*out = (enum db_job_kind)i;
			return 0;
		}
	*out = DB_JOB_HEAD;
	return -EINVAL;
}

/* The sequence number of this agent's next change of a job. */
#define NEXT_SEQ "(SELECT coalesce(max(seq), 0) + 1 FROM jobs)"

void db_job_release(struct db_job *j)
{
	if (!j)
		return;
	free(j->subject);
	free(j->detail);
	j->subject = j->detail = NULL;
}

int db_job_queue(struct db *db, int64_t *out_id, const struct db_job *j)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int r, rc;

	*out_id = 0;
	time_now_iso(now);
	/* Head and span jobs wait for the history to read their verdicts. */
	r = db_prepare(db, &st, "INSERT INTO jobs (head, commit_oid, base_oid, subject, state,"
		       " created_at, seq, kind, case_name, alert_id, judged)"
		       " VALUES (?1, ?2, ?3, ?4, 'queued', ?5, " NEXT_SEQ ", ?6, nullif(?7, ''),"
		       " nullif(?8, 0), ?6 NOT IN ('head', 'span'))"
		       " ON CONFLICT (host, head, commit_oid) DO NOTHING RETURNING id");
	if (r < 0)
		return r;
	db_bind_text(st, 1, j->head);
	db_bind_text(st, 2, j->commit);
	db_bind_text(st, 3, *j->base ? j->base : NULL);
	db_bind_text(st, 4, j->subject);
	db_bind_text(st, 5, now);
	db_bind_text(st, 6, db_job_kind_name(j->kind));
	db_bind_text(st, 7, j->case_name);
	sqlite3_bind_int64(st, 8, j->alert_id);
	rc = db_step_returning(st, out_id);
	r = rc != SQLITE_DONE ? db_fail(db, rc, "queueing a job") : *out_id ? 1 : 0;
	db_finish(st);
	if (r == 0) {
		struct db_job old;

		r = db_job_get(db, &old, j->head, j->commit);
		if (r == 0)
			*out_id = old.id;
		db_job_release(&old);
	}
	return r;
}

int db_job_add(struct db *db, int64_t *out_id, const char *head, const char *commit,
	       const char *base, const char *subject)
{
	struct db_job j = { .kind = DB_JOB_HEAD, .subject = (char *)subject };

	snprintf(j.head, sizeof(j.head), "%s", head);
	snprintf(j.commit, sizeof(j.commit), "%s", commit);
	snprintf(j.base, sizeof(j.base), "%s", base ? base : "");
	return db_job_queue(db, out_id, &j);
}

#define JOB_COLUMNS "id, head, commit_oid, coalesce(base_oid, ''), subject, state, detail," \
	" host, created_at, coalesce(started_at, ''), coalesce(finished_at, ''), seq," \
	" coalesce(origin_id, 0), kind, coalesce(case_name, ''), coalesce(alert_id, 0)," \
	" coalesce(comparisons, -1)"

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
	db_column_copy(j->host, sizeof(j->host), st, 7);
	db_column_copy(j->created_at, sizeof(j->created_at), st, 8);
	db_column_copy(j->started_at, sizeof(j->started_at), st, 9);
	db_column_copy(j->finished_at, sizeof(j->finished_at), st, 10);
	j->seq = sqlite3_column_int64(st, 11);
	j->origin_id = sqlite3_column_int64(st, 12);
	db_job_kind_parse(&j->kind, (const char *)sqlite3_column_text(st, 13));
	db_column_copy(j->case_name, sizeof(j->case_name), st, 14);
	j->alert_id = sqlite3_column_int64(st, 15);
	j->comparisons = sqlite3_column_int64(st, 16);
}

int db_job_next(struct db *db, struct db_job *out)
{
	memset(out, 0, sizeof(*out));
	/* A job held by a hold in force waits (db_job_hold). */
	return db_run_row(db, job_fill, out, "SELECT " JOB_COLUMNS " FROM jobs WHERE host = ''"
			  " AND state IN ('queued', 'running') AND (hold_id IS NULL OR hold_id NOT IN"
			  " (SELECT id FROM holds WHERE released_at IS NULL)) ORDER BY id LIMIT 1",
			  NULL, 0, "reading the queue");
}

int db_job_get(struct db *db, struct db_job *out, const char *head, const char *commit)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, job_fill, out, "SELECT " JOB_COLUMNS " FROM jobs"
			  " WHERE host = '' AND head = ?1 AND commit_oid = ?2",
			  DB_ARGS(DB_TEXT(head), DB_TEXT(commit)), "reading a job");
}

int db_job_load(struct db *db, struct db_job *out, int64_t id)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, job_fill, out, "SELECT " JOB_COLUMNS " FROM jobs WHERE id = ?",
			  DB_ARGS(DB_INT(id)), "reading a job");
}

static void job_release(void *elem)
{
	db_job_release(elem);
}

int db_jobs_unjudged(struct db *db, struct db_job **out, size_t *out_n, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = job_fill, .release = job_release,
		.doing = "listing the jobs whose verdicts are not yet read",
	};

	return db_rows_select(db, "SELECT " JOB_COLUMNS " FROM jobs WHERE judged = 0 AND host = ''"
			      " AND state IN ('done', 'failed') ORDER BY id LIMIT ?",
			      DB_ARGS(DB_INT(max)), &how, out, out_n);
}

int db_job_judged(struct db *db, int64_t id)
{
	return db_run(db, "UPDATE jobs SET judged = 1 WHERE id = ?", DB_ARGS(DB_INT(id)),
		      "recording a job's verdicts read");
}

int db_job_newest(struct db *db, struct db_job *out, const char *head)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, job_fill, out, "SELECT " JOB_COLUMNS " FROM jobs"
			  " WHERE host = '' AND head = ? ORDER BY id DESC LIMIT 1",
			  DB_ARGS(DB_TEXT(head)), "reading a head's newest job");
}

int db_commit_jobs(struct db *db, struct db_job *out, size_t max, const char *commit)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = job_fill, .release = job_release,
		.doing = "listing a commit's jobs",
	};

	return db_rows_select_fill(db, "SELECT " JOB_COLUMNS " FROM jobs WHERE commit_oid = ?1"
				   " AND kind = 'head' ORDER BY id LIMIT ?2",
				   DB_ARGS(DB_TEXT(commit), DB_INT(max)), &how, out);
}

int db_job_list(struct db *db, struct db_job *out, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = job_fill, .release = job_release,
		.doing = "listing jobs",
	};

	return db_rows_select_fill(db, "SELECT " JOB_COLUMNS " FROM jobs ORDER BY id DESC LIMIT ?",
				   DB_ARGS(DB_INT(max)), &how, out);
}

int db_job_set_state(struct db *db, int64_t id, enum db_job_state state, const char *detail)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "UPDATE jobs SET state = ?1, detail = ?2, seq = " NEXT_SEQ ","
		      " started_at = CASE WHEN ?1 = 'running' THEN coalesce(started_at, ?3)"
		      " ELSE started_at END,"
		      " finished_at = CASE WHEN ?1 IN ('done', 'failed') THEN ?3 ELSE NULL END"
		      " WHERE id = ?4",
		      DB_ARGS(DB_TEXT(db_job_state_name(state)), DB_TEXT(detail), DB_TEXT(now),
			      DB_INT(id)), "recording a job's state");
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

	return db_rows_select(db, "SELECT id, case_name, coalesce(verdict, ''), gain_median, kind"
			      " FROM comparisons WHERE job_id = ? ORDER BY id", DB_ARGS(DB_INT(j->id)),
			      &how, &j->comparisons, &j->ncomparisons);
}

int db_job_comparisons(struct db *db, struct db_job_comparison **out, size_t *out_n,
		       int64_t job_id)
{
	struct db_job_info j = { .id = job_id };
	int r = job_comparisons(db, &j);

	*out = j.comparisons;
	*out_n = j.ncomparisons;
	return r;
}

int db_job_infos(struct db *db, struct db_job_info *out, size_t max, int64_t before_id)
{
	const struct db_rows how = {
		.size = sizeof(*out), .max = max, .fill = job_info_fill,
		.release = job_info_release, .doing = "listing jobs",
	};
	int i, n, r = 0;

	n = db_rows_select_fill(db, "SELECT " JOB_INFO_COLUMNS " FROM jobs WHERE id < ?"
				" ORDER BY id DESC LIMIT ?",
				DB_ARGS(DB_INT(before_id > 0 ? before_id : INT64_MAX), DB_INT(max)),
				&how, out);
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

/* ---- the agent's push of its jobs, and the hub's ingest of them ---- */

int db_jobs_unpushed(struct db *db, struct db_job **out, size_t *out_n, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = job_fill, .release = job_release,
		.doing = "listing the jobs not yet pushed",
	};

	return db_rows_select(db, "SELECT " JOB_COLUMNS DB_JOBS_UNSENT " ORDER BY j.seq LIMIT ?",
			      DB_ARGS(DB_INT(max)), &how, out, out_n);
}

int db_job_pushed(struct db *db, int64_t id, int64_t seq, int status, const char *message)
{
	return db_pushed_put(db, "INSERT OR REPLACE INTO pushed_jobs (job_id, seq, status, message,"
			     " pushed_at) VALUES (?, ?, ?, ?, ?)", id, seq, status, message,
			     "recording a job pushed");
}

int db_job_origin(struct db *db, int64_t *out_id, const char *host, int64_t origin_id)
{
	*out_id = 0;
	return db_run_row(db, db_fill_int64, out_id, "SELECT id FROM jobs WHERE host = ? AND"
			  " origin_id = ?", DB_ARGS(DB_TEXT(host), DB_INT(origin_id)),
			  "finding a host's job");
}

static int job_insert(struct db *db, const struct db_job *j, const char *sha256, int64_t *out_id)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = db_prepare(db, &st, "INSERT INTO jobs (host, head, commit_oid, base_oid, subject,"
		       " state, detail, created_at, started_at, finished_at, origin_id, seq, sha256,"
		       " kind, case_name, comparisons)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, nullif(?9, ''), nullif(?10, ''),"
		       " ?11, ?12, ?13, ?14, nullif(?15, ''), nullif(?16, -1)) RETURNING id");
	if (r < 0)
		return r;
	db_bind_args(st, DB_ARGS(DB_TEXT(j->host), DB_TEXT(j->head), DB_TEXT(j->commit),
				 DB_TEXT(*j->base ? j->base : NULL), DB_TEXT(j->subject),
				 DB_TEXT(db_job_state_name(j->state)), DB_TEXT(j->detail),
				 DB_TEXT(j->created_at), DB_TEXT(j->started_at),
				 DB_TEXT(j->finished_at), DB_INT(j->origin_id), DB_INT(j->seq),
				 DB_TEXT(sha256), DB_TEXT(db_job_kind_name(j->kind)),
				 DB_TEXT(j->case_name), DB_INT(j->comparisons)));
	rc = db_step_returning(st, out_id);
	if (rc != SQLITE_DONE)
		r = (rc & 0xff) == SQLITE_CONSTRAINT ?
			err_set(-EEXIST, "host '%s' has another job (not id %lld) of %s at %.12s",
				j->host, (long long)j->origin_id, j->head, j->commit) :
			db_fail(db, rc, "storing a host's job");
	db_finish(st);
	return r;
}

static int job_update(struct db *db, const struct db_job *j, const char *sha256, int64_t id)
{
	return db_run(db, "UPDATE jobs SET subject = ?1, state = ?2, detail = ?3,"
		      " started_at = nullif(?4, ''), finished_at = nullif(?5, ''), seq = ?6,"
		      " sha256 = ?7, comparisons = nullif(?9, -1) WHERE id = ?8",
		      DB_ARGS(DB_TEXT(j->subject), DB_TEXT(db_job_state_name(j->state)),
			      DB_TEXT(j->detail), DB_TEXT(j->started_at), DB_TEXT(j->finished_at),
			      DB_INT(j->seq), DB_TEXT(sha256), DB_INT(id), DB_INT(j->comparisons)),
		      "updating a host's job");
}

/* The host's comparisons ingested before their job get its id; their
 * receipts, which now name the job, are rendered anew. */
static int job_link(struct db *db, const char *host, int64_t origin_id, int64_t id)
{
	int r;

	r = db_run(db, "DELETE FROM receipts WHERE comparison_id IN"
		   " (SELECT comparison_id FROM comparison_origins WHERE host = ?1"
		   " AND origin_job = ?2)", DB_ARGS(DB_TEXT(host), DB_INT(origin_id)),
		   "forgetting the receipts of a job's comparisons");
	if (r < 0)
		return r;
	return db_run(db, "UPDATE comparisons SET job_id = ?1 WHERE job_id IS NULL AND id IN"
		      " (SELECT comparison_id FROM comparison_origins WHERE host = ?2"
		      " AND origin_job = ?3)", DB_ARGS(DB_INT(id), DB_TEXT(host), DB_INT(origin_id)),
		      "linking a job's comparisons");
}

int db_job_ingest(struct db *db, const struct db_job *j, const char *sha256, int64_t *out_id,
		  bool *out_stored)
{
	struct db_job old;
	char *old_sha = NULL;
	int64_t id = 0;
	int r;

	*out_stored = false;
	*out_id = 0;
	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_job_origin(db, &id, j->host, j->origin_id);
	if (r == -ENOENT) {
		r = job_insert(db, j, sha256, &id);
		if (r == 0)
			r = job_link(db, j->host, j->origin_id, id);
		if (r == 0)
			*out_stored = true;
		goto out;
	}
	if (r < 0)
		goto out;
	r = db_job_load(db, &old, id);
	if (r < 0)
		goto out;
	r = db_run_row(db, db_fill_string, &old_sha, "SELECT coalesce(sha256, '') FROM jobs"
		       " WHERE id = ?", DB_ARGS(DB_INT(id)), "reading a host's job");
	if (r < 0) {
		/* nothing more */
	} else if (strcmp(old.head, j->head) || strcmp(old.commit, j->commit) ||
		   strcmp(old.base, j->base) || old.kind != j->kind ||
		   strcmp(old.case_name, j->case_name)) {
		r = err_set(-EEXIST, "job %lld of host '%s' is %s at %.12s against %.12s here; the "
			    "update says %s at %.12s against %.12s", (long long)j->origin_id, j->host,
			    old.head, old.commit, *old.base ? old.base : "(none)", j->head,
			    j->commit, *j->base ? j->base : "(none)");
	} else if (j->seq == old.seq && strcmp(old_sha ? old_sha : "", sha256)) {
		r = err_set(-EEXIST, "update %lld of job %lld of host '%s' came before with sha256 "
			    "%.12s, now with %.12s", (long long)j->seq, (long long)j->origin_id,
			    j->host, old_sha ? old_sha : "", sha256);
	} else if (j->seq > old.seq) {
		r = job_update(db, j, sha256, id);
		if (r == 0)
			*out_stored = true;
	}
	free(old_sha);
	db_job_release(&old);
out:
	if (r == 0) {
		r = db_commit(db);
		*out_id = id;
	} else {
		db_rollback(db);
		*out_stored = false;
	}
	return r;
}
