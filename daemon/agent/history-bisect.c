/*
 * The bisection of a confirmed alert's range (docs/history.md,
 * "Bisection"): each step compares a midpoint against both ends of a range
 * known to carry the change, the halves that carry it are bisected in
 * turn, and a step whose halves do not add up to its range's change is
 * repeated once. Every step is a row (db_bisect_step) before its jobs run,
 * and each pass makes every decision again from the rows, so an agent
 * killed at any point goes on where it was.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

/* A range (lo, hi] known to carry the alert's change, with the comparison
 * that says so. */
struct segment {
	char lo[BUILDER_OID_HEX], hi[BUILDER_OID_HEX];
	struct agent_verdict v;
	bool merged;             /* the branch a merge brought in */
	bool proxy;              /* v is another range's (a merge's against its first
				  * parent): nothing to weigh its halves against */
	int doubted, repeat;     /* the last step on its way that was repeated,
				  * and its repeat; 0: none */
};

struct bisection {
	struct agent *a;
	struct db_alert *al;
	struct db_bisect_step *steps;
	size_t nsteps;
	struct segment *todo;    /* a queue */
	size_t ntodo, head;
	struct db_alert_finding *found;
	size_t nfound;
	bool pending;            /* a step's jobs are still to run */
	bool budget;             /* the budget ended a range's bisection */
	int queued;              /* jobs queued now */
};

/* Queues (lo, hi], a part of from (NULL: the alert's range), which keeps
 * its merged branch and the repeat on its way. */
static void push_segment(struct bisection *b, const struct segment *from, const char *lo,
			 const char *hi, const struct agent_verdict *v, bool merged)
{
	struct segment *s;

	b->todo = xrealloc(b->todo, (b->ntodo + 1) * sizeof(*b->todo));
	s = &b->todo[b->ntodo++];
	memset(s, 0, sizeof(*s));
	snprintf(s->lo, sizeof(s->lo), "%s", lo);
	snprintf(s->hi, sizeof(s->hi), "%s", hi);
	s->v = *v;
	s->merged = merged;
	if (from) {
		s->doubted = from->doubted;
		s->repeat = from->repeat;
	}
}

static void add_finding(struct bisection *b, bool commit, const struct segment *s, int commits,
			const char *note)
{
	struct db_alert_finding *f;

	b->found = xrealloc(b->found, (b->nfound + 1) * sizeof(*b->found));
	f = &b->found[b->nfound++];
	memset(f, 0, sizeof(*f));
	f->commit = commit;
	snprintf(f->lo, sizeof(f->lo), "%s", s->lo);
	snprintf(f->hi, sizeof(f->hi), "%s", s->hi);
	f->commits = commits;
	f->has_gain = s->v.has_gain;
	f->gain = s->v.gain;
	f->comparison_id = s->v.id;
	if (s->repeat)
		f->note = xasprintf("%s%sfound past step %d repeated as step %d", note ? note : "",
				    note ? "; " : "", s->doubted, s->repeat);
	else
		f->note = note ? xstrdup(note) : NULL;
}

static struct db_bisect_step *find_step(struct bisection *b, const struct segment *s,
					const char *mid)
{
	size_t i;

	for (i = 0; i < b->nsteps; i++)
		if (!strcmp(b->steps[i].lo, s->lo) && !strcmp(b->steps[i].hi, s->hi) &&
		    !strcmp(b->steps[i].mid, mid))
			return &b->steps[i];
	return NULL;
}

/* The step after st that compares the same midpoint of the same range:
 * its repeat; NULL when none. */
static struct db_bisect_step *find_repeat(struct bisection *b, const struct db_bisect_step *st)
{
	size_t i;

	for (i = 0; i < b->nsteps; i++)
		if (b->steps[i].step > st->step && !strcmp(b->steps[i].lo, st->lo) &&
		    !strcmp(b->steps[i].hi, st->hi) && !strcmp(b->steps[i].mid, st->mid))
			return &b->steps[i];
	return NULL;
}

/* Whether st repeats an earlier step. */
static bool is_repeat(struct bisection *b, const struct db_bisect_step *st)
{
	size_t i;

	for (i = 0; i < b->nsteps && b->steps[i].step < st->step; i++)
		if (find_repeat(b, &b->steps[i]) == st)
			return true;
	return false;
}

