/*
 * hub_pulls: the pull request heads the hub hands to its agents, each with
 * the one base commit every host compares it against, fixed when the hub
 * first saw the head (docs/hub.md, "Pull requests at the hub").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

#define HUB_PULL_COLUMNS "pr, commit_oid, base_oid, base_ref, how, author, trusted, open," \
	" fixed_at"

static void hub_pull_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_hub_pull *p = elem;

	memset(p, 0, sizeof(*p));
	p->pr = sqlite3_column_int(st, 0);
	db_column_copy(p->commit, sizeof(p->commit), st, 1);
	db_column_copy(p->base, sizeof(p->base), st, 2);
	db_column_copy(p->base_ref, sizeof(p->base_ref), st, 3);
	db_column_copy(p->how, sizeof(p->how), st, 4);
	db_column_copy(p->author, sizeof(p->author), st, 5);
	p->trusted = sqlite3_column_int(st, 6) != 0;
	p->open = sqlite3_column_int(st, 7) != 0;
	db_column_copy(p->fixed_at, sizeof(p->fixed_at), st, 8);
}

int db_hub_pull_get(struct db *db, struct db_hub_pull *out, const char *repo, int pr,
		    const char *commit)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, hub_pull_fill, out, "SELECT " HUB_PULL_COLUMNS " FROM hub_pulls"
			  " WHERE repo = ? AND pr = ? AND commit_oid = ?",
			  DB_ARGS(DB_TEXT(repo), DB_INT(pr), DB_TEXT(commit)),
			  "reading a pull request's head");
}

int db_hub_pulls_set(struct db *db, const char *repo, const struct db_hub_pull *heads, size_t n)
{
	char now[TIME_ISO_LEN];
	size_t i;
	int r;

	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_run(db, "UPDATE hub_pulls SET open = 0 WHERE repo = ? AND open",
		   DB_ARGS(DB_TEXT(repo)), "recording the open pull requests");
	for (i = 0; r == 0 && i < n; i++) {
		const struct db_hub_pull *p = &heads[i];

		/* The base is fixed once: a later poll changes trust and openness. */
		r = db_run(db, "INSERT INTO hub_pulls (repo, pr, commit_oid, base_oid,"
			   " base_ref, how, author, trusted, open, fixed_at)"
			   " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9)"
			   " ON CONFLICT (repo, pr, commit_oid) DO UPDATE SET trusted = ?8,"
			   " open = 1, author = ?7",
			   DB_ARGS(DB_TEXT(repo), DB_INT(p->pr), DB_TEXT(p->commit), DB_TEXT(p->base),
				   DB_TEXT(p->base_ref), DB_TEXT(p->how), DB_TEXT(p->author),
				   DB_INT(p->trusted), DB_TEXT(now)),
			   "recording a pull request's head");
	}
	if (r == 0)
		return db_commit(db);
	db_rollback(db);
	return r;
}

int db_hub_pulls_open(struct db *db, struct db_hub_pull **out, size_t *out_n, const char *repo)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = SIZE_MAX, .fill = hub_pull_fill,
		.doing = "listing the open pull requests",
	};

	return db_rows_select(db, "SELECT " HUB_PULL_COLUMNS " FROM hub_pulls"
			      " WHERE repo = ? AND open ORDER BY pr", DB_ARGS(DB_TEXT(repo)), &how,
			      out, out_n);
}

int db_hub_pulls_find(struct db *db, struct db_hub_pull **out, size_t *out_n, const char *repo,
		      const char *commit, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = hub_pull_fill,
		.doing = "listing the pull requests' heads",
	};

	/* A prefix matches by range, as the comparisons' commit filter does:
	 * [prefix, prefix + "g"), hex digits sorting below 'g'. */
	return db_rows_select(db, commit ?
			      "SELECT " HUB_PULL_COLUMNS " FROM hub_pulls WHERE repo = ?1"
			      " AND commit_oid >= ?2 AND commit_oid < ?2 || 'g'"
			      " ORDER BY pr DESC, commit_oid LIMIT ?3" :
			      "SELECT " HUB_PULL_COLUMNS " FROM hub_pulls WHERE repo = ?1 AND open"
			      " ORDER BY pr DESC, commit_oid LIMIT ?3",
			      DB_ARGS(DB_TEXT(repo), DB_TEXT(commit), DB_INT(max)), &how, out, out_n);
}
