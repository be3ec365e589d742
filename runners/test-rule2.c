/* Unit tests of pairs-median/2: the numbers docs/rule.md proves its bound
 * with, computed here again exactly, and the rule's verdicts on hand-made
 * rows (stages, the calibrated test, the direction, broken values). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runners.h"

/* ---- the proof's numbers ---- */

static void test_stages(void **state)
{
	int s[RUNNER_STAGES_MAX];

	assert_int_equal(runner_stages(s, 3, 24), 4);
	assert_int_equal(s[0], 3);
	assert_int_equal(s[1], 6);
	assert_int_equal(s[2], 12);
	assert_int_equal(s[3], 24);
	assert_int_equal(runner_stages(s, 3, 3), 1);
	assert_int_equal(runner_stages(s, 3, 20), 4);
	assert_int_equal(s[3], 20);
	assert_int_equal(runner_stages(s, 1, 64), 7);
	assert_int_equal(runner_stages(s, 4, 3), -EINVAL);
	assert_int_equal(runner_stages(s, 0, 3), -EINVAL);
	assert_int_equal(runner_stages(s, 3, 65), -EINVAL);
	assert_true(runner_stage_alpha(4) == 1.0 / 400);
}

/* The smallest count of n that passes at a stage of nstages; 0: none. */
static int sign_need(int n, int nstages)
{
	int k;

	for (k = 1; k <= n; k++)
		if (runner_sign_passes(n, k, nstages))
			return k;
	return 0;
}

/* docs/rule.md, "The sign test": the counts the default schedule needs. */
static void test_sign_counts(void **state)
{
	assert_int_equal(sign_need(3, 4), 0);     /* 1/8 > 1/400 */
	assert_int_equal(sign_need(6, 4), 0);     /* 1/64 > 1/400 */
	assert_int_equal(sign_need(12, 4), 12);   /* 13/4096 > 1/400 >= 1/4096 */
	assert_int_equal(sign_need(24, 4), 20);   /* 55455/2^24 > 1/400 >= 12951/2^24 */
	assert_int_equal(sign_need(12, 3), 11);   /* max_pairs 12: 13/4096 <= 1/300 */
	assert_int_equal(sign_need(3, 1), 0);     /* 3 pairs alone never: 1/8 > 1/100 */
	assert_int_equal(sign_need(7, 1), 7);     /* 1/128 <= 1/100 */
	assert_true(runner_sign_p(24, 20) == 12951.0 / 16777216.0);
	assert_true(runner_sign_p(12, 11) == 13.0 / 4096.0);
	assert_true(runner_sign_p(3, 0) == 1.0);
}

/* The whole sequence under the default schedule, exactly: with a fair coin
 * per pair, the probability that some stage says faster. Counts out of
 * 2^24 by dynamic programming over the positives after each stage; the
 * document gives 16253 / 2^24 (0.0969%), and the union bound 17047 / 2^24,
 * both under 1%. */
static void test_sign_sequence_exact(void **state)
{
	int stages[RUNNER_STAGES_MAX], nstages = runner_stages(stages, 3, 24), s, c, j;
	/* ways[c]: sequences of the pairs so far with c positives, not yet
	 * stopped; scaled so that every count is out of 2^24. */
	uint64_t ways[25] = { 0 }, next[25], rejected = 0, union_bound = 0;
	int done = 0;

	ways[0] = 1;
	for (s = 0; s < nstages; s++) {
		int add = stages[s] - done, k = sign_need(stages[s], nstages);
		uint64_t choose[25] = { 1 };

		for (j = 1; j <= add; j++)
			choose[j] = choose[j - 1] * (uint64_t)(add - j + 1) / (uint64_t)j;
		memset(next, 0, sizeof(next));
		for (c = 0; c <= done; c++)
			for (j = 0; j <= add; j++)
				next[c + j] += ways[c] * choose[j];
		for (c = 0; c <= stages[s]; c++) {
			if (k && c >= k) {
				rejected += next[c] << (24 - stages[s]);
				next[c] = 0;
			}
		}
		if (k)
			union_bound += (uint64_t)(runner_sign_p(stages[s], k) * 16777216.0);
		memcpy(ways, next, sizeof(ways));
		done = stages[s];
	}
	assert_int_equal(rejected, 16253);
	assert_int_equal(union_bound, 17047);
	assert_true(rejected * 100 <= 16777216);
}

