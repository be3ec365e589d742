/* Unit tests of web/hub/params.c: the request path checks, the static name
 * mapping and the query parameter parser. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "hub-internal.h"

static void test_path_ok(void **state)
{
	assert_int_equal(web_path_check("/", "/"), 0);
	assert_int_equal(web_path_check("/api/v1/comparisons?host=a%20b", "/api/v1/comparisons"), 0);
	assert_int_equal(web_path_check("/static/app.js", "/static/app.js"), 0);
	assert_int_equal(web_path_check("/static/a..b.js", "/static/a..b.js"), 0);
}

static void test_path_traversal(void **state)
{
	assert_int_equal(web_path_check("/static/../../etc/passwd", "/static/../../etc/passwd"),
			 -EINVAL);
	assert_int_equal(web_path_check("/..", "/.."), -EINVAL);
	assert_int_equal(web_path_check("/static/./x", "/static/./x"), -EINVAL);
	assert_int_equal(web_path_check("/static/x/..", "/static/x/.."), -EINVAL);
	/* The decoded path looks harmless or not: the encoded form is refused
	 * either way. */
	assert_int_equal(web_path_check("/%2e%2e/%2e%2e/etc/passwd", "/../../etc/passwd"), -EINVAL);
	assert_int_equal(web_path_check("/static/%2E%2E%2Fpasswd", "/static/../passwd"), -EINVAL);
	assert_int_equal(web_path_check("/static/a%2fb", "/static/a/b"), -EINVAL);
	assert_int_equal(web_path_check("/static/a%5cb", "/static/a\\b"), -EINVAL);
	assert_int_equal(web_path_check("/static/a%00b", "/static/a"), -EINVAL);
	assert_int_equal(web_path_check("/static/a\\b", "/static/a\\b"), -EINVAL);
	assert_int_equal(web_path_check("static/x", "static/x"), -EINVAL);
	assert_int_equal(web_path_check("/a b", "/a b"), -EINVAL);
	assert_int_equal(web_path_check("/\x7f", "/\x7f"), -EINVAL);
	assert_int_equal(web_path_check("/\xc3\xa9", "/\xc3\xa9"), -EINVAL);
}

static void test_path_long(void **state)
{
	char path[WEB_PATH_MAX + 2];

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(web_path_check(path, path), -EINVAL);
	path[WEB_PATH_MAX] = '\0';
	assert_int_equal(web_path_check(path, path), 0);
}

static void test_static_name(void **state)
{
	char out[64];

	assert_int_equal(web_static_name(out, sizeof(out), "/"), 0);
	assert_string_equal(out, "index.html");
	assert_int_equal(web_static_name(out, sizeof(out), "/static/css/app-1.css"), 0);
	assert_string_equal(out, "css/app-1.css");
	/* A path refused leaves out "", not what it held. */
	assert_int_equal(web_static_name(out, sizeof(out), "/static/"), -ENOENT);
	assert_string_equal(out, "");
	assert_int_equal(web_static_name(out, sizeof(out), "/static/.hidden"), -ENOENT);
	assert_int_equal(web_static_name(out, sizeof(out), "/static/a//b"), -ENOENT);
	assert_int_equal(web_static_name(out, sizeof(out), "/static/a/"), -ENOENT);
	assert_int_equal(web_static_name(out, sizeof(out), "/static/a:b"), -ENOENT);
	assert_int_equal(web_static_name(out, sizeof(out), "/index.html"), -ENOENT);
	assert_int_equal(web_static_name(out, sizeof(out), "/api/v1/jobs"), -ENOENT);
	assert_int_equal(web_static_name(out, 8, "/static/long-name.js"), -ENOENT);
	assert_int_equal(web_doc_name(out, sizeof(out), "/docs/rule.md"), 0);
	assert_string_equal(out, "rule.md");
	assert_int_equal(web_doc_name(out, sizeof(out), "/docs/.md"), -ENOENT);
	assert_string_equal(out, "");
	assert_int_equal(web_doc_name(out, sizeof(out), "/docs/.hidden.md"), -ENOENT);
	assert_int_equal(web_doc_name(out, sizeof(out), "/docs/rule.txt"), -ENOENT);
	assert_int_equal(web_doc_name(out, sizeof(out), "/docs/a/rule.md"), -ENOENT);
	assert_int_equal(web_doc_name(out, sizeof(out), "/docs/"), -ENOENT);
	assert_int_equal(web_doc_name(out, sizeof(out), "/static/rule.md"), -ENOENT);
	assert_int_equal(web_doc_name(out, 7, "/docs/rule.md"), -ENOENT);
}

