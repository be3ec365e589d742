/*
 * The agent's outbox (docs/hub.md, "Agents push"): the agent's database
 * is the spool, and each kind of record is a row of one table: its
 * endpoint, how its backlog is listed, how a record is built from the
 * stored rows and how the hub's answer is marked. One path sends every
 * kind alike: a record counts as sent only once the hub answered 2xx; a
 * 409, 413 or 422 is a refusal for good, kept with the hub's message and said
 * once (it is marked, so never sent again); anything else (a 5xx, a
 * timeout, a refused connection) leaves it in the backlog and ends the
 * turn. The kinds go in the table's order, at most a batch of each per
 * turn, each record after the one before it was answered for.
 *
 * A new kind of record is a row here, with its record's builder and
 * parser (record.c), its backlog in db, and its name in wire.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

/* One kind of record: the table's row. */
struct outbox_kind {
	const char *path;            /* the hub's endpoint */
	size_t size;                 /* bytes of one item of its backlog */
	bool after_drained;          /* sent only in a turn that listed fewer than a
	                              * batch of the kind before it: none of it is left */
	/* Lists the oldest of the backlog, at most max, into *out (the
	 * caller's: release each, free). */
	int (*list)(void **out, size_t *out_n, struct db *db, size_t max);
	void (*release)(void *item); /* NULL: nothing to release */
	/* Appends item's record to rec; *note is what mark needs of it. */
	int (*build)(struct strbuf *rec, int64_t *note, const struct wire_outbox *ob,
		     const void *item);
	/* What the item is called in a message: "comparison 3". */
	void (*name)(char *out, size_t len, const void *item);
	/* Records the hub's answer status for item: message is a refusal's
	 * (NULL for a 2xx), reply the whole answer, cut. */
	int (*mark)(struct db *db, const void *item, int64_t note, int status,
		    const char *message, const struct strbuf *reply);
};

/* ---- builds, with their runner results ---- */

static int builds_list(void **out, size_t *out_n, struct db *db, size_t max)
{
	int64_t *ids = NULL;
	int r = db_builds_unpushed(db, &ids, out_n, max);

	*out = ids;
	return r;
}

static int build_record(struct strbuf *rec, int64_t *note, const struct wire_outbox *ob,
			const void *item)
{
	int64_t id = *(const int64_t *)item;
	struct db_runner_result *rs = NULL;
	struct db_build b;
	size_t n = 0, i;
	int r;

	r = db_build_load(ob->db, &b, id);
	if (r == 0)
		r = db_runner_results_load(ob->db, &rs, &n, id);
	if (r == 0)
		r = wire_build_record_build(rec, &b, ob->host, rs, n);
	*note = (int64_t)n;          /* the results the hub acknowledges */
	for (i = 0; i < n; i++)
		db_runner_result_release(&rs[i]);
	free(rs);
	db_build_release(&b);
	return r;
}

static void build_name(char *out, size_t len, const void *item)
{
	snprintf(out, len, "build %lld", (long long)*(const int64_t *)item);
}

static int build_mark(struct db *db, const void *item, int64_t note, int status,
		      const char *message, const struct strbuf *reply)
{
	return db_build_pushed(db, *(const int64_t *)item, (size_t)note, status, message);
}

/* ---- jobs' updates ---- */

static int jobs_list(void **out, size_t *out_n, struct db *db, size_t max)
{
	struct db_job *jobs = NULL;
	int r = db_jobs_unpushed(db, &jobs, out_n, max);

	*out = jobs;
	return r;
}

static void job_release(void *item)
{
	db_job_release(item);
}

/* A done job's record says how many comparisons it made: one per case,
 * all here by the time the job is done. */
