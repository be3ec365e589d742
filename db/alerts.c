/*
 * Alerts (docs/history.md): a range of a branch found slower or faster on
 * one host and case, confirmed by a repeated comparison, bisected down to
 * the commits or ranges that carry it; and a person's triage of it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

static const char *const alert_states[] = { "confirming", "raised", "dismissed" };
static const char *const bisect_states[] = { "none", "running", "done", "budget" };
static const char *const triage_states[] = { "new", "acknowledged", "fixed", "false_alarm" };

const char *db_alert_state_name(enum db_alert_state s)
{
	return alert_states[s];
}

const char *db_alert_bisect_name(enum db_alert_bisect b)
{
	return bisect_states[b];
}

const char *db_alert_triage_name(enum db_alert_triage t)
{
	return triage_states[t];
}

int db_alert_triage_parse(enum db_alert_triage *out, const char *s)
{
	int i = db_word_index(triage_states, ARRAY_SIZE(triage_states), s);

	*out = DB_TRIAGE_NEW;
	if (i < 0)
		return -EINVAL;
	*out = (enum db_alert_triage)i;
	return 0;
}

void db_alert_release(struct db_alert *a)
{
	if (!a)
		return;
	free(a->detail);
	free(a->triage_by);
	a->detail = a->triage_by = NULL;
}

#define ALERT_COLUMNS "id, host, branch, case_name, found_by, lo_oid, hi_oid, commits," \
	" direction, gain, comparison_id, coalesce(confirm_id, 0), state, bisect, detail," \
	" triage, triage_by, coalesce(triage_at, ''), coalesce(fixed_by, 0), created_at," \
	" updated_at, seq, coalesce(origin_id, 0)"

/* The sequence number of this agent's next change of an alert: each change
 * is an update the hub is sent (docs/hub.md, "The alert record"). */
#define NEXT_ALERT_SEQ "(SELECT coalesce(max(seq), 0) + 1 FROM alerts WHERE host = '')"

static void alert_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_alert *a = elem;
	int i;

	a->id = sqlite3_column_int64(st, 0);
	db_column_copy(a->host, sizeof(a->host), st, 1);
	db_column_copy(a->branch, sizeof(a->branch), st, 2);
	db_column_copy(a->case_name, sizeof(a->case_name), st, 3);
	a->found_by_span = !strcmp((const char *)sqlite3_column_text(st, 4), "span");
	db_column_copy(a->lo, sizeof(a->lo), st, 5);
	db_column_copy(a->hi, sizeof(a->hi), st, 6);
	a->commits = sqlite3_column_int(st, 7);
	a->slower = !strcmp((const char *)sqlite3_column_text(st, 8), "slower");
	a->gain = db_column_real(st, 9);
	a->comparison_id = sqlite3_column_int64(st, 10);
	a->confirm_id = sqlite3_column_int64(st, 11);
	i = db_word_index(alert_states, ARRAY_SIZE(alert_states),
		       (const char *)sqlite3_column_text(st, 12));
	a->state = i < 0 ? DB_ALERT_CONFIRMING : (enum db_alert_state)i;
	i = db_word_index(bisect_states, ARRAY_SIZE(bisect_states),
		       (const char *)sqlite3_column_text(st, 13));
	a->bisect = i < 0 ? DB_BISECT_NONE : (enum db_alert_bisect)i;
	a->detail = db_column_strdup(st, 14);
	db_alert_triage_parse(&a->triage, (const char *)sqlite3_column_text(st, 15));
	a->triage_by = db_column_strdup(st, 16);
	db_column_copy(a->triage_at, sizeof(a->triage_at), st, 17);
	a->fixed_by = sqlite3_column_int64(st, 18);
	db_column_copy(a->created_at, sizeof(a->created_at), st, 19);
	db_column_copy(a->updated_at, sizeof(a->updated_at), st, 20);
	a->seq = sqlite3_column_int64(st, 21);
	a->origin_id = sqlite3_column_int64(st, 22);
}

static void alert_release(void *elem)
{
	db_alert_release(elem);
}

/* a's key, the arguments ?1 to ?6: host, branch, case, how it was found
 * and its range. */
