/*
 * Reading for the hub: the queries behind perfd serve's JSON API. Nothing
 * here writes. Each list is bounded by the caller's max and each filter is
 * served by an index (schema version 3), so a page costs the same on a
 * database of a thousand comparisons or of a million process records.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db-internal.h"

/* ---- hosts ---- */

void db_host_info_release(struct db_host_info *h)
{
	if (!h)
		return;
	free(h->fingerprint);
	free(h->fault);
	h->fingerprint = h->fault = NULL;
}

/*
 * The distinct host names come from a loose index scan (a recursive min()
 * over comparisons_host and builds_host), which costs a seek per host rather
 * than a read of every comparison. The newest row of each kind by id gives
 * the heartbeat and the fingerprint.
 */
static const char hosts_sql[] =
	"WITH RECURSIVE"
	" ch(name) AS (SELECT min(host) FROM comparisons UNION ALL"
	"  SELECT (SELECT min(host) FROM comparisons WHERE host > ch.name) FROM ch"
	"  WHERE ch.name IS NOT NULL),"
	" bh(name) AS (SELECT min(host) FROM builds UNION ALL"
	"  SELECT (SELECT min(host) FROM builds WHERE host > bh.name) FROM bh"
	"  WHERE bh.name IS NOT NULL),"
	" names(name) AS (SELECT name FROM ch WHERE name IS NOT NULL UNION"
	"  SELECT name FROM bh WHERE name IS NOT NULL UNION SELECT name FROM hosts)"
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
	"  coalesce(h.quarantined, 0), h.fault, coalesce(h.since, '')"
	" FROM names n LEFT JOIN hosts h ON h.name = n.name ORDER BY n.name LIMIT ?";

static const char *text_or(sqlite3_stmt *st, int i, const char *dflt)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s ? (const char *)s : dflt;
}

int db_host_infos(struct db *db, struct db_host_info **out, size_t *out_n, size_t max)
{
	struct db_host_info *hosts = NULL;
	sqlite3_stmt *st = NULL;
	size_t n = 0, i;
	int rc, r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, hosts_sql);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_host_info *h;
		const char *ct = text_or(st, 1, ""), *bt = text_or(st, 2, "");
		const char *cft = text_or(st, 4, ""), *bft = text_or(st, 6, "");

		hosts = xrealloc(hosts, (n + 1) * sizeof(*hosts));
		h = &hosts[n++];
		memset(h, 0, sizeof(*h));
		db_column_copy(h->name, sizeof(h->name), st, 0);
		/* ISO times in UTC compare as strings. */
		snprintf(h->heartbeat, sizeof(h->heartbeat), "%s", strcmp(ct, bt) >= 0 ? ct : bt);
		if (sqlite3_column_type(st, 3) != SQLITE_NULL &&
		    (sqlite3_column_type(st, 5) == SQLITE_NULL || strcmp(cft, bft) >= 0))
			h->fingerprint = db_column_strdup(st, 3);
		else
			h->fingerprint = db_column_strdup(st, 5);
		h->quarantined = sqlite3_column_int(st, 7);
		h->fault = db_column_strdup(st, 8);
		db_column_copy(h->since, sizeof(h->since), st, 9);
	}
	db_finish(st);
	if (rc != SQLITE_DONE) {
		for (i = 0; i < n; i++)
			db_host_info_release(&hosts[i]);
		free(hosts);
		return db_fail(db, rc, "listing hosts");
	}
	*out = hosts;
	*out_n = n;
	return 0;
}

/* ---- jobs ---- */

void db_job_info_release(struct db_job_info *j)
{
	if (!j)
		return;
	free(j->subject);
	free(j->detail);
	free(j->comparisons);
	j->subject = j->detail = NULL;
	j->comparisons = NULL;
	j->ncomparisons = 0;
}

#define JOB_INFO_COLUMNS "id, head, commit_oid, coalesce(base_oid, ''), subject, state, detail," \
	" created_at, coalesce(started_at, ''), coalesce(finished_at, '')"

