/* Unit tests of the previous boot's kernel log: the shipped gfx1201
 * profile with its boot_log_command and boot_log set, over a fake pstore
 * directory, a command's output, a failing command and nothing at all. */
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

#include "runners.h"

#define RING_TIMEOUT "<3>[ 1234.567890] amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout, " \
	"signaled seq=1, emitted seq=3"
#define MODE1_RESET "<6>[ 1235.000000] amdgpu 0000:03:00.0: amdgpu: MODE1 reset"

/* The shipped hosts/gfx1201.conf, whose [faults] section comes last, with
 * the two keys appended to it. The caller frees it. */
static struct host_profile *gfx1201_with(const char *command, const char *paths)
{
	struct strbuf errors = STRBUF_INIT, text = STRBUF_INIT;
	struct host_profile *p = NULL;
	char *path = NULL, *shipped = NULL;
	size_t len;

	assert_int_equal(host_profile_resolve(&path, "gfx1201"), 0);
	assert_int_equal(fs_read_file(&shipped, &len, path, 64 * 1024), 0);
	strbuf_addf(&text, "%s\nboot_log_command = %s\nboot_log = %s\n", shipped, command, paths);
	if (host_profile_parse(&p, path, text.buf, text.len, &errors) != 0)
		fail_msg("%s", errors.buf);
	assert_int_equal(p->nfaults, 4);
	strbuf_release(&errors);
	strbuf_release(&text);
	free(shipped);
	free(path);
	return p;
}

static char *make_dir(void)
{
	char *dir = xstrdup("/tmp/perfd-test-boot-log-XXXXXX");

	assert_non_null(mkdtemp(dir));
	return dir;
}

static void make_file(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	free(path);
}

/* The scan of p, which must succeed; *out is garbage on entry, as a
 * caller's may be. */
static void scan(struct runner_boot_log *out, const struct host_profile *p)
{
	memset(out, 0xA5, sizeof(*out));
	assert_int_equal(runner_boot_log_scan(out, p), 0);
	assert_non_null(out->source);
}

/* pstore's records: each regular file directly in the directory, read in
 * version order; the first matching line is kept as read, its "\r\n"
 * gone; a file in a subdirectory is not read. */
static void test_pstore_dir(void **state)
{
	char *dir = make_dir(), *sub = xasprintf("%s/sub", dir), *want;
	struct host_profile *p = gfx1201_with("", dir);
	struct runner_boot_log b;

	make_file(dir, "dmesg-ramoops-10", MODE1_RESET "\n");
	make_file(dir, "dmesg-ramoops-2",
		  "Panic#1 Part1\n"
		  "<6>[    2.100000] amdgpu 0000:03:00.0: amdgpu: SMU is initialized successfully!\r\n"
		  RING_TIMEOUT "\r\n"
		  MODE1_RESET "\r\n");
	assert_int_equal(mkdir(sub, 0700), 0);
	make_file(sub, "dmesg-ramoops-0", "amdgpu: GPU reset begin!\n");
	scan(&b, p);
	assert_string_equal(b.fault, RING_TIMEOUT);
	want = xasprintf("%s: 2 files, 5 lines", dir);
	assert_string_equal(b.source, want);
	free(want);
	runner_boot_log_release(&b);
	assert_null(b.fault);
	assert_null(b.source);
	runner_boot_log_release(&b);
	runner_boot_log_release(NULL);
	host_profile_free(p);
	assert_int_equal(fs_rm_rf(dir), 0);
	free(sub);
	free(dir);
}

/* The command's standard output is the log, its lines counted in source. */
static void test_command(void **state)
{
	static const char command[] = "printf '<6>[ 1.0] amdgpu: booting\\n"
		"<3>[ 1234.567890] amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout\\n'";
	struct host_profile *p = gfx1201_with(command, "");
	struct runner_boot_log b;
	char *want = xasprintf("%s: 2 lines", command);

	scan(&b, p);
	assert_string_equal(b.fault,
			    "<3>[ 1234.567890] amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout");
	assert_string_equal(b.source, want);
	runner_boot_log_release(&b);
	host_profile_free(p);
	free(want);
}