#define KEY_ARGS(a) DB_TEXT((a)->host), DB_TEXT((a)->branch), DB_TEXT((a)->case_name), \
	DB_TEXT((a)->found_by_span ? "span" : "head"), DB_TEXT((a)->lo), DB_TEXT((a)->hi)

int db_alert_add(struct db *db, int64_t *out_id, const struct db_alert *a)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int rc, r;

	*out_id = 0;
	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT INTO alerts (host, branch, case_name, found_by, lo_oid,"
		       " hi_oid, commits, direction, gain, comparison_id, state, detail, created_at,"
		       " updated_at, seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'confirming',"
		       " ?11, ?12, ?12, " NEXT_ALERT_SEQ ") ON CONFLICT DO NOTHING RETURNING id");
	if (r < 0)
		return r;
	db_bind_args(st, DB_ARGS(KEY_ARGS(a)));
	sqlite3_bind_int(st, 7, a->commits);
	db_bind_text(st, 8, a->slower ? "slower" : "faster");
	db_bind_real(st, 9, a->gain);
	sqlite3_bind_int64(st, 10, a->comparison_id);
	db_bind_text(st, 11, a->detail);
	db_bind_text(st, 12, now);
	rc = db_step_returning(st, out_id);
	r = rc != SQLITE_DONE ? db_fail(db, rc, "storing an alert") : *out_id ? 1 : 0;
	db_finish(st);
	if (r != 0)
		return r;
	/* There already: its id. */
	return db_run_count(db, out_id, "SELECT id FROM alerts WHERE host = ?1 AND branch = ?2 AND"
			    " case_name = ?3 AND found_by = ?4 AND lo_oid = ?5 AND hi_oid = ?6",
			    DB_ARGS(KEY_ARGS(a)), "finding an alert");
}

int db_alert_load(struct db *db, struct db_alert *out, int64_t id)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, alert_fill, out, "SELECT " ALERT_COLUMNS " FROM alerts WHERE id = ?",
			  DB_ARGS(DB_INT(id)), "reading an alert");
}

int db_alert_lookup(struct db *db, struct db_alert *out, const struct db_alert *key)
{
	const struct db_arg args[] = { KEY_ARGS(key) };

	memset(out, 0, sizeof(*out));
	return db_run_row(db, alert_fill, out, "SELECT " ALERT_COLUMNS " FROM alerts WHERE"
			  " host = ?1 AND branch = ?2 AND case_name = ?3 AND found_by = ?4 AND"
			  " lo_oid = ?5 AND hi_oid = ?6", args, ARRAY_SIZE(args), "finding an alert");
}

int db_alerts_list(struct db *db, struct db_alert **out, size_t *out_n, bool open_only,
		   size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = alert_fill, .release = alert_release,
		.doing = "listing alerts",
	};

	/* Open: what this agent still has to do (a confirmation, a bisection). */
	return db_rows_select(db, open_only ?
			      "SELECT " ALERT_COLUMNS " FROM alerts WHERE host = '' AND"
			      " (state = 'confirming' OR (state = 'raised' AND bisect = 'running'))"
			      " ORDER BY id LIMIT ?" :
			      "SELECT " ALERT_COLUMNS " FROM alerts ORDER BY id LIMIT ?",
			      DB_ARGS(DB_INT(max)), &how, out, out_n);
}

int db_alert_confirmed(struct db *db, int64_t id, bool agrees, int64_t confirm_id,
		       enum db_alert_bisect bisect, const char *detail)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "UPDATE alerts SET state = ?1, confirm_id = nullif(?2, 0),"
		      " bisect = ?3, detail = ?4, updated_at = ?5, seq = " NEXT_ALERT_SEQ
		      " WHERE id = ?6 AND state = 'confirming'",
		      DB_ARGS(DB_TEXT(agrees ? "raised" : "dismissed"), DB_INT(confirm_id),
			      DB_TEXT(db_alert_bisect_name(bisect)), DB_TEXT(detail), DB_TEXT(now),
			      DB_INT(id)), "recording an alert's confirmation");
}

/* ---- bisection ---- */

void db_bisect_step_release(struct db_bisect_step *s)
{
	if (!s)
		return;
	free(s->detail);
	s->detail = NULL;
}

