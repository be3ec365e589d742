/* Unit tests of changepoint.c on synthetic series: a step found where it
 * is, none in noise alone, two steps, series too short or too long, the
 * fast scan against the statistic's definition, and the same answer twice. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runners.h"

/* Noise in [-amp, amp) from a fixed generator (an LCG), so each test's
 * series is the same at every run. */
static void noise(double *v, size_t n, double level, double amp, uint64_t *state)
{
	size_t i;

	for (i = 0; i < n; i++) {
		*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
		v[i] = level + amp * (2.0 * (double)(*state >> 11) / 9007199254740992.0 - 1.0);
	}
}

/* The energy statistic of the split at tau straight from its definition:
 * every pair, O(n^2). */
static double energy_direct(const double *v, size_t n, size_t tau)
{
	double b = 0, wl = 0, wr = 0, m = (double)tau, k = (double)(n - tau);
	size_t i, j;

	for (i = 0; i < tau; i++)
		for (j = tau; j < n; j++)
			b += fabs(v[i] - v[j]);
	for (i = 0; i < tau; i++)
		for (j = i + 1; j < tau; j++)
			wl += fabs(v[i] - v[j]);
	for (i = tau; i < n; i++)
		for (j = i + 1; j < n; j++)
			wr += fabs(v[i] - v[j]);
	return m * k / (m + k) * (2 * b / (m * k) - wl / (m * (m - 1) / 2) - wr / (k * (k - 1) / 2));
}

static void test_scan_matches_definition(void **state)
{
	double v[60], best = -INFINITY, q;
	size_t tau, best_tau = 0, t;
	uint64_t s = 7;

	(void)state;
	noise(v, 25, 100, 3, &s);
	noise(v + 25, 35, 110, 3, &s);
	v[10] = v[11];  /* a tie */
	for (t = 4; t + 4 <= 60; t++) {
		double d = energy_direct(v, 60, t);

		if (d > best) {
			best = d;
			best_tau = t;
		}
	}
	assert_int_equal(runner_changepoint_scan(&tau, &q, v, 60, 4), 0);
	assert_int_equal(tau, best_tau);
	assert_true(fabs(q - best) < 1e-9 * fabs(best));
	assert_int_equal(tau, 25);
}

static void test_step(void **state)
{
	struct runner_changepoint cp[RUNNER_CHANGEPOINT_MAX];
	double v[40];
	uint64_t s = 1;

	(void)state;
	/* 100 +- 1 for 23 points, then 110 +- 1: 10% slower from index 23. */
	noise(v, 23, 100, 1, &s);
	noise(v + 23, 17, 110, 1, &s);
	assert_int_equal(runner_changepoints_find(cp, RUNNER_CHANGEPOINT_MAX, v, 40), 1);
	assert_int_equal(cp[0].index, 23);
	assert_true(cp[0].p < RUNNER_CHANGEPOINT_P);
	assert_true(fabs(cp[0].mean_before - 100) < 0.5);
	assert_true(fabs(cp[0].mean_after - 110) < 0.5);
}

static void test_flat(void **state)
{
	struct runner_changepoint cp[RUNNER_CHANGEPOINT_MAX];
	double v[200];
	uint64_t s;
	int seed;

	(void)state;
	/* Pure noise of +-5% around 100, ten different series. */
	for (seed = 1; seed <= 10; seed++) {
		s = (uint64_t)seed * 977;
		noise(v, 200, 100, 5, &s);
		assert_int_equal(runner_changepoints_find(cp, RUNNER_CHANGEPOINT_MAX, v, 200), 0);
	}
}

static void test_two_steps(void **state)
{
	struct runner_changepoint cp[RUNNER_CHANGEPOINT_MAX];
	double v[90];
	uint64_t s = 3;

	(void)state;
	noise(v, 30, 50, 1, &s);
	noise(v + 30, 30, 45, 1, &s);
	noise(v + 60, 30, 52, 1, &s);
	assert_int_equal(runner_changepoints_find(cp, RUNNER_CHANGEPOINT_MAX, v, 90), 2);
	assert_int_equal(cp[0].index, 30);
	assert_int_equal(cp[1].index, 60);
	/* Each regime's mean is its own, between its neighbours. */
	assert_true(fabs(cp[0].mean_before - 50) < 0.5);
	assert_true(fabs(cp[0].mean_after - 45) < 0.5);
	assert_true(fabs(cp[1].mean_before - 45) < 0.5);
	assert_true(fabs(cp[1].mean_after - 52) < 0.5);
}

