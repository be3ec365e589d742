/* Unit tests of common/utf8.c: the repair against the examples of the
 * Unicode standard (chapter 3, tables 3-8 to 3-11), and the cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common.h"

#define R UTF8_REPLACEMENT

static void check_repair(const char *in, size_t len, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_adds(&sb, "<");
	utf8_repair(&sb, in, len);
	assert_string_equal(sb.buf + 1, want);
	assert_true(utf8_is_valid(sb.buf, sb.len));
	assert_int_equal(utf8_is_valid(in, len), !strcmp(in, want) && strlen(in) == len);
	assert_int_equal(sb.buf[0], '<');   /* appended, not reset */
	strbuf_release(&sb);
}

static void test_valid(void **state)
{
	check_repair("", 0, "");
	check_repair("plain ASCII", 11, "plain ASCII");
	check_repair("caf\xc3\xa9", 5, "caf\xc3\xa9");
	check_repair("\xe2\x82\xac \xf0\x9f\x98\x80", 8, "\xe2\x82\xac \xf0\x9f\x98\x80");
	/* The edges of each range: U+0080, U+07FF, U+0800, U+D7FF, U+E000,
	 * U+FFFF, U+10000, U+10FFFF. */
	check_repair("\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf"
		     "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", 24,
		     "\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf"
		     "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
}

static void test_nul(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	utf8_repair(&sb, "a\0b\xe9", 4);
	assert_int_equal(sb.len, 6);
	assert_memory_equal(sb.buf, "a\0b" R, 6);
	assert_true(utf8_is_valid("a\0b", 3));
	strbuf_release(&sb);
}

static void test_one_byte(void **state)
{
	check_repair("caf\xe9", 4, "caf" R);
	check_repair("RESULT x on \"caf\xe9\": passed=1 total=1", 36,
		     "RESULT x on \"caf" R "\": passed=1 total=1");
	check_repair("dev\xff\xfe", 5, "dev" R R);
	check_repair("\x80", 1, R);          /* a stray continuation byte */
	check_repair("\x80\xbf", 2, R R);    /* two of them */
	check_repair("\xc0\x80", 2, R R);    /* an overlong NUL */
	check_repair("\xc1\xbf", 2, R R);    /* an overlong '\x7f' */
	check_repair("\xf5\x80\x80\x80", 4, R R R R);   /* a lead past U+10FFFF */
}

/* Unicode 15, table 3-8: non-shortest forms, one U+FFFD per byte. */
static void test_table_3_8(void **state)
{
	check_repair("\xc0\xaf\xe0\x80\xbf\xf0\x81\x82\x41", 9, R R R R R R R R "A");
}

/* Table 3-9: ill-formed sequences for surrogates. */
static void test_table_3_9(void **state)
{
	check_repair("\xed\xa0\x80\xed\xbf\xbf\xed\xaf\x41", 9, R R R R R R R R "A");
}

/* Table 3-10: other ill-formed sequences (above U+10FFFF, 0xFF, stray
 * continuations). */
static void test_table_3_10(void **state)
{
	check_repair("\xf4\x91\x92\x93\xff\x41\x80\xbf\x42", 9, R R R R R "A" R R "B");
}

/* Table 3-11: truncated sequences, one U+FFFD per maximal subpart. */
static void test_table_3_11(void **state)
{
	check_repair("\xe1\x80\xe2\xf0\x91\x92\xf1\xbf\x41", 9, R R R R "A");
	check_repair("\xe0\xa0", 2, R);
	check_repair("\xf0\x90\x80", 3, R);
	check_repair("x\xf4\x8f\xbf", 4, "x" R);
	check_repair("\xc3", 1, R);
	check_repair("\xe2\x82" "A", 3, R "A");
}

static void test_len_bounds(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	/* len stops a sequence short even when the bytes go on. */
	utf8_repair(&sb, "\xc3\xa9", 1);
	assert_string_equal(sb.buf, R);
	assert_false(utf8_is_valid("\xc3\xa9", 1));
	strbuf_release(&sb);
}

static void test_repair_dup(void **state)
{
	char *s = utf8_repair_dup("caf\xe9!");

	assert_string_equal(s, "caf" R "!");
	free(s);
	s = utf8_repair_dup("fine");
	assert_string_equal(s, "fine");
	free(s);
}

static void test_cut(void **state)
{
	const char *e = "ab\xc3\xa9" "cd";          /* a b e-acute c d: 6 bytes */
	const char *f = "\xf0\x9f\x98\x80\xf0\x9f\x98\x80";
	const char *bad = "a\x80\x80\x80\x80" "b";

	assert_int_equal(utf8_cut(e, 6, 10), 6);
	assert_int_equal(utf8_cut(e, 6, 6), 6);
	assert_int_equal(utf8_cut(e, 6, 5), 5);
	assert_int_equal(utf8_cut(e, 6, 4), 4);
	assert_int_equal(utf8_cut(e, 6, 3), 2);     /* not inside the e-acute */
	assert_int_equal(utf8_cut(e, 6, 2), 2);
	assert_int_equal(utf8_cut(e, 6, 0), 0);
	assert_int_equal(utf8_cut(f, 8, 7), 4);
	assert_int_equal(utf8_cut(f, 8, 6), 4);
	assert_int_equal(utf8_cut(f, 8, 5), 4);
	assert_int_equal(utf8_cut(f, 8, 4), 4);
	assert_int_equal(utf8_cut(f, 8, 3), 0);
	/* Stray continuation bytes are units of their own: any cut among them
	 * is on a boundary. */
	assert_int_equal(utf8_cut(bad, 6, 3), 3);
	assert_int_equal(utf8_cut(bad, 6, 5), 5);
	/* A truncated sequence followed by a stray byte: "\xe2\x82" is one
	 * subpart, the "\x80" after "A" another. */
	assert_int_equal(utf8_cut("\xe2\x82" "A\x80", 4, 1), 0);
	assert_int_equal(utf8_cut("\xe2\x82" "A\x80", 4, 3), 3);
	/* An ill-formed lead that owns no continuation: "\xe0\x80" is two
	 * subparts, so a cut between them is on a boundary. */
	assert_int_equal(utf8_cut("\xe0\x80", 2, 1), 1);
}

/* A cut string, repaired, never has more U+FFFD than the whole one had. */
static void test_cut_then_repair(void **state)
{
	const char *s = "\xc3\xa9\xc3\xa9\xc3\xa9";
	size_t max;

	for (max = 0; max <= 6; max++) {
		size_t n = utf8_cut(s, 6, max);

		assert_true(n <= max);
		assert_true(utf8_is_valid(s, n));
		assert_int_equal(n, max & ~(size_t)1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_nul),
		cmocka_unit_test(test_one_byte),
		cmocka_unit_test(test_table_3_8),
		cmocka_unit_test(test_table_3_9),
		cmocka_unit_test(test_table_3_10),
		cmocka_unit_test(test_table_3_11),
		cmocka_unit_test(test_len_bounds),
		cmocka_unit_test(test_repair_dup),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_cut_then_repair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