/* The rank count's null distribution against every order of 3 gains among
 * 4 calibration gains, counted by brute force: all 35 are equally likely. */
static void test_rank_exact_small(void **state)
{
	struct runner_rank r;
	int count[13] = { 0 }, mask, u;

	for (mask = 0; mask < 128; mask++) {
		int bits = __builtin_popcount((unsigned)mask), cal_below = 0, pos;

		if (bits != 3)
			continue;
		/* Positions 0..6 from the smallest; a gain counts the calibration
		 * values under it. */
		u = 0;
		for (pos = 0; pos < 7; pos++) {
			if (mask & (1 << pos))
				u += cal_below;
			else
				cal_below++;
		}
		count[u]++;
	}
	assert_int_equal(runner_rank_init(&r, 3, 4), 0);
	for (u = 0; u <= 12; u++) {
		int tail = 0, v;

		for (v = u; v <= 12; v++)
			tail += count[v];
		assert_true(fabs(runner_rank_p(&r, u) - tail / 35.0) < 1e-15);
	}
	assert_true(runner_rank_p(&r, 13) == 0);
	runner_rank_release(&r);
}

/* docs/rule.md, "The calibrated test": 3 gains above all M calibration
 * gains have probability 1 / C(M + 3, 3); 12 gains are the fewest at which
 * 3 pairs can pass a stage of 4 (1/455 <= 1/400 < 1/364). */
static void test_rank_min_calibration(void **state)
{
	struct runner_rank r;

	assert_int_equal(runner_rank_init(&r, 3, 12), 0);
	assert_true(fabs(runner_rank_p(&r, 36) - 1.0 / 455) < 1e-15);
	assert_true(runner_rank_passes(runner_rank_p(&r, 36), 4));
	runner_rank_release(&r);
	assert_int_equal(runner_rank_init(&r, 3, 11), 0);
	assert_true(fabs(runner_rank_p(&r, 33) - 1.0 / 364) < 1e-15);
	assert_false(runner_rank_passes(runner_rank_p(&r, 33), 4));
	runner_rank_release(&r);
	assert_int_equal(runner_rank_init(&r, 3, 120), 0);
	assert_true(fabs(runner_rank_p(&r, 360) * 302621 - 1) < 1e-9);
	runner_rank_release(&r);
	assert_int_equal(runner_rank_init(&r, 64, RUNNER_CALIBRATION_MAX_GAINS), 0);
	assert_true(fabs(runner_rank_p(&r, 0) - 1) < 1e-12);
	runner_rank_release(&r);
	assert_int_equal(runner_rank_init(&r, 65, 12), -EINVAL);
}

/* The calibrated test's size at each stage of the default schedule, M =
 * 12: the largest p at or under the stage's bound, which is the exact
 * probability of a false verdict that stage gives under exchangeability. */
static void test_rank_stage_sizes(void **state)
{
	int stages[RUNNER_STAGES_MAX], nstages = runner_stages(stages, 3, 24), s;
	double total = 0;

	for (s = 0; s < nstages; s++) {
		struct runner_rank r;
		long u, nm = (long)stages[s] * 12;
		double size = 0;

		assert_int_equal(runner_rank_init(&r, stages[s], 12), 0);
		for (u = nm; u >= 0; u--) {
			if (!runner_rank_passes(runner_rank_p(&r, u), nstages))
				break;
			size = runner_rank_p(&r, u);
		}
		assert_true(size <= runner_stage_alpha(nstages));
		total += size;
		runner_rank_release(&r);
	}
	assert_true(total <= 0.01);
}

/* ---- the rule on rows ---- */

/* A version 2 comparison of n pairs from old[] and new[] values in the
 * scheduler's order, first stage 3, max_pairs max. */
