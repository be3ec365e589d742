/*
 * Tokens the hub issued (docs/hub.md): a host's, with which its agent pushes
 * that host's records, or a maintainer's. Only the sha256 of a token's text
 * is stored; the text itself is shown once, when it is made. A revoked
 * token keeps its row, with the time it was revoked.
 */
#include <errno.h>
#include <string.h>

#include "db-internal.h"

const char *db_token_kind_name(enum db_token_kind k)
{
	return k == DB_TOKEN_MAINTAINER ? "maintainer" : "host";
}

int db_token_add(struct db *db, int64_t *out_id, enum db_token_kind kind, const char *name,
		 const char *sha256)
{
	sqlite3_stmt *st = NULL;
	char now[TIME_ISO_LEN];
	int r;

	*out_id = 0;
	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT INTO tokens (kind, name, sha256, created_at)"
		       " VALUES (?, ?, ?, ?)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, db_token_kind_name(kind));
	db_bind_text(st, 2, name);
	db_bind_text(st, 3, sha256);
	db_bind_text(st, 4, now);
	r = db_step_insert(db, st, out_id, "recording a token");
	db_finish(st);
	return r;
}

int db_token_revoke(struct db *db, enum db_token_kind kind, const char *name)
{
	sqlite3_stmt *st = NULL;
	char now[TIME_ISO_LEN];
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "UPDATE tokens SET revoked_at = ? WHERE kind = ? AND name = ?"
		       " AND revoked_at IS NULL");
	if (r < 0)
		return r;
	db_bind_text(st, 1, now);
	db_bind_text(st, 2, db_token_kind_name(kind));
	db_bind_text(st, 3, name);
	r = db_step(db, st, "revoking tokens");
	db_finish(st);
	return r < 0 ? r : sqlite3_changes(db->h);
}

static void token_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_token *t = elem;
	const char *kind = (const char *)sqlite3_column_text(st, 1);

	t->id = sqlite3_column_int64(st, 0);
	t->kind = kind && !strcmp(kind, "maintainer") ? DB_TOKEN_MAINTAINER : DB_TOKEN_HOST;
	db_column_copy(t->name, sizeof(t->name), st, 2);
	db_column_copy(t->sha256, sizeof(t->sha256), st, 3);
	db_column_copy(t->created_at, sizeof(t->created_at), st, 4);
	db_column_copy(t->revoked_at, sizeof(t->revoked_at), st, 5);
}

int db_token_list(struct db *db, struct db_token **out, size_t *out_n, bool live_only,
		  size_t max)
{
	const struct db_rows how = {
		.size = sizeof(struct db_token), .max = max, .fill = token_fill,
		.doing = "listing tokens",
	};
	sqlite3_stmt *st = NULL;
	void *v;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT id, kind, name, sha256, created_at, revoked_at FROM tokens"
		       " WHERE NOT ?1 OR revoked_at IS NULL ORDER BY kind, name, id LIMIT ?2");
	if (r < 0)
		return r;
	sqlite3_bind_int(st, 1, live_only);
	sqlite3_bind_int64(st, 2, max > INT64_MAX ? INT64_MAX : (sqlite3_int64)max);
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}
