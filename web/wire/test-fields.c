/*
 * Unit tests of web/wire/fields.c: a small table written and read back,
 * its nulls and bounds; and each record kind's table against the field
 * table docs/records.md shows of it (the document's path is argv[1]), so that
 * the two cannot disagree.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "wire-internal.h"

static const char *docs_path;

struct sample {
	int64_t id;                  /* 0: null */
	int exit;                    /* -1: null */
	double wall;                 /* NAN: null */
	double budget;               /* 0: left out */
	char *note;                  /* NULL: null */
	char when[32];               /* "": null */
	bool slower;
	int state;
	double *gains;
	size_t ngains;
};

#define S(m) offsetof(struct sample, m)

static const struct wire_field gain_entry = { "gains[]", WIRE_REAL, .flags = WIRE_NULL };
static const struct wire_field sample_fields[] = {
	{ "format", WIRE_CONST, .words = WIRE_WORDS("sample/1") },
	{ "id", WIRE_I64, WIRE_NULL, S(id), .lo = 1, .hi = INT64_MAX },
	{ "exit", WIRE_INT, WIRE_NULL, S(exit), .lo = 0, .hi = 255 },
	{ "wall", WIRE_REAL, WIRE_NULL, .offset = S(wall) },
	{ "budget", WIRE_REAL, WIRE_OPTIONAL | WIRE_ABOVE, S(budget), .lo = 0, .hi = 60 },
	{ "note", WIRE_TEXT, WIRE_NULL, S(note), .hi = 4 },
	{ "when", WIRE_TIME, WIRE_NULL, .offset = S(when) },
	{ "direction", WIRE_FLAG, .offset = S(slower), .words = WIRE_WORDS("faster", "slower") },
	{ "state", WIRE_ENUM, .offset = S(state), .lo = 1, .hi = 2,
	  .words = WIRE_WORDS("running", "done", "failed") },
	{ "gains", WIRE_LIST, .offset = S(gains), .size = sizeof(double), .count = S(ngains),
	  .hi = 2, .sub = &gain_entry },
	{ 0 },
};

static void sample_release(struct sample *s)
{
	free(s->note);
	free(s->gains);
	memset(s, 0, sizeof(*s));
}

static char *dump(json_t *v)
{
	char *t = json_dumps(v, JSON_SORT_KEYS | JSON_COMPACT);

	json_decref(v);
	return t;
}

/* Nulls written as the header says, and read back to the same values. */
static void test_round_trip(void **state)
{
	double gains[2] = { 0.5, NAN };
	struct sample s = { 0, -1, NAN, 0, NULL, "", true, 2, gains, 2 }, got;
	struct wire_at top = { "" };
	json_t *o;
	char *text;

	(void)state;
	text = dump(wire_fields_build(sample_fields, &s));
	assert_string_equal(text, "{\"direction\":\"slower\",\"exit\":null,\"format\":\"sample/1\","
			    "\"gains\":[0.5,null],\"id\":null,\"note\":null,\"state\":\"failed\","
			    "\"wall\":null,\"when\":null}");
	o = json_loads(text, 0, NULL);
	memset(&got, 0, sizeof(got));
	assert_int_equal(wire_fields_parse(&got, sample_fields, o, &top), 0);
	assert_int_equal(got.id, 0);
	assert_int_equal(got.exit, -1);
	assert_true(isnan(got.wall));
	assert_true(got.budget == 0);
	assert_null(got.note);
	assert_true(got.slower);
	assert_int_equal(got.state, 2);
	assert_int_equal(got.ngains, 2);
	assert_true(got.gains[0] == 0.5 && isnan(got.gains[1]));
	sample_release(&got);
	json_decref(o);
	free(text);
	s = (struct sample){ 7, 3, 1.5, 30, (char *)"abc", "2026-11-04T10:00:00.123Z", false, 1, NULL, 0 };
	text = dump(wire_fields_build(sample_fields, &s));
	assert_non_null(strstr(text, "\"budget\":30.0,"));
	assert_non_null(strstr(text, "\"when\":\"2026-11-04T10:00:00.123Z\""));
	free(text);
}

/* Each refusal names the member and what it must be. */
static void test_refused(void **state)
{
	static const struct { const char *json, *said; } cases[] = {
		{ "{\"format\":\"sample/2\"}", "format: expected 'sample/1'" },
		{ "{\"id\":0}", "id: expected a whole number from 1 to 9223372036854775807 or null" },
		{ "{\"exit\":256}", "exit: expected a whole number from 0 to 255 or null" },
		{ "{\"budget\":0}", "budget: expected a number above 0 and at most 60" },
		{ "{\"note\":\"abcde\"}", "note: expected a string of at most 4 bytes or null" },
		{ "{\"direction\":\"up\"}", "direction: expected faster or slower" },
		{ "{\"state\":\"running\"}", "state: expected done or failed" },
		{ "{\"gains\":[1,2,3]}", "gains: expected a list of at most 2 entries" },
		{ "{\"gains\":[1,\"x\"]}", "gains[1]: expected a number or null" },
		{ "{\"colour\":1}", "the record: unknown member 'colour'" },
		{ "{\"wall\":null,\"id\":\"DEL\"}", "id: missing" },
	};
	struct sample s = { 1, 0, 1, 0, NULL, "", false, 1, NULL, 0 }, got;
	struct wire_at top = { "" };
	json_t *base, *edit, *v;
	const char *key;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		base = wire_fields_build(sample_fields, &s);
		edit = json_loads(cases[i].json, 0, NULL);
		json_object_foreach(edit, key, v) {
			if (json_is_string(v) && !strcmp(json_string_value(v), "DEL"))
				json_object_del(base, key);
			else
				json_object_set(base, key, v);
		}
		memset(&got, 0, sizeof(got));
		assert_int_equal(wire_fields_parse(&got, sample_fields, base, &top), -EINVAL);
		if (strcmp(err_last(), cases[i].said))
			fail_msg("%s: '%s', not '%s'", cases[i].json, err_last(), cases[i].said);
		sample_release(&got);
		json_decref(edit);
		json_decref(base);
	}
}

/* docs/records.md holds each record's field table as its table writes it. */
static void test_docs(void **state)
{
	static const struct { const char *kind; const struct wire_field *table; } kinds[] = {
		{ "comparison", wire_record_fields }, { "job", wire_job_fields },
		{ "build", wire_build_fields }, { "alert", wire_alert_fields },
		{ "heartbeat", wire_heartbeat_fields },
		{ "heartbeat's answer", wire_heartbeat_reply_fields },
	};
	struct strbuf want = STRBUF_INIT;
	char *docs = NULL;
	size_t len = 0, i;
	bool ok = true;

	(void)state;
	assert_int_equal(fs_read_file(&docs, &len, docs_path, 1 << 20), 0);
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		strbuf_reset(&want);
		wire_fields_doc(&want, kinds[i].table);
		if (strstr(docs, want.buf))
			continue;
		fprintf(stderr, "%s: the %s record's field table is not as its table says; "
			"it should read:\n\n%s\n", docs_path, kinds[i].kind, want.buf);
		ok = false;
	}
	assert_true(ok);
	free(docs);
	strbuf_release(&want);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_docs),
	};

	docs_path = argc > 1 ? argv[1] : "docs/records.md";
	return cmocka_run_group_tests(tests, NULL, NULL);
}
