/*
 * A failed job queued again: by perfd retry, with its builds set aside so
 * that none is found in the cache, or by the agent's poll when the [build]
 * recipe changed since its head commit was built. The job keeps its id,
 * its comparisons and the rows of what failed; only its state moves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

/* The builds of this database (not a hub's copy of a host's) of the trees
 * the commit was built from. */
#define TREES_OF(commit) " tree_oid IN (SELECT tree_oid FROM builds WHERE commit_oid = " \
	commit " AND origin_id IS NULL) AND origin_id IS NULL"

/* Sets aside, as stale builds, the done and failed builds of the job's head
 * commit and the failed ones of its base: the next run builds them anew. */
static int set_aside(struct db *db, const struct db_job *j, const char *reason)
{
	char now[TIME_ISO_LEN];
	int64_t before = 0, after = 0;
	int r;

	time_now_iso(now);
	r = db_run_count(db, &before, "SELECT count(*) FROM stale_builds", NULL, 0,
			 "counting stale builds");
	if (r == 0)
		r = db_run(db, "INSERT OR IGNORE INTO stale_builds (build_id, reason, found_at)"
			   " SELECT id, ?1, ?2 FROM builds WHERE"
			   " ((" TREES_OF("?3") " AND state IN ('done', 'failed')) OR"
			   " (" TREES_OF("?4") " AND state = 'failed'))",
			   DB_ARGS(DB_TEXT(reason), DB_TEXT(now), DB_TEXT(j->commit),
				   DB_TEXT(j->base)), "setting a job's builds aside");
	if (r == 0)
		r = db_run_count(db, &after, "SELECT count(*) FROM stale_builds", NULL, 0,
				 "counting stale builds");
	return r < 0 ? r : (int)(after - before);
}

int db_job_retry(struct db *db, int64_t id, bool fresh, const char *reason)
{
	struct db_job j;
	int r, n = 0;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_job_load(db, &j, id);
	if (r == -ENOENT || (r == 0 && *j.host))
		r = err_set(-ENOENT, "no job %lld of this agent in '%s'", (long long)id, db->path);
	else if (r == 0 && j.state != DB_JOB_FAILED)
		r = err_set(-EALREADY, "job %lld (%s at %.12s) is %s, not failed: nothing to retry",
			    (long long)id, j.head, j.commit, db_job_state_name(j.state));
	if (r == 0 && fresh)
		r = n = set_aside(db, &j, reason);
	/* As db_job_queue: head and span jobs wait for the history to read them. */
	if (r >= 0)
		r = db_run(db, "UPDATE jobs SET state = 'queued', detail = NULL, started_at = NULL,"
			   " finished_at = NULL, seq = (SELECT coalesce(max(seq), 0) + 1 FROM jobs),"
			   " judged = kind NOT IN ('head', 'span') WHERE id = ?",
			   DB_ARGS(DB_INT(id)), "queueing a job again");
	db_job_release(&j);
	r = db_end(db, r);
	return r < 0 ? r : n;
}

int db_jobs_failed_of_head(struct db *db, int64_t **out, size_t *out_n, const char *head,
			   size_t max)
{
	return db_ids_select(db, out, out_n, max, "SELECT id FROM jobs WHERE host = ''"
			     " AND head = ? AND state = 'failed' AND kind = 'head' ORDER BY id"
			     " LIMIT ?", DB_ARGS(DB_TEXT(head), DB_INT(max)),
			     "listing a head's failed jobs");
}

int db_jobs_failed_recipe(struct db *db, int64_t **out, size_t *out_n, const char *host,
			  const char *recipe_hash, size_t max)
{
	return db_ids_select(db, out, out_n, max, "SELECT j.id FROM jobs j JOIN heads h"
			     " ON h.name = j.head AND h.oid = j.commit_oid"
			     " WHERE j.host = '' AND j.kind = 'head' AND j.state = 'failed'"
			     " AND EXISTS (SELECT 1 FROM builds b WHERE b.commit_oid = j.commit_oid"
			     " AND b.host = ?1 AND b.origin_id IS NULL AND b.recipe_hash != ?2)"
			     " AND NOT EXISTS (SELECT 1 FROM builds b WHERE"
			     " b.commit_oid = j.commit_oid AND b.host = ?1 AND b.origin_id IS NULL"
			     " AND b.recipe_hash = ?2 AND b.state != 'abandoned'"
			     " AND b.id NOT IN (SELECT build_id FROM stale_builds))"
			     " ORDER BY j.id LIMIT ?3",
			     DB_ARGS(DB_TEXT(host), DB_TEXT(recipe_hash), DB_INT(max)),
			     "listing the failed heads of another recipe");
}
