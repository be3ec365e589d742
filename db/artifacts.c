/*
 * Artifacts: a file by path, size and sha256, stored once and shared by the
 * comparisons that ran it and the builds that made it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

void db_artifact_release(struct db_artifact *a)
{
	if (!a)
		return;
	free(a->path);
	a->path = NULL;
}

/* A row that is there already is only read, not rewritten by the upsert:
 * the same few artifacts come back comparison after comparison. */
int db_artifact_put(struct db *db, int64_t *out_id, const struct db_artifact *a)
{
	const struct db_arg key[] = { DB_TEXT(a->path), DB_INT(a->size), DB_TEXT(a->sha256) };
	sqlite3_stmt *st = NULL;
	int rc, r;

	*out_id = 0;
	r = db_run_row(db, db_fill_int64, out_id, "SELECT id FROM artifacts WHERE path = ? AND"
		       " size = ? AND sha256 = ?", key, ARRAY_SIZE(key), "looking up an artifact");
	if (r != -ENOENT)
		return r;
	r = db_prepare(db, &st,
		       "INSERT INTO artifacts (path, size, sha256) VALUES (?, ?, ?)"
		       " ON CONFLICT (path, size, sha256) DO UPDATE SET size = excluded.size"
		       " RETURNING id");
	if (r < 0)
		return r;
	db_bind_args(st, key, ARRAY_SIZE(key));
	rc = db_step_returning(st, out_id);
	if (rc != SQLITE_DONE) {
		/* The id of a row whose commit failed names nothing. */
		*out_id = 0;
		r = db_fail(db, rc, "recording an artifact");
	}
	db_finish(st);
	return r;
}

static void artifact_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_artifact *a = elem;

	a->path = db_column_strdup(st, 0);
	a->size = sqlite3_column_int64(st, 1);
	db_column_copy(a->sha256, sizeof(a->sha256), st, 2);
}

int db_artifact_load(struct db *db, struct db_artifact *out, int64_t id)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = db_run_row(db, artifact_fill, out, "SELECT path, size, sha256 FROM artifacts"
		       " WHERE id = ?", DB_ARGS(DB_INT(id)), "loading an artifact");
	if (r == -ENOENT)
		return err_set(-ENOENT, "no artifact %lld", (long long)id);
	if (r == 0)
		out->id = id;
	return r;
}
