/*
 * Unit tests of web/wire/canonical.c: the canonical form written for values
 * of every kind is byte for byte jansson's json_dumps with sorted keys, no
 * blanks and reals at 17 digits: reals of every magnitude and shape, next
 * to powers of ten and on the ties printf rounds to even,
 * integers at their limits, strings with every character that is escaped
 * and some that are not, keys that sort by bytes, nested and empty
 * containers, an object of more members than fit the stack, and a member
 * left out.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "record-internal.h"

#define FLAGS (JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17))

static void same_as_jansson(json_t *v)
{
	struct strbuf sb = STRBUF_INIT;
	char *want = json_dumps(v, FLAGS);

	assert_non_null(want);
	canonical_write(&sb, v, NULL);
	if (strcmp(sb.buf, want))
		fail_msg("canonical_write: %s\njansson:         %s", sb.buf, want);
	free(want);
	strbuf_release(&sb);
}

/* A double made of 64 random bits (NaN and infinity skipped). */
static double random_double(void)
{
	uint64_t bits = 0;
	double d;
	int i;

	do {
		for (i = 0; i < 4; i++)
			bits = bits << 16 | (uint64_t)(rand() & 0xffff);
		memcpy(&d, &bits, sizeof(d));
	} while (!isfinite(d));
	return d;
}

static void test_reals(void **state)
{
	static const double fixed[] = {
		0.0, -0.0, 1.0, -1.0, 600.0, 0.1, 1.0 / 3, 4392.0, 0.0068306010928961746,
		1e16, 1e17, 1e21, 1e22, 123456789012345678.0, 1e-4, 1e-5, 1e-7, 1e100,
		1e-100, 1e300, -1e-300, DBL_MAX, -DBL_MAX, DBL_MIN, DBL_TRUE_MIN, 5e-324,
		2.5e-310, 9007199254740993.0, 0.30000000000000004,
	};
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		json_array_append_new(a, json_real(fixed[i]));
	srand(12);
	for (i = 0; i < 20000; i++) {
		double d = random_double();
		int e;

		json_array_append_new(a, json_real(d));
		/* Values of the sizes timings have, and their negatives. */
		json_array_append_new(a, json_real(frexp(d, &e) * (double)(rand() % 100000)));
		json_array_append_new(a, json_real(-(double)rand() / (rand() + 1)));
	}
	/* Around each power of ten, and values of few bits after the point,
	 * where printf's digits end in ties. */
	for (i = 0; i < 44; i++) {
		double p = pow(10, (int)i - 22);
		int k;

		for (k = -3; k <= 3; k++) {
			double x = p;
			int j;

			for (j = 0; j < abs(k); j++)
				x = nextafter(x, k < 0 ? 0 : INFINITY);
			json_array_append_new(a, json_real(x));
			json_array_append_new(a, json_real(-x));
		}
	}
	/* (2^52 + odd) / 4 has 18 digits and ends in 5: a tie at 17. */
	for (i = 1; i < 2000; i += 2) {
		json_array_append_new(a, json_real(ldexp((double)((1ull << 52) + i), -2)));
		json_array_append_new(a, json_real(ldexp((double)((1ull << 52) + i), -(int)(i % 60))));
	}
	for (i = 0; i < 20000; i++) {
		json_array_append_new(a, json_real(ldexp((double)(rand() % 1000000), -(rand() % 70))));
		json_array_append_new(a, json_real((double)rand() * rand() + (double)rand() / 1024));
		json_array_append_new(a, json_real(99999999999999984.0 - (double)(rand() % 64) * 16));
	}
	same_as_jansson(a);
	json_decref(a);
}

static void test_integers(void **state)
{
	json_t *a = json_pack("[I,I,I,I,I,I]", (json_int_t)0, (json_int_t)-1, (json_int_t)255,
			      (json_int_t)INT64_MAX, (json_int_t)INT64_MIN, (json_int_t)-4392);

	same_as_jansson(a);
	json_decref(a);
}

static void test_strings(void **state)
{
	json_t *a = json_array();
	char all[128];
	int c;

	/* Every ASCII byte but NUL, NUL itself apart, and some UTF-8. */
	for (c = 1; c < 128; c++)
		all[c - 1] = (char)c;
	all[127] = '\0';
	json_array_append_new(a, json_string(all));
	json_array_append_new(a, json_stringn("a\0b", 3));
	json_array_append_new(a, json_string(""));
	json_array_append_new(a, json_string("RESULT a on \"d\u00e9v\": n=1\t\\/\x1f\x7f"));
	json_array_append_new(a, json_string("\xe2\x80\xa8 \xf0\x9f\x98\x80 \xef\xbf\xbd"));
	json_array_append_new(a, json_string("\n"));
	json_array_append_new(a, json_string("end\\"));
	same_as_jansson(a);
	json_decref(a);
}

static void test_objects(void **state)
{
	json_t *o = json_object(), *big = json_object(), *nested;
	struct strbuf sb = STRBUF_INIT, want = STRBUF_INIT;
	char key[16];
	int i;

	/* Keys sort by their bytes: a prefix first, upper case before lower,
	 * UTF-8 after ASCII; keys are escaped as strings are. */
	json_object_set_new(o, "b", json_true());
	json_object_set_new(o, "ab", json_false());
	json_object_set_new(o, "a", json_null());
	json_object_set_new(o, "B", json_integer(1));
	json_object_set_new(o, "\xc3\xa9", json_real(2.5));
	json_object_set_new(o, "a\"\n", json_string("q"));
	json_object_set_new(o, "a\x7f", json_array());
	json_object_set_new(o, "empty", json_object());
	nested = json_pack("{s:[i,{s:f,s:[]}],s:{}}", "z", 1, "y", 1.0, "x", "w");
	json_object_set_new(o, "nested", nested);
	for (i = 0; i < 200; i++) {
		snprintf(key, sizeof(key), "k%d", (i * 7919) % 200);
		json_object_set_new(big, key, json_integer(i));
	}
	json_object_set_new(o, "big", big);
	same_as_jansson(o);
	same_as_jansson(big);

	/* A member left out is as if it were not there. */
	canonical_write(&sb, o, "big");
	json_object_del(o, "big");
	canonical_write(&want, o, NULL);
	assert_string_equal(sb.buf, want.buf);
	same_as_jansson(o);
	strbuf_release(&sb);
	strbuf_release(&want);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reals),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_objects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
