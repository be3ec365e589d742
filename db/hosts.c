/*
 * Hosts: a host's standing (quarantine after a GPU fault, and its
 * clearing), and the hosts as the hub lists them: every name seen in
 * comparisons, builds, jobs, heartbeats or the hosts table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

void db_host_release(struct db_host *h)
{
	if (!h)
		return;
	free(h->fault);
	h->fault = NULL;
}

int db_host_quarantine(struct db *db, const char *name, const char *fault,
		       int64_t comparison_id, int seq)
{
	char now[TIME_ISO_LEN];

	time_now_iso(now);
	return db_run(db, "INSERT INTO hosts (name, quarantined, fault, since, comparison_id, seq)"
		      " VALUES (?1, 1, ?2, ?3, ?4, ?5) ON CONFLICT (name) DO UPDATE SET"
		      " quarantined = 1, fault = ?2, since = ?3, comparison_id = ?4, seq = ?5,"
		      " cleared_at = NULL", DB_ARGS(DB_TEXT(name), DB_TEXT(fault), DB_TEXT(now),
						    DB_INT(comparison_id), DB_INT(seq)),
		      "quarantining the host");
}

static void host_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_host *h = elem;

	memset(h, 0, sizeof(*h));
	db_column_copy(h->name, sizeof(h->name), st, 0);
	h->quarantined = sqlite3_column_int(st, 1);
	h->fault = db_column_strdup(st, 2);
	db_column_copy(h->since, sizeof(h->since), st, 3);
	h->comparison_id = sqlite3_column_int64(st, 4);
	h->seq = sqlite3_column_int(st, 5);
	db_column_copy(h->cleared_at, sizeof(h->cleared_at), st, 6);
}

#define HOST_COLUMNS "name, quarantined, fault, since, comparison_id, seq, cleared_at"

int db_host_load(struct db *db, struct db_host *out, const char *name)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = db_run_row(db, host_fill, out, "SELECT " HOST_COLUMNS " FROM hosts WHERE name = ?",
		       DB_ARGS(DB_TEXT(name)), "loading a host");
	return r == -ENOENT ? err_set(-ENOENT, "no host '%s' in '%s'", name, db->path) : r;
}

int db_host_clear(struct db *db, const char *name)
{
	char now[TIME_ISO_LEN];
	int r;

	time_now_iso(now);
	r = db_run(db, "UPDATE hosts SET quarantined = 0, cleared_at = ?"
		   " WHERE name = ? AND quarantined = 1", DB_ARGS(DB_TEXT(now), DB_TEXT(name)),
		   "clearing the host");
	return r < 0 ? r : sqlite3_changes(db->h) > 0;
}

static void host_release(void *elem)
{
	db_host_release(elem);
}

int db_host_list(struct db *db, struct db_host **out, size_t *out_n)
{
	static const struct db_rows how = {
		.size = sizeof(struct db_host), .max = SIZE_MAX, .fill = host_fill,
		.release = host_release, .doing = "listing hosts",
	};

	return db_rows_select(db, "SELECT " HOST_COLUMNS " FROM hosts ORDER BY name", NULL, 0,
			      &how, out, out_n);
}

/* The texts a host's info and its heartbeat's row own alike. */
static void heartbeat_texts_free(char **fingerprint, char **fault, char **sandbox)
{
	free(*fingerprint);
	free(*fault);
	free(*sandbox);
	*fingerprint = *fault = *sandbox = NULL;
}

void db_host_info_release(struct db_host_info *h)
{
	if (h)
		heartbeat_texts_free(&h->fingerprint, &h->fault, &h->sandbox);
}

/*
 * The distinct host names come from a loose index scan (a recursive min()
 * over comparisons_host, builds_host and the jobs' unique (host, ...)
 * index), which costs a seek per host rather than a read of every row; the
 * hosts table and host_status are a row per host already. The newest row
 * of each kind by id gives the heartbeat and the fingerprint.
 */