static void job_info_fill(struct db_job_info *j, sqlite3_stmt *st)
{
	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(st, 0);
	db_column_copy(j->head, sizeof(j->head), st, 1);
	db_column_copy(j->commit, sizeof(j->commit), st, 2);
	db_column_copy(j->base, sizeof(j->base), st, 3);
	j->subject = db_column_strdup(st, 4);
	db_column_copy(j->state, sizeof(j->state), st, 5);
	j->detail = db_column_strdup(st, 6);
	db_column_copy(j->created_at, sizeof(j->created_at), st, 7);
	db_column_copy(j->started_at, sizeof(j->started_at), st, 8);
	db_column_copy(j->finished_at, sizeof(j->finished_at), st, 9);
}

static int job_comparisons(struct db *db, struct db_job_info *j)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = db_prepare(db, &st, "SELECT id, case_name, coalesce(verdict, ''), gain_median"
		       " FROM comparisons WHERE job_id = ? ORDER BY id");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, j->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_job_comparison *c;

		j->comparisons = xrealloc(j->comparisons,
					  (j->ncomparisons + 1) * sizeof(*j->comparisons));
		c = &j->comparisons[j->ncomparisons++];
		c->id = sqlite3_column_int64(st, 0);
		db_column_copy(c->case_name, sizeof(c->case_name), st, 1);
		db_column_copy(c->verdict, sizeof(c->verdict), st, 2);
		c->has_gain = sqlite3_column_type(st, 3) != SQLITE_NULL;
		c->gain_median = db_column_real(st, 3);
	}
	if (rc != SQLITE_DONE)
		r = db_fail(db, rc, "loading a job's comparisons");
	db_finish(st);
	return r;
}

int db_job_infos(struct db *db, struct db_job_info *out, size_t max, int64_t before_id)
{
	sqlite3_stmt *st = NULL;
	size_t n = 0, i;
	int rc = SQLITE_DONE, r;

	r = db_prepare(db, &st, "SELECT " JOB_INFO_COLUMNS " FROM jobs WHERE id < ?"
		       " ORDER BY id DESC LIMIT ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, before_id > 0 ? before_id : INT64_MAX);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)max);
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
		job_info_fill(&out[n++], st);
	if (n < max && rc != SQLITE_DONE)
		r = db_fail(db, rc, "listing jobs");
	db_finish(st);
	/* The row statement is reset before the per-job queries run. */
	for (i = 0; r == 0 && i < n; i++)
		r = job_comparisons(db, &out[i]);
	if (r < 0) {
		for (i = 0; i < n; i++)
			db_job_info_release(&out[i]);
		return r;
	}
	return (int)n;
}

/* ---- heads ---- */

void db_head_info_release(struct db_head_info *h)
{
	if (!h)
		return;
	free(h->job_detail);
	free(h->subject);
	h->job_detail = h->subject = NULL;
}

int db_head_infos(struct db *db, struct db_head_info **out, size_t *out_n, size_t max)
{
	struct db_head_info *heads = NULL;
	sqlite3_stmt *st = NULL;
	size_t n = 0, i;
	int rc, r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT h.name, h.oid, h.is_pull, h.seen_at, coalesce(j.id, 0),"
		       " coalesce(j.state, ''), j.detail, j.subject FROM heads h"
		       " LEFT JOIN jobs j ON j.id = (SELECT max(id) FROM jobs"
		       "  WHERE head = h.name AND commit_oid = h.oid)"
		       " ORDER BY h.name LIMIT ?");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_head_info *h;

		heads = xrealloc(heads, (n + 1) * sizeof(*heads));
		h = &heads[n++];
		memset(h, 0, sizeof(*h));
		db_column_copy(h->name, sizeof(h->name), st, 0);
		db_column_copy(h->oid, sizeof(h->oid), st, 1);
		h->is_pull = sqlite3_column_int(st, 2);
		db_column_copy(h->seen_at, sizeof(h->seen_at), st, 3);
		h->job_id = sqlite3_column_int64(st, 4);
		db_column_copy(h->job_state, sizeof(h->job_state), st, 5);
		h->job_detail = db_column_strdup(st, 6);
		h->subject = db_column_strdup(st, 7);
	}
	db_finish(st);
	if (rc != SQLITE_DONE) {
		for (i = 0; i < n; i++)
			db_head_info_release(&heads[i]);
		free(heads);
		return db_fail(db, rc, "listing heads");
	}
	*out = heads;
	*out_n = n;
	return 0;
}

