/*
 * The agent's history (docs/history.md): the alerts. Each pass reads the
 * verdicts of head and span jobs once; a change found on a history branch
 * becomes an alert, confirmed by its comparison repeated before it is
 * raised, and a confirmed alert's range is bisected (history-bisect.c).
 * Spans are queued at a poll (history-span.c). Everything it decides is a
 * row (a job, an alert, a step) before it is acted on, and every decision
 * is made again from those rows: an agent killed at any point goes on
 * where it was.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

#define JUDGE_BATCH 64

bool agent_history_branch(const struct agent *a, const char *name)
{
	const struct agent_history *h = &a->cfg->history;
	size_t i;

	for (i = 0; i < h->nbranches; i++)
		if (!strcmp(h->branches[i], name))
			return true;
	return false;
}

int agent_job_verdict(struct agent *a, struct agent_verdict *out, int64_t job_id,
		      const char *case_name)
{
	struct db_comparison c;
	enum db_state state;
	int64_t cid;
	int r;

	memset(out, 0, sizeof(*out));
	r = db_job_comparison(a->db, &cid, &state, job_id, case_name);
	if (r == -ENOENT || (r == 0 && state != DB_STATE_DONE))
		return 0;
	if (r < 0)
		return r;
	r = db_comparison_load(a->db, &c, cid);
	if (r < 0)
		return r;
	out->id = cid;
	/* One build against itself changed nothing, whatever its noise says. */
	snprintf(out->verdict, sizeof(out->verdict), "%s", c.aa ? "unchanged" : c.summary.verdict);
	out->has_gain = c.summary.has_gain;
	out->gain = c.summary.gain_median;
	out->min_effect = c.min_effect;
	db_comparison_release(&c);
	return 0;
}

static bool is_change(const char *verdict)
{
	return !strcmp(verdict, "slower") || !strcmp(verdict, "faster");
}

/* Whether a head job of branch at one of chain's commits found the span's
 * change of case alone: the same verdict, with a gain within the span
 * comparison's min_effect of the span's (a head's 1% inside a span's 4%
 * leaves 3% that no head found), so that the span's change is that
 * commit's. 1, with the commit in out, when one did and its alert was not
 * dismissed (a head's change its repeated comparison did not find again
 * was noise, and says nothing of the span's); 2, with the commit in out,
 * when that alert is still being confirmed (the span is judged once it is
 * decided); 0 when none did. */
static int single_commit_found(struct agent *a, const char *branch, const char *case_name,
			       const struct agent_verdict *span, char (*chain)[BUILDER_OID_HEX],
			       size_t n, char out[BUILDER_OID_HEX])
{
	size_t i;
	int r = 0;

	for (i = 0; i < n && r == 0; i++) {
		struct db_alert key, al;
		struct db_job job;
		struct agent_verdict v;

		if (db_job_get(a->db, &job, branch, chain[i]) < 0)
			continue;
		r = agent_job_verdict(a, &v, job.id, case_name);
		if (r < 0 || strcmp(v.verdict, span->verdict) || !v.has_gain || !span->has_gain ||
		    !(fabs(span->gain - v.gain) < span->min_effect)) {
			db_job_release(&job);
			continue;
		}
		memset(&key, 0, sizeof(key));
		snprintf(key.branch, sizeof(key.branch), "%s", branch);
		snprintf(key.case_name, sizeof(key.case_name), "%s", case_name);
		snprintf(key.lo, sizeof(key.lo), "%s", job.base);
		snprintf(key.hi, sizeof(key.hi), "%s", job.commit);
		db_job_release(&job);
		r = db_alert_lookup(a->db, &al, &key);
		if (r == -ENOENT) {
			/* No alert of its own (read before [history] was on):
			 * its verdict stands. */
			snprintf(out, BUILDER_OID_HEX, "%s", chain[i]);
			return 1;
		}
		if (r < 0)
			return r;
		r = al.state == DB_ALERT_DISMISSED ? 0 : al.state == DB_ALERT_CONFIRMING ? 2 : 1;
		db_alert_release(&al);
		if (r > 0) {
			snprintf(out, BUILDER_OID_HEX, "%s", chain[i]);
			return r;
		}
	}
	return r;
}