static void build(struct db_comparison *c, const double *old, const double *new, int n,
		  int max)
{
	int i, k = 0;

	memset(c, 0, sizeof(*c));
	c->rule = xstrdup(RUNNER_RULE);
	c->metric_requested = xstrdup("t_ms");
	c->pairs = 3;
	c->max_pairs = max;
	c->min_effect = HOST_DEFAULT_MIN_EFFECT;
	c->noise = HOST_DEFAULT_NOISE;
	c->state = DB_STATE_DONE;
	c->nprocesses = (size_t)(2 * n);
	c->processes = xcalloc(c->nprocesses + 1, sizeof(*c->processes));
	for (i = 1; i <= n; i++) {
		const char *arms[2] = { i % 2 ? "old" : "new", i % 2 ? "new" : "old" };
		int j;

		for (j = 0; j < 2; j++) {
			struct db_process *p = &c->processes[k++];

			p->seq = k;
			p->pair = i;
			p->state = DB_STATE_DONE;
			snprintf(p->arm, sizeof(p->arm), "%s", arms[j]);
			p->metrics = xcalloc(1, sizeof(*p->metrics));
			p->metrics[0].name = xstrdup("t_ms");
			p->metrics[0].value = !strcmp(arms[j], "old") ? old[i - 1] : new[i - 1];
			p->nmetrics = 1;
			p->wall_ms = 10;
		}
	}
}

/* Gives c a calibration of n gains spread evenly in [-w, w]. */
static void calibrate(struct db_comparison *c, int n, double w)
{
	int i;

	c->ncalibration = 1;
	c->calibration = xcalloc(1, sizeof(*c->calibration));
	c->calibration[0].comparison_id = 7;
	c->calibration[0].metric = xstrdup("t_ms");
	c->calibration[0].ngains = (size_t)n;
	c->calibration[0].gains = xcalloc((size_t)n, sizeof(double));
	for (i = 0; i < n; i++)
		c->calibration[0].gains[i] = -w + 2 * w * i / (n - 1);
}

static bool has_reason(const struct db_summary *s, const char *needle)
{
	size_t i;

	for (i = 0; i < s->nreasons; i++)
		if (strstr(s->reasons[i], needle))
			return true;
	return false;
}

/* The M1 rows of docs/rule.md: 6% faster in all three pairs. Without a
 * calibration, 3 pairs cannot pass: another stage is due. */
static void test_three_pairs_need_more(void **state)
{
	const double old[] = { 2089, 2093, 2103 }, new[] = { 1955, 1965, 1951 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 3, 24);
	c.state = DB_STATE_RUNNING;
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "unresolved");
	assert_true(s.more);
	assert_int_equal(s.nstages, 1);
	assert_string_equal(s.stages[0].test, "sign");
	assert_true(s.stages[0].p_faster == 0.125);
	db_summary_release(&s);
	/* Done at 3 pairs with max_pairs 3: unresolved for good, and why. */
	c.state = DB_STATE_DONE;
	c.max_pairs = 3;
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "unresolved");
	assert_false(s.more);
	assert_true(has_reason(&s, "stage 1 of 1 (3 pairs, sign test)"));
	db_summary_release(&s);
	/* With 12 A/A gains within 0.5%, the same rows are faster at once. */
	c.max_pairs = 24;
	c.state = DB_STATE_RUNNING;
	calibrate(&c, 12, 0.005);
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "faster");
	assert_false(s.more);
	assert_string_equal(s.stages[0].test, "calibrated");
	assert_int_equal(s.stages[0].calibration_gains, 12);
	assert_true(fabs(s.stages[0].p_faster - 1.0 / 455) < 1e-15);
	db_summary_release(&s);
	db_comparison_release(&c);
}

/* The B60 rows of docs/rule.md: noisy and split in sign, unresolved with
 * or without a calibration. */
