/*
 * Unit tests of web/wire/record.c: a comparison built into a record and
 * parsed back, field by field; the same record with other blanks and member
 * order; and each kind of record the parser refuses, with the member named.
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

#include "wire.h"

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static struct db_metric metrics[2] = { { (char *)"run2_ms", 4392 }, { (char *)"x_ms", 0.1 } };
static struct db_line lines[1] = { { (char *)"RESULT", (char *)"RESULT a on \"d\u00e9v\": n=1" } };
static char *errors[1] = { (char *)"line 3: metric 'y' is not a number" };
static double pair_gains[2] = { 0.0068306010928961746, NAN };
static struct db_stage stages[1] = {
	{ 3, "sign", 0, 0.01, 0.5, 0.875, NAN, 0.5, NAN, NAN, NAN, NAN, NAN, NAN, 0.0025, 4, "unresolved" },
};
static char *flags[1] = { (char *)"noisy" };
static struct db_calibration cal[2] = { { .comparison_id = 4 }, { .comparison_id = 7 } };

/* A done comparison with two processes, the second a warm-up's shape. */
static void sample(struct db_comparison *c, struct db_process *p)
{
	memset(c, 0, sizeof(*c));
	memset(p, 0, 2 * sizeof(*p));
	c->id = 17;
	snprintf(c->created_at, sizeof(c->created_at), "2026-11-04T10:00:00.100Z");
	snprintf(c->finished_at, sizeof(c->finished_at), "2026-11-04T10:00:09.300Z");
	c->state = DB_STATE_DONE;
	c->rule = (char *)"pairs-median/2";
	c->case_name = (char *)"default";
	c->metric = (char *)"run2_ms";
	c->host = (char *)"m1";
	c->fingerprint = (char *)"{\"host\":{}}";
	c->pairs = 3;
	c->max_pairs = 24;
	c->warmup = 1;
	c->timeout_s = 600;
	c->min_effect = 0.01;
	c->noise = 0.05;
	c->args_json = (char *)"{\"old\":{\"argv\":[\"/a\"]}}";
	c->higher_better = true;
	c->calibration = cal;
	c->ncalibration = 2;
	c->old_manifest = (char *)SHA_B;
	c->old = (struct db_artifact){ 0, (char *)"/abs/old", 81920, SHA_A };
	c->new = (struct db_artifact){ 0, (char *)"/abs/new", 81921, SHA_B };
	p[0].seq = 1;
	snprintf(p[0].arm, sizeof(p[0].arm), "old");
	p[0].warmup = true;
	p[0].state = DB_STATE_DONE;
	snprintf(p[0].started_at, sizeof(p[0].started_at), "2026-11-04T10:00:00.123Z");
	snprintf(p[0].ended_at, sizeof(p[0].ended_at), "2026-11-04T10:00:04.624Z");
	p[0].exit_code = 0;
	p[0].wall_ms = 4501.2;
	p[0].user_ms = 4380.1;
	p[0].sys_ms = NAN;
	p[0].maxrss_kb = 81234;
	p[0].cpu_wait_ms = 17.25;
	p[0].metrics = metrics;
	p[0].nmetrics = 2;
	p[0].digest = (char *)"c475";
	p[0].record_valid = true;
	p[0].lines = lines;
	p[0].nlines = 1;
	p[0].protocol_errors = errors;
	p[0].nprotocol_errors = 1;
	p[0].stdout_bytes = 5000;
	p[0].stderr_bytes = 3;
	p[0].out = (char *)"TIMING run2_ms=4392\n";
	p[0].out_len = strlen(p[0].out);
	p[0].err = (char *)"a\0b";
	p[0].err_len = 3;
	p[0].valid = true;
	p[1].seq = 2;
	snprintf(p[1].arm, sizeof(p[1].arm), "new");
	p[1].pair = 1;
	p[1].state = DB_STATE_DONE;
	snprintf(p[1].started_at, sizeof(p[1].started_at), "2026-11-04T10:00:05.000Z");
	p[1].exit_code = -1;
	p[1].signal = 9;
	p[1].wall_ms = 1e-5;
	p[1].spawn_error = (char *)"cannot execute";
	p[1].invalid_reason = (char *)"killed by signal 9 (SIGKILL)";
	p[1].cpu_wait_ms = NAN;  /* not recorded: the key is left out */
	c->processes = p;
	c->nprocesses = 2;
	c->has_summary = true;
	c->summary.metric = c->metric;
	snprintf(c->summary.verdict, sizeof(c->summary.verdict), "unresolved");
	c->summary.has_gain = true;
	c->summary.gain_median = 0.0068306010928961746;
	c->summary.gain_min = -0.025528811086797956;
	c->summary.gain_max = 1e20;
	c->summary.old = (struct db_arm_stats){ true, 4392, 4113, 4421, 0.070127504553734066 };
	c->summary.pair_gains = pair_gains;
	c->summary.npair_gains = 2;
	c->summary.digests_equal = true;
	c->summary.pairs_run = 3;
	c->summary.stages = stages;
	c->summary.nstages = 1;
	c->summary.flags = flags;
	c->summary.nflags = 1;
}

