/* Unit tests of common/: the INI reader, CPU sets, child environments, the
 * wait for a stop, base64. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common.h"

/* What the INI reader handed over, one line of text each. */
static void on_section(void *ctx, unsigned line, char *name, char *arg)
{
	strbuf_addf(ctx, "%u [%s|%s]\n", line, name ? name : "(null)", arg ? arg : "(null)");
}

static void on_key(void *ctx, unsigned line, char *key, char *value)
{
	strbuf_addf(ctx, "%u %s=%s\n", line, key, value);
}

static void on_error(void *ctx, unsigned line, const char *msg)
{
	strbuf_addf(ctx, "%u error: %s\n", line, msg);
}

static void test_ini(void **state)
{
	static const char text[] =
		"# comment\n"
		"; comment\n"
		"\n"
		"  [build]  \n"
		"command = make -j2; echo done # not a comment\n"
		"empty =\n"
		"[runner  contract]\n"
		"[broken\n"
		"key = after a broken header\n"
		"no equals sign\n"
		"\r\n"
		"[case x] trailing\n"
		"last = no newline";
	struct strbuf got = STRBUF_INIT;
	const struct ini_handler h = { on_section, on_key, on_error, &got };

	ini_parse(text, sizeof(text) - 1, &h);
	assert_string_equal(got.buf,
		"4 [build|(null)]\n"
		"5 command=make -j2; echo done # not a comment\n"
		"6 empty=\n"
		"7 [runner|contract]\n"
		"8 error: a section header is '[name]' alone on its line\n"
		"8 [(null)|(null)]\n"
		"9 key=after a broken header\n"
		"10 error: expected 'key = value' or '[section]'\n"
		"12 error: a section header is '[name]' alone on its line\n"
		"12 [(null)|(null)]\n"
		"13 last=no newline\n");
	strbuf_release(&got);
}

static void test_ini_bounds(void **state)
{
	struct strbuf text = STRBUF_INIT, got = STRBUF_INIT;
	const struct ini_handler h = { on_section, on_key, on_error, &got };
	int i;

	strbuf_adds(&text, "a = ");
	for (i = 0; i < INI_LINE_MAX; i++)
		strbuf_addch(&text, 'x');
	strbuf_adds(&text, "\nb = 1\nc = x");
	strbuf_addch(&text, '\0');
	strbuf_adds(&text, "y\n");
	ini_parse(text.buf, text.len, &h);
	assert_string_equal(got.buf, "1 error: a line of more than 8192 bytes\n"
			    "2 b=1\n"
			    "3 error: a NUL byte: this is not a text file\n");
	strbuf_release(&text);
	strbuf_release(&got);
}

/* A CSV text field: quoted when it must be, and a would-be formula kept text. */
static void test_csv_text(void **state)
{
	static const char *const cases[][2] = {
		{ "plain", "plain" }, { "", "" }, { "a,b", "\"a,b\"" }, { "say \"hi\"", "\"say \"\"hi\"\"\"" },
		{ "two\nlines", "\"two\nlines\"" }, { "=1+1", "\"'=1+1\"" },
		{ "+cmd|' /C calc'!A0", "\"'+cmd|' /C calc'!A0\"" }, { "-2", "\"'-2\"" },
		{ "@SUM(A1)", "\"'@SUM(A1)\"" }, { "\tx", "\"'\tx\"" }, { "a=b", "a=b" },
		{ "=\"q\"", "\"'=\"\"q\"\"\"" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT;

		csv_text(&sb, cases[i][0], strlen(cases[i][0]));
		assert_string_equal(sb.buf, cases[i][1]);
		strbuf_release(&sb);
	}
}

/* A UTF-8 byte order mark before the first line is skipped, and only there. */
static void test_ini_bom(void **state)
{
	static const char text[] = "\xef\xbb\xbf[agent]\ndatabase = x.db\n\xef\xbb\xbf[repo]\n";
	struct strbuf got = STRBUF_INIT;
	const struct ini_handler h = { on_section, on_key, on_error, &got };

	ini_parse(text, sizeof(text) - 1, &h);
	assert_string_equal(got.buf, "1 [agent|(null)]\n"
			    "2 database=x.db\n"
			    "3 error: expected 'key = value' or '[section]'\n");
	strbuf_release(&got);
}

static void test_cpus(void **state)
{
	static const char *const lists[][2] = {
		{ "", "" }, { "3", "3" }, { "0,1,2,3", "0-3" }, { "6,0-3", "0-3,6" },
		{ "1023", "1023" }, { "0-1,4-5,7", "0-1,4-5,7" },
	};
	struct cpus c;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		struct strbuf sb = STRBUF_INIT;

		assert_int_equal(cpus_parse(&c, lists[i][0]), 0);
		cpus_format(&sb, &c);
		assert_string_equal(sb.buf, lists[i][1]);
		strbuf_release(&sb);
	}
	/* Zeroed on entry: a failed parse is the empty set. */
	memset(&c, 0xA5, sizeof(c));
	assert_int_equal(cpus_parse(&c, "2,2"), -22);
	assert_int_equal(c.count, 0);
	assert_false(cpus_has(&c, 2));
	assert_int_equal(cpus_parse(&c, "1024"), -22);
	assert_int_equal(cpus_parse(&c, "3-1"), -22);
}

