/*
 * What perfd said on a pull request's host: its comment per pull request,
 * the commit statuses it set, the heads a maintainer approved. Each row is
 * written after the host accepted what it records, so a restart neither
 * posts again nor forgets a comment it made.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db-internal.h"

int db_pull_comment_get(struct db *db, struct db_pull_comment *out, const char *repo, int pr,
			const char *key)
{
	sqlite3_stmt *st;
	int rc, r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT comment_id, commit_oid, body_sha256, recreated, muted"
		       " FROM pull_comments WHERE repo = ?1 AND pr = ?2 AND comment_key = ?3");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, key);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->comment_id = sqlite3_column_int64(st, 0);
		db_column_copy(out->commit, sizeof(out->commit), st, 1);
		db_column_copy(out->body_sha256, sizeof(out->body_sha256), st, 2);
		out->recreated = sqlite3_column_int(st, 3);
		out->muted = sqlite3_column_int(st, 4) != 0;
	} else if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else {
		r = db_fail(db, rc, "reading a pull request's comment");
	}
	db_finish(st);
	return r;
}

int db_pull_comment_put(struct db *db, const char *repo, int pr, const char *key,
			const struct db_pull_comment *c)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT OR REPLACE INTO pull_comments (repo, pr, comment_id,"
		       " commit_oid, body_sha256, recreated, muted, posted_at, comment_key)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	if (c->comment_id > 0)
		sqlite3_bind_int64(st, 3, c->comment_id);
	db_bind_text(st, 4, *c->commit ? c->commit : NULL);
	db_bind_text(st, 5, *c->body_sha256 ? c->body_sha256 : NULL);
	sqlite3_bind_int(st, 6, c->recreated);
	sqlite3_bind_int(st, 7, c->muted);
	db_bind_text(st, 8, now);
	db_bind_text(st, 9, key);
	return db_step(db, st, "recording a pull request's comment");
}

int db_commit_status_get(struct db *db, char state[16], char **description, const char *repo,
			 const char *commit, const char *context)
{
	sqlite3_stmt *st;
	int rc, r;

	state[0] = '\0';
	*description = NULL;
	r = db_prepare(db, &st, "SELECT state, description FROM commit_statuses"
		       " WHERE repo = ?1 AND commit_oid = ?2 AND context = ?3");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	db_bind_text(st, 2, commit);
	db_bind_text(st, 3, context);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		db_column_copy(state, 16, st, 0);
		*description = db_column_strdup(st, 1);
	} else if (rc == SQLITE_DONE) {
		r = -ENOENT;
	} else {
		r = db_fail(db, rc, "reading a commit status");
	}
	db_finish(st);
	return r;
}

int db_commit_status_put(struct db *db, const char *repo, const char *commit, const char *context,
			 const char *state, const char *description, const char *target_url)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT OR REPLACE INTO commit_statuses (repo, commit_oid, context,"
		       " state, description, target_url, posted_at)"
		       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	db_bind_text(st, 2, commit);
	db_bind_text(st, 3, context);
	db_bind_text(st, 4, state);
	db_bind_text(st, 5, description);
	db_bind_text(st, 6, target_url);
	db_bind_text(st, 7, now);
	return db_step(db, st, "recording a commit status");
}

int db_pull_approval_get(struct db *db, char **approver, const char *repo, int pr,
			 const char *commit)
{
	sqlite3_stmt *st;
	int rc, r;

	*approver = NULL;
	r = db_prepare(db, &st, "SELECT approver FROM pull_approvals"
		       " WHERE repo = ?1 AND pr = ?2 AND commit_oid = ?3");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*approver = db_column_strdup(st, 0);
	else if (rc == SQLITE_DONE)
		r = -ENOENT;
	else
		r = db_fail(db, rc, "reading an approval");
	db_finish(st);
	return r;
}

int db_pull_approval_add(struct db *db, const char *repo, int pr, const char *commit,
			 const char *approver, int64_t comment_id)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT OR IGNORE INTO pull_approvals (repo, pr, commit_oid,"
		       " approver, comment_id, approved_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	db_bind_text(st, 4, approver);
	sqlite3_bind_int64(st, 5, comment_id);
	db_bind_text(st, 6, now);
	return db_step(db, st, "recording an approval");
}

int db_pull_approval_last(struct db *db, int64_t *out, const char *repo, int pr)
{
	sqlite3_stmt *st;
	int rc, r;

	*out = 0;
	r = db_prepare(db, &st, "SELECT coalesce(max(comment_id), 0) FROM pull_approvals"
		       " WHERE repo = ?1 AND pr = ?2");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else
		r = db_fail(db, rc, "reading approvals");
	db_finish(st);
	return r;
}

int db_pull_head_first_seen(struct db *db, int64_t *out, const char *repo, int pr,
			    const char *commit)
{
	sqlite3_stmt *st;
	int rc, r;

	r = db_prepare(db, &st, "INSERT OR IGNORE INTO pull_heads_seen (repo, pr, commit_oid,"
		       " first_seen) VALUES (?1, ?2, ?3, ?4)");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)time(NULL));
	r = db_step(db, st, "recording a pull request's head");
	if (r < 0)
		return r;
	r = db_prepare(db, &st, "SELECT first_seen FROM pull_heads_seen"
		       " WHERE repo = ?1 AND pr = ?2 AND commit_oid = ?3");
	if (r < 0)
		return r;
	db_bind_text(st, 1, repo);
	sqlite3_bind_int(st, 2, pr);
	db_bind_text(st, 3, commit);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	else
		r = db_fail(db, rc, "reading a pull request's head");
	db_finish(st);
	return r;
}