/* Whether mid was skipped in s: its step's comparisons, or its repeat's,
 * could not be made. */
static bool skipped(struct bisection *b, const struct segment *s, const char *mid)
{
	const struct db_bisect_step *st = find_step(b, s, mid), *rep;

	if (!st)
		return false;
	rep = find_repeat(b, st);
	return !strcmp(st->outcome, "skipped") || (rep && !strcmp(rep->outcome, "skipped"));
}

static int queue_step_job(struct bisection *b, int64_t *out, int step, const char *end,
			  const char *base, const char *commit)
{
	struct db_job job;
	int r;

	memset(&job, 0, sizeof(job));
	job.kind = DB_JOB_BISECT;
	job.alert_id = b->al->id;
	snprintf(job.head, sizeof(job.head), "bisect:%lld:%d:%s", (long long)b->al->id, step, end);
	snprintf(job.commit, sizeof(job.commit), "%s", commit);
	snprintf(job.base, sizeof(job.base), "%s", base);
	snprintf(job.case_name, sizeof(job.case_name), "%s", b->al->case_name);
	job.subject = xasprintf("bisect alert %lld, step %d", (long long)b->al->id, step);
	r = db_job_queue(b->a->db, out, &job);
	free(job.subject);
	b->queued += r == 1;
	return r < 0 ? r : 0;
}

/* Queues the step that compares mid against both ends of s, within the
 * budget; 1 when the budget is spent instead. */
static int queue_step(struct bisection *b, const struct segment *s, const char *mid)
{
	const struct agent_history *h = &b->a->cfg->history;
	struct db_bisect_step st;
	double secs = 0;
	int r;

	r = db_bisect_seconds(b->a->db, &secs, b->al->id);
	if (r < 0)
		return r;
	if ((int)(2 * b->nsteps + 2) > h->bisect_comparisons || secs >= h->bisect_hours * 3600)
		return 1;
	memset(&st, 0, sizeof(st));
	st.alert_id = b->al->id;
	st.step = (int)b->nsteps + 1;
	snprintf(st.lo, sizeof(st.lo), "%s", s->lo);
	snprintf(st.hi, sizeof(st.hi), "%s", s->hi);
	snprintf(st.mid, sizeof(st.mid), "%s", mid);
	/* The jobs first: a step row always names jobs that exist. */
	r = queue_step_job(b, &st.lo_job, st.step, "lo", s->lo, mid);
	if (r == 0)
		r = queue_step_job(b, &st.hi_job, st.step, "hi", mid, s->hi);
	if (r == 0)
		r = db_bisect_step_add(b->a->db, &st);
	if (r < 0)
		return r;
	/* Said from the copies in st: mid, and s, may lie in b->steps, which
	 * the realloc below moves. */
	log_info("alert %lld: bisection step %d: %.12s between %.12s and %.12s (jobs %lld, "
		 "%lld)", (long long)b->al->id, st.step, st.mid, st.lo, st.hi,
		 (long long)st.lo_job, (long long)st.hi_job);
	/* Known to the rest of this pass: numbered, and not asked again. */
	b->steps = xrealloc(b->steps, (b->nsteps + 1) * sizeof(*b->steps));
	b->steps[b->nsteps++] = st;
	return 0;
}

/* Reads a step's two jobs once both ended: its outcome, or "" while one
 * still runs. The detail stored with the outcome starts with prefix, when
 * not NULL. */
static int step_outcome(struct bisection *b, struct db_bisect_step *st, struct agent_verdict *lo,
			struct agent_verdict *hi, const char *prefix)
{
	const char *dir = b->al->slower ? "slower" : "faster";
	struct db_job jl, jh;
	char *why = NULL;
	int r;

