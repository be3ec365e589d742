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

int db_receipt_get(struct db *db, struct db_receipt *out, int64_t comparison_id,
		   const char *format, const char *renderer)
{
	sqlite3_stmt *st = NULL;
	const void *body;
	int rc, r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT sha256, body FROM receipts"
		       " WHERE comparison_id = ? AND format = ? AND renderer = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, comparison_id);
	db_bind_text(st, 2, format);
	db_bind_text(st, 3, renderer);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		db_column_copy(out->sha256, sizeof(out->sha256), st, 0);
		body = sqlite3_column_blob(st, 1);
		out->len = (size_t)sqlite3_column_bytes(st, 1);
		out->body = xmalloc(out->len + 1);
		if (out->len)
			memcpy(out->body, body, out->len);
		out->body[out->len] = '\0';
	} else if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else {
		r = db_fail(db, rc, "reading a stored receipt");
	}
	db_finish(st);
	return r;
}

int db_receipt_mark(struct db *db, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = db_prepare(db, &st, "PRAGMA data_version");
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else
		r = db_fail(db, rc, "reading the database's version");
	db_finish(st);
	return r;
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
	if (r < 0)
		goto out;
	r = db_prepare(db, &st, "INSERT OR REPLACE INTO receipts (comparison_id, format,"
		       " renderer, sha256, body) VALUES (?, ?, ?, ?, ?)");
	if (r < 0)
		goto out;
	sqlite3_bind_int64(st, 1, comparison_id);
	db_bind_text(st, 2, format);
	db_bind_text(st, 3, renderer);
	db_bind_text(st, 4, sha256);
	sqlite3_bind_blob64(st, 5, body, len, SQLITE_STATIC);
	r = db_step(db, st, "storing a receipt");
	if (r < 0)
		goto out;
	r = db_commit(db);
out:
	if (r < 0)
		db_rollback(db);
	return r;
}

int db_receipt_forget(struct db *db, int64_t comparison_id)
{
	sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "DELETE FROM receipts WHERE comparison_id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, comparison_id);
	return db_step(db, st, "forgetting a stored receipt");
}
