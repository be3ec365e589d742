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
	char now[TIME_ISO_LEN];

	*out_id = 0;
	time_now_iso(now);
	return db_run_insert(db, out_id, "INSERT INTO tokens (kind, name, sha256, created_at)"
			     " VALUES (?, ?, ?, ?)", DB_ARGS(DB_TEXT(db_token_kind_name(kind)),
							     DB_TEXT(name), DB_TEXT(sha256),
							     DB_TEXT(now)),
			     "recording a token");
}

int db_token_revoke(struct db *db, enum db_token_kind kind, const char *name)
{
	char now[TIME_ISO_LEN];
	int r;

	time_now_iso(now);
	r = db_run(db, "UPDATE tokens SET revoked_at = ? WHERE kind = ? AND name = ?"
		   " AND revoked_at IS NULL", DB_ARGS(DB_TEXT(now), DB_TEXT(db_token_kind_name(kind)),
						      DB_TEXT(name)), "revoking tokens");
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

	return db_rows_select(db, "SELECT id, kind, name, sha256, created_at, revoked_at FROM tokens"
			      " WHERE NOT ?1 OR revoked_at IS NULL ORDER BY kind, name, id LIMIT ?2",
			      DB_ARGS(DB_INT(live_only), DB_INT(max > INT64_MAX ? INT64_MAX : max)),
			      &how, out, out_n);
}