static json_t *load(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	assert_non_null(j);
	return j;
}

/* j's sha256 set to that of its canonical form, as docs/hub.md defines it;
 * the text returned is the caller's. */
static char *seal(json_t *j, size_t dump_flags)
{
	char hash[SHA256_HEX_SIZE], *text;

	json_object_del(j, "sha256");
	text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17));
	assert_int_equal(sha256_hex(hash, text, strlen(text)), 0);
	free(text);
	json_object_set_new(j, "sha256", json_string(hash));
	return json_dumps(j, dump_flags);
}

static void test_round_trip(void **state)
{
	struct db_comparison c;
	struct db_process p[2];
	struct wire_record r;
	struct strbuf sb = STRBUF_INIT;
	const struct db_process *q;
	json_t *j;
	char *pretty, *canon;

	sample(&c, p);
	assert_int_equal(wire_record_build(&sb, &c, true), 0);
	assert_int_equal(sb.buf[sb.len - 1], '\n');
	assert_null(memchr(sb.buf, '\n', sb.len - 1));
	assert_int_equal(wire_record_parse(&r, sb.buf, sb.len), 0);
	assert_int_equal(r.origin_id, 17);
	assert_string_equal(r.c.host, "m1");
	assert_int_equal(r.c.id, 0);
	assert_int_equal(r.c.state, DB_STATE_DONE);
	assert_string_equal(r.c.rule, "pairs-median/2");
	assert_string_equal(r.c.created_at, c.created_at);
	assert_string_equal(r.c.finished_at, c.finished_at);
	assert_string_equal(r.c.case_name, "default");
	assert_string_equal(r.c.fingerprint, c.fingerprint);
	assert_string_equal(r.c.args_json, c.args_json);
	assert_null(r.c.metric_requested);
	assert_int_equal(r.c.pairs, 3);
	assert_int_equal(r.c.max_pairs, 24);
	assert_int_equal(r.c.warmup, 1);
	assert_true(r.c.higher_better);
	assert_false(r.c.aa);
	assert_true(r.c.timeout_s == 600 && r.c.min_effect == 0.01 && r.c.noise == 0.05);
	assert_string_equal(r.c.old.path, "/abs/old");
	assert_int_equal(r.c.new.size, 81921);
	assert_string_equal(r.c.new.sha256, SHA_B);
	assert_string_equal(r.c.old_manifest, SHA_B);
	assert_null(r.c.new_manifest);
	assert_int_equal(r.c.ncalibration, 2);
	assert_int_equal(r.c.calibration[1].comparison_id, 7);
	assert_int_equal(r.c.nprocesses, 2);
	q = &r.c.processes[0];
	assert_true(q->warmup && q->pair == 0 && q->exit_code == 0);
	assert_true(q->wall_ms == 4501.2 && q->user_ms == 4380.1 && isnan(q->sys_ms));
	assert_int_equal(q->nmetrics, 2);
	assert_string_equal(q->metrics[0].name, "run2_ms");
	assert_true(q->metrics[1].value == 0.1);
	assert_string_equal(q->lines[0].text, lines[0].text);
	assert_string_equal(q->protocol_errors[0], errors[0]);
	assert_int_equal(q->out_len, 20);
	assert_memory_equal(q->out, "TIMING run2_ms=4392\n", 20);
	assert_int_equal(q->err_len, 3);
	assert_memory_equal(q->err, "a\0b", 3);
	assert_int_equal(q->stdout_kept, 20);
	assert_true(q->cpu_wait_ms == 17.25);
	q = &r.c.processes[1];
	assert_true(q->exit_code == -1 && q->signal == 9 && q->wall_ms == 1e-5);
	assert_true(isnan(q->cpu_wait_ms));
	assert_null(q->out);
	assert_string_equal(q->spawn_error, "cannot execute");
	assert_true(r.c.has_summary);
	assert_string_equal(r.c.metric, "run2_ms");
	assert_true(r.c.summary.gain_median == c.summary.gain_median);
	assert_true(r.c.summary.gain_max == 1e20);
	assert_true(r.c.summary.old.set && !r.c.summary.new.set);
	assert_true(r.c.summary.old.spread == c.summary.old.spread);
	assert_true(isnan(r.c.summary.pair_gains[1]));
	assert_true(isnan(r.c.summary.stages[0].p_below));
	assert_true(r.c.summary.stages[0].p_slower == 0.875);
	assert_int_equal(r.c.summary.nprocesses, 2);
	assert_false(r.c.summary.process_valid[1]);
	assert_string_equal(r.c.summary.process_reason[1], "killed by signal 9 (SIGKILL)");
	wire_record_release(&r);

	/* The record is its canonical form (docs/hub.md), its sha256 in its
	 * place, and a newline: jansson's sorted compact dump, byte for byte. */
	j = load(sb.buf);
	canon = seal(j, JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17));
	assert_int_equal(strlen(canon), sb.len - 1);
	assert_memory_equal(canon, sb.buf, sb.len - 1);
	free(canon);

	/* Blanks and member order are no part of the record. */
	pretty = json_dumps(j, JSON_INDENT(3));
	assert_int_equal(wire_record_parse(&r, pretty, strlen(pretty)), 0);
	wire_record_release(&r);
	free(pretty);
	json_decref(j);
	strbuf_release(&sb);
}