static void test_b60_stays_unresolved(void **state)
{
	const double old[] = { 4392, 4421, 4113 }, new[] = { 4362, 4081, 4218 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 3, 3);
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "unresolved");
	assert_true(has_reason(&s, "pair gains disagree in sign"));
	db_summary_release(&s);
	calibrate(&c, 12, 0.005);
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "unresolved");
	assert_true(has_reason(&s, "pair gains disagree in sign"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

/* Twelve pairs all slower: the sign test passes at stage 3. */
static void test_stages_reach_a_verdict(void **state)
{
	double old[12], new[12];
	struct db_comparison c;
	struct db_summary s;
	int i;

	for (i = 0; i < 12; i++) {
		old[i] = 100 + (i % 3);
		new[i] = 105 + (i % 4);
	}
	build(&c, old, new, 12, 24);
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "slower");
	assert_int_equal(s.nstages, 3);
	assert_int_equal(s.pairs_run, 12);
	assert_string_equal(s.stages[0].verdict, "unresolved");
	assert_string_equal(s.stages[1].verdict, "unresolved");
	assert_string_equal(s.stages[2].verdict, "slower");
	db_summary_release(&s);
	/* Pairs past a stage that resolved: the rows are not the rule's. */
	c.max_pairs = 24;
	db_comparison_release(&c);
	{
		double o2[24], n2[24];

		for (i = 0; i < 24; i++) {
			o2[i] = 100;
			n2[i] = 106;
		}
		build(&c, o2, n2, 24, 24);
		assert_int_equal(runner_rule_apply(&s, &c), 0);
		assert_string_equal(s.verdict, "invalid");
		assert_true(has_reason(&s, "stage 3 (12 pairs) was slower, yet 24 pairs ran"));
		assert_false(s.has_gain);
		db_summary_release(&s);
		db_comparison_release(&c);
	}
	/* Five pairs end no stage of 3, 6, 12, 24. */
	build(&c, old, new, 5, 24);
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "invalid");
	assert_true(has_reason(&s, "5 pairs ran, which is not the end of a stage"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

/* A calibrated A/A with noise far under min_effect: unchanged at once,
 * the change bounded within 1% both ways. */
static void test_unchanged_is_bounded(void **state)
{
	const double old[] = { 1000, 1001, 999 }, new[] = { 1000.5, 1000, 999.5 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 3, 24);
	calibrate(&c, 24, 0.001);
	c.aa = true;
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "unchanged");
	assert_int_equal(s.nstages, 1);
	db_summary_release(&s);
	/* Calibration noise of 3%: the same rows are not bounded within 1%. */
	db_comparison_release(&c);
	build(&c, old, new, 3, 3);
	calibrate(&c, 24, 0.03);
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "unresolved");
	assert_true(has_reason(&s, "the change is not bounded within +-1.000%"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

/* better = higher: a throughput that rises is faster, one that falls is
 * slower. */
static void test_higher_is_better(void **state)
{
	double old[12], new[12];
	struct db_comparison c;
	struct db_summary s;
	int i;

	for (i = 0; i < 12; i++) {
		old[i] = 500 + i;
		new[i] = 400 + i;   /* 20% less throughput */
	}
	build(&c, old, new, 12, 24);
	c.higher_better = true;
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "slower");
	assert_true(s.gain_median < -0.19);
	db_summary_release(&s);
	c.higher_better = false;
	assert_int_equal(runner_rule_apply(&s, &c), 0);
	assert_string_equal(s.verdict, "faster");
	db_summary_release(&s);
	db_comparison_release(&c);
}

/* Broken timers make a process invalid under version 2. */
static void test_broken_values(void **state)
{
	static const struct {
		double v;
		const char *why;
	} cases[] = {
		{ -5, "metric 't_ms' is -5, not a positive number" },
		{ 0, "metric 't_ms' is 0, not a positive number" },
		{ 1e-310, "too small to be a measurement (subnormal)" },
		{ 1e308, "so large that a median of two such values would overflow" },
	};
	const double old[] = { 98, 98, 98 };
	double new[3] = { 98, 98, 98 };
	struct db_comparison c;
	struct db_summary s;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		new[1] = cases[i].v;
		build(&c, old, new, 3, 3);
		assert_int_equal(runner_rule_apply(&s, &c), 0);
		assert_string_equal(s.verdict, "invalid");
		assert_true(has_reason(&s, cases[i].why));
		assert_false(s.has_gain);
		db_summary_release(&s);
		db_comparison_release(&c);
	}
}

static void test_better_parse(void **state)
{
	bool higher;

	assert_int_equal(runner_better_parse(&higher, "higher"), 0);
	assert_true(higher);
	assert_int_equal(runner_better_parse(&higher, "lower"), 0);
	assert_false(higher);
	assert_int_equal(runner_better_parse(&higher, "up"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stages),
		cmocka_unit_test(test_sign_counts),
		cmocka_unit_test(test_sign_sequence_exact),
		cmocka_unit_test(test_rank_exact_small),
		cmocka_unit_test(test_rank_min_calibration),
		cmocka_unit_test(test_rank_stage_sizes),
		cmocka_unit_test(test_three_pairs_need_more),
		cmocka_unit_test(test_b60_stays_unresolved),
		cmocka_unit_test(test_stages_reach_a_verdict),
		cmocka_unit_test(test_unchanged_is_bounded),
		cmocka_unit_test(test_higher_is_better),
		cmocka_unit_test(test_broken_values),
		cmocka_unit_test(test_better_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
