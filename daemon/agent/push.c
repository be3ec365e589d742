/*
 * The agent's push to the hub ([hub], docs/hub.md): its records, through
 * web/wire's outbox (outbox.c: what is sent, in which order, and what
 * the hub's answers mean), and the host's heartbeat. The agent's database
 * is the spool; a hub that does not answer is said once and tried again at
 * the next loop turn, so a slow or absent hub never stops the measuring.
 * This file holds the agent's side: its token's header, the say-once of
 * the hub being down, when a turn pushes, and the hub's list of pull heads.
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

int agent_push_token(char **out, const struct agent_hub *h)
{
	char *token = NULL;
	int r;

	*out = NULL;
	r = wire_http_token_read(&token, h->token_file);
	if (r < 0)
		return err_set(r, "[hub] %s", err_last());
	*out = xasprintf("Authorization: Bearer %s", token);
	explicit_bzero(token, strlen(token));
	free(token);
	return 0;
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
 * after endpoint, is not logged again until the hub answers. ctx is the
 * agent. */
static void say_down(void *ctx, const char *msg)
{
	struct agent *a = ctx;

	if (a->push_error && !strcmp(failure_of(a->push_error), failure_of(msg)))
		return;
	log_warnx("push: %s; the backlog is sent when the hub answers", msg);
	free(a->push_error);
	a->push_error = xstrdup(msg);
}

/* A refusal for good, said once: the record is marked and never sent again. */
static void say_refused(void *ctx, const char *what, int status, const char *message)
{
	log_warnx("push: %s refused by the hub (%d: %s): kept here, not sent again", what,
		  status, message);
}

/* How a speaks to its hub, keeping max bytes of an answer. */
static struct wire_http hub_http(const struct agent *a, size_t max)
{
	return (struct wire_http){ .auth = a->push_auth, .ca_file = a->cfg->hub.ca_file,
				   .timeout_s = a->cfg->hub.timeout_s, .cancel_fd = a->cancel_fd,
				   .max = max };
}

/* a's outbox for one push. */
static void outbox_init(struct wire_outbox *ob, struct agent *a)
{
	*ob = (struct wire_outbox){
		.db = a->db, .host = a->host, .url = a->cfg->hub.url,
		.http = hub_http(a, WIRE_OUTBOX_REPLY_MAX),
		.batch = AGENT_PUSH_BATCH, .refused = say_refused, .unanswered = say_down,
		.ctx = a,
	};
}

int agent_push(struct agent *a)
{
	struct wire_outbox ob;
	size_t sent, jobs;
	int r;

	if (!a->push_auth || a->push_down)
		return 0;
	outbox_init(&ob, a);
	r = wire_outbox_push(&ob);
	a->push_down = ob.down;     /* until the next loop turn */
	if (r < 0)
		return r;
	sent = ob.answered[WIRE_OUTBOX_COMPARISONS];
	jobs = ob.answered[WIRE_OUTBOX_JOBS];
	if ((sent || jobs) && a->push_error) {
		log_info("push: the hub answers again");
		free(a->push_error);
		a->push_error = NULL;
	}
	if (sent)
		log_info("push: %zu comparison%s sent to %s", sent, sent == 1 ? "" : "s",
			 a->cfg->hub.url);
	return (int)sent;
}

/* What the heartbeat says of the sandbox (web/wire/wire.h): its name, or
 * none and why, cut to the bound; the caller's. */
static char *heartbeat_sandbox(const struct agent *a)
{
	const size_t max = WIRE_SANDBOX_MAX - strlen("none: ");
	size_t n;

	if (a->sandbox)
		return xstrdup("bubblewrap");
	if (!a->unsandboxed || !*a->unsandboxed)
		return xstrdup("none");
	n = utf8_cut(a->unsandboxed, strlen(a->unsandboxed), max);
	return xasprintf("none: %.*s", (int)n, a->unsandboxed);
}

void agent_heartbeat(struct agent *a, const char *state, int64_t job)
{
	struct wire_heartbeat_reply rep;
	struct wire_heartbeat h;
	struct wire_outbox ob;
	struct strbuf rec = STRBUF_INIT, reply = STRBUF_INIT;
	struct db_host q;
	struct timespec now;
	int64_t ms;
	size_t i;

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
	h.sandbox = heartbeat_sandbox(a);
	h.kind = a->profile ? a->profile->device_match : NULL;
	if (agent_holds_heartbeat(a, &h) < 0)
		log_warnx("the heartbeat's holds: %s; sent without them", err_last());
	wire_heartbeat_build(&rec, &h);
	outbox_init(&ob, a);
	memset(&rep, 0, sizeof(rep));
	if (wire_outbox_send(&ob, &reply, "/api/v1/ingest/heartbeat", &rec) == 200 &&
	    wire_heartbeat_reply_parse(&rep, reply.buf, reply.len) == 0)
		agent_holds_greenlit(a, &rep);
	wire_heartbeat_reply_release(&rep);
	a->push_down = ob.down;
	db_host_release(&q);
	free(h.sandbox);
	for (i = 0; i < h.nholds; i++)
		free(h.holds[i].text);
	free(h.holds);
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
	struct wire_http h;
	int status, r;

	*out = NULL;
	*out_n = 0;
	strbuf_addf(&url, "%s/api/v1/hub/pulls", a->cfg->hub.url);
	h = hub_http(a, HUB_PULLS_REPLY_MAX);
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