struct refusal {
	const char *path;        /* a member, "a.b[1].c" */
	const char *json;        /* its new value; NULL: removed */
	const char *said;        /* in err_last() */
};

/* The value at a dotted path with [i] indexes; its parent and last key. */
static json_t *parent_of(json_t *root, const char *path, char *key, size_t keylen,
			 size_t *index, bool *is_index)
{
	char buf[128], *tok, *save = NULL;
	json_t *cur = root, *parent = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		char *br = strchr(tok, '[');

		parent = cur;
		*is_index = false;
		if (br) {
			*br = '\0';
			parent = json_object_get(cur, tok);
			*index = strtoul(br + 1, NULL, 10);
			*is_index = true;
			cur = json_array_get(parent, *index);
		} else {
			snprintf(key, keylen, "%s", tok);
			cur = json_object_get(cur, tok);
		}
	}
	return parent;
}

static void test_refused(void **state)
{
	static const struct refusal cases[] = {
		{ "colour", "1", "the record: unknown member 'colour'" },
		{ "processes[1].colour", "1", "processes[1]: unknown member 'colour'" },
		{ "summary.verdict", NULL, "summary.verdict: missing" },
		{ "processes[0].seq", "\"1\"", "processes[0].seq: expected a whole number" },
		{ "processes[1].seq", "3", "processes[1].seq: expected 2" },
		{ "processes[1].pair", "0", "processes[1]: a warm-up has pair 0" },
		{ "processes[0].exit", "-1", "processes[0].exit: expected a whole number from 0" },
		{ "processes[0].cpu_wait_ms", "-1", "processes[0].cpu_wait_ms: expected a number from 0" },
		{ "processes[0].cpu_wait_ms", "null", "processes[0].cpu_wait_ms: expected a number" },
		{ "processes[0].started_at", "\"2026-11-04 10:00\"", "processes[0].started_at: "
		  "expected a time" },
		{ "processes[0].metrics", "{\"a\": \"1\"}", "processes[0].metrics['a']: expected a "
		  "number" },
		{ "processes[0].output", "{\"stdout\": \"eA=\", \"stderr\": \"\"}",
		  "processes[0].output.stdout: base64 of 3 characters" },
		{ "processes[0].output", "{\"stdout\": \"\", \"stderr\": \"YWJjZA==\"}",
		  "processes[0].output.stderr: expected no more bytes than the process wrote" },
		{ "processes[0].lines[0].kind", "\"error\"", "processes[0].lines[0].kind: expected "
		  "RESULT or SUMMARY" },
		{ "old.sha256", "\"ABC\"", "old.sha256: expected 64 lower-case hex digits" },
		{ "settings.args", "\"[1]\"", "settings.args: expected the text of a JSON object" },
		{ "settings.pairs", "0", "settings.pairs: expected a whole number from 1" },
		{ "settings.case", "\"\"", "settings: expected a case" },
		{ "summary.gain.median", "null", "summary.gain.median: expected a number" },
		{ "summary.stages[0].test", "\"t\"", "summary.stages[0].test: expected sign, "
		  "calibrated or sign+calibrated" },
		{ "calibration[1]", "0", "calibration[1]: expected a comparison id" },
		{ "format", "\"perfd-comparison/1\"", "format: expected 'perfd-comparison/2'" },
		{ "id", "0", "id: expected a whole number from 1" },
		{ "host", "\"\"", "the record: expected a host" },
	};
	struct db_comparison c;
	struct db_process p[2];
	struct wire_record r;
	struct strbuf sb = STRBUF_INIT;
	size_t i, index = 0;
	char key[64], *text;
	bool is_index = false;
	json_t *j, *parent;

	sample(&c, p);
	assert_int_equal(wire_record_build(&sb, &c, true), 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		j = load(sb.buf);
		parent = parent_of(j, cases[i].path, key, sizeof(key), &index, &is_index);
		assert_non_null(parent);
		if (!cases[i].json)
			json_object_del(parent, key);
		else if (is_index)
			json_array_set_new(parent, index, json_loads(cases[i].json,
								     JSON_DECODE_ANY, NULL));
		else
			json_object_set_new(parent, key, json_loads(cases[i].json,
								    JSON_DECODE_ANY, NULL));
		text = seal(j, JSON_COMPACT);
		assert_int_equal(wire_record_parse(&r, text, strlen(text)), -EINVAL);
		if (!strstr(err_last(), cases[i].said))
			fail_msg("%s: '%s' does not say '%s'", cases[i].path, err_last(),
				 cases[i].said);
		wire_record_release(&r);
		free(text);
		json_decref(j);
	}

	/* An optional member left out and an unknown one in its place. */
	j = load(sb.buf);
	parent = json_array_get(json_object_get(j, "processes"), 0);
	assert_non_null(json_object_get(parent, "output"));
	json_object_set(parent, "outputs", json_object_get(parent, "output"));
	json_object_del(parent, "output");
	text = seal(j, JSON_COMPACT);
	assert_int_equal(wire_record_parse(&r, text, strlen(text)), -EINVAL);
	assert_non_null(strstr(err_last(), "processes[0]: unknown member 'outputs'"));
	wire_record_release(&r);
	free(text);
	json_decref(j);

	/* Not JSON, duplicate members, and a sha256 of other content. */
	assert_int_equal(wire_record_parse(&r, sb.buf, 100), -EINVAL);
	assert_non_null(strstr(err_last(), "malformed JSON: line 1"));
	wire_record_release(&r);
	text = xasprintf("{\"host\": \"a\", \"host\": \"b\", %s", sb.buf + 1);
	assert_int_equal(wire_record_parse(&r, text, strlen(text)), -EINVAL);
	assert_non_null(strstr(err_last(), "duplicate"));
	wire_record_release(&r);
	free(text);
	j = load(sb.buf);
	json_object_set_new(j, "id", json_integer(18));
	text = json_dumps(j, JSON_COMPACT);
	assert_int_equal(wire_record_parse(&r, text, strlen(text)), -EBADMSG);
	assert_non_null(strstr(err_last(), "canonical form"));
	wire_record_release(&r);
	free(text);
	json_decref(j);
	strbuf_release(&sb);
}

