/*
 * The agent's loop: watch heads, build each new head commit, run its
 * contract runners, compare it against its base, with every step a row in
 * the database before the next begins. A restart after kill -9 finds what
 * was running marked abandoned and does it again; what was done is found
 * done and skipped.
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
#define LOCK_WAIT_TRIES 100
#define DEAD_BUILDS_MAX 10000
#define LOCK_WAIT_MS 50
/* The mirror's packs before the fetches' are joined (docs/performance.md,
 * "The agent over many polls"). */
#define AGENT_PACKS_MAX 32

/* Removes the directories of builds no comparison uses again (abandoned
 * or stale): each build has a directory of its own, so they would only
 * pile up. Only what lies under WORKDIR/builds/ is touched. */
static int remove_dead_builds(struct agent *a)
{
	char *under = xasprintf("%s/builds/", a->cfg->workdir);
	char **dirs = NULL;
	size_t n = 0, i;
	int removed = 0, r;

	r = db_build_dead_dirs(a->db, &dirs, &n, DEAD_BUILDS_MAX);
	for (i = 0; i < n; i++) {
		if (r == 0 && !strncmp(dirs[i], under, strlen(under)) &&
		    !strstr(dirs[i], "/../") && access(dirs[i], F_OK) == 0) {
			if (fs_rm_rf(dirs[i]) == 0)
				removed++;
			else
				log_warnx("%s", err_last());
		}
		free(dirs[i]);
	}
	free(dirs);
	free(under);
	if (removed)
		log_info("%d director%s of abandoned or stale builds removed", removed,
			 removed == 1 ? "y" : "ies");
	return r;
}

/* The lock of what (base followed by suffix); -EBUSY naming the agent that
 * holds it. */
static int take_lock(int *fd, const char *what, const char *base, const char *suffix)
{
	char *path = xasprintf("%s%s", base, suffix);
	long holder = 0;
	int r = fs_lock(fd, path, &holder), tries;

	/* Held for an agent that is gone: by the fetch it started, which dies
	 * with it a moment later. Waited for, a bounded while. */
	for (tries = 0; r == -EBUSY && holder > 0 && kill((pid_t)holder, 0) < 0 &&
	     errno == ESRCH && tries < LOCK_WAIT_TRIES; tries++) {
		poll(NULL, 0, LOCK_WAIT_MS);
		r = fs_lock(fd, path, &holder);
	}

	if (r == -EBUSY)
		r = err_set(r, "another agent (pid %ld) uses the %s '%s' (%s): one agent a "
			    "database and a work directory; agents of many hosts push to one hub "
			    "instead", holder, what, base, path);
	else if (r < 0)
		r = err_set(r, "the %s's lock: %s", what, err_last());
	free(path);
	return r;
}

int agent_open(struct agent **out, struct agent_config *cfg, struct host_profile *profile,
	       struct kernel_probe *probe, int cancel_fd)
{
	struct agent *a = xcalloc(1, sizeof(*a));
	int r;