static void step_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_bisect_step *s = elem;

	s->alert_id = sqlite3_column_int64(st, 0);
	s->step = sqlite3_column_int(st, 1);
	db_column_copy(s->lo, sizeof(s->lo), st, 2);
	db_column_copy(s->hi, sizeof(s->hi), st, 3);
	db_column_copy(s->mid, sizeof(s->mid), st, 4);
	s->lo_job = sqlite3_column_int64(st, 5);
	s->hi_job = sqlite3_column_int64(st, 6);
	db_column_copy(s->outcome, sizeof(s->outcome), st, 7);
	s->detail = db_column_strdup(st, 8);
}

static void step_release(void *elem)
{
	db_bisect_step_release(elem);
}

int db_bisect_steps(struct db *db, struct db_bisect_step **out, size_t *out_n, int64_t alert_id)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = DB_BISECT_STEPS_MAX, .fill = step_fill,
		.release = step_release, .doing = "loading a bisection's steps",
	};

	return db_rows_select(db, "SELECT alert_id, step, lo_oid, hi_oid, mid_oid, lo_job, hi_job,"
			      " coalesce(outcome, ''), detail FROM bisect_steps WHERE alert_id = ?"
			      " ORDER BY step",
			      DB_ARGS(DB_INT(alert_id)), &how, out, out_n);
}

int db_bisect_step_add(struct db *db, const struct db_bisect_step *s)
{
	return db_run(db, "INSERT INTO bisect_steps (alert_id, step, lo_oid, hi_oid, mid_oid,"
		      " lo_job, hi_job) VALUES (?, ?, ?, ?, ?, ?, ?)",
		      DB_ARGS(DB_INT(s->alert_id), DB_INT(s->step), DB_TEXT(s->lo), DB_TEXT(s->hi),
			      DB_TEXT(s->mid), DB_INT(s->lo_job), DB_INT(s->hi_job)),
		      "storing a bisection step");
}

int db_bisect_step_set(struct db *db, int64_t alert_id, int step, const char *outcome,
		       const char *detail)
{
	return db_run(db, "UPDATE bisect_steps SET outcome = ?, detail = ?"
		      " WHERE alert_id = ? AND step = ?",
		      DB_ARGS(DB_TEXT(outcome), DB_TEXT(detail), DB_INT(alert_id), DB_INT(step)),
		      "recording a bisection step's outcome");
}

static void real_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	*(double *)elem = sqlite3_column_double(st, 0);
}

/* The sum is never NULL: a row always comes back. */
int db_bisect_seconds(struct db *db, double *out, int64_t alert_id)
{
	*out = 0;
	return db_run_row(db, real_fill, out, "SELECT coalesce(sum((julianday(coalesce(finished_at,"
			  " strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))) - julianday(started_at))"
			  " * 86400), 0) FROM jobs WHERE host = '' AND kind = 'bisect'"
			  " AND alert_id = ? AND started_at IS NOT NULL", DB_ARGS(DB_INT(alert_id)),
			  "adding up a bisection's time");
}

void db_alert_finding_release(struct db_alert_finding *f)
{
	if (!f)
		return;
	free(f->note);
	f->note = NULL;
}

/* Replaces alert_id's findings with f (inside the caller's transaction). */
static int findings_put(struct db *db, int64_t alert_id, const struct db_alert_finding *f,
			size_t n)
{
	size_t i;
	int r;

	r = db_run(db, "DELETE FROM alert_findings WHERE alert_id = ?", DB_ARGS(DB_INT(alert_id)),
		   "replacing an alert's findings");
	for (i = 0; r == 0 && i < n; i++)
		r = db_run(db, "INSERT INTO alert_findings (alert_id, idx, what, lo_oid, hi_oid,"
			   " commits, gain, comparison_id, note)"
			   " VALUES (?, ?, ?, ?, ?, ?, ?, nullif(?, 0), ?)",
			   DB_ARGS(DB_INT(alert_id), DB_INT(i),
				   DB_TEXT(f[i].commit ? "commit" : "range"), DB_TEXT(f[i].lo),
				   DB_TEXT(f[i].hi), DB_INT(f[i].commits),
				   DB_REAL(f[i].has_gain ? f[i].gain : NAN),
				   DB_INT(f[i].comparison_id), DB_TEXT(f[i].note)),
			   "storing an alert's finding");
	return r;
}