/* A job's update, built and parsed back; an edit under the old sha256 refused. */
static void test_job_record(void **state)
{
	struct db_job j;
	struct wire_job_record r;
	struct strbuf sb = STRBUF_INIT;
	char *edited;

	memset(&j, 0, sizeof(j));
	j.id = 9;
	j.seq = 31;
	snprintf(j.head, sizeof(j.head), "pull/5");
	snprintf(j.commit, sizeof(j.commit), "%.40s", SHA_A);
	snprintf(j.base, sizeof(j.base), "%.40s", SHA_B);
	j.subject = (char *)"Halve \"the\" rounds";
	j.state = DB_JOB_FAILED;
	j.detail = (char *)"build 3 failed";
	snprintf(j.created_at, sizeof(j.created_at), "2026-12-01T03:54:10.100Z");
	snprintf(j.started_at, sizeof(j.started_at), "2026-12-01T03:54:10.200Z");
	assert_int_equal(wire_job_record_build(&sb, &j, "m1"), 0);
	assert_int_equal(wire_job_record_parse(&r, sb.buf, sb.len), 0);
	assert_string_equal(r.job.host, "m1");
	assert_int_equal(r.job.origin_id, 9);
	assert_int_equal(r.job.seq, 31);
	assert_string_equal(r.job.head, "pull/5");
	assert_string_equal(r.job.commit, j.commit);
	assert_string_equal(r.job.base, j.base);
	assert_string_equal(r.job.subject, j.subject);
	assert_int_equal(r.job.state, DB_JOB_FAILED);
	assert_string_equal(r.job.detail, j.detail);
	assert_string_equal(r.job.started_at, j.started_at);
	assert_string_equal(r.job.finished_at, "");
	wire_job_record_release(&r);
	edited = xstrdup(sb.buf);
	memcpy(strstr(edited, "\"seq\":31"), "\"seq\":32", 8);
	assert_int_equal(wire_job_record_parse(&r, edited, strlen(edited)), -EBADMSG);
	wire_job_record_release(&r);
	free(edited);
	strbuf_release(&sb);
}

