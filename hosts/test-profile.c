/* Unit tests for host profiles: the shipped files, every kind of mistake
 * with its line, fault patterns and CPU lists. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hosts.h"

static struct host_profile *load_shipped(const char *name)
{
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p = NULL;
	char *path;

	assert_int_equal(host_profile_resolve(&path, name), 0);
	if (host_profile_load(&p, path, &errors) != 0)
		fail_msg("%s", errors.buf);
	assert_non_null(p);
	assert_string_equal(p->name, name);
	assert_string_equal(errors.buf, "");
	strbuf_release(&errors);
	free(path);
	return p;
}

/* Writes text to a fresh temporary file; the caller unlinks and frees. */
static char *write_temp(const char *text)
{
	char *path = xstrdup("/tmp/perfd-test-profile-XXXXXX");
	int fd = mkstemp(path);
	size_t len = strlen(text);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_shipped_profiles(void **state)
{
	static const char *const names[] = {
		"m1", "m1-max", "arc-b60", "gfx1201", "lavapipe", "h200", "h100",
	};
	struct host_profile *p;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		p = load_shipped(names[i]);
		assert_true(p->process_timeout_s > 0);
		assert_true(p->device_match[0] != '\0');
		assert_true(p->expected_driver[0] != '\0');
		host_profile_free(p);
	}
}

static void test_shipped_values(void **state)
{
	struct host_profile *p;

	p = load_shipped("m1-max");
	assert_true(p->process_timeout_s == 20);
	assert_string_equal(p->device_match, "Apple M1 Max (G13C");
	assert_int_equal(p->cpus.count, 8);
	host_profile_free(p);

	p = load_shipped("m1");
	assert_string_equal(p->device_match, "Apple M1 (G13G");
	assert_string_equal(p->expected_driver, "Honeykrisp");
	assert_int_equal(p->cpus.count, 4);
	assert_true(cpus_has(&p->cpus, 4) && cpus_has(&p->cpus, 7));
	assert_false(cpus_has(&p->cpus, 3));
	host_profile_free(p);

	p = load_shipped("arc-b60");
	assert_true(p->noise > HOST_DEFAULT_NOISE);
	assert_string_equal(p->device_match, "Arc(tm) Pro B60");
	host_profile_free(p);

	p = load_shipped("gfx1201");
	assert_int_equal(p->nfaults, 4);
	assert_string_equal(p->faults[0].text, "ring .* timeout");
	assert_int_equal(p->cpus.count, 0);
	host_profile_free(p);

	p = load_shipped("lavapipe");
	assert_string_equal(p->device_match, "llvmpipe");
	assert_int_equal(p->nfaults, 0);
	assert_true(p->noise == HOST_DEFAULT_NOISE);
	assert_true(p->min_effect == HOST_DEFAULT_MIN_EFFECT);
	assert_string_equal(p->fault_log, "/dev/kmsg");
	host_profile_free(p);
}

