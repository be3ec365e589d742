/*
 * pushed: which of this agent's done comparisons the hub has (docs/hub.md).
 * The agent's own database is the spool: a done comparison with no row here
 * is the backlog, sent in id order; a row is written only after the hub's
 * answer, a 2xx (stored, or had it already) or a permanent refusal (409,
 * 422) kept with the hub's message so that it is not sent again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

int db_push_pending(struct db *db, int64_t **out, size_t *out_n, size_t max)
{
	return db_ids_select(db, out, out_n, max, "SELECT c.id" DB_COMPARISONS_UNSENT
			     " ORDER BY c.id LIMIT ?", DB_ARGS(DB_INT(max)),
			     "listing the comparisons not yet pushed");
}

int db_push_backlog(struct db *db, int64_t *out)
{
	return db_run_count(db, out, "SELECT (SELECT count(*)" DB_COMPARISONS_UNSENT ")"
			    " + (SELECT count(*)" DB_JOBS_UNSENT ")"
			    " + (SELECT count(*)" DB_BUILDS_UNSENT ")"
			    " + (SELECT count(*)" DB_ALERTS_UNSENT ")", NULL, 0,
			    "counting what is not yet pushed");
}

int db_pushed_put(struct db *db, const char *sql, int64_t id, int64_t seq, int status,
		  const char *message, const char *doing)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, sql, DB_ARGS(DB_INT(id), DB_INT(seq), DB_INT(status), DB_TEXT(message),
				       DB_TEXT(now)), doing);
}

/* A comparison's row has no seq: the hub's id stands in its place, NULL
 * when the hub gave none. */
int db_push_mark(struct db *db, int64_t comparison_id, int status, int64_t hub_id,
		 const char *message)
{
	return db_pushed_put(db, "INSERT OR REPLACE INTO pushed (comparison_id, hub_id, status,"
			     " message, pushed_at) VALUES (?1, CASE WHEN ?2 > 0 THEN ?2 END, ?3, ?4,"
			     " ?5)", comparison_id, hub_id, status, message,
			     "recording a comparison pushed");
}