	memset(lo, 0, sizeof(*lo));
	memset(hi, 0, sizeof(*hi));
	r = db_job_load(b->a->db, &jl, st->lo_job);
	if (r < 0)
		return r;
	r = db_job_load(b->a->db, &jh, st->hi_job);
	if (r < 0) {
		db_job_release(&jl);
		return r;
	}
	if ((jl.state == DB_JOB_QUEUED || jl.state == DB_JOB_RUNNING ||
	     jh.state == DB_JOB_QUEUED || jh.state == DB_JOB_RUNNING) && !*st->outcome) {
		b->pending = true;
		goto out;
	}
	r = agent_job_verdict(b->a, lo, jl.id, b->al->case_name);
	if (r == 0)
		r = agent_job_verdict(b->a, hi, jh.id, b->al->case_name);
	if (r < 0 || *st->outcome)
		goto out;
	/* A midpoint that does not build, or whose comparison says nothing
	 * (it crashed, printed no metric), is skipped, as git bisect skip. */
	if (jl.state == DB_JOB_FAILED || jh.state == DB_JOB_FAILED)
		why = xasprintf("%s%.12s skipped: %s", prefix ? prefix : "", st->mid,
				jl.state == DB_JOB_FAILED && jl.detail ? jl.detail :
				jh.detail ? jh.detail : "a job failed");
	else if (!lo->id || !hi->id || !strcmp(lo->verdict, "invalid") ||
		 !strcmp(hi->verdict, "invalid"))
		why = xasprintf("%s%.12s skipped: its comparisons are invalid or missing",
				prefix ? prefix : "", st->mid);
	if (why) {
		r = db_bisect_step_set(b->a->db, st->alert_id, st->step, "skipped", why);
		snprintf(st->outcome, sizeof(st->outcome), "skipped");
	} else {
		bool l = !strcmp(lo->verdict, dir), h = !strcmp(hi->verdict, dir);
		const char *o = l && h ? "both" : l ? "lower" : h ? "upper" : "neither";
		char lg[32], hg[32];

		runner_format_gain_signed(lg, sizeof(lg), lo->gain);
		runner_format_gain_signed(hg, sizeof(hg), hi->gain);
		why = xasprintf("%s%.12s..%.12s %s %s, %.12s..%.12s %s %s", prefix ? prefix : "",
				st->lo, st->mid, lo->verdict, lg, st->mid, st->hi, hi->verdict, hg);
		r = db_bisect_step_set(b->a->db, st->alert_id, st->step, o, why);
		snprintf(st->outcome, sizeof(st->outcome), "%s", o);
	}
	if (r == 0)
		log_info("alert %lld: bisection step %d: %s (%s)", (long long)st->alert_id, st->step,
			 st->outcome, why);
	free(why);
out:
	db_job_release(&jl);
	db_job_release(&jh);
	return r;
}

/* Whether a step's halves account for its segment's change: their gains
 * composed (each a fraction of its base's time: 1 - (1 - lo)(1 - hi)),
 * into *out, within the step's min_effect of the segment's. True when a
 * gain is missing, or the segment's is another range's: nothing to weigh. */
static bool adds_up(double *out, const struct segment *s, const struct agent_verdict *lo,
		    const struct agent_verdict *hi)
{
	*out = NAN;
	if (s->proxy || !s->v.has_gain || !lo->has_gain || !hi->has_gain)
		return true;
	*out = 1 - (1 - lo->gain) * (1 - hi->gain);
	return fabs(*out - s->v.gain) < fmax(lo->min_effect, hi->min_effect);
}

/* "halves carry X against the segment's Y", the caller's. */
static char *doubt(const struct segment *s, double sum)
{
	char sg[32], hg[32];

	runner_format_gain_signed(hg, sizeof(hg), sum);
	runner_format_gain_signed(sg, sizeof(sg), s->v.gain);
	return xasprintf("halves carry %s against the segment's %s", hg, sg);
}

/* Step st of s ended (not skipped): the halves that carry the change are
 * queued, or s is a finding. A step whose halves do not add up to s's
 * change is made again once, its repeat's verdicts followed in its place.
 * 1 when the repeat was skipped: the next midpoint is tried. */
static int descend(struct bisection *b, struct segment *s, struct db_bisect_step *st,
		   struct agent_verdict *lo, struct agent_verdict *hi, int n)
{
	struct db_bisect_step *rep;
	char *why = NULL, *note = NULL;
	double sum;
	int r = 0, step = st->step;

