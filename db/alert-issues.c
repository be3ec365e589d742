/*
 * Alerts on the pull requests' host (docs/github.md, "Alerts on the
 * forge"): the issue the hub keeps for each raised alert of its default
 * branch, its comment on each culprit's pull request, and the "/perfd
 * triage" commands it read from the issues, with what came of each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

static const char *const outcomes[] = { "applied", "refused", "ignored", "malformed" };

const char *db_command_outcome_name(enum db_command_outcome o)
{
	return outcomes[o];
}

#define ISSUE_COLUMNS "alert_id, number, unsure, coalesce(body_sha256, ''), state," \
	" comment_id, coalesce(comments_since, ''), coalesce(read_at, '')"

static void issue_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_alert_issue *is = elem;

	is->alert_id = sqlite3_column_int64(st, 0);
	is->number = sqlite3_column_int(st, 1);
	is->unsure = sqlite3_column_int(st, 2) != 0;
	db_column_copy(is->body_sha256, sizeof(is->body_sha256), st, 3);
	is->closed = !strcmp((const char *)sqlite3_column_text(st, 4), "closed");
	is->comment_id = sqlite3_column_int64(st, 5);
	db_column_copy(is->since, sizeof(is->since), st, 6);
	db_column_copy(is->read_at, sizeof(is->read_at), st, 7);
}

int db_alert_issue_get(struct db *db, struct db_alert_issue *out, const char *repo,
		       int64_t alert_id)
{
	memset(out, 0, sizeof(*out));
	out->alert_id = alert_id;
	return db_run_row(db, issue_fill, out, "SELECT " ISSUE_COLUMNS " FROM alert_issues"
			  " WHERE repo = ?1 AND alert_id = ?2",
			  DB_ARGS(DB_TEXT(repo), DB_INT(alert_id)), "reading an alert's issue");
}

int db_alert_issue_put(struct db *db, const char *repo, const struct db_alert_issue *is)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "INSERT OR REPLACE INTO alert_issues (repo, alert_id, number,"
		      " unsure, body_sha256, state, comment_id, comments_since, read_at, posted_at)"
		      " VALUES (?1, ?2, ?3, ?4, nullif(?5, ''), ?6, ?7, nullif(?8, ''),"
		      " nullif(?9, ''), ?10)",
		      DB_ARGS(DB_TEXT(repo), DB_INT(is->alert_id), DB_INT(is->number),
			      DB_INT(is->unsure), DB_TEXT(is->body_sha256),
			      DB_TEXT(is->closed ? "closed" : "open"), DB_INT(is->comment_id),
			      DB_TEXT(is->since), DB_TEXT(is->read_at), DB_TEXT(now)),
		      "recording an alert's issue");
}

int db_alert_issue_candidates(struct db *db, int64_t **out, size_t *out_n, const char *branch,
			      size_t max)
{
	return db_ids_select(db, out, out_n, max, "SELECT id FROM (SELECT id FROM alerts a"
			     " WHERE state = 'raised' AND branch = ?1 AND "
			     DB_COMPARISON_CHECKED("a.comparison_id", "a.host", "a.case_name",
						   "a.direction", "a.lo_oid", "a.hi_oid")
			     " ORDER BY id DESC LIMIT ?2)"
			     " ORDER BY id", DB_ARGS(DB_TEXT(branch), DB_INT(max)),
			     "listing the alerts kept on the forge");
}

int db_alert_issues_to_read(struct db *db, struct db_alert_issue **out, size_t *out_n,
			    const char *repo, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = issue_fill,
		.doing = "listing the alerts' issues to read",
	};

	return db_rows_select(db, "SELECT i.alert_id, i.number, i.unsure,"
			      " coalesce(i.body_sha256, ''), i.state, i.comment_id,"
			      " coalesce(i.comments_since, ''), coalesce(i.read_at, '')"
			      " FROM alert_issues i JOIN alerts a ON a.id = i.alert_id"
			      " WHERE i.repo = ?1 AND i.number > 0"
			      " AND a.triage IN ('new', 'acknowledged')"
			      " ORDER BY coalesce(i.read_at, ''), i.alert_id LIMIT ?2",
			      DB_ARGS(DB_TEXT(repo), DB_INT(max)), &how, out, out_n);
}

/* ---- culprits ---- */

static void culprit_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_alert_culprit *c = elem;

	c->alert_id = sqlite3_column_int64(st, 0);
	db_column_copy(c->commit, sizeof(c->commit), st, 1);
	c->pr = sqlite3_column_int(st, 2);
	c->comment_id = sqlite3_column_int64(st, 3);
	c->unsure = sqlite3_column_int(st, 4) != 0;
}

int db_alert_culprits(struct db *db, struct db_alert_culprit **out, size_t *out_n,
		      const char *repo, int64_t alert_id)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = DB_BISECT_STEPS_MAX, .fill = culprit_fill,
		.doing = "listing an alert's culprits",
	};

	return db_rows_select(db, "SELECT alert_id, commit_oid, pr, comment_id, unsure"
			      " FROM alert_culprits WHERE repo = ?1 AND alert_id = ?2"
			      " ORDER BY commit_oid", DB_ARGS(DB_TEXT(repo), DB_INT(alert_id)), &how,
			      out, out_n);
}

