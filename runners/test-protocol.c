/* Unit tests of the line protocol parser. */
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

static void feed_all(struct runner_protocol *p, const char *s, size_t len)
{
	runner_protocol_init(p);
	runner_protocol_feed(p, s, len);
	runner_protocol_finish(p);
}

static bool metric(const struct runner_protocol *p, const char *name, double *v)
{
	size_t i;

	for (i = 0; i < p->nmetrics; i++) {
		if (!strcmp(p->metrics[i].name, name)) {
			*v = p->metrics[i].value;
			return true;
		}
	}
	return false;
}

static void test_basic_lines(void **state)
{
	const char s[] = "hello\nTIMING run2_ms=4392 decode_us=12.5\nDIGEST c4759069C154\n"
			 "TIMING_RECORD_VALID\n"
			 "RESULT stage1 elapsed_ms=6624 on \"Apple M1 Max (G13C C0)\": passed=25 total=25\n"
			 "SUMMARY all good\n";
	struct runner_protocol p;
	double v;
	char *d;

	feed_all(&p, s, strlen(s));
	assert_int_equal(p.nerrors, 0);
	assert_true(metric(&p, "run2_ms", &v) && v == 4392);
	assert_true(metric(&p, "decode_us", &v) && v == 12.5);
	assert_true(p.record_valid);
	d = runner_protocol_digest(&p);
	assert_string_equal(d, "c4759069c154");
	free(d);
	assert_int_equal(p.nlines, 2);
	assert_string_equal(p.lines[0].kind, "RESULT");
	assert_string_equal(p.lines[1].text, "SUMMARY all good");
	runner_protocol_release(&p);
}

static void test_chunked_and_crlf(void **state)
{
	const char s[] = "TIMING a_ms=1\r\nTIMING b_ms=2\r\nDIGEST x=ab\r\nDIGEST w=cd";
	struct runner_protocol p;
	size_t i;
	double v;
	char *d;

	runner_protocol_init(&p);
	for (i = 0; i < sizeof(s) - 1; i++)
		runner_protocol_feed(&p, s + i, 1);
	runner_protocol_finish(&p);
	assert_int_equal(p.nerrors, 0);
	assert_true(metric(&p, "a_ms", &v) && v == 1);
	assert_true(metric(&p, "b_ms", &v) && v == 2);
	d = runner_protocol_digest(&p);
	assert_string_equal(d, "w=cd x=ab");
	free(d);
	runner_protocol_release(&p);
}

static void test_junk_nul_and_long_lines(void **state)
{
	size_t big = 3 * RUNNER_LINE_MAX, n;
	char *s = xmalloc(big + 256);
	struct runner_protocol p;
	double v;

	n = (size_t)sprintf(s, "TIMINGjunk\nTIMING: not ours\n");
	memcpy(s + n, "TIMING x_ms=1\0\n", 15);
	n += 15;
	memset(s + n, 'x', big);
	memcpy(s + n, "TIMING y_ms=", 12);
	n += big;
	n += (size_t)sprintf(s + n, "\nTIMING z_ms=3\n");
	feed_all(&p, s, n);
	assert_false(metric(&p, "x_ms", &v));   /* a line with a NUL is skipped */
	assert_false(metric(&p, "y_ms", &v));   /* so is an overlong one */
	assert_true(metric(&p, "z_ms", &v) && v == 3);
	assert_int_equal(p.lines_skipped, 2);
	assert_int_equal(p.nerrors, 0);
	runner_protocol_release(&p);
	free(s);
}

static void test_errors(void **state)
{
	const char s[] = "TIMING run2_ms=nan\nTIMING a=1 a=2\nTIMING b=abc\nTIMING c\n"
			 "TIMING 9x=1\nTIMING d=inf\nDIGEST zz\nDIGEST\nTIMING\n";
	struct runner_protocol p;

	feed_all(&p, s, strlen(s));
	assert_int_equal(p.nerrors, 9);
	assert_non_null(strstr(p.errors[0], "line 1: TIMING: metric 'run2_ms' is nan"));
	assert_non_null(strstr(p.errors[1], "line 2: TIMING: metric 'a' printed twice"));
	assert_non_null(strstr(p.errors[2], "'abc' is not a number"));
	assert_non_null(strstr(p.errors[3], "'c' is not name=value"));
	assert_non_null(strstr(p.errors[4], "'9x' is not a metric name"));
	assert_non_null(strstr(p.errors[5], "is infinite"));
	assert_non_null(strstr(p.errors[6], "line 7: DIGEST: 'zz' is not hexadecimal"));
	assert_non_null(strstr(p.errors[7], "DIGEST: expected"));
	assert_non_null(strstr(p.errors[8], "TIMING: no metric"));
	runner_protocol_release(&p);
}