int db_alert_finish(struct db *db, int64_t alert_id, enum db_alert_bisect bisect,
		    const struct db_alert_finding *f, size_t n, const char *detail)
{
	char now[TIME_ISO_LEN];
	int r;

	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	r = findings_put(db, alert_id, f, n);
	if (r == 0)
		r = db_run(db, "UPDATE alerts SET bisect = ?, detail = coalesce(?, detail),"
			   " updated_at = ?, seq = " NEXT_ALERT_SEQ " WHERE id = ?",
			   DB_ARGS(DB_TEXT(db_alert_bisect_name(bisect)), DB_TEXT(detail),
				   DB_TEXT(now), DB_INT(alert_id)), "recording an alert's bisection");
	if (r == 0)
		return db_commit(db);
	db_rollback(db);
	return r;
}

static void finding_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_alert_finding *f = elem;

	f->commit = !strcmp((const char *)sqlite3_column_text(st, 0), "commit");
	db_column_copy(f->lo, sizeof(f->lo), st, 1);
	db_column_copy(f->hi, sizeof(f->hi), st, 2);
	f->commits = sqlite3_column_int(st, 3);
	f->has_gain = sqlite3_column_type(st, 4) != SQLITE_NULL;
	f->gain = db_column_real(st, 4);
	f->comparison_id = sqlite3_column_int64(st, 5);
	f->note = db_column_strdup(st, 6);
}

static void finding_release(void *elem)
{
	db_alert_finding_release(elem);
}

int db_alert_findings(struct db *db, struct db_alert_finding **out, size_t *out_n,
		      int64_t alert_id)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = DB_BISECT_STEPS_MAX, .fill = finding_fill,
		.release = finding_release, .doing = "loading an alert's findings",
	};

	return db_rows_select(db, "SELECT what, lo_oid, hi_oid, commits, gain,"
			      " coalesce(comparison_id, 0), note FROM alert_findings WHERE alert_id = ?"
			      " ORDER BY idx",
			      DB_ARGS(DB_INT(alert_id)), &how, out, out_n);
}

/* ---- the agent's push of its alerts, and the hub's ingest of them ---- */

int db_alerts_unpushed(struct db *db, struct db_alert **out, size_t *out_n, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = alert_fill, .release = alert_release,
		.doing = "listing the alerts not yet pushed",
	};

	return db_rows_select(db, "SELECT " ALERT_COLUMNS DB_ALERTS_UNSENT " ORDER BY a.seq LIMIT ?",
			      DB_ARGS(DB_INT(max)), &how, out, out_n);
}

int db_alert_pushed(struct db *db, int64_t id, int64_t seq, int status, const char *message)
{
	return db_pushed_put(db, "INSERT OR REPLACE INTO pushed_alerts (alert_id, seq, status,"
			     " message, pushed_at) VALUES (?, ?, ?, ?, ?)", id, seq, status, message,
			     "recording an alert pushed");
}

/* Binds what an update of a host's alert sets, the same for an insert and
 * an update: ?1 .. ?14. */
static void bind_update(sqlite3_stmt *st, const struct db_alert *a, const char *sha256)
{
	db_bind_text(st, 1, a->lo);
	db_bind_text(st, 2, a->hi);
	sqlite3_bind_int(st, 3, a->commits);
	db_bind_text(st, 4, a->slower ? "slower" : "faster");
	db_bind_real(st, 5, a->gain);
	sqlite3_bind_int64(st, 6, a->comparison_id);
	sqlite3_bind_int64(st, 7, a->confirm_id);
	db_bind_text(st, 8, db_alert_state_name(a->state));
	db_bind_text(st, 9, db_alert_bisect_name(a->bisect));
	db_bind_text(st, 10, a->detail);
	db_bind_text(st, 11, a->created_at);
	db_bind_text(st, 12, a->updated_at);
	sqlite3_bind_int64(st, 13, a->seq);
	db_bind_text(st, 14, sha256);
}

