/*
 * Pair scheduling: warm-ups, then pairs in alternating order (AB, BA, AB,
 * ...), one fresh process each. Every process is a row before it starts
 * and is completed when it ends, so a comparison cut short keeps every
 * process that ran. The summary is computed from the rows read back from
 * the database, never from what is in memory.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "runners.h"
#include "sandbox.h"


struct slot {
	const char *arm;
	int pair;
	bool warmup;
};

/* Order of the 2 * (warmup + pairs) processes. Pair i runs old first when i
 * is odd and new first when it is even; warm-ups alternate the same way.
 * Later stages continue the same order from pair pairs + 1. */
static struct slot *schedule(int warmup, int pairs, size_t *out_n)
{
	size_t n = 2 * (size_t)(warmup + pairs), k = 0;
	struct slot *s = xcalloc(n, sizeof(*s));
	int i;

	for (i = 1; i <= warmup; i++) {
		bool old_first = i % 2;

		s[k++] = (struct slot){ old_first ? "old" : "new", 0, true };
		s[k++] = (struct slot){ old_first ? "new" : "old", 0, true };
	}
	for (i = 1; i <= pairs; i++) {
		bool old_first = i % 2;

		s[k++] = (struct slot){ old_first ? "old" : "new", i, false };
		s[k++] = (struct slot){ old_first ? "new" : "old", i, false };
	}
	*out_n = n;
	return s;
}

/* The arm's environment: ours, the comparison's --env, the arm's own, then
 * what perfd tells every child. */
static void build_env(struct child_env *env, const struct runner_pair_opts *o,
		      const struct runner_arm *arm, const struct slot *s, int seq)
{
	size_t i;

	sandbox_env_init(env, o->sandbox);
	for (i = 0; i < o->nenv; i++)
		child_env_set(env, o->env[i]);
	for (i = 0; i < arm->nenv; i++)
		child_env_set(env, arm->env[i]);
	child_env_setf(env, "PERFD_ARM=%s", s->arm);
	child_env_setf(env, "PERFD_PAIR=%d", s->pair);
	child_env_setf(env, "PERFD_SEQ=%d", seq);
	child_env_setf(env, "PERFD_WARMUP=%d", s->warmup);
}

static const char **build_argv(const struct runner_pair_opts *o, const struct runner_arm *arm)
{
	const char **argv = xcalloc(2 + o->nargs + arm->nargs, sizeof(char *));
	size_t k = 0, i;

	argv[k++] = arm->path;
	for (i = 0; i < o->nargs; i++)
		argv[k++] = o->args[i];
	for (i = 0; i < arm->nargs; i++)
		argv[k++] = arm->args[i];
	argv[k] = NULL;
	return argv;
}