/* The figures perfd measures itself are not a program's to print: each
 * an error, the program's other metrics kept. */
static void test_reserved_names(void **state)
{
	const char s[] = "TIMING wall_ms=1 t_ms=205\nTIMING cpu_wait_ms=0 user_ms=1 sys_ms=1 "
			 "maxrss_kb=1\nTIMING wall_ms_2=3\n";
	struct runner_protocol p;
	double v;

	feed_all(&p, s, strlen(s));
	assert_int_equal(p.nerrors, 5);
	assert_string_equal(p.errors[0], "line 1: TIMING: 'wall_ms' is a figure perfd measures "
			    "itself: a program may not print it (print its own, such as t_ms)");
	assert_non_null(strstr(p.errors[1], "line 2: TIMING: 'cpu_wait_ms' is a figure perfd"));
	assert_non_null(strstr(p.errors[4], "'maxrss_kb' is a figure perfd"));
	assert_false(metric(&p, "wall_ms", &v));
	assert_true(metric(&p, "t_ms", &v));
	assert_true(metric(&p, "wall_ms_2", &v));
	assert_true(runner_metric_name_is_reserved("wall_ms", 7));
	assert_false(runner_metric_name_is_reserved("wall_ms", 6));
	assert_false(runner_metric_name_is_reserved("t_ms", 4));
	runner_protocol_release(&p);
	(void)state;
}

static void test_bounds(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct runner_protocol p;
	int i;

	for (i = 0; i < RUNNER_METRICS_MAX + 10; i++)
		strbuf_addf(&sb, "TIMING m%d=1\n", i);
	for (i = 0; i < RUNNER_LINES_MAX + 10; i++)
		strbuf_addf(&sb, "SUMMARY %d\n", i);
	feed_all(&p, sb.buf, sb.len);
	assert_int_equal(p.nmetrics, RUNNER_METRICS_MAX);
	assert_int_equal(p.nlines, RUNNER_LINES_MAX);
	assert_true(p.nerrors >= 1);
	runner_protocol_release(&p);
	strbuf_release(&sb);
}

/* A kept line over RUNNER_KEPT_LINE_MAX is cut before a character that
 * would straddle the bound, never inside it. */
static void test_long_line_cut(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct runner_protocol p;

	strbuf_adds(&sb, "SUMMARY ");
	while (sb.len < RUNNER_KEPT_LINE_MAX - 1)
		strbuf_addch(&sb, 'x');
	strbuf_adds(&sb, "\xc3\xa9 and more\n");
	feed_all(&p, sb.buf, sb.len);
	assert_int_equal(p.nlines, 1);
	assert_int_equal(strlen(p.lines[0].text), RUNNER_KEPT_LINE_MAX - 1);
	assert_int_equal(p.lines[0].text[RUNNER_KEPT_LINE_MAX - 2], 'x');
	runner_protocol_release(&p);
	strbuf_release(&sb);
}

static void test_result_parse(void **state)
{
	struct runner_result r;

	assert_int_equal(runner_result_parse(&r, "RESULT stage1 elapsed_ms=6624 on "
		"\"Apple M1 Max (G13C C0)\": passed=25 total=25"), 0);
	assert_string_equal(r.name, "stage1");
	assert_string_equal(r.device, "Apple M1 Max (G13C C0)");
	assert_int_equal(r.nattrs, 1);
	assert_string_equal(r.attrs[0].key, "elapsed_ms");
	assert_int_equal(r.ncounts, 2);
	assert_string_equal(r.counts[1].key, "total");
	assert_string_equal(r.counts[1].value, "25");
	runner_result_release(&r);

	assert_int_equal(runner_result_parse(&r, "RESULT datamove on \"AMD Radeon\" : kernels=7 "
		"passed=7 failed=0 controls=0 known=0"), 0);
	assert_string_equal(r.device, "AMD Radeon");
	assert_int_equal(r.ncounts, 5);
	runner_result_release(&r);

	/* A line that is not a RESULT leaves r zeroed, whatever it held. */
	memset(&r, 0xA5, sizeof(r));
	assert_int_equal(runner_result_parse(&r, "RESULT"), -EINVAL);
	assert_null(r.name);
	assert_int_equal(r.ncounts, 0);
	runner_result_release(&r);
	memset(&r, 0xA5, sizeof(r));
	assert_int_equal(runner_result_parse(&r, "SUMMARY x"), -EINVAL);
	assert_null(r.device);
	runner_result_release(&r);
}

