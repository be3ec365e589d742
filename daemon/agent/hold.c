/*
 * The agent and its holds (docs/hosts.md, "When the machine goes down"). At
 * its start on a host with a device, each step an earlier boot left
 * running is taken for a hang that took the machine down: its commit is
 * held, with what the previous boot's kernel log kept, and the host
 * quarantined, before the rows are abandoned and could be run again. Then
 * no job or A/A runs a held commit until a person releases it, and a
 * quarantined host runs nothing on its device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "wire.h"

/* Holds in force said at a start or in a summary, at most. */
#define HOLDS_SAID_MAX 10

/* The way out of hold h, for people: the release of the commit and, but
 * for a gate, of the host. */
static void say_release(struct strbuf *sb, const struct agent *a, const struct db_hold *h)
{
	strbuf_addf(sb, "'perfd retry --held %lld --db %s' runs it", (long long)h->id,
		    a->cfg->database);
	if (h->why != DB_HOLD_GATE)
		strbuf_addf(sb, " again; 'perfd host clear --db %s %s' lets the host take other "
			    "heads", a->cfg->database, a->host);
	if (a->cfg->hub.url)
		strbuf_addf(sb, "; at the hub, a maintainer's '/perfd greenlight %s' on its pull "
			    "request releases it", a->host);
}

int agent_holds_open(struct agent *a)
{
	struct runner_boot_log log = { 0 };
	struct db_hold *v = NULL;
	size_t n = 0, i;
	int r;

	if (!a->profile || !host_profile_has_device(a->profile))
		return 0;
	r = db_hold_suspects(a->db, &v, &n, a->host);
	if (r == 0 && n)
		r = runner_boot_log_scan(&log, a->profile);
	for (i = 0; r == 0 && i < n; i++) {
		int64_t id;

		v[i].fault = log.fault ? xstrdup(log.fault) : NULL;
		v[i].log_read = xstrdup(log.source);
		r = runner_hold_store(a->db, &id, &v[i], NULL);
	}
	for (i = 0; i < n; i++)
		db_hold_release(&v[i]);
	free(v);
	runner_boot_log_release(&log);
	return r < 0 ? r : (int)n;
}

/* The first hold in force of commit (by itself, or by its tree with this
 * recipe) into *out: 1, 0 when it is not held, or an error. */
static int commit_held(struct agent *a, struct db_hold *out, const char *commit)
{
	struct builder_commit c;
	int r;

	memset(out, 0, sizeof(*out));
	if (!*commit)
		return 0;
	/* A commit the mirror no longer has is matched by its id alone. */
	if (builder_commit_load(a->repo, &c, commit) < 0)
		memset(&c, 0, sizeof(c));
	r = db_hold_find(a->db, out, a->host, commit, c.tree, a->recipe_hash);
	builder_commit_release(&c);
	return r == -ENOENT ? 0 : r < 0 ? r : 1;
}

/* [gate] paths: a job whose change touches one is held before its
 * commit's first run on this host, once; released, that hold lets it by. */
static int gate(struct agent *a, const struct db_job *job)
{
	struct db_hold h = { .why = DB_HOLD_GATE, .step = DB_HOLD_JOB, .job_id = job->id };
	struct builder_commit c;
	char *path = NULL;
	int64_t id;
	int r;

	if (!a->profile || !a->profile->ngate)
		return 0;
	r = db_hold_last(a->db, &h, a->host, job->commit, DB_HOLD_GATE);
	db_hold_release(&h);
	if (r != -ENOENT)
		return r;
	r = builder_diff_touches(a->repo, &path, job->base, job->commit,
				 (const char *const *)a->profile->gate, a->profile->ngate);
	if (r <= 0)
		return r;
	h = (struct db_hold){ .why = DB_HOLD_GATE, .step = DB_HOLD_JOB, .job_id = job->id,
			      .detail = path };
	snprintf(h.host, sizeof(h.host), "%s", a->host);
	snprintf(h.commit, sizeof(h.commit), "%s", job->commit);
	snprintf(h.recipe, sizeof(h.recipe), "%s", a->recipe_hash);
	if (builder_commit_load(a->repo, &c, job->commit) == 0)
		snprintf(h.tree, sizeof(h.tree), "%s", c.tree);
	builder_commit_release(&c);
	r = db_hold_add(a->db, &id, &h);
	free(path);
	return r;
}

int agent_job_held(struct agent *a, const struct db_job *job)
{
	const char *commits[] = { job->commit, job->base };
	struct db_hold h;
	size_t i;
	int r = gate(a, job);

	for (i = 0; i < ARRAY_SIZE(commits) && r == 0; i++) {
		struct strbuf sb = STRBUF_INIT;
		char *text;

		r = commit_held(a, &h, commits[i]);
		if (r <= 0)
			continue;
		r = db_job_hold(a->db, job->id, h.id);
		if (r == 0) {
			text = runner_hold_text(&h);
			strbuf_addf(&sb, "job %lld (%s at %.12s) waits: its %s %.12s is held on this "
				    "host (hold %lld: %s); ", (long long)job->id, job->head,
				    job->commit, i ? "base" : "commit", commits[i], (long long)h.id,
				    text);
			say_release(&sb, a, &h);
			log_warnx("%s", sb.buf);
			free(text);
			r = 1;
		}
		strbuf_release(&sb);
		db_hold_release(&h);
	}
	return r;
}

