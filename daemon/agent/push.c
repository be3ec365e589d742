/*
 * The agent's push to the hub ([hub], docs/hub.md): every finished build
 * with its runner results (POST /api/v1/ingest/builds, again when it gains
 * results), every change of a job (as a job record, to POST
 * /api/v1/ingest/jobs, in the order of its sequence numbers), then every
 * done comparison, oldest first, as the
 * record perfd export prints (POST /api/v1/ingest/comparisons), then every
 * change of an alert of its history, with its findings (POST
 * /api/v1/ingest/alerts, once the comparisons it names are sent), and the
 * host's heartbeat. The agent's database is the spool: a record counts as
 * sent only once the hub answered 200 or 201 (the pushed, pushed_jobs,
 * pushed_builds and pushed_alerts tables say so); a 409 or 422 is a refusal for good, kept with the hub's
 * message and logged once; anything else (a 5xx, a timeout, a refused
 * connection) leaves it in the backlog for the next loop turn. Each request
 * is bounded, and a turn sends at most AGENT_PUSH_BATCH records of each
 * kind, so a slow or absent hub never stops the measuring.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "db.h"
#include "forge.h"
#include "runners.h"
#include "wire.h"

#define PUSH_REPLY_MAX 4096        /* bytes of the hub's answer kept */
#define PUSH_MESSAGE_MAX 1000      /* bytes of a refusal's message stored */

int agent_push_token(char **out, const struct agent_hub *h)
{
	char *token = NULL;
	bool loose = false;
	int r;

	*out = NULL;
	r = wire_http_token_read(&token, h->token_file, &loose);
	if (r < 0)
		return err_set(r, "[hub] %s", err_last());
	if (loose) {
		explicit_bzero(token, strlen(token));
		free(token);
		return err_set(-EPERM, "[hub] token file '%s' can be read by others than its "
			       "owner: refused; chmod 600 it", h->token_file);
	}
	*out = xasprintf("Authorization: Bearer %s", token);
	explicit_bzero(token, strlen(token));
	free(token);
	return 0;
}

/* The hub's id of a stored comparison, from its answer
 * ({"comparison": ID, ...}); 0 when it names none. */
static int64_t hub_id(const struct strbuf *reply)
{
	int64_t id;

	return json_member_int(&id, reply->buf, reply->len, "comparison") ? id : 0;
}

/* What a failure says past its request ("POST URL: "): the same failure of
 * another endpoint is the same. */
static const char *failure_of(const char *msg)
{
	const char *p = strstr(msg, "://");

	p = p ? strstr(p, ": ") : NULL;
	return p ? p + 2 : msg;
}

/* Says a failure once: the same one again, turn after turn and endpoint
 * after endpoint, is not logged again until the hub answers. */
static void say_down(struct agent *a, const char *msg)
{
	if (a->push_error && !strcmp(failure_of(a->push_error), failure_of(msg)))
		return;
	log_warnx("push: %s; the backlog is sent when the hub answers", msg);
	free(a->push_error);
	a->push_error = xstrdup(msg);
}

/* Sends one record to path. Returns the hub's status when it answered for
 * it for good (2xx, 409, 422; *reply holds its answer, cut), 0 when it stays
 * in the backlog and the turn should end (said once), or -ECANCELED. */
static int send_record(struct agent *a, struct strbuf *reply, const char *path,
		       const struct strbuf *rec)
{
	struct strbuf url = STRBUF_INIT;
	int status;

	strbuf_addf(&url, "%s%s", a->cfg->hub.url, path);
	struct wire_http h = { .auth = a->push_auth, .ca_file = a->cfg->hub.ca_file,
			      .timeout_s = a->cfg->hub.timeout_s, .cancel_fd = a->cancel_fd,
			      .max = PUSH_REPLY_MAX };

	status = wire_http_post_json(reply, &h, url.buf, rec->buf, rec->len);
	if (status < 0 && status != -ECANCELED)
		say_down(a, err_last());
	while (reply->len && (reply->buf[reply->len - 1] == '\n' || reply->len > PUSH_MESSAGE_MAX))
		reply->buf[--reply->len] = '\0';
	if (status > 0 && !(status >= 200 && status < 300) && status != 409 && status != 422) {
		char *msg = xasprintf("POST %s: answered %d%s%s", url.buf, status,
				      reply->len ? ": " : "", reply->buf);

		say_down(a, msg);
		free(msg);
		status = 0;
	}
	strbuf_release(&url);
	return status < 0 && status != -ECANCELED ? 0 : status;
}

/* Sends comparison id. Returns 1 when the hub answered for it for good
 * (stored, had it, or refused it), 0 when it stays in the backlog and the
 * turn should end, or a negative errno (the database's, or -ECANCELED). */