/* Release functions accept NULL and a zeroed struct. */
static void test_release_zeroed(void **state)
{
	struct runner_protocol p;
	struct runner_result r;

	runner_protocol_release(NULL);
	runner_result_release(NULL);
	memset(&p, 0, sizeof(p));
	runner_protocol_release(&p);
	memset(&r, 0, sizeof(r));
	runner_result_release(&r);
}

/* unit_is NAME KIND TEXT: what runner_metric_unit reads from NAME. */
static void unit_is(const char *name, enum runner_metric_kind kind, const char *text)
{
	struct runner_metric_unit u;

	memset(&u, 0xA5, sizeof(u));
	runner_metric_unit(&u, name);
	if (u.kind != kind || strcmp(u.text, text))
		fail_msg("'%s': kind %d text '%s', expected kind %d text '%s'", name ? name : "(null)",
			 (int)u.kind, u.text, (int)kind, text);
	assert_int_equal(runner_metric_needs_better(name), kind != RUNNER_METRIC_TIME);
}

static void test_metric_units(void **state)
{
	/* times: lower is better, said or not */
	unit_is("wall_ms", RUNNER_METRIC_TIME, "ms");
	unit_is("q4_matvec_ms", RUNNER_METRIC_TIME, "ms");
	unit_is("decode_us", RUNNER_METRIC_TIME, "us");
	unit_is("lat.NS", RUNNER_METRIC_TIME, "ns");
	unit_is("total_s", RUNNER_METRIC_TIME, "s");
	unit_is("ms", RUNNER_METRIC_TIME, "ms");
	/* rates: the issue's own, and the names perfd knew before */
	unit_is("mb_s", RUNNER_METRIC_RATE, "MB/s");
	unit_is("read_mb_s", RUNNER_METRIC_RATE, "MB/s");
	unit_is("xxh3_gb_s", RUNNER_METRIC_RATE, "GB/s");
	unit_is("hash_it_s", RUNNER_METRIC_RATE, "it/s");
	unit_is("hash_MBps", RUNNER_METRIC_RATE, "Mbps");
	unit_is("gbps", RUNNER_METRIC_RATE, "Gbps");
	unit_is("frames.fps", RUNNER_METRIC_RATE, "fps");
	unit_is("ops", RUNNER_METRIC_RATE, "ops");
	unit_is("clock_hz", RUNNER_METRIC_RATE, "Hz");
	unit_is("ops_per_s", RUNNER_METRIC_RATE, "ops/s");
	unit_is("Tokens_per_sec", RUNNER_METRIC_RATE, "Tokens/s");
	unit_is("per_s", RUNNER_METRIC_RATE, "/s");
	unit_is("rate", RUNNER_METRIC_RATE, "");
	/* neither: no unit, and a direction must be said */
	unit_is("speed", RUNNER_METRIC_UNKNOWN, "");
	unit_is("stops", RUNNER_METRIC_UNKNOWN, "");
	unit_is("items", RUNNER_METRIC_UNKNOWN, "");
	unit_is("run2_msx", RUNNER_METRIC_UNKNOWN, "");
	unit_is("", RUNNER_METRIC_UNKNOWN, "");
	unit_is(NULL, RUNNER_METRIC_UNKNOWN, "");
	/* a name longer than the buffer is read by its tail */
	unit_is("a_very_long_metric_name_that_goes_on_and_on_and_on_past_sixty_four_"
		"and_past_one_hundred_and_twenty_eight_characters_in_all_mb_s",
		RUNNER_METRIC_RATE, "MB/s");
	unit_is("a_word_far_too_long_for_the_unit_text_per_s", RUNNER_METRIC_RATE, "text/s");
	unit_is("abcdefghijklmnopqrstuvwxyz_per_s", RUNNER_METRIC_RATE, "/s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_lines),
		cmocka_unit_test(test_chunked_and_crlf),
		cmocka_unit_test(test_junk_nul_and_long_lines),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_reserved_names),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_long_line_cut),
		cmocka_unit_test(test_result_parse),
		cmocka_unit_test(test_release_zeroed),
		cmocka_unit_test(test_metric_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