static const char hosts_sql[] =
	"WITH RECURSIVE"
	" ch(name) AS (SELECT min(host) FROM comparisons UNION ALL"
	"  SELECT (SELECT min(host) FROM comparisons WHERE host > ch.name) FROM ch"
	"  WHERE ch.name IS NOT NULL),"
	" bh(name) AS (SELECT min(host) FROM builds UNION ALL"
	"  SELECT (SELECT min(host) FROM builds WHERE host > bh.name) FROM bh"
	"  WHERE bh.name IS NOT NULL),"
	/* A database's own agent's jobs have the host '': not a host's name. */
	" jh(name) AS (SELECT min(host) FROM jobs WHERE host > '' UNION ALL"
	"  SELECT (SELECT min(host) FROM jobs WHERE host > jh.name) FROM jh"
	"  WHERE jh.name IS NOT NULL),"
	" names(name) AS (SELECT name FROM ch WHERE name IS NOT NULL UNION"
	"  SELECT name FROM bh WHERE name IS NOT NULL UNION"
	"  SELECT name FROM jh WHERE name IS NOT NULL UNION"
	"  SELECT name FROM hosts UNION SELECT host FROM host_status)"
	" SELECT n.name,"
	"  (SELECT coalesce(finished_at, created_at) FROM comparisons WHERE host = n.name"
	"   ORDER BY id DESC LIMIT 1),"
	"  (SELECT coalesce(finished_at, started_at) FROM builds WHERE host = n.name"
	"   ORDER BY id DESC LIMIT 1),"
	"  (SELECT fingerprint FROM comparisons WHERE host = n.name AND fingerprint IS NOT NULL"
	"   ORDER BY id DESC LIMIT 1),"
	"  (SELECT created_at FROM comparisons WHERE host = n.name AND fingerprint IS NOT NULL"
	"   ORDER BY id DESC LIMIT 1),"
	"  (SELECT fingerprint FROM builds WHERE host = n.name AND fingerprint IS NOT NULL"
	"   ORDER BY id DESC LIMIT 1),"
	"  (SELECT started_at FROM builds WHERE host = n.name AND fingerprint IS NOT NULL"
	"   ORDER BY id DESC LIMIT 1),"
	"  coalesce(h.quarantined, 0), h.fault, coalesce(h.since, ''),"
	"  s.host IS NOT NULL, s.received_at, s.state, s.backlog, s.sent_at, s.fingerprint,"
	"  coalesce(s.quarantined, 0), s.fault, s.sandbox"
	" FROM names n LEFT JOIN hosts h ON h.name = n.name"
	" LEFT JOIN host_status s ON s.host = n.name ORDER BY n.name LIMIT ?";

static const char *text_or(sqlite3_stmt *st, int i, const char *dflt)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s ? (const char *)s : dflt;
}

static void host_info_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_host_info *h = elem;
	const char *ct = text_or(st, 1, ""), *bt = text_or(st, 2, "");
	const char *cft = text_or(st, 4, ""), *bft = text_or(st, 6, "");
	const char *sft = text_or(st, 14, "");
	int fp = -1;

	db_column_copy(h->name, sizeof(h->name), st, 0);
	/* ISO times in UTC compare as strings. */
	snprintf(h->heartbeat, sizeof(h->heartbeat), "%s", strcmp(ct, bt) >= 0 ? ct : bt);
	/* The newest fingerprint by the host's own clock: a comparison's or a
	 * build's start, or the time its newest heartbeat was sent. */
	if (sqlite3_column_type(st, 3) != SQLITE_NULL)
		fp = 3;
	if (sqlite3_column_type(st, 5) != SQLITE_NULL && (fp < 0 || strcmp(bft, cft) > 0))
		fp = 5;
	if (sqlite3_column_type(st, 15) != SQLITE_NULL &&
	    (fp < 0 || strcmp(sft, fp == 3 ? cft : bft) > 0))
		fp = 15;
	h->fingerprint = fp < 0 ? NULL : db_column_strdup(st, fp);
	h->quarantined = sqlite3_column_int(st, 7);
	if (!h->quarantined && sqlite3_column_int(st, 16)) {
		/* Quarantined as its heartbeat says, at a hub: no time kept. */
		h->quarantined = true;
		h->fault = db_column_strdup(st, 17);
	} else {
		h->fault = db_column_strdup(st, 8);
		db_column_copy(h->since, sizeof(h->since), st, 9);
	}
	h->has_status = sqlite3_column_int(st, 10) != 0;
	if (h->has_status) {
		db_column_copy(h->last_push, sizeof(h->last_push), st, 11);
		db_column_copy(h->state, sizeof(h->state), st, 12);
		h->backlog = sqlite3_column_int64(st, 13);
		h->sandbox = db_column_strdup(st, 18);
	}
}

