/* Unit tests for the canary's CPU side: q4 packing, the reference, the
 * control's detectability and the digest. No device needed. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernels-internal.h"

static void test_prng_fixed(void **state)
{
	uint64_t s = 0;

	/* splitmix64's published first output for seed 0. */
	assert_true(canary_prng_next(&s) == UINT64_C(0xe220a8397b1dcdaf));
	s = CANARY_SEED;
	uint64_t a = canary_prng_next(&s);
	s = CANARY_SEED;
	assert_true(canary_prng_next(&s) == a);
}

static void test_pack_order(void **state)
{
	const uint8_t nib[8] = { 1, 2, 3, 4, 5, 6, 7, 15 };
	uint32_t w = q4_pack8(nib);
	struct q4_matrix m = { .rows = 1, .cols = 8, .words = &w };

	/* Element 0 is the low nibble of the first byte. */
	assert_int_equal(w & 0xff, 0x21);
	assert_int_equal(w, 0xf7654321);
	for (unsigned e = 0; e < 8; e++)
		assert_int_equal(q4_nibble(&m, 0, e), nib[e]);
}

static void test_reference_by_hand(void **state)
{
	uint32_t words[Q4_BLOCK / 8];
	float scales[1] = { 0.5f };
	float x[Q4_BLOCK];
	uint8_t nib[8];
	struct q4_matrix m = { .rows = 1, .cols = Q4_BLOCK, .words = words,
			       .scales = scales };
	double y, l1, ys, l1s;

	/* Weights alternate (9-8)*0.5 and (8-8)*0.5: 0.5, 0, 0.5, 0 ... */
	for (unsigned e = 0; e < 8; e++)
		nib[e] = e % 2 ? 8 : 9;
	for (unsigned i = 0; i < ARRAY_SIZE(words); i++)
		words[i] = q4_pack8(nib);
	for (unsigned c = 0; c < Q4_BLOCK; c++)
		x[c] = (float)c;
	q4_matvec_ref(&y, &l1, &m, x, false);
	/* 0.5 * (0 + 2 + ... + 30) = 120 */
	assert_true(y == 120.0);
	assert_true(l1 == 120.0);
	/* Swapped, the 0.5 weights meet the odd x: 0.5 * (1 + 3 + ... + 31) = 128. */
	q4_matvec_ref(&ys, &l1s, &m, x, true);
	assert_true(ys == 128.0);
}

static void test_control_detectable(void **state)
{
	const unsigned rows = 64, cols = 4096;
	struct q4_matrix m;
	uint64_t prng = CANARY_SEED;
	float *x = xmalloc(cols * sizeof(*x));
	float *y = xmalloc(rows * sizeof(*y));
	double *ref = xmalloc(rows * sizeof(*ref)), *l1 = xmalloc(rows * sizeof(*l1));
	double *bad = xmalloc(rows * sizeof(*bad)), *l1b = xmalloc(rows * sizeof(*l1b));

	q4_matrix_init_random(&m, x, rows, cols, &prng);
	q4_matvec_ref(ref, l1, &m, x, false);
	q4_matvec_ref(bad, l1b, &m, x, true);

	/* The true result, rounded to float, is well within the tolerance. */
	for (unsigned r = 0; r < rows; r++)
		y[r] = (float)ref[r];
	assert_true(q4_max_rel_err(y, ref, l1, rows) < 1e-6);
	/* The swapped one is far outside it on this input. */
	for (unsigned r = 0; r < rows; r++)
		y[r] = (float)bad[r];
	assert_true(q4_max_rel_err(y, ref, l1, rows) > 1e-2);
	/* A NaN is an error, not a pass. */
	y[3] = NAN;
	assert_true(isinf(q4_max_rel_err(y, ref, l1, rows)));

	q4_matrix_release(&m);
	free(x);
	free(y);
	free(ref);
	free(l1);
	free(bad);
	free(l1b);
}

static void test_digest(void **state)
{
	const void *parts[2] = { "a", "bc" };
	size_t lens[2] = { 1, 2 };
	char out[KERNEL_HASH_LEN];

	/* sha256("abc") begins ba7816bf8f01; parts hash as their concatenation. */
	assert_int_equal(kernel_hash_parts(out, parts, lens, 2), 0);
	assert_string_equal(out, "ba7816bf8f01");
	assert_int_equal(kernel_fingerprint_hash(out, "abc"), 0);
	assert_string_equal(out, "ba7816bf8f01");
}

static void test_extra_work(void **state)
{
	unsigned whole = 7, part = 7;

	/* Whole percents are whole dispatches of 100, as before fractions. */
	assert_int_equal(q4_extra_work(&whole, &part, 1, 100, 256), 0);
	assert_int_equal(whole, 1);
	assert_int_equal(part, 0);
	assert_int_equal(q4_extra_work(&whole, &part, 0, 100, 256), 0);
	assert_int_equal(whole, 0);
	assert_int_equal(part, 0);
	/* Half a percent of 100 dispatches is half of one: 128 of 256 rows,
	 * 2048 of 4096 at scale 16. */
	assert_int_equal(q4_extra_work(&whole, &part, 0.5, 100, 256), 0);
	assert_int_equal(whole, 0);
	assert_int_equal(part, 128);
	assert_int_equal(q4_extra_work(&whole, &part, 0.5, 100, 4096), 0);
	assert_int_equal(part, 2048);
	assert_int_equal(q4_extra_work(&whole, &part, 2.25, 100, 256), 0);
	assert_int_equal(whole, 2);
	assert_int_equal(part, 64);
	/* 0.1% of 256 rows is 25.6 rows: refused, never rounded, and the
	 * outputs are left alone; at 1280 rows it is 128. */
	whole = part = 7;
	assert_int_equal(q4_extra_work(&whole, &part, 0.1, 100, 256), -EINVAL);
	assert_int_equal(whole, 7);
	assert_int_equal(part, 7);
	assert_int_equal(q4_extra_work(&whole, &part, 0.1, 100, 1280), 0);
	assert_int_equal(whole, 0);
	assert_int_equal(part, 128);
	assert_int_equal(q4_extra_work(&whole, &part, -1, 100, 256), -EINVAL);
	assert_int_equal(q4_extra_work(&whole, &part, KERNEL_CANARY_EXTRA_MAX + 1, 100, 256),
			 -EINVAL);
	assert_int_equal(q4_extra_work(&whole, &part, NAN, 100, 256), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prng_fixed),
		cmocka_unit_test(test_pack_order),
		cmocka_unit_test(test_reference_by_hand),
		cmocka_unit_test(test_control_detectable),
		cmocka_unit_test(test_digest),
		cmocka_unit_test(test_extra_work),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