	if (!adds_up(&sum, s, lo, hi)) {
		why = doubt(s, sum);
		rep = find_repeat(b, st);
		if (!rep) {
			r = queue_step(b, s, st->mid);  /* st is moved */
			if (r == 1) {
				b->budget = true;
				note = xasprintf("step %d's %s, and the budget left no comparison "
						 "to repeat it", step, why);
				add_finding(b, false, s, n, note);
				r = 0;
			} else if (r == 0) {
				b->pending = true;
				log_info("alert %lld: bisection step %d's %s: repeated as step %d",
					 (long long)b->al->id, step, why, b->steps[b->nsteps - 1].step);
			}
			goto out;
		}
		note = xasprintf("repeat of step %d, whose %s: ", step, why);
		r = step_outcome(b, rep, lo, hi, note);
		if (r < 0 || !*rep->outcome)
			goto out;
		if (!strcmp(rep->outcome, "skipped")) {
			r = 1;
			goto out;
		}
		s->doubted = step;
		s->repeat = rep->step;
		st = rep;
	}
	if (!strcmp(st->outcome, "lower") || !strcmp(st->outcome, "both"))
		push_segment(b, s, s->lo, st->mid, lo, s->merged);
	if (!strcmp(st->outcome, "upper") || !strcmp(st->outcome, "both"))
		push_segment(b, s, st->mid, s->hi, hi, s->merged);
	if (!strcmp(st->outcome, "neither")) {
		free(note);
		/* Its repeat's halves still short of it: the segment's own
		 * comparison is the one in doubt. */
		note = adds_up(&sum, s, lo, hi) ? NULL : doubt(s, sum);
		free(why);
		why = xasprintf("no part of it alone carries the change: steps each under "
				"min_effect%s%s%s", note ? "; its " : "", note ? note : "",
				note ? ", even repeated: the comparison that found it is in doubt" :
				"");
		add_finding(b, false, s, n, why);
	}
out:
	free(why);
	free(note);
	return r;
}

/* One range of the queue: a finding, a step queued, or the ranges it
 * splits into. */
static int bisect_segment(struct bisection *b, const struct segment *seg)
{
	struct segment s = *seg;
	char (*chain)[BUILDER_OID_HEX] = NULL;
	struct db_bisect_step *st;
	struct agent_verdict vlo, vhi;
	size_t n = 0, k, best;
	char *note;
	int r;

	r = builder_first_parents(b->a->repo, &chain, &n, s.hi, s.lo, AGENT_SPAN_COMMITS_MAX);
	if (r < 0) {
		note = xasprintf("not bisected: %s", err_last());
		add_finding(b, false, &s, 0, note);
		free(note);
		return 0;
	}
	if (n == 1) {
		struct builder_commit c;
		char mb[BUILDER_OID_HEX];

		add_finding(b, true, &s, 1, s.merged ? "on the branch a merge brought in" : NULL);
		/* A merge: the commits of the branch it brought in, from where
		 * that branch left, are bisected too. */
		if (!s.merged && builder_commit_load(b->a->repo, &c, s.hi) == 0) {
			if (*c.second_parent &&
			    builder_merge_base(b->a->repo, mb, c.first_parent, c.second_parent) == 0 &&
			    strcmp(mb, c.second_parent)) {
				push_segment(b, &s, mb, c.second_parent, &s.v, true);
				b->todo[b->ntodo - 1].proxy = true;
			}
			builder_commit_release(&c);
		}
		free(chain);
		return 0;
	}
	/* The midpoint: of the commits inside, the one nearest the middle that
	 * was not skipped. */
	for (;;) {
		size_t m = (n - 1) / 2;

		best = n;
		for (k = 0; k + 1 < n; k++) {
			size_t dk = k > m ? k - m : m - k;
			size_t db = best > m ? best - m : m - best;

			if (!skipped(b, &s, chain[k]) && (best == n || dk < db))
				best = k;
		}
		if (best == n) {
			add_finding(b, false, &s, (int)n,
				    "no commit inside could be built and compared");
			break;
		}
		st = find_step(b, &s, chain[best]);
		if (!st) {
			r = queue_step(b, &s, chain[best]);
			if (r == 1) {
				b->budget = true;
				add_finding(b, false, &s, (int)n, "the bisection's budget was spent");
				r = 0;
			} else if (r == 0) {
				b->pending = true;
			}
			break;
		}
		r = step_outcome(b, st, &vlo, &vhi, NULL);
		if (r < 0 || !*st->outcome)
			break;
		if (!strcmp(st->outcome, "skipped"))
			continue;
		r = descend(b, &s, st, &vlo, &vhi, (int)n);
		if (r == 1)
			continue;
		break;
	}
	free(chain);
	return r;
}