/* ---- comparisons ---- */

#define ENTRY_COLUMNS "c.id, c.created_at, c.state, c.host, c.case_name," \
	" coalesce(c.metric, ''), coalesce(c.verdict, ''), c.gain_median, o.sha256, n.sha256," \
	" coalesce(c.job_id, 0), coalesce(j.head, ''), coalesce(j.commit_oid, '')"
#define ENTRY_FROM " FROM comparisons c JOIN artifacts o ON o.id = c.old_artifact" \
	" JOIN artifacts n ON n.id = c.new_artifact LEFT JOIN jobs j ON j.id = c.job_id"

static void entry_fill(struct db_comparison_entry *e, sqlite3_stmt *st)
{
	struct db_comparison_row *row = &e->row;

	memset(e, 0, sizeof(*e));
	row->id = sqlite3_column_int64(st, 0);
	db_column_copy(row->created_at, sizeof(row->created_at), st, 1);
	row->state = db_state_from_name((const char *)sqlite3_column_text(st, 2));
	db_column_copy(row->host, sizeof(row->host), st, 3);
	db_column_copy(row->case_name, sizeof(row->case_name), st, 4);
	db_column_copy(row->metric, sizeof(row->metric), st, 5);
	db_column_copy(row->verdict, sizeof(row->verdict), st, 6);
	row->has_gain = sqlite3_column_type(st, 7) != SQLITE_NULL;
	row->gain_median = db_column_real(st, 7);
	db_column_copy(row->old_sha256, sizeof(row->old_sha256), st, 8);
	db_column_copy(row->new_sha256, sizeof(row->new_sha256), st, 9);
	e->job_id = sqlite3_column_int64(st, 10);
	db_column_copy(e->head, sizeof(e->head), st, 11);
	db_column_copy(e->commit, sizeof(e->commit), st, 12);
}

/* Steps an unshared statement (prepared here, finalized by the caller) and
 * fills at most max entries. */
static int entries_step(struct db *db, sqlite3_stmt *st, struct db_comparison_entry *out,
			size_t max, const char *doing)
{
	size_t n = 0;
	int rc = SQLITE_DONE;

	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW)
		entry_fill(&out[n++], st);
	if (n < max && rc != SQLITE_DONE)
		return db_fail(db, rc, doing);
	return (int)n;
}

/*
 * The WHERE clause is built from the filters present, so that the planner
 * sees plain equalities it can serve with comparisons_host_case,
 * comparisons_host, comparisons_verdict or jobs_commit; "(? IS NULL OR ...)"
 * would hide them. Such a statement is prepared per call rather than cached
 * (db_prepare caches literals only).
 */
int db_comparison_find(struct db *db, struct db_comparison_entry *out, size_t max,
		       const struct db_comparison_filter *f)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	char hi[DB_OID_HEX + 1];
	int rc, r;

	strbuf_adds(&sql, "SELECT " ENTRY_COLUMNS ENTRY_FROM " WHERE c.id < ?1");
	if (f->host)
		strbuf_adds(&sql, " AND c.host = ?2");
	if (f->case_name)
		strbuf_adds(&sql, " AND c.case_name = ?3");
	if (f->verdict)
		strbuf_adds(&sql, " AND c.verdict = ?4");
	if (f->commit) {
		/* A hex prefix as a range: every oid that starts with it lies in
		 * [prefix, prefix "g"), since 'g' follows every hex digit. */
		strbuf_adds(&sql, " AND c.job_id IN (SELECT id FROM jobs WHERE"
			    " commit_oid >= ?5 AND commit_oid < ?6)");
		snprintf(hi, sizeof(hi), "%sg", f->commit);
	}
	strbuf_adds(&sql, " ORDER BY c.id DESC LIMIT ?7");
	rc = sqlite3_prepare_v2(db->h, sql.buf, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		r = db_fail(db, rc, "listing comparisons");
		goto out;
	}
	sqlite3_bind_int64(st, 1, f->before_id > 0 ? f->before_id : INT64_MAX);
	if (f->host)
		db_bind_text(st, 2, f->host);
	if (f->case_name)
		db_bind_text(st, 3, f->case_name);
	if (f->verdict)
		db_bind_text(st, 4, f->verdict);
	if (f->commit) {
		db_bind_text(st, 5, f->commit);
		db_bind_text(st, 6, hi);
	}
	sqlite3_bind_int64(st, 7, (sqlite3_int64)max);
	r = entries_step(db, st, out, max, "listing comparisons");
