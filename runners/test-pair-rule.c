/* Unit tests of the rule pairs-median/1 on hand-made process rows. */
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

/* Builds a comparison of n pairs from old[] and new[] metric values, in
 * the order the scheduler runs them (AB, BA, ...). */
static void build(struct db_comparison *c, const double *old, const double *new, int n)
{
	int i, k = 0;

	memset(c, 0, sizeof(*c));
	c->rule = xstrdup(RUNNER_RULE);
	c->metric_requested = xstrdup("run2_ms");
	c->pairs = n;
	c->min_effect = 0.01;
	c->noise = 0.05;
	c->state = DB_STATE_DONE;
	c->nprocesses = (size_t)(2 * n);
	c->processes = xcalloc(c->nprocesses, sizeof(*c->processes));
	for (i = 1; i <= n; i++) {
		const char *first = i % 2 ? "old" : "new", *second = i % 2 ? "new" : "old";
		const char *arms[2] = { first, second };
		int j;

		for (j = 0; j < 2; j++) {
			struct db_process *p = &c->processes[k++];

			p->seq = k;
			p->pair = i;
			p->state = DB_STATE_DONE;
			snprintf(p->arm, sizeof(p->arm), "%s", arms[j]);
			p->metrics = xcalloc(1, sizeof(*p->metrics));
			p->metrics[0].name = xstrdup("run2_ms");
			p->metrics[0].value = !strcmp(arms[j], "old") ? old[i - 1] : new[i - 1];
			p->nmetrics = 1;
			p->wall_ms = 10;
		}
	}
}

static void apply(struct db_summary *s, const struct db_comparison *c)
{
	assert_int_equal(runner_rule_apply(s, c), 0);
}

static bool has_note(char **v, size_t n, const char *needle)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(v[i], needle))
			return true;
	return false;
}

