/* Unit tests of the forecast lines' reader (web/forge/forecast.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "forge.h"

static int parse(struct web_forecast *out, size_t max, const char *text, bool *more)
{
	return web_forecasts_parse(out, max, text, strlen(text), more);
}

static void test_good(void **state)
{
	struct web_forecast f[4];
	bool more;

	(void)state;
	assert_int_equal(parse(f, 4, "intro\nperfd-expect: work faster 5%..10%\r\n"
			       "  Perfd-Expect : q4.gemv SLOWER 0.5%..1000%\n"
			       "perfd-expect: x unchanged\nperfd-expect: y unchanged 1.25%", &more), 4);
	assert_false(more);
	assert_int_equal(f[0].dir, WEB_FORECAST_FASTER);
	assert_string_equal(f[0].case_name, "work");
	assert_string_equal(f[0].line, "perfd-expect: work faster 5%..10%");
	assert_true(f[0].has_band);
	assert_true(f[0].lo > 0.0499 && f[0].lo < 0.0501 && f[0].hi > 0.0999 && f[0].hi < 0.1001);
	assert_int_equal(f[1].dir, WEB_FORECAST_SLOWER);
	assert_string_equal(f[1].case_name, "q4.gemv");
	assert_true(f[1].hi > 9.999 && f[1].hi < 10.001);
	assert_int_equal(f[2].dir, WEB_FORECAST_UNCHANGED);
	assert_false(f[2].has_band);
	assert_int_equal(f[3].dir, WEB_FORECAST_UNCHANGED);
	assert_true(f[3].has_band && f[3].lo == 0 && f[3].hi > 0.01249 && f[3].hi < 0.01251);
}

static void expect_bad(const char *line, const char *why)
{
	struct web_forecast f;
	bool more;

	assert_int_equal(parse(&f, 1, line, &more), 1);
	assert_int_equal(f.dir, WEB_FORECAST_BAD);
	assert_false(f.has_band);
	assert_non_null(strstr(f.why, why));
}

static void test_bad(void **state)
{
	char longline[300];

	(void)state;
	expect_bad("perfd-expect work faster 5%..10%", "expected ':'");
	expect_bad("perfd-expect: ", "expected a case name");
	expect_bad("perfd-expect: work quicker 5%", "expected faster, slower or unchanged");
	expect_bad("perfd-expect: work faster", "expected a band");
	expect_bad("perfd-expect: work faster 5%", "expected '..'");
	expect_bad("perfd-expect: work faster 10%..5%", "low end is above");
	expect_bad("perfd-expect: work faster 5%..1001%", "over 1000%");
	expect_bad("perfd-expect: work faster 5.1234%..6%", "1 to 3 decimals");
	expect_bad("perfd-expect: work faster 5..6%", "expected '%' after 5");
	expect_bad("perfd-expect: work faster 5%..6% please", "unexpected text");
	expect_bad("perfd-expect: wo|rk faster 5%..6%", "unexpected '|'");
	memset(longline, 'x', sizeof(longline));
	memcpy(longline, "perfd-expect: ", 14);
	longline[sizeof(longline) - 1] = '\0';
	expect_bad(longline, "longer than 200 bytes");
}

static void test_bounds(void **state)
{
	struct strbuf text = STRBUF_INIT;
	struct web_forecast f[WEB_FORECASTS_MAX];
	char *kept = malloc(WEB_FORECAST_TEXT_MAX);
	bool more;
	int i, n;
	size_t len;

	(void)state;
	for (i = 0; i < 20; i++)
		strbuf_addf(&text, "perfd-expect: c%d faster 1%%..2%%\nnoise\n", i);
	n = web_forecasts_parse(f, WEB_FORECASTS_MAX, text.buf, text.len, &more);
	assert_int_equal(n, WEB_FORECASTS_MAX);
	assert_true(more);
	assert_string_equal(f[15].case_name, "c15");
	/* The lines kept of a description read as the description itself. */
	len = web_forecast_lines(kept, WEB_FORECAST_TEXT_MAX, text.buf, text.len);
	assert_int_equal(len, strlen(kept));
	n = web_forecasts_parse(f, WEB_FORECASTS_MAX, kept, len, &more);
	assert_int_equal(n, WEB_FORECASTS_MAX);
	assert_true(more);
	/* Past 64 KiB nothing is read. */
	strbuf_reset(&text);
	for (i = 0; i < WEB_FORECAST_BODY_MAX; i++)
		strbuf_addch(&text, ' ');
	strbuf_adds(&text, "\nperfd-expect: late faster 1%..2%\n");
	assert_int_equal(web_forecasts_parse(f, WEB_FORECASTS_MAX, text.buf, text.len, &more), 0);
	strbuf_release(&text);
	free(kept);
}