/* A done build with one artifact, and a runner result of one line. */
static void build_sample(struct db_build *b, struct db_build_artifact *art,
			 struct db_runner_result *x)
{
	memset(b, 0, sizeof(*b));
	memset(art, 0, sizeof(*art));
	memset(x, 0, sizeof(*x));
	b->id = 4;
	snprintf(b->commit, sizeof(b->commit), "%.40s", SHA_A);
	snprintf(b->tree, sizeof(b->tree), "%.40s", SHA_B);
	snprintf(b->recipe_hash, sizeof(b->recipe_hash), "%s", SHA_A);
	b->state = DB_BUILD_DONE;
	b->dir = (char *)"/w/builds/4";
	snprintf(b->started_at, sizeof(b->started_at), "2026-12-01T03:54:10.100Z");
	snprintf(b->finished_at, sizeof(b->finished_at), "2026-12-01T03:54:12.100Z");
	b->wall_ms = 2000.25;
	b->log = (char *)"cc -o prog\n\xff";
	b->log_len = 12;
	b->log_bytes = 40;
	art->name = (char *)"prog";
	art->artifact.path = (char *)"/w/builds/4/prog";
	art->artifact.size = 16104;
	snprintf(art->artifact.sha256, sizeof(art->artifact.sha256), "%s", SHA_B);
	b->artifacts = art;
	b->nartifacts = 1;
	x->id = 9;
	snprintf(x->runner, sizeof(x->runner), "contract");
	x->chunk = x->chunks = 1;
	snprintf(x->started_at, sizeof(x->started_at), "2026-12-01T03:54:13.000Z");
	x->elapsed_ms = NAN;
	x->lines = lines;
	x->nlines = 1;
}

/* A build with an artifact, a log and a runner result, built and parsed
 * back; the build's own hash leaves its runner results out. */
static void test_build_record(void **state)
{
	struct db_build b;
	struct db_build_artifact art;
	struct db_runner_result x;
	struct wire_build_record r, r0;
	struct strbuf sb = STRBUF_INIT, sb0 = STRBUF_INIT;

	(void)state;
	build_sample(&b, &art, &x);
	assert_int_equal(wire_build_record_build(&sb, &b, "m1", &x, 1), 0);
	assert_int_equal(wire_build_record_parse(&r, sb.buf, sb.len), 0);
	assert_string_equal(r.build.host, "m1");
	assert_int_equal(r.origin_id, 4);
	assert_string_equal(r.build.tree, b.tree);
	assert_int_equal(r.build.state, DB_BUILD_DONE);
	assert_int_equal(r.build.log_len, 12);
	assert_memory_equal(r.build.log, b.log, 12);
	assert_int_equal(r.build.log_bytes, 40);
	assert_true(r.build.wall_ms == 2000.25);
	assert_int_equal(r.build.nartifacts, 1);
	assert_string_equal(r.build.artifacts[0].name, "prog");
	assert_int_equal(r.build.artifacts[0].artifact.size, 16104);
	assert_int_equal(r.nresults, 1);
	assert_int_equal(r.results_origin[0], 9);
	assert_string_equal(r.results[0].runner, "contract");
	assert_true(isnan(r.results[0].elapsed_ms));
	assert_string_equal(r.results[0].lines[0].text, lines[0].text);
	/* The same build with no runner result: another record, the same build. */
	assert_int_equal(wire_build_record_build(&sb0, &b, "m1", NULL, 0), 0);
	assert_int_equal(wire_build_record_parse(&r0, sb0.buf, sb0.len), 0);
	assert_string_not_equal(r0.sha256, r.sha256);
	assert_string_equal(r0.build_sha256, r.build_sha256);
	wire_build_record_release(&r);
	wire_build_record_release(&r0);
	strbuf_release(&sb);
	strbuf_release(&sb0);
}