int db_alert_culprit_put(struct db *db, const char *repo, const struct db_alert_culprit *c)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "INSERT OR REPLACE INTO alert_culprits (repo, alert_id, commit_oid,"
		      " pr, comment_id, unsure, asked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
		      DB_ARGS(DB_TEXT(repo), DB_INT(c->alert_id), DB_TEXT(c->commit), DB_INT(c->pr),
			      DB_INT(c->comment_id), DB_INT(c->unsure), DB_TEXT(now)),
		      "recording an alert's culprit");
}

/* ---- commands ---- */

void db_alert_command_release(struct db_alert_command *c)
{
	if (!c)
		return;
	free(c->detail);
	c->detail = NULL;
}

static int command_insert(struct db *db, const char *repo, const struct db_alert_command *c,
			  const char *now)
{
	return db_run(db, "INSERT INTO alert_commands (repo, comment_id, alert_id, login,"
		      " command, outcome, detail, read_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
		      DB_ARGS(DB_TEXT(repo), DB_INT(c->comment_id), DB_INT(c->alert_id),
			      DB_TEXT(c->login), DB_TEXT(c->command),
			      DB_TEXT(db_command_outcome_name(c->outcome)), DB_TEXT(c->detail),
			      DB_TEXT(now)), "recording an alert's command");
}

/* Whether repo's comment was taken before. */
static int command_known(struct db *db, bool *out, const char *repo, int64_t comment_id)
{
	int64_t n = 0;
	int r;

	r = db_run_count(db, &n, "SELECT count(*) FROM alert_commands WHERE repo = ?1"
			 " AND comment_id = ?2", DB_ARGS(DB_TEXT(repo), DB_INT(comment_id)),
			 "looking for an alert's command");
	*out = n > 0;
	return r;
}

int db_alert_command_take(struct db *db, const char *repo, struct db_alert_command *c,
			  bool apply, enum db_alert_triage t, int64_t fixed_by, const char *since)
{
	char now[TIME_ISO_LEN];
	bool known;
	int r;

	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	r = command_known(db, &known, repo, c->comment_id);
	if (r < 0 || known)
		goto out;
	if (apply) {
		r = db_alert_triage_set(db, c->alert_id, t, c->login, fixed_by);
		if (r == -EINVAL || r == -ENOENT) {
			free(c->detail);
			c->detail = xstrdup(err_last());
			c->outcome = DB_COMMAND_REFUSED;
			r = 0;
		} else if (r == 0) {
			c->outcome = DB_COMMAND_APPLIED;
		}
	}
	if (r == 0)
		r = command_insert(db, repo, c, now);
	if (r == 0)
		r = db_run(db, "UPDATE alert_issues SET comment_id = ?1,"
			   " comments_since = nullif(?2, '') WHERE repo = ?3 AND alert_id = ?4"
			   " AND comment_id < ?1",
			   DB_ARGS(DB_INT(c->comment_id), DB_TEXT(since ? since : ""), DB_TEXT(repo),
				   DB_INT(c->alert_id)), "recording how far an alert's issue was read");
	if (r == 0)
		snprintf(c->read_at, sizeof(c->read_at), "%s", now);
out:
	if (r == 0)
		return db_commit(db);
	db_rollback(db);
	return r;
}

static void command_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_alert_command *c = elem;
	const char *o = (const char *)sqlite3_column_text(st, 4);
	size_t i;

	c->alert_id = sqlite3_column_int64(st, 0);
	c->comment_id = sqlite3_column_int64(st, 1);
	db_column_copy(c->login, sizeof(c->login), st, 2);
	db_column_copy(c->command, sizeof(c->command), st, 3);
	for (i = 0; i < ARRAY_SIZE(outcomes); i++)
		if (o && !strcmp(o, outcomes[i]))
			c->outcome = (enum db_command_outcome)i;
	c->detail = db_column_strdup(st, 5);
	db_column_copy(c->read_at, sizeof(c->read_at), st, 6);
}

static void command_release(void *elem)
{
	db_alert_command_release(elem);
}

int db_alert_commands_recent(struct db *db, struct db_alert_command **out, size_t *out_n,
			     const char *repo, int64_t alert_id, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = command_fill, .release = command_release,
		.doing = "listing an alert's commands",
	};

	return db_rows_select(db, "SELECT * FROM (SELECT alert_id, comment_id, login, command,"
			      " outcome, detail, read_at FROM alert_commands WHERE repo = ?1"
			      " AND alert_id = ?2 AND outcome <> 'ignored' ORDER BY comment_id DESC"
			      " LIMIT ?3) ORDER BY comment_id",
			      DB_ARGS(DB_TEXT(repo), DB_INT(alert_id), DB_INT(max)), &how, out,
			      out_n);
}

int db_alert_finding_is_checked(struct db *db, const struct db_alert *a,
				const struct db_alert_finding *f)
{
	int64_t n = 0;
	int r;

	if (!f->comparison_id)
		return 0;
	r = db_run_count(db, &n, "SELECT " DB_COMPARISON_CHECKED("?1", "?2", "?3", "?4", "?5",
								 "?6"),
			 DB_ARGS(DB_INT(f->comparison_id), DB_TEXT(a->host), DB_TEXT(a->case_name),
				 DB_TEXT(a->slower ? "slower" : "faster"), DB_TEXT(f->lo),
				 DB_TEXT(f->hi)), "checking an alert's finding");
	return r < 0 ? r : n != 0;
}
