/* Unit tests of common/config.c: each setter's refusal, said once in the
 * one wording at its line, and the value left as it was. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common.h"

static void test_refusals(void **state)
{
	struct strbuf errors = STRBUF_INIT;
	struct config_report r = { .name = "x.conf", .line = 7, .errors = &errors };
	static const char *const modes[] = { "auto", "on", "off", NULL };
	bool b = true;
	int n = 5, mode = -1;
	double d = 2;

	assert_int_equal(config_set_bool(&b, &r, "pulls", "maybe"), -EINVAL);
	assert_int_equal(config_set_int(&n, &r, "runs", "abc", 0, 3600), -EINVAL);
	assert_int_equal(config_set_int(&n, &r, "runs", "3601", 0, 3600), -EINVAL);
	assert_int_equal(config_set_seconds(&d, &r, "poll_s", "0", 60), -EINVAL);
	assert_int_equal(config_set_fraction(&d, &r, "noise", "1"), -EINVAL);
	assert_int_equal(config_set_choice(&mode, &r, "mode", "maybe", modes), -EINVAL);
	r.line = 0;
	assert_int_equal(config_set_number(&d, &r, "span_hours", "nan", 0, 24, "hours"), -EINVAL);
	assert_true(b);
	assert_int_equal(n, 5);
	assert_true(d == 2);
	assert_int_equal(mode, -1);
	assert_string_equal(errors.buf,
		"x.conf:7: 'pulls': expected true or false, not 'maybe'\n"
		"x.conf:7: 'runs': expected a whole number from 0 to 3600, not 'abc'\n"
		"x.conf:7: 'runs': expected a whole number from 0 to 3600, not '3601'\n"
		"x.conf:7: 'poll_s': expected a number of seconds above 0 and at most 60, not '0'\n"
		"x.conf:7: 'noise': expected a fraction in [0, 1) (0.05 is 5%), not '1'\n"
		"x.conf:7: 'mode': expected auto, on or off, not 'maybe'\n"
		"x.conf: 'span_hours': expected a number of hours from 0 to 24, not 'nan'\n");
	assert_int_equal(r.count, 7);
	assert_int_equal(config_report_end(&r), -EINVAL);
	assert_string_equal(err_last(), "7 errors in 'x.conf'");
	strbuf_release(&errors);
}

static void test_values(void **state)
{
	struct strbuf errors = STRBUF_INIT;
	struct config_report r = { .name = "x.conf", .line = 1, .errors = &errors };
	static const char *const modes[] = { "merge-base", "head", NULL };
	char *text = NULL;
	bool b = false;
	int n = 0, mode = 0;
	double d = 0;

	assert_int_equal(config_set_bool(&b, &r, "k", "yes"), 0);
	assert_true(b);
	assert_int_equal(config_set_bool(&b, &r, "k", "0"), 0);
	assert_false(b);
	assert_int_equal(config_set_int(&n, &r, "k", "-3", -5, 5), 0);
	assert_int_equal(n, -3);
	assert_int_equal(config_set_seconds(&d, &r, "k", "0.5", 1), 0);
	assert_true(d == 0.5);
	assert_int_equal(config_set_choice(&mode, &r, "k", "head", modes), 0);
	assert_int_equal(mode, 1);
	assert_int_equal(config_set_name(&text, &r, "name", "gfx1201.a-b_c", 63), 0);
	assert_string_equal(text, "gfx1201.a-b_c");
	assert_int_equal(r.count, 0);
	assert_int_equal(config_report_end(&r), 0);
	/* Set twice, empty, not a name, not absolute: each said, *out kept. */
	assert_int_equal(config_set_text(&text, &r, "name", "again"), -EINVAL);
	assert_string_equal(text, "gfx1201.a-b_c");
	free(text);
	text = NULL;
	assert_int_equal(config_set_text(&text, &r, "name", ""), -EINVAL);
	assert_int_equal(config_set_name(&text, &r, "name", "a/b", 63), -EINVAL);
	assert_int_equal(config_set_path(&text, &r, "bwrap", "bin/bwrap"), -EINVAL);
	assert_null(text);
	assert_string_equal(errors.buf,
		"x.conf:1: 'name': set twice in this section\n"
		"x.conf:1: 'name': expected a value\n"
		"x.conf:1: 'name': expected a name of 1 to 63 letters, digits, '.', '_' or '-', "
		"not 'a/b'\n"
		"x.conf:1: 'bwrap': expected an absolute path, not 'bin/bwrap'\n");
	strbuf_release(&errors);
}

