/*
 * The agent's loop: watch heads, build each new head commit, run its
 * contract runners, compare it against its base, with every step a row in
 * the database before the next begins. A restart after kill -9 finds what
 * was running marked abandoned and does it again; what was done is found
 * done and skipped.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-internal.h"
#include "builder.h"
#include "daemon.h"
#include "db.h"
#include "forge.h"
#include "host-check-internal.h"
#include "runners.h"

#define BUILD_LOG_MAX (1024 * 1024)
#define TOOLCHAIN_TIMEOUT_S 30
#define ARTIFACTS_MAX 256

#define SUITE_FILE_MAX (256 * 1024)
#define FETCH_OUTPUT_MAX 4096

struct agent {
	struct agent_config *cfg;
	struct agent_suite *suite;   /* cfg's, or repo_suite; NULL until one is read */
	struct agent_suite repo_suite;
	struct db *db;
	struct builder_repo *repo;
	struct host_profile *profile;
	struct kernel_probe *probe;
	struct runner_fault_watch watch;
	struct web_gh_client *gh;        /* NULL without [github] */
	struct web_pulls pulls;          /* gh, db and [github]'s hub_url and comment_key */
	struct strbuf waiting;           /* the last poll's pull heads left unbuilt, a line each */
	char *fingerprint;
	char *mirror;                    /* WORKDIR/mirror.git */
	char *fetch_token;               /* [github] fetch_token's token, or NULL */
	char host[64];
	char recipe_hash[65];
	int cancel_fd;
	int cache_hits;
	int builds;
};

static bool cancelled(const struct agent *a)
{
	struct pollfd p = { .fd = a->cancel_fd, .events = POLLIN };

	return a->cancel_fd >= 0 && poll(&p, 1, 0) > 0;
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return err_set(-ENAMETOOLONG, "path '%s' is too long", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return err_set(-errno, "cannot create '%s': %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return err_set(-errno, "cannot create '%s': %s", buf, strerror(errno));
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* Removes a build directory a killed agent left behind. */
static int rm_rf(const char *path)
{
	if (access(path, F_OK) < 0)
		return 0;
	if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) < 0)
		return err_set(-errno, "cannot remove '%s': %s", path, strerror(errno));
	return 0;
}

/* Comparisons a killed agent left running get their summary now: the rule
 * makes them invalid ("interrupted"), their processes stay as they were. */
static int abandon_comparisons(struct agent *a)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	int r;

	r = db_comparison_ids_in_state(a->db, &ids, &n, DB_STATE_RUNNING);
	for (i = 0; r == 0 && i < n; i++) {
		struct db_comparison c;
		struct db_summary s;

		r = db_comparison_load(a->db, &c, ids[i]);
		if (r < 0)
			break;
		c.state = DB_STATE_ABANDONED;
		r = runner_rule_apply(&s, &c);
		if (r == 0)
			r = db_comparison_finish(a->db, c.id, DB_STATE_ABANDONED, &s, c.processes,
						 c.nprocesses);
		if (r == 0)
			log_info("comparison %lld was interrupted: kept as abandoned", (long long)c.id);
		db_summary_release(&s);
		db_comparison_release(&c);
	}
	free(ids);
	return r;
}

/* ---- the pull requests' host ---- */

int agent_github_client(struct web_gh_client **out, const struct agent_github *g, int cancel_fd,
			char **token_out)
{
	struct web_gh_options o = WEB_GH_OPTIONS_INIT;
	char *token = NULL;
	bool loose = false;
	int r;

	*out = NULL;
	if (token_out)
		*token_out = NULL;
	r = web_gh_token_read(&token, g->token_file, &loose);
	if (r < 0) {
		log_warnx("[github] %s", err_last());
		return r;
	}
	if (loose)
		log_warnx("[github] token file '%s' can be read by others than its owner: "
			  "chmod 600 it", g->token_file);
	o.api = g->api;
	o.repo = g->repo;
	o.token = token;
	o.timeout_s = g->timeout_s;
	o.max_wait_s = g->max_wait_s;
	o.retries = g->retries;
	o.backoff_s = g->backoff_s;
	o.cancel_fd = cancel_fd;
	r = web_gh_client_new(out, &o);
	if (r == 0 && token_out) {
		*token_out = token;
		token = NULL;
	}
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	if (r < 0)
		log_warnx("[github] %s", err_last());
	else if (g->login)
		web_gh_client_set_login(*out, g->login);
	return r;
}

/* A refused token stops the agent; an API out of reach, or a token that
 * may not ask its own login (a GitHub App's: set [github] login), is said
 * and asked again at each poll. */
