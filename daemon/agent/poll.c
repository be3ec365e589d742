/*
 * The agent's watching: at each poll it fetches (in a child, perfd
 * fetch), reads the suite of the default branch, lists the heads and
 * queues a job for every watched head at a commit it has not seen, with
 * its base; pull heads only when their pull request allows it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "agent.h"
#include "builder.h"
#include "daemon.h"
#include "db.h"
#include "forge.h"
#include "cli.h"
#include "runners.h"

#define SUITE_FILE_MAX (256 * 1024)
#define FETCH_OUTPUT_MAX 4096
/* Failed heads a changed recipe queues again in one poll, at most. */
#define AGENT_REQUEUE_MAX 1000
/* The mirror's packs before the fetches' are joined (docs/performance.md,
 * "The agent over many polls"). */
#define AGENT_PACKS_MAX 32

static int head_base(struct agent *a, char out[BUILDER_OID_HEX], const struct builder_head *h,
		     const struct builder_commit *c)
{
	char ref[300];
	struct builder_commit base;
	int r;

	out[0] = '\0';
	if (!h->is_pull) {
		/* A branch head against its first parent; a root commit has none. */
		snprintf(out, BUILDER_OID_HEX, "%s", c->first_parent);
		return 0;
	}
	snprintf(ref, sizeof(ref), "origin/%s", a->cfg->pull_base);
	if (a->cfg->pull_base_mode == AGENT_BASE_MERGE_BASE)
		return builder_merge_base(a->repo, out, h->oid, ref);
	r = builder_commit_load(a->repo, &base, ref);
	if (r < 0)
		return r;
	snprintf(out, BUILDER_OID_HEX, "%s", base.oid);
	builder_commit_release(&base);
	return 0;
}

/* Reads the suite from the default branch as it is now: the operator's,
 * never the head's under test. A suite that does not parse leaves the one
 * read before in force (or none), with every error said. */
static int read_suite(struct agent *a)
{
	struct strbuf text = STRBUF_INIT, errors = STRBUF_INIT;
	struct agent_suite s;
	char *rev = xasprintf("origin/%s", a->cfg->default_branch);
	char *name = xasprintf("%s:%s", rev, a->cfg->suite_file);
	char hash[65];
	int r;

	r = builder_file_read(&text, a->repo, rev, a->cfg->suite_file, SUITE_FILE_MAX);
	if (r == 0)
		r = agent_suite_parse(&s, text.buf, text.len, name, &errors);
	if (r == 0) {
		r = agent_suite_recipe_hash(hash, &s);
		if (r < 0)
			agent_suite_release(&s);
	}
	if (r < 0) {
		fputs(errors.buf, stderr);
		log_warnx("suite: %s%s", err_last(), a->suite ? "; the suite read before stays" : "");
		goto out;
	}
	if (!a->suite || strcmp(hash, a->recipe_hash))
		log_info("suite from %s, recipe %.12s", name, hash);
	agent_suite_release(&a->repo_suite);
	a->repo_suite = s;
	a->suite = &a->repo_suite;
	memcpy(a->recipe_hash, hash, sizeof(hash));
out:
	strbuf_release(&text);
	strbuf_release(&errors);
	free(rev);
	free(name);
	return r;
}

/* Runs perfd fetch in a child process, bounded by [repo] timeout_s and
 * stopped with the agent: libgit2 1.5 has no bound on a server that
 * accepts the connection and never answers. Returns 0, -ECANCELED, or the
 * fetch's error with its message. */
static int fetch(struct agent *a)
{
	const char *argv[9] = { "/proc/self/exe", "fetch", "--dir", a->mirror, "--url",
				a->cfg->url };
	size_t argc = 6;
	const char *url = builder_repo_url(a->repo);
	struct child_env env;
	struct child ch;
	char *why = NULL;
	int r;

	if (a->cfg->pulls)
		argv[argc++] = "--pulls";
	/* A span that starts at a release tag needs the tags. */
	if (a->cfg->history.on && a->cfg->history.reference == AGENT_SPAN_TAG)
		argv[argc++] = "--tags";
	child_env_init(&env);
	if (a->fetch_token)
		child_env_setf(&env, "%s=%s", AGENT_FETCH_TOKEN_ENV, a->fetch_token);
	child_init(&ch);
	ch.argv = argv;
	ch.env = (const char *const *)env.v;
	ch.timeout_s = a->cfg->fetch_timeout_s;
	ch.capture_max = FETCH_OUTPUT_MAX;
	/* The fetch holds the work directory's lock with us: a restart waits
	 * for a fetch its killed agent left, rather than race it. */
	ch.keep_fd = a->lock_fds[0];
	ch.cancel_fd = a->cancel_fd;
	r = child_run(&ch);
	if (r < 0)
		r = err_set(r, "git: fetch from '%s': %s", url, err_last());
	else if (ch.cancelled)
		r = err_set(-ECANCELED, "git: fetch from '%s': stopped", url);
	else if (ch.timed_out)
		r = err_set(-ETIMEDOUT, "git: fetch from '%s' did not end within %g s ([repo] "
			    "timeout_s); stopped, tried again at the next poll", url,
			    a->cfg->fetch_timeout_s);
	else if (ch.exit_code > 0 && !ch.spawn_error)
		/* perfd fetch said why on stdout, and exits with the errno. */
		r = err_set(-ch.exit_code, "%.*s", (int)strcspn(ch.out.buf, "\n"), ch.out.buf);
	else if ((why = child_failure(&ch, "the fetch process")))
		r = err_set(-EIO, "git: fetch from '%s': %s", url, why);
	free(why);
	child_release(&ch);
	child_env_release(&env);
	return r;
}

