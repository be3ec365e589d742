/*
 * The agent's push to the hub ([hub], docs/hub.md): every done comparison,
 * oldest first, as the record perfd export prints, to POST
 * /api/v1/ingest/comparisons. The agent's database is the spool: a
 * comparison counts as sent only once the hub answered 200 or 201 (the
 * pushed table says so); a 409 or 422 is a refusal for good, kept with the
 * hub's message and logged once; anything else (a 5xx, a timeout, a refused
 * connection) leaves it in the backlog for the next loop turn. Each request
 * is bounded, and a turn sends at most AGENT_PUSH_BATCH records, so a slow
 * or absent hub never stops the measuring.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent-internal.h"
#include "db.h"
#include "forge.h"
#include "runners.h"

#define PUSH_REPLY_MAX 4096        /* bytes of the hub's answer kept */
#define PUSH_MESSAGE_MAX 1000      /* bytes of a refusal's message stored */

int agent_push_token(char **out, const struct agent_hub *h)
{
	char *token = NULL;
	bool loose = false;
	int r;

	*out = NULL;
	r = web_gh_token_read(&token, h->token_file, &loose);
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

/* Says a failure once: the same one again, turn after turn, is not logged
 * again until the hub answers. */
static void say_down(struct agent *a, const char *msg)
{
	if (a->push_error && !strcmp(a->push_error, msg))
		return;
	log_warnx("push: %s; the backlog is sent when the hub answers", msg);
	free(a->push_error);
	a->push_error = xstrdup(msg);
}

/* Sends comparison id. Returns 1 when the hub answered for it for good
 * (stored, had it, or refused it), 0 when it stays in the backlog and the
 * turn should end, or a negative errno (the database's, or -ECANCELED). */
static int push_one(struct agent *a, int64_t id)
{
	struct strbuf rec = STRBUF_INIT, reply = STRBUF_INIT, url = STRBUF_INIT;
	struct db_comparison c;
	int r, status;

	memset(&c, 0, sizeof(c));
	r = db_comparison_load(a->db, &c, id);
	if (r == 0)
		r = runner_record_build(&rec, &c, false);
	if (r < 0)
		goto out;
	strbuf_addf(&url, "%s/api/v1/ingest/comparisons", a->cfg->hub.url);
	status = web_http_post_json(&reply, url.buf, a->push_auth, rec.buf, rec.len,
				    AGENT_PUSH_TIMEOUT_S, a->cancel_fd, PUSH_REPLY_MAX);
	if (status == -ECANCELED) {
		r = status;
		goto out;
	}
	if (status < 0) {
		say_down(a, err_last());
		r = 0;
		goto out;
	}
	while (reply.len && (reply.buf[reply.len - 1] == '\n' || reply.len > PUSH_MESSAGE_MAX))
		reply.buf[--reply.len] = '\0';
	if (status == 200 || status == 201) {
		r = db_push_mark(a->db, id, status, hub_id(&reply), NULL);
		if (r == 0)
			r = 1;
	} else if (status == 409 || status == 422) {
		log_warnx("push: comparison %lld refused by the hub (%d: %s): kept here, not sent "
			  "again", (long long)id, status, reply.buf);
		r = db_push_mark(a->db, id, status, 0, reply.buf);
		if (r == 0)
			r = 1;
	} else {
		char *msg = xasprintf("POST %s: answered %d%s%s", url.buf, status,
				      reply.len ? ": " : "", reply.buf);

		say_down(a, msg);
		free(msg);
		r = 0;
	}
out:
	db_comparison_release(&c);
	strbuf_release(&rec);
	strbuf_release(&reply);
	strbuf_release(&url);
	return r;
}

int agent_push(struct agent *a)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	int sent = 0, r;

	if (!a->push_auth || a->push_down)
		return 0;
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
	if (sent && a->push_error) {
		log_info("push: the hub answers again");
		free(a->push_error);
		a->push_error = NULL;
	}
	if (sent)
		log_info("push: %d comparison%s sent to %s", sent, sent == 1 ? "" : "s",
			 a->cfg->hub.url);
	return sent;
}

int agent_push_turn(struct agent *a)
{
	a->push_down = false;
	return agent_push(a);
}
