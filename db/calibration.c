/*
 * The A/A comparisons as the hub shows them: per host and case, how many
 * were done, what verdicts they gave (a verdict other than unchanged or
 * unresolved on one build against itself is a false one) and which is the
 * newest, whose calibration the noise is read from. The selection a
 * comparison starts with is db_calibration_select, beside the comparisons.
 *
 * Every read is served by an index: hosts and cases are walked a distinct
 * value at a time (comparisons_host, comparisons_host_case), and the A/As
 * of one host and case are the equality prefix of comparisons_kind, newest
 * first, at most max_aa of them. So an answer costs the count of hosts and
 * cases plus max_aa rows per pair, whatever else the database holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

/* Hosts and cases looked at per pair answered, at most: a database whose
 * hosts have many cases without A/As cannot make one answer walk them all. */
#define WALK_PER_ROW 64

void db_calibration_info_release(struct db_calibration_info *c)
{
	if (!c)
		return;
	free(c->rule);
	free(c->fingerprint);
	memset(c, 0, sizeof(*c));
}

/* A text column into a buffer of len, when it is not NULL. */
struct name {
	char *out;
	size_t len;
	bool found;
};

static void name_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct name *x = elem;

	x->found = sqlite3_column_type(st, 0) != SQLITE_NULL;
	if (x->found)
		db_column_copy(x->out, x->len, st, 0);
}

/* The least text value of a column above after (NULL: the least of all),
 * within host when host is not NULL: 1 with out set, 0 when there is none. */
static int next_name(struct db *db, char *out, size_t len, const char *host, const char *after)
{
	struct name x = { out, len, false };
	int r;

	r = db_run_row(db, name_fill, &x, host ?
		       "SELECT min(case_name) FROM comparisons"
		       " WHERE host = ?1 AND case_name > coalesce(?2, '')" :
		       "SELECT min(host) FROM comparisons WHERE host > coalesce(?2, '')",
		       DB_ARGS(DB_TEXT(host), DB_TEXT(after)), "listing the calibrations");
	if (r == -ENOENT)
		return 0;
	return r < 0 ? r : x.found;
}

static void counts_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_calibration_info *c = elem;

	c->total = sqlite3_column_int64(st, 0);
	c->faster = sqlite3_column_int64(st, 1);
	c->slower = sqlite3_column_int64(st, 2);
	c->unchanged = sqlite3_column_int64(st, 3);
	c->unresolved = sqlite3_column_int64(st, 4);
	c->invalid = sqlite3_column_int64(st, 5);
	db_column_copy(c->newest_at, sizeof(c->newest_at), st, 6);
}

static void newest_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_calibration_info *c = elem;

	c->newest_id = sqlite3_column_int64(st, 0);
	c->rule = db_column_strdup(st, 1);
	c->fingerprint = db_column_strdup(st, 2);
	c->higher_better = !strcmp((const char *)sqlite3_column_text(st, 3), "higher");
	c->pairs = sqlite3_column_int(st, 4);
	c->max_pairs = sqlite3_column_int(st, 5);
	c->min_effect = sqlite3_column_double(st, 6);
}

/* Fills the counts and the newest A/A of one host and case into c (host
 * and case_name set); c->total is 0 when it has none. */
static int pair_info(struct db *db, struct db_calibration_info *c, size_t max_aa)
{
	int r;

	/* An aggregate: a row always comes back. */
	r = db_run_row(db, counts_fill, c, "SELECT count(*), total(verdict = 'faster'),"
		       " total(verdict = 'slower'), total(verdict = 'unchanged'),"
		       " total(verdict = 'unresolved'), total(verdict = 'invalid'), max(created_at)"
		       " FROM (SELECT verdict, created_at FROM comparisons WHERE host = ?"
		       "  AND case_name = ? AND kind = 'aa' AND state = 'done'"
		       "  ORDER BY id DESC LIMIT ?)",
		       DB_ARGS(DB_TEXT(c->host), DB_TEXT(c->case_name), DB_INT(max_aa)),
		       "counting A/A comparisons");
	if (r < 0 || c->total == 0)
		return r;
	r = db_run_row(db, newest_fill, c, "SELECT id, rule, fingerprint, better, pairs,"
		       " coalesce(max_pairs, pairs), min_effect FROM comparisons"
		       " WHERE host = ? AND case_name = ? AND kind = 'aa' AND state = 'done'"
		       " AND verdict != 'invalid' ORDER BY id DESC LIMIT 1",
		       DB_ARGS(DB_TEXT(c->host), DB_TEXT(c->case_name)),
		       "finding the newest A/A comparison");
	return r == -ENOENT ? 0 : r;
}

int db_calibration_infos(struct db *db, struct db_calibration_info **out, size_t *out_n,
			 const char *host, const char *case_name, size_t max, size_t max_aa)
{
	struct db_calibration_info *v = NULL;
	char h[64] = "", k[64] = "";
	size_t n = 0, walked = 0, walk_max = max * WALK_PER_ROW;
	bool more_hosts = true;
	int r = 0;

	*out = NULL;
	*out_n = 0;
	if (!max || !max_aa)
		return 0;
	v = xcalloc(max, sizeof(*v));
	while (more_hosts && n < max && walked < walk_max) {
		bool more_cases = true;

		if (host) {
			snprintf(h, sizeof(h), "%s", host);
			more_hosts = false;
		} else {
			r = next_name(db, h, sizeof(h), NULL, *h ? h : NULL);
			if (r <= 0)
				break;
		}
		k[0] = '\0';
		while (more_cases && n < max && walked++ < walk_max) {
			struct db_calibration_info *c = &v[n];

			if (case_name) {
				snprintf(k, sizeof(k), "%s", case_name);
				more_cases = false;
			} else {
				r = next_name(db, k, sizeof(k), h, *k ? k : NULL);
				if (r <= 0)
					break;
			}
			snprintf(c->host, sizeof(c->host), "%s", h);
			snprintf(c->case_name, sizeof(c->case_name), "%s", k);
			r = pair_info(db, c, max_aa);
			if (r < 0)
				break;
			if (c->total)
				n++;
			else
				db_calibration_info_release(c);
		}
		if (r < 0)
			break;
	}
	if (r < 0) {
		size_t i;

		for (i = 0; i <= n && i < max; i++)
			db_calibration_info_release(&v[i]);
		free(v);
		return r;
	}
	if (!n) {
		free(v);
		v = NULL;
	}
	*out = v;
	*out_n = n;
	return 0;
}
