/*
 * The agent's jobs: each queued job's head is built, its contract runners
 * run and each case compared against its base, with every step a row in
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

/* What a failure shows of its log where the user looks (docs/config.md,
 * "When a job fails"): its last lines, each cut to a console's width. */
#define FAILURE_LINES 10
#define FAILURE_WIDTH 200
/* The failures kept for the --once summary, in bytes: an agent that runs
 * for months keeps no more (the console has every one). */
#define FAILURES_MAX (64 * 1024)

/* Says why job failed where the user looks: in the console, a line each,
 * and in a->failures for the --once summary. what failed (a sentence), the
 * last lines of its log (text, len bytes), show: the command that shows
 * all of it (without --db), and with retry the one that queues the job
 * again. */
static void say_failure(struct agent *a, const struct db_job *job, const char *what,
			const char *show, bool retry, const char *text, size_t len)
{
	struct strbuf s = STRBUF_INIT, tail = STRBUF_INIT, db = STRBUF_INIT, first = STRBUF_INIT;
	size_t total, at, line = 0;

	cli_shell_word(&db, a->cfg->database);
	total = cli_tail_lines(&tail, text, len, FAILURE_LINES, FAILURE_WIDTH, "  | ");
	if (total > FAILURE_LINES)
		line = cli_first_error(&first, text, len, total - FAILURE_LINES + 1,
				       FAILURE_WIDTH, "  | ");
	strbuf_addf(&s, "job %lld: %s", (long long)job->id, what);
	if (!total)
		strbuf_adds(&s, "; its output is empty\n");
	else if (total <= FAILURE_LINES)
		strbuf_addf(&s, "; its output:\n%s", tail.buf);
	else
		strbuf_addf(&s, "; the last %d of its %zu lines:\n%s", FAILURE_LINES, total,
			    tail.buf);
	if (line)
		strbuf_addf(&s, "  its first error, line %zu:\n%s", line, first.buf);
	strbuf_addf(&s, "  all of it: %s --db %s\n", show, db.buf);
	if (retry)
		strbuf_addf(&s, "  once fixed: perfd retry %lld --db %s (a changed [build] recipe "
			    "builds it again by itself)\n", (long long)job->id, db.buf);
	for (at = 0; at < s.len; at += strcspn(s.buf + at, "\n") + 1)
		log_warnx("%.*s", (int)strcspn(s.buf + at, "\n"), s.buf + at);
	if (a->failures.len < FAILURES_MAX)
		strbuf_add(&a->failures, s.buf, s.len);
	else if (!strstr(a->failures.buf, "\n(more in the console)\n"))
		strbuf_adds(&a->failures, "\n(more in the console)\n");
	strbuf_release(&s);
	strbuf_release(&tail);
	strbuf_release(&first);
	strbuf_release(&db);
}

/* A build that did not make what the job needs: said with its log. */
static void say_build_failure(struct agent *a, const struct db_job *job,
			      const struct db_build *b, const char *role)
{
	char *what = xasprintf("%sbuild %lld of %.12s failed: %s", role, (long long)b->id,
			       b->commit, b->detail ? b->detail : "see its log");
	char *show = xasprintf("perfd log build %lld", (long long)b->id);

	say_failure(a, job, what, show, true, b->log, b->log_len);
	free(what);
	free(show);
}

/* A comparison of case_name that ended invalid: said with its first reason
 * and the end of its first invalid process's stderr, else its stdout. The
 * job is not failed by it, so no retry is offered. */
static void say_invalid(struct agent *a, const struct db_job *job, const char *case_name,
			int64_t cid)
{
	struct db_process *p = NULL;
	struct db_comparison c;
	char *what, *show;
	size_t i;

	if (db_comparison_load(a->db, &c, cid) < 0)
		return;
	for (i = 0; i < c.nprocesses && !p; i++)
		if (!c.processes[i].valid)
			p = &c.processes[i];
	if (!strcmp(c.summary.verdict, "invalid")) {
		if (p && db_process_output_load(a->db, p, cid, p->seq) < 0)
			p = NULL;
		what = xasprintf("case %s: comparison %lld is invalid: %s%s%.0d%s%s%s", case_name,
				 (long long)cid, c.summary.nreasons ? c.summary.reasons[0] :
				 "see its receipt", p ? "; process " : "", p ? p->seq : 0,
				 p ? " (" : "", p ? p->arm : "", p ? ") failed first" : "");
		show = xasprintf("perfd show %lld", (long long)cid);
		say_failure(a, job, what, show, false, !p ? NULL : p->err_len ? p->err : p->out,
			    !p ? 0 : p->err_len ? p->err_len : p->out_len);
		free(what);
		free(show);
	}
	db_comparison_release(&c);
}

