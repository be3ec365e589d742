/*
 * hub_holds: at the hub, the commits each host says it holds (the holds
 * its newest heartbeat lists), kept after the host releases them, and the
 * maintainer's green light ("/perfd greenlight HOST") that asks the host
 * to release one (docs/hub.md, "Held commits at the hub").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

void db_hub_hold_release(struct db_hub_hold *h)
{
	if (!h)
		return;
	free(h->text);
	free(h->kind);
	h->text = h->kind = NULL;
}

#define HUB_HOLD_COLUMNS "h.host, h.origin_id, h.why, h.step, coalesce(h.commit_oid, ''),"\
	" coalesce(h.tree_oid, ''), h.since, h.text, h.first_seen, h.in_force,"\
	" coalesce(h.greenlit_by, ''), coalesce(h.greenlit_at, ''), coalesce(h.greenlit_pr, 0),"\
	" s.kind"

static void hub_hold_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_hub_hold *h = elem;

	(void)arg;
	db_column_copy(h->host, sizeof(h->host), st, 0);
	h->origin_id = sqlite3_column_int64(st, 1);
	/* The schema's CHECKs keep both among the words. */
	h->why = db_word_index(db_hold_why_words, DB_HOLD_GATE + 1,
			       (const char *)sqlite3_column_text(st, 2));
	h->step = db_word_index(db_hold_step_words, DB_HOLD_JOB + 1,
				(const char *)sqlite3_column_text(st, 3));
	db_column_copy(h->commit, sizeof(h->commit), st, 4);
	db_column_copy(h->tree, sizeof(h->tree), st, 5);
	db_column_copy(h->since, sizeof(h->since), st, 6);
	h->text = db_column_strdup(st, 7);
	db_column_copy(h->first_seen, sizeof(h->first_seen), st, 8);
	h->in_force = sqlite3_column_int(st, 9) != 0;
	db_column_copy(h->greenlit_by, sizeof(h->greenlit_by), st, 10);
	db_column_copy(h->greenlit_at, sizeof(h->greenlit_at), st, 11);
	h->greenlit_pr = sqlite3_column_int(st, 12);
	h->kind = db_column_strdup(st, 13);
}

static void hub_hold_free(void *elem)
{
	db_hub_hold_release(elem);
}

static void text_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	(void)arg;
	*(char **)elem = db_column_strdup(st, 0);
}

/* The ids of host's holds in force, as one text ("" for none). */
static int in_force_ids(struct db *db, char **out, const char *host)
{
	*out = NULL;
	return db_run_row(db, text_fill, out, "SELECT coalesce(group_concat(origin_id), '')"
			  " FROM (SELECT origin_id FROM hub_holds WHERE host = ?1 AND in_force"
			  " ORDER BY origin_id)", DB_ARGS(DB_TEXT(host)), "listing a host's holds");
}

int db_hub_holds_set(struct db *db, const char *host, const struct db_hub_hold *hs, size_t n,
		     bool *out_changed)
{
	char now[TIME_ISO_LEN], *before = NULL, *after = NULL;
	size_t i;
	int r;

	*out_changed = false;
	time_now_iso(now);
	r = db_begin(db);
	if (r == 0)
		r = in_force_ids(db, &before, host);
	/* Those the host no longer lists it released: kept, not in force. */
	if (r == 0)
		r = db_run(db, "UPDATE hub_holds SET in_force = 0 WHERE host = ?1 AND in_force",
			   DB_ARGS(DB_TEXT(host)), "recording a host's holds");
	for (i = 0; r == 0 && i < n; i++) {
		const struct db_hub_hold *h = &hs[i];

		r = db_run(db, "INSERT INTO hub_holds (host, origin_id, why, step, commit_oid,"
			   " tree_oid, since, text, first_seen)"
			   " VALUES (?1, ?2, ?3, ?4, nullif(?5, ''), nullif(?6, ''), ?7, ?8, ?9)"
			   " ON CONFLICT (host, origin_id) DO UPDATE SET in_force = 1, text = ?8",
			   DB_ARGS(DB_TEXT(host), DB_INT(h->origin_id),
				   DB_TEXT(db_hold_why_words[h->why]),
				   DB_TEXT(db_hold_step_words[h->step]), DB_TEXT(h->commit),
				   DB_TEXT(h->tree), DB_TEXT(h->since), DB_TEXT(h->text), DB_TEXT(now)),
			   "recording a host's hold");
	}
	if (r == 0)
		r = in_force_ids(db, &after, host);
	if (r == 0)
		r = db_commit(db);
	else
		db_rollback(db);
	*out_changed = r == 0 && strcmp(before, after);
	free(before);
	free(after);
	return r;
}

int db_hub_holds_list(struct db *db, struct db_hub_hold **out, size_t *out_n, const char *host,
		      const char *commit, const char *base)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_hub_hold), .max = DB_HOLDS_MAX, .fill = hub_hold_fill,
		.release = hub_hold_free, .doing = "listing the holds hosts said",
	};

	return db_rows_select(db, "SELECT " HUB_HOLD_COLUMNS " FROM hub_holds h"
			      " LEFT JOIN host_status s ON s.host = h.host WHERE h.in_force"
			      " AND (?1 IS NULL OR h.host = ?1)"
			      " AND (?2 IS NULL OR h.commit_oid IN (?2, ?3))"
			      " ORDER BY h.first_seen DESC, h.host, h.origin_id DESC",
			      DB_ARGS(DB_TEXT(host), DB_TEXT(commit), DB_TEXT(base)), &how, out,
			      out_n);
}

int db_hub_hold_greenlight(struct db *db, const char *host, int64_t origin_id, const char *by,
			   int pr, int64_t comment_id)
{
	char now[TIME_ISO_LEN];
	int r;

	time_now_iso(now);
	r = db_run(db, "UPDATE hub_holds SET greenlit_by = ?3, greenlit_at = ?4, greenlit_pr = ?5,"
		   " greenlit_comment = ?6 WHERE host = ?1 AND origin_id = ?2 AND in_force"
		   " AND greenlit_by IS NULL",
		   DB_ARGS(DB_TEXT(host), DB_INT(origin_id), DB_TEXT(by), DB_TEXT(now), DB_INT(pr),
			   DB_INT(comment_id)), "recording a green light");
	return r < 0 ? r : sqlite3_changes(db->h);
}