static void test_short(void **state)
{
	struct runner_changepoint cp[RUNNER_CHANGEPOINT_MAX];
	double v[7] = { 1, 1, 1, 1, 9, 9, 9 };
	double w[8] = { 1, 1.01, 1, 0.99, 9, 9.01, 9, 8.99 };

	(void)state;
	assert_int_equal(runner_changepoints_find(cp, RUNNER_CHANGEPOINT_MAX, v, 7), 0);
	assert_int_equal(runner_changepoints_find(cp, RUNNER_CHANGEPOINT_MAX, v, 0), 0);
	/* Eight points: 8! / (4! 4!) = 70 orders, so no p under 1/70 can come of
	 * them; 199 draws of those find the observed split often: none. */
	assert_int_equal(runner_changepoints_find(cp, RUNNER_CHANGEPOINT_MAX, w, 8), 0);
}

static void test_bounds(void **state)
{
	static double v[RUNNER_CHANGEPOINT_POINTS_MAX + 1];
	struct runner_changepoint cp[RUNNER_CHANGEPOINT_MAX];
	size_t tau;
	double q;

	(void)state;
	assert_int_equal(runner_changepoints_find(cp, RUNNER_CHANGEPOINT_MAX, v,
						  RUNNER_CHANGEPOINT_POINTS_MAX + 1), -EINVAL);
	assert_non_null(strstr(err_last(), "at most 1000"));
	assert_int_equal(runner_changepoint_scan(&tau, &q, v, RUNNER_CHANGEPOINT_POINTS_MAX + 1, 4),
			 -EINVAL);
	v[3] = NAN;
	assert_int_equal(runner_changepoints_find(cp, RUNNER_CHANGEPOINT_MAX, v, 20), -EINVAL);
	assert_non_null(strstr(err_last(), "point 3"));
}

static void test_many_steps_bounded(void **state)
{
	struct runner_changepoint cp[RUNNER_CHANGEPOINT_MAX];
	double v[400];
	uint64_t s = 11;
	size_t i;
	int n;

	(void)state;
	/* A staircase of 40 regimes of 10 points, each 10 above the one
	 * before: more change points than the bound; at most max come back, in
	 * index order. */
	for (i = 0; i < 40; i++)
		noise(v + 10 * i, 10, 100 + 10.0 * (double)i, 1, &s);
	n = runner_changepoints_find(cp, RUNNER_CHANGEPOINT_MAX, v, 400);
	assert_int_equal(n, RUNNER_CHANGEPOINT_MAX);
	for (i = 0; i < (size_t)n; i++) {
		assert_int_equal(cp[i].index % 10, 0);
		if (i)
			assert_true(cp[i].index > cp[i - 1].index);
	}
	assert_int_equal(runner_changepoints_find(cp, 3, v, 400), 3);
}

static void test_deterministic(void **state)
{
	struct runner_changepoint a[RUNNER_CHANGEPOINT_MAX], b[RUNNER_CHANGEPOINT_MAX];
	double v[120];
	uint64_t s = 5;
	int na, nb;

	(void)state;
	/* A small step in wide noise, where the test's draws decide. */
	noise(v, 60, 100, 4, &s);
	noise(v + 60, 60, 101.5, 4, &s);
	na = runner_changepoints_find(a, RUNNER_CHANGEPOINT_MAX, v, 120);
	nb = runner_changepoints_find(b, RUNNER_CHANGEPOINT_MAX, v, 120);
	assert_true(na >= 0);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, (size_t)na * sizeof(a[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_matches_definition),
		cmocka_unit_test(test_step),
		cmocka_unit_test(test_flat),
		cmocka_unit_test(test_two_steps),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_many_steps_bounded),
		cmocka_unit_test(test_deterministic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
