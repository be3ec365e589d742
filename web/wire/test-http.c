/* Unit tests of web/wire's HTTP client that need no server: reading a
 * token file (http.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "wire.h"

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
	char big[WIRE_HTTP_TOKEN_MAX + 8], *path, *token = NULL;

	assert_non_null(mkdtemp(dir));
	path = write_token("ok", "ghp_abc123\n", 0600);
	assert_int_equal(wire_http_token_read(&token, path), 0);
	assert_string_equal(token, "ghp_abc123");
	free(token);
	free(path);

	/* Readable by group or others: refused, with the mode and the fix. */
	path = write_token("loose", "ghp_abc123", 0644);
	token = NULL;
	assert_int_equal(wire_http_token_read(&token, path), -EPERM);
	assert_null(token);
	assert_non_null(strstr(err_last(), "is mode 0644"));
	assert_non_null(strstr(err_last(), "chmod 600"));
	assert_null(strstr(err_last(), "ghp"));
	free(path);
	path = write_token("group", "ghp_abc123", 0640);
	assert_int_equal(wire_http_token_read(&token, path), -EPERM);
	free(path);

	path = write_token("empty", "\n \n", 0600);
	token = NULL;
	assert_int_equal(wire_http_token_read(&token, path), -EINVAL);
	assert_null(token);
	assert_non_null(strstr(err_last(), "is empty"));
	free(path);

	path = write_token("blank", "ghp abc\n", 0600);
	assert_int_equal(wire_http_token_read(&token, path), -EINVAL);
	assert_non_null(strstr(err_last(), "byte 4 is a blank"));
	assert_null(strstr(err_last(), "ghp"));          /* never the token */
	free(path);

	path = write_token("two-lines", "ghp_abc\nghp_def\n", 0600);
	assert_int_equal(wire_http_token_read(&token, path), -EINVAL);
	assert_null(strstr(err_last(), "ghp"));
	free(path);

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	path = write_token("big", big, 0600);
	assert_int_equal(wire_http_token_read(&token, path), -EINVAL);
	assert_non_null(strstr(err_last(), "not a token"));
	free(path);

	path = xasprintf("%s/none", dir);
	assert_int_equal(wire_http_token_read(&token, path), -ENOENT);
	free(path);
	assert_int_equal(wire_http_token_read(&token, dir), -EINVAL);  /* a directory */
	path = xasprintf("rm -rf %s", dir);
	assert_int_equal(system(path), 0);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