static void test_b60_vector(void **state)
{
	const double old[] = { 4392, 4421, 4113 }, new[] = { 4362, 4081, 4218 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 3);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unresolved");
	assert_true(fabs(s.pair_gains[0] - 0.00683060) < 1e-7);
	assert_true(fabs(s.pair_gains[1] - 0.07690568) < 1e-7);
	assert_true(fabs(s.pair_gains[2] - -0.02552881) < 1e-7);
	assert_true(fabs(s.gain_median - 0.00683060) < 1e-7);
	assert_true(s.old.median == 4392 && s.old.min == 4113 && s.old.max == 4421);
	assert_true(fabs(s.old.spread - 0.0701275) < 1e-6);
	assert_true(s.new.median == 4218);
	assert_true(has_note(s.flags, s.nflags, "noisy"));
	assert_true(has_note(s.reasons, s.nreasons, "disagree in sign"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void check_faster(const double *old, const double *new, double want)
{
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 3);
	apply(&s, &c);
	assert_string_equal(s.verdict, "faster");
	assert_true(fabs(s.gain_median - want) < 5e-6);
	assert_int_equal(s.nreasons, 0);
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_m1_vectors(void **state)
{
	const double o1[] = { 2089, 2093, 2103 }, n1[] = { 1955, 1965, 1951 };
	const double o2[] = { 2090, 2110, 2089 }, n2[] = { 1962, 1938, 1965 };
	const double o3[] = { 3406, 3421, 3413 }, n3[] = { 3240, 3249, 3241 };

	check_faster(o1, n1, 0.06415);
	check_faster(o2, n2, 0.06124);
	check_faster(o3, n3, 0.05028);
}

static void test_sign_thresholds(void **state)
{
	assert_int_equal(runner_sign_threshold(1), 0);
	assert_int_equal(runner_sign_threshold(2), 0);
	assert_int_equal(runner_sign_threshold(3), 3);
	assert_int_equal(runner_sign_threshold(4), 4);
	assert_int_equal(runner_sign_threshold(5), 5);
	assert_int_equal(runner_sign_threshold(6), 5);
	assert_int_equal(runner_sign_threshold(10), 8);
	assert_int_equal(runner_sign_threshold(100), 57);
}

static void test_even_median(void **state)
{
	double v[] = { 4, 1, 3, 2 };
	double w[] = { 5 };

	assert_true(runner_median(v, 4) == 2.5);
	assert_true(runner_median(w, 1) == 5);
	assert_true(isnan(runner_median(w, 0)));
}

static void test_six_pairs(void **state)
{
	/* 5 of 6 faster passes the sign test; 4 of 6 does not. */
	const double old[] = { 100, 100, 100, 100, 100, 100 };
	const double five[] = { 90, 91, 92, 93, 94, 101 };
	const double four[] = { 90, 91, 92, 93, 101, 102 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, five, 6);
	apply(&s, &c);
	assert_string_equal(s.verdict, "faster");
	assert_true(fabs(s.gain_median - 0.075) < 1e-12);  /* mean of 8% and 7% */
	db_summary_release(&s);
	db_comparison_release(&c);

	build(&c, old, four, 6);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unresolved");
	assert_true(has_note(s.reasons, s.nreasons, "needs 5"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_ten_pairs_slower(void **state)
{
	const double old[] = { 100, 100, 100, 100, 100, 100, 100, 100, 100, 100 };
	const double eight[] = { 110, 110, 110, 110, 110, 110, 110, 110, 99, 99 };
	const double seven[] = { 110, 110, 110, 110, 110, 110, 110, 99, 99, 99 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, eight, 10);
	apply(&s, &c);
	assert_string_equal(s.verdict, "slower");
	db_summary_release(&s);
	db_comparison_release(&c);

	build(&c, old, seven, 10);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unresolved");
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_unchanged_and_min_effect(void **state)
{
	const double old[] = { 100, 100, 100 }, same[] = { 99.8, 100.3, 99.9 };
	const double small[] = { 99.5, 99.4, 99.6 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, same, 3);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unchanged");
	db_summary_release(&s);
	db_comparison_release(&c);

	/* All faster, but under the 1% minimum effect: unchanged too. */
	build(&c, old, small, 3);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unchanged");
	db_summary_release(&s);
	db_comparison_release(&c);

	/* With a 0.1% minimum effect the same rows are faster. */
	build(&c, old, small, 3);
	c.min_effect = 0.001;
	apply(&s, &c);
	assert_string_equal(s.verdict, "faster");
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_invalid_process(void **state)
{
	const double old[] = { 100, 100, 100 }, new[] = { 90, 90, 90 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 3);
	c.processes[3].exit_code = 1;
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_false(s.has_gain);
	assert_true(isnan(s.pair_gains[0]));
	assert_false(s.process_valid[3]);
	assert_string_equal(s.process_reason[3], "exited 1");
	assert_true(has_note(s.reasons, s.nreasons, "process 4 (old, pair 2) exited 1"));
	db_summary_release(&s);
	db_comparison_release(&c);

	build(&c, old, new, 3);
	c.processes[1].signal = 11;
	c.processes[1].exit_code = -1;
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_true(has_note(s.reasons, s.nreasons, "killed by signal 11 (SIGSEGV)"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_digests_and_record_valid(void **state)
{
	const double old[] = { 100, 100, 100 }, new[] = { 90, 90, 90 };
	struct db_comparison c;
	struct db_summary s;
	size_t i;

	build(&c, old, new, 3);
	for (i = 0; i < c.nprocesses; i++)
		c.processes[i].digest = xstrdup("c4759069c154");
	free(c.processes[4].digest);
	c.processes[4].digest = xstrdup("3c7ec4e2");
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_false(s.digests_equal);
	assert_true(has_note(s.reasons, s.nreasons, "printed digest 3c7ec4e2"));
	db_summary_release(&s);
	db_comparison_release(&c);

	build(&c, old, new, 3);
	for (i = 0; i < c.nprocesses; i++)
		c.processes[i].record_valid = i != 2;
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_true(has_note(s.reasons, s.nreasons, "TIMING_RECORD_VALID"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_metric_choice(void **state)
{
	const double old[] = { 100, 100, 100 }, new[] = { 90, 90, 90 };
	struct db_comparison c;
	struct db_summary s;
	char *m = NULL;

	build(&c, old, new, 3);
	free(c.metric_requested);
	c.metric_requested = NULL;
	assert_int_equal(runner_metric_choose(&m, c.processes, c.nprocesses), 0);
	assert_string_equal(m, "run2_ms");
	free(m);
	/* A second metric in one process makes the default ambiguous. */
	c.processes[2].metrics = xrealloc(c.processes[2].metrics, 2 * sizeof(struct db_metric));
	c.processes[2].metrics[1].name = xstrdup("decode_us");
	c.processes[2].metrics[1].value = 3;
	c.processes[2].nmetrics = 2;
	memset(&m, 0xA5, sizeof(m));
	assert_int_equal(runner_metric_choose(&m, c.processes, c.nprocesses), -EDOM);
	assert_non_null(strstr(err_last(), "run2_ms, decode_us"));
	assert_null(m);
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_null(s.metric);
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_wall_time_fallback(void **state)
{
	const double old[] = { 1, 1, 1 }, new[] = { 1, 1, 1 };
	struct db_comparison c;
	struct db_summary s;
	size_t i;

	build(&c, old, new, 3);
	free(c.metric_requested);
	c.metric_requested = NULL;
	for (i = 0; i < c.nprocesses; i++) {
		struct db_process *p = &c.processes[i];

		free(p->metrics[0].name);
		free(p->metrics);
		p->metrics = NULL;
		p->nmetrics = 0;
		p->wall_ms = !strcmp(p->arm, "old") ? 200 : 150;
	}
	apply(&s, &c);
	assert_string_equal(s.metric, "wall_ms");
	assert_string_equal(s.verdict, "faster");
	assert_true(fabs(s.gain_median - 0.25) < 1e-12);
	assert_true(has_note(s.flags, s.nflags, "wall-time"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_unknown_rule(void **state)
{
	const double old[] = { 1 }, new[] = { 1 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 1);
	free(c.rule);
	c.rule = xstrdup("pairs-median/9");
	/* The summary is zeroed however it failed: the agent releases it after
	 * an interrupted comparison of a rule it does not know. */
	memset(&s, 0xA5, sizeof(s));
	assert_int_equal(runner_rule_apply(&s, &c), -EINVAL);
	assert_null(s.metric);
	assert_null(s.reasons);
	assert_int_equal(s.nreasons, 0);
	assert_int_equal(s.nprocesses, 0);
	db_summary_release(&s);
	db_comparison_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_b60_vector),
		cmocka_unit_test(test_m1_vectors),
		cmocka_unit_test(test_sign_thresholds),
		cmocka_unit_test(test_even_median),
		cmocka_unit_test(test_six_pairs),
		cmocka_unit_test(test_ten_pairs_slower),
		cmocka_unit_test(test_unchanged_and_min_effect),
		cmocka_unit_test(test_invalid_process),
		cmocka_unit_test(test_digests_and_record_valid),
		cmocka_unit_test(test_metric_choice),
		cmocka_unit_test(test_wall_time_fallback),
		cmocka_unit_test(test_unknown_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