	*out = NULL;
	a->cfg = cfg;
	a->cancel_fd = cancel_fd;
	a->profile = profile;
	a->probe = probe;
	strbuf_init(&a->waiting);
	a->watch.fd = -1;
	a->lock_fds[0] = a->lock_fds[1] = -1;
	if (profile) {
		snprintf(a->host, sizeof(a->host), "%s", profile->name);
		runner_fault_watch_open(&a->watch, profile->fault_log, profile);
		if (a->watch.off_reason)
			log_warnx("fault watch off: %s; every process is recorded so",
				  a->watch.off_reason);
	} else if (gethostname(a->host, sizeof(a->host) - 1) < 0 || !*a->host) {
		snprintf(a->host, sizeof(a->host), "local");
	}
	if (!a->probe)
		a->probe = kernel_probe_host_only();
	a->fingerprint = kernel_probe_json(a->probe, false);
	a->mirror = xasprintf("%s/mirror.git", cfg->workdir);
	r = 0;
	if (!cfg->suite_file) {
		a->suite = &cfg->suite;
		r = agent_suite_recipe_hash(a->recipe_hash, a->suite);
	}
	if (r == 0)
		r = fs_mkdir_p(cfg->workdir);
	/* One agent a database and a mirror: a second would take the first's
	 * running rows for a killed agent's, and race it on the mirror. */
	if (r == 0)
		r = take_lock(&a->lock_fds[0], "workdir", cfg->workdir, "/agent.lock");
	if (r == 0)
		r = take_lock(&a->lock_fds[1], "database", cfg->database, ".agent-lock");
	if (r == 0)
		r = db_open(&a->db, cfg->database, 10000);
	/* Under the lock no other agent runs here: a sandbox naming the work
	 * directory is what a killed agent left. */
	if (r == 0 && (r = sandbox_kill_leftovers(cfg->workdir)) > 0) {
		log_info("%d bwrap process%s left by a stopped agent killed", r, r == 1 ? "" : "es");
		r = 0;
	}
	/* Under the lock no other agent writes the mirror: a lock file there
	 * is what a killed agent's fetch left. */
	if (r == 0)
		r = builder_repo_clear_locks(a->mirror);
	if (r > 0) {
		log_info("mirror: %d lock file%s left by a stopped agent removed", r,
			 r == 1 ? "" : "s");
		r = 0;
	}
	if (r == 0)
		r = builder_repo_open(&a->repo, a->mirror, cfg->url);
	if (r == 0 && cfg->github.on)
		r = agent_pulls_open(a);
	if (r == 0 && cfg->hub.on)
		r = agent_push_token(&a->push_auth, &cfg->hub);
	/* Processes a sandbox leaves for an instant after its bwrap ends are
	 * ours to reap, not the machine's init's (child.c). */
	if (r == 0 && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_warnx("cannot become a subreaper: %s", strerror(errno));
	if (r == 0)
		r = agent_sandbox_open(a);
	/* What a stopped agent left running (its rows name a perfd that is
	 * gone, or none: written before schema version 11) is abandoned and
	 * done again; a perfd pair that runs on the same file keeps its rows.
	 * Interrupted comparisons get their summary (invalid, "interrupted"),
	 * their processes stay as they were. */
	if (r == 0)
		r = db_abandon_running(a->db, true);
	if (r > 0)
		log_info("%d build and runner step%s left running by a stopped agent: abandoned, "
			 "to be done again", r, r == 1 ? "" : "s");
	if (r >= 0)
		r = runner_orphans_abandon(a->db, true);
	if (r > 0)
		log_info("%d comparison%s left running by a stopped agent: kept as abandoned",
			 r, r == 1 ? "" : "s");
	if (r > 0)
		r = 0;
	if (r >= 0)
		r = remove_dead_builds(a);
	if (r < 0) {
		agent_free(a);
		return r;
	}
	*out = a;
	return 0;
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
	if (a->push_auth) {
		explicit_bzero(a->push_auth, strlen(a->push_auth));
		free(a->push_auth);
	}
	free(a->push_error);
	agent_suite_release(&a->repo_suite);
	host_profile_free(a->profile);
	kernel_probe_free(a->probe);
	free(a->fingerprint);
	sandbox_free(a->sandbox);
	free(a->unsandboxed);
	free(a->poll_error);
	db_close(a->db);
	for (size_t i = 0; i < ARRAY_SIZE(a->lock_fds); i++)
		if (a->lock_fds[i] >= 0)
			close(a->lock_fds[i]);
	free(a);
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

int agent_poll(struct agent *a)
{
	struct builder_head *heads = NULL;
	struct web_gh_pull *open = NULL;
	struct web_hub_pull *hub_open = NULL;
	const char **names = NULL;
	size_t n = 0, nopen = 0, nhub = 0, i;
	bool pulls_known = false, hub_known = false;
	bool from_hub = !a->gh && a->push_auth && a->cfg->pulls;
	int r;

	r = fetch(a);
	if (r < 0)
		return r == -ECANCELED ? r : err_set(r, "fetch: %s", err_last());
	/* The fetch (in a child) wrote a pack: past AGENT_PACKS_MAX the
	 * fetches' packs become one, and what the last poll's reads kept open
	 * is let go, else every pack stays mapped for good. */
	r = builder_repo_consolidate(a->repo, AGENT_PACKS_MAX);
	if (r < 0)
		log_warnx("%s; the packs stay as they are", err_last());
	r = builder_repo_refresh(a->repo);
	if (r < 0)
		return r;
	if (a->cfg->suite_file)
		read_suite(a);
	r = builder_repo_heads(a->repo, &heads, &n, (const char *const *)a->cfg->branches,
			       a->cfg->nbranches, a->cfg->pulls);
	if (r < 0)
		return r;
	/* With [github], a pull head is built only when its pull request is
	 * open and trusted: without the list, none is. */
	strbuf_reset(&a->waiting);
	if (a->gh && a->cfg->pulls) {
		if (web_gh_pulls_open(a->gh, &open, &nopen) < 0)
			log_warnx("pull requests: %s; pull heads wait for the next poll",
				  err_last());
		else
			pulls_known = true;
		for (i = 0; pulls_known && i < nopen; i++)
			agent_pull_forecasts(a, &open[i]);
	}
	if (from_hub) {
		r = agent_hub_pulls(a, &hub_open, &nhub);
		if (r == -ECANCELED)
			goto out;
		if (r < 0)
			log_warnx("pull heads: %s; they wait for the next poll", err_last());
		hub_known = r == 0;
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
		/* A pull head is anyone's code: it is built only in the sandbox. */
		if (heads[i].is_pull && !a->sandbox) {
			strbuf_addf(&a->waiting, "%s at %.12s: not built: %s\n", heads[i].name,
				    heads[i].oid, a->unsandboxed);
			continue;
		}
		if (a->gh && heads[i].is_pull &&
		    (!pulls_known || !agent_pull_allowed(a, &heads[i], open, nopen)))
			continue;
		if (from_hub && heads[i].is_pull &&
		    !hub_pull_allowed(a, &heads[i], hub_open, nhub, hub_known, base))
			continue;
		r = builder_commit_load(a->repo, &c, heads[i].oid);
		if (r < 0)
			goto out;
		if (from_hub && heads[i].is_pull) {
			/* base: the hub's */
		} else if (head_base(a, base, &heads[i], &c) < 0) {
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
				agent_job_status(a, &queued);
				db_job_release(&queued);
			}
		}
	}
	r = db_heads_keep_only(a->db, names, n);
	/* After the heads' jobs: a span's verdict is read once those of the
	 * commits it spans are known. */
	if (r == 0)
		r = agent_history_spans(a, heads, n);
	for (i = 0; r == 0 && i < nopen; i++)
		agent_pull_publish(a, &open[i]);
out:
	free(open);
	free(hub_open);
	free(names);
	builder_heads_free(heads, n);
	return r < 0 ? r : 0;
}

/* ---- building and checking ---- */

static void on_build_start(void *ctx, const struct db_build *b)
{
	log_info("build %lld of %.12s: started in %s", (long long)b->id, b->commit, b->dir);
}

/* Hashes build b's artifacts again: 1, with *why (the caller's), when one
 * changed or is gone, the build then marked stale; 0 when all are whole. */
static int stale(struct agent *a, const struct db_build *b, char **why)
{
	int r = builder_build_verify(b, why);

	if (r == 1) {
		int e = db_build_mark_stale(a->db, b->id, *why);

		if (e < 0) {
			free(*why);
			*why = NULL;
			return e;
		}
	}
	return r;
}

/* The build of commit: found (a cache hit) or made now, said either way. */
static int ensure_build(struct agent *a, struct db_build *out, const char *commit)
{
	const struct agent_suite *s = a->suite;
	struct builder_build_opts o = {
		.host = a->host, .workdir = a->cfg->workdir, .recipe_hash = a->recipe_hash,
		.command = s->build_command,
		.env = (const char *const *)s->build_env, .nenv = s->nbuild_env,
		.artifacts = (const char *const *)s->artifacts, .nartifacts = s->nartifacts,
		.timeout_s = s->build_timeout_s, .toolchain = s->toolchain,
		.fingerprint = a->fingerprint, .cancel_fd = a->cancel_fd,
		.sandbox = a->sandbox, .network = s->build_network,
		.on_start = on_build_start,
	};
	int r = builder_build_ensure(out, a->repo, a->db, commit, &o), e;
	char *why = NULL;

	/* A cached build's artifacts must still be the files it hashed. */
	if (r == 1 && out->state == DB_BUILD_DONE && (e = stale(a, out, &why)) != 0) {
		db_build_release(out);
		if (e < 0)
			return e;
		log_warnx("%s: the build is stale, built again", why);
		free(why);
		r = builder_build_ensure(out, a->repo, a->db, commit, &o);
	}
	if (r == 1) {
		a->cache_hits++;
		log_info("build of %.12s (tree %.12s): cached, build %lld, %s", commit, out->tree,
			 (long long)out->id, db_build_state_name(out->state));
	} else if (r == 0) {
		a->builds++;
		log_info("build %lld of %.12s: %s%s%s (%.1f s)", (long long)out->id, commit,
			 db_build_state_name(out->state), out->detail ? ": " : "",
			 out->detail ? out->detail : "", out->wall_ms / 1e3);
	}
	return r < 0 ? r : 0;
}

static void on_runner_done(void *ctx, const struct db_runner_result *res)
{
	log_info("runner %s%s%.0d of build %lld: %s", res->runner, res->chunks > 1 ? " chunk " : "",
		 res->chunks > 1 ? res->chunk : 0, (long long)res->build_id,
		 res->timed_out ? "timed out" : res->exit_code || res->signal ||
		 res->spawn_error ? "failed" : "passed");
}

static int run_runners(struct agent *a, const struct db_build *b, int *out_failed)
{
	size_t i;
	int r = 0;

	for (i = 0; i < a->suite->nrunners && r == 0; i++) {
		r = runner_contract_run(a->db, b, &a->suite->runners[i], a->sandbox, a->cancel_fd,
					out_failed, on_runner_done, a);
	}
	return r;
}

/* ---- comparisons ---- */

const struct db_build_artifact *agent_artifact_named(const struct db_build *b,
						      const char *name)
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

/* True when two builds made the same artifacts, name for name and byte for
 * byte: the case program alone may be the same file in both (a wrapper, or
 * a program that loads a shader built beside it) while the build differs. */
static bool same_artifacts(const struct db_build *x, const struct db_build *y)
{
	size_t i;

	if (x->nartifacts != y->nartifacts)
		return false;
	for (i = 0; i < x->nartifacts; i++) {
		const struct db_build_artifact *ay = agent_artifact_named(y, x->artifacts[i].name);

		if (!ay || strcmp(ay->artifact.sha256, x->artifacts[i].artifact.sha256))
			return false;
	}
	return true;
}

/* Stores the manifest of build b (its commit, tree, recipe and every
 * artifact) and puts its hash in out: what tells two builds apart when the
 * case program is the same file in both. */
int agent_build_manifest(struct agent *a, char out[65], const struct db_build *b)
{
	struct db_manifest m;
	int r;

	out[0] = '\0';
	r = db_manifest_of_build(&m, b);
	if (r == 0)
		r = db_manifest_put(a->db, &m);
	if (r == 0)
		memcpy(out, m.hash, sizeof(m.hash));
	db_manifest_release(&m);
	return r;
}

void agent_case_opts(struct agent *a, const struct agent_case *k, struct runner_pair_opts *o,
		     struct cli_progress *progress)
{
	memset(o, 0, sizeof(*o));
	o->args = (const char *const *)k->args;
	o->nargs = k->nargs;
	/* The case's stages, else the host profile's, else the defaults. */
	o->pairs = k->pairs ? k->pairs : a->profile ? a->profile->pairs : HOST_DEFAULT_PAIRS;
	o->max_pairs = k->max_pairs ? k->max_pairs :
		       a->profile ? a->profile->max_pairs : HOST_DEFAULT_MAX_PAIRS;
	if (o->max_pairs < o->pairs)
		o->max_pairs = o->pairs;
	o->higher_better = k->higher_better;
	o->better_given = k->has_better;
	o->warmup = k->warmup;
	o->timeout_s = a->profile && a->profile->process_timeout_s < k->timeout_s ?
		       a->profile->process_timeout_s : k->timeout_s;
	o->metric = k->metric;
	o->case_name = k->name;
	o->host = a->host;
	o->fingerprint = a->fingerprint;
	o->min_effect = k->has_min_effect ? k->min_effect :
			a->profile ? a->profile->min_effect : HOST_DEFAULT_MIN_EFFECT;
	o->noise = k->has_noise ? k->noise : a->profile ? a->profile->noise : HOST_DEFAULT_NOISE;
	o->cpus = k->has_cpus ? &k->cpus : a->profile ? &a->profile->cpus : NULL;
	o->cooldown_ms = k->has_cooldown ? k->cooldown_ms :
			 a->profile ? a->profile->cooldown_ms : HOST_DEFAULT_COOLDOWN_MS;
	o->watch = a->profile ? &a->watch : NULL;
	o->sandbox = a->sandbox;
	o->cancel_fd = a->cancel_fd;
	/* A line per process where someone watches: a long GPU comparison is
	 * never silent. */
	o->progress = cli_progress_line;
	o->progress_ctx = progress;
}

void agent_log_verdict(struct agent *a, const char *prefix, int64_t cid)
{
	struct db_comparison c;

	if (db_comparison_load(a->db, &c, cid) < 0)
		return;
	log_info("%s: comparison %lld, %s", prefix, (long long)cid,
		 c.aa ? runner_aa_verdict(c.summary.verdict) : c.summary.verdict);
	db_comparison_release(&c);
}

static int run_case(struct agent *a, const struct db_job *job, const struct agent_case *k,
		    const struct db_build *base, const struct db_build *head, char **why)
{
	const struct db_build_artifact *old = agent_artifact_named(base, k->program);
	const struct db_build_artifact *new = agent_artifact_named(head, k->program);
	const char *const ro[] = { base->dir, head->dir, NULL };
	struct runner_calibration cal;
	struct runner_pair_opts o;
	struct cli_progress progress = { .on = isatty(2) };
	char old_manifest[65], new_manifest[65];
	enum db_state state;
	char *prefix;
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
	/* The files measured are the files the builds hashed, or nothing is
	 * measured: a later job builds a stale tree again. */
	r = stale(a, base, why);
	if (r == 0)
		r = stale(a, head, why);
	if (r != 0)
		return r < 0 ? r : 0;
	r = agent_calibrate_case(a, k, base);
	if (r < 0)
		return r;
	agent_case_opts(a, k, &o, &progress);
	o.sandbox_ro = ro;
	o.old.path = old->artifact.path;
	o.new.path = new->artifact.path;
	o.old_artifact = old->artifact.id;
	o.new_artifact = new->artifact.id;
	o.old_sha256 = old->artifact.sha256;
	o.new_sha256 = new->artifact.sha256;
	r = agent_build_manifest(a, old_manifest, base);
	if (r == 0)
		r = agent_build_manifest(a, new_manifest, head);
	if (r < 0)
		return r;
	o.old_manifest = old_manifest;
	o.new_manifest = new_manifest;
	/* Byte for byte the same builds: an A/A, stored and shown as one. */
	o.aa = same_artifacts(base, head);
	if (o.aa) {
		log_warnx("case %s of job %lld: base and head builds made the same artifacts, "
			  "byte for byte: an A/A comparison, any verdict is noise, not a change",
			  k->name, (long long)job->id);
		progress.label = "A/A";
	}
	o.job_id = job->id;
	o.base_build = base->id;
	o.head_build = head->id;
	r = runner_calibration_choose(&cal, a->db, &o);
	if (r == 0)
		r = runner_pair_run(a->db, &cid, &o);
	runner_calibration_release(&cal);
	if (r == -EDOM) {
		/* A rate metric with no direction said: the case's mistake. */
		*why = xasprintf("case %s: %s", k->name, err_last());
		return 0;
	}
	if (r == 0) {
		prefix = xasprintf("case %s of job %lld", k->name, (long long)job->id);
		agent_log_verdict(a, prefix, cid);
		free(prefix);
		/* At once, with the A/As before it: the hub's table waits for no poll. */
		r = agent_push(a);
	}
	return r < 0 ? r : 0;
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
	/* The hub hears of it at once: its table says "building" here. */
	r = agent_push(a);
	if (r < 0)
		return r;
	agent_heartbeat(a, "building", job->id);
	r = ensure_build(a, &head, job->commit);
	if (r < 0)
		goto out;
	if (head.state != DB_BUILD_DONE) {
		why = xasprintf("build %lld failed: %s", (long long)head.id,
				head.detail ? head.detail : "see its log");
		goto out;
	}
	/* The contract runners check a head; a history job only measures. */
	if (job->kind == DB_JOB_HEAD)
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
		agent_heartbeat(a, "measuring", job->id);
		for (i = 0; i < a->suite->ncases && !why; i++) {
			if (*job->case_name && strcmp(job->case_name, a->suite->cases[i].name))
				continue;
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
	if (r == 0)
		r = agent_push(a);
	if (r > 0)
		r = 0;
	free(why);
	db_build_release(&head);
	db_build_release(&base);
	return r;
}

/* -EPERM when the host is quarantined after a GPU fault. A host with no
 * row yet (a fresh database) is not. */
static int refuse_quarantined(struct agent *a)
{
	struct db_host h;
	int r = 0;

	if (!a->profile || db_host_load(a->db, &h, a->host) < 0)
		return 0;
	if (h.quarantined)
		r = err_set(-EPERM, "host '%s' is quarantined (GPU fault: '%s'): no GPU work "
			    "until 'perfd host clear --db %s %s'", a->host, h.fault ? h.fault : "",
			    a->cfg->database, a->host);
	db_host_release(&h);
	return r;
}

int agent_work(struct agent *a)
{
	int r;

	if (!a->suite)
		return err_set(-EINVAL, "no suite to build with: '%s' on the default branch "
			       "could not be read", a->cfg->suite_file);
	for (;;) {
		struct db_job job;

		if (child_cancel_wait(a->cancel_fd, 0))
			return err_set(-ECANCELED, "stopped");
		r = db_job_next(a->db, &job);
		if (r == -ENOENT) {
			/* The history may queue more: a confirmation, a step. */
			r = agent_history(a);
			if (r > 0)
				continue;
			return r;
		}
		if (r < 0)
			return r;
		r = refuse_quarantined(a);
		if (r < 0) {
			db_job_release(&job);
			return r;
		}
		/* A commit's status on the forge is its head job's alone. */
		if (a->gh && job.kind == DB_JOB_HEAD)
			agent_status_set(a, job.commit, job.id, "pending", "running");
		r = do_job(a, &job);
		if (r == 0 && a->gh && job.kind == DB_JOB_HEAD)
			agent_job_done(a, job.head, job.commit);
		db_job_release(&job);
		if (r < 0)
			return r;
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
			if (c.summary.has_gain) {
				char gain[32];

				runner_format_gain(gain, sizeof(gain), c.summary.gain_median);
				strbuf_addf(&cells, " %s", gain);
			}
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
	fprintf(f, "builds made %d, cache hits %d, A/A comparisons %d", a->builds, a->cache_hits,
		a->aa_runs);
	if (a->push_auth) {
		int64_t backlog = 0;

		if (db_push_backlog(a->db, &backlog) == 0)
			fprintf(f, ", push backlog %lld", (long long)backlog);
	}
	fputc('\n', f);
}