static int github_open(struct agent *a)
{
	const char *login;
	char *token = NULL;
	int r;

	if (agent_github_client(&a->gh, &a->cfg->github, a->cancel_fd,
				a->cfg->github.fetch_token ? &token : NULL) < 0)
		return EXIT_USAGE;
	/* For the fetch process alone, which gives it only to the remote's own
	 * server over http(s) (the configuration checked the url). */
	a->fetch_token = token;
	a->pulls.gh = a->gh;
	a->pulls.db = a->db;
	a->pulls.hub_url = a->cfg->github.hub_url;
	a->pulls.key = a->cfg->github.comment_key;
	r = web_gh_login(a->gh, &login);
	if (r == -EKEYREJECTED) {
		log_warnx("[github] %s", err_last());
		return EXIT_USAGE;
	}
	if (r < 0)
		log_warnx("[github] %s; going on: the API is asked again at each poll", err_last());
	else
		log_info("[github] %s at %s, as %s", a->cfg->github.repo, a->cfg->github.api,
			 login);
	return EXIT_OK;
}

/* Sets this host's status of commit, once per state and description,
 * linking to the hub's page of job (its state, why it failed, its table),
 * or of the commit when it has no job yet. */
static void set_status(struct agent *a, const char *commit, int64_t job, const char *state,
		       const char *desc)
{
	const char *hub = a->cfg->github.hub_url;
	char *context, *url;
	bool posted = false;

	if (!a->gh || !a->cfg->github.statuses)
		return;
	context = xasprintf("perfd/%s", a->host);
	url = job > 0 ? xasprintf("%s/static/head.html?job=%lld", hub, (long long)job) :
			xasprintf("%s/static/head.html?commit=%s", hub, commit);
	if (web_commit_status_post(&posted, &a->pulls, commit, context, state, desc, url) < 0)
		log_warnx("status %s of %.12s: %s", context, commit, err_last());
	else if (posted)
		log_info("status %s of %.12s: %s, \"%s\"", context, commit, state, desc);
	free(context);
	free(url);
}

/* A job's status: pending until it ends; failure when it failed or a case
 * is slower; success otherwise, with the verdicts counted. */
static void job_status(struct agent *a, const struct db_job *job)
{
	struct strbuf desc = STRBUF_INIT, slow = STRBUF_INIT;
	int faster = 0, slower = 0, same = 0, other = 0;
	size_t k;

	if (job->state == DB_JOB_QUEUED || job->state == DB_JOB_RUNNING) {
		set_status(a, job->commit, job->id, "pending",
			   job->state == DB_JOB_QUEUED ? "queued" : "running");
		return;
	}
	if (job->state == DB_JOB_FAILED) {
		set_status(a, job->commit, job->id, "failure",
			   job->detail ? job->detail : "failed");
		return;
	}
	for (k = 0; a->suite && k < a->suite->ncases; k++) {
		const char *name = a->suite->cases[k].name;
		struct db_comparison c;
		enum db_state st;
		int64_t cid;

		if (db_job_comparison(a->db, &cid, &st, job->id, name) < 0 ||
		    db_comparison_load(a->db, &c, cid) < 0)
			continue;
		if (!strcmp(c.summary.verdict, "faster")) {
			faster++;
		} else if (!strcmp(c.summary.verdict, "unchanged")) {
			same++;
		} else if (!strcmp(c.summary.verdict, "slower")) {
			if (!slower++)
				strbuf_addf(&slow, "%s %+.3f%%", name, c.summary.gain_median * 100);
		} else {
			other++;
		}
		db_comparison_release(&c);
	}
	if (slower)
		strbuf_addf(&desc, "slower: %s (%d of %d cases)", slow.buf, slower,
			    faster + slower + same + other);
	else if (faster + same + other)
		strbuf_addf(&desc, "%d faster, %d unchanged, %d unresolved or invalid", faster,
			    same, other);
	else
		strbuf_addf(&desc, "built and checked%s", *job->base ? "" : "; no base to compare");
	set_status(a, job->commit, job->id, slower ? "failure" : "success", desc.buf);
	strbuf_release(&desc);
	strbuf_release(&slow);
}

/* Brings pull request p's statuses and comment up to date with the rows of
 * its head commit: nothing is sent where nothing changed. */
static void publish_pull(struct agent *a, const struct web_gh_pull *p)
{
	char head[32];
	struct db_job job;
	enum web_post what;
	int r;

	snprintf(head, sizeof(head), "pull/%d", p->number);
	r = db_job_get(a->db, &job, head, p->head_sha);
	if (r == 0) {
		job_status(a, &job);
		db_job_release(&job);
	}
	if (!a->cfg->github.comment)
		return;
	if (r < 0) {
		struct db_pull_comment pc;

		/* Nothing of this head yet (it waits for approval, or for the
		 * next fetch): a comment about an older head is made to name
		 * this one instead, and none is started. */
		if (db_pull_comment_get(a->db, &pc, a->cfg->github.repo, p->number,
					a->cfg->github.comment_key ? a->cfg->github.comment_key : "") < 0 ||
		    !pc.comment_id || !strcmp(pc.commit, p->head_sha))
			return;
	}
	r = web_pull_comment_post(&what, &a->pulls, p->number, p->head_sha);
	if (r < 0)
		log_warnx("comment on pull request %d: %s", p->number, err_last());
	else if (what != WEB_POST_UNCHANGED)
		log_info("comment on pull request %d for %.12s: %s", p->number, p->head_sha,
			 web_post_name(what));
}