/* A command that fails is said with its first words, and what it printed
 * is not taken for the log (its stderr is joined to it); a missing path is
 * said as none; with nothing read, the source says none found. */
static void test_command_fails(void **state)
{
	struct host_profile *p = gfx1201_with("echo 'ring gfx_0.0.0 timeout'; exit 1",
					      "/nonexistent/perfd-pstore");
	struct runner_boot_log b;

	scan(&b, p);
	assert_null(b.fault);
	assert_string_equal(b.source, "none found: echo 'ring gfx_0.0.0 timeout'; exit 1: exited 1 "
			    "('ring gfx_0.0.0 timeout'); /nonexistent/perfd-pstore: none");
	runner_boot_log_release(&b);
	host_profile_free(p);

	/* journalctl absent: the shell says so, and exits 127. */
	p = gfx1201_with("perfd-no-such-journalctl -k -b -1", "");
	scan(&b, p);
	assert_null(b.fault);
	assert_non_null(strstr(b.source, "none found: perfd-no-such-journalctl -k -b -1: exited "
			       "127 ('"));
	assert_non_null(strstr(b.source, "not found')"));
	runner_boot_log_release(&b);
	host_profile_free(p);
}

/* A profile that names no source: none found, and why. */
static void test_no_source(void **state)
{
	struct host_profile *p = gfx1201_with("", "");
	struct runner_boot_log b;

	scan(&b, p);
	assert_null(b.fault);
	assert_string_equal(b.source,
			    "none found: the profile names no boot_log_command and no boot_log");
	runner_boot_log_release(&b);
	host_profile_free(p);
}

/* A file read with no matching line: what was read, and no fault; an empty
 * directory beside it is said as such. */
static void test_no_match(void **state)
{
	char *dir = make_dir(), *empty = xasprintf("%s/empty", dir);
	char *file = xasprintf("%s/kern.log", dir), *paths = xasprintf("%s %s", file, empty);
	struct host_profile *p = gfx1201_with("", paths);
	struct runner_boot_log b;
	char *want = xasprintf("%s: 2 lines; %s: empty", file, empty);

	assert_int_equal(mkdir(empty, 0700), 0);
	make_file(dir, "kern.log", "<6>[    2.1] amdgpu: SMU is initialized successfully!\n"
		  "<6>[    2.2] amdgpu: ring gfx_0.0.0 uses VM inv eng 0 on hub 0\n");
	scan(&b, p);
	assert_null(b.fault);
	assert_string_equal(b.source, want);
	runner_boot_log_release(&b);
	host_profile_free(p);
	assert_int_equal(fs_rm_rf(dir), 0);
	free(want);
	free(paths);
	free(file);
	free(empty);
	free(dir);
}

/* A fault line is kept to RUNNER_BOOT_LOG_LINE_MAX bytes. */
static void test_long_line(void **state)
{
	char *dir = make_dir(), *text = xcalloc(1, 4096);
	struct host_profile *p = gfx1201_with("", dir);
	struct runner_boot_log b;

	strcpy(text, MODE1_RESET " ");
	memset(text + strlen(text), 'x', 4000);
	make_file(dir, "dmesg-efi-1", text);
	scan(&b, p);
	assert_non_null(b.fault);
	assert_int_equal(strlen(b.fault), RUNNER_BOOT_LOG_LINE_MAX);
	assert_memory_equal(b.fault, MODE1_RESET, strlen(MODE1_RESET));
	runner_boot_log_release(&b);
	host_profile_free(p);
	assert_int_equal(fs_rm_rf(dir), 0);
	free(text);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pstore_dir),
		cmocka_unit_test(test_command),
		cmocka_unit_test(test_command_fails),
		cmocka_unit_test(test_no_source),
		cmocka_unit_test(test_no_match),
		cmocka_unit_test(test_long_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