/* With a hub and no [github] of its own, the agent builds a pull head only
 * when the hub lists it, trusted, at that very commit, and against the base
 * the hub fixed for it: every host then compares the same two commits. A
 * head the hub does not list (or a hub that did not answer) waits. Returns
 * true when the head may be queued, with base set. */
static bool hub_pull_allowed(struct agent *a, const struct builder_head *h,
			     const struct web_hub_pull *ps, size_t n, bool known,
			     char base[BUILDER_OID_HEX])
{
	struct builder_commit c;
	size_t i;

	for (i = 0; known && i < n && ps[i].number != h->pull; i++)
		;
	if (!known || i == n || strcmp(ps[i].head, h->oid))
		return false;  /* closed, moved, or not known yet: a later poll sees it */
	if (!ps[i].trusted) {
		strbuf_addf(&a->waiting, "pull/%d at %.12s: waiting for a maintainer's /perfd run "
			    "(at the hub)\n", h->pull, h->oid);
		return false;
	}
	if (builder_commit_load(a->repo, &c, ps[i].base) < 0) {
		log_warnx("pull/%d at %.12s: the hub's base %.12s is not in the mirror (%s); "
			  "asked again at the next poll", h->pull, h->oid, ps[i].base, err_last());
		return false;
	}
	builder_commit_release(&c);
	snprintf(base, BUILDER_OID_HEX, "%s", ps[i].base);
	return true;
}

/* What a poll knows of the open pull requests: [github]'s list, or the
 * hub's when the agent has no [github] of its own; each with whether it
 * was had. */
struct poll_pulls {
	struct web_gh_pull *open;
	size_t nopen;
	bool known;
	bool from_hub;
	struct web_hub_pull *hub_open;
	size_t nhub;
	bool hub_known;
};

static void poll_pulls_release(struct poll_pulls *p)
{
	free(p->open);
	free(p->hub_open);
}

/* Fills p for this poll: an open list that could not be had is said, and
 * its pull heads wait for the next poll. Returns 0, or -ECANCELED. */
static int poll_pulls_read(struct agent *a, struct poll_pulls *p)
{
	size_t i;
	int r;

	memset(p, 0, sizeof(*p));
	p->from_hub = !a->gh && a->push_auth && a->cfg->pulls;
	if (a->gh && a->cfg->pulls) {
		if (web_gh_pulls_open(a->gh, &p->open, &p->nopen) < 0)
			log_warnx("pull requests: %s; pull heads wait for the next poll",
				  err_last());
		else
			p->known = true;
		for (i = 0; p->known && i < p->nopen; i++)
			agent_pull_forecasts(a, &p->open[i]);
	}
	if (p->from_hub) {
		r = agent_hub_pulls(a, &p->hub_open, &p->nhub);
		if (r == -ECANCELED)
			return r;
		if (r < 0)
			log_warnx("pull heads: %s; they wait for the next poll", err_last());
		p->hub_known = r == 0;
	}
	return 0;
}

/* Whether head h may be queued now; with the hub's list, base is then the
 * hub's. A pull head is anyone's code: it is built only in the sandbox. */
static bool head_allowed(struct agent *a, const struct builder_head *h,
			 const struct poll_pulls *p, char base[BUILDER_OID_HEX])
{
	if (!h->is_pull)
		return true;
	if (!a->sandbox) {
		strbuf_addf(&a->waiting, "%s at %.12s: not built: %s\n", h->name, h->oid,
			    a->unsandboxed);
		return false;
	}
	if (a->gh && (!p->known || !agent_pull_allowed(a, h, p->open, p->nopen)))
		return false;
	if (p->from_hub &&
	    !hub_pull_allowed(a, h, p->hub_open, p->nhub, p->hub_known, base))
		return false;
	return true;
}