static void test_fault_match(void **state)
{
	struct host_profile *amd = load_shipped("gfx1201");
	struct host_profile *nv = load_shipped("h200");
	struct host_profile *xe = load_shipped("arc-b60");
	size_t i = 99;

	assert_true(host_profile_fault_match(amd,
		"[   12.3] amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1",
		&i));
	assert_int_equal(i, 0);
	assert_true(host_profile_fault_match(amd,
		"amdgpu 0000:03:00.0: amdgpu: MODE1 reset", &i));
	assert_true(host_profile_fault_match(amd,
		"amdgpu: [gfxhub] PAGE FAULT (src_id:0 ring:24 vmid:1)", &i));
	assert_int_equal(i, 3);
	assert_false(host_profile_fault_match(amd,
		"[    2.1] amdgpu 0000:03:00.0: amdgpu: SMU is initialized successfully!", NULL));

	assert_true(host_profile_fault_match(nv, "NVRM: Xid (PCI:0000:00:00): 79", &i));
	assert_true(host_profile_fault_match(nv, "nvrm: xid (PCI:0000:1b:00): 13", NULL));
	assert_false(host_profile_fault_match(nv, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module", NULL));
	assert_false(host_profile_fault_match(nv,
		"[ 12.3] amdgpu 0000:03:00.0: amdgpu: ring gfx_0.0.0 timeout", NULL));

	assert_true(host_profile_fault_match(xe, "xe 0000:03:00.0: [drm] GPU HANG: ecode 12", NULL));
	assert_false(host_profile_fault_match(xe, "xe 0000:03:00.0: [drm] GuC firmware loaded", NULL));

	host_profile_free(amd);
	host_profile_free(nv);
	host_profile_free(xe);
}

/* Every kind of mistake in one file: all are reported, each with its line. */
static void test_all_errors_listed(void **state)
{
	static const char text[] =
		"name = early\n"                          /* 1 */
		"[host]\n"                                /* 2 */
		"name = x\n"                              /* 3 */
		"colour = blue\n"                         /* 4 */
		"[device]\n"                              /* 5 */
		"device_match = llvmpipe\n"               /* 6 */
		"noise = 0.05\n"                          /* 7 */
		"[timing]\n"                              /* 8 */
		"process_timeout_s = -5\n"                /* 9 */
		"noise = 0.o5\n"                          /* 10 */
		"min_effect = 3\n"                        /* 11 */
		"cpus = 4-2\n"                            /* 12 */
		"cooldown_ms = soon\n"                    /* 13 */
		"this line has no equals sign\n"          /* 14 */
		"[faults]\n"                              /* 15 */
		"fault_pattern = ring (gfx\n"             /* 16 */
		"fault_pattern = GPU reset\n"             /* 17 */
		"[extras]\n"                              /* 18 */
		"[host]\n"                                /* 19 */
		"name = y\n";                             /* 20 */
	static const char *const expected[] = {
		":1: key 'name' outside a section",
		":4: unknown key 'colour' in [host]",
		":7: key 'noise' belongs in [timing], not [device]",
		":9: 'process_timeout_s': expected a number of seconds above 0 and at most 604800, "
		"not '-5'",
		":10: 'noise': expected a fraction in [0, 1) (0.05 is 5%), not '0.o5'",
		":11: 'min_effect': expected a fraction in [0, 1) (0.05 is 5%), not '3'",
		":12: 'cpus': range 4-2 runs backwards",
		":13: 'cooldown_ms': expected a whole number from 0 to 600000, not 'soon'",
		":14: expected 'key = value' or '[section]'",
		":16: 'fault_pattern': expected a regular expression, not 'ring (gfx'",
		":18: unknown section [extras]",
		":20: duplicate key 'name' (first set on line 3)",
		":5: missing required key 'expected_driver' in [device]",
	};
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p;
	char *path = write_temp(text);
	char *want;
	size_t lines = 0;

	/* Garbage in *out: a failed load leaves NULL, which frees safely. */
	memset(&p, 0xA5, sizeof(p));
	assert_int_equal(host_profile_load(&p, path, &errors), -EINVAL);
	assert_null(p);
	host_profile_free(p);
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++) {
		want = xasprintf("%s%s", path, expected[i]);
		if (!strstr(errors.buf, want))
			fail_msg("missing \"%s\" in:\n%s", want, errors.buf);
		free(want);
	}
	for (const char *s = errors.buf; *s; s++)
		lines += *s == '\n';
	assert_int_equal(lines, ARRAY_SIZE(expected));
	unlink(path);
	free(path);
	strbuf_release(&errors);
}

/* [device] named but empty: both its keys are missing. */
static void test_missing_section(void **state)
{
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p = NULL;
	char *path = write_temp("[host]\nname = x\n[device]\n");
	char *want;

	assert_int_equal(host_profile_load(&p, path, &errors), -EINVAL);
	want = xasprintf("%s:3: missing required key 'device_match' in [device]", path);
	assert_non_null(strstr(errors.buf, want));
	assert_non_null(strstr(errors.buf, "'expected_driver'"));
	free(want);
	unlink(path);
	free(path);
	strbuf_release(&errors);
}

/* No [device] at all: a CPU host, which names no GPU. */
static void test_cpu_host(void **state)
{
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p = NULL;
	char *path = write_temp("[host]\nname = cpu\n[timing]\ncpus = 1-2\n");

	assert_int_equal(host_profile_load(&p, path, &errors), 0);
	assert_false(host_profile_has_device(p));
	assert_null(p->device_match);
	assert_int_equal(p->cpus.count, 2);
	host_profile_free(p);
	unlink(path);
	free(path);
	strbuf_release(&errors);
}

static void test_minimal_defaults(void **state)
{
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p = NULL;
	char *path = write_temp(
		"; comment\n"
		"# comment\n"
		"  [host]\n"
		"  name = tiny   \n"
		"[device]\n"
		"device_match = llvmpipe\n"
		"expected_driver = llvmpipe\n");

	assert_int_equal(host_profile_load(&p, path, &errors), 0);
	assert_string_equal(p->name, "tiny");
	assert_true(p->process_timeout_s == HOST_DEFAULT_TIMEOUT_S);
	assert_int_equal(p->cooldown_ms, 0);
	assert_int_equal(p->cpus.count, 0);
	assert_false(host_profile_fault_match(p, "anything", NULL));
	host_profile_free(p);
	unlink(path);
	free(path);
	strbuf_release(&errors);
}

/* No comment after a value: a ';' or '#' there is part of it (as in a build
 * command), so this name is no name. */
static void test_no_inline_comment(void **state)
{
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p = NULL;
	char *path = write_temp("[host]\nname = tiny ; a comment\n[device]\n"
				"device_match = llvmpipe # a GPU\nexpected_driver = llvmpipe\n");
	char *want;

	assert_int_equal(host_profile_load(&p, path, &errors), -EINVAL);
	want = xasprintf("%s:2: 'name': expected a name of 1 to 63 letters, digits, '.', '_' or "
			 "'-', not 'tiny ; a comment'", path);
	assert_non_null(strstr(errors.buf, want));
	free(want);
	unlink(path);
	free(path);
	strbuf_release(&errors);
}

static void test_long_line(void **state)
{
	struct strbuf text = STRBUF_INIT;
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p = NULL;
	char *path, *want;

	/* 300 bytes are read (a fault pattern or a description may be long)... */
	strbuf_adds(&text, "[host]\nname = x\ndescription = ");
	for (int i = 0; i < 300; i++)
		strbuf_addch(&text, 'a');
	strbuf_adds(&text, "\n[device]\ndevice_match = a\nexpected_driver = b\n");
	path = write_temp(text.buf);
	assert_int_equal(host_profile_load(&p, path, &errors), 0);
	assert_int_equal(strlen(p->description), 300);
	host_profile_free(p);
	p = NULL;
	unlink(path);
	free(path);
	/* ...and a line over INI_LINE_MAX is refused, naming its line. */
	strbuf_reset(&text);
	strbuf_adds(&text, "[host]\nname = x\ndescription = ");
	for (int i = 0; i < INI_LINE_MAX; i++)
		strbuf_addch(&text, 'a');
	strbuf_adds(&text, "\n[device]\ndevice_match = a\nexpected_driver = b\n");
	path = write_temp(text.buf);
	assert_int_equal(host_profile_load(&p, path, &errors), -EINVAL);
	want = xasprintf("%s:3: a line of more than 8192 bytes", path);
	assert_non_null(strstr(errors.buf, want));
	free(want);
	unlink(path);
	free(path);
	strbuf_release(&text);
	strbuf_release(&errors);
}

/* A profile is small: a file over 64 KiB is refused whole, not read. */
static void test_too_big(void **state)
{
	struct strbuf text = STRBUF_INIT, errors = STRBUF_INIT;
	struct host_profile *p = NULL;
	char *path;

	strbuf_adds(&text, "[host]\nname = x\n");
	while (text.len <= 64 * 1024)
		strbuf_adds(&text, "# a comment line to make the file large\n");
	path = write_temp(text.buf);
	assert_int_equal(host_profile_load(&p, path, &errors), -EFBIG);
	assert_null(p);
	assert_non_null(strstr(errors.buf, "is over 65536 bytes"));
	unlink(path);
	free(path);
	strbuf_release(&text);
	strbuf_release(&errors);
}

static void test_unreadable(void **state)
{
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p;

	memset(&p, 0xA5, sizeof(p));
	assert_int_equal(host_profile_load(&p, "/nonexistent/x.conf", &errors), -ENOENT);
	assert_null(p);
	host_profile_free(p);
	assert_non_null(strstr(errors.buf, "'/nonexistent/x.conf': No such file or directory"));
	strbuf_release(&errors);
}

static void test_cpus(void **state)
{
	struct cpus c;

	assert_int_equal(cpus_parse(&c, ""), 0);
	assert_int_equal(c.count, 0);
	assert_int_equal(cpus_parse(&c, "0,2"), 0);
	assert_int_equal(c.count, 2);
	assert_true(cpus_has(&c, 0) && cpus_has(&c, 2));
	assert_false(cpus_has(&c, 1));
	assert_int_equal(cpus_parse(&c, "0-1,6-7,64"), 0);
	assert_int_equal(c.count, 5);
	assert_true(cpus_has(&c, 64));

	/* A failed parse leaves the empty set, not what was there. */
	memset(&c, 0xA5, sizeof(c));
	assert_int_equal(cpus_parse(&c, "4-"), -EINVAL);
	assert_int_equal(c.count, 0);
	assert_false(cpus_has(&c, 4));
	assert_int_equal(cpus_parse(&c, "1,1"), -EINVAL);
	assert_int_equal(cpus_parse(&c, "1,"), -EINVAL);
	assert_int_equal(cpus_parse(&c, "a"), -EINVAL);
	assert_int_equal(cpus_parse(&c, "0 1"), -EINVAL);
	assert_int_equal(cpus_parse(&c, "4096"), -EINVAL);
	assert_int_equal(cpus_parse(&c, "-3"), -EINVAL);
}

static void test_resolve(void **state)
{
	char *path = NULL;

	assert_int_equal(host_profile_resolve(&path, "h200"), 0);
	/* Run from the build tree: the source tree's profile. */
	assert_string_equal(path, PERFD_SOURCE_ROOT "/hosts/h200.conf");
	free(path);
	assert_int_equal(host_profile_resolve(&path, "./mine.conf"), 0);
	assert_string_equal(path, "./mine.conf");
	free(path);
	assert_int_equal(host_profile_resolve(&path, "other.conf"), 0);
	free(path);
	memset(&path, 0xA5, sizeof(path));
	assert_int_equal(host_profile_resolve(&path, "no-such-host"), -ENOENT);
	assert_null(path);
	memset(&path, 0xA5, sizeof(path));
	assert_int_equal(host_profile_resolve(&path, "Bad Name"), -EINVAL);
	assert_null(path);
	free(path);
}

/* A fault pattern that regcomp would blow up (glibc copies an atom for
 * every repetition, and stacked or nested repetitions make its closures
 * explode: gigabytes, or minutes, found by fuzz-host-profile) is refused,
 * named with its line and why, before regcomp sees it; patterns as real
 * profiles write them still compile. */
static void test_pattern_size(void **state)
{
	struct strbuf errors = STRBUF_INIT, text = STRBUF_INIT;
	struct host_profile *p = NULL;
	int i;

	strbuf_adds(&text, "[host]\nname = bomb\n[faults]\nfault_pattern = ring .* t");
	for (i = 0; i < 60; i++)
		strbuf_addch(&text, '+');
	strbuf_adds(&text, "imeout\n"                                          /* 4 */
		    "fault_pattern = ((a{255}){255}){255}\n"                     /* 5 */
		    "fault_pattern = (((((((((((((((((x)))))))))))))))))\n"      /* 6 */
		    "fault_pattern = x{1,257}\n"                                 /* 7 */
		    "fault_pattern = n???????????????????????+++++\n"            /* 8 */
		    "fault_pattern = (((((((a?)+)?)+)?)+)?)+\n"                  /* 9 */
		    "fault_pattern = GPU (reset){100}\n");                       /* 10 */
	assert_int_equal(host_profile_parse(&p, "bomb.conf", text.buf, text.len, &errors),
			 -EINVAL);
	assert_null(p);
	assert_non_null(strstr(errors.buf, "bomb.conf:4: 'fault_pattern': 'ring .* t++++"));
	assert_non_null(strstr(errors.buf, "+imeout' repeats a repetition ('+' after '*', "
			       "'{m,n}' after '?', ...)\n"));
	assert_non_null(strstr(errors.buf, "bomb.conf:5: 'fault_pattern': '((a{255}){255}){255}' "
			       "would compile to more than 256 nodes"));
	assert_non_null(strstr(errors.buf, "bomb.conf:6: 'fault_pattern': '(((((((((((((((((x)))))"
			       "))))))))))))' nests groups more than 16 deep\n"));
	assert_non_null(strstr(errors.buf, "bomb.conf:7: 'fault_pattern': 'x{1,257}' would compile "
			       "to more than 256 nodes: it repeats too much\n"));
	assert_non_null(strstr(errors.buf, "bomb.conf:8: 'fault_pattern': 'n???????????????????????"
			       "+++++' repeats a repetition"));
	assert_non_null(strstr(errors.buf, "bomb.conf:9: 'fault_pattern': "
			       "'(((((((a?)+)?)+)?)+)?)+' nests repetitions more than 2 deep\n"));
	assert_non_null(strstr(errors.buf, "bomb.conf:10: 'fault_pattern': 'GPU (reset){100}' "
			       "would compile to more than 256 nodes"));

	strbuf_reset(&errors);
	strbuf_reset(&text);
	strbuf_adds(&text, "[host]\nname = fine\n[faults]\n"
		    "fault_pattern = ring [^ ]+ timeout|GPU (hang|reset)+\n"
		    "fault_pattern = [[:alpha:]]{2,8} fault[]x]?\\+{1,3}\n"
		    "fault_pattern = NVRM: Xid (\\([0-9a-f:.]+\\))?: [0-9]{1,3}\n"
		    "fault_pattern = x{1,255}\n"
		    "fault_pattern = (a|.)+(b|[[:digit:]])*(c)? (GPU|gpu){2}\n");
	assert_int_equal(host_profile_parse(&p, "fine.conf", text.buf, text.len, &errors), 0);
	assert_string_equal(errors.buf, "");
	assert_int_equal(p->nfaults, 5);
	assert_true(host_profile_fault_match(p, "amdgpu: GPU hang", NULL));
	assert_true(host_profile_fault_match(p, "NVRM: Xid (0000:17:00.0): 79", NULL));
	host_profile_free(p);
	strbuf_release(&errors);
	strbuf_release(&text);
}

/* boot_log_command and boot_log: their defaults, values as written, empty
 * for none, and a path that is not absolute refused with its line. */
static void test_boot_log_keys(void **state)
{
	static const char head[] = "[host]\nname = x\n[faults]\n";
	struct strbuf errors = STRBUF_INIT, text = STRBUF_INIT;
	struct host_profile *p = load_shipped("gfx1201");

	assert_string_equal(p->boot_log_command, "journalctl -k -b -1 -q --no-pager");
	assert_string_equal(p->boot_log, "/sys/fs/pstore");
	host_profile_free(p);

	strbuf_addf(&text, "%sboot_log_command = cat /var/log/kern.log.1\n"
		    "boot_log = /sys/fs/pstore  /var/crash/dmesg.txt\n", head);
	assert_int_equal(host_profile_parse(&p, "v.conf", text.buf, text.len, &errors), 0);
	assert_string_equal(p->boot_log_command, "cat /var/log/kern.log.1");
	assert_string_equal(p->boot_log, "/sys/fs/pstore  /var/crash/dmesg.txt");
	host_profile_free(p);

	strbuf_reset(&text);
	strbuf_addf(&text, "%sboot_log_command =\nboot_log =\n", head);
	assert_int_equal(host_profile_parse(&p, "e.conf", text.buf, text.len, &errors), 0);
	assert_string_equal(p->boot_log_command, "");
	assert_string_equal(p->boot_log, "");
	host_profile_free(p);
	assert_string_equal(errors.buf, "");

	strbuf_reset(&text);
	strbuf_addf(&text, "%sboot_log = /sys/fs/pstore sys/fs/pstore\n"       /* 4 */
		    "boot_log_command = true\nboot_log_command = false\n"      /* 5, 6 */
		    "[timing]\nboot_log = /var/crash/../log\n", head);          /* 7, 8 */
	assert_int_equal(host_profile_parse(&p, "bad.conf", text.buf, text.len, &errors),
			 -EINVAL);
	assert_null(p);
	assert_string_equal(errors.buf,
		"bad.conf:4: 'boot_log': expected an absolute path, not 'sys/fs/pstore'\n"
		"bad.conf:6: duplicate key 'boot_log_command' (first set on line 5)\n"
		"bad.conf:8: key 'boot_log' belongs in [faults], not [timing]\n");
	strbuf_reset(&errors);
	strbuf_reset(&text);
	strbuf_addf(&text, "%sboot_log = /a /b/../c /a\n", head);
	assert_int_equal(host_profile_parse(&p, "b.conf", text.buf, text.len, &errors), -EINVAL);
	assert_non_null(strstr(errors.buf,
		"b.conf:4: 'boot_log': expected an absolute path, not '/b/../c'\n"));
	assert_non_null(strstr(errors.buf,
		"b.conf:4: 'boot_log': expected each once, not '/a' twice\n"));
	strbuf_release(&errors);
	strbuf_release(&text);
}

/* [gate] paths: none by default, a list of repository patterns each once,
 * an empty value none; an absolute pattern refused at its line. */
static void test_gate_paths(void **state)
{
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p = load_shipped("gfx1201");
	static const char good[] = "[host]\nname = x\n[gate]\npaths = shaders/* *.s\n";
	static const char empty[] = "[host]\nname = x\n[gate]\npaths =\n";
	static const char bad[] = "[host]\nname = x\n[gate]\npaths = /abs *.s *.s\n";

	assert_int_equal(p->ngate, 0);
	host_profile_free(p);
	assert_int_equal(host_profile_parse(&p, "g.conf", good, strlen(good), &errors), 0);
	assert_int_equal(p->ngate, 2);
	assert_string_equal(p->gate[0], "shaders/*");
	assert_string_equal(p->gate[1], "*.s");
	host_profile_free(p);
	assert_int_equal(host_profile_parse(&p, "e.conf", empty, strlen(empty), &errors), 0);
	assert_int_equal(p->ngate, 0);
	host_profile_free(p);
	assert_int_equal(host_profile_parse(&p, "b.conf", bad, strlen(bad), &errors), -EINVAL);
	assert_null(p);
	assert_string_equal(errors.buf,
		"b.conf:4: 'paths': expected a pattern of paths in the repository (not absolute), "
		"not '/abs'\n"
		"b.conf:4: 'paths': expected each once, not '*.s' twice\n");
	strbuf_release(&errors);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_profiles),
		cmocka_unit_test(test_shipped_values),
		cmocka_unit_test(test_fault_match),
		cmocka_unit_test(test_all_errors_listed),
		cmocka_unit_test(test_missing_section),
		cmocka_unit_test(test_minimal_defaults),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_no_inline_comment),
		cmocka_unit_test(test_cpu_host),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_pattern_size),
		cmocka_unit_test(test_boot_log_keys),
		cmocka_unit_test(test_gate_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