static int push_one(struct agent *a, int64_t id)
{
	struct strbuf rec = STRBUF_INIT, reply = STRBUF_INIT;
	struct db_comparison c;
	int r, status;

	memset(&c, 0, sizeof(c));
	r = db_comparison_load(a->db, &c, id);
	if (r == 0)
		r = wire_record_build(&rec, &c, false);
	if (r < 0)
		goto out;
	status = send_record(a, &reply, "/api/v1/ingest/comparisons", &rec);
	if (status <= 0) {
		r = status;
	} else if (status == 409 || status == 422) {
		log_warnx("push: comparison %lld refused by the hub (%d: %s): kept here, not sent "
			  "again", (long long)id, status, reply.buf);
		r = db_push_mark(a->db, id, status, 0, reply.buf);
	} else {
		r = db_push_mark(a->db, id, status, hub_id(&reply), NULL);
	}
	if (status > 0 && r == 0)
		r = 1;
out:
	db_comparison_release(&c);
	strbuf_release(&rec);
	strbuf_release(&reply);
	return r;
}

/* Sends job j's newest update, as push_one. */
static int push_job(struct agent *a, const struct db_job *j)
{
	struct strbuf rec = STRBUF_INIT, reply = STRBUF_INIT;
	int r, status;

	r = wire_job_record_build(&rec, j, a->host);
	if (r < 0)
		goto out;
	status = send_record(a, &reply, "/api/v1/ingest/jobs", &rec);
	if (status <= 0) {
		r = status;
		goto out;
	}
	if (status == 409 || status == 422)
		log_warnx("push: update %lld of job %lld refused by the hub (%d: %s): kept here, "
			  "not sent again", (long long)j->seq, (long long)j->id, status, reply.buf);
	r = db_job_pushed(a->db, j->id, j->seq, status, status >= 300 ? reply.buf : NULL);
	if (r == 0)
		r = 1;
out:
	strbuf_release(&rec);
	strbuf_release(&reply);
	return r;
}

/* Sends build id with its done runner results, as push_one. */
static int push_build(struct agent *a, int64_t id)
{
	struct strbuf rec = STRBUF_INIT, reply = STRBUF_INIT;
	struct db_runner_result *rs = NULL;
	struct db_build b;
	size_t n = 0, i;
	int r, status;

	r = db_build_load(a->db, &b, id);
	if (r == 0)
		r = db_runner_results_load(a->db, &rs, &n, id);
	if (r == 0)
		r = wire_build_record_build(&rec, &b, a->host, rs, n);
	if (r < 0)
		goto out;
	status = send_record(a, &reply, "/api/v1/ingest/builds", &rec);
	if (status <= 0) {
		r = status;
		goto out;
	}
	if (status == 409 || status == 422)
		log_warnx("push: build %lld refused by the hub (%d: %s): kept here, not sent again",
			  (long long)id, status, reply.buf);
	r = db_build_pushed(a->db, id, n, status, status >= 300 ? reply.buf : NULL);
	if (r == 0)
		r = 1;
out:
	for (i = 0; i < n; i++)
		db_runner_result_release(&rs[i]);
	free(rs);
	db_build_release(&b);
	strbuf_release(&rec);
	strbuf_release(&reply);
	return r;
}

/* The finished builds with runner results not sent yet: a build is at the
 * hub before the comparisons that name it. */
static int push_builds(struct agent *a)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	int r;

	r = db_builds_unpushed(a->db, &ids, &n, AGENT_PUSH_BATCH);
	for (i = 0; r >= 0 && i < n; i++) {
		r = push_build(a, ids[i]);
		if (r == 0)
			a->push_down = true;
		if (r <= 0)
			break;
	}
	free(ids);
	return r < 0 ? r : 0;
}

/* The jobs' updates, oldest first: a job is at the hub before its
 * comparisons, which then find it. */
static int push_jobs(struct agent *a, int *sent)
{
	struct db_job *jobs = NULL;
	size_t n = 0, i;
	int r;

	r = db_jobs_unpushed(a->db, &jobs, &n, AGENT_PUSH_BATCH);
	for (i = 0; r >= 0 && i < n; i++) {
		r = push_job(a, &jobs[i]);
		if (r == 0)
			a->push_down = true;
		if (r <= 0)
			break;
		(*sent)++;
	}
	for (i = 0; i < n; i++)
		db_job_release(&jobs[i]);
	free(jobs);
	return r < 0 ? r : 0;
}

/* Sends alert al's newest update with its findings, as push_one. */
static int push_alert(struct agent *a, const struct db_alert *al)
{
	struct strbuf rec = STRBUF_INIT, reply = STRBUF_INIT;
	struct db_alert_finding *f = NULL;
	size_t n = 0, i;
	int r, status;

	r = db_alert_findings(a->db, &f, &n, al->id);
	if (r == 0)
		r = wire_alert_record_build(&rec, al, a->host, f, n);
	if (r < 0)
		goto out;
	status = send_record(a, &reply, "/api/v1/ingest/alerts", &rec);
	if (status <= 0) {
		r = status;
		goto out;
	}
	if (status == 409 || status == 422)
		log_warnx("push: update %lld of alert %lld refused by the hub (%d: %s): kept "
			  "here, not sent again", (long long)al->seq, (long long)al->id, status,
			  reply.buf);
	r = db_alert_pushed(a->db, al->id, al->seq, status, status >= 300 ? reply.buf : NULL);
	if (r == 0)
		r = 1;
out:
	for (i = 0; i < n; i++)
		db_alert_finding_release(&f[i]);
	free(f);
	strbuf_release(&rec);
	strbuf_release(&reply);
	return r;
}