static void test_child_env(void **state)
{
	struct child_env e;
	size_t i, path = 0, mine = 0;

	setenv("PERFD_TEST_ENV", "outer", 1);
	child_env_init(&e);
	child_env_set(&e, "PERFD_TEST_ENV=inner");
	child_env_setf(&e, "PERFD_TEST_NEW=%d", 7);
	child_env_set(&e, "PERFD_TEST_NEW=8");
	for (i = 0; i < e.n; i++) {
		path += !strncmp(e.v[i], "PERFD_TEST_ENV=", 15);
		mine += !strncmp(e.v[i], "PERFD_TEST_NEW=", 15);
		if (!strncmp(e.v[i], "PERFD_TEST_ENV=", 15))
			assert_string_equal(e.v[i], "PERFD_TEST_ENV=inner");
		if (!strncmp(e.v[i], "PERFD_TEST_NEW=", 15))
			assert_string_equal(e.v[i], "PERFD_TEST_NEW=8");
	}
	/* A key set again replaces it: one entry each, never a duplicate. */
	assert_int_equal(path, 1);
	assert_int_equal(mine, 1);
	assert_null(e.v[e.n]);
	child_env_release(&e);
	assert_null(e.v);
}

static void test_cancel_wait(void **state)
{
	int fds[2];
	int64_t t0;

	/* No descriptor: a plain wait of ms, never a stop. */
	t0 = time_monotonic_ns();
	assert_false(child_cancel_wait(-1, 30));
	assert_true(time_monotonic_ns() - t0 >= 29 * 1000000LL);
	assert_int_equal(pipe(fds), 0);
	/* Nothing to read: the whole wait, then false. */
	t0 = time_monotonic_ns();
	assert_false(child_cancel_wait(fds[0], 30));
	assert_true(time_monotonic_ns() - t0 >= 29 * 1000000LL);
	/* A stop waiting: true at once, even with no time to wait. */
	assert_int_equal(write(fds[1], "x", 1), 1);
	assert_true(child_cancel_wait(fds[0], 0));
	assert_true(child_cancel_wait(fds[0], 1000));
	close(fds[0]);
	close(fds[1]);
}

/* RFC 4648's vectors both ways, every byte value, and what a strict
 * decoder refuses. */
