/*
 * The rule, versions 2, 2.1 and 2.2: the stages and verdict of
 * pairs-median/2, /2.1 and /2.2 (docs/rule.md says them in words and
 * proves their bounds).
 *
 * A comparison runs stages of pairs: the configured pairs, then doubling up
 * to max_pairs, while unresolved. Each stage has an equal share of the 1%
 * bound, in each direction. Version 2 judges a stage with one test: the
 * calibrated rank test when the comparison's calibration holds
 * RUNNER_CALIBRATION_MIN_GAINS_V2 gains of its metric, else the sign test.
 * Version 2.1 runs the sign test always, at a quarter of the stage's share,
 * and the calibrated test at the rest when the calibration holds
 * RUNNER_CALIBRATION_MIN_GAINS gains and the scale gate finds the pairs no
 * wider than it; a side passes when either test passes. The same tests,
 * shifted by min_effect both ways, decide "unchanged": the change is
 * bounded within min_effect. Version 2.2 is 2.1 with a second gate before
 * the calibrated test: the load gate finds the stage's processes under no
 * more CPU pressure than the calibration's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule-internal.h"

size_t rule2_pairs_run(const struct db_comparison *c)
{
	size_t i, n = 0;
	int most = c->max_pairs > 0 ? c->max_pairs : c->pairs;

	for (i = 0; i < c->nprocesses; i++) {
		int pair = c->processes[i].pair;

		if (!c->processes[i].warmup && pair > 0 && pair <= most && (size_t)pair > n)
			n = (size_t)pair;
	}
	return n;
}

/* What one stage's test saw, before it becomes a verdict. */
struct stage_test {
	bool faster, slower, below, above;   /* each passed at the stage's share */
	double median;
};

/* What the calibration's A/As of the comparison's metric hold, in the order
 * stored: their pair gains, at most RUNNER_CALIBRATION_MAX_GAINS, or (loads)
 * the CPU pressure each of their processes ran under, a share of its wall
 * time, every one recorded. The caller frees them. */
static double *calibration_values(const struct rule_run *run, bool loads, size_t *out_n)
{
	const struct db_comparison *c = run->c;
	size_t i, j, n = 0, all = 0, most = loads ? SIZE_MAX : RUNNER_CALIBRATION_MAX_GAINS;
	double *v;

	for (i = 0; i < c->ncalibration; i++)
		all += loads ? c->calibration[i].nloads : c->calibration[i].ngains;
	v = xcalloc(all + 1, sizeof(double));
	for (i = 0; i < c->ncalibration; i++) {
		const struct db_calibration *cal = &c->calibration[i];
		const double *x = loads ? cal->loads : cal->gains;
		size_t nx = loads ? cal->nloads : cal->ngains;

		if (!cal->metric || !run->s.metric || strcmp(cal->metric, run->s.metric))
			continue;
		for (j = 0; j < nx && n < most; j++)
			if (isfinite(x[j]))
				v[n++] = x[j];
	}
	*out_n = n;
	return v;
}

/* The same of a stage's processes: both of each of its first n pairs,
 * where recorded. out has room for 2n. */
static size_t stage_loads(double *out, const struct rule_run *run, int n)
{
	const struct db_process *p[2];
	size_t k = 0;
	double x;
	int i, j;

	for (i = 1; i <= n && (size_t)i <= run->npairs; i++) {
		p[0] = run->old_of[i];
		p[1] = run->new_of[i];
		for (j = 0; j < 2; j++) {
			x = p[j] ? db_process_load(p[j]->cpu_wait_ms, p[j]->wall_ms) : NAN;
			if (isfinite(x))
				out[k++] = x;
		}
	}
	return k;
}

/* A stage's share of its bound that one test gets: num / den. */
struct share {
	int num, den;
};

/* The sign test on the first n gains: how many lie beyond 0 (and beyond
 * min_effect, for the bound), each against Binomial(n, 1/2), at sh of the
 * stage's bound. */
