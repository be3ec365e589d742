/* Unit tests of common/json.c: the writer vocabulary's rules, as common.h
 * states them (text and NULL, integers as integers, not finite as null). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common.h"

/* The compact text of v (stolen), as a receipt or the API writes it. */
static char *dump(json_t *v)
{
	char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

	assert_non_null(text);
	json_decref(v);
	return text;
}

static void check(json_t *v, const char *want)
{
	char *text = dump(v);

	assert_string_equal(text, want);
	free(text);
}

static void test_text(void **state)
{
	char *v[] = { "a", "caf\xc3\xa9", "b\xff" };

	(void)state;
	check(json_text(NULL), "null");
	check(json_text(""), "\"\"");
	check(json_text("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
	check(json_text("b\xff"), "\"b" UTF8_REPLACEMENT "\"");
	check(json_text_or_null(""), "null");
	check(json_text_or_null(NULL), "null");
	check(json_text_or_null("x"), "\"x\"");
	check(json_textn("abc", 2), "\"ab\"");
	check(json_textn(NULL, 3), "null");
	check(json_texts(v, 3), "[\"a\",\"caf\xc3\xa9\",\"b" UTF8_REPLACEMENT "\"]");
	check(json_texts(NULL, 0), "[]");
}

static void test_numbers(void **state)
{
	(void)state;
	check(json_number(2), "2");
	check(json_number(-7), "-7");
	check(json_number(0.5), "0.5");
	check(json_number(4392), "4392");
	check(json_number(1e16), "10000000000000000.0");   /* a real past JSON_WHOLE_MAX */
	check(json_number(NAN), "null");
	check(json_number(INFINITY), "null");
	check(json_id(41), "41");
	check(json_id(0), "null");
	check(json_real_or_null(2), "2.0");
	check(json_real_or_null(-INFINITY), "null");
	assert_true(json_fraction(0.0068306010928961746) == 0.006831);
	assert_true(json_fraction(-0.0255288) == -0.025529);
}

/* A RESULT line's counts: "passed=2" is the integer 2 wherever it is
 * written, a real stays a real, and what is not a number stays text. */
static void test_number_text(void **state)
{
	(void)state;
	check(json_number_text("2"), "2");
	check(json_number_text("2.0"), "2");
	check(json_number_text("0.25"), "0.25");
	check(json_number_text("2x"), "\"2x\"");
	check(json_number_text(""), "\"\"");
	check(json_number_text("nan"), "null");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_number_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