int agent_build_held(struct agent *a, const struct db_build *b)
{
	struct db_hold h;
	int r = db_hold_find(a->db, &h, a->host, b->commit, b->tree, b->recipe_hash);

	db_hold_release(&h);
	return r == -ENOENT ? 0 : r < 0 ? r : 1;
}

int agent_refuse_quarantined(struct agent *a)
{
	struct strbuf sb = STRBUF_INIT;
	struct db_hold *v = NULL;
	struct db_host h;
	size_t n = 0, i;
	int r = 0;

	if (!a->profile || db_host_load(a->db, &h, a->host) < 0)
		return 0;
	if (h.quarantined) {
		strbuf_addf(&sb, "host '%s' is quarantined (%s): no GPU work until 'perfd host clear "
			    "--db %s %s'", a->host, h.fault ? h.fault : "", a->cfg->database, a->host);
		if (db_hold_list(a->db, &v, &n, a->host, true) == 0 && n)
			strbuf_addf(&sb, "; a held commit runs again only after 'perfd retry --held "
				    "--db %s'", a->cfg->database);
		r = err_set(-EPERM, "%s", sb.buf);
	}
	for (i = 0; i < n; i++)
		db_hold_release(&v[i]);
	free(v);
	strbuf_release(&sb);
	db_host_release(&h);
	return r;
}

void agent_holds_say(struct agent *a, FILE *f)
{
	struct db_hold *v = NULL;
	size_t n = 0, i;

	if (db_hold_list(a->db, &v, &n, a->host, true) < 0)
		return;
	for (i = 0; i < n; i++) {
		if (i < HOLDS_SAID_MAX) {
			char *text = runner_hold_text(&v[i]);
			struct strbuf sb = STRBUF_INIT;

			strbuf_addf(&sb, "hold %lld: %s; ", (long long)v[i].id, text);
			say_release(&sb, a, &v[i]);
			if (f)
				fprintf(f, "%s\n", sb.buf);
			else
				log_warnx("%s", sb.buf);
			strbuf_release(&sb);
			free(text);
		}
		db_hold_release(&v[i]);
	}
	if (n > HOLDS_SAID_MAX && f)
		fprintf(f, "and %zu more held commits ('perfd host list --db %s')\n",
			n - HOLDS_SAID_MAX, a->cfg->database);
	else if (n > HOLDS_SAID_MAX)
		log_warnx("and %zu more held commits ('perfd host list --db %s')",
			  n - HOLDS_SAID_MAX, a->cfg->database);
	free(v);
}

int agent_holds_heartbeat(struct agent *a, struct wire_heartbeat *h)
{
	struct db_hold *v = NULL;
	size_t n = 0, i;
	int r = db_hold_list(a->db, &v, &n, a->host, true);

	h->holds = xcalloc((n < WIRE_HOLDS_MAX ? n : WIRE_HOLDS_MAX) + 1, sizeof(*h->holds));
	for (i = 0; i < n; i++) {
		struct wire_hold *w = &h->holds[h->nholds];

		if (h->nholds < WIRE_HOLDS_MAX) {
			*w = (struct wire_hold){ .id = v[i].id, .why = v[i].why, .step = v[i].step,
						 .text = runner_hold_text(&v[i]) };
			memcpy(w->commit, v[i].commit, sizeof(w->commit));
			memcpy(w->tree, v[i].tree, sizeof(w->tree));
			memcpy(w->since, v[i].created_at, sizeof(w->since));
			h->nholds++;
		}
		db_hold_release(&v[i]);
	}
	free(v);
	return r;
}

void agent_holds_greenlit(struct agent *a, const struct wire_heartbeat_reply *rep)
{
	size_t i;

	for (i = 0; i < rep->ngreenlit; i++) {
		const struct wire_greenlight *g = &rep->greenlit[i];
		struct db_hold h;
		char *by, *text;
		int r;

		/* Only a hold of this host still in force: an answer for one
		 * released since, here or by an earlier answer, changes nothing. */
		if (db_hold_load(a->db, &h, g->hold) < 0 || strcmp(h.host, a->host) ||
		    *h.released_at) {
			db_hold_release(&h);
			continue;
		}
		by = xasprintf("/perfd greenlight by %s on pull request #%d, at the hub", g->by,
			       g->pr);
		text = runner_hold_text(&h);
		r = runner_hold_lift(a->db, &h, by);
		if (r < 0)
			log_warnx("hold %lld: releasing it (%s): %s; asked again at the next "
				  "heartbeat", (long long)h.id, by, err_last());
		else
			log_info("hold %lld released by %s: %s; it runs again%s", (long long)h.id,
				 by, text, h.why == DB_HOLD_GATE ? "" : ", the host cleared");
		free(text);
		free(by);
		db_hold_release(&h);
	}
}