static void sign_stage(struct db_stage *g, struct stage_test *t, const double *x, int n,
		       double m, int nstages, struct share sh)
{
	int pos = 0, neg = 0, under = 0, over = 0, i;

	for (i = 0; i < n; i++) {
		pos += x[i] > 0;
		neg += x[i] < 0;
		under += x[i] < m;
		over += x[i] > -m;
	}
	snprintf(g->test, sizeof(g->test), "sign");
	g->p_faster = runner_sign_p(n, pos);
	g->p_slower = runner_sign_p(n, neg);
	g->p_below = runner_sign_p(n, under);
	g->p_above = runner_sign_p(n, over);
	t->faster = runner_sign_passes_share(n, pos, nstages, sh.num, sh.den);
	t->slower = runner_sign_passes_share(n, neg, nstages, sh.num, sh.den);
	t->below = runner_sign_passes_share(n, under, nstages, sh.num, sh.den);
	t->above = runner_sign_passes_share(n, over, nstages, sh.num, sh.den);
}

/* The calibrated test on the first n gains: their rank count against the
 * calibration's gains (shifted by min_effect for the bound), each against
 * the count's exact distribution rank when both are exchangeable, at sh of
 * the stage's bound. Fills p[4]: faster, slower, below, above. */
static void rank_test(double *p, struct stage_test *t, const struct runner_rank *rank,
		      const double *x, int n, const double *cal, size_t ncal, double m,
		      int nstages, struct share sh)
{
	p[0] = runner_rank_p(rank, runner_rank_count(x, n, cal, ncal, 0, false));
	p[1] = runner_rank_p(rank, runner_rank_count(x, n, cal, ncal, 0, true));
	p[2] = runner_rank_p(rank, runner_rank_count(x, n, cal, ncal, -m, true));
	p[3] = runner_rank_p(rank, runner_rank_count(x, n, cal, ncal, m, false));
	t->faster |= runner_rank_passes_share(p[0], nstages, sh.num, sh.den);
	t->slower |= runner_rank_passes_share(p[1], nstages, sh.num, sh.den);
	t->below |= runner_rank_passes_share(p[2], nstages, sh.num, sh.den);
	t->above |= runner_rank_passes_share(p[3], nstages, sh.num, sh.den);
}

/* What a stage of version 2.2 puts to its load gate: the stage's
 * processes' CPU pressure and the calibration's. */
struct stage_loads {
	const double *x, *cal;
	size_t n, ncal;
};

/* What every stage of one comparison is judged with. */
struct stage_ctx {
	const struct runner_rule_version *v;
	const double *cal;               /* the calibration's gains of the metric */
	size_t ncal;
	bool calibrated;                 /* enough of them for v's calibrated test */
	double m;                        /* min_effect */
	int nstages;
	const struct stage_loads *loads; /* for the load gate; NULL: none */
};

/* The calibrated test alone, at the whole share (version 2). */
static void rank_stage(struct db_stage *g, struct stage_test *t, const double *x, int n,
		       const struct stage_ctx *k)
{
	struct runner_rank rank;
	double p[4];

	snprintf(g->test, sizeof(g->test), "calibrated");
	g->calibration_gains = (int)k->ncal;
	if (runner_rank_init(&rank, n, (int)k->ncal) < 0)
		return;      /* bounds the callers keep: nothing passes */
	rank_test(p, t, &rank, x, n, k->cal, k->ncal, k->m, k->nstages, (struct share){ 1, 1 });
	g->p_faster = p[0];
	g->p_slower = p[1];
	g->p_below = p[2];
	g->p_above = p[3];
	runner_rank_release(&rank);
}

/* The load gate on a stage; true when it lets the calibrated test run (no
 * load gate, l NULL, or nothing to compare, passes). */
static bool load_gate(struct db_stage *g, const struct stage_loads *l)
{
	struct runner_load_gate gate;

	if (!l || runner_load_gate(&gate, l->x, l->n, l->cal, l->ncal,
				   RUNNER_RULE22_LOAD_RANK) < 0)
		return true;
	g->load_p = gate.p;
	g->load_above = gate.above;
	return gate.passes;
}