struct placed {
	struct db_alert_finding f;
	size_t pos;
};

static int placed_cmp(const void *x, const void *y)
{
	const struct placed *p = x, *q = y;

	return p->pos < q->pos ? -1 : p->pos > q->pos;
}

/* Puts the findings in the branch's order and joins ranges that touch:
 * a change spread over neighbouring ranges is one range. */
static void order_findings(struct bisection *b)
{
	char (*chain)[BUILDER_OID_HEX] = NULL;
	struct placed *tmp;
	size_t n = 0, i, k, out = 0;

	if (b->nfound < 2 || builder_first_parents(b->a->repo, &chain, &n, b->al->hi, b->al->lo,
						   AGENT_SPAN_COMMITS_MAX) < 0) {
		free(chain);
		return;
	}
	tmp = xcalloc(b->nfound, sizeof(*tmp));
	for (i = 0; i < b->nfound; i++) {
		tmp[i].f = b->found[i];
		tmp[i].pos = n + i;  /* a merged branch's: after the rest, in found order */
		for (k = 0; k < n; k++)
			if (!strcmp(chain[k], b->found[i].hi))
				tmp[i].pos = k;
	}
	qsort(tmp, b->nfound, sizeof(*tmp), placed_cmp);
	for (i = 0; i < b->nfound; i++) {
		struct db_alert_finding *last = out ? &b->found[out - 1] : NULL;

		if (last && !last->commit && !tmp[i].f.commit && !strcmp(last->hi, tmp[i].f.lo)) {
			snprintf(last->hi, sizeof(last->hi), "%s", tmp[i].f.hi);
			last->commits += tmp[i].f.commits;
			last->gain += tmp[i].f.gain;
			last->has_gain = last->has_gain && tmp[i].f.has_gain;
			last->comparison_id = 0;
			free(last->note);
			last->note = xstrdup("neighbouring ranges joined; the gain is the sum of "
					     "their comparisons'");
			db_alert_finding_release(&tmp[i].f);
			continue;
		}
		b->found[out++] = tmp[i].f;
	}
	b->nfound = out;
	free(tmp);
	free(chain);
}

int agent_history_bisect(struct agent *a, struct db_alert *al)
{
	struct bisection b = { .a = a, .al = al };
	struct agent_verdict v = { .id = al->confirm_id ? al->confirm_id : al->comparison_id,
			     .has_gain = true, .gain = al->gain };
	size_t i;
	int r;

	r = db_bisect_steps(a->db, &b.steps, &b.nsteps, al->id);
	if (r < 0)
		return r;
	push_segment(&b, NULL, al->lo, al->hi, &v, false);
	for (b.head = 0; b.head < b.ntodo && r == 0; b.head++) {
		struct segment s = b.todo[b.head];

		r = bisect_segment(&b, &s);
	}
	if (r == 0 && !b.pending) {
		size_t repeats = 0;
		char *detail, with[64] = "";

		for (i = 0; i < b.nsteps; i++)
			repeats += is_repeat(&b, &b.steps[i]);
		order_findings(&b);
		if (repeats)
			snprintf(with, sizeof(with), ", %zu of them a repeat", repeats);
		detail = xasprintf("%s%sbisected in %zu step%s%s: %zu finding%s%s",
				   al->detail ? al->detail : "", al->detail ? "; " : "", b.nsteps,
				   b.nsteps == 1 ? "" : "s", with, b.nfound, b.nfound == 1 ? "" : "s",
				   b.budget ? ", the budget spent" : "");
		r = db_alert_finish(a->db, al->id, b.budget ? DB_BISECT_BUDGET : DB_BISECT_DONE,
				    b.found, b.nfound, detail);
		if (r == 0)
			log_info("alert %lld: bisection %s: %s", (long long)al->id,
				 b.budget ? "stopped" : "done", detail);
		free(detail);
	}
	for (i = 0; i < b.nsteps; i++)
		db_bisect_step_release(&b.steps[i]);
	free(b.steps);
	for (i = 0; i < b.nfound; i++)
		db_alert_finding_release(&b.found[i]);
	free(b.found);
	free(b.todo);
	return r < 0 ? r : b.queued + !b.pending;
}