/* RUNNER_LINES_MAX lines of 4000 '"' each, 8 MB once escaped: the lines
 * and their one text are the caller's (free both). */
static struct db_line *many_lines(char **text)
{
	struct db_line *many = calloc(RUNNER_LINES_MAX, sizeof(*many));
	size_t i;

	*text = calloc(1, 4001);
	memset(*text, '"', 4000);
	for (i = 0; i < RUNNER_LINES_MAX; i++) {
		many[i].kind = (char *)"RESULT";
		many[i].text = *text;
	}
	return many;
}

/* The note a list cut to kept lines of RUNNER_LINES_MAX ends in. */
static void assert_cut(const struct db_line *l, size_t n, const char *text)
{
	char want[128];

	assert_true(n > 100 && n < RUNNER_LINES_MAX);
	snprintf(want, sizeof(want), "SUMMARY perfd: %zu of %d lines left out to fit the hub's "
		 "bound of %d bytes", RUNNER_LINES_MAX - (n - 1), RUNNER_LINES_MAX, WIRE_RECORD_MAX);
	assert_string_equal(l[n - 2].text, text);
	assert_string_equal(l[n - 1].kind, "SUMMARY");
	assert_string_equal(l[n - 1].text, want);
}

/* Three runner results of 1024 such lines (24 MB): the record is cut to
 * the hub's bound, the same count of lines kept of each, its last line
 * saying how many were left out; the hub's parser takes it. */
static void test_build_record_cut(void **state)
{
	struct db_build b;
	struct db_build_artifact art;
	struct db_runner_result x[3];
	struct wire_build_record r;
	struct strbuf sb = STRBUF_INIT;
	char *text;
	struct db_line *many = many_lines(&text);
	size_t i;

	(void)state;
	build_sample(&b, &art, &x[0]);
	x[0].lines = many;
	x[0].nlines = RUNNER_LINES_MAX;
	x[1] = x[2] = x[0];
	x[1].id = 10;
	x[2].id = 11;
	assert_int_equal(wire_build_record_build(&sb, &b, "m1", x, 3), 0);
	assert_true(sb.len <= WIRE_RECORD_MAX);
	assert_true(sb.len > WIRE_RECORD_MAX - 64 * 1024);   /* filled, not emptied */
	assert_int_equal(wire_build_record_parse(&r, sb.buf, sb.len), 0);
	assert_int_equal(r.nresults, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(r.results[i].nlines, r.results[0].nlines);
		assert_cut(r.results[i].lines, r.results[i].nlines, text);
	}
	wire_build_record_release(&r);
	strbuf_release(&sb);
	free(text);
	free(many);
}

/* A comparison whose two processes printed 1024 such lines each: cut
 * likewise, its processes' lines. */
static void test_comparison_cut(void **state)
{
	struct db_comparison c;
	struct db_process p[2];
	struct wire_record r;
	struct strbuf sb = STRBUF_INIT;
	char *text;
	struct db_line *many = many_lines(&text);

	(void)state;
	sample(&c, p);
	p[0].lines = p[1].lines = many;
	p[0].nlines = p[1].nlines = RUNNER_LINES_MAX;
	assert_int_equal(wire_record_build(&sb, &c, false), 0);
	assert_true(sb.len <= WIRE_RECORD_MAX);
	assert_int_equal(wire_record_parse(&r, sb.buf, sb.len), 0);
	assert_int_equal(r.c.nprocesses, 2);
	assert_cut(r.c.processes[0].lines, r.c.processes[0].nlines, text);
	assert_cut(r.c.processes[1].lines, r.c.processes[1].nlines, text);
	wire_record_release(&r);
	strbuf_release(&sb);
	free(text);
	free(many);
}

