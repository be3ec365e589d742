/* Unit tests of the fault watch's open and close, on plain files. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runners.h"

/* A zeroed watch was never opened: closing it closes no descriptor, not
 * even 0, which its zeroed fd names. */
static void test_close_zeroed(void **state)
{
	struct runner_fault_watch w;

	if (fcntl(0, F_GETFD) < 0)
		assert_int_equal(open("/dev/null", O_RDONLY), 0);
	memset(&w, 0, sizeof(w));
	runner_fault_watch_close(&w);
	assert_true(fcntl(0, F_GETFD) >= 0);
	assert_int_equal(w.fd, -1);
	runner_fault_watch_close(&w);
	runner_fault_watch_close(NULL);
	assert_true(fcntl(0, F_GETFD) >= 0);
}

/* An unreadable log leaves the watch off with its reason, and closing it
 * frees the reason. */
static void test_open_missing(void **state)
{
	struct runner_fault_watch w;
	char *st;

	runner_fault_watch_open(&w, "/nonexistent/perfd-kmsg", NULL);
	assert_int_equal(w.fd, -1);
	assert_non_null(w.off_reason);
	assert_null(runner_fault_watch_check(&w));
	st = runner_fault_watch_state(&w);
	assert_non_null(strstr(st, "off: /nonexistent/perfd-kmsg"));
	free(st);
	runner_fault_watch_close(&w);
	assert_null(w.off_reason);
	assert_int_equal(w.fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_close_zeroed),
		cmocka_unit_test(test_open_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