/* Whether pull head h may be queued now: its pull request is open at that
 * very commit, and its author is allowed or a maintainer approved it. */
static bool pull_allowed(struct agent *a, const struct builder_head *h,
			 const struct web_gh_pull *open, size_t nopen)
{
	const struct agent_github *g = &a->cfg->github;
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
	set_status(a, p->head_sha, 0, "pending", "waiting for a maintainer's /perfd run");
	strbuf_addf(&a->waiting, "pull/%d at %.12s by %s: waiting for a maintainer's /perfd run\n",
		    p->number, p->head_sha, *p->author ? p->author : "(unknown)");
	return false;
}

int agent_open(struct agent **out, struct agent_config *cfg, int cancel_fd)
{
	struct agent *a = xcalloc(1, sizeof(*a));
	int r, ret = EXIT_USAGE;

	*out = NULL;
	a->cfg = cfg;
	a->cancel_fd = cancel_fd;
	strbuf_init(&a->waiting);
	a->watch.fd = -1;
	if (mkdir_p(cfg->workdir) < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	r = db_open(&a->db, cfg->database, 10000);
	if (r < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	if (cfg->host) {
		ret = host_check_device(&a->profile, &a->probe, cfg->host);
		if (ret != EXIT_OK)
			goto out;
		ret = EXIT_USAGE;
		snprintf(a->host, sizeof(a->host), "%s", a->profile->name);
		runner_fault_watch_open(&a->watch, a->profile->fault_log, a->profile);
		if (a->watch.off_reason)
			log_warnx("fault watch off: %s; every process is recorded so",
				  a->watch.off_reason);
	} else {
		a->probe = kernel_probe_host_only();
		if (gethostname(a->host, sizeof(a->host) - 1) < 0 || !*a->host)
			snprintf(a->host, sizeof(a->host), "local");
	}
	a->fingerprint = kernel_probe_json(a->probe, false);
	if (!cfg->suite_file) {
		a->suite = &cfg->suite;
		agent_suite_recipe_hash(a->recipe_hash, a->suite);
	}
	a->mirror = xasprintf("%s/mirror.git", cfg->workdir);
	r = builder_repo_open(&a->repo, a->mirror, cfg->url);
	if (r < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	if (cfg->github.on && github_open(a) != EXIT_OK)
		goto out;
	r = db_abandon_running(a->db);
	if (r > 0)
		log_info("%d build and runner step%s left running by a stopped agent: abandoned, "
			 "to be done again", r, r == 1 ? "" : "s");
	if (r >= 0)
		r = abandon_comparisons(a);
	if (r < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	ret = EXIT_OK;
out:
	if (ret != EXIT_OK) {
		agent_free(a);
		return ret;
	}
	*out = a;
	return EXIT_OK;
}

const char *agent_host(const struct agent *a)
{
	return a->host;
}

void agent_free(struct agent *a)
{
	if (!a)
		return;
	runner_fault_watch_close(&a->watch);
	web_gh_client_free(a->gh);
	strbuf_release(&a->waiting);
	builder_repo_free(a->repo);
	free(a->mirror);
	if (a->fetch_token) {
		explicit_bzero(a->fetch_token, strlen(a->fetch_token));
		free(a->fetch_token);
	}
	agent_suite_release(&a->repo_suite);
	host_profile_free(a->profile);
	kernel_probe_free(a->probe);
	free(a->fingerprint);
	db_close(a->db);
	free(a);
}

extern char **environ;

/* Our environment plus the entries given. The strings are borrowed. */
static const char **env_with(char *const *extra, size_t n)
{
	size_t m = 0, i;
	const char **env;

	while (environ[m])
		m++;
	env = xcalloc(m + n + 1, sizeof(char *));
	for (i = 0; i < m; i++)
		env[i] = environ[i];
	for (i = 0; i < n; i++)
		env[m + i] = extra[i];
	return env;
}

/* ---- watching ---- */

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
	if (r < 0) {
		fputs(errors.buf, stderr);
		log_warnx("suite: %s%s", err_last(), a->suite ? "; the suite read before stays" : "");
		goto out;
	}
	agent_suite_recipe_hash(hash, &s);
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
	const char *argv[] = { "/proc/self/exe", "fetch", "--dir", a->mirror, "--url",
			       a->cfg->url, a->cfg->pulls ? "--pulls" : NULL, NULL };
	char *token_env = NULL;
	const char **env;
	struct runner_child ch;
	int r;

	if (a->fetch_token)
		token_env = xasprintf("%s=%s", AGENT_FETCH_TOKEN_ENV, a->fetch_token);
	env = env_with(token_env ? &token_env : NULL, token_env ? 1 : 0);
	runner_child_init(&ch);
	ch.argv = argv;
	ch.env = env;
	ch.timeout_s = a->cfg->fetch_timeout_s;
	ch.capture_max = FETCH_OUTPUT_MAX;
	ch.cancel_fd = a->cancel_fd;
	r = runner_child_run(&ch);
	if (r < 0)
		r = err_set(r, "git: fetch from '%s': %s", builder_repo_url(a->repo), err_last());
	else if (ch.cancelled)
		r = -ECANCELED;
	else if (ch.timed_out)
		r = err_set(-ETIMEDOUT, "git: fetch from '%s' did not end within %g s ([repo] "
			    "timeout_s); stopped, tried again at the next poll",
			    builder_repo_url(a->repo), a->cfg->fetch_timeout_s);
	else if (ch.spawn_error)
		r = err_set(-EIO, "git: fetch: %s", ch.spawn_error);
	else if (ch.signal)
		r = err_set(-EIO, "git: fetch from '%s': the fetch process was killed by signal %d",
			    builder_repo_url(a->repo), ch.signal);
	else if (ch.exit_code)
		r = err_set(-ch.exit_code, "%.*s", (int)strcspn(ch.out.buf, "\n"), ch.out.buf);
	runner_child_release(&ch);
	free(env);
	if (token_env) {
		explicit_bzero(token_env, strlen(token_env));
		free(token_env);
	}
	return r;
}

int agent_poll(struct agent *a)
{
	struct builder_head *heads = NULL;
	struct web_gh_pull *open = NULL;
	const char **names = NULL;
	size_t n = 0, nopen = 0, i;
	bool pulls_known = false;
	int r;

	r = fetch(a);
	if (r == -ECANCELED)
		return r;
	if (r < 0) {
		log_warnx("fetch: %s", err_last());
		return r;
	}
	if (a->cfg->suite_file)
		read_suite(a);
	r = builder_repo_heads(a->repo, &heads, &n, (const char *const *)a->cfg->branches,
			       a->cfg->nbranches, a->cfg->pulls);
	if (r < 0) {
		log_warnx("%s", err_last());
		return r;
	}
	/* With [github], a pull head is built only when its pull request is
	 * open and trusted: without the list, none is. */
	strbuf_reset(&a->waiting);
	if (a->gh && a->cfg->pulls) {
		if (web_gh_pulls_open(a->gh, &open, &nopen) < 0)
			log_warnx("pull requests: %s; pull heads wait for the next poll",
				  err_last());
		else
			pulls_known = true;
	}
	names = xcalloc(n + 1, sizeof(*names));
	for (i = 0; i < n; i++) {
		char seen[DB_OID_HEX], base[BUILDER_OID_HEX] = "";
		struct builder_commit c;
		int64_t job;

		names[i] = heads[i].name;
		r = db_head_get(a->db, seen, heads[i].name);
		if (r == 0 && !strcmp(seen, heads[i].oid))
			continue;
		if (r < 0 && r != -ENOENT)
			goto out;
		if (a->gh && heads[i].is_pull &&
		    (!pulls_known || !pull_allowed(a, &heads[i], open, nopen)))
			continue;
		r = builder_commit_load(a->repo, &c, heads[i].oid);
		if (r < 0)
			goto out;
		if (head_base(a, base, &heads[i], &c) < 0) {
			log_warnx("head %s: no base (%s): it is built and checked, not compared",
				  heads[i].name, err_last());
			base[0] = '\0';
		}
		r = db_job_add(a->db, &job, heads[i].name, heads[i].oid, base, c.subject);
		if (r == 1)
			log_info("head %s at %.12s \"%s\": job %lld queued%s%.12s", heads[i].name,
				 heads[i].oid, c.subject ? c.subject : "", (long long)job,
				 *base ? ", base " : ", no base", base);
		builder_commit_release(&c);
		if (r >= 0)
			r = db_head_set(a->db, heads[i].name, heads[i].oid, heads[i].is_pull);
		if (r < 0)
			goto out;
		if (a->gh) {
			struct db_job queued;

			if (db_job_get(a->db, &queued, heads[i].name, heads[i].oid) == 0) {
				job_status(a, &queued);
				db_job_release(&queued);
			}
		}
	}
	r = db_heads_keep_only(a->db, names, n);
	for (i = 0; r == 0 && i < nopen; i++)
		publish_pull(a, &open[i]);
out:
	if (r < 0)
		log_warnx("%s", err_last());
	free(open);
	free(names);
	builder_heads_free(heads, n);
	return r < 0 ? r : 0;
}

/* ---- building ---- */

/* Runs a shell command in dir, stdout and stderr together, bounded. */
static int run_shell(struct runner_child *ch, const char *command, const char *dir,
		     const char *const *env, double timeout_s, int cancel_fd)
{
	const char *argv[4];
	char *line = xasprintf("exec 2>&1; %s", command);
	int r;

	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = line;
	argv[3] = NULL;
	ch->argv = argv;
	ch->env = env;
	ch->dir = dir;
	ch->timeout_s = timeout_s;
	ch->capture_max = BUILD_LOG_MAX;
	ch->cancel_fd = cancel_fd;
	r = runner_child_run(ch);
	free(line);
	return r;
}

static char *child_failure(const struct runner_child *ch, const char *what)
{
	if (ch->spawn_error)
		return xasprintf("%s could not start: %s", what, ch->spawn_error);
	if (ch->timed_out)
		return xasprintf("%s timed out after %.0f s", what, ch->wall_ms / 1e3);
	if (ch->signal)
		return xasprintf("%s was killed by signal %d", what, ch->signal);
	if (ch->exit_code)
		return xasprintf("%s exited %d", what, ch->exit_code);
	return NULL;
}

/* The toolchain's first line into b->toolchain (none when it fails);
 * -ECANCELED when the agent's stop cut it short. */
static int toolchain(struct agent *a, struct db_build *b)
{
	struct runner_child ch;
	const char **env;
	int r = 0;

	if (!a->suite->toolchain)
		return 0;
	env = env_with(NULL, 0);
	runner_child_init(&ch);
	if (run_shell(&ch, a->suite->toolchain, b->dir, env, TOOLCHAIN_TIMEOUT_S,
		      a->cancel_fd) == 0) {
		if (ch.cancelled)
			r = -ECANCELED;
		else if (!ch.exit_code && ch.out.len)
			b->toolchain = xstrndup(ch.out.buf, strcspn(ch.out.buf, "\n"));
	}
	runner_child_release(&ch);
	free(env);
	return r;
}

/* A build cut short by the agent's stop is no outcome of its commit: its
 * row is abandoned, and the next start builds the tree again. Returns
 * -ECANCELED, or the database's error. */
static int abandon_build(struct agent *a, int64_t id)
{
	int r = db_build_abandon(a->db, id);

	if (r < 0)
		return r;
	log_info("build %lld: stopped, abandoned; built again at the next start", (long long)id);
	return -ECANCELED;
}

static int hash_artifacts(struct agent *a, struct db_build *b)
{
	const struct agent_suite *s = a->suite;
	char **names = NULL;
	size_t n = 0, i;
	int r;

	r = builder_glob(&names, &n, b->dir, (const char *const *)s->artifacts, s->nartifacts,
			 ARTIFACTS_MAX);
	if (r < 0) {
		b->detail = xasprintf("artifacts: %s", err_last());
		return 0;
	}
	b->artifacts = xcalloc(n + 1, sizeof(*b->artifacts));
	for (i = 0; i < n && r == 0; i++) {
		struct db_build_artifact *ba = &b->artifacts[b->nartifacts++];

		ba->name = names[i];
		names[i] = NULL;
		ba->artifact.path = xasprintf("%s/%s", b->dir, ba->name);
		r = builder_file_sha256(ba->artifact.sha256, &ba->artifact.size, ba->artifact.path);
		if (r == 0)
			r = db_artifact_put(a->db, &ba->artifact.id, &ba->artifact);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

/* The build of commit on this host with this recipe: found done or failed
 * (a cache hit), or made now. *out is the caller's. */
static int ensure_build(struct agent *a, struct db_build *out, const char *commit)
{
	struct builder_commit c;
	struct db_build b;
	struct runner_child ch;
	const char **env = NULL;
	char *why;
	int r;

	memset(out, 0, sizeof(*out));
	r = builder_commit_load(a->repo, &c, commit);
	if (r < 0)
		return r;
	r = db_build_find(a->db, out, a->host, c.tree, a->recipe_hash);
	if (r == 0) {
		a->cache_hits++;
		log_info("build of %.12s (tree %.12s): cached, build %lld, %s", commit, c.tree,
			 (long long)out->id, db_build_state_name(out->state));
		builder_commit_release(&c);
		return 0;
	}
	if (r != -ENOENT) {
		builder_commit_release(&c);
		return r;
	}

	memset(&b, 0, sizeof(b));
	snprintf(b.host, sizeof(b.host), "%s", a->host);
	snprintf(b.commit, sizeof(b.commit), "%s", commit);
	snprintf(b.tree, sizeof(b.tree), "%s", c.tree);
	snprintf(b.recipe_hash, sizeof(b.recipe_hash), "%s", a->recipe_hash);
	builder_commit_release(&c);
	b.dir = xasprintf("%s/builds/%.12s-%.12s", a->cfg->workdir, b.tree, b.recipe_hash);
	b.fingerprint = a->fingerprint ? xstrdup(a->fingerprint) : NULL;
	time_now_iso(b.started_at);
	r = db_build_insert(a->db, &b.id, &b);
	if (r < 0)
		goto out;
	log_info("build %lld of %.12s: started in %s", (long long)b.id, commit, b.dir);
	a->builds++;
	r = rm_rf(b.dir);
	if (r == 0)
		r = mkdir_p(a->cfg->workdir);
	if (r == 0) {
		char *parent = xasprintf("%s/builds", a->cfg->workdir);

		r = mkdir_p(parent);
		free(parent);
	}
	if (r == 0)
		r = builder_checkout(a->repo, commit, b.dir);
	if (r < 0) {
		b.state = DB_BUILD_FAILED;
		b.detail = xasprintf("checkout: %s", err_last());
		r = 0;
		goto finish;
	}
	runner_child_init(&ch);
	env = env_with(a->suite->build_env, a->suite->nbuild_env);
	r = run_shell(&ch, a->suite->build_command, b.dir, env, a->suite->build_timeout_s,
		      a->cancel_fd);
	if (r == 0 && ch.cancelled)
		r = abandon_build(a, b.id);
	if (r < 0) {
		runner_child_release(&ch);
		goto out;
	}
	b.exit_code = ch.exit_code;
	b.signal = ch.signal;
	b.timed_out = ch.timed_out;
	b.wall_ms = ch.wall_ms;
	b.log_len = ch.out.len;
	b.log_bytes = ch.out_total;
	b.log = strbuf_detach(&ch.out);
	why = child_failure(&ch, "the build recipe");
	runner_child_release(&ch);
	if (why) {
		b.state = DB_BUILD_FAILED;
		b.detail = why;
	} else {
		r = hash_artifacts(a, &b);
		if (r == 0 && toolchain(a, &b) == -ECANCELED)
			r = abandon_build(a, b.id);
		if (r < 0)
			goto out;
		b.state = b.detail ? DB_BUILD_FAILED : DB_BUILD_DONE;
	}
finish:
	time_now_iso(b.finished_at);
	r = db_build_finish(a->db, &b);
	if (r < 0)
		goto out;
	log_info("build %lld of %.12s: %s%s%s (%.1f s)", (long long)b.id, commit,
		 db_build_state_name(b.state), b.detail ? ": " : "", b.detail ? b.detail : "",
		 b.wall_ms / 1e3);
	*out = b;
	memset(&b, 0, sizeof(b));
out:
	free(env);
	db_build_release(&b);
	return r;
}

/* ---- contract runners ---- */

static void on_runner_stdout(void *ctx, const char *buf, size_t len)
{
	runner_protocol_feed(ctx, buf, len);
}

/* The sha256 of the runner's program when its first word names a file of
 * the build; NULL when it names a command on PATH or a shell builtin. */
static char *runner_binary_sha(const struct db_build *b, const char *command)
{
	char *word = xstrndup(command, strcspn(command, " \t")), *path, hex[65];
	int64_t size;

	path = xasprintf("%s/%s", b->dir, word);
	free(word);
	if (builder_file_sha256(hex, &size, path) < 0) {
		free(path);
		return NULL;
	}
	free(path);
	return xstrdup(hex);
}

static int run_runners(struct agent *a, const struct db_build *b, int *out_failed)
{
	const struct agent_suite *s = a->suite;
	size_t i;
	int chunk, r = 0;

	for (i = 0; i < s->nrunners && r == 0; i++) {
		const struct agent_runner *run = &s->runners[i];

		for (chunk = 1; chunk <= run->chunks && r == 0; chunk++) {
			struct db_runner_result res;
			struct runner_child ch;
			struct runner_protocol proto;
			char chunk_env[2][32];
			char *extra[2] = { chunk_env[0], chunk_env[1] };
			const char **env;

			r = db_runner_result_done(a->db, b->id, run->name, chunk);
			if (r < 0)
				break;
			if (r == 1) {
				r = 0;
				continue;
			}
			if (cancelled(a))
				return -ECANCELED;
			memset(&res, 0, sizeof(res));
			res.build_id = b->id;
			snprintf(res.runner, sizeof(res.runner), "%s", run->name);
			res.chunk = chunk;
			res.chunks = run->chunks;
			res.binary_sha256 = runner_binary_sha(b, run->command);
			time_now_iso(res.started_at);
			r = db_runner_result_insert(a->db, &res.id, &res);
			if (r < 0) {
				db_runner_result_release(&res);
				break;
			}
			snprintf(chunk_env[0], sizeof(chunk_env[0]), "PERFD_CHUNK=%d", chunk);
			snprintf(chunk_env[1], sizeof(chunk_env[1]), "PERFD_CHUNKS=%d", run->chunks);
			env = env_with(extra, 2);
			runner_child_init(&ch);
			runner_protocol_init(&proto);
			ch.on_stdout = on_runner_stdout;
			ch.ctx = &proto;
			r = run_shell(&ch, run->command, b->dir, env, run->timeout_s, a->cancel_fd);
			free(env);
			if (r == 0) {
				runner_protocol_finish(&proto);
				time_now_iso(res.ended_at);
				res.exit_code = ch.exit_code;
				res.signal = ch.signal;
				res.timed_out = ch.timed_out;
				res.elapsed_ms = ch.wall_ms;
				res.spawn_error = ch.spawn_error;
				ch.spawn_error = NULL;
				res.output_len = ch.out.len;
				res.output = strbuf_detach(&ch.out);
				res.lines = proto.lines;
				res.nlines = proto.nlines;
				proto.lines = NULL;
				proto.nlines = 0;
				if (ch.cancelled)
					r = -ECANCELED;
				else
					r = db_runner_result_finish(a->db, &res);
				if (r == 0 && (res.exit_code || res.signal || res.timed_out ||
					       res.spawn_error))
					(*out_failed)++;
				if (r == 0)
					log_info("runner %s%s%.0d of build %lld: %s", run->name,
						 run->chunks > 1 ? " chunk " : "", run->chunks > 1 ? chunk : 0,
						 (long long)b->id, res.timed_out ? "timed out" :
						 res.exit_code || res.signal ? "failed" : "passed");
			}
			runner_protocol_release(&proto);
			runner_child_release(&ch);
			db_runner_result_release(&res);
		}
	}
	return r;
}

/* ---- comparisons ---- */

static const struct db_build_artifact *artifact_named(const struct db_build *b, const char *name)
{
	size_t i;
	const char *n = name;

	if (!strncmp(n, "./", 2))
		n += 2;
	for (i = 0; i < b->nartifacts; i++)
		if (!strcmp(b->artifacts[i].name, n))
			return &b->artifacts[i];
	return NULL;
}

static int run_case(struct agent *a, const struct db_job *job, const struct agent_case *k,
		    const struct db_build *base, const struct db_build *head, char **why)
{
	const struct db_build_artifact *old = artifact_named(base, k->program);
	const struct db_build_artifact *new = artifact_named(head, k->program);
	struct runner_pair_opts o;
	enum db_state state;
	int64_t cid;
	int r;

	r = db_job_comparison(a->db, &cid, &state, job->id, k->name);
	if (r == 0 && state == DB_STATE_DONE)
		return 0;
	if (r < 0 && r != -ENOENT)
		return r;
	if (!old || !new) {
		*why = xasprintf("case %s: '%s' is not among the artifacts of build %lld",
				 k->name, k->program, (long long)(!old ? base->id : head->id));
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.old.path = old->artifact.path;
	o.new.path = new->artifact.path;
	o.args = (const char *const *)k->args;
	o.nargs = k->nargs;
	o.old_artifact = old->artifact.id;
	o.new_artifact = new->artifact.id;
	o.old_sha256 = old->artifact.sha256;
	o.new_sha256 = new->artifact.sha256;
	o.job_id = job->id;
	o.base_build = base->id;
	o.head_build = head->id;
	o.pairs = k->pairs;
	o.warmup = k->warmup;
	o.timeout_s = a->profile && a->profile->process_timeout_s < k->timeout_s ?
		      a->profile->process_timeout_s : k->timeout_s;
	o.metric = k->metric;
	o.case_name = k->name;
	o.host = a->host;
	o.fingerprint = a->fingerprint;
	o.min_effect = a->profile ? a->profile->min_effect : 0.01;
	o.noise = a->profile ? a->profile->noise : 0.05;
	o.cpus = a->profile && *a->profile->cpus_text ? a->profile->cpus_text : NULL;
	o.cooldown_ms = a->profile ? a->profile->cooldown_ms : 0;
	o.watch = a->profile ? &a->watch : NULL;
	o.cancel_fd = a->cancel_fd;
	r = runner_pair_run(a->db, &cid, &o);
	if (r == 0) {
		struct db_comparison c;

		if (db_comparison_load(a->db, &c, cid) == 0) {
			log_info("case %s of job %lld: comparison %lld, %s", k->name,
				 (long long)job->id, (long long)cid, c.summary.verdict);
			db_comparison_release(&c);
		}
	}
	return r;
}

/* ---- jobs ---- */

static int do_job(struct agent *a, struct db_job *job)
{
	struct db_build head, base;
	char *why = NULL;
	int failed_runners = 0;
	size_t i;
	int r;

	memset(&head, 0, sizeof(head));
	memset(&base, 0, sizeof(base));
	log_info("job %lld: %s at %.12s", (long long)job->id, job->head, job->commit);
	r = db_job_set_state(a->db, job->id, DB_JOB_RUNNING, NULL);
	if (r < 0)
		return r;
	r = ensure_build(a, &head, job->commit);
	if (r < 0)
		goto out;
	if (head.state != DB_BUILD_DONE) {
		why = xasprintf("build %lld failed: %s", (long long)head.id,
				head.detail ? head.detail : "see its log");
		goto out;
	}
	r = run_runners(a, &head, &failed_runners);
	if (r < 0)
		goto out;
	if (*job->base && a->suite->ncases) {
		r = ensure_build(a, &base, job->base);
		if (r < 0)
			goto out;
		if (base.state != DB_BUILD_DONE) {
			why = xasprintf("the base build %lld failed: no comparison", (long long)base.id);
			goto out;
		}
		for (i = 0; i < a->suite->ncases && !why; i++) {
			r = run_case(a, job, &a->suite->cases[i], &base, &head, &why);
			if (r < 0)
				goto out;
		}
	}
	if (!why && failed_runners)
		why = xasprintf("%d contract runner process%s failed", failed_runners,
				failed_runners == 1 ? "" : "es");
out:
	if (r == 0)
		r = db_job_set_state(a->db, job->id, why ? DB_JOB_FAILED : DB_JOB_DONE, why);
	if (r == 0)
		log_info("job %lld: %s%s%s", (long long)job->id, why ? "failed" : "done",
			 why ? ": " : "", why ? why : "");
	free(why);
	db_build_release(&head);
	db_build_release(&base);
	return r;
}

/* Says a finished job on the pull requests' host: its commit's status,
 * and for a pull head the comment of the pull request's head as it is now
 * (which may have moved on: the comment then describes the new head). */
static void job_done(struct agent *a, const char *head, const char *commit)
{
	struct db_job job;
	struct web_gh_pull p;
	int pr;

	if (db_job_get(a->db, &job, head, commit) == 0) {
		job_status(a, &job);
		db_job_release(&job);
	}
	if (sscanf(head, "pull/%d", &pr) != 1 || !a->cfg->github.comment)
		return;
	if (web_gh_pull_get(a->gh, &p, pr) < 0) {
		log_warnx("pull request %d: %s", pr, err_last());
		return;
	}
	if (p.open)
		publish_pull(a, &p);
}

int agent_work(struct agent *a)
{
	int r;

	if (!a->suite)
		return err_set(-EINVAL, "no suite to build with: '%s' on the default branch "
			       "could not be read", a->cfg->suite_file);
	for (;;) {
		struct db_job job;

		if (cancelled(a))
			return -ECANCELED;
		r = db_job_next(a->db, &job);
		if (r == -ENOENT)
			return 0;
		if (r < 0) {
			log_warnx("%s", err_last());
			return r;
		}
		if (a->profile) {
			struct db_host h;
			bool quarantined;

			/* -ENOENT: a host with no row (a fresh database) is not
			 * quarantined. */
			if (db_host_load(a->db, &h, a->host) == 0) {
				quarantined = h.quarantined;
				if (quarantined)
					log_warnx("host \"%s\" is quarantined (GPU fault: \"%s\"): "
						  "no GPU work until 'perfd host clear --db %s %s'",
						  a->host, h.fault ? h.fault : "", a->cfg->database,
						  a->host);
				db_host_release(&h);
				if (quarantined) {
					db_job_release(&job);
					return -EPERM;
				}
			}
		}
		if (a->gh)
			set_status(a, job.commit, job.id, "pending", "running");
		r = do_job(a, &job);
		if (r == 0 && a->gh)
			job_done(a, job.head, job.commit);
		db_job_release(&job);
		if (r < 0) {
			if (r != -ECANCELED)
				log_warnx("%s", err_last());
			return r;
		}
	}
}

void agent_summary(struct agent *a, FILE *f)
{
	struct db_job jobs[64];
	int n, i;

	n = db_job_list(a->db, jobs, ARRAY_SIZE(jobs));
	if (n < 0)
		return;
	fprintf(f, "%-5s %-20s %-12s %-8s %s\n", "job", "head", "commit", "state", "comparisons");
	for (i = n - 1; i >= 0; i--) {
		struct strbuf cells = STRBUF_INIT;
		size_t k;

		for (k = 0; a->suite && k < a->suite->ncases; k++) {
			const char *name = a->suite->cases[k].name;
			struct db_comparison c;
			enum db_state st;
			int64_t cid;

			if (db_job_comparison(a->db, &cid, &st, jobs[i].id, name) < 0 ||
			    db_comparison_load(a->db, &c, cid) < 0)
				continue;
			strbuf_addf(&cells, "%s%s: #%lld %s", cells.len ? "; " : "", name,
				    (long long)cid, c.summary.verdict);
			if (c.summary.has_gain)
				strbuf_addf(&cells, " %.3f%%", c.summary.gain_median * 100);
			db_comparison_release(&c);
		}
		fprintf(f, "%-5lld %-20.20s %-12.12s %-8s %s%s%s\n", (long long)jobs[i].id,
			jobs[i].head, jobs[i].commit, db_job_state_name(jobs[i].state),
			cells.len ? cells.buf : "-", jobs[i].detail ? "  " : "",
			jobs[i].detail ? jobs[i].detail : "");
		strbuf_release(&cells);
		db_job_release(&jobs[i]);
	}
	fputs(a->waiting.buf, f);
	fprintf(f, "builds made %d, cache hits %d\n", a->builds, a->cache_hits);
}