/* Both tests (versions 2.1 and 2.2): the sign test always, at its share;
 * with enough calibration gains (calibrated), the scale gate, and when it
 * passes (and the load gate too, where the version has it) the calibrated
 * test at the rest of the share. A side passes when either test passes
 * it. */
static void stage21(struct db_stage *g, struct stage_test *t, const double *x, int n,
		    const struct stage_ctx *k)
{
	struct runner_rank rank;
	struct runner_gate gate = { .passes = true };
	double p[4];

	sign_stage(g, t, x, n, k->m, k->nstages,
		   (struct share){ RUNNER_RULE21_SIGN_SHARE, RUNNER_RULE21_SHARES });
	if (!k->calibrated || runner_rank_init(&rank, n, (int)k->ncal) < 0)
		return;
	g->calibration_gains = (int)k->ncal;
	if (runner_rule_version_has(k->v, RUNNER_RULE_F_SCALE_GATE)) {
		runner_scale_gate(&gate, x, (size_t)n, k->cal, k->ncal);
		g->gate_p = gate.p;
		g->spread_ratio = gate.ratio;
	}
	if (load_gate(g, k->loads) && gate.passes) {
		snprintf(g->test, sizeof(g->test), "sign+calibrated");
		rank_test(p, t, &rank, x, n, k->cal, k->ncal, k->m, k->nstages,
			  (struct share){ RUNNER_RULE21_SHARES - RUNNER_RULE21_SIGN_SHARE,
					  RUNNER_RULE21_SHARES });
		g->cal_p_faster = p[0];
		g->cal_p_slower = p[1];
		g->cal_p_below = p[2];
		g->cal_p_above = p[3];
	}
	runner_rank_release(&rank);
}

/* One stage, by the tests its version has: the place a version with a new
 * test or gate adds its stage function. */
static void judge_stage(struct db_stage *g, struct stage_test *t, const double *x, int n,
			const struct stage_ctx *k)
{
	if (runner_rule_version_has(k->v, RUNNER_RULE_F_BOTH_TESTS))
		stage21(g, t, x, n, k);
	else if (k->calibrated)
		rank_stage(g, t, x, n, k);
	else
		sign_stage(g, t, x, n, k->m, k->nstages, (struct share){ 1, 1 });
}

/* A change either way needs its test and a median at least min_effect;
 * unchanged needs the change bounded within min_effect both ways. */
static const char *stage_verdict(const struct stage_test *t, double m)
{
	if (t->faster && t->median >= m)
		return "faster";
	if (t->slower && -t->median >= m)
		return "slower";
	if (t->below && t->above)
		return "unchanged";
	return "unresolved";
}

/* Why a version 2.1 or 2.2 stage did not lean on its calibration, when it
 * had one: the scale gate found the pairs wider, or (2.2) the load gate
 * found its processes under more CPU pressure; each gate that failed. */
static void explain_gate(struct rule_run *run, const struct db_stage *g, int stage,
			 size_t nloads)
{
	char ratio[32] = "";

	if (!g->calibration_gains || strcmp(g->test, "sign"))
		return;
	if (isfinite(g->spread_ratio))
		snprintf(ratio, sizeof(ratio), " %.2gx", g->spread_ratio);
	if (!(g->gate_p > RUNNER_RULE21_GATE_P))
		rule_note(&run->s.reasons, &run->s.nreasons, "stage %d: the pairs spread%s "
			  "their calibration's (p %.4g): judged without the calibration", stage,
			  ratio, g->gate_p);
	if (isfinite(g->load_p) && !(g->load_p > RUNNER_RULE22_LOAD_P))
		rule_note(&run->s.reasons, &run->s.nreasons, "stage %d: %.0f of its processes "
			  "ran under more CPU pressure than %zu of the calibration's %zu (p "
			  "%.4g): judged without the calibration", stage, g->load_above,
			  nloads - (RUNNER_RULE22_LOAD_RANK - 1), nloads, g->load_p);
}

/* Version 2.1's p values of one question (faster and slower: fmt " for
 * faster and ", " for slower"; below and above: " and ", ""), each test's
 * against its share of the stage's bound. */
