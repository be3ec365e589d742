/*
 * Reading for a pull request's comment: which comparisons describe one head
 * commit. Nothing here writes.
 */
#include <errno.h>
#include <string.h>

#include "db-internal.h"

/*
 * Per job of the commit and per host and case, only the newest done
 * comparison counts: an older one was measured again and is superseded.
 * Two jobs at one commit (a branch and a pull head) are replications and
 * both count. The order groups the rows of one cell together.
 */
int db_commit_comparison_ids(struct db *db, int64_t *out, size_t max, const char *commit)
{
	sqlite3_stmt *st;
	size_t n = 0;
	int rc, r;

	r = db_prepare(db, &st, "SELECT c.id FROM comparisons c"
		       " JOIN artifacts o ON o.id = c.old_artifact"
		       " JOIN artifacts n ON n.id = c.new_artifact"
		       " WHERE c.id IN (SELECT max(c2.id) FROM jobs j"
		       "  JOIN comparisons c2 ON c2.job_id = j.id"
		       "  WHERE j.commit_oid = ?1 AND c2.state = 'done'"
		       "  GROUP BY c2.job_id, c2.host, c2.case_name)"
		       " ORDER BY c.host, c.case_name, o.sha256, n.sha256, c.id LIMIT ?2");
	if (r < 0)
		return r;
	db_bind_text(st, 1, commit);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		out[n++] = sqlite3_column_int64(st, 0);
	db_finish(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, rc, "finding a commit's comparisons");
	return (int)n;
}