static int alert_insert(struct db *db, const struct db_alert *a, const char *sha256,
			int64_t *out_id)
{
	sqlite3_stmt *st;
	int rc, r;

	r = db_prepare(db, &st, "INSERT INTO alerts (lo_oid, hi_oid, commits, direction, gain,"
		       " comparison_id, confirm_id, state, bisect, detail, created_at, updated_at,"
		       " seq, sha256, host, origin_id, branch, case_name, found_by) VALUES (?1, ?2,"
		       " ?3, ?4, ?5, ?6, nullif(?7, 0), ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
		       " ?17, ?18, ?19) RETURNING id");
	if (r < 0)
		return r;
	bind_update(st, a, sha256);
	db_bind_text(st, 15, a->host);
	sqlite3_bind_int64(st, 16, a->origin_id);
	db_bind_text(st, 17, a->branch);
	db_bind_text(st, 18, a->case_name);
	db_bind_text(st, 19, a->found_by_span ? "span" : "head");
	rc = db_step_returning(st, out_id);
	if (rc != SQLITE_DONE)
		r = (rc & 0xff) == SQLITE_CONSTRAINT ?
			err_set(-EEXIST, "host '%s' has another alert (not id %lld) of %s, case "
				"'%s', %.12s..%.12s", a->host, (long long)a->origin_id, a->branch,
				a->case_name, a->lo, a->hi) :
			db_fail(db, rc, "storing a host's alert");
	db_finish(st);
	return r;
}

static int alert_update(struct db *db, const struct db_alert *a, const char *sha256, int64_t id)
{
	sqlite3_stmt *st;
	int r;

	/* Triage is the hub's: an update never sets it. */
	r = db_prepare(db, &st, "UPDATE alerts SET lo_oid = ?1, hi_oid = ?2, commits = ?3,"
		       " direction = ?4, gain = ?5, comparison_id = ?6, confirm_id = nullif(?7, 0),"
		       " state = ?8, bisect = ?9, detail = ?10, created_at = ?11, updated_at = ?12,"
		       " seq = ?13, sha256 = ?14 WHERE id = ?15");
	if (r < 0)
		return r;
	bind_update(st, a, sha256);
	sqlite3_bind_int64(st, 15, id);
	return db_step(db, st, "updating a host's alert");
}

/* A host's alert as the hub holds it, with the sha256 of its last update. */
struct held_alert {
	struct db_alert a;
	char *sha256;
};

static void held_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct held_alert *h = elem;

	alert_fill(&h->a, st, NULL);
	h->sha256 = db_column_strdup(st, 23);
}

int db_alert_ingest(struct db *db, const struct db_alert *a, const struct db_alert_finding *f,
		    size_t n, const char *sha256, int64_t *out_id, bool *out_stored)
{
	struct held_alert held;
	struct db_alert *old = &held.a;
	char *old_sha;
	int64_t id = 0;
	int r;

	*out_id = 0;
	*out_stored = false;
	memset(&held, 0, sizeof(held));
	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_run_row(db, held_fill, &held, "SELECT " ALERT_COLUMNS ", coalesce(sha256, '')"
		       " FROM alerts WHERE host = ? AND origin_id = ?",
		       DB_ARGS(DB_TEXT(a->host), DB_INT(a->origin_id)), "finding a host's alert");
	old_sha = held.sha256;
	if (r == -ENOENT)
		r = 0;
	if (r < 0)
		goto out;
	if (!old->id) {
		r = alert_insert(db, a, sha256, &id);
		if (r == 0)
			r = findings_put(db, id, f, n);
		*out_stored = r == 0;
		goto out;
	}
	id = old->id;
	if (strcmp(old->branch, a->branch) || strcmp(old->case_name, a->case_name) ||
	    old->found_by_span != a->found_by_span) {
		r = err_set(-EEXIST, "alert %lld of host '%s' is of %s, case '%s', found by %s "
			    "here; the update says %s, case '%s', found by %s",
			    (long long)a->origin_id, a->host, old->branch, old->case_name,
			    old->found_by_span ? "span" : "head", a->branch, a->case_name,
			    a->found_by_span ? "span" : "head");
	} else if (a->seq == old->seq && strcmp(old_sha ? old_sha : "", sha256)) {
		r = err_set(-EEXIST, "update %lld of alert %lld of host '%s' came before with "
			    "sha256 %.12s, now with %.12s", (long long)a->seq,
			    (long long)a->origin_id, a->host, old_sha ? old_sha : "", sha256);
	} else if (a->seq > old->seq) {
		r = alert_update(db, a, sha256, id);
		if (r == 0)
			r = findings_put(db, id, f, n);
		*out_stored = r == 0;
	}
out:
	free(old_sha);
	db_alert_release(old);
	if (r == 0) {
		*out_id = id;
		return db_commit(db);
	}
	*out_stored = false;
	db_rollback(db);
	return r;
}