/* A heartbeat, built and parsed back, quarantined. */
static void test_heartbeat(void **state)
{
	struct wire_heartbeat h, got;
	struct strbuf sb = STRBUF_INIT;

	memset(&h, 0, sizeof(h));
	snprintf(h.host, sizeof(h.host), "gfx1201");
	h.seq = 1764561250123;
	snprintf(h.sent_at, sizeof(h.sent_at), "2026-12-01T03:54:10.123Z");
	snprintf(h.state, sizeof(h.state), "measuring");
	h.job = 9;
	h.backlog = 3;
	h.quarantined = true;
	h.fault = (char *)"amdgpu: ring gfx timeout";
	assert_int_equal(wire_heartbeat_build(&sb, &h), 0);
	assert_int_equal(wire_heartbeat_parse(&got, sb.buf, sb.len), 0);
	assert_string_equal(got.host, "gfx1201");
	assert_int_equal(got.seq, h.seq);
	assert_string_equal(got.state, "measuring");
	assert_int_equal(got.job, 9);
	assert_int_equal(got.backlog, 3);
	assert_null(got.fingerprint);
	assert_true(got.quarantined);
	assert_string_equal(got.fault, h.fault);
	assert_string_equal(got.since, "");
	assert_null(got.sandbox);
	wire_heartbeat_release(&got);
	strbuf_reset(&sb);
	h.sandbox = (char *)"bubblewrap";
	assert_int_equal(wire_heartbeat_build(&sb, &h), 0);
	assert_int_equal(wire_heartbeat_parse(&got, sb.buf, sb.len), 0);
	assert_string_equal(got.sandbox, "bubblewrap");
	assert_null(got.kind);
	assert_int_equal(got.nholds, 0);
	wire_heartbeat_release(&got);
	strbuf_release(&sb);
}

/* A heartbeat's kind and holds, built and parsed back; a hold out of
 * shape refused, naming it. */
static void test_heartbeat_holds(void **state)
{
	struct wire_hold holds[2] = {
		{ .id = 7, .why = DB_HOLD_WENT_DOWN, .step = DB_HOLD_CASE,
		  .since = "2026-12-01T03:54:10.123Z", .text = (char *)"the machine went down" },
		{ .id = 3, .why = DB_HOLD_GATE, .step = DB_HOLD_JOB,
		  .since = "2026-12-01T02:00:00.000Z", .text = (char *)"commit changes 'a.s'" },
	};
	struct wire_heartbeat h, got;
	struct strbuf sb = STRBUF_INIT;
	char *bad;

	memset(&h, 0, sizeof(h));
	snprintf(h.host, sizeof(h.host), "gfx1201");
	h.seq = 1;
	snprintf(h.sent_at, sizeof(h.sent_at), "2026-12-01T03:54:10.123Z");
	snprintf(h.state, sizeof(h.state), "idle");
	memset(holds[0].commit, 'a', 40);
	memset(holds[0].tree, 'b', 40);
	h.kind = (char *)"GFX1201";
	h.holds = holds;
	h.nholds = 2;
	assert_int_equal(wire_heartbeat_build(&sb, &h), 0);
	assert_int_equal(wire_heartbeat_parse(&got, sb.buf, sb.len), 0);
	assert_string_equal(got.kind, "GFX1201");
	assert_int_equal(got.nholds, 2);
	assert_int_equal(got.holds[0].id, 7);
	assert_int_equal(got.holds[0].why, DB_HOLD_WENT_DOWN);
	assert_int_equal(got.holds[0].step, DB_HOLD_CASE);
	assert_string_equal(got.holds[0].commit, holds[0].commit);
	assert_string_equal(got.holds[0].tree, holds[0].tree);
	assert_string_equal(got.holds[0].since, holds[0].since);
	assert_string_equal(got.holds[0].text, "the machine went down");
	assert_int_equal(got.holds[1].why, DB_HOLD_GATE);
	assert_string_equal(got.holds[1].commit, "");
	wire_heartbeat_release(&got);
	bad = strstr(sb.buf, "\"gate\"");
	assert_non_null(bad);
	memcpy(bad, "\"gata\"", 6);
	assert_int_equal(wire_heartbeat_parse(&got, sb.buf, sb.len), -EINVAL);
	assert_string_equal(err_last(), "holds[1].why: expected went-down, unkillable, fault or gate");
	wire_heartbeat_release(&got);
	strbuf_release(&sb);
	(void)state;
}

/* The hub's answer to a heartbeat, with the holds greenlit there; an
 * older hub's, without them. */
