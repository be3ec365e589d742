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

static int word_index(const char *const *words, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s && !strcmp(s, words[i]))
			return (int)i;
	return -1;
}

int db_alert_triage_parse(enum db_alert_triage *out, const char *s)
{
	int i = word_index(triage_states, ARRAY_SIZE(triage_states), s);

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
	" updated_at"

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
	i = word_index(alert_states, ARRAY_SIZE(alert_states),
		       (const char *)sqlite3_column_text(st, 12));
	a->state = i < 0 ? DB_ALERT_CONFIRMING : (enum db_alert_state)i;
	i = word_index(bisect_states, ARRAY_SIZE(bisect_states),
		       (const char *)sqlite3_column_text(st, 13));
	a->bisect = i < 0 ? DB_BISECT_NONE : (enum db_alert_bisect)i;
	a->detail = db_column_strdup(st, 14);
	db_alert_triage_parse(&a->triage, (const char *)sqlite3_column_text(st, 15));
	a->triage_by = db_column_strdup(st, 16);
	db_column_copy(a->triage_at, sizeof(a->triage_at), st, 17);
	a->fixed_by = sqlite3_column_int64(st, 18);
	db_column_copy(a->created_at, sizeof(a->created_at), st, 19);
	db_column_copy(a->updated_at, sizeof(a->updated_at), st, 20);
}

static void alert_release(void *elem)
{
	db_alert_release(elem);
}

int db_alert_add(struct db *db, int64_t *out_id, const struct db_alert *a)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int rc, r;

	*out_id = 0;
	time_now_iso(now);
	r = db_prepare(db, &st, "INSERT INTO alerts (host, branch, case_name, found_by, lo_oid,"
		       " hi_oid, commits, direction, gain, comparison_id, state, detail, created_at,"
		       " updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'confirming',"
		       " ?11, ?12, ?12) ON CONFLICT DO NOTHING RETURNING id");
	if (r < 0)
		return r;
	db_bind_text(st, 1, a->host);
	db_bind_text(st, 2, a->branch);
	db_bind_text(st, 3, a->case_name);
	db_bind_text(st, 4, a->found_by_span ? "span" : "head");
	db_bind_text(st, 5, a->lo);
	db_bind_text(st, 6, a->hi);
	sqlite3_bind_int(st, 7, a->commits);
	db_bind_text(st, 8, a->slower ? "slower" : "faster");
	db_bind_real(st, 9, a->gain);
	sqlite3_bind_int64(st, 10, a->comparison_id);
	db_bind_text(st, 11, a->detail);
	db_bind_text(st, 12, now);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out_id = sqlite3_column_int64(st, 0);
		r = 1;
		rc = sqlite3_step(st);
	}
	if (rc != SQLITE_DONE)
		r = db_fail(db, rc, "storing an alert");
	db_finish(st);
	if (r != 0)
		return r;
	/* There already: its id. */
	r = db_prepare(db, &st, "SELECT id FROM alerts WHERE host = ?1 AND branch = ?2 AND"
		       " case_name = ?3 AND found_by = ?4 AND lo_oid = ?5 AND hi_oid = ?6");
	if (r < 0)
		return r;
	db_bind_text(st, 1, a->host);
	db_bind_text(st, 2, a->branch);
	db_bind_text(st, 3, a->case_name);
	db_bind_text(st, 4, a->found_by_span ? "span" : "head");
	db_bind_text(st, 5, a->lo);
	db_bind_text(st, 6, a->hi);
	return db_step_count(db, st, out_id, "finding an alert");
}

int db_alert_load(struct db *db, struct db_alert *out, int64_t id)
{
	sqlite3_stmt *st;
	int rc, r;

	memset(out, 0, sizeof(*out));
	r = db_prepare(db, &st, "SELECT " ALERT_COLUMNS " FROM alerts WHERE id = ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		alert_fill(out, st, NULL);
	else
		r = rc == SQLITE_DONE ? -ENOENT : db_fail(db, rc, "reading an alert");
	db_finish(st);
	return r;
}

int db_alerts_list(struct db *db, struct db_alert **out, size_t *out_n, bool open_only,
		   size_t max)
{
	const struct db_rows how = {
		.size = sizeof(**out), .max = max, .fill = alert_fill, .release = alert_release,
		.doing = "listing alerts",
	};
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	*out = NULL;
	*out_n = 0;
	/* Open: what this agent still has to do (a confirmation, a bisection). */
	if (open_only)
		r = db_prepare(db, &st, "SELECT " ALERT_COLUMNS " FROM alerts WHERE host = ''"
			       " AND (state = 'confirming' OR (state = 'raised' AND bisect = 'running'))"
			       " ORDER BY id LIMIT ?");
	else
		r = db_prepare(db, &st, "SELECT " ALERT_COLUMNS " FROM alerts ORDER BY id LIMIT ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}

int db_alert_confirmed(struct db *db, int64_t id, bool agrees, int64_t confirm_id,
		       enum db_alert_bisect bisect, const char *detail)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	int r;

	time_now_iso(now);
	r = db_prepare(db, &st, "UPDATE alerts SET state = ?1, confirm_id = nullif(?2, 0),"
		       " bisect = ?3, detail = ?4, updated_at = ?5 WHERE id = ?6"
		       " AND state = 'confirming'");
	if (r < 0)
		return r;
	db_bind_text(st, 1, agrees ? "raised" : "dismissed");
	sqlite3_bind_int64(st, 2, confirm_id);
	db_bind_text(st, 3, db_alert_bisect_name(bisect));
	db_bind_text(st, 4, detail);
	db_bind_text(st, 5, now);
	sqlite3_bind_int64(st, 6, id);
	return db_step(db, st, "recording an alert's confirmation");
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
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT alert_id, step, lo_oid, hi_oid, mid_oid, lo_job, hi_job,"
		       " coalesce(outcome, ''), detail FROM bisect_steps WHERE alert_id = ?"
		       " ORDER BY step");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, alert_id);
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}