static void on_build_start(void *ctx, const struct db_build *b)
{
	log_info("build %lld of %.12s: started in %s", (long long)b->id, b->commit, b->dir);
}

/* Hashes build b's artifacts again: 1, with *why (the caller's), when one
 * changed or is gone, the build then marked stale; 0 when all are whole. */
static int stale(struct agent *a, const struct db_build *b, char **why)
{
	int r = builder_build_verify(b, &a->suite->hash, why);

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

void agent_build_opts(struct agent *a, struct builder_build_opts *out)
{
	const struct agent_suite *s = a->suite;

	*out = (struct builder_build_opts){
		.host = a->host, .workdir = a->cfg->workdir, .recipe_hash = a->recipe_hash,
		.command = s->build_command,
		.env = (const char *const *)s->build_env, .nenv = s->nbuild_env,
		.artifacts = (const char *const *)s->artifacts, .nartifacts = s->nartifacts,
		.timeout_s = s->build_timeout_s, .toolchain = s->toolchain,
		.fingerprint = a->fingerprint, .cancel_fd = a->cancel_fd,
		.sandbox = a->sandbox, .network = s->build_network, .hash = s->hash,
	};
}

/* The build of commit: found (a cache hit) or made now, said either way. */
static int ensure_build(struct agent *a, struct db_build *out, const char *commit)
{
	struct builder_build_opts o;
	char *why = NULL;
	int r, e;

	agent_build_opts(a, &o);
	o.on_start = on_build_start;
	r = builder_build_ensure(out, a->repo, a->db, commit, &o);

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

/* The job whose runners run, for on_runner_done. */
struct runner_ctx {
	struct agent *a;
	const struct db_job *job;
};

static void on_runner_done(void *ctx, const struct db_runner_result *res)
{
	struct runner_ctx *rc = ctx;
	bool failed = res->timed_out || res->exit_code || res->signal || res->spawn_error;
	char *what, *show;

	log_info("runner %s%s%.0d of build %lld: %s", res->runner, res->chunks > 1 ? " chunk " : "",
		 res->chunks > 1 ? res->chunk : 0, (long long)res->build_id,
		 res->timed_out ? "timed out" : failed ? "failed" : "passed");
	if (!failed)
		return;
	if (res->spawn_error)
		what = xasprintf("runner %s of build %lld did not start: %s", res->runner,
				 (long long)res->build_id, res->spawn_error);
	else if (res->timed_out)
		what = xasprintf("runner %s of build %lld timed out", res->runner,
				 (long long)res->build_id);
	else if (res->signal)
		what = xasprintf("runner %s of build %lld was killed by signal %d", res->runner,
				 (long long)res->build_id, res->signal);
	else
		what = xasprintf("runner %s of build %lld exited %d", res->runner,
				 (long long)res->build_id, res->exit_code);
	show = xasprintf("perfd log build %lld", (long long)res->build_id);
	say_failure(rc->a, rc->job, what, show, true, res->output, res->output_len);
	free(what);
	free(show);
}

static int run_runners(struct agent *a, const struct db_job *job, const struct db_build *b,
		       int *out_failed)
{
	struct runner_ctx ctx = { .a = a, .job = job };
	size_t i;
	int r = 0;

	for (i = 0; i < a->suite->nrunners && r == 0; i++) {
		r = runner_contract_run(a->db, b, &a->suite->runners[i], a->sandbox,
					&a->suite->hash, a->cancel_fd,
					out_failed, on_runner_done, &ctx);
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
	/* The case's budget, else the host's unless the case says max_pairs. */
	o->time_budget_s = k->time_budget_s ? k->time_budget_s :
			   a->profile && !k->max_pairs ? a->profile->time_budget_s : 0;
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

/* Whether case k's A/As, when it needs them, run before its comparison:
 * with [calibration] when = before, and also when its stages are too few
 * for a verdict without a calibration (max_pairs under 12 by default). */
static bool calibrate_first(struct agent *a, const struct agent_case *k,
			    const struct runner_pair_opts *o)
{
	int max = o->max_pairs > o->pairs ? o->max_pairs : o->pairs;

	if (a->cfg->calibration.when == AGENT_CALIBRATE_BEFORE)
		return true;
	if (runner_sign_can_decide(o->pairs, max))
		return false;
	log_info("case %s: %d to %d pairs give no verdict without a calibration: its A/As "
		 "run first", k->name, o->pairs, max);
	return true;
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
	agent_case_opts(a, k, &o, &progress);
	if (calibrate_first(a, k, &o)) {
		r = agent_calibrate_case(a, k, base);
		if (r < 0)
			return r;
	}
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
		say_invalid(a, job, k->name, cid);
		/* At once, with the A/As before it: the hub's table waits for no poll. */
		r = agent_push(a);
	}
	return r < 0 ? r : 0;
}

/* ---- jobs ---- */

/* Runs job; its base build, when one was made or found, is left in *base
 * for the caller to release. */
static int do_job(struct agent *a, struct db_job *job, struct db_build *base_out)
{
	struct db_build head, base;
	char *why = NULL;
	int failed_runners = 0;
	size_t i;
	int r;

	memset(base_out, 0, sizeof(*base_out));
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
		say_build_failure(a, job, &head, "");
		goto out;
	}
	/* The contract runners check a head; a history job only measures. A
	 * host quarantined since the job began (a fault, a process that
	 * outlived SIGKILL) runs no more of it: the job waits as it is. */
	r = agent_refuse_quarantined(a);
	if (r == 0 && job->kind == DB_JOB_HEAD)
		r = run_runners(a, job, &head, &failed_runners);
	if (r < 0)
		goto out;
	if (*job->base && a->suite->ncases) {
		r = ensure_build(a, &base, job->base);
		if (r < 0)
			goto out;
		if (base.state != DB_BUILD_DONE) {
			why = xasprintf("the base build %lld failed: no comparison", (long long)base.id);
			say_build_failure(a, job, &base, "the base's ");
			goto out;
		}
		agent_heartbeat(a, "measuring", job->id);
		for (i = 0; i < a->suite->ncases && !why; i++) {
			if (*job->case_name && strcmp(job->case_name, a->suite->cases[i].name))
				continue;
			r = agent_refuse_quarantined(a);
			if (r == 0)
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
	*base_out = base;
	return r;
}

/*
 * After job, with [calibration] when = after: each case of the job that
 * has no calibration on this host as it is now gets its A/As of the job's
 * base build, so that the next job's comparisons are calibrated. The job's
 * own comparisons did not wait for them: without a calibration the rule
 * judges by its sign test (docs/rule.md).
 */
static int calibrate_after(struct agent *a, const struct db_job *job, const struct db_build *base)
{
	size_t i;
	int r = 0;

	if (a->cfg->calibration.when != AGENT_CALIBRATE_AFTER || base->state != DB_BUILD_DONE)
		return 0;
	for (i = 0; i < a->suite->ncases && r == 0; i++) {
		const struct agent_case *k = &a->suite->cases[i];

		if (*job->case_name && strcmp(job->case_name, k->name))
			continue;
		if (!agent_artifact_named(base, k->program))
			continue;
		r = agent_calibrate_case(a, k, base);
	}
	if (r == 0)
		r = agent_push(a);
	return r > 0 ? 0 : r;
}

int agent_work(struct agent *a)
{
	int r;

	if (!a->suite)
		return err_set(-EINVAL, "no suite to build with: '%s' on the default branch "
			       "could not be read", a->cfg->suite_file);
	for (;;) {
		struct db_build base;
		struct db_job job;

		if (child_cancel_wait(a->cancel_fd, 0))
			return err_set(-ECANCELED, "stopped");
		/* A quarantined host runs nothing, whatever its queue holds. */
		r = agent_refuse_quarantined(a);
		if (r < 0)
			return r;
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
		/* A job that would run a held commit waits for its release. */
		r = agent_job_held(a, &job);
		if (r == 1) {
			db_job_release(&job);
			continue;
		}
		if (r < 0) {
			db_job_release(&job);
			return r;
		}
		/* A commit's status on the forge is its head job's alone. */
		if (a->gh && job.kind == DB_JOB_HEAD)
			agent_status_set(a, job.commit, job.id, "pending", "running");
		r = do_job(a, &job, &base);
		if (r == 0 && a->gh && job.kind == DB_JOB_HEAD)
			agent_job_done(a, job.head, job.commit);
		if (r == 0)
			r = calibrate_after(a, &job, &base);
		db_build_release(&base);
		db_job_release(&job);
		if (r < 0)
			return r;
	}
}