static void test_base64(void **state)
{
	static const char *const vec[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	static const char *const bad[] = { "Zg=", "Zh==", "Zm9=", "Zg==Zg==", "Z===", "Zm 9",
					   "Zm\n9v", "====", "Zm9v\n" };
	struct strbuf sb = STRBUF_INIT, back = STRBUF_INIT;
	unsigned char all[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vec); i++) {
		strbuf_reset(&sb);
		base64_encode(&sb, vec[i][0], strlen(vec[i][0]));
		assert_string_equal(sb.buf, vec[i][1]);
		assert_int_equal(base64_decode(&back, sb.buf, sb.len, 64), 0);
		assert_int_equal(back.len, strlen(vec[i][0]));
		assert_memory_equal(back.buf, vec[i][0], back.len);
	}
	for (i = 0; i < 256; i++)
		all[i] = (unsigned char)(255 - i);
	strbuf_reset(&sb);
	base64_encode(&sb, all, sizeof(all));
	assert_int_equal(base64_decode(&back, sb.buf, sb.len, 256), 0);
	assert_int_equal(back.len, 256);
	assert_memory_equal(back.buf, all, 256);
	assert_int_equal(base64_decode(&back, sb.buf, sb.len, 255), -EFBIG);
	assert_int_equal(back.len, 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(base64_decode(&back, bad[i], strlen(bad[i]), 64), -EINVAL);
	strbuf_release(&sb);
	strbuf_release(&back);
}

/* The hub's answer's id, read by the agent's push. */
static void test_json_member_int(void **state)
{
	static const char ok[] = "{\"comparison\": 42, \"host\": \"m1\"}";
	int64_t v = 7;

	assert_true(json_member_int(&v, ok, strlen(ok), "comparison"));
	assert_int_equal(v, 42);
	assert_false(json_member_int(&v, ok, strlen(ok), "host"));
	assert_int_equal(v, 0);
	assert_false(json_member_int(&v, ok, strlen(ok), "missing"));
	assert_false(json_member_int(&v, "[1]", 3, "comparison"));
	assert_false(json_member_int(&v, "{\"comparison\":", 14, "comparison"));
	assert_int_equal(v, 0);
}

/* This test runs from the build tree: the source tree's files, not the
 * installed ones (tests/t0800-install.sh checks an installed perfd). */
static void test_datadir(void **state)
{
	assert_true(datadir_is_build_tree());
	assert_string_equal(datadir_path(DATADIR_HOSTS), PERFD_SOURCE_ROOT "/hosts");
	assert_string_equal(datadir_path(DATADIR_STATIC), PERFD_SOURCE_ROOT "/web/static");
	assert_string_equal(datadir_path(DATADIR_DOCS), PERFD_SOURCE_ROOT "/docs");
	assert_string_equal(datadir_path(DATADIR_DEMO), PERFD_SOURCE_ROOT "/kernels/demo/history");
}

/* A process as a row's owner: this one runs; a child that has exited, a
 * pid reused at another start time and another boot are gone; another pid
 * namespace, no start time and text of another shape are not judged. */
static void test_owner(void **state)
{
	char self[OWNER_LEN], other[OWNER_LEN + 64], boot[40];
	unsigned long long start, ns;
	long pid, child;
	int status;

	owner_self(self);
	assert_int_equal(sscanf(self, "%ld %llu %llu %39s", &pid, &start, &ns, boot), 4);
	assert_int_equal(owner_pid(self), pid);
	assert_true(start > 0);
	assert_false(owner_is_gone(self));
	snprintf(other, sizeof(other), "%ld %llu %llu %s", pid, start + 1, ns, boot);
	assert_true(owner_is_gone(other));
	snprintf(other, sizeof(other), "%ld %llu %llu %s", pid, start, ns,
		 "00000000-0000-0000-0000-000000000000");
	assert_true(owner_is_gone(other));
	snprintf(other, sizeof(other), "%ld %llu %llu %s", pid, start + 1, ns + 1, boot);
	assert_false(owner_is_gone(other));
	snprintf(other, sizeof(other), "%ld 0 %llu %s", pid + 1, ns, boot);
	assert_false(owner_is_gone(other));
	assert_false(owner_is_gone("not an owner"));
	assert_false(owner_is_gone(NULL));
	assert_int_equal(owner_pid(NULL), 0);

	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid((pid_t)child, &status, 0), child);
	/* The child is reaped: no process has its pid now. */
	snprintf(other, sizeof(other), "%ld %llu %llu %s", child, start, ns, boot);
	assert_true(owner_is_gone(other));
}

/* The process table: a child and its child are the child's descendants,
 * named with their state; a pid at another start time, or reaped, is not
 * there; the reading stops at its bound. */
static void test_proc(void **state)
{
	struct proc_stat *v = NULL, other, first;
	int fds[2], status;
	pid_t a, b = 0;
	char *text, want[64];
	size_t n;

	assert_int_equal(pipe(fds), 0);
	a = fork();
	assert_true(a >= 0);
	if (a == 0) {
		b = fork();
		if (b == 0) {
			pause();
			_exit(0);
		}
		if (write(fds[1], &b, sizeof(b)) != sizeof(b))
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(fds[0], &b, sizeof(b)), sizeof(b));
	n = proc_descendants(&v, a, 16);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].pid, a);
	assert_int_equal(v[1].pid, b);
	assert_int_equal(v[1].ppid, a);
	assert_true(proc_is_there(&v[0]) && proc_is_there(&v[1]));
	first = v[0];
	other = v[1];
	other.start++;
	assert_false(proc_is_there(&other));
	assert_int_equal(proc_state(&other), 0);
	text = proc_describe(a);
	snprintf(want, sizeof(want), "pid %ld ('test-common') in state ", (long)a);
	assert_non_null(strstr(text, want));
	free(text);
	free(v);
	assert_int_equal(proc_descendants(&v, a, 1), 1);
	free(v);
	assert_int_equal(proc_descendants(&v, 0, 16), 0);
	assert_null(v);

	kill(b, SIGKILL);
	kill(a, SIGKILL);
	assert_int_equal(waitpid(a, &status, 0), a);
	assert_false(proc_is_there(&first));
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ini),
		cmocka_unit_test(test_csv_text),
		cmocka_unit_test(test_ini_bom),
		cmocka_unit_test(test_ini_bounds),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_child_env),
		cmocka_unit_test(test_cancel_wait),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_json_member_int),
		cmocka_unit_test(test_datadir),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_proc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