static void test_params_add(void **state)
{
	struct web_params p = { .n = 0 };
	char big[WEB_PARAM_VALUE_MAX + 2];
	char name[16];
	int i;

	assert_int_equal(web_params_add(&p, "host", "m1"), 0);
	assert_int_equal(web_params_add(&p, "flag", NULL), 0);
	assert_string_equal(web_param_get(&p, "host"), "m1");
	assert_string_equal(web_param_get(&p, "flag"), "");
	assert_null(web_param_get(&p, "case"));
	assert_int_equal(web_params_add(&p, "host", "again"), -EINVAL);
	assert_non_null(strstr(err_last(), "'host' is given twice"));
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(web_params_add(&p, "case", big), -EINVAL);
	assert_non_null(strstr(err_last(), "'case'"));
	big[WEB_PARAM_VALUE_MAX] = '\0';
	assert_int_equal(web_params_add(&p, "case", big), 0);
	assert_int_equal(web_params_add(&p, "", "x"), -EINVAL);
	for (i = (int)p.n; i < WEB_PARAMS_MAX; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		assert_int_equal(web_params_add(&p, name, "v"), 0);
	}
	assert_int_equal(web_params_add(&p, "one-more", "v"), -EINVAL);
	web_params_release(&p);
	assert_int_equal(p.n, 0);
}

static void test_params_check(void **state)
{
	static const char *const allowed[] = { "limit", "before", NULL };
	struct web_params p = { .n = 0 };

	assert_int_equal(web_params_add(&p, "limit", "5"), 0);
	assert_int_equal(web_params_check(&p, allowed), 0);
	assert_int_equal(web_params_add(&p, "lmit", "5"), 0);
	assert_int_equal(web_params_check(&p, allowed), -EINVAL);
	assert_non_null(strstr(err_last(), "unknown parameter 'lmit'"));
	web_params_release(&p);
}

static void test_param_int(void **state)
{
	struct web_params p = { .n = 0 };
	int64_t v = -1;

	assert_int_equal(web_param_int(&v, &p, "limit", 50, 1, 500), 0);
	assert_int_equal(v, 50);
	web_params_add(&p, "limit", "500");
	web_params_add(&p, "a", "0");
	web_params_add(&p, "b", "-1");
	web_params_add(&p, "c", "1e3");
	web_params_add(&p, "d", " 5");
	web_params_add(&p, "e", "");
	web_params_add(&p, "f", "99999999999999999999999");
	web_params_add(&p, "g", "0x10");
	assert_int_equal(web_param_int(&v, &p, "limit", 50, 1, 500), 0);
	assert_int_equal(v, 500);
	v = 7;
	assert_int_equal(web_param_int(&v, &p, "a", 50, 1, 500), -EINVAL);
	assert_int_equal(v, 7);
	assert_non_null(strstr(err_last(), "parameter 'a'"));
	assert_int_equal(web_param_int(&v, &p, "b", 50, 1, 500), -EINVAL);
	assert_int_equal(web_param_int(&v, &p, "c", 50, 1, 500), -EINVAL);
	assert_int_equal(web_param_int(&v, &p, "d", 50, 1, 500), -EINVAL);
	assert_int_equal(web_param_int(&v, &p, "e", 50, 1, 500), -EINVAL);
	assert_int_equal(web_param_int(&v, &p, "f", 50, 1, INT64_MAX), -EINVAL);
	assert_int_equal(web_param_int(&v, &p, "g", 50, 1, 500), -EINVAL);
	web_params_release(&p);
}

static void test_param_text_hex_format(void **state)
{
	struct web_params p = { .n = 0 };
	const char *s = NULL;
	bool csv = true;

	assert_int_equal(web_param_format(&csv, &p), 0);
	assert_false(csv);
	assert_int_equal(web_param_text(&s, &p, "host", true), -EINVAL);
	assert_non_null(strstr(err_last(), "'host' is required"));
	assert_int_equal(web_param_text(&s, &p, "host", false), 0);
	assert_null(s);
	web_params_add(&p, "host", "<script>alert(\"1\")</script>");
	web_params_add(&p, "case", "a\tb");
	web_params_add(&p, "empty", "");
	web_params_add(&p, "commit", "ABCD");
	web_params_add(&p, "c2", "abc");
	web_params_add(&p, "c3", "0123abcdef");
	web_params_add(&p, "format", "xml");
	assert_int_equal(web_param_text(&s, &p, "host", true), 0);
	assert_string_equal(s, "<script>alert(\"1\")</script>");
	/* A refused parameter leaves NULL, not the value read before. */
	assert_int_equal(web_param_text(&s, &p, "case", false), -EINVAL);
	assert_null(s);
	assert_int_equal(web_param_text(&s, &p, "empty", false), -EINVAL);
	assert_int_equal(web_param_hex(&s, &p, "c3"), 0);
	assert_int_equal(web_param_hex(&s, &p, "commit"), -EINVAL);
	assert_null(s);
	assert_int_equal(web_param_hex(&s, &p, "c2"), -EINVAL);
	assert_int_equal(web_param_hex(&s, &p, "c3"), 0);
	assert_string_equal(s, "0123abcdef");
	assert_int_equal(web_param_format(&csv, &p), -EINVAL);
	assert_non_null(strstr(err_last(), "'format'"));
	web_params_release(&p);
	web_params_add(&p, "format", "csv");
	assert_int_equal(web_param_format(&csv, &p), 0);
	assert_true(csv);
	web_params_release(&p);
	web_params_release(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_ok),
		cmocka_unit_test(test_path_traversal),
		cmocka_unit_test(test_path_long),
		cmocka_unit_test(test_static_name),
		cmocka_unit_test(test_params_add),
		cmocka_unit_test(test_params_check),
		cmocka_unit_test(test_param_int),
		cmocka_unit_test(test_param_text_hex_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
