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

static void comment_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_pull_comment *c = elem;

	c->comment_id = sqlite3_column_int64(st, 0);
	db_column_copy(c->commit, sizeof(c->commit), st, 1);
	db_column_copy(c->body_sha256, sizeof(c->body_sha256), st, 2);
	c->recreated = sqlite3_column_int(st, 3);
	c->muted = sqlite3_column_int(st, 4) != 0;
}

int db_pull_comment_get(struct db *db, struct db_pull_comment *out, const char *repo, int pr,
			const char *key)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, comment_fill, out, "SELECT comment_id, commit_oid, body_sha256,"
			  " recreated, muted FROM pull_comments WHERE repo = ?1 AND pr = ?2"
			  " AND comment_key = ?3", DB_ARGS(DB_TEXT(repo), DB_INT(pr), DB_TEXT(key)),
			  "reading a pull request's comment");
}

int db_pull_comment_put(struct db *db, const char *repo, int pr, const char *key,
			const struct db_pull_comment *c)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	/* No comment id yet (0): NULL. */
	return db_run(db, "INSERT OR REPLACE INTO pull_comments (repo, pr, comment_id,"
		      " commit_oid, body_sha256, recreated, muted, posted_at, comment_key)"
		      " VALUES (?1, ?2, CASE WHEN ?3 > 0 THEN ?3 END, ?4, ?5, ?6, ?7, ?8, ?9)",
		      DB_ARGS(DB_TEXT(repo), DB_INT(pr), DB_INT(c->comment_id),
			      DB_TEXT(*c->commit ? c->commit : NULL),
			      DB_TEXT(*c->body_sha256 ? c->body_sha256 : NULL), DB_INT(c->recreated),
			      DB_INT(c->muted), DB_TEXT(now), DB_TEXT(key)),
		      "recording a pull request's comment");
}

/* A commit status: its state into a char[16], its description strdup'd. */
struct status {
	char *state;
	char **description;
};

static void status_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct status *s = elem;

	db_column_copy(s->state, 16, st, 0);
	*s->description = db_column_strdup(st, 1);
}

int db_commit_status_get(struct db *db, char state[16], char **description, const char *repo,
			 const char *commit, const char *context)
{
	struct status s = { state, description };

	state[0] = '\0';
	*description = NULL;
	return db_run_row(db, status_fill, &s, "SELECT state, description FROM commit_statuses"
			  " WHERE repo = ?1 AND commit_oid = ?2 AND context = ?3",
			  DB_ARGS(DB_TEXT(repo), DB_TEXT(commit), DB_TEXT(context)),
			  "reading a commit status");
}

int db_commit_status_put(struct db *db, const char *repo, const char *commit, const char *context,
			 const char *state, const char *description, const char *target_url)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "INSERT OR REPLACE INTO commit_statuses (repo, commit_oid, context,"
		      " state, description, target_url, posted_at)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		      DB_ARGS(DB_TEXT(repo), DB_TEXT(commit), DB_TEXT(context), DB_TEXT(state),
			      DB_TEXT(description), DB_TEXT(target_url), DB_TEXT(now)),
		      "recording a commit status");
}

int db_pull_approval_get(struct db *db, char **approver, const char *repo, int pr,
			 const char *commit)
{
	*approver = NULL;
	return db_run_row(db, db_fill_string, approver, "SELECT approver FROM pull_approvals"
			  " WHERE repo = ?1 AND pr = ?2 AND commit_oid = ?3",
			  DB_ARGS(DB_TEXT(repo), DB_INT(pr), DB_TEXT(commit)),
			  "reading an approval");
}

int db_pull_approval_add(struct db *db, const char *repo, int pr, const char *commit,
			 const char *approver, int64_t comment_id)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "INSERT OR IGNORE INTO pull_approvals (repo, pr, commit_oid,"
		      " approver, comment_id, approved_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
		      DB_ARGS(DB_TEXT(repo), DB_INT(pr), DB_TEXT(commit), DB_TEXT(approver),
			      DB_INT(comment_id), DB_TEXT(now)), "recording an approval");
}

int db_pull_approval_last(struct db *db, int64_t *out, const char *repo, int pr)
{
	return db_run_count(db, out, "SELECT coalesce(max(comment_id), 0) FROM pull_approvals"
			    " WHERE repo = ?1 AND pr = ?2", DB_ARGS(DB_TEXT(repo), DB_INT(pr)),
			    "reading approvals");
}

int db_pull_head_first_seen(struct db *db, int64_t *out, const char *repo, int pr,
			    const char *commit)
{
	const struct db_arg head[] = { DB_TEXT(repo), DB_INT(pr), DB_TEXT(commit),
				       DB_INT(time(NULL)) };
	int r;

	r = db_run(db, "INSERT OR IGNORE INTO pull_heads_seen (repo, pr, commit_oid, first_seen)"
		   " VALUES (?1, ?2, ?3, ?4)", head, ARRAY_SIZE(head),
		   "recording a pull request's head");
	if (r < 0)
		return r;
	/* The key alone, head's first three. */
	return db_run_count(db, out, "SELECT first_seen FROM pull_heads_seen"
			    " WHERE repo = ?1 AND pr = ?2 AND commit_oid = ?3", head,
			    ARRAY_SIZE(head) - 1, "reading a pull request's head");
}