static int job_record(struct strbuf *rec, int64_t *note, const struct wire_outbox *ob,
		      const void *item)
{
	struct db_job j = *(const struct db_job *)item;   /* shallow */
	struct db_job_comparison *cs = NULL;
	size_t n = 0, i, k;
	int r;

	j.comparisons = -1;
	if (j.state == DB_JOB_DONE) {
		r = db_job_comparisons(ob->db, &cs, &n, j.id);
		if (r < 0)
			return r;
		for (i = 0, j.comparisons = 0; i < n; i++) {
			for (k = i + 1; k < n && strcmp(cs[k].case_name, cs[i].case_name); k++)
				;
			if (k == n)
				j.comparisons++;
		}
		free(cs);
	}
	return wire_job_record_build(rec, &j, ob->host);
}

static void job_name(char *out, size_t len, const void *item)
{
	const struct db_job *j = item;

	snprintf(out, len, "update %lld of job %lld", (long long)j->seq, (long long)j->id);
}

static int job_mark(struct db *db, const void *item, int64_t note, int status,
		    const char *message, const struct strbuf *reply)
{
	const struct db_job *j = item;

	return db_job_pushed(db, j->id, j->seq, status, message);
}

/* ---- comparisons ---- */

static int comparisons_list(void **out, size_t *out_n, struct db *db, size_t max)
{
	int64_t *ids = NULL;
	int r = db_push_pending(db, &ids, out_n, max);

	*out = ids;
	return r;
}

static int comparison_record(struct strbuf *rec, int64_t *note, const struct wire_outbox *ob,
			     const void *item)
{
	struct db_comparison c;
	int r;

	memset(&c, 0, sizeof(c));
	r = db_comparison_load(ob->db, &c, *(const int64_t *)item);
	if (r == 0)
		r = wire_record_build(rec, &c, false);
	db_comparison_release(&c);
	return r;
}

static void comparison_name(char *out, size_t len, const void *item)
{
	snprintf(out, len, "comparison %lld", (long long)*(const int64_t *)item);
}

/* A stored comparison is marked with the hub's id for it, from its answer
 * ({"comparison": ID, ...}); 0 when it names none. */
static int comparison_mark(struct db *db, const void *item, int64_t note, int status,
			   const char *message, const struct strbuf *reply)
{
	int64_t hub_id;

	if (message || !json_member_int(&hub_id, reply->buf, reply->len, "comparison"))
		hub_id = 0;
	return db_push_mark(db, *(const int64_t *)item, status, hub_id, message);
}

/* ---- alerts' updates, with their findings ---- */

static int alerts_list(void **out, size_t *out_n, struct db *db, size_t max)
{
	struct db_alert *alerts = NULL;
	int r = db_alerts_unpushed(db, &alerts, out_n, max);

	*out = alerts;
	return r;
}

static void alert_release(void *item)
{
	db_alert_release(item);
}

static int alert_record(struct strbuf *rec, int64_t *note, const struct wire_outbox *ob,
			const void *item)
{
	const struct db_alert *al = item;
	struct db_alert_finding *f = NULL;
	size_t n = 0, i;
	int r;

	r = db_alert_findings(ob->db, &f, &n, al->id);
	if (r == 0)
		r = wire_alert_record_build(rec, al, ob->host, f, n);
	for (i = 0; i < n; i++)
		db_alert_finding_release(&f[i]);
	free(f);
	return r;
}

static void alert_name(char *out, size_t len, const void *item)
{
	const struct db_alert *al = item;

	snprintf(out, len, "update %lld of alert %lld", (long long)al->seq, (long long)al->id);
}

static int alert_mark(struct db *db, const void *item, int64_t note, int status,
		      const char *message, const struct strbuf *reply)
{
	const struct db_alert *al = item;

	return db_alert_pushed(db, al->id, al->seq, status, message);
}

/* ---- the table ---- */

static const struct outbox_kind kinds[WIRE_OUTBOX_KINDS] = {
	[WIRE_OUTBOX_BUILDS] = { "/api/v1/ingest/builds", sizeof(int64_t), false,
				 builds_list, NULL, build_record, build_name, build_mark },
	[WIRE_OUTBOX_JOBS] = { "/api/v1/ingest/jobs", sizeof(struct db_job), false,
			       jobs_list, job_release, job_record, job_name, job_mark },
	[WIRE_OUTBOX_COMPARISONS] = { "/api/v1/ingest/comparisons", sizeof(int64_t), false,
				      comparisons_list, NULL, comparison_record,
				      comparison_name, comparison_mark },
	[WIRE_OUTBOX_ALERTS] = { "/api/v1/ingest/alerts", sizeof(struct db_alert), true,
				 alerts_list, alert_release, alert_record, alert_name,
				 alert_mark },
};

