/* Unit tests of mde.c: what a host can see, from its calibration's spread,
 * found through the rule's own judging. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "runners.h"

#define NGAINS 60

/* NGAINS calibration gains evenly over [-spread/2, +spread/2], in an order
 * that is not sorted (the rule reads them as stored). */
static void spread_gains(double *out, double spread)
{
	size_t i;

	for (i = 0; i < NGAINS; i++) {
		size_t k = (i * 37) % NGAINS;   /* 37 is prime to 60: a permutation */

		out[i] = spread * ((double)k / (NGAINS - 1) - 0.5);
	}
}

static double mde_of_spread(double spread, double min_effect)
{
	double g[NGAINS];

	spread_gains(g, spread);
	return runner_mde(g, NGAINS, 3, 24, min_effect);
}

static void test_tight_small_wide_large(void **state)
{
	double spreads[] = { 0.001, 0.01, 0.03, 0.1, 0.3 };
	double last = 0;
	size_t i;

	for (i = 0; i < sizeof(spreads) / sizeof(spreads[0]); i++) {
		double mde = mde_of_spread(spreads[i], 0.001);

		assert_true(isfinite(mde));
		assert_true(mde > last);
		last = mde;
	}
	/* Gains within 0.1% see a change of well under 1%; gains over 30%
	 * wide cannot see 5%. */
	assert_true(mde_of_spread(0.001, 0.001) < 0.01);
	assert_true(mde_of_spread(0.3, 0.001) > 0.05);
}

static void test_min_effect_floor(void **state)
{
	/* The rule says slower only for a median at or past min_effect: a quiet
	 * host sees no change under it. */
	double mde = mde_of_spread(0.001, 0.02);

	assert_true(mde >= 0.02);
	assert_true(mde < 0.03);
}

static void test_none_and_never(void **state)
{
	double g[NGAINS];
	int stages[RUNNER_STAGES_MAX];

	spread_gains(g, 0.01);
	assert_true(isnan(runner_mde(g, 0, 3, 24, 0.01)));
	assert_true(isnan(runner_mde(g, NGAINS, 0, 24, 0.01)));
	assert_true(isnan(runner_mde(g, NGAINS, 6, 3, 0.01)));
	/* With one gain too few the sign test judges; 3 pairs never pass it. */
	assert_int_equal(runner_stages(stages, 3, 3), 1);
	assert_true(isinf(runner_mde(g, RUNNER_CALIBRATION_MIN_GAINS - 1, 3, 3, 0.01)));
	/* With enough the calibrated test can, from 3 pairs. */
	assert_true(isfinite(runner_mde(g, RUNNER_CALIBRATION_MIN_GAINS, 3, 3, 0.01)));
}

/* The same answer in a fresh process (no remembered MDE) as here. */
static void test_reproducible(void **state)
{
	double here = mde_of_spread(0.05, 0.01), there = NAN;
	int fds[2], status;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		double v = mde_of_spread(0.05, 0.01);

		_exit(write(fds[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &there, sizeof(there)), sizeof(there));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(here == there);
	assert_true(mde_of_spread(0.05, 0.01) == here);
}

static void test_calibration_and_words(void **state)
{
	double g[NGAINS], other[3] = { 0.5, -0.5, 0.5 };
	struct db_calibration v[2] = {
		{ 1, "t_ms", g, NGAINS, NULL, 0 }, { 2, "other_ms", other, 3, NULL, 0 },
	};
	char buf[128];

	spread_gains(g, 0.05);
	/* The other metric's gains are not this case's. */
	assert_true(runner_calibration_mde(v, 2, "t_ms", 3, 24, 0.01) ==
		    runner_mde(g, NGAINS, 3, 24, 0.01));
	runner_mde_format(buf, sizeof(buf), 0.0412, 24);
	assert_string_equal(buf, "changes under 4.1% are not visible on this host within 24 pairs");
	runner_mde_format(buf, sizeof(buf), 0.123, 12);
	assert_string_equal(buf, "changes under 12% are not visible on this host within 12 pairs");
	runner_mde_format(buf, sizeof(buf), INFINITY, 3);
	assert_string_equal(buf, "no change is visible on this host within 3 pairs");
	runner_mde_format(buf, sizeof(buf), NAN, 24);
	assert_string_equal(buf, "no calibration yet says what this host can see");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tight_small_wide_large),
		cmocka_unit_test(test_min_effect_floor),
		cmocka_unit_test(test_none_and_never),
		cmocka_unit_test(test_reproducible),
		cmocka_unit_test(test_calibration_and_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
