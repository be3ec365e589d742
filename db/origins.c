/*
 * comparison_origins: where each comparison the hub ingested came from (its
 * host, its id there, the sha256 of the record), and the ingest's one write
 * of a whole comparison. The raw rows go through the same writes perfd pair
 * uses (artifacts, comparisons, processes), joined into one transaction.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

int db_origin_get(struct db *db, struct db_origin *out, const char *host, int64_t origin_id)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT host, origin_id, comparison_id, sha256, received_at"
		       " FROM comparison_origins WHERE host = ? AND origin_id = ?");
	if (r < 0)
		return r;
	db_bind_text(st, 1, host);
	sqlite3_bind_int64(st, 2, origin_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		db_column_copy(out->host, sizeof(out->host), st, 0);
		out->origin_id = sqlite3_column_int64(st, 1);
		out->comparison_id = sqlite3_column_int64(st, 2);
		db_column_copy(out->sha256, sizeof(out->sha256), st, 3);
		db_column_copy(out->received_at, sizeof(out->received_at), st, 4);
	} else if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else {
		r = db_fail(db, rc, "looking up a comparison's origin");
	}
	db_finish(st);
	return r;
}

/* An ingested comparison made for a job of its host's gets the hub's row of
 * that job, when the job came first; else db_job_ingest links it when the
 * job comes. */
static int link_job(struct db *db, int64_t id, const struct db_origin *o)
{
	sqlite3_stmt *st = NULL;
	int64_t job;
	int r;

	r = db_job_origin(db, &job, o->host, o->origin_job);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = db_prepare(db, &st, "UPDATE comparisons SET job_id = ? WHERE id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, job);
	sqlite3_bind_int64(st, 2, id);
	r = db_step(db, st, "linking a comparison to its job");
	db_finish(st);
	return r < 0 ? r : db_receipt_forget(db, id);
}

/* An ingested comparison's builds, when they came first; else
 * db_build_ingest ties them when they come. */
static int link_builds(struct db *db, int64_t id, const struct db_origin *o)
{
	sqlite3_stmt *st = NULL;
	int64_t base = 0, head = 0;
	int r = 0;

	if (o->origin_base_build > 0)
		r = db_build_origin(db, &base, o->host, o->origin_base_build);
	if ((r == 0 || r == -ENOENT) && o->origin_head_build > 0)
		r = db_build_origin(db, &head, o->host, o->origin_head_build);
	if (r < 0 && r != -ENOENT)
		return r;
	if (!base && !head)
		return 0;
	r = db_prepare(db, &st, "UPDATE comparisons SET base_build = coalesce(nullif(?1, 0),"
		       " base_build), head_build = coalesce(nullif(?2, 0), head_build) WHERE id = ?3");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, base);
	sqlite3_bind_int64(st, 2, head);
	sqlite3_bind_int64(st, 3, id);
	r = db_step(db, st, "linking a comparison to its builds");
	return r < 0 ? r : db_receipt_forget(db, id);
}

/* The origin row and the comparison's own end time (db_comparison_finish
 * wrote the time of the ingest). */
static int store_origin(struct db *db, int64_t id, const struct db_comparison *c,
			const struct db_origin *o)
{
	sqlite3_stmt *st = NULL;
	char now[TIME_ISO_LEN];
	int r;

	time_now_iso(now);
	if (*c->finished_at) {
		r = db_prepare(db, &st, "UPDATE comparisons SET finished_at = ? WHERE id = ?");
		if (r < 0)
			return r;
		db_bind_text(st, 1, c->finished_at);
		sqlite3_bind_int64(st, 2, id);
		r = db_step(db, st, "recording an ingested comparison");
		db_finish(st);
		if (r < 0)
			return r;
	}
	r = db_prepare(db, &st, "INSERT INTO comparison_origins (host, origin_id, comparison_id,"
		       " sha256, received_at, origin_job, origin_base_build, origin_head_build)"
		       " VALUES (?, ?, ?, ?, ?, ?, nullif(?, 0), nullif(?, 0))");
	if (r < 0)
		return r;
	db_bind_text(st, 1, o->host);
	sqlite3_bind_int64(st, 2, o->origin_id);
	sqlite3_bind_int64(st, 3, id);
	db_bind_text(st, 4, o->sha256);
	db_bind_text(st, 5, now);
	if (o->origin_job > 0)
		sqlite3_bind_int64(st, 6, o->origin_job);
	else
		sqlite3_bind_null(st, 6);
	sqlite3_bind_int64(st, 7, o->origin_base_build);
	sqlite3_bind_int64(st, 8, o->origin_head_build);
	r = db_step(db, st, "recording a comparison's origin");
	db_finish(st);
	if (r == 0 && o->origin_job > 0)
		r = link_job(db, id, o);
	if (r == 0)
		r = link_builds(db, id, o);
	return r;
}

int db_comparison_ingest(struct db *db, int64_t *out_id, const struct db_comparison *c,
			 const struct db_summary *s, const struct db_origin *o)
{
	struct db_comparison ins = *c;   /* shallow: borrows every string of c */
	struct db_process *procs = xcalloc(c->nprocesses + 1, sizeof(*procs));
	struct db_origin had;
	int64_t id = 0;
	size_t i;
	int r;

	*out_id = 0;
	assert(c->state == DB_STATE_DONE);
	r = db_begin(db);
	if (r < 0)
		goto out_free;
	r = db_origin_get(db, &had, o->host, o->origin_id);
	if (r == 0) {
		r = err_set(-EEXIST, "comparison %lld of host '%s' is here already, as %lld",
			    (long long)o->origin_id, o->host, (long long)had.comparison_id);
		goto out;
	}
	if (r != -ENOENT)
		goto out;
	r = db_artifact_put(db, &ins.old.id, &c->old);
	if (r == 0)
		r = db_artifact_put(db, &ins.new.id, &c->new);
	if (r == 0)
		r = db_comparison_insert(db, &id, &ins);
	for (i = 0; r == 0 && i < c->nprocesses; i++) {
		procs[i] = c->processes[i];   /* shallow, as ins */
		procs[i].comparison_id = id;
		r = db_process_insert(db, &procs[i].id, &procs[i]);
		if (r == 0)
			r = db_process_finish(db, &procs[i]);
	}
	if (r == 0)
		r = db_comparison_finish(db, id, DB_STATE_DONE, s, procs, c->nprocesses);
	if (r == 0)
		r = store_origin(db, id, c, o);
	if (r == 0)
		r = db_commit(db);
out:
	if (r < 0)
		db_rollback(db);
	else
		*out_id = id;
out_free:
	free(procs);
	return r;
}