out:
	sqlite3_finalize(st);
	strbuf_release(&sql);
	return r;
}

int db_comparison_cells(struct db *db, struct db_comparison_entry *out, size_t max,
			const char *host, const char *case_name)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int rc, r;

	/* Built like db_comparison_find's, for the same reason. */
	strbuf_adds(&sql, "SELECT " ENTRY_COLUMNS ENTRY_FROM " WHERE 1");
	if (host)
		strbuf_adds(&sql, " AND c.host = ?1");
	if (case_name)
		strbuf_adds(&sql, " AND c.case_name = ?2");
	strbuf_adds(&sql, " ORDER BY c.host, c.case_name, o.sha256, n.sha256, c.id LIMIT ?3");
	rc = sqlite3_prepare_v2(db->h, sql.buf, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		r = db_fail(db, rc, "pooling comparisons");
		goto out;
	}
	if (host)
		db_bind_text(st, 1, host);
	if (case_name)
		db_bind_text(st, 2, case_name);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
	r = entries_step(db, st, out, max, "pooling comparisons");
out:
	sqlite3_finalize(st);
	strbuf_release(&sql);
	return r;
}

/* ---- timeline ---- */

void db_timeline_point_release(struct db_timeline_point *p)
{
	if (!p)
		return;
	free(p->fingerprint);
	free(p->values);
	p->fingerprint = NULL;
	p->values = NULL;
	p->nvalues = 0;
}

/* Every process value of the points, in one statement: a process's value
 * as the rule reads it, the metric's row, or its wall time when the metric
 * is wall_ms and it ran to its end. pts is sorted by id, as are the rows. */
static int timeline_values(struct db *db, struct db_timeline_point *pts, size_t n,
			   const char *host, const char *case_name, size_t max)
{
	sqlite3_stmt *st = NULL;
	size_t at = 0;
	int rc, r;

	r = db_prepare(db, &st, "SELECT p.comparison_id, p.seq, p.arm, p.pair, coalesce(p.valid, 0),"
		       " coalesce(m.value, CASE WHEN c.metric = 'wall_ms' AND p.state = 'done'"
		       "  AND p.spawn_error IS NULL THEN p.wall_ms END)"
		       " FROM comparisons c JOIN processes p ON p.comparison_id = c.id"
		       " LEFT JOIN metrics m ON m.process_id = p.id AND m.name = c.metric"
		       " WHERE c.id IN (SELECT id FROM comparisons WHERE host = ?1 AND"
		       "  case_name = ?2 ORDER BY id DESC LIMIT ?3)"
		       " ORDER BY p.comparison_id, p.seq");
	if (r < 0)
		return r;
	db_bind_text(st, 1, host);
	db_bind_text(st, 2, case_name);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t cid = sqlite3_column_int64(st, 0);
		struct db_timeline_point *pt;
		struct db_timeline_value *v;

		while (at < n && pts[at].id < cid)
			at++;
		if (at == n || pts[at].id != cid)
			continue;  /* a comparison stored since the points were read */
		pt = &pts[at];
		pt->values = xrealloc(pt->values, (pt->nvalues + 1) * sizeof(*pt->values));
		v = &pt->values[pt->nvalues++];
		memset(v, 0, sizeof(*v));
		v->seq = sqlite3_column_int(st, 1);
		db_column_copy(v->arm, sizeof(v->arm), st, 2);
		v->pair = sqlite3_column_int(st, 3);
		v->valid = sqlite3_column_int(st, 4);
		v->has_value = sqlite3_column_type(st, 5) != SQLITE_NULL;
		v->value = db_column_real(st, 5);
	}
	if (rc != SQLITE_DONE)
		r = db_fail(db, rc, "loading a timeline's values");
	db_finish(st);
	return r;
}