static void test_words(void **state)
{
	static const struct config_words devices = { .max = 3, .once = true,
		.is_valid = config_path_is_device, .what = "a path under /dev/" };
	struct strbuf errors = STRBUF_INIT;
	struct config_report r = { .name = "x.conf", .line = 3, .errors = &errors };
	char **list = NULL;
	size_t n = 0;

	assert_int_equal(config_add_words(&list, &n, &r, "nodes", "/dev/a\t/dev/b", &devices), 0);
	assert_int_equal(n, 2);
	assert_int_equal(config_add_words(&list, &n, &r, "nodes",
					  "/etc/x /dev/a /dev/../etc /dev/c /dev/d", &devices),
			 -EINVAL);
	assert_int_equal(config_add_words(&list, &n, &r, "nodes", " \t", &devices), -EINVAL);
	assert_int_equal(n, 3);
	assert_string_equal(list[2], "/dev/c");
	assert_string_equal(errors.buf,
		"x.conf:3: 'nodes': expected a path under /dev/, not '/etc/x'\n"
		"x.conf:3: 'nodes': expected each once, not '/dev/a' twice\n"
		"x.conf:3: 'nodes': expected a path under /dev/, not '/dev/../etc'\n"
		"x.conf:3: 'nodes': expected at most 3 entries\n"
		"x.conf:3: 'nodes': expected a value\n");
	config_words_free(list, n);
	/* A device path names a node under /dev/, never /dev itself or above. */
	assert_true(config_path_is_device("/dev/dri/renderD128"));
	assert_false(config_path_is_device("/dev/.."));
	assert_false(config_path_is_device("/dev/."));
	assert_false(config_path_is_device("/dev/"));
	assert_false(config_path_is_device("/dev//"));
	assert_false(config_path_is_device("/dev/dri/../.."));
	assert_false(config_path_is_device("/dev/./dri"));
	assert_true(config_path_is_gpu_node("/dev/dri/renderD128"));
	assert_true(config_path_is_gpu_node("/dev/dri/*"));
	assert_true(config_path_is_gpu_node("/dev/kfd"));
	assert_true(config_path_is_gpu_node("/dev/nvidia*"));
	assert_true(config_path_is_gpu_node("/dev/nvidia-uvm"));
	assert_true(config_path_is_gpu_node("/dev/accel/accel0"));
	assert_false(config_path_is_gpu_node("/dev/dri/"));
	assert_false(config_path_is_gpu_node("/dev/*"));
	assert_false(config_path_is_gpu_node("/dev/shm"));
	assert_false(config_path_is_gpu_node("/dev/mqueue"));
	assert_false(config_path_is_gpu_node("/dev/kmsg"));
	assert_false(config_path_is_gpu_node("/dev/dri/../kmsg"));
	assert_false(config_path_is_gpu_node("/etc/passwd"));
	assert_true(config_path_is_absolute("/srv/data..x"));
	assert_false(config_path_is_absolute("/srv/.."));
	strbuf_release(&errors);
}

/* A table: each row's kind and bounds applied to its field, a flag set
 * with a key, a shared row read in its own table, and an unknown key
 * refused with the table's keys in its order. */
struct inner {
	int n;
};
struct section {
	char *name;
	bool on;
	unsigned ms;
	bool has_ms;
	double share;
	char **words;
	size_t nwords;
	struct inner in;
};

static const struct config_words any_words = { .max = 2 };
static const struct config_key inner_keys[] = {
	{ "n", CONFIG_INT, .offset = offsetof(struct inner, n), .lo = 1, .hi = 9 },
	{ .key = NULL },
};
static const struct config_key section_keys[] = {
	{ "name", CONFIG_NAME, .offset = offsetof(struct section, name), .hi = 4 },
	{ "on", CONFIG_BOOL, .offset = offsetof(struct section, on) },
	{ "n", CONFIG_SUB, .offset = offsetof(struct section, in), .sub = inner_keys },
	{ "ms", CONFIG_UNSIGNED, .offset = offsetof(struct section, ms), .lo = 0, .hi = 100,
	  .seen = CONFIG_SEEN(struct section, has_ms) },
	{ "share", CONFIG_FRACTION, .offset = offsetof(struct section, share) },
	{ "words", CONFIG_WORDS, .offset = offsetof(struct section, words),
	  .count = offsetof(struct section, nwords), .words = &any_words },
	{ .key = NULL },
};

static void test_table(void **state)
{
	struct strbuf errors = STRBUF_INIT;
	struct config_report r = { .name = "x.conf", .line = 3, .errors = &errors };
	struct section s = { .share = 0.5 };

	(void)state;
	assert_int_equal(config_table_set(section_keys, &s, &r, "x", "name", "abc"), 0);
	assert_string_equal(s.name, "abc");
	assert_int_equal(config_table_set(section_keys, &s, &r, "x", "on", "yes"), 0);
	assert_true(s.on);
	assert_int_equal(config_table_set(section_keys, &s, &r, "x", "n", "7"), 0);
	assert_int_equal(s.in.n, 7);
	assert_int_equal(config_table_set(section_keys, &s, &r, "x", "ms", "100"), 0);
	assert_int_equal(s.ms, 100);
	assert_true(s.has_ms);
	assert_int_equal(config_table_set(section_keys, &s, &r, "x", "words", "a b"), 0);
	assert_int_equal(s.nwords, 2);
	assert_string_equal(errors.buf ? errors.buf : "", "");

	assert_int_equal(config_table_set(section_keys, &s, &r, "x", "n", "10"), -EINVAL);
	assert_int_equal(config_table_set(section_keys, &s, &r, "x", "share", "1"), -EINVAL);
	assert_int_equal(config_table_set(section_keys, &s, &r, "x sec", "colour", "red"),
			 -ENOENT);
	assert_string_equal(errors.buf,
			    "x.conf:3: 'n': expected a whole number from 1 to 9, not '10'\n"
			    "x.conf:3: 'share': expected a fraction in [0, 1) (0.05 is 5%), not '1'\n"
			    "x.conf:3: unknown key 'colour' in [x sec] (name, on, n, ms, share, "
			    "words)\n");
	assert_int_equal(s.in.n, 7);
	assert_true(s.share == 0.5);
	assert_int_equal(r.count, 3);
	free(s.name);
	config_words_free(s.words, s.nwords);
	strbuf_release(&errors);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