static void test_heartbeat_reply(void **state)
{
	struct wire_greenlight green[WIRE_GREENLIT_MAX] = { { .hold = 7, .pr = 5, .by = "alice" } };
	struct wire_heartbeat_reply r = { .host = "m1", .seq = 3, .stored = true,
					  .greenlit = green, .ngreenlit = 1 }, got;
	struct strbuf sb = STRBUF_INIT;
	static const char old[] = "{\"host\":\"m1\",\"seq\":3,\"stored\":false}";
	static const char zero[] = "{\"stored\":true,\"greenlit\":[{\"hold\":0,\"by\":\"a\","
		"\"pr\":1}]}";
	size_t i;

	assert_int_equal(wire_heartbeat_reply_build(&sb, &r), 0);
	assert_string_equal(sb.buf, "{\"greenlit\":[{\"by\":\"alice\",\"hold\":7,\"pr\":5}],"
			    "\"host\":\"m1\",\"seq\":3,\"stored\":true}");
	assert_int_equal(wire_heartbeat_reply_parse(&got, sb.buf, sb.len), 0);
	assert_true(got.stored);
	assert_int_equal(got.ngreenlit, 1);
	assert_int_equal(got.greenlit[0].hold, 7);
	assert_int_equal(got.greenlit[0].pr, 5);
	assert_string_equal(got.greenlit[0].by, "alice");
	wire_heartbeat_reply_release(&got);
	assert_int_equal(wire_heartbeat_reply_parse(&got, old, strlen(old)), 0);
	assert_false(got.stored);
	assert_int_equal(got.ngreenlit, 0);
	wire_heartbeat_reply_release(&got);
	assert_int_equal(wire_heartbeat_reply_parse(&got, zero, strlen(zero)), -EPROTO);
	assert_string_equal(err_last(), "greenlit[0].hold: expected a whole number from 1 to "
			    "9223372036854775807");
	wire_heartbeat_reply_release(&got);
	/* The most an answer holds, with the longest names, fits what the
	 * outbox keeps of an answer. */
	r.ngreenlit = WIRE_GREENLIT_MAX;
	for (i = 0; i < r.ngreenlit; i++) {
		green[i] = (struct wire_greenlight){ .hold = INT64_MAX, .pr = INT32_MAX };
		memset(green[i].by, 'x', sizeof(green[i].by) - 1);
	}
	memset(r.host, 'h', sizeof(r.host) - 1);
	r.seq = INT64_MAX;
	strbuf_reset(&sb);
	assert_int_equal(wire_heartbeat_reply_build(&sb, &r), 0);
	assert_true(sb.len <= WIRE_OUTBOX_MESSAGE_MAX);
	strbuf_release(&sb);
	(void)state;
}

/* A heartbeat's sandbox: a name, or none with why; anything else refused. */
static void test_heartbeat_sandbox(void **state)
{
	static const char *const good[] = { "\"bubblewrap\"", "\"none\"",
		"\"none: [sandbox] mode = off\"" };
	static const char *const bad[] = { "null", "3", "\"\"", "\"none:\"", "\"none: \"",
		"\"nonesuch\"", "\"bubble wrap\"", "\"a-name-of-more-than-thirty-two-bytes\"" };
	struct wire_heartbeat got;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(good) + ARRAY_SIZE(bad) + 1; i++) {
		bool ok = i < ARRAY_SIZE(good);

		strbuf_reset(&sb);
		strbuf_adds(&sb, "{\"format\": \"perfd-heartbeat/1\", \"host\": \"m1\", \"seq\": 1, "
			    "\"sent_at\": \"2026-12-01T03:54:10.123Z\", \"state\": \"idle\", "
			    "\"job\": null, \"backlog\": 0, \"fingerprint\": null, "
			    "\"quarantine\": null, \"sandbox\": ");
		if (ok)
			strbuf_adds(&sb, good[i]);
		else if (i < ARRAY_SIZE(good) + ARRAY_SIZE(bad))
			strbuf_adds(&sb, bad[i - ARRAY_SIZE(good)]);
		else {
			/* none and a reason past WIRE_SANDBOX_MAX bytes */
			strbuf_adds(&sb, "\"none: ");
			while (sb.len < 300 + WIRE_SANDBOX_MAX)
				strbuf_addch(&sb, 'x');
			strbuf_addch(&sb, '"');
		}
		strbuf_adds(&sb, "}");
		assert_int_equal(wire_heartbeat_parse(&got, sb.buf, sb.len), ok ? 0 : -EINVAL);
		if (!ok)
			assert_non_null(strstr(err_last(), "sandbox: expected"));
		wire_heartbeat_release(&got);
	}
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_job_record),
		cmocka_unit_test(test_build_record),
		cmocka_unit_test(test_build_record_cut),
		cmocka_unit_test(test_comparison_cut),
		cmocka_unit_test(test_heartbeat),
		cmocka_unit_test(test_heartbeat_holds),
		cmocka_unit_test(test_heartbeat_reply),
		cmocka_unit_test(test_heartbeat_sandbox),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
