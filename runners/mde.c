/*
 * The minimum detectable effect of a host and case (docs/rule.md, "What a
 * host can see"): the smallest slowdown the rule finds in at least 90% of
 * comparisons within the case's max_pairs, given the noise its calibration
 * measured.
 *
 * It is found by simulation through the rule's own judging (rule2_decide),
 * never a model of it, so that a change of the rule changes the MDE too:
 * each simulated comparison draws its pair gains from the calibration's
 * (with replacement), less the slowdown, and is judged stage by stage with
 * that calibration. A fixed seed, reset for every slowdown tried, makes the
 * answer the same on every machine and every run.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule-internal.h"

#define MDE_SEED 0x70657266644d4445ULL    /* "perfdMDE" */
#define MDE_LOW 1e-4                       /* 0.01%: the smallest slowdown tried */
#define MDE_HIGH 1.0                       /* 100%: the largest */
#define MDE_PRECISION 1.05                 /* bisection ends within 5% */
#define MDE_METRIC "mde"                   /* the simulated comparisons' metric */
#define MDE_CACHE 64

/* One simulated comparison's rule run, set up once per MDE. */
struct mde_sim {
	struct db_comparison c;
	struct db_calibration cal;
	struct rule_run run;
};

static void sim_init(struct mde_sim *sim, const double *gains, size_t n, int pairs,
		     int max_pairs, double min_effect)
{
	memset(sim, 0, sizeof(*sim));
	sim->cal.metric = (char *)MDE_METRIC;
	sim->cal.gains = (double *)gains;
	sim->cal.ngains = n;
	sim->run.v = runner_rule_newest();
	sim->c.rule = (char *)sim->run.v->name;
	sim->c.state = DB_STATE_DONE;
	sim->c.pairs = pairs;
	sim->c.max_pairs = max_pairs;
	sim->c.min_effect = min_effect;
	sim->c.calibration = &sim->cal;
	sim->c.ncalibration = 1;
	sim->run.c = &sim->c;
	sim->run.npairs = (size_t)max_pairs;
	sim->run.ngains = (size_t)max_pairs;
	sim->run.gains = xcalloc((size_t)max_pairs, sizeof(double));
}

/* Whether one comparison whose pair gains are draws from gains less d is
 * judged slower at some stage. All max_pairs gains are drawn; the rule
 * judges the stages in turn and stops at the first verdict, which is the
 * stored last stage's (a verdict before the last stage leaves the
 * comparison "invalid" for having run too many pairs, which is beside the
 * point here). */
static bool sim_is_slower(struct mde_sim *sim, uint64_t *state, double d)
{
	struct rule_run *run = &sim->run;
	bool slower;
	size_t i;

	for (i = 0; i < run->ngains; i++)
		run->gains[i] = sim->cal.gains[runner_random_below(state, sim->cal.ngains)] - d;
	run->pos = run->neg = 0;
	memset(&run->s, 0, sizeof(run->s));
	run->s.metric = xstrdup(MDE_METRIC);
	run->s.npair_gains = run->npairs;
	run->s.pair_gains = xcalloc(run->npairs, sizeof(double));
	rule2_decide(run);
	slower = run->s.nstages > 0 &&
		 !strcmp(run->s.stages[run->s.nstages - 1].verdict, "slower");
	db_summary_release(&run->s);
	return slower;
}

/* Whether a slowdown of d is found in at least RUNNER_MDE_POWER of
 * RUNNER_MDE_SIMULATIONS comparisons; stops as soon as the count decides. */
static bool sim_is_visible(struct mde_sim *sim, double d)
{
	int need = (int)ceil(RUNNER_MDE_POWER * RUNNER_MDE_SIMULATIONS), found = 0, missed = 0;
	uint64_t state = MDE_SEED;

	while (found < need && missed <= RUNNER_MDE_SIMULATIONS - need) {
		if (sim_is_slower(sim, &state, d))
			found++;
		else
			missed++;
	}
	return found >= need;
}

static double mde_compute(const double *gains, size_t n, int pairs, int max_pairs,
			  double min_effect)
{
	struct mde_sim sim;
	double lo = MDE_LOW, hi = MDE_HIGH, mde;

	sim_init(&sim, gains, n, pairs, max_pairs, min_effect);
	if (!sim_is_visible(&sim, hi)) {
		mde = INFINITY;
	} else if (sim_is_visible(&sim, lo)) {
		mde = lo;
	} else {
		/* lo is never visible, hi always: halve the ratio between them. */
		while (hi / lo > MDE_PRECISION) {
			double mid = sqrt(lo * hi);

			if (sim_is_visible(&sim, mid))
				hi = mid;
			else
				lo = mid;
		}
		mde = hi;
	}
	free(sim.run.gains);
	return mde;
}

/*
 * The MDEs last computed, by their inputs: the hub's API and comment and
 * the agent's receipts ask for the same calibration's again and again.
 * FNV-1a over the gains' bytes and the settings; replaced in turn; a lock,
 * since the hub's server and forge loop may both ask.
 */
