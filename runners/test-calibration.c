/* Unit tests of calibration.c: the noise A/A gains show, and the words an
 * A/A's verdict is said in. (Choosing a calibration reads the database:
 * tests/t0460-agent-calibration.sh.) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "runners.h"

static void test_noise(void **state)
{
	/* |gain| 0.01 .. 0.10 over two A/As, a NAN among them. */
	double g1[4] = { 0.01, -0.02, NAN, 0.03 };
	double g2[7] = { -0.04, 0.05, 0.06, -0.07, 0.08, 0.09, -0.10 };
	double g3[1] = { 0.11 };
	struct db_calibration v[3] = {
		{ 1, NULL, g1, 4, NULL, 0 }, { 2, NULL, g2, 7, NULL, 0 }, { 3, NULL, g3, 1, NULL, 0 },
	};
	struct runner_noise n;

	runner_calibration_noise(&n, v, 2);
	assert_int_equal(n.gains, 10);
	assert_true(fabs(n.median - 0.055) < 1e-12);
	/* Nearest rank ceil(0.9 * 10) = 9. */
	assert_true(fabs(n.p90 - 0.09) < 1e-12);
	runner_calibration_noise(&n, v, 3);
	assert_int_equal(n.gains, 11);
	assert_true(fabs(n.median - 0.06) < 1e-12);
	/* ceil(0.9 * 11) = 10. */
	assert_true(fabs(n.p90 - 0.10) < 1e-12);
	runner_calibration_noise(&n, v, 0);
	assert_int_equal(n.gains, 0);
	assert_true(isnan(n.median) && isnan(n.p90));
	runner_calibration_noise(&n, &v[2], 1);
	assert_int_equal(n.gains, 1);
	assert_true(n.median == 0.11 && n.p90 == 0.11);
}

static void test_aa_words(void **state)
{
	const char *const verdicts[] = { "faster", "slower", "unchanged", "unresolved", "invalid",
		"", NULL };
	size_t i;

	for (i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++) {
		const char *w = runner_aa_verdict(verdicts[i]);

		assert_non_null(strstr(w, "A/A"));
		assert_null(strstr(w, "faster"));
		assert_null(strstr(w, "slower"));
	}
	assert_string_equal(runner_aa_verdict("faster"), runner_aa_verdict("slower"));
	assert_string_equal(runner_aa_verdict("unchanged"), "A/A: unchanged (calibration sample)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_aa_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