/* The alerts' updates, oldest first, after the comparisons they name. */
static int push_alerts(struct agent *a)
{
	struct db_alert *alerts = NULL;
	size_t n = 0, i;
	int r;

	r = db_alerts_unpushed(a->db, &alerts, &n, AGENT_PUSH_BATCH);
	for (i = 0; r >= 0 && i < n; i++) {
		r = push_alert(a, &alerts[i]);
		if (r == 0)
			a->push_down = true;
		if (r <= 0)
			break;
	}
	for (i = 0; i < n; i++)
		db_alert_release(&alerts[i]);
	free(alerts);
	return r < 0 ? r : 0;
}

int agent_push(struct agent *a)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	int sent = 0, jobs = 0, r;

	if (!a->push_auth || a->push_down)
		return 0;
	r = push_builds(a);
	if (r < 0 || a->push_down)
		return r;
	r = push_jobs(a, &jobs);
	if (r < 0 || a->push_down)
		return r;
	r = db_push_pending(a->db, &ids, &n, AGENT_PUSH_BATCH);
	for (i = 0; r >= 0 && i < n; i++) {
		r = push_one(a, ids[i]);
		if (r == 0)
			a->push_down = true;   /* until the next loop turn */
		if (r <= 0)
			break;
		sent++;
	}
	free(ids);
	if (r < 0)
		return r;
	/* An alert names comparisons: it goes once none is left to send. */
	if (!a->push_down && n < AGENT_PUSH_BATCH)
		r = push_alerts(a);
	if (r < 0)
		return r;
	if ((sent || jobs) && a->push_error) {
		log_info("push: the hub answers again");
		free(a->push_error);
		a->push_error = NULL;
	}
	if (sent)
		log_info("push: %d comparison%s sent to %s", sent, sent == 1 ? "" : "s",
			 a->cfg->hub.url);
	return sent;
}

void agent_heartbeat(struct agent *a, const char *state, int64_t job)
{
	struct wire_heartbeat h;
	struct strbuf rec = STRBUF_INIT, reply = STRBUF_INIT;
	struct db_host q;
	struct timespec now;
	int64_t ms;

	if (!a->push_auth || a->push_down)
		return;
	memset(&h, 0, sizeof(h));
	memset(&q, 0, sizeof(q));
	clock_gettime(CLOCK_REALTIME, &now);
	/* The clock in milliseconds, strictly rising within a run: the hub
	 * keeps the heartbeat with the highest. */
	ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	a->heartbeat_seq = ms > a->heartbeat_seq ? ms : a->heartbeat_seq + 1;
	snprintf(h.host, sizeof(h.host), "%s", a->host);
	h.seq = a->heartbeat_seq;
	time_now_iso(h.sent_at);
	snprintf(h.state, sizeof(h.state), "%s", state);
	h.job = job;
	db_push_backlog(a->db, &h.backlog);
	h.fingerprint = a->fingerprint;
	if (db_host_load(a->db, &q, a->host) == 0 && q.quarantined) {
		h.quarantined = true;
		h.fault = q.fault;
		snprintf(h.since, sizeof(h.since), "%s", q.since);
	}
	wire_heartbeat_build(&rec, &h);
	if (send_record(a, &reply, "/api/v1/ingest/heartbeat", &rec) == 0)
		a->push_down = true;
	db_host_release(&q);
	strbuf_release(&rec);
	strbuf_release(&reply);
}

int agent_push_turn(struct agent *a)
{
	int r;

	a->push_down = false;
	r = agent_push(a);
	if (r >= 0)
		agent_heartbeat(a, "idle", 0);
	return r;
}

#define HUB_PULLS_REPLY_MAX (4 * 1024 * 1024)   /* bytes of the hub's list */

int agent_hub_pulls(struct agent *a, struct web_hub_pull **out, size_t *out_n)
{
	struct strbuf reply = STRBUF_INIT, url = STRBUF_INIT;
	int status, r;

	*out = NULL;
	*out_n = 0;
	strbuf_addf(&url, "%s/api/v1/hub/pulls", a->cfg->hub.url);
	struct wire_http h = { .auth = a->push_auth, .ca_file = a->cfg->hub.ca_file,
			      .timeout_s = a->cfg->hub.timeout_s, .cancel_fd = a->cancel_fd,
			      .max = HUB_PULLS_REPLY_MAX };

	status = wire_http_get(&reply, &h, url.buf);
	if (status < 0)
		r = status;
	else if (status != 200)
		r = err_set(-EIO, "GET %s: answered %d", url.buf, status);
	else if ((r = web_hub_pulls_parse(out, out_n, reply.buf, reply.len)) < 0)
		err_set(r, "GET %s: %s", url.buf, err_last());
	strbuf_release(&reply);
	strbuf_release(&url);
	return r;
}
