/* Unit tests of the pull requests' side that need no server: the
 * "/perfd run" and "/perfd triage" commands (web/forge/pulls.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "forge-internal.h"
#include "forge.h"

static void test_run_command(void **state)
{
	char sha[41];

	assert_true(web_run_command(sha, "/perfd run"));
	assert_string_equal(sha, "");
	assert_true(web_run_command(sha, "  \r\n/perfd run\r\nthanks"));
	assert_string_equal(sha, "");
	assert_true(web_run_command(sha, "/perfd run   \nLGTM"));
	assert_string_equal(sha, "");
	assert_true(web_run_command(sha, "/perfd run 0123ABC"));
	assert_string_equal(sha, "0123abc");
	assert_true(web_run_command(sha, "/perfd run\t0123456789abcdef0123456789abcdef01234567 \n"));
	assert_string_equal(sha, "0123456789abcdef0123456789abcdef01234567");

	/* No command: sha is "", whatever it held. */
	memset(sha, 'x', sizeof(sha));
	assert_false(web_run_command(sha, ""));
	assert_string_equal(sha, "");
	memset(sha, 'x', sizeof(sha));
	assert_false(web_run_command(sha, "/perfd run now"));
	assert_string_equal(sha, "");
	assert_false(web_run_command(sha, "/perfd"));
	assert_false(web_run_command(sha, "/perfd running"));
	assert_false(web_run_command(sha, "/perfd runs"));
	assert_false(web_run_command(sha, "please /perfd run"));
	assert_false(web_run_command(sha, "LGTM\n/perfd run"));
	assert_false(web_run_command(sha, "/perfd run 012345"));        /* too short */
	assert_false(web_run_command(sha, "/perfd run 0123456789abcdef0123456789abcdef012345678"));
	assert_false(web_run_command(sha, "/perfd run 0123abz"));
	assert_false(web_run_command(sha, "/perfd run now"));
	assert_false(web_run_command(sha, "/PERFD RUN"));
}

/* "/perfd greenlight HOST": the host it names, alone on the first line. */
static void test_greenlight_command(void **state)
{
	char host[64];

	assert_true(web_greenlight_command(host, "/perfd greenlight gfx1201"));
	assert_string_equal(host, "gfx1201");
	assert_true(web_greenlight_command(host, "\r\n /perfd greenlight\tm1-max.lab_2  \r\n"
					   "checked the dump"));
	assert_string_equal(host, "m1-max.lab_2");
	assert_false(web_greenlight_command(host, "/perfd greenlight"));
	assert_string_equal(host, "");
	assert_false(web_greenlight_command(host, "/perfd greenlight "));
	assert_false(web_greenlight_command(host, "/perfd greenlights m1"));
	assert_false(web_greenlight_command(host, "/perfd greenlight m1 m1-max"));
	assert_false(web_greenlight_command(host, "/perfd greenlight m1!"));
	assert_false(web_greenlight_command(host, "/perfd greenlight m1/../x"));
	assert_false(web_greenlight_command(host, "LGTM\n/perfd greenlight m1"));
	assert_false(web_greenlight_command(host, "/PERFD GREENLIGHT m1"));
	assert_false(web_greenlight_command(host, "/perfd greenlight "
		"a234567890123456789012345678901234567890123456789012345678901234"));
	assert_string_equal(host, "");
	(void)state;
}

/* "/perfd triage STATE [COMPARISON]": what it reads, the text it keeps,
 * and why it refuses what starts so but is not one. */
