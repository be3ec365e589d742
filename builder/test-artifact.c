/*
 * Tests of how a build's artifacts are matched and hashed: from the build
 * directory, one component at a time, no symbolic link followed (in the
 * middle of a path or at its end), no FIFO opened, and within the bounds
 * of bytes and seconds per pass, a sparse file refused before a byte of it
 * is read. Each test makes its files in a scratch directory with the
 * system calls a hostile build would use.
 */
#include <errno.h>
#include <fcntl.h>
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

#include "builder.h"
#include "common.h"

static char tmp[] = "/tmp/perfd-test-artifact-XXXXXX";

/* That a call returned want, showing err_last() when it did not. */
static void returned(int got, int want)
{
	if (got != want)
		print_error("returned %d, not %d: %s\n", got, want, err_last());
	assert_int_equal(got, want);
}

/* tmp/name, the caller's. */
static char *at(const char *name)
{
	return xasprintf("%s/%s", tmp, name);
}

static void make_dir(const char *name)
{
	char *p = at(name);

	assert_int_equal(fs_mkdir_p(p), 0);
	free(p);
}

/* A regular file of len bytes of text (a hole of len bytes with sparse). */
static void make_file(const char *name, const char *text, int64_t len)
{
	char *p = at(name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	if (text)
		assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	else
		assert_int_equal(ftruncate(fd, len), 0);
	close(fd);
	free(p);
}

static void make_link(const char *target, const char *name)
{
	char *p = at(name);

	assert_int_equal(symlink(target, p), 0);
	free(p);
}

static void free_names(char **names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmp))
		return -1;
	/* Whatever blocks fails the test instead of hanging it. */
	alarm(60);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return fs_rm_rf(tmp);
}

static const struct sha256_bound unbounded;

