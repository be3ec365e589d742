/*
 * receipts: a done or abandoned comparison's receipt kept as the bytes the
 * hub answered, so that the next ask is one indexed read (docs/api.md,
 * "Receipts"). The rows are derived; db_receipt_forget is how every write
 * that changes a comparison keeps them true.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

void db_receipt_release(struct db_receipt *r)
{
	if (!r)
		return;
	free(r->body);
	memset(r, 0, sizeof(*r));
}

static void receipt_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_receipt *x = elem;

	db_column_copy(x->sha256, sizeof(x->sha256), st, 0);
	x->body = db_column_blobdup(st, 1, &x->len);
}

int db_receipt_get(struct db *db, struct db_receipt *out, int64_t comparison_id,
		   const char *format, const char *renderer)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, receipt_fill, out, "SELECT sha256, body FROM receipts"
			  " WHERE comparison_id = ? AND format = ? AND renderer = ?",
			  DB_ARGS(DB_INT(comparison_id), DB_TEXT(format), DB_TEXT(renderer)),
			  "reading a stored receipt");
}

int db_receipt_mark(struct db *db, int64_t *out)
{
	return db_run_count(db, out, "PRAGMA data_version", NULL, 0,
			    "reading the database's version");
}

/*
 * Under the write lock nobody else commits, so a mark unchanged there means
 * that no write since the comparison was loaded can have forgotten a
 * receipt that this one would bring back stale. The lock is not waited
 * for: the reader of a hub answers without storing rather than stall
 * behind a writer.
 */
int db_receipt_put(struct db *db, int64_t comparison_id, const char *format,
		   const char *renderer, const char *sha256, const char *body, size_t len,
		   int64_t mark)
{
	sqlite3_stmt *st = NULL;
	int64_t now;
	int r;

	if (db->readonly)
		return err_set(-EACCES, "database '%s' is open for reading alone: the receipt "
			       "is not stored", db->path);
	sqlite3_busy_timeout(db->h, 0);
	r = db_begin(db);
	sqlite3_busy_timeout(db->h, db->lock_timeout_ms);
	if (r < 0)
		return r;
	r = db_receipt_mark(db, &now);
	if (r == 0 && now != mark)
		r = err_set(-EAGAIN, "comparison %lld may have changed since its receipt was "
			    "rendered: not stored", (long long)comparison_id);
	/* The body is bound as given, not through DB_BLOB: a NULL body is
	 * stored as NULL. */
	if (r == 0)
		r = db_prepare_bound(db, &st, "INSERT OR REPLACE INTO receipts (comparison_id,"
				     " format, renderer, sha256, body) VALUES (?, ?, ?, ?, ?)",
				     DB_ARGS(DB_INT(comparison_id), DB_TEXT(format),
					     DB_TEXT(renderer), DB_TEXT(sha256)));
	if (r == 0) {
		sqlite3_bind_blob64(st, 5, body, len, SQLITE_STATIC);
		r = db_step(db, st, "storing a receipt");
	}
	return db_end(db, r);
}

int db_receipt_forget(struct db *db, int64_t comparison_id)
{
	return db_run(db, "DELETE FROM receipts WHERE comparison_id = ?",
		      DB_ARGS(DB_INT(comparison_id)), "forgetting a stored receipt");
}
