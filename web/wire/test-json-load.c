/*
 * Unit tests of web/wire/json-load.c: a record's text read into the values
 * jansson's json_loadb makes, member order included; texts with every kind
 * of value, escape and blank are read without jansson's reader; and tens of
 * thousands of damaged texts (bytes changed, dropped, added, the text cut)
 * are never taken where jansson refuses them, nor read as other values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "record-internal.h"

#define DUMP (JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY)

static const char *const good[] = {
	"{}",
	"[]",
	" \t\r\n{ \"a\" : [ 1 , -2 , 0 , -0 , 3.5 , -0.0 , 1e5 , 1E-5 , 2.5e+3 ] } \n",
	"{\"format\":\"perfd-comparison/2\",\"id\":17,\"processes\":[{\"seq\":1,\"wall_ms\":"
	"12.345678901234567,\"metrics\":{\"run2_ms\":4392.0,\"x\":null},\"valid\":true,"
	"\"invalid_reason\":null,\"lines\":[{\"kind\":\"RESULT\",\"text\":\"a on \\\"d\\u00e9v\\\"\"}]}],"
	"\"summary\":{\"flags\":[],\"ok\":false}}",
	"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0001\\u001F\\u00e9\\u2028\\ud83d\\ude00\", \"d\xc3\xa9v \xf0\x9f\x98\x80\"]",
	"{\"b\":1,\"a\":2,\"\\u00e9\":3,\"c\":{\"z\":[],\"y\":{}}}",
	"[9223372036854775807,-9223372036854775808,1.7976931348623157e308,5e-324,1e-400]",
};

static const char *const refused[] = {
	"", "1", "\"a\"", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "[01]", "[1.]", "[.5]",
	"[1e]", "[-]", "[+1]", "[tru]", "[truex]", "[nul]", "{\"a\":1,\"a\":2}",
	"[\"\\u0000\"]", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]", "[\"\\x\"]",
	"[\"a\nb\"]", "[\"\xff\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[1e400]",
	"[9223372036854775808]", "[] x", "[1]]", "{\"a\":1}{}", "[\"abc",
};

/* Whether the reader and jansson agree on text: where the reader takes it,
 * jansson takes it too and makes the same values in the same order. */
static bool agrees(const char *text, size_t len, bool *read)
{
	json_t *fast = record_json_read(text, len), *slow;
	json_error_t err;
	char *a, *b;
	bool same;

	*read = fast != NULL;
	if (!fast)
		return true;
	slow = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (!slow) {
		json_decref(fast);
		return false;
	}
	a = json_dumps(fast, DUMP);
	b = json_dumps(slow, DUMP);
	same = a && b && !strcmp(a, b) && json_equal(fast, slow);
	free(a);
	free(b);
	json_decref(fast);
	json_decref(slow);
	return same;
}

static void test_read(void **state)
{
	json_error_t err;
	json_t *v;
	bool read;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (!agrees(good[i], strlen(good[i]), &read) || !read)
			fail_msg("not read as jansson reads it: %s", good[i]);
	}
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		v = record_json_read(refused[i], strlen(refused[i]));
		if (v)
			fail_msg("read: %s", refused[i]);
		/* record_json_load gives jansson's answer, its error text included. */
		v = record_json_load(refused[i], strlen(refused[i]), &err);
		assert_null(v);
		assert_true(err.text[0] != '\0');
	}
	/* A NUL byte is a byte like others, as jansson reads a buffer. */
	assert_null(record_json_read("[1]\0", 4));
	v = record_json_load("[\"a\"] ", 6, &err);
	assert_non_null(v);
	json_decref(v);
}

static void test_damaged(void **state)
{
	static const char noise[] = "{}[]\",:\\ \n0123456789.eE+-truefalsn\x01\x7f\xc3\xa9\xff";
	char buf[1024];
	size_t i, k, len, base, nread = 0;
	bool read;

	srand(7);
	for (i = 0; i < 60000; i++) {
		const char *from = good[rand() % (sizeof(good) / sizeof(good[0]))];

		len = strlen(from);
		memcpy(buf, from, len);
		for (k = 0; k < 1 + (size_t)(rand() % 3); k++) {
			base = len ? (size_t)rand() % len : 0;
			switch (rand() % 4) {
			case 0:   /* a byte changed */
				if (len)
					buf[base] = noise[rand() % (sizeof(noise) - 1)];
				break;
			case 1:   /* a byte dropped */
				if (len) {
					memmove(buf + base, buf + base + 1, len - base - 1);
					len--;
				}
				break;
			case 2:   /* a byte added */
				if (len + 1 < sizeof(buf)) {
					memmove(buf + base + 1, buf + base, len - base);
					buf[base] = noise[rand() % (sizeof(noise) - 1)];
					len++;
				}
				break;
			default:  /* the text cut */
				len = base;
			}
		}
		if (!agrees(buf, len, &read))
			fail_msg("read where jansson differs: %.*s", (int)len, buf);
		nread += read;
	}
	/* Many damaged texts are still JSON; those are read too. */
	assert_true(nread > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_damaged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