static int queue_confirm(struct agent *a, const struct db_alert *al)
{
	char gain[32];
	struct db_job job;
	int64_t id;
	int r;

	memset(&job, 0, sizeof(job));
	job.kind = DB_JOB_CONFIRM;
	job.alert_id = al->id;
	snprintf(job.head, sizeof(job.head), "confirm:%lld", (long long)al->id);
	snprintf(job.commit, sizeof(job.commit), "%s", al->hi);
	snprintf(job.base, sizeof(job.base), "%s", al->lo);
	snprintf(job.case_name, sizeof(job.case_name), "%s", al->case_name);
	job.subject = xasprintf("confirm alert %lld", (long long)al->id);
	r = db_job_queue(a->db, &id, &job);
	runner_format_gain(gain, sizeof(gain), fabs(al->gain));
	if (r == 1)
		log_info("alert %lld: %s %s %s over %d commit%s %.12s..%.12s: confirm job %lld "
			 "queued", (long long)al->id, al->case_name, al->slower ? "slower" : "faster",
			 gain, al->commits, al->commits == 1 ? "" : "s", al->lo, al->hi,
			 (long long)id);
	free(job.subject);
	return r < 0 ? r : 0;
}

/* Reads job's verdicts: each change found on a history branch becomes an
 * alert, confirmed before it is raised. *later is set when the job must be
 * read again once an alert it depends on is decided. */
static int judge(struct agent *a, const struct db_job *job, bool *later)
{
	const char *branch = job->kind == DB_JOB_SPAN ? job->head + strlen("span:") : job->head;
	char (*chain)[BUILDER_OID_HEX] = NULL;
	size_t nchain = 0, i;
	int r = 0, raised = 0;

	if (job->state != DB_JOB_DONE || !*job->base || !agent_history_branch(a, branch) ||
	    !a->suite)
		return 0;
	if (builder_first_parents(a->repo, &chain, &nchain, job->commit, job->base,
				  AGENT_SPAN_COMMITS_MAX) < 0)
		nchain = 0;  /* a base off the first-parent line: a range of unknown length */
	for (i = 0; i < a->suite->ncases && r == 0; i++) {
		const char *case_name = a->suite->cases[i].name;
		char one[BUILDER_OID_HEX];
		struct db_alert al;
		struct agent_verdict v;
		int64_t id;

		r = agent_job_verdict(a, &v, job->id, case_name);
		if (r < 0 || !is_change(v.verdict))
			continue;
		if (job->kind == DB_JOB_SPAN) {
			r = single_commit_found(a, branch, case_name, &v, chain, nchain, one);
			if (r < 0)
				break;
			if (r == 1) {
				log_info("history %s: span job %lld: %s %s, as the head job of %.12s "
					 "found alone: no span alert", branch, (long long)job->id,
					 case_name, v.verdict, one);
				r = 0;
				continue;
			}
			if (r == 2) {
				log_info("history %s: span job %lld: %s %s, as the head job of %.12s "
					 "found alone, whose alert is being confirmed: read again once "
					 "it is decided", branch, (long long)job->id, case_name,
					 v.verdict, one);
				*later = true;
				r = 0;
				continue;
			}
		}
		memset(&al, 0, sizeof(al));
		snprintf(al.branch, sizeof(al.branch), "%s", branch);
		snprintf(al.case_name, sizeof(al.case_name), "%s", case_name);
		snprintf(al.lo, sizeof(al.lo), "%s", job->base);
		snprintf(al.hi, sizeof(al.hi), "%s", job->commit);
		al.found_by_span = job->kind == DB_JOB_SPAN;
		al.commits = (int)nchain;
		al.slower = !strcmp(v.verdict, "slower");
		al.gain = v.gain;
		al.comparison_id = v.id;
		r = db_alert_add(a->db, &id, &al);
		if (r == 1) {
			al.id = id;
			r = queue_confirm(a, &al);
			raised++;
		}
	}
	free(chain);
	return r < 0 ? r : raised;
}

