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

/* A done comparison of this host's own (not one a hub ingested) that the
 * hub has not answered for. */
#define UNSENT " FROM comparisons c WHERE c.state = 'done'" \
	" AND NOT EXISTS (SELECT 1 FROM pushed p WHERE p.comparison_id = c.id)" \
	" AND NOT EXISTS (SELECT 1 FROM comparison_origins o WHERE o.comparison_id = c.id)"

static void id_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	*(int64_t *)elem = sqlite3_column_int64(st, 0);
}

int db_push_pending(struct db *db, int64_t **out, size_t *out_n, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(int64_t), .max = max, .fill = id_fill,
		.doing = "listing the comparisons not yet pushed",
	};
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT c.id" UNSENT " ORDER BY c.id LIMIT ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}

int db_push_backlog(struct db *db, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int r;

	*out = 0;
	r = db_prepare(db, &st, "SELECT count(*)" UNSENT);
	if (r < 0)
		return r;
	r = db_step_count(db, st, out, "counting the comparisons not yet pushed");
	if (r == 0) {
		int64_t jobs = 0;

		r = db_jobs_unpushed_count(db, &jobs);
		*out += jobs;
		if (r == 0)
			r = db_builds_unpushed_count(db, &jobs);
		if (r == 0)
			*out += jobs;
		if (r == 0)
			r = db_alerts_unpushed_count(db, &jobs);
		if (r == 0)
			*out += jobs;
	}
	return r;
}

int db_push_mark(struct db *db, int64_t comparison_id, int status, int64_t hub_id,
		 const char *message)
{
	sqlite3_stmt *st = NULL;
	char now[TIME_ISO_LEN];
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT OR REPLACE INTO pushed (comparison_id, status, hub_id,"
		       " message, pushed_at) VALUES (?, ?, ?, ?, ?)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, comparison_id);
	sqlite3_bind_int(st, 2, status);
	if (hub_id > 0)
		sqlite3_bind_int64(st, 3, hub_id);
	else
		sqlite3_bind_null(st, 3);
	db_bind_text(st, 4, message);
	db_bind_text(st, 5, now);
	r = db_step(db, st, "recording a comparison pushed");
	db_finish(st);
	return r;
}
