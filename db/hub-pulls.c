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
	sqlite3_stmt *st = NULL;
	int rc, r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT " HUB_PULL_COLUMNS " FROM hub_pulls"
		       " WHERE repo = ? AND pr = ? AND commit_oid = ?");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		hub_pull_fill(out, st, NULL);
	else
		r = rc == SQLITE_DONE ? -ENOENT : db_fail(db, rc, "reading a pull request's head");
	db_finish(st);
	return r;
}

int db_hub_pulls_set(struct db *db, const char *repo, const struct db_hub_pull *heads, size_t n)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st = NULL;
	size_t i;
	int r;

	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st, "UPDATE hub_pulls SET open = 0 WHERE repo = ? AND open");
	if (r == 0) {
		db_bind_text(st, 1, repo);
		r = db_step(db, st, "recording the open pull requests");
	}
	for (i = 0; r == 0 && i < n; i++) {
		const struct db_hub_pull *p = &heads[i];

		/* The base is fixed once: a later poll changes trust and openness. */
		r = db_prepare(db, &st, "INSERT INTO hub_pulls (repo, pr, commit_oid, base_oid,"
			       " base_ref, how, author, trusted, open, fixed_at)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9)"
			       " ON CONFLICT (repo, pr, commit_oid) DO UPDATE SET trusted = ?8,"
			       " open = 1, author = ?7");
		if (r < 0)
			break;
		db_bind_text(st, 1, repo);
		sqlite3_bind_int(st, 2, p->pr);
		db_bind_text(st, 3, p->commit);
		db_bind_text(st, 4, p->base);
		db_bind_text(st, 5, p->base_ref);
		db_bind_text(st, 6, p->how);
		db_bind_text(st, 7, p->author);
		sqlite3_bind_int(st, 8, p->trusted);
		db_bind_text(st, 9, now);
		r = db_step(db, st, "recording a pull request's head");
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
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT " HUB_PULL_COLUMNS " FROM hub_pulls"
		       " WHERE repo = ? AND open ORDER BY pr");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}

int db_hub_pulls_find(struct db *db, struct db_hub_pull **out, size_t *out_n, const char *repo,
		      const char *commit, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = hub_pull_fill,
		.doing = "listing the pull requests' heads",
	};
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	*out = NULL;
	*out_n = 0;
	/* A prefix matches by range, as the comparisons' commit filter does:
	 * [prefix, prefix + "g"), hex digits sorting below 'g'. */
	r = db_prepare(db, &st, commit ?
		       "SELECT " HUB_PULL_COLUMNS " FROM hub_pulls WHERE repo = ?1"
		       " AND commit_oid >= ?2 AND commit_oid < ?2 || 'g'"
		       " ORDER BY pr DESC, commit_oid LIMIT ?3" :
		       "SELECT " HUB_PULL_COLUMNS " FROM hub_pulls WHERE repo = ?1 AND open"
		       " ORDER BY pr DESC, commit_oid LIMIT ?3");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	if (commit)
		db_bind_text(st, 2, commit);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}