/* The comparison fixed_by, as an alert's triage "fixed" names it, with
 * the creation time of the alert's own comparison. */
struct fixer {
	char host[64], case_name[64], state[16], verdict[16], made[32], own_made[32];
};

static void fixer_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct fixer *x = elem;

	db_column_copy(x->host, sizeof(x->host), st, 0);
	db_column_copy(x->case_name, sizeof(x->case_name), st, 1);
	db_column_copy(x->state, sizeof(x->state), st, 2);
	db_column_copy(x->verdict, sizeof(x->verdict), st, 3);
	db_column_copy(x->made, sizeof(x->made), st, 4);
	db_column_copy(x->own_made, sizeof(x->own_made), st, 5);
}

/* 0 when comparison fixed_by may mark alert a (id) fixed: a later done
 * comparison of its host and case that says the opposite; else -EINVAL
 * saying why, or the error reading it. */
static int fixer_check(struct db *db, const struct db_alert *a, int64_t id, int64_t fixed_by)
{
	struct fixer x;
	int r;

	memset(&x, 0, sizeof(x));
	r = db_run_row(db, fixer_fill, &x, "SELECT c.host, c.case_name, c.state,"
		       " coalesce(c.verdict, ''), c.created_at,"
		       " (SELECT created_at FROM comparisons WHERE id = ?2)"
		       " FROM comparisons c WHERE c.id = ?1",
		       DB_ARGS(DB_INT(fixed_by), DB_INT(a->comparison_id)),
		       "reading the comparison that fixed an alert");
	if (r == -ENOENT)
		return err_set(-EINVAL, "fixed_by: there is no comparison %lld", (long long)fixed_by);
	if (r < 0)
		return r;
	if (strcmp(x.host, a->host) || strcmp(x.case_name, a->case_name))
		return err_set(-EINVAL, "fixed_by: comparison %lld is of host '%s', case '%s'; "
			       "alert %lld is of host '%s', case '%s'", (long long)fixed_by,
			       x.host, x.case_name, (long long)id, a->host, a->case_name);
	if (strcmp(x.state, "done"))
		return err_set(-EINVAL, "fixed_by: comparison %lld is %s, not done",
			       (long long)fixed_by, x.state);
	if (strcmp(x.made, x.own_made) <= 0)
		return err_set(-EINVAL, "fixed_by: comparison %lld was made at %s, not after "
			       "the alert's comparison %lld (%s)", (long long)fixed_by, x.made,
			       (long long)a->comparison_id, x.own_made);
	if (strcmp(x.verdict, a->slower ? "faster" : "slower"))
		return err_set(-EINVAL, "fixed_by: comparison %lld says %s; undoing a %s alert "
			       "takes one that says %s", (long long)fixed_by,
			       *x.verdict ? x.verdict : "nothing", a->slower ? "slower" : "faster",
			       a->slower ? "faster" : "slower");
	return 0;
}