static int confirm(struct agent *a, struct db_alert *al)
{
	const char *dir = al->slower ? "slower" : "faster";
	char head[64], gain[32], *why = NULL;
	struct db_job job;
	struct agent_verdict v;
	bool agrees;
	int r;

	snprintf(head, sizeof(head), "confirm:%lld", (long long)al->id);
	r = db_job_get(a->db, &job, head, al->hi);
	if (r == -ENOENT)
		return (r = queue_confirm(a, al)) < 0 ? r : 1;
	if (r < 0)
		return r;
	if (job.state == DB_JOB_QUEUED || job.state == DB_JOB_RUNNING) {
		db_job_release(&job);
		return 0;
	}
	r = agent_job_verdict(a, &v, job.id, al->case_name);
	if (r == 0) {
		agrees = job.state == DB_JOB_DONE && !strcmp(v.verdict, dir);
		runner_format_gain_signed(gain, sizeof(gain), v.has_gain ? v.gain : NAN);
		if (agrees)
			why = xasprintf("confirmed: %s %s (comparison %lld)", v.verdict, gain,
					(long long)v.id);
		else if (job.state != DB_JOB_DONE)
			why = xasprintf("dismissed: the repeated comparison failed: %s",
					job.detail ? job.detail : "see its job");
		else
			why = xasprintf("dismissed: the repeated comparison said %s%s%s",
					*v.verdict ? v.verdict : "nothing", v.has_gain ? " " : "",
					v.has_gain ? gain : "");
		/* A range of one commit names its culprit at once; a longer one
		 * (or a merge) is bisected, when the budget allows any step. */
		r = db_alert_confirmed(a->db, al->id, agrees, v.id,
				       agrees && a->cfg->history.bisect_comparisons >= 2 ?
				       DB_BISECT_RUNNING : DB_BISECT_NONE, why);
		if (r == 0)
			log_info("alert %lld: %s", (long long)al->id, why);
		if (r == 0 && agrees && a->cfg->history.bisect_comparisons < 2) {
			struct db_alert_finding f = { .commit = al->commits == 1,
				.commits = al->commits, .has_gain = true, .gain = v.gain,
				.comparison_id = v.id };

			snprintf(f.lo, sizeof(f.lo), "%s", al->lo);
			snprintf(f.hi, sizeof(f.hi), "%s", al->hi);
			r = db_alert_finish(a->db, al->id, DB_BISECT_NONE, &f, 1, NULL);
		}
	}
	free(why);
	db_job_release(&job);
	return r < 0 ? r : 1;
}

int agent_history(struct agent *a)
{
	struct db_job *jobs = NULL;
	struct db_alert *alerts = NULL;
	size_t n = 0, i, marked;
	int r, queued = 0;

	/* Head and span jobs first: their verdicts, read once. Without
	 * [history] they are only marked read, so that turning it on later
	 * raises nothing about old history. */
	do {
		marked = 0;
		r = db_jobs_unjudged(a->db, &jobs, &n, JUDGE_BATCH);
		for (i = 0; r == 0 && i < n; i++) {
			bool later = false;

			if (a->cfg->history.on)
				r = judge(a, &jobs[i], &later);
			if (r > 0) {
				queued += r;
				r = 0;
			}
			if (r == 0 && !later) {
				r = db_job_judged(a->db, jobs[i].id);
				marked++;
			}
		}
		for (i = 0; i < n; i++)
			db_job_release(&jobs[i]);
		free(jobs);
		/* A job read again later stays first among the unread: a batch
		 * of those alone is the end of this pass's reading. */
	} while (r == 0 && n == JUDGE_BATCH && marked > 0);
	if (r < 0 || !a->cfg->history.on)
		return r;
	r = db_alerts_list(a->db, &alerts, &n, true, DB_BISECT_STEPS_MAX);
	for (i = 0; r >= 0 && i < n; i++) {
		if (alerts[i].state == DB_ALERT_CONFIRMING)
			r = confirm(a, &alerts[i]);
		else
			r = agent_history_bisect(a, &alerts[i]);
		if (r > 0)
			queued += r;
	}
	for (i = 0; i < n; i++)
		db_alert_release(&alerts[i]);
	free(alerts);
	/* Something changed (a job queued, an alert confirmed or dismissed,
	 * a bisection ended): the caller works the queue and calls again. */
	return r < 0 ? r : queued;
}