/* Queues a job for head h, at a commit not seen before, with its base (the
 * hub's, when from_hub set it), and marks the head seen. Returns 0 or the
 * database's or the mirror's error. */
static int queue_head(struct agent *a, const struct builder_head *h, bool from_hub,
		      char base[BUILDER_OID_HEX])
{
	struct builder_commit c;
	struct db_job queued;
	int64_t job;
	int r;

	r = builder_commit_load(a->repo, &c, h->oid);
	if (r < 0)
		return r;
	if (!(from_hub && h->is_pull) && head_base(a, base, h, &c) < 0) {
		log_warnx("head %s: no base (%s): it is built and checked, not compared",
			  h->name, err_last());
		base[0] = '\0';
	}
	r = db_job_add(a->db, &job, h->name, h->oid, base, c.subject);
	if (r == 1)
		log_info("head %s at %.12s \"%s\": job %lld queued%s%.12s", h->name, h->oid,
			 c.subject ? c.subject : "", (long long)job, *base ? ", base " : ", no base",
			 base);
	builder_commit_release(&c);
	if (r >= 0)
		r = db_head_set(a->db, h->name, h->oid, h->is_pull);
	if (r < 0)
		return r;
	if (a->gh && db_job_get(a->db, &queued, h->name, h->oid) == 0) {
		agent_job_status(a, &queued);
		db_job_release(&queued);
	}
	return 0;
}

/* A failed head whose commit was built only with another recipe than the
 * suite's now: the [build] recipe changed since it failed, and the job is
 * queued again (docs/config.md, "When a job fails"). A head that failed
 * with this recipe too waits for a new commit or perfd retry. */
static int requeue_other_recipe(struct agent *a)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	int r;

	if (!a->suite)
		return 0;
	r = db_jobs_failed_recipe(a->db, &ids, &n, a->host, a->recipe_hash, AGENT_REQUEUE_MAX);
	for (i = 0; r >= 0 && i < n; i++) {
		r = db_job_retry(a->db, ids[i], false, NULL);
		if (r >= 0)
			log_info("job %lld: queued again: it failed with another [build] recipe "
				 "than this one (%.12s)", (long long)ids[i], a->recipe_hash);
	}
	free(ids);
	return r < 0 ? r : 0;
}

/* Joins the fetches' packs past AGENT_PACKS_MAX and lets go of what the
 * last poll's reads kept open: else every pack stays mapped for good. */
int agent_poll_mirror(struct agent *a)
{
	int r;

	r = fetch(a);
	if (r < 0)
		return r == -ECANCELED ? r : err_set(r, "fetch: %s", err_last());
	r = builder_repo_consolidate(a->repo, AGENT_PACKS_MAX);
	if (r < 0)
		log_warnx("%s; the packs stay as they are", err_last());
	r = builder_repo_refresh(a->repo);
	if (r < 0)
		return r;
	if (a->cfg->suite_file)
		read_suite(a);
	return 0;
}

int agent_poll(struct agent *a)
{
	struct builder_head *heads = NULL;
	struct poll_pulls p = { 0 };
	const char **names = NULL;
	size_t n = 0, i;
	int r;

	r = agent_poll_mirror(a);
	if (r < 0)
		return r;
	r = builder_repo_heads(a->repo, &heads, &n, (const char *const *)a->cfg->branches,
			       a->cfg->nbranches, a->cfg->pulls);
	if (r < 0)
		return r;
	/* With [github], a pull head is built only when its pull request is
	 * open and trusted: without the list, none is. */
	strbuf_reset(&a->waiting);
	r = poll_pulls_read(a, &p);
	if (r < 0)
		goto out;
	names = xcalloc(n + 1, sizeof(*names));
	for (i = 0; i < n; i++) {
		char seen[DB_OID_HEX], base[BUILDER_OID_HEX] = "";

		names[i] = heads[i].name;
		r = db_head_get(a->db, seen, heads[i].name);
		if (r == 0 && !strcmp(seen, heads[i].oid))
			continue;
		if (r < 0 && r != -ENOENT)
			goto out;
		r = 0;
		if (!head_allowed(a, &heads[i], &p, base))
			continue;
		r = queue_head(a, &heads[i], p.from_hub, base);
		if (r < 0)
			goto out;
	}
	r = db_heads_keep_only(a->db, names, n);
	if (r == 0)
		r = requeue_other_recipe(a);
	/* After the heads' jobs: a span's verdict is read once those of the
	 * commits it spans are known. */
	if (r == 0)
		r = agent_history_spans(a, heads, n);
	for (i = 0; r == 0 && i < p.nopen; i++)
		agent_pull_publish(a, &p.open[i]);
out:
	poll_pulls_release(&p);
	free(names);
	builder_heads_free(heads, n);
	return r < 0 ? r : 0;
}
