/*
 * The agent's life: opening it (its database, mirror, locks, sandbox and
 * pull-request side), marking what a killed agent left running, freeing
 * it, and the summary --once prints. Its watching is poll.c, its jobs
 * job.c.
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

#define LOCK_WAIT_TRIES 100
#define DEAD_BUILDS_MAX 10000
#define LOCK_WAIT_MS 50

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

int agent_new(struct agent **out, struct agent_config *cfg, struct host_profile *profile,
	      struct kernel_probe *probe, int cancel_fd)
{
	struct agent *a = xcalloc(1, sizeof(*a));
	int r = 0;

	*out = NULL;
	a->cfg = cfg;
	a->cancel_fd = cancel_fd;
	a->profile = profile;
	a->probe = probe;
	strbuf_init(&a->waiting);
	strbuf_init(&a->failures);
	a->watch.fd = -1;
	a->lock_fds[0] = a->lock_fds[1] = -1;
	agent_host_name(a->host, sizeof(a->host), profile);
	if (profile) {
		runner_fault_watch_open(&a->watch, profile->fault_log, profile);
		if (a->watch.off_reason)
			log_warnx("fault watch off: %s; every process is recorded so",
				  a->watch.off_reason);
	}
	if (!a->probe)
		a->probe = host_check_unprofiled();
	a->fingerprint = kernel_probe_json(a->probe, false);
	a->mirror = xasprintf("%s/mirror.git", cfg->workdir);
	if (!cfg->suite_file) {
		a->suite = &cfg->suite;
		r = agent_suite_recipe_hash(a->recipe_hash, a->suite);
	}
	if (r < 0) {
		agent_free(a);
		return r;
	}
	*out = a;
	return 0;
}

int agent_open_mirror(struct agent *a)
{
	const struct agent_config *cfg = a->cfg;
	int r;

	r = fs_mkdir_p(cfg->workdir);
	/* One agent a database and a mirror: a second would take the first's
	 * running rows for a killed agent's, and race it on the mirror. */
	if (r == 0)
		r = take_lock(&a->lock_fds[0], "workdir", cfg->workdir, "/agent.lock");
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
	return r;
}

int agent_open(struct agent **out, struct agent_config *cfg, struct host_profile *profile,
	       struct kernel_probe *probe, int cancel_fd)
{
	struct agent *a;
	int r, held = 0;

	*out = NULL;
	r = agent_new(&a, cfg, profile, probe, cancel_fd);
	if (r < 0)
		return r;
	r = agent_open_mirror(a);
	if (r == 0)
		r = take_lock(&a->lock_fds[1], "database", cfg->database, ".agent-lock");
	if (r == 0)
		r = db_open(&a->db, cfg->database, 10000);
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
	/* What an earlier boot left running on a host with a device took the
	 * machine down, as far as anyone can tell: its commit is held before
	 * the rows are abandoned and could be run again. */
	if (r == 0)
		r = held = agent_holds_open(a);
	if (r > 0)
		log_warnx("%d step%s left running when the machine went down: %s commit%s held, "
			  "the host quarantined", r, r == 1 ? "" : "s", r == 1 ? "its" : "their",
			  r == 1 ? "" : "s");
	if (r > 0)
		r = 0;
	/* What a stopped agent left running (its rows name a perfd that is
	 * gone, or none: written before schema version 11) is abandoned and
	 * done again; a perfd pair that runs on the same file keeps its rows.
	 * Interrupted comparisons get their summary (invalid, "interrupted"),
	 * their processes stay as they were. */
	if (r == 0)
		r = db_abandon_running(a->db, true);
	if (r > 0)
		log_info("%d build and runner step%s left running by a stopped agent: abandoned, "
			 "to be done again%s", r, r == 1 ? "" : "s",
			 held ? " (a held commit's once it is released)" : "");
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

void agent_host_name(char *out, size_t len, const struct host_profile *profile)
{
	memset(out, 0, len);
	if (profile)
		snprintf(out, len, "%s", profile->name);
	else if (gethostname(out, len - 1) < 0 || !*out)
		snprintf(out, len, "local");
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
	strbuf_release(&a->failures);
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
			/* An A/A's verdict is a calibration sample, never a change. */
			strbuf_addf(&cells, "%s%s: #%lld %s", cells.len ? "; " : "", name,
				    (long long)cid, c.aa ? runner_aa_verdict(c.summary.verdict) :
				    c.summary.verdict);
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
	if (a->failures.len)
		fprintf(f, "failures:\n%s", a->failures.buf);
	fprintf(f, "builds made %d, cache hits %d, A/A comparisons %d", a->builds, a->cache_hits,
		a->aa_runs);
	if (a->push_auth) {
		int64_t backlog = 0;

		if (db_push_backlog(a->db, &backlog) == 0)
			fprintf(f, ", push backlog %lld", (long long)backlog);
	}
	fputc('\n', f);
	fprintf(f, "sandbox: %s\n", a->sandbox ? "builds and processes ran sandboxed" :
		a->unsandboxed ? a->unsandboxed : "none");
}
