/*
 * Heads: the branches and pull heads the agent watches, each at the commit
 * it last saw, and the heads as the hub lists them, with their newest job.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

static void oid_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	db_column_copy(elem, DB_OID_HEX, st, 0);
}

int db_head_get(struct db *db, char out_oid[DB_OID_HEX], const char *name)
{
	out_oid[0] = '\0';
	return db_run_row(db, oid_fill, out_oid, "SELECT oid FROM heads WHERE name = ?",
			  DB_ARGS(DB_TEXT(name)), "reading a head");
}

int db_head_set(struct db *db, const char *name, const char *oid, bool is_pull)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "INSERT INTO heads (name, oid, is_pull, seen_at) VALUES (?1, ?2, ?3, ?4)"
		      " ON CONFLICT (name) DO UPDATE SET oid = ?2, seen_at = ?4",
		      DB_ARGS(DB_TEXT(name), DB_TEXT(oid), DB_INT(is_pull), DB_TEXT(now)),
		      "recording a head");
}

int db_heads_keep_only(struct db *db, const char *const *names, size_t n)
{
	size_t i;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_exec(db, "CREATE TEMP TABLE IF NOT EXISTS keep_heads (name TEXT PRIMARY KEY);"
		    " DELETE FROM keep_heads;", "forgetting heads");
	for (i = 0; r == 0 && i < n; i++)
		r = db_run(db, "INSERT OR IGNORE INTO keep_heads (name) VALUES (?)",
			   DB_ARGS(DB_TEXT(names[i])), "forgetting heads");
	if (r == 0)
		r = db_exec(db, "DELETE FROM heads WHERE name NOT IN (SELECT name FROM keep_heads)",
			    "forgetting heads");
	return db_end(db, r);
}

void db_head_info_release(struct db_head_info *h)
{
	if (!h)
		return;
	free(h->job_detail);
	free(h->subject);
	h->job_detail = h->subject = NULL;
}

static void head_info_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_head_info *h = elem;

	db_column_copy(h->name, sizeof(h->name), st, 0);
	db_column_copy(h->oid, sizeof(h->oid), st, 1);
	h->is_pull = sqlite3_column_int(st, 2);
	db_column_copy(h->seen_at, sizeof(h->seen_at), st, 3);
	h->job_id = sqlite3_column_int64(st, 4);
	db_column_copy(h->job_state, sizeof(h->job_state), st, 5);
	h->job_detail = db_column_strdup(st, 6);
	h->subject = db_column_strdup(st, 7);
}

static void head_info_release(void *elem)
{
	db_head_info_release(elem);
}

int db_head_infos(struct db *db, struct db_head_info **out, size_t *out_n, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(struct db_head_info), .max = max, .fill = head_info_fill,
		.release = head_info_release, .doing = "listing heads",
	};

	return db_rows_select(db, "SELECT h.name, h.oid, h.is_pull, h.seen_at, coalesce(j.id, 0),"
			      " coalesce(j.state, ''), j.detail, j.subject FROM heads h"
			      " LEFT JOIN jobs j ON j.id = (SELECT max(id) FROM jobs"
			      "  WHERE head = h.name AND commit_oid = h.oid)"
			      " ORDER BY h.name LIMIT ?", DB_ARGS(DB_INT(max)), &how, out, out_n);
}