static void explain_p21(struct rule_run *run, const char *what, const char *const *fmt,
			double p1, double p2, double c1, double c2, int nstages)
{
	double alpha = runner_stage_alpha(nstages);
	char a[32], b[32];

	runner_format_gain(a, sizeof(a), alpha * RUNNER_RULE21_SIGN_SHARE / RUNNER_RULE21_SHARES);
	runner_format_gain(b, sizeof(b), alpha * (RUNNER_RULE21_SHARES - RUNNER_RULE21_SIGN_SHARE) /
			   RUNNER_RULE21_SHARES);
	if (isnan(c1))
		rule_note(&run->s.reasons, &run->s.nreasons, "%s: sign test p %.4g%s%.4g%s, "
			  "over its bound %s", what, p1, fmt[0], p2, fmt[1], a);
	else
		rule_note(&run->s.reasons, &run->s.nreasons, "%s: sign test p %.4g%s%.4g%s, "
			  "over its bound %s; calibrated test p %.4g%s%.4g%s, over its bound %s",
			  what, p1, fmt[0], p2, fmt[1], a, c1, fmt[0], c2, fmt[1], b);
}

/* Why the last stage gave no verdict, every reason that applies. */
static void explain_unresolved(struct rule_run *run, const struct db_stage *g,
			       const struct stage_test *t, int stage, int nstages, size_t nloads)
{
	struct db_summary *s = &run->s;
	double m = run->c->min_effect;
	static const char *const change[] = { " for faster and ", " for slower" };
	static const char *const bound[] = { " and ", "" };
	bool v21 = runner_rule_version_has(run->v, RUNNER_RULE_F_BOTH_TESTS);
	char a[32], b[32], alpha[32], what[96];

	runner_format_gain(alpha, sizeof(alpha), g->alpha);
	runner_format_gain(b, sizeof(b), m);
	if (run->pos && run->neg)
		rule_note(&s->reasons, &s->nreasons, "pair gains disagree in sign");
	if (v21)
		explain_gate(run, g, stage, nloads);
	if ((t->faster && t->median < m) || (t->slower && -t->median < m)) {
		runner_format_gain(a, sizeof(a), fabs(t->median));
		rule_note(&s->reasons, &s->nreasons, "a change is likely, but the gain median "
			  "%s is under the minimum effect %s", a, b);
	} else if (!t->faster && !t->slower && v21) {
		snprintf(what, sizeof(what), "stage %d of %d (%d pairs, %s test)", stage, nstages,
			 g->pairs, g->test);
		explain_p21(run, what, change, g->p_faster, g->p_slower, g->cal_p_faster,
			    g->cal_p_slower, nstages);
	} else if (!t->faster && !t->slower) {
		rule_note(&s->reasons, &s->nreasons, "stage %d of %d (%d pairs, %s test): "
			  "p %.4g for faster and %.4g for slower, over the stage's bound %s",
			  stage, nstages, g->pairs, g->test, g->p_faster, g->p_slower, alpha);
	}
	if (t->below && t->above)
		return;
	if (v21) {
		snprintf(what, sizeof(what), "the change is not bounded within +-%s", b);
		explain_p21(run, what, bound, g->p_below, g->p_above, g->cal_p_below,
			    g->cal_p_above, nstages);
	} else {
		rule_note(&s->reasons, &s->nreasons, "the change is not bounded within "
			  "+-%s: p %.4g and %.4g, over the stage's bound %s", b, g->p_below,
			  g->p_above, alpha);
	}
}

/* The stage count must describe this comparison: a valid schedule, and
 * pairs that end a stage. False, with the comparison's reason, otherwise. */