/* ---- sending ---- */

/* The hub's answers that refuse a record for good: it holds that id with
 * other content (409), the record is over its bound (413: sent again, it
 * would stop every record behind it), or a figure or member is wrong
 * (422). */
static bool is_refusal(int status)
{
	return status == 409 || status == 413 || status == 422;
}

int wire_outbox_send(struct wire_outbox *ob, struct strbuf *reply, const char *path,
		     const struct strbuf *rec)
{
	struct strbuf url = STRBUF_INIT;
	int status;

	strbuf_addf(&url, "%s%s", ob->url, path);
	status = wire_http_post_json(reply, &ob->http, url.buf, rec->buf, rec->len);
	if (status < 0 && status != -ECANCELED) {
		ob->unanswered(ob->ctx, err_last());
		status = 0;
	}
	while (reply->len && (reply->buf[reply->len - 1] == '\n' ||
			      reply->len > WIRE_OUTBOX_MESSAGE_MAX))
		reply->buf[--reply->len] = '\0';
	if (status > 0 && !(status >= 200 && status < 300) && !is_refusal(status)) {
		char *msg = xasprintf("POST %s: answered %d%s%s", url.buf, status,
				      reply->len ? ": " : "", reply->buf);

		ob->unanswered(ob->ctx, msg);
		free(msg);
		status = 0;
	}
	if (status == 0)
		ob->down = true;
	strbuf_release(&url);
	return status;
}

/* Sends item of kind k. Returns 1 when the hub answered for it for good
 * (stored, had it, or refused it), 0 when it stays in the backlog and the
 * turn ends, or a negative errno (the database's, or -ECANCELED). */
static int send_one(struct wire_outbox *ob, const struct outbox_kind *k, const void *item)
{
	struct strbuf rec = STRBUF_INIT, reply = STRBUF_INIT;
	const char *message = NULL;
	char what[96];
	int64_t note = 0;
	int r, status;

	r = k->build(&rec, &note, ob, item);
	if (r < 0)
		goto out;
	status = wire_outbox_send(ob, &reply, k->path, &rec);
	if (status <= 0) {
		r = status;
		goto out;
	}
	if (is_refusal(status)) {
		message = reply.buf;
		k->name(what, sizeof(what), item);
		ob->refused(ob->ctx, what, status, message);
	}
	r = k->mark(ob->db, item, note, status, message, &reply);
	if (r == 0)
		r = 1;
out:
	strbuf_release(&rec);
	strbuf_release(&reply);
	return r;
}

/* Sends kind's backlog, at most a batch of it; *listed is how much of it
 * was listed. */
static int push_kind(struct wire_outbox *ob, enum wire_outbox_kind kind, size_t *listed)
{
	const struct outbox_kind *k = &kinds[kind];
	void *v = NULL;
	char *items;
	size_t n = 0, i;
	int r;

	r = k->list(&v, &n, ob->db, ob->batch);
	items = v;
	for (i = 0; r >= 0 && i < n; i++) {
		r = send_one(ob, k, items + i * k->size);
		if (r <= 0)
			break;
		ob->answered[kind]++;
	}
	for (i = 0; k->release && i < n; i++)
		k->release(items + i * k->size);
	free(items);
	*listed = n;
	return r < 0 ? r : 0;
}

int wire_outbox_push(struct wire_outbox *ob)
{
	size_t listed = 0;
	int kind, r = 0;

	for (kind = 0; kind < WIRE_OUTBOX_KINDS && r == 0 && !ob->down; kind++) {
		if (kinds[kind].after_drained && listed >= ob->batch)
			break;
		r = push_kind(ob, kind, &listed);
	}
	return r;
}