/* A text is read within its length: each one is put at the very end of a
 * page whose next page cannot be read, so a byte read past it faults in
 * every build, not only under AddressSanitizer. The fuzz target found the
 * digits of a percentage counted by strspn past the text's end
 * (tests/fuzz/corpus/forecast/overread-*). */
static void test_exact_length(void **state)
{
	static const char *const texts[] = {
		"perfd-expect: a faster 5",
		"perfd-expect: a faster 5%..",
		"perfd-expect: a faster 5%..12",
		"perfd-expect: a unchanged 7",
		"perfd-expect: a faster 5.25",
	};
	long page = sysconf(_SC_PAGESIZE);
	struct web_forecast f;
	char *map, *at;
	size_t i, len;
	bool more;

	(void)state;
	map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
	for (i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
		len = strlen(texts[i]);
		at = map + page - len;
		memcpy(at, texts[i], len);
		assert_int_equal(web_forecasts_parse(&f, 1, at, len, &more), 1);
		assert_int_equal(f.dir, WEB_FORECAST_BAD);
		assert_non_null(strstr(f.why, "%"));
	}
	munmap(map, (size_t)page * 2);
}

/* The lines kept of a text read as the text: a line that ends in more than
 * one '\r' (found by the fuzz target, corpus round-trip-crs.txt), and a
 * line too long whose byte past the bound is a '\r'. */
static void test_kept_crs(void **state)
{
	struct web_forecast a[2], b[2];
	char text[WEB_FORECAST_LINE_MAX + 64], *kept = malloc(WEB_FORECAST_TEXT_MAX);
	size_t len, klen;
	bool more;
	int i, na, nb;

	(void)state;
	len = (size_t)snprintf(text, sizeof(text), "perfd-expect: a faster 1%%..2%%\r\r\n"
			       "perfd-expect: b faster ");
	memset(text + len, 'x', WEB_FORECAST_LINE_MAX);
	len = strlen("perfd-expect: a faster 1%..2%\r\r\n") + WEB_FORECAST_LINE_MAX + 1;
	text[len - 1] = '\r';
	memcpy(text + len, "yy\n", 4);
	len += 3;
	na = web_forecasts_parse(a, 2, text, len, &more);
	assert_int_equal(na, 2);
	assert_int_equal(a[0].dir, WEB_FORECAST_FASTER);
	assert_string_equal(a[0].line, "perfd-expect: a faster 1%..2%");
	assert_non_null(strstr(a[1].why, "longer than"));
	klen = web_forecast_lines(kept, WEB_FORECAST_TEXT_MAX, text, len);
	nb = web_forecasts_parse(b, 2, kept, klen, &more);
	assert_int_equal(nb, na);
	for (i = 0; i < na; i++) {
		assert_int_equal(b[i].dir, a[i].dir);
		assert_string_equal(b[i].line, a[i].line);
		assert_string_equal(b[i].why, a[i].why);
	}
	free(kept);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_exact_length),
		cmocka_unit_test(test_kept_crs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