static bool check_schedule(struct rule_run *run, int *stages, int *out_nstages)
{
	const struct db_comparison *c = run->c;
	int nstages = runner_stages(stages, c->pairs, c->max_pairs), i;

	*out_nstages = nstages;
	if (nstages < 0) {
		rule_note(&run->s.reasons, &run->s.nreasons, "pairs %d and max_pairs %d are "
			  "not a schedule of %s (1 <= pairs <= max_pairs <= %d)",
			  c->pairs, c->max_pairs, c->rule, RUNNER_RULE2_MAX_PAIRS);
		return false;
	}
	for (i = 0; i < nstages; i++)
		if ((size_t)stages[i] == run->npairs)
			return true;
	rule_note(&run->s.reasons, &run->s.nreasons, "%zu pairs ran, which is not the end "
		  "of a stage", run->npairs);
	return false;
}

void rule2_decide(struct rule_run *run)
{
	struct db_summary *s = &run->s;
	const struct db_comparison *c = run->c;
	double m = c->min_effect;
	int stages[RUNNER_STAGES_MAX], nstages, i;
	struct stage_test t = { 0 };
	size_t ncal, ncal_loads = 0;
	double *cal = calibration_values(run, false, &ncal);
	/* The load gate, on processes: mde.c's simulated runs have gains alone,
	 * and judge as a version without it does, without this work. */
	bool v22 = runner_rule_version_has(run->v, RUNNER_RULE_F_LOAD_GATE) && run->old_of &&
		   run->new_of;
	double *cal_loads = v22 ? calibration_values(run, true, &ncal_loads) : NULL;
	double *loads = v22 ? xcalloc(2 * run->npairs + 1, sizeof(double)) : NULL;
	struct stage_loads l = { loads, cal_loads, 0, ncal_loads };
	struct stage_ctx k = { run->v, cal, ncal, false, m, 0, v22 ? &l : NULL };
	const char *verdict = "unresolved";

	s->pairs_run = (int)run->npairs;
	k.calibrated = runner_rule_version_has(run->v, RUNNER_RULE_F_CALIBRATED) &&
		       ncal >= (size_t)run->v->calibration_min_gains;
	if (!check_schedule(run, stages, &nstages)) {
		rule_set_invalid(run);
		free(cal);
		free(cal_loads);
		free(loads);
		return;
	}
	for (i = 0; (size_t)i < run->ngains; i++) {
		run->pos += run->gains[i] > 0;
		run->neg += run->gains[i] < 0;
	}
	s->stages = xcalloc(RUNNER_STAGES_MAX, sizeof(*s->stages));
	for (i = 0; i < nstages && (size_t)stages[i] <= run->npairs; i++) {
		struct db_stage *g = &s->stages[s->nstages++];
		int n = stages[i];

		memset(&t, 0, sizeof(t));
		g->pairs = n;
		g->alpha = runner_stage_alpha(nstages);
		g->p_faster = g->p_slower = g->p_below = g->p_above = NAN;
		g->cal_p_faster = g->cal_p_slower = g->cal_p_below = g->cal_p_above = NAN;
		g->gate_p = g->spread_ratio = g->load_p = g->load_above = NAN;
		l.n = v22 ? stage_loads(loads, run, n) : 0;
		k.nstages = nstages;
		judge_stage(g, &t, run->gains, n, &k);
		t.median = runner_median_of(run->gains, (size_t)n);
		verdict = stage_verdict(&t, m);
		snprintf(g->verdict, sizeof(g->verdict), "%s", verdict);
		if (strcmp(verdict, "unresolved"))
			break;
	}
	free(cal);
	free(cal_loads);
	free(loads);
	if (s->nstages && (size_t)s->stages[s->nstages - 1].pairs != run->npairs) {
		rule_note(&s->reasons, &s->nreasons, "stage %zu (%d pairs) was %s, yet %zu "
			  "pairs ran", s->nstages, s->stages[s->nstages - 1].pairs, verdict,
			  run->npairs);
		rule_set_invalid(run);
		return;
	}
	snprintf(s->verdict, sizeof(s->verdict), "%s", verdict);
	if (strcmp(verdict, "unresolved"))
		return;
	s->more = c->state == DB_STATE_RUNNING && run->npairs < (size_t)c->max_pairs;
	if (!s->more)
		explain_unresolved(run, &s->stages[s->nstages - 1], &t, (int)s->nstages,
				   nstages, ncal_loads);
}
