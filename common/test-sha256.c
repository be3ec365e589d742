/* Unit tests of common/sha256.c: the FIPS 180-2 vectors, parts hashed as
 * their concatenation, a file read in several chunks, a file that is not;
 * the comparison of two hashes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

#define EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define ZEROS_200000 "4cbbd9be0cba685835755f827758705db5a413c5494c34262cd25946a73e7582"

static void test_data(void **state)
{
	char out[SHA256_HEX_SIZE];

	assert_int_equal(sha256_hex(out, "", 0), 0);
	assert_string_equal(out, EMPTY);
	assert_int_equal(sha256_hex(out, "abc", 3), 0);
	assert_string_equal(out, ABC);
}

static void test_parts(void **state)
{
	const void *parts[] = { "a", "", "bc" };
	size_t lens[] = { 1, 0, 2 };
	char out[SHA256_HEX_SIZE];

	assert_int_equal(sha256_hex_parts(out, parts, lens, 3), 0);
	assert_string_equal(out, ABC);
	assert_int_equal(sha256_hex_parts(out, parts, lens, 0), 0);
	assert_string_equal(out, EMPTY);
}

static void test_file(void **state)
{
	char path[] = "/tmp/perfd-test-sha256.XXXXXX", out[SHA256_HEX_SIZE];
	char *zeros = calloc(200000, 1);
	int64_t size = -1;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, zeros, 200000), 200000);
	close(fd);
	/* More than one read of 64 KiB. */
	assert_int_equal(sha256_file_hex(out, &size, path), 0);
	assert_string_equal(out, ZEROS_200000);
	assert_int_equal(size, 200000);
	unlink(path);
	assert_int_equal(sha256_file_hex(out, &size, path), -ENOENT);
	assert_string_equal(out, "");
	assert_int_equal(size, 0);
	assert_non_null(strstr(err_last(), path));
	free(zeros);
}

static void test_equal(void **state)
{
	char other[SHA256_HEX_SIZE];

	assert_true(sha256_hex_equal(ABC, ABC));
	assert_false(sha256_hex_equal(ABC, EMPTY));
	snprintf(other, sizeof(other), "%s", ABC);
	other[63] = other[63] == '0' ? '1' : '0';
	assert_false(sha256_hex_equal(ABC, other));
	/* Only whole hashes are ever equal. */
	assert_false(sha256_hex_equal("ab", "ab"));
	assert_false(sha256_hex_equal("", ""));
	assert_false(sha256_hex_equal(ABC "0", ABC "0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data),
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