int db_timeline(struct db *db, struct db_timeline_point **out, size_t *out_n,
		const char *host, const char *case_name, size_t max)
{
	struct db_timeline_point *pts = NULL;
	sqlite3_stmt *st = NULL;
	size_t n = 0, i;
	int rc, r;

	*out = NULL;
	*out_n = 0;
	r = db_prepare(db, &st, "SELECT * FROM (SELECT c.id, c.created_at, coalesce(c.job_id, 0),"
		       " coalesce(j.head, ''), coalesce(j.commit_oid, ''), coalesce(c.metric, ''),"
		       " coalesce(c.verdict, ''), c.gain_median, c.old_median, c.new_median,"
		       " c.fingerprint FROM comparisons c LEFT JOIN jobs j ON j.id = c.job_id"
		       " WHERE c.host = ? AND c.case_name = ? ORDER BY c.id DESC LIMIT ?)"
		       " ORDER BY 1");
	if (r < 0)
		return r;
	db_bind_text(st, 1, host);
	db_bind_text(st, 2, case_name);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_timeline_point *p;

		pts = xrealloc(pts, (n + 1) * sizeof(*pts));
		p = &pts[n++];
		memset(p, 0, sizeof(*p));
		p->id = sqlite3_column_int64(st, 0);
		db_column_copy(p->created_at, sizeof(p->created_at), st, 1);
		p->job_id = sqlite3_column_int64(st, 2);
		db_column_copy(p->head, sizeof(p->head), st, 3);
		db_column_copy(p->commit, sizeof(p->commit), st, 4);
		db_column_copy(p->metric, sizeof(p->metric), st, 5);
		db_column_copy(p->verdict, sizeof(p->verdict), st, 6);
		p->has_gain = sqlite3_column_type(st, 7) != SQLITE_NULL;
		p->gain_median = db_column_real(st, 7);
		p->old_median = db_column_real(st, 8);
		p->new_median = db_column_real(st, 9);
		p->fingerprint = db_column_strdup(st, 10);
	}
	db_finish(st);
	if (rc != SQLITE_DONE) {
		r = db_fail(db, rc, "loading a timeline");
		goto fail;
	}
	r = timeline_values(db, pts, n, host, case_name, max);
	if (r < 0)
		goto fail;
	*out = pts;
	*out_n = n;
	return 0;
fail:
	for (i = 0; i < n; i++)
		db_timeline_point_release(&pts[i]);
	free(pts);
	return r;
}

/* ---- counts ---- */

int db_count(struct db *db, struct db_count *out, size_t max, enum db_count_kind kind)
{
	static const char *const sql[] = {
		[DB_COUNT_VERDICTS] = "SELECT coalesce(verdict, 'none'), count(*) FROM comparisons"
			" GROUP BY 1 ORDER BY 1",
		[DB_COUNT_JOBS] = "SELECT state, count(*) FROM jobs GROUP BY 1 ORDER BY 1",
		[DB_COUNT_BUILDS] = "SELECT state, count(*) FROM builds GROUP BY 1 ORDER BY 1",
		[DB_COUNT_QUARANTINED] = "SELECT 'quarantined', count(*) FROM hosts"
			" WHERE quarantined != 0",
	};
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	int rc = SQLITE_DONE, r;

	r = db_prepare(db, &st, sql[kind]);
	if (r < 0)
		return r;
	while (n < max && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		db_column_copy(out[n].key, sizeof(out[n].key), st, 0);
		out[n].n = sqlite3_column_int64(st, 1);
		n++;
	}
	if (n < max && rc != SQLITE_DONE)
		r = db_fail(db, rc, "counting rows");
	db_finish(st);
	return r < 0 ? r : (int)n;
}