int db_bisect_step_add(struct db *db, const struct db_bisect_step *s)
{
	sqlite3_stmt *st;
	int r;

	r = db_prepare(db, &st, "INSERT INTO bisect_steps (alert_id, step, lo_oid, hi_oid, mid_oid,"
		       " lo_job, hi_job) VALUES (?, ?, ?, ?, ?, ?, ?)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, s->alert_id);
	sqlite3_bind_int(st, 2, s->step);
	db_bind_text(st, 3, s->lo);
	db_bind_text(st, 4, s->hi);
	db_bind_text(st, 5, s->mid);
	sqlite3_bind_int64(st, 6, s->lo_job);
	sqlite3_bind_int64(st, 7, s->hi_job);
	return db_step(db, st, "storing a bisection step");
}

int db_bisect_step_set(struct db *db, int64_t alert_id, int step, const char *outcome,
		       const char *detail)
{
	sqlite3_stmt *st;
	int r;

	r = db_prepare(db, &st, "UPDATE bisect_steps SET outcome = ?, detail = ?"
		       " WHERE alert_id = ? AND step = ?");
	if (r < 0)
		return r;
	db_bind_text(st, 1, outcome);
	db_bind_text(st, 2, detail);
	sqlite3_bind_int64(st, 3, alert_id);
	sqlite3_bind_int(st, 4, step);
	return db_step(db, st, "recording a bisection step's outcome");
}

int db_bisect_seconds(struct db *db, double *out, int64_t alert_id)
{
	sqlite3_stmt *st;
	int rc, r;

	*out = 0;
	r = db_prepare(db, &st, "SELECT coalesce(sum((julianday(coalesce(finished_at,"
		       " strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))) - julianday(started_at)) * 86400), 0)"
		       " FROM jobs WHERE host = '' AND kind = 'bisect' AND alert_id = ?"
		       " AND started_at IS NOT NULL");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, alert_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_double(st, 0);
	else
		r = db_fail(db, rc, "adding up a bisection's time");
	db_finish(st);
	return r;
}

void db_alert_finding_release(struct db_alert_finding *f)
{
	if (!f)
		return;
	free(f->note);
	f->note = NULL;
}

int db_alert_finish(struct db *db, int64_t alert_id, enum db_alert_bisect bisect,
		    const struct db_alert_finding *f, size_t n, const char *detail)
{
	char now[TIME_ISO_LEN];
	sqlite3_stmt *st;
	size_t i;
	int r;

	time_now_iso(now);
	r = db_begin(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st, "DELETE FROM alert_findings WHERE alert_id = ?");
	if (r == 0) {
		sqlite3_bind_int64(st, 1, alert_id);
		r = db_step(db, st, "replacing an alert's findings");
	}
	for (i = 0; r == 0 && i < n; i++) {
		r = db_prepare(db, &st, "INSERT INTO alert_findings (alert_id, idx, what, lo_oid,"
			       " hi_oid, commits, gain, comparison_id, note)"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, nullif(?, 0), ?)");
		if (r < 0)
			break;
		sqlite3_bind_int64(st, 1, alert_id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
		db_bind_text(st, 3, f[i].commit ? "commit" : "range");
		db_bind_text(st, 4, f[i].lo);
		db_bind_text(st, 5, f[i].hi);
		sqlite3_bind_int(st, 6, f[i].commits);
		db_bind_real(st, 7, f[i].has_gain ? f[i].gain : NAN);
		sqlite3_bind_int64(st, 8, f[i].comparison_id);
		db_bind_text(st, 9, f[i].note);
		r = db_step(db, st, "storing an alert's finding");
	}
	if (r == 0)
		r = db_prepare(db, &st, "UPDATE alerts SET bisect = ?, detail = coalesce(?, detail),"
			       " updated_at = ? WHERE id = ?");
	if (r == 0) {
		db_bind_text(st, 1, db_alert_bisect_name(bisect));
		db_bind_text(st, 2, detail);
		db_bind_text(st, 3, now);
		sqlite3_bind_int64(st, 4, alert_id);
		r = db_step(db, st, "recording an alert's bisection");
	}
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
	sqlite3_stmt *st = NULL;
	void *v = NULL;
	int r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT what, lo_oid, hi_oid, commits, gain,"
		       " coalesce(comparison_id, 0), note FROM alert_findings WHERE alert_id = ?"
		       " ORDER BY idx");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, alert_id);
	r = db_rows_load(db, st, &how, &v, out_n);
	*out = v;
	return r;
}