static void test_triage_command(void **state)
{
	struct web_triage_command c;
	char big[300];

	assert_int_equal(web_triage_command(&c, "/perfd triage acknowledged"), WEB_COMMAND_OK);
	assert_int_equal(c.triage, DB_TRIAGE_ACKNOWLEDGED);
	assert_int_equal(c.fixed_by, 0);
	assert_string_equal(c.text, "/perfd triage acknowledged");
	assert_int_equal(web_triage_command(&c, "\r\n  /perfd triage\tfalse-alarm \r\nnoise, "
					    "I checked"), WEB_COMMAND_OK);
	assert_int_equal(c.triage, DB_TRIAGE_FALSE_ALARM);
	assert_string_equal(c.text, "/perfd triage false-alarm");
	assert_int_equal(web_triage_command(&c, "/perfd triage false_alarm"), WEB_COMMAND_OK);
	assert_int_equal(c.triage, DB_TRIAGE_FALSE_ALARM);
	assert_int_equal(web_triage_command(&c, "/perfd triage new\n/perfd triage fixed 3"),
			 WEB_COMMAND_OK);
	assert_int_equal(c.triage, DB_TRIAGE_NEW);
	assert_int_equal(c.fixed_by, 0);
	assert_int_equal(web_triage_command(&c, "/perfd triage fixed   57  "), WEB_COMMAND_OK);
	assert_int_equal(c.triage, DB_TRIAGE_FIXED);
	assert_int_equal(c.fixed_by, 57);
	assert_string_equal(c.text, "/perfd triage fixed 57");
	assert_int_equal(web_triage_command(&c, "/perfd triage fixed 999999999999999"),
			 WEB_COMMAND_OK);
	assert_int_equal(c.fixed_by, 999999999999999LL);

	/* Not a command: nothing filled. */
	memset(&c, 'x', sizeof(c));
	assert_int_equal(web_triage_command(&c, ""), WEB_COMMAND_NONE);
	assert_string_equal(c.text, "");
	assert_string_equal(c.why, "");
	assert_int_equal(web_triage_command(&c, "/perfd triaged"), WEB_COMMAND_NONE);
	assert_int_equal(web_triage_command(&c, "/perfd run"), WEB_COMMAND_NONE);
	assert_int_equal(web_triage_command(&c, "please /perfd triage new"), WEB_COMMAND_NONE);
	assert_int_equal(web_triage_command(&c, "LGTM\n/perfd triage new"), WEB_COMMAND_NONE);
	assert_int_equal(web_triage_command(&c, "/PERFD TRIAGE new"), WEB_COMMAND_NONE);
	assert_int_equal(web_triage_command(&c, "/perfd  triage new"), WEB_COMMAND_NONE);

	/* A command, malformed: said why, its line kept. */
	assert_int_equal(web_triage_command(&c, "/perfd triage"), WEB_COMMAND_BAD);
	assert_string_equal(c.text, "/perfd triage");
	assert_non_null(strstr(c.why, "expected a state"));
	assert_int_equal(web_triage_command(&c, "/perfd triage wontfix\nbecause"), WEB_COMMAND_BAD);
	assert_string_equal(c.text, "/perfd triage wontfix");
	assert_non_null(strstr(c.why, "acknowledged, false-alarm, new, or fixed COMPARISON"));
	assert_int_equal(web_triage_command(&c, "/perfd triage Acknowledged"), WEB_COMMAND_BAD);
	assert_int_equal(web_triage_command(&c, "/perfd triage fixed"), WEB_COMMAND_BAD);
	assert_non_null(strstr(c.why, "fixed takes the hub's id"));
	assert_int_equal(web_triage_command(&c, "/perfd triage fixed #57"), WEB_COMMAND_BAD);
	assert_int_equal(web_triage_command(&c, "/perfd triage fixed 057"), WEB_COMMAND_BAD);
	assert_int_equal(web_triage_command(&c, "/perfd triage fixed 0"), WEB_COMMAND_BAD);
	assert_int_equal(web_triage_command(&c, "/perfd triage fixed 57x"), WEB_COMMAND_BAD);
	assert_int_equal(web_triage_command(&c, "/perfd triage fixed 1234567890123456"),
			 WEB_COMMAND_BAD);
	assert_int_equal(web_triage_command(&c, "/perfd triage fixed 57 58"), WEB_COMMAND_BAD);
	assert_non_null(strstr(c.why, "unexpected text after the command"));
	assert_int_equal(c.fixed_by, 0);
	assert_int_equal(web_triage_command(&c, "/perfd triage new 57"), WEB_COMMAND_BAD);
	assert_non_null(strstr(c.why, "only fixed takes a comparison"));
	assert_int_equal(web_triage_command(&c, "/perfd triage acknowledged, thanks"),
			 WEB_COMMAND_BAD);
	/* A long line is kept cut, control bytes as blanks, repaired. */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "/perfd triage \x01\xff", 16);
	assert_int_equal(web_triage_command(&c, big), WEB_COMMAND_BAD);
	assert_int_equal(strlen(c.text), DB_ALERT_COMMAND_TEXT_MAX);
	assert_memory_equal(c.text, "/perfd triage  \xef\xbf\xbd", 18);
}

/* A fence no line can close: longer than the longest backtick run, 70
 * backticks included (the fence was once cut from 64). */
static void test_fence(void **state)
{
	struct strbuf b = STRBUF_INIT;
	char run[71], want[80];
	const char *lines[2] = { "RESULT a ok", run };

	memset(run, '`', 70);
	run[70] = '\0';
	web_md_fenced(&b, lines, 2);
	memset(want, '`', 71);
	want[71] = '\n';
	want[72] = '\0';
	assert_int_equal(strncmp(b.buf, want, 72), 0);
	assert_string_equal(b.buf + b.len - 72, want);
	assert_int_equal(b.len, 72 + strlen("RESULT a ok\n") + 71 + 72);
	strbuf_reset(&b);
	lines[1] = "SUMMARY ``x``";
	web_md_fenced(&b, lines, 2);
	assert_string_equal(b.buf, "```\nRESULT a ok\nSUMMARY ``x``\n```\n");
	strbuf_release(&b);
}

static void test_runner_lines_shown(void **state)
{
	assert_true(web_runner_line_is_shown("RESULT name pass"));
	assert_true(web_runner_line_is_shown("SUMMARY 3 passed"));
	assert_true(web_runner_line_is_shown("RESULT"));
	assert_false(web_runner_line_is_shown("RESULTS x"));
	assert_false(web_runner_line_is_shown("```"));
	assert_false(web_runner_line_is_shown("# heading"));
	assert_false(web_runner_line_is_shown(" RESULT x"));
	assert_false(web_runner_line_is_shown(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_command),
		cmocka_unit_test(test_greenlight_command),
		cmocka_unit_test(test_triage_command),
		cmocka_unit_test(test_fence),
		cmocka_unit_test(test_runner_lines_shown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
