/* Unit tests of the pull requests' side that need no server: the
 * "/perfd run" command (web/forge/pulls.c) and reading a token file
 * (web/forge/github.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static char dir[] = "/tmp/perfd-test-token.XXXXXX";

static char *write_token(const char *name, const char *text, mode_t mode)
{
	char *path;
	FILE *f;

	path = xasprintf("%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
	return path;
}

static void test_token_read(void **state)
{
	char big[WEB_GH_TOKEN_MAX + 8], *path, *token = NULL;
	bool loose = true;

	assert_non_null(mkdtemp(dir));
	path = write_token("ok", "ghp_abc123\n", 0600);
	assert_int_equal(web_gh_token_read(&token, path, &loose), 0);
	assert_string_equal(token, "ghp_abc123");
	assert_false(loose);
	free(token);
	free(path);

	path = write_token("loose", "ghp_abc123", 0644);
	assert_int_equal(web_gh_token_read(&token, path, &loose), 0);
	assert_true(loose);
	free(token);
	free(path);

	path = write_token("empty", "\n \n", 0600);
	token = NULL;
	assert_int_equal(web_gh_token_read(&token, path, NULL), -EINVAL);
	assert_null(token);
	assert_non_null(strstr(err_last(), "is empty"));
	free(path);

	path = write_token("blank", "ghp abc\n", 0600);
	assert_int_equal(web_gh_token_read(&token, path, NULL), -EINVAL);
	assert_non_null(strstr(err_last(), "byte 4 is a blank"));
	assert_null(strstr(err_last(), "ghp"));          /* never the token */
	free(path);

	path = write_token("two-lines", "ghp_abc\nghp_def\n", 0600);
	assert_int_equal(web_gh_token_read(&token, path, NULL), -EINVAL);
	assert_null(strstr(err_last(), "ghp"));
	free(path);

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	path = write_token("big", big, 0600);
	assert_int_equal(web_gh_token_read(&token, path, NULL), -EINVAL);
	assert_non_null(strstr(err_last(), "not a token"));
	free(path);

	path = xasprintf("%s/none", dir);
	assert_int_equal(web_gh_token_read(&token, path, NULL), -ENOENT);
	free(path);
	assert_int_equal(web_gh_token_read(&token, dir, NULL), -EINVAL);  /* a directory */
	path = xasprintf("rm -rf %s", dir);
	assert_int_equal(system(path), 0);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_command),
		cmocka_unit_test(test_token_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