/* A plain directory of regular files: matched and hashed as before. */
static void test_plain(void **state)
{
	struct sha256_bound b = unbounded;
	char hex[SHA256_HEX_SIZE], **names = NULL;
	size_t n = 0;
	int64_t size;

	make_dir("plain/out/sub");
	make_file("plain/out/a.bin", "abc", 0);
	make_file("plain/out/b.bin", "", 0);
	make_file("plain/out/sub/c.bin", "", 0);
	returned(builder_glob(&names, &n, tmp, (const char *[]){ "plain/out/*" }, 1, 10), 0);
	assert_int_equal(n, 2);
	assert_string_equal(names[0], "plain/out/a.bin");
	assert_string_equal(names[1], "plain/out/b.bin");
	free_names(names, n);
	returned(sha256_file_beneath(hex, &size, tmp, "./plain//out/a.bin", &b), 0);
	assert_string_equal(hex,
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(size, 3);
	assert_int_equal(b.bytes, 3);
	returned(sha256_file_beneath(hex, &size, tmp, "plain/../plain/out/a.bin", &b),
		   -EXDEV);
	returned(builder_glob(&names, &n, tmp, (const char *[]){ "plain/../x" }, 1, 10),
		   -EXDEV);
}

/* "out" a link to a directory outside (ln -s /proc out): neither matched
 * nor hashed through, whether the pattern names it or a wildcard finds it. */
static void test_link_in_the_middle(void **state)
{
	struct sha256_bound b = unbounded;
	char hex[SHA256_HEX_SIZE], **names = NULL, *outside = at("outside");
	size_t n = 0;
	int64_t size;

	make_dir("outside");
	make_file("outside/token", "secret", 0);
	make_dir("mid");
	make_link(outside, "mid/out");
	returned(builder_glob(&names, &n, tmp, (const char *[]){ "mid/out/*" }, 1, 10),
		   -ELOOP);
	assert_non_null(strstr(err_last(), "'mid/out' is a symbolic link"));
	assert_null(names);
	returned(builder_glob(&names, &n, tmp, (const char *[]){ "mid/*/token" }, 1, 10),
		   -ELOOP);
	returned(sha256_file_beneath(hex, &size, tmp, "mid/out/token", &b), -ELOOP);
	assert_non_null(strstr(err_last(), "'mid/out' is a symbolic link"));
	assert_string_equal(hex, "");
	assert_int_equal(b.bytes, 0);
	free(outside);
}

/* The artifact itself a link (to the agent's token): refused, not hashed. */
static void test_link_at_the_end(void **state)
{
	struct sha256_bound b = unbounded;
	char hex[SHA256_HEX_SIZE], **names = NULL, *token = at("end/token");
	size_t n = 0;
	int64_t size;

	make_dir("end/out");
	make_file("end/token", "secret", 0);
	make_file("end/out/a.bin", "abc", 0);
	make_link(token, "end/out/z.bin");
	returned(builder_glob(&names, &n, tmp, (const char *[]){ "end/out/*" }, 1, 10),
		   -ELOOP);
	assert_non_null(strstr(err_last(), "'end/out/z.bin' is a symbolic link"));
	returned(sha256_file_beneath(hex, &size, tmp, "end/out/z.bin", &b), -ELOOP);
	assert_non_null(strstr(err_last(), "'end/out/z.bin' is a symbolic link"));
	assert_int_equal(b.bytes, 0);
	free(token);
}

/* A FIFO (or a device) is no artifact: refused, and never waited on. */
static void test_fifo(void **state)
{
	struct sha256_bound b = unbounded;
	char hex[SHA256_HEX_SIZE], **names = NULL, *fifo = at("fifo/out/f");
	size_t n = 0;
	int64_t size;

	make_dir("fifo/out");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	returned(builder_glob(&names, &n, tmp, (const char *[]){ "fifo/out/*" }, 1, 10),
		   -EINVAL);
	assert_non_null(strstr(err_last(), "'fifo/out/f' is a FIFO"));
	returned(sha256_file_beneath(hex, &size, tmp, "fifo/out/f", &b), -EINVAL);
	assert_non_null(strstr(err_last(), "a FIFO"));
	free(fifo);
}

/* Four sparse 16 GiB files cost minutes a pass: the bytes bound refuses
 * the first before reading it, and counts across the files of a pass. */
static void test_bytes_bound(void **state)
{
	struct sha256_bound b = { .max_bytes = (int64_t)4 << 30 };
	char hex[SHA256_HEX_SIZE];
	int64_t size, t0 = time_monotonic_ns();

	make_dir("big");
	make_file("big/sparse", NULL, (int64_t)16 << 30);
	make_file("big/a", "abc", 0);
	returned(sha256_file_beneath(hex, &size, tmp, "big/sparse", &b), -EFBIG);
	assert_non_null(strstr(err_last(), "'big/sparse'"));
	assert_non_null(strstr(err_last(), "4294967296 bytes"));
	assert_int_equal(b.bytes, 0);
	assert_true(time_monotonic_ns() - t0 < 5000000000LL);

	b = (struct sha256_bound){ .max_bytes = 5 };
	returned(sha256_file_beneath(hex, &size, tmp, "big/a", &b), 0);
	returned(sha256_file_beneath(hex, &size, tmp, "big/a", &b), -EFBIG);
	assert_int_equal(b.bytes, 3);
}

/* The seconds bound: a pass that has spent them stops. */
static void test_time_bound(void **state)
{
	struct sha256_bound b = { .max_s = 1e-9 };
	char hex[SHA256_HEX_SIZE];
	int64_t size;

	make_dir("slow");
	make_file("slow/a", "abc", 0);
	returned(sha256_file_beneath(hex, &size, tmp, "slow/a", &b), -ETIMEDOUT);
	assert_non_null(strstr(err_last(), "'slow/a'"));
}

/* A cached build whose artifact's directory became a link to a copy of it
 * is stale: the check at a restart does not follow it. */
static void test_verify_link(void **state)
{
	struct sha256_bound b = unbounded;
	struct db_build_artifact art = { .name = "out/a.bin" };
	struct db_build build = { .id = 7, .artifacts = &art, .nartifacts = 1 };
	char *why = NULL, *out, *copy;
	int64_t size;

	build.dir = at("verify");
	make_dir("verify/out");
	make_file("verify/out/a.bin", "abc", 0);
	returned(sha256_file_beneath(art.artifact.sha256, &size, build.dir, art.name, &b), 0);
	returned(builder_build_verify(&build, &unbounded, &why), 0);
	assert_null(why);

	out = at("verify/out");
	copy = at("verify/copy");
	assert_int_equal(rename(out, copy), 0);
	assert_int_equal(symlink(copy, out), 0);
	returned(builder_build_verify(&build, &unbounded, &why), 1);
	assert_non_null(why);
	assert_non_null(strstr(why, "'out' is a symbolic link"));
	free(why);
	free(out);
	free(copy);
	free(build.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_link_in_the_middle),
		cmocka_unit_test(test_link_at_the_end),
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_bytes_bound),
		cmocka_unit_test(test_time_bound),
		cmocka_unit_test(test_verify_link),
	};

	return cmocka_run_group_tests_name("artifact", tests, setup, teardown);
}