int db_alert_triage_set(struct db *db, int64_t id, enum db_alert_triage t, const char *by,
			int64_t fixed_by)
{
	char now[TIME_ISO_LEN];
	struct db_alert a;
	int r;

	r = db_alert_get(db, &a, id);
	if (r < 0)
		return r;
	if (a.state != DB_ALERT_RAISED) {
		r = err_set(-EINVAL, "alert %lld is %s: only a raised alert is triaged",
			    (long long)id, db_alert_state_name(a.state));
		goto out;
	}
	if (t != DB_TRIAGE_FIXED && fixed_by) {
		r = err_set(-EINVAL, "fixed_by: only an alert marked fixed names a comparison");
		goto out;
	}
	if (t == DB_TRIAGE_FIXED && !fixed_by) {
		r = err_set(-EINVAL, "fixed_by: an alert marked fixed names the later comparison "
			    "that undid it");
		goto out;
	}
	if (t == DB_TRIAGE_FIXED) {
		r = fixer_check(db, &a, id, fixed_by);
		if (r < 0)
			goto out;
	}
	time_now_iso(now);
	r = db_run(db, "UPDATE alerts SET triage = ?1, triage_by = ?2, triage_at = ?3,"
		   " fixed_by = nullif(?4, 0) WHERE id = ?5",
		   DB_ARGS(DB_TEXT(db_alert_triage_name(t)), DB_TEXT(by), DB_TEXT(now),
			   DB_INT(fixed_by), DB_INT(id)), "recording an alert's triage");
out:
	db_alert_release(&a);
	return r;
}

/* An agent's own alerts (host '') are named by their comparison's host. */
#define ALERT_NAMED_COLUMNS "a.id, coalesce(nullif(a.host, ''), c.host), a.branch," \
	" a.case_name, a.found_by, a.lo_oid, a.hi_oid, a.commits, a.direction, a.gain," \
	" a.comparison_id, coalesce(a.confirm_id, 0), a.state, a.bisect, a.detail, a.triage," \
	" a.triage_by, coalesce(a.triage_at, ''), coalesce(a.fixed_by, 0), a.created_at," \
	" a.updated_at, a.seq, coalesce(a.origin_id, 0)" \
	" FROM alerts a JOIN comparisons c ON c.id = a.comparison_id"

int db_alerts_find(struct db *db, struct db_alert **out, size_t *out_n,
		   const struct db_alert_filter *f, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = alert_fill, .release = alert_release,
		.doing = "listing alerts",
	};

	return db_rows_select(db, "SELECT " ALERT_NAMED_COLUMNS
			      " WHERE (?1 IS NULL OR coalesce(nullif(a.host, ''), c.host) = ?1)"
			      " AND (?2 IS NULL OR a.case_name = ?2) AND (?3 IS NULL OR a.state = ?3)"
			      " AND (?4 IS NULL OR a.triage = ?4) ORDER BY a.id DESC LIMIT ?5",
			      DB_ARGS(DB_TEXT(f->host && *f->host ? f->host : NULL),
				      DB_TEXT(f->case_name && *f->case_name ? f->case_name : NULL),
				      DB_TEXT(f->state && *f->state ? f->state : NULL),
				      DB_TEXT(f->triage && *f->triage ? f->triage : NULL),
				      DB_INT(max)), &how, out, out_n);
}

int db_alert_get(struct db *db, struct db_alert *out, int64_t id)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = db_run_row(db, alert_fill, out, "SELECT " ALERT_NAMED_COLUMNS " WHERE a.id = ?",
		       DB_ARGS(DB_INT(id)), "reading an alert");
	return r == -ENOENT ? err_set(-ENOENT, "there is no alert %lld", (long long)id) : r;
}

static void triage_count_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_alert_triage_count *t = elem;

	db_column_copy(t->host, sizeof(t->host), st, 0);
	t->raised = sqlite3_column_int64(st, 1);
	t->triaged = sqlite3_column_int64(st, 2);
	t->false_alarms = sqlite3_column_int64(st, 3);
}

int db_alert_triage_counts(struct db *db, struct db_alert_triage_count **out, size_t *out_n,
			   size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = triage_count_fill,
		.doing = "counting alerts' triage",
	};

	return db_rows_select(db, "SELECT h, count(*), sum(triage <> 'new'),"
			      " sum(triage = 'false_alarm') FROM (SELECT coalesce(nullif(a.host, ''),"
			      " c.host) AS h, a.triage FROM alerts a JOIN comparisons c"
			      " ON c.id = a.comparison_id WHERE a.state = 'raised') GROUP BY h ORDER BY h"
			      " LIMIT ?",
			      DB_ARGS(DB_INT(max)), &how, out, out_n);
}