static void host_info_release(void *elem)
{
	db_host_info_release(elem);
}

int db_host_infos(struct db *db, struct db_host_info **out, size_t *out_n, size_t max)
{
	const struct db_rows how = {
		.size = sizeof(struct db_host_info), .max = max, .fill = host_info_fill,
		.release = host_info_release, .doing = "listing hosts",
	};

	return db_rows_select(db, hosts_sql, DB_ARGS(DB_INT(max)), &how, out, out_n);
}

/* ---- host_status: each host's newest heartbeat, at the hub ---- */

void db_host_status_release(struct db_host_status *h)
{
	if (!h)
		return;
	heartbeat_texts_free(&h->fingerprint, &h->fault, &h->sandbox);
	free(h->kind);
	h->kind = NULL;
}

int db_host_status_put(struct db *db, const struct db_host_status *h, bool *out_stored)
{
	char now[TIME_ISO_LEN];
	int r;

	*out_stored = false;
	time_now_iso(now);
	/* No job (0): NULL. */
	r = db_run(db, "INSERT INTO host_status (host, seq, sent_at, received_at, state,"
		   " job_origin, backlog, fingerprint, quarantined, fault, sandbox, kind)"
		   " VALUES (?1, ?2, ?3, ?4, ?5, CASE WHEN ?6 > 0 THEN ?6 END, ?7, ?8, ?9, ?10, ?11,"
		   " ?12)"
		   " ON CONFLICT (host) DO UPDATE SET seq = ?2, sent_at = ?3, received_at = ?4,"
		   " state = ?5, job_origin = CASE WHEN ?6 > 0 THEN ?6 END, backlog = ?7,"
		   " fingerprint = ?8, quarantined = ?9, fault = ?10, sandbox = ?11, kind = ?12"
		   " WHERE host_status.seq < ?2",
		   DB_ARGS(DB_TEXT(h->host), DB_INT(h->seq), DB_TEXT(h->sent_at), DB_TEXT(now),
			   DB_TEXT(h->state), DB_INT(h->job_origin), DB_INT(h->backlog),
			   DB_TEXT(h->fingerprint), DB_INT(h->quarantined),
			   DB_TEXT(h->quarantined ? h->fault : NULL), DB_TEXT(h->sandbox),
			   DB_TEXT(h->kind)),
		   "storing a host's heartbeat");
	if (r == 0)
		*out_stored = sqlite3_changes(db->h) > 0;
	return r;
}

static void status_fill(void *elem, sqlite3_stmt *st, void *arg)
{
	struct db_host_status *h = elem;

	db_column_copy(h->host, sizeof(h->host), st, 0);
	h->seq = sqlite3_column_int64(st, 1);
	db_column_copy(h->sent_at, sizeof(h->sent_at), st, 2);
	db_column_copy(h->received_at, sizeof(h->received_at), st, 3);
	db_column_copy(h->state, sizeof(h->state), st, 4);
	h->job_origin = sqlite3_column_int64(st, 5);
	h->backlog = sqlite3_column_int64(st, 6);
	h->fingerprint = db_column_strdup(st, 7);
	h->quarantined = sqlite3_column_int(st, 8) != 0;
	h->fault = db_column_strdup(st, 9);
	h->sandbox = db_column_strdup(st, 10);
	h->kind = db_column_strdup(st, 11);
}

int db_host_status_get(struct db *db, struct db_host_status *out, const char *host)
{
	memset(out, 0, sizeof(*out));
	return db_run_row(db, status_fill, out, "SELECT host, seq, sent_at, received_at, state,"
			  " coalesce(job_origin, 0), backlog, fingerprint, quarantined, fault,"
			  " sandbox, kind FROM host_status WHERE host = ?", DB_ARGS(DB_TEXT(host)),
			  "reading a host's heartbeat");
}