static json_t *strv_json(const char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

/* What each arm was run with, kept with the comparison so that the receipt
 * says exactly which command produced each number. */
static char *args_json(const struct runner_pair_opts *o)
{
	json_t *root = json_object();
	const struct runner_arm *arms[2] = { &o->old, &o->new };
	const char *names[2] = { "old", "new" };
	char *text;
	int i;

	for (i = 0; i < 2; i++) {
		json_t *arm = json_object();
		const char **argv = build_argv(o, arms[i]);
		size_t n = 0;

		while (argv[n])
			n++;
		json_object_set_new(arm, "argv", strv_json(argv, n));
		json_object_set_new(arm, "env", strv_json(arms[i]->env, arms[i]->nenv));
		json_object_set_new(root, names[i], arm);
		free(argv);
	}
	json_object_set_new(root, "env", strv_json(o->env, o->nenv));
	if (o->cpus && o->cpus->count) {
		struct strbuf cpus = STRBUF_INIT;

		cpus_format(&cpus, o->cpus);
		json_object_set_new(root, "cpus", json_string(cpus.buf));
		strbuf_release(&cpus);
	}
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return text ? text : xstrdup("{}");
}

static void on_stdout(void *ctx, const char *buf, size_t len)
{
	runner_protocol_feed(ctx, buf, len);
}

/* Moves what the child and the parser saw into the process record. */
static void fill_record(struct db_process *rec, struct child *child,
			struct runner_protocol *proto)
{
	memcpy(rec->ended_at, child->ended_at, sizeof(rec->ended_at));
	rec->exit_code = child->exit_code;
	rec->signal = child->signal;
	rec->timed_out = child->timed_out;
	rec->spawn_error = child->spawn_error;
	child->spawn_error = NULL;
	rec->wall_ms = child->wall_ms;
	rec->user_ms = child->user_ms;
	rec->sys_ms = child->sys_ms;
	rec->maxrss_kb = child->maxrss_kb;
	rec->cpu_wait_ms = child->cpu_wait_ms;
	rec->stdout_bytes = child->out_total;
	rec->stderr_bytes = child->err_total;
	rec->out_len = child->out.len;
	rec->out = strbuf_detach(&child->out);
	rec->err_len = child->err.len;
	rec->err = strbuf_detach(&child->err);
	rec->metrics = proto->metrics;
	rec->nmetrics = proto->nmetrics;
	proto->metrics = NULL;
	proto->nmetrics = 0;
	rec->digest = runner_protocol_digest(proto);
	rec->record_valid = proto->record_valid;
	rec->lines = proto->lines;
	rec->nlines = proto->nlines;
	proto->lines = NULL;
	proto->nlines = 0;
	rec->protocol_errors = proto->errors;
	rec->nprotocol_errors = proto->nerrors;
	proto->errors = NULL;
	proto->nerrors = 0;
}

/* A process record for slot s at position seq, not yet stored. */
static void record_init(struct db_process *rec, const struct runner_pair_opts *o,
			int64_t cid, const struct slot *s, int seq)
{
	memset(rec, 0, sizeof(*rec));
	rec->comparison_id = cid;
	rec->seq = seq;
	snprintf(rec->arm, sizeof(rec->arm), "%s", s->arm);
	rec->pair = s->pair;
	rec->warmup = s->warmup;
	rec->state = DB_STATE_RUNNING;
	if (o->cpus && o->cpus->count) {
		struct strbuf cpus = STRBUF_INIT;

		cpus_format(&cpus, o->cpus);
		rec->cpus = strbuf_detach(&cpus);
	}
	time_now_iso(rec->started_at);
}

/* Runs the process of rec, whose row is stored, and fills in what happened;
 * a process of it that outlived SIGKILL is named in *out_unkillable (the
 * caller's). Returns 0, or a negative errno when the launcher could not
 * set up. */
static int run_one(const struct runner_pair_opts *o, const struct slot *s,
		   struct db_process *rec, bool *out_cancelled, char **out_unkillable)
{
	const struct runner_arm *arm = !strcmp(s->arm, "old") ? &o->old : &o->new;
	const char **argv = build_argv(o, arm);
	struct sandbox_step step = { .ro = o->sandbox_ro };
	struct child_env env;
	struct child child;
	struct runner_protocol proto;
	int r;

	build_env(&env, o, arm, s, rec->seq);
	child_init(&child);
	runner_protocol_init(&proto);
	child.argv = argv;
	child.env = (const char *const *)env.v;
	child.timeout_s = o->timeout_s;
	child.cpus = o->cpus;
	child.capture_max = o->capture_max;
	child.cancel_fd = o->cancel_fd;
	child.wrap = sandbox_wrap(&step, o->sandbox);
	child.on_stdout = on_stdout;
	child.ctx = &proto;
	if (o->watch)
		runner_fault_watch_mark(o->watch);
	r = child_run(&child);
	if (r == 0) {
		runner_protocol_finish(&proto);
		memcpy(rec->started_at, child.started_at, sizeof(rec->started_at));
		fill_record(rec, &child, &proto);
		if (o->watch) {
			rec->fault = runner_fault_watch_check(o->watch);
			rec->fault_watch = runner_fault_watch_state(o->watch);
		}
		*out_cancelled = child.cancelled;
		*out_unkillable = child.unkillable;
		child.unkillable = NULL;
	}
	child_release(&child);
	runner_protocol_release(&proto);
	free(argv);
	child_env_release(&env);
	return r;
}

/* Notes the metric names a pair process printed; true once there are two,
 * which settles that the comparison cannot be summarized without --metric. */
static bool metrics_ambiguous(const struct db_process *rec, char ***seen, size_t *nseen)
{
	size_t i, j;

	for (i = 0; !rec->warmup && i < rec->nmetrics; i++) {
		for (j = 0; j < *nseen; j++)
			if (!strcmp((*seen)[j], rec->metrics[i].name))
				break;
		if (j == *nseen) {
			*seen = xrealloc(*seen, (*nseen + 1) * sizeof(char *));
			(*seen)[(*nseen)++] = xstrdup(rec->metrics[i].name);
		}
	}
	return *nseen > 1;
}

/* A metric the process printed that is not named as a time (a rate, or a
 * unit perfd does not know: runner_metric_needs_better), when no metric
 * was named and no direction said: the comparison cannot know which way is
 * better. NULL when there is none, and when it printed several: then which
 * one is the question first (the rule's "choose one with --metric"). */
static const char *unsaid_rate(const struct runner_pair_opts *o, const struct db_process *rec)
{
	size_t i;

	if (o->metric || o->better_given || rec->nmetrics > 1)
		return NULL;
	for (i = 0; i < rec->nmetrics; i++)
		if (runner_metric_needs_better(rec->metrics[i].name))
			return rec->metrics[i].name;
	return NULL;
}

/* Process p brought a fault line or outlived SIGKILL (why, what): its
 * commit (its arm's build's) is held on the host, and the host
 * quarantined. */
static int hold(struct db *db, const struct runner_pair_opts *o, const struct db_process *p,
		enum db_hold_why why, const char *what)
{
	struct db_hold step = {
		.step = DB_HOLD_CASE, .job_id = o->job_id, .comparison_id = p->comparison_id,
		.build_id = !strcmp(p->arm, "old") ? o->base_build : o->head_build, .seq = p->seq,
	};

	snprintf(step.name, sizeof(step.name), "%s", o->case_name ? o->case_name : "default");
	snprintf(step.arm, sizeof(step.arm), "%s", p->arm);
	memcpy(step.started_at, p->started_at, sizeof(step.started_at));
	memcpy(step.last_at, p->started_at, sizeof(step.last_at));
	return runner_hold_add(db, o->host, &step, why, what);
}

/* Stores the end of cur and, when there is one, the start of next, in one
 * transaction: the next process has its row before it starts, and a
 * comparison pays one commit per process. A fault line of cur, or a
 * process of it that outlived SIGKILL (unkillable), holds its commit. */
static int store_step(struct db *db, const struct runner_pair_opts *o,
		      struct db_process *cur, struct db_process *next, const char *unkillable)
{
	int r;

	r = db_transaction_begin(db);
	if (r < 0)
		return r;
	r = db_process_finish(db, cur);
	/* The GPU is not to be trusted until someone has looked, nor the
	 * commit that faulted it. */
	if (r == 0 && cur->fault)
		r = hold(db, o, cur, DB_HOLD_FAULT, cur->fault);
	if (r == 0 && unkillable)
		r = hold(db, o, cur, DB_HOLD_UNKILLABLE, unkillable);
	if (r == 0 && next)
		r = db_process_insert(db, &next->id, next);
	if (r < 0) {
		db_transaction_rollback(db);
		return r;
	}
	r = db_transaction_commit(db);
	if (r == 0)
		cur->state = DB_STATE_DONE;
	return r;
}

/* Judges the stages run so far from the stored rows: whether another
 * stage is to run, after saying where the comparison stands. */
static int judge_stage(struct db *db, int64_t cid, const struct runner_pair_opts *o,
		       struct runner_progress *pr, bool *out_more)
{
	struct db_comparison c;
	struct db_summary s;
	int r;

	*out_more = false;
	memset(&s, 0, sizeof(s));
	r = db_comparison_load(db, &c, cid);
	if (r < 0)
		return r;
	c.state = DB_STATE_RUNNING;
	r = runner_rule_apply(&s, &c);
	if (r == 0) {
		*out_more = s.more;
		if (o->progress && s.nstages) {
			pr->p = NULL;
			pr->judged = &s.stages[s.nstages - 1];
			pr->more = s.more;
			o->progress(o->progress_ctx, pr);
			pr->judged = NULL;
		}
	}
	db_summary_release(&s);
	db_comparison_release(&c);
	return r;
}

int runner_comparison_abandon(struct db *db, int64_t cid, const char *reason)
{
	struct db_comparison c;
	struct db_summary s;
	int r;

	memset(&s, 0, sizeof(s));
	r = db_transaction_begin(db);
	if (r < 0)
		return r;
	r = db_comparison_abandoned_reason_set(db, cid, reason);
	if (r == 0)
		r = db_comparison_load(db, &c, cid);
	else
		memset(&c, 0, sizeof(c));
	if (r == 0) {
		c.state = DB_STATE_ABANDONED;
		r = runner_rule_apply(&s, &c);
	}
	if (r == 0)
		r = db_comparison_finish(db, cid, DB_STATE_ABANDONED, &s, c.processes,
					 c.nprocesses);
	if (r == 0)
		r = db_transaction_commit(db);
	else
		db_transaction_rollback(db);
	db_summary_release(&s);
	db_comparison_release(&c);
	return r;
}

int runner_orphans_abandon(struct db *db, bool unowned)
{
	struct db_orphan *v = NULL;
	size_t n = 0, i;
	int r, done = 0;

	r = db_comparison_orphans(db, &v, &n, unowned);
	for (i = 0; r == 0 && i < n; i++) {
		char *why = v[i].pid ?
			xasprintf("the perfd that ran it (pid %ld) ended before it finished",
				  v[i].pid) :
			xstrdup("the perfd that ran it ended before it finished");

		r = runner_comparison_abandon(db, v[i].id, why);
		free(why);
		if (r == -EALREADY)
			r = 0;        /* another perfd marked it first */
		else if (r == 0)
			done++;
	}
	free(v);
	return r < 0 ? r : done;
}

/* Waits between the tries of the final write after a failure (a full disk,
 * a lock held too long): the last write a comparison needs. */
static const unsigned abandon_waits_ms[] = { 0, 250, 1000, 2000 };

/* After the failure err (its detail in why) stopped comparison cid, marks
 * it abandoned with why, trying again a few times; err with a detail that
 * says whether the mark was stored. */
static int abandon_after(struct db *db, const struct runner_pair_opts *o, int64_t cid,
			 int err)
{
	char *why = xstrdup(err_last());
	size_t i;
	int r = -EIO;

	for (i = 0; i < ARRAY_SIZE(abandon_waits_ms); i++) {
		if (abandon_waits_ms[i] && child_cancel_wait(o->cancel_fd, abandon_waits_ms[i]))
			break;
		r = runner_comparison_abandon(db, cid, why);
		if (r == 0 || (r != -ENOSPC && r != -EBUSY && r != -EIO))
			break;
	}
	if (r == 0)
		err_set(err, "%s; comparison %lld is stored as abandoned", why, (long long)cid);
	else
		err_set(err, "%s; comparison %lld could not be marked abandoned either (%s): "
			"the next perfd pair or agent to open the database marks it so",
			why, (long long)cid, err_last());
	free(why);
	return err;
}

/* Inserts the row of the process of slot (seq: its place in execution
 * order) before it runs, as record_init fills it into *p. */
static int process_start(struct db *db, struct db_process *p, const struct runner_pair_opts *o,
			 int64_t cid, const struct slot *slot, int seq)
{
	record_init(p, o, cid, slot, seq);
	return db_process_insert(db, &p->id, p);
}

static void names_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Tells o's progress callback, when there is one, of process p stored. */
static void progress_say(const struct runner_pair_opts *o, struct runner_progress *pr,
			 const struct db_process *p, size_t stage_end)
{
	if (!o->progress)
		return;
	pr->p = p;
	pr->total = (int)stage_end;
	o->progress(o->progress_ctx, pr);
}

/* Inserts the comparison's row with o's settings; its id in *out_id.
 * -EINVAL when the stages could not be made (nstages < 0). */
static int comparison_insert(struct db *db, int64_t *out_id, const struct runner_pair_opts *o,
			     int max_pairs, int nstages)
{
	struct db_comparison ins;
	int r;

	if (nstages < 0)
		return err_set(-EINVAL, "pairs %d and max pairs %d: %s needs "
			       "1 <= pairs <= max pairs <= %d", o->pairs, max_pairs, RUNNER_RULE,
			       RUNNER_RULE2_MAX_PAIRS);
	memset(&ins, 0, sizeof(ins));
	/* ins borrows every string: it is never released. */
	time_now_iso(ins.created_at);
	ins.rule = (char *)RUNNER_RULE;
	ins.case_name = (char *)(o->case_name ? o->case_name : "default");
	ins.metric_requested = (char *)o->metric;
	ins.host = (char *)o->host;
	ins.fingerprint = (char *)o->fingerprint;
	ins.old.id = o->old_artifact;
	ins.new.id = o->new_artifact;
	ins.pairs = o->pairs;
	ins.max_pairs = max_pairs;
	ins.aa = o->aa;
	ins.higher_better = o->higher_better;
	ins.calibration = (struct db_calibration *)o->calibration;
	ins.ncalibration = o->ncalibration;
	ins.old_manifest = (char *)o->old_manifest;
	ins.new_manifest = (char *)o->new_manifest;
	ins.warmup = o->warmup;
	ins.timeout_s = o->timeout_s;
	ins.min_effect = o->min_effect;
	ins.noise = o->noise;
	ins.job_id = o->job_id;
	ins.base_build = o->base_build;
	ins.head_build = o->head_build;
	ins.args_json = args_json(o);
	r = db_comparison_insert(db, out_id, &ins);
	free(ins.args_json);
	return r;
}

/* Inserts the comparison with the max_pairs its time budget sets, else
 * o's, into *out_max_pairs, and its stages into stages (room for
 * RUNNER_STAGES_MAX); *out_id is set once the row exists, 0 before. */
static int comparison_begin(struct db *db, int64_t *out_id, const struct runner_pair_opts *o,
			    int *out_max_pairs, int *stages, int *out_nstages)
{
	int budget = runner_budget_max_pairs(out_max_pairs, db, o), r;

	*out_id = 0;
	*out_nstages = 0;
	if (budget < 0)
		return budget;
	*out_nstages = runner_stages(stages, o->pairs, *out_max_pairs);
	r = comparison_insert(db, out_id, o, *out_max_pairs, *out_nstages);
	if (r == 0 && budget)
		r = db_comparison_time_budget_set(db, *out_id, o->time_budget_s);
	return r;
}

/* Stores the end of comparison cid from its stored rows: done, or
 * abandoned (cancelled) with its reason (a rate metric without a
 * direction, or a signal), and the rule's summary. Returns 0, -EDOM for
 * the rate, -ECANCELED when interrupted, or the database's error. */
static int comparison_end(struct db *db, int64_t cid, bool cancelled, const char *rate)
{
	struct db_comparison c;
	struct db_summary summary;
	int r;

	memset(&c, 0, sizeof(c));
	memset(&summary, 0, sizeof(summary));
	r = db_comparison_load(db, &c, cid);
	if (r < 0)
		goto out;
	c.state = cancelled ? DB_STATE_ABANDONED : DB_STATE_DONE;
	if (cancelled) {
		/* Said in the row so that verify's rule says it again. */
		free(c.abandoned_reason);
		c.abandoned_reason = rate ?
			xasprintf("metric '%s' reads as a rate and no direction was said", rate) :
			xstrdup("stopped by a signal before it finished");
		r = db_comparison_abandoned_reason_set(db, cid, c.abandoned_reason);
		if (r < 0)
			goto out;
	}
	r = runner_rule_apply(&summary, &c);
	if (r < 0)
		goto out;
	r = db_comparison_finish(db, cid, c.state, &summary, c.processes, c.nprocesses);
	if (r == 0 && rate)
		r = err_set(-EDOM, "metric '%s' reads as a rate: say which way is better "
			    "(--better higher or lower; in an agent's case, better = higher or "
			    "lower); comparison %lld is stored as abandoned", rate, (long long)cid);
	else if (r == 0 && cancelled)
		r = err_set(-ECANCELED, "comparison %lld interrupted", (long long)cid);
out:
	db_summary_release(&summary);
	db_comparison_release(&c);
	return r;
}

int runner_pair_run(struct db *db, int64_t *out_id, const struct runner_pair_opts *o)
{
	struct db_process cur, next;
	struct runner_progress pr;
	struct slot *slots = NULL;
	char **seen = NULL, *unkillable = NULL;
	int stages[RUNNER_STAGES_MAX], nstages, stage = 0;
	int max_pairs;
	size_t nslots, nseen = 0, i, stage_end;
	bool cancelled = false, fault = false;
	char *rate = NULL;
	int64_t cid = 0;
	int r;

	*out_id = 0;
	memset(&cur, 0, sizeof(cur));
	memset(&next, 0, sizeof(next));
	r = comparison_begin(db, &cid, o, &max_pairs, stages, &nstages);
	if (r < 0 && !cid)
		return r;
	*out_id = cid;
	if (r < 0)
		goto out;

	/* The whole order up to max_pairs; a stage ends at stage_end slots. */
	slots = schedule(o->warmup, max_pairs, &nslots);
	stage_end = 2 * (size_t)(o->warmup + stages[0]);
	pr = (struct runner_progress){ .stage = 1, .nstages = nstages, .metric = o->metric,
				       .higher_better = o->higher_better };
	r = process_start(db, &cur, o, cid, &slots[0], 1);
	if (r < 0)
		goto out;
	for (i = 0; i < nslots; i++) {
		bool ambiguous, stop, go_on, last_of_stage, more = false;

		r = run_one(o, &slots[i], &cur, &cancelled, &unkillable);
		if (r < 0)
			goto out;
		fault = cur.fault != NULL || unkillable;  /* either ends it */
		/* Without --metric, two metric names settle it: the comparison
		 * cannot be summarized, so the rest is not run. */
		ambiguous = metrics_ambiguous(&cur, &seen, &nseen) && !o->metric;
		if (!rate && unsaid_rate(o, &cur))
			rate = xstrdup(unsaid_rate(o, &cur));
		stop = cancelled || rate || child_cancel_wait(o->cancel_fd, 0);
		go_on = !stop && !fault && !ambiguous;
		last_of_stage = i + 1 == stage_end;
		if (go_on && !last_of_stage)
			record_init(&next, o, cid, &slots[i + 1], (int)i + 2);
		r = store_step(db, o, &cur, go_on && !last_of_stage ? &next : NULL, unkillable);
		if (r < 0)
			goto out;
		progress_say(o, &pr, &cur, stage_end);
		db_process_release(&cur);
		if (last_of_stage && !fault && !ambiguous && stage + 1 < nstages) {
			/* The end of a stage: judged from the stored rows. A stop
			 * asked for now cuts the comparison short only when
			 * another stage was due. */
			r = judge_stage(db, cid, o, &pr, &more);
			if (r < 0)
				goto out;
			if (more && stop) {
				cancelled = true;
				break;
			}
		}
		if (!more && (!go_on || last_of_stage)) {
			cancelled = cancelled || rate || (stop && !fault && !last_of_stage);
			break;
		}
		if (more) {
			stage++;
			stage_end = 2 * (size_t)(o->warmup + stages[stage]);
			pr.stage = stage + 1;
			r = process_start(db, &cur, o, cid, &slots[i + 1], (int)i + 2);
			if (r < 0)
				goto out;
		} else {
			cur = next;
			memset(&next, 0, sizeof(next));
		}
		if (o->cooldown_ms && child_cancel_wait(o->cancel_fd, o->cooldown_ms)) {
			/* The next row exists and never ran: stored as abandoned. */
			cancelled = true;
			break;
		}
	}

	r = comparison_end(db, cid, cancelled, rate);
out:
	if (r < 0 && r != -ECANCELED && r != -EDOM)
		r = abandon_after(db, o, cid, r);
	free(rate);
	free(unkillable);
	db_process_release(&cur);
	db_process_release(&next);
	names_free(seen, nseen);
	free(slots);
	return r;
}
