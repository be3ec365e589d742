/*
 * The agent and the pull requests' host: the client, commit statuses, the
 * comment of each open pull request, and the trust rule that decides which
 * pull heads are built.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "builder.h"
#include "daemon.h"
#include "db.h"
#include "forge.h"

/* A refused token stops the agent; an API out of reach, or a token that
 * may not ask its own login (a GitHub App's: set [github] login), is said
 * and asked again at each poll. */
int agent_pulls_open(struct agent *a)
{
	char *token = NULL;
	int r;

	r = forge_client(&a->gh, &a->cfg->github, a->cancel_fd,
				a->cfg->github.fetch_token ? &token : NULL);
	if (r < 0)
		return r;
	/* For the fetch process alone, which gives it only to the remote's own
	 * server over http(s) (the configuration checked the url). */
	a->fetch_token = token;
	a->pulls.gh = a->gh;
	a->pulls.db = a->db;
	a->pulls.hub_url = a->cfg->github.hub_url;
	a->pulls.key = a->cfg->github.comment_key;
	return forge_login_check(a->gh, &a->cfg->github);
}

/* Sets this host's status of commit, once per state and description,
 * linking to the hub's page of job (its state, why it failed, its table),
 * or of the commit when it has no job yet. */
void agent_status_set(struct agent *a, const char *commit, int64_t job, const char *state,
		       const char *desc)
{
	struct web_head_status s = { .host = a->host, .state = state, .desc = desc, .job = job };
	bool posted = false;

	if (!a->gh || !a->cfg->github.statuses)
		return;
	if (web_head_status_post(&posted, &a->pulls, commit, &s) < 0)
		log_warnx("status perfd/%s of %.12s: %s", a->host, commit, err_last());
	else if (posted)
		log_info("status perfd/%s of %.12s: %s, '%s'", a->host, commit, state, desc);
}

/* A job's status: pending until it ends; failure when it failed or a case
 * is slower; success otherwise, with the verdicts counted (web_job_verdicts). */
void agent_job_status(struct agent *a, const struct db_job *job)
{
	struct strbuf desc = STRBUF_INIT;
	const char *state = web_job_verdicts(&desc, a->db, job);

	agent_status_set(a, job->commit, job->id, state, desc.buf);
	strbuf_release(&desc);
}

/* Brings pull request p's statuses and comment up to date with the rows of
 * its head commit: nothing is sent where nothing changed. */
void agent_pull_publish(struct agent *a, const struct web_gh_pull *p)
{
	char head[32];
	struct db_job job;
	enum web_post what;
	int r;

	snprintf(head, sizeof(head), "pull/%d", p->number);
	r = db_job_get(a->db, &job, head, p->head_sha);
	if (r == 0) {
		agent_job_status(a, &job);
		db_job_release(&job);
	}
	if (!a->cfg->github.comment)
		return;
	/* Without a job the head waits for approval, or for the next fetch. */
	r = web_pull_head_comment(&what, &a->pulls, p->number, p->head_sha, r == 0);
	if (r < 0)
		log_warnx("comment on pull request %d: %s", p->number, err_last());
	else if (what != WEB_POST_UNCHANGED)
		log_info("comment on pull request %d for %.12s: %s", p->number, p->head_sha,
			 web_post_name(what));
}

void agent_pull_forecasts(struct agent *a, const struct web_gh_pull *p)
{
	struct strbuf msg = STRBUF_INIT;
	bool mirrored;

	/* The mirror has the head once it fetched it: no request then. */
	mirrored = builder_commit_message(a->repo, &msg, p->head_sha, WEB_FORECAST_BODY_MAX) == 0;
	if (web_pull_forecasts_record(&a->pulls, p, mirrored ? msg.buf : NULL) < 0)
		log_warnx("pull request %d at %.12s: forecasts: %s; read again at the next poll",
			  p->number, p->head_sha, err_last());
	strbuf_release(&msg);
}

/* Whether pull head h may be queued now: its pull request is open at that
 * very commit, and its author is allowed or a maintainer approved it. */
bool agent_pull_allowed(struct agent *a, const struct builder_head *h,
			 const struct web_gh_pull *open, size_t nopen)
{
	const struct forge_config *g = &a->cfg->github;
	const struct web_gh_pull *p = NULL;
	enum web_trust trust;
	char *approver = NULL;
	size_t i;

	for (i = 0; i < nopen && !p; i++) {
		if (open[i].number == h->pull)
			p = &open[i];
	}
	if (!p)
		return false;   /* closed: its ref stays on the host, it is not built */
	if (strcmp(p->head_sha, h->oid))
		return false;   /* moved since the fetch: the next poll sees the new head */
	if (web_pull_trust(&trust, &approver, &a->pulls, p, (const char *const *)g->allow,
			   g->nallow) < 0) {
		log_warnx("pull request %d: %s; not built until its author can be checked",
			  p->number, err_last());
		return false;
	}
	if (trust == WEB_TRUST_APPROVED)
		log_info("pull request %d at %.12s: approved by %s", p->number, p->head_sha,
			 approver);
	free(approver);
	if (trust != WEB_TRUST_WAITING)
		return true;
	agent_status_set(a, p->head_sha, 0, "pending", WEB_STATUS_WAITING);
	strbuf_addf(&a->waiting, "pull/%d at %.12s by %s: waiting for a maintainer's /perfd run\n",
		    p->number, p->head_sha, *p->author ? p->author : "(unknown)");
	return false;
}

/* Says a finished job on the pull requests' host: its commit's status,
 * and for a pull head the comment of the pull request's head as it is now
 * (which may have moved on: the comment then describes the new head). */
void agent_job_done(struct agent *a, const char *head, const char *commit)
{
	struct db_job job;
	struct web_gh_pull p;
	int pr;

	if (db_job_get(a->db, &job, head, commit) == 0) {
		agent_job_status(a, &job);
		db_job_release(&job);
	}
	if (sscanf(head, "pull/%d", &pr) != 1 || !a->cfg->github.comment)
		return;
	if (web_gh_pull_get(a->gh, &p, pr) < 0) {
		log_warnx("pull request %d: %s", pr, err_last());
		return;
	}
	if (p.open)
		agent_pull_publish(a, &p);
}