static struct {
	uint64_t key;
	double mde;
} mde_cache[MDE_CACHE];
static size_t mde_cache_next, mde_cache_used;
static pthread_mutex_t mde_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t mde_key(const double *gains, size_t n, int pairs, int max_pairs,
			double min_effect)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	h = fnv1a(h, gains, n * sizeof(*gains));
	h = fnv1a(h, &n, sizeof(n));
	h = fnv1a(h, &pairs, sizeof(pairs));
	h = fnv1a(h, &max_pairs, sizeof(max_pairs));
	return fnv1a(h, &min_effect, sizeof(min_effect));
}

static bool mde_cache_get(double *out, uint64_t key)
{
	bool hit = false;
	size_t i;

	pthread_mutex_lock(&mde_cache_lock);
	for (i = 0; i < mde_cache_used && !hit; i++)
		if (mde_cache[i].key == key) {
			*out = mde_cache[i].mde;
			hit = true;
		}
	pthread_mutex_unlock(&mde_cache_lock);
	return hit;
}

static void mde_cache_put(uint64_t key, double mde)
{
	size_t i;

	pthread_mutex_lock(&mde_cache_lock);
	i = mde_cache_next++ % MDE_CACHE;
	mde_cache[i].key = key;
	mde_cache[i].mde = mde;
	if (mde_cache_used < MDE_CACHE)
		mde_cache_used++;
	pthread_mutex_unlock(&mde_cache_lock);
}

double runner_mde(const double *gains, size_t n, int pairs, int max_pairs, double min_effect)
{
	int stages[RUNNER_STAGES_MAX];
	double mde;
	uint64_t key;

	if (n > RUNNER_CALIBRATION_MAX_GAINS)
		n = RUNNER_CALIBRATION_MAX_GAINS;
	if (n == 0 || runner_stages(stages, pairs, max_pairs) < 0 || !isfinite(min_effect) ||
	    min_effect < 0)
		return NAN;
	key = mde_key(gains, n, pairs, max_pairs, min_effect);
	if (mde_cache_get(&mde, key))
		return mde;
	mde = mde_compute(gains, n, pairs, max_pairs, min_effect);
	mde_cache_put(key, mde);
	return mde;
}

double runner_calibration_mde(const struct db_calibration *v, size_t n, const char *metric,
			      int pairs, int max_pairs, double min_effect)
{
	double gains[RUNNER_CALIBRATION_MAX_GAINS];
	size_t i, j, m = 0;

	/* The gains the rule reads (pair-rule2.c's calibration_gains): finite,
	 * of the metric, in the order stored, at most the rule's count. */
	for (i = 0; i < n; i++) {
		if (metric && (!v[i].metric || strcmp(v[i].metric, metric)))
			continue;
		for (j = 0; j < v[i].ngains && m < RUNNER_CALIBRATION_MAX_GAINS; j++)
			if (isfinite(v[i].gains[j]))
				gains[m++] = v[i].gains[j];
	}
	return runner_mde(gains, m, pairs, max_pairs, min_effect);
}

void runner_format_mde(char *buf, size_t len, double mde)
{
	double pct = 100 * mde;

	/* Two digits, as far as a bisection to 5% can say; whole from 10%. */
	if (pct >= 10)
		snprintf(buf, len, "%.0f%%", pct);
	else
		snprintf(buf, len, "%.2g%%", pct);
}

void runner_mde_format(char *buf, size_t len, double mde, int max_pairs)
{
	char g[32];

	if (isnan(mde)) {
		snprintf(buf, len, "no calibration yet says what this host can see");
		return;
	}
	if (isinf(mde)) {
		snprintf(buf, len, "no change is visible on this host within %d pairs", max_pairs);
		return;
	}
	runner_format_mde(g, sizeof(g), mde);
	snprintf(buf, len, "changes under %s are not visible on this host within %d pairs", g,
		 max_pairs);
}

double runner_comparison_mde(const struct db_comparison *c)
{
	if (!runner_rule_has(c->rule, RUNNER_RULE_F_CALIBRATED) || !c->ncalibration)
		return NAN;
	return runner_calibration_mde(c->calibration, c->ncalibration, c->metric, c->pairs,
				      c->max_pairs, c->min_effect);
}

bool runner_mde_unresolved(char *buf, size_t len, double mde, double min_effect)
{
	char a[32], b[32];

	buf[0] = '\0';
	if (isnan(mde) || mde <= min_effect)
		return false;
	runner_format_mde(b, sizeof(b), min_effect);
	if (isinf(mde)) {
		snprintf(buf, len, "this host sees no change up to 100%%; min_effect is %s", b);
		return true;
	}
	runner_format_mde(a, sizeof(a), mde);
	snprintf(buf, len, "this host sees changes of %s or more; min_effect is %s", a, b);
	return true;
}
