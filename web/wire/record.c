/*
 * Records: what an agent sends its hub (docs/hub.md): a comparison, a
 * job's update, a build with its runner results, an alert's update, a
 * heartbeat; built from the stored rows and taken apart again, checked
 * member by member, at the hub.
 *
 * Each record kind but the heartbeat is a table of its members
 * (wire-internal.h): the table writes the record, reads it back and is
 * docs/records.md. What is here beside the tables is what a row cannot
 * say: checks across members, base64, the bound on a record's size.
 *
 * A record is JSON. Its canonical form is the record without its "sha256"
 * member, written as jansson writes it with sorted keys, no blanks and reals
 * at 17 significant digits (JSON_SORT_KEYS | JSON_COMPACT |
 * JSON_REAL_PRECISION(17)); "sha256" is the sha256 of those bytes. The hub parses what it receives,
 * writes the canonical form of what it parsed and hashes it, so the hash
 * holds whatever blanks or key order a sender used, and one record has one
 * hash. Every REAL column is sent as a JSON real (17 digits give the same
 * double back, so the hub stores the agent's numbers bit for bit), every
 * INTEGER column as a JSON integer.
 *
 * The parser is strict: every member is required but those a table says
 * are optional, no other member is allowed, each has one type, and
 * strings, lists and numbers are bounded, so that what the hub stores is
 * what the format says and nothing else.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wire-internal.h"

#define TEXT_MAX (64 * 1024)         /* bytes of most strings */
#define JSON_TEXT_MAX (256 * 1024)   /* bytes of the args and fingerprint texts */
#define NAME_MAX_BYTES 63            /* a host, a case */
#define PROCESSES_MAX 4096
#define PAIRS_MAX 1000
#define WARMUP_MAX 100
#define NOTES_MAX 4096               /* flags and reasons */

/* ---- the canonical form ---- */

static json_t *b64(const char *data, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	base64_encode(&sb, data ? data : "", len);
	j = json_stringn(sb.buf, sb.len);
	strbuf_release(&sb);
	return j;
}

#define CANONICAL_FLAGS (JSON_SORT_KEYS | JSON_COMPACT | JSON_REAL_PRECISION(17))

static int append_text(const char *buf, size_t size, void *data)
{
	strbuf_add(data, buf, size);
	return 0;
}

/* Appends v, an object, in the canonical form. jansson fails only on an
 * allocation, which aborts. */
static void canonical_write(struct strbuf *out, const json_t *v)
{
	if (json_dump_callback(v, append_text, out, CANONICAL_FLAGS) < 0)
		abort();
}

/* The hash of a record's canonical bytes, its "sha256" member, if any,
 * left out. */
static int canonical_hash(char out[SHA256_HEX_SIZE], json_t *root)
{
	struct strbuf text = STRBUF_INIT;
	json_t *copy = json_copy(root);   /* shallow: the members are shared */
	int r;

	json_object_del(copy, "sha256");
	canonical_write(&text, copy);
	json_decref(copy);
	r = sha256_hex(out, text.buf, text.len);
	strbuf_release(&text);
	return r < 0 ? err_set(r, "the record's sha256: %s", err_last()) : 0;
}

/* Appends root, a record, in its canonical form with its sha256 in its
 * place, and a newline. */
static int finish_record(struct strbuf *out, json_t *root)
{
	char hash[SHA256_HEX_SIZE];
	int r = canonical_hash(hash, root);

	if (r == 0) {
		json_object_set_new(root, "sha256", json_string(hash));
		canonical_write(out, root);
		strbuf_addch(out, '\n');
	}
	return r;
}

/* Parses root's text, checks it with parse, and checks its sha256 against
 * its canonical form. */
static int parse_hashed(const char *text, size_t len, void *rec, const char *sha256,
			int (*parse)(void *rec, json_t *root))
{
	char hash[SHA256_HEX_SIZE];
	json_error_t jerr;
	json_t *root;
	int r;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return err_set(-EINVAL, "malformed JSON: line %d, column %d: %s", jerr.line,
			       jerr.column, jerr.text);
	r = parse(rec, root);
	if (r == 0 && sha256)
		r = canonical_hash(hash, root);
	if (r == 0 && sha256 && strcmp(hash, sha256))
		r = err_set(-EBADMSG, "sha256: the record says %s, and its canonical form "
			    "(docs/hub.md) hashes to %s", sha256, hash);
	json_decref(root);
	return r;
}

/* Appends the record rec as its table says, sealed. */
static int build_sealed(struct strbuf *out, const struct wire_field *table, const void *rec)
{
	json_t *root = wire_fields_build(table, rec);
	int r = finish_record(out, root);

	json_decref(root);
	return r;
}

/* ---- records held to the hub's bound ---- */

/* Room kept below WIRE_RECORD_MAX for the sha256 member and the newline
 * finish_record adds, and per cut list for the line that says the cut. */
#define RECORD_SLACK 1024
#define CUT_NOTE_MAX 256

static size_t dumped_size(const json_t *v)
{
	return json_dumpb(v, NULL, 0, CANONICAL_FLAGS);
}

/* The lists to cut and, per list, the bytes of its first k lines
 * (sizes[j][k], a comma each included). */
struct cut {
	json_t **lists;
	size_t **sizes;
	size_t n;
};

/* The record's bytes with the first k lines of each list kept, a note per
 * cut list. base is the record's bytes without any line. */
static size_t size_keeping(const struct cut *c, size_t base, size_t k)
{
	size_t total = base, j, len;

	for (j = 0; j < c->n; j++) {
		len = json_array_size(c->lists[j]);
		total += c->sizes[j][k < len ? k : len];
		if (len > k)
			total += CUT_NOTE_MAX;
	}
	return total;
}

/* Keeps the first k lines of each list and says the cut in a last SUMMARY
 * line: "SUMMARY perfd: N of M lines left out to fit ...". */
static void cut_to(const struct cut *c, size_t k)
{
	size_t j, len;
	char *note;

	for (j = 0; j < c->n; j++) {
		len = json_array_size(c->lists[j]);
		if (len <= k)
			continue;
		while (json_array_size(c->lists[j]) > k)
			json_array_remove(c->lists[j], json_array_size(c->lists[j]) - 1);
		note = xasprintf("SUMMARY perfd: %zu of %zu lines left out to fit the hub's bound "
				 "of %d bytes", len - k, len, WIRE_RECORD_MAX);
		json_array_append_new(c->lists[j], json_pack("{s:s,s:s}", "kind", "SUMMARY",
							      "text", note));
		free(note);
	}
}

/* Cuts the "lines" of each member of root's list key, the same count kept
 * of each (the most that fits), when the record would be over
 * WIRE_RECORD_MAX. A cut list keeps fewer lines than it had, its note
 * included, so the parser's RUNNER_LINES_MAX still holds. Cut so, a record
 * may still be over only by what is not lines (a build's log, a
 * comparison's captured output); the hub then answers 413, final. */
static void fit_lines(json_t *root, const char *key)
{
	json_t *list = json_object_get(root, key), *e;
	size_t total = dumped_size(root), all = 0, most = 0, lo, hi, mid, i, j, len;
	struct cut c = { 0 };

	if (total + RECORD_SLACK <= WIRE_RECORD_MAX)
		return;
	c.n = json_array_size(list);
	c.lists = xcalloc(c.n + 1, sizeof(*c.lists));
	c.sizes = xcalloc(c.n + 1, sizeof(*c.sizes));
	json_array_foreach(list, j, e) {
		c.lists[j] = json_object_get(e, "lines");
		len = json_array_size(c.lists[j]);
		c.sizes[j] = xcalloc(len + 1, sizeof(**c.sizes));
		for (i = 0; i < len; i++)
			c.sizes[j][i + 1] = c.sizes[j][i] +
					    dumped_size(json_array_get(c.lists[j], i)) + 1;
		all += c.sizes[j][len];
		most = len > most ? len : most;
	}
	/* The most lines per list that fit; none when even that is over. */
	lo = 0;
	hi = most;
	while (lo < hi) {
		mid = (lo + hi + 1) / 2;
		if (size_keeping(&c, total - all, mid) + RECORD_SLACK <= WIRE_RECORD_MAX)
			lo = mid;
		else
			hi = mid - 1;
	}
	cut_to(&c, lo);
	for (j = 0; j < c.n; j++)
		free(c.sizes[j]);
	free(c.sizes);
	free(c.lists);
}

/* ---- the comparison record (docs/hub.md, "The comparison record") ---- */

#define C(m) offsetof(struct wire_record, m)
#define P(m) offsetof(struct db_process, m)
#define STAGE(m) offsetof(struct db_stage, m)
#define FIGURE(m) offsetof(struct db_arm_stats, m)
#define STATES WIRE_WORDS("running", "done", "abandoned")
/* A host or a case: not empty either (check_record). */
#define NAME_WHAT "a string of 1 to 63 bytes"
#define VERDICTS WIRE_WORDS("faster", "slower", "unchanged", "unresolved", "invalid")

static json_t *metrics_build(const void *at)
{
	const struct db_process *p = at;
	json_t *m = json_object();
	size_t i;

	for (i = 0; i < p->nmetrics; i++)
		utf8_json_set(m, p->metrics[i].name, json_real_or_null(p->metrics[i].value));
	return m;
}

static int metrics_parse(void *at, json_t *m, const struct wire_at *a)
{
	struct db_process *p = at;
	struct wire_at am;
	const char *name;
	json_t *v;

	if (!json_is_object(m) || json_object_size(m) > RUNNER_METRICS_MAX)
		return wire_bad(a, "an object of at most 256 metrics");
	p->metrics = xcalloc(json_object_size(m) + 1, sizeof(*p->metrics));
	json_object_foreach(m, name, v) {
		if (!*name || strlen(name) > 255)
			return wire_bad(a, "metric names of 1 to 255 bytes");
		if (!json_is_null(v) && !(json_is_number(v) && isfinite(json_number_value(v)))) {
			snprintf(am.path, sizeof(am.path), "%.56s['%.32s']", a->path, name);
			return wire_bad(&am, "a number or null");
		}
		p->metrics[p->nmetrics].name = xstrdup(name);
		p->metrics[p->nmetrics++].value = json_is_null(v) ? NAN : json_number_value(v);
	}
	return 0;
}

/* The captured output, when the record carries it: each stream decoded,
 * at most WIRE_RECORD_OUTPUT_MAX bytes and no more than the process
 * wrote. wire_record_build adds it. */
static int output_parse(void *at, json_t *out, const struct wire_at *a)
{
	static const struct wire_field keys[] = {
		{ "stdout", .type = WIRE_CUSTOM }, { "stderr", .type = WIRE_CUSTOM }, { 0 },
	};
	struct db_process *p = at;
	struct strbuf sb = STRBUF_INIT;
	struct wire_at as;
	int i, r;

	r = wire_fields_check(keys, out, a);
	for (i = 0; i < 2 && r == 0; i++) {
		json_t *v = json_object_get(out, keys[i].name);

		as = wire_at_key(a, keys[i].name);
		if (!json_is_string(v)) {
			r = wire_bad(&as, "base64 text");
			break;
		}
		r = base64_decode(&sb, json_string_value(v), json_string_length(v),
				  WIRE_RECORD_OUTPUT_MAX);
		if (r < 0) {
			r = err_set(-EINVAL, "%s: %s", as.path, err_last());
			break;
		}
		if ((int64_t)sb.len > (i ? p->stderr_bytes : p->stdout_bytes)) {
			r = wire_bad(&as, "no more bytes than the process wrote");
			break;
		}
		if (i) {
			p->err_len = sb.len;
			p->err = strbuf_detach(&sb);
			p->stderr_kept = (int64_t)p->err_len;
		} else {
			p->out_len = sb.len;
			p->out = strbuf_detach(&sb);
			p->stdout_kept = (int64_t)p->out_len;
		}
	}
	strbuf_release(&sb);
	return r;
}

/* A RESULT or SUMMARY line of a process or a runner result. */
static const struct wire_field line_fields[] = {
	{ "kind", WIRE_WORD, .offset = offsetof(struct db_line, kind),
	  .words = WIRE_WORDS("RESULT", "SUMMARY") },
	{ "text", WIRE_TEXT, .offset = offsetof(struct db_line, text), .hi = TEXT_MAX },
	{ 0 },
};
static const struct wire_field line_entry = { "lines[]", WIRE_OBJECT, .sub = line_fields };
static const struct wire_field note_entry = { "[]", WIRE_TEXT, .hi = TEXT_MAX };

static const struct wire_field process_fields[] = {
	{ "seq", WIRE_INT, .offset = P(seq), .lo = 1, .hi = PROCESSES_MAX },
	{ "arm", WIRE_WORD, .offset = P(arm), .size = 4, .words = WIRE_WORDS("old", "new") },
	{ "pair", WIRE_INT, .offset = P(pair), .lo = 0, .hi = PAIRS_MAX },
	{ "warmup", WIRE_BOOL, .offset = P(warmup) },
	{ "state", WIRE_ENUM, .offset = P(state), .words = STATES },
	{ "started_at", WIRE_TIME, .offset = P(started_at) },
	{ "ended_at", WIRE_TIME, WIRE_NULL, .offset = P(ended_at) },
	{ "exit", WIRE_INT, WIRE_NULL, P(exit_code), .lo = 0, .hi = 255 },
	{ "signal", WIRE_INT, .offset = P(signal), .lo = 0, .hi = 128 },
	{ "timed_out", WIRE_BOOL, .offset = P(timed_out) },
	{ "spawn_error", WIRE_TEXT, WIRE_NULL, P(spawn_error), .hi = TEXT_MAX },
	{ "wall_ms", WIRE_REAL, WIRE_NULL, .offset = P(wall_ms) },
	{ "user_ms", WIRE_REAL, WIRE_NULL, .offset = P(user_ms) },
	{ "sys_ms", WIRE_REAL, WIRE_NULL, .offset = P(sys_ms) },
	{ "maxrss_kb", WIRE_I64, .offset = P(maxrss_kb), .lo = 0, .hi = INT64_MAX },
	{ "cpu_wait_ms", WIRE_REAL, WIRE_OPTIONAL | WIRE_FROM, P(cpu_wait_ms), .lo = 0,
	  .since = "schema 21" },
	{ "cpus", WIRE_TEXT, WIRE_NULL, P(cpus), .hi = 4096 },
	{ "digest", WIRE_TEXT, WIRE_NULL, P(digest), .hi = TEXT_MAX },
	{ "record_valid", WIRE_BOOL, .offset = P(record_valid) },
	{ "metrics", WIRE_CUSTOM, .what = "an object of at most 256 metrics, each a number or null",
	  .build = metrics_build, .parse = metrics_parse },
	{ "lines", WIRE_LIST, .offset = P(lines), .size = sizeof(struct db_line),
	  .count = P(nlines), .hi = RUNNER_LINES_MAX, .sub = &line_entry },
	{ "protocol_errors", WIRE_LIST, .offset = P(protocol_errors), .size = sizeof(char *),
	  .count = P(nprotocol_errors), .hi = RUNNER_ERRORS_MAX, .sub = &note_entry },
	{ "fault", WIRE_TEXT, WIRE_NULL, P(fault), .hi = TEXT_MAX },
	{ "fault_watch", WIRE_TEXT, WIRE_NULL, P(fault_watch), .hi = TEXT_MAX },
	{ "stdout_bytes", WIRE_I64, .offset = P(stdout_bytes), .lo = 0, .hi = INT64_MAX },
	{ "stderr_bytes", WIRE_I64, .offset = P(stderr_bytes), .lo = 0, .hi = INT64_MAX },
	{ "valid", WIRE_BOOL, .offset = P(valid) },
	{ "invalid_reason", WIRE_TEXT, WIRE_NULL, P(invalid_reason), .hi = TEXT_MAX },
	/* After stdout_bytes and stderr_bytes, which bound it. */
	{ "output", WIRE_CUSTOM, WIRE_OPTIONAL,
	  .what = "{\"stdout\", \"stderr\"}: base64 of at most 1 MiB each", .parse = output_parse },
	{ 0 },
};
static const struct wire_field process_entry = {
	"processes[]", WIRE_OBJECT, .sub = process_fields,
};

static const struct wire_field settings_fields[] = {
	{ "case", WIRE_TEXT, .offset = C(c.case_name), .hi = NAME_MAX_BYTES, .what = NAME_WHAT },
	{ "kind", WIRE_FLAG, .offset = C(c.aa), .words = WIRE_WORDS("compare", "aa") },
	{ "pairs", WIRE_INT, .offset = C(c.pairs), .lo = 1, .hi = PAIRS_MAX },
	{ "max_pairs", WIRE_INT, .offset = C(c.max_pairs), .lo = 1, .hi = PAIRS_MAX },
	{ "warmup", WIRE_INT, .offset = C(c.warmup), .lo = 0, .hi = WARMUP_MAX },
	{ "better", WIRE_FLAG, .offset = C(c.higher_better),
	  .words = WIRE_WORDS("lower", "higher") },
	{ "timeout_s", WIRE_REAL, .offset = C(c.timeout_s) },
	{ "min_effect", WIRE_REAL, .offset = C(c.min_effect) },
	{ "noise", WIRE_REAL, .offset = C(c.noise) },
	{ "metric_requested", WIRE_TEXT, WIRE_NULL, C(c.metric_requested), .hi = 255 },
	{ "fingerprint", WIRE_TEXT, WIRE_NULL, C(c.fingerprint), .hi = JSON_TEXT_MAX },
	{ "args", WIRE_TEXT, .offset = C(c.args_json), .hi = JSON_TEXT_MAX, .dflt = "{}" },
	/* Only where a budget set max_pairs: a record without one stays what
	 * a hub before the key takes. */
	{ "time_budget_s", WIRE_REAL, WIRE_OPTIONAL | WIRE_ABOVE, C(c.time_budget_s), .lo = 0,
	  .hi = CONFIG_SECONDS_MAX, .what = "a number of seconds above 0 and at most 604800" },
	{ 0 },
};

/* Each arm's program and its manifest's hash. */
#define ARTIFACT_FIELDS(arm) \
	{ "path", WIRE_TEXT, .offset = C(c.arm.path), .hi = 4096, .dflt = "" }, \
	{ "size", WIRE_I64, .offset = C(c.arm.size), .lo = 0, .hi = INT64_MAX }, \
	{ "sha256", WIRE_HASH, .offset = C(c.arm.sha256), .size = 65 }, \
	{ "manifest", WIRE_HASH, WIRE_NULL, .offset = C(c.arm##_manifest) }, \
	{ 0 }
static const struct wire_field old_fields[] = { ARTIFACT_FIELDS(old) };
static const struct wire_field new_fields[] = { ARTIFACT_FIELDS(new) };

static const struct wire_field figure_fields[] = {
	{ "median", WIRE_REAL, WIRE_NULL, .offset = FIGURE(median) },
	{ "min", WIRE_REAL, WIRE_NULL, .offset = FIGURE(min) },
	{ "max", WIRE_REAL, WIRE_NULL, .offset = FIGURE(max) },
	{ "spread", WIRE_REAL, WIRE_NULL, .offset = FIGURE(spread) },
	{ 0 },
};

static const struct wire_field gain_fields[] = {
	{ "median", WIRE_REAL, .offset = C(c.summary.gain_median) },
	{ "min", WIRE_REAL, .offset = C(c.summary.gain_min) },
	{ "max", WIRE_REAL, .offset = C(c.summary.gain_max) },
	{ 0 },
};

/* A pairs-median/2.1 or /2.2 stage's figures beyond the sign test's are
 * each a member of its own only where the stage has it (docs/rule.md). */
#define STAGE_FIGURE(name, version) \
	{ #name, WIRE_REAL, WIRE_OPTIONAL | WIRE_NULL, STAGE(name), .since = version }
static const struct wire_field stage_fields[] = {
	{ "pairs", WIRE_INT, .offset = STAGE(pairs), .lo = 1, .hi = PAIRS_MAX },
	{ "test", WIRE_WORD, .offset = STAGE(test), .size = 16,
	  .words = WIRE_WORDS("sign", "calibrated", "sign+calibrated") },
	{ "calibration_gains", WIRE_INT, .offset = STAGE(calibration_gains), .lo = 0,
	  .hi = RUNNER_CALIBRATION_MAX_GAINS },
	{ "alpha", WIRE_REAL, .offset = STAGE(alpha) },
	{ "p_faster", WIRE_REAL, WIRE_NULL, .offset = STAGE(p_faster) },
	{ "p_slower", WIRE_REAL, WIRE_NULL, .offset = STAGE(p_slower) },
	{ "p_below", WIRE_REAL, WIRE_NULL, .offset = STAGE(p_below) },
	{ "p_above", WIRE_REAL, WIRE_NULL, .offset = STAGE(p_above) },
	{ "verdict", WIRE_WORD, .offset = STAGE(verdict), .size = 16, .words = VERDICTS },
	STAGE_FIGURE(cal_p_faster, "pairs-median/2.1"),
	STAGE_FIGURE(cal_p_slower, "pairs-median/2.1"),
	STAGE_FIGURE(cal_p_below, "pairs-median/2.1"),
	STAGE_FIGURE(cal_p_above, "pairs-median/2.1"),
	STAGE_FIGURE(gate_p, "pairs-median/2.1"),
	STAGE_FIGURE(spread_ratio, "pairs-median/2.1"),
	STAGE_FIGURE(load_p, "pairs-median/2.2"),
	STAGE_FIGURE(load_above, "pairs-median/2.2"),
	{ 0 },
};
static const struct wire_field stage_entry = { "stages[]", WIRE_OBJECT, .sub = stage_fields };
static const struct wire_field pair_gain_entry = { "pair_gains[]", WIRE_REAL, .flags = WIRE_NULL };

static const struct wire_field summary_fields[] = {
	{ "metric", WIRE_TEXT, WIRE_NULL, C(c.metric), .hi = 255 },
	{ "verdict", WIRE_WORD, .offset = C(c.summary.verdict), .size = 16, .words = VERDICTS },
	{ "gain", WIRE_OBJECT, WIRE_NULL | WIRE_HAS, .has = C(c.summary.has_gain),
	  .sub = gain_fields },
	{ "old", WIRE_OBJECT, WIRE_NULL | WIRE_HAS, C(c.summary.old), .has = C(c.summary.old.set),
	  .sub = figure_fields },
	{ "new", WIRE_OBJECT, WIRE_NULL | WIRE_HAS, C(c.summary.new), .has = C(c.summary.new.set),
	  .sub = figure_fields },
	{ "pair_gains", WIRE_LIST, .offset = C(c.summary.pair_gains), .size = sizeof(double),
	  .count = C(c.summary.npair_gains), .hi = PAIRS_MAX, .sub = &pair_gain_entry },
	{ "digests_equal", WIRE_BOOL, .offset = C(c.summary.digests_equal) },
	{ "pairs_run", WIRE_INT, WIRE_NULL, C(c.summary.pairs_run), .lo = 1, .hi = PAIRS_MAX },
	{ "stages", WIRE_LIST, .offset = C(c.summary.stages), .size = sizeof(struct db_stage),
	  .count = C(c.summary.nstages), .hi = RUNNER_STAGES_MAX, .sub = &stage_entry },
	{ "flags", WIRE_LIST, .offset = C(c.summary.flags), .size = sizeof(char *),
	  .count = C(c.summary.nflags), .hi = NOTES_MAX, .sub = &note_entry },
	{ "reasons", WIRE_LIST, .offset = C(c.summary.reasons), .size = sizeof(char *),
	  .count = C(c.summary.nreasons), .hi = NOTES_MAX, .sub = &note_entry },
	{ 0 },
};

static const struct wire_field calibration_entry = {
	"calibration[]", WIRE_I64, .offset = offsetof(struct db_calibration, comparison_id),
	.lo = 1, .hi = INT64_MAX, .what = "a comparison id (a whole number from 1)",
};

const struct wire_field wire_record_fields[] = {
	{ "format", WIRE_CONST, .words = WIRE_WORDS(WIRE_RECORD_FORMAT) },
	{ "host", WIRE_TEXT, .offset = C(c.host), .hi = NAME_MAX_BYTES, .what = NAME_WHAT },
	{ "id", WIRE_I64, .offset = C(origin_id), .lo = 1, .hi = INT64_MAX },
	{ "sha256", WIRE_HASH, WIRE_SEALED, C(sha256), .size = 65 },
	{ "state", WIRE_ENUM, .offset = C(c.state), .words = STATES },
	{ "rule", WIRE_TEXT, .offset = C(c.rule), .hi = 255 },
	{ "created_at", WIRE_TIME, .offset = C(c.created_at) },
	{ "finished_at", WIRE_TIME, WIRE_NULL, .offset = C(c.finished_at) },
	{ "settings", WIRE_OBJECT, .sub = settings_fields },
	{ "old", WIRE_OBJECT, .sub = old_fields },
	{ "new", WIRE_OBJECT, .sub = new_fields },
	{ "calibration", WIRE_LIST, .offset = C(c.calibration),
	  .size = sizeof(struct db_calibration), .count = C(c.ncalibration),
	  .hi = RUNNER_CALIBRATION_MAX_GAINS, .sub = &calibration_entry },
	/* The ids of its job and builds on its host; null for none. */
	{ "job", WIRE_I64, WIRE_NULL, C(origin_job), .lo = 1, .hi = INT64_MAX },
	{ "base_build", WIRE_I64, WIRE_NULL, C(origin_base_build), .lo = 1, .hi = INT64_MAX },
	{ "head_build", WIRE_I64, WIRE_NULL, C(origin_head_build), .lo = 1, .hi = INT64_MAX },
	{ "processes", WIRE_LIST, .offset = C(c.processes), .size = sizeof(struct db_process),
	  .count = C(c.nprocesses), .hi = PROCESSES_MAX, .sub = &process_entry },
	{ "summary", WIRE_OBJECT, WIRE_NULL | WIRE_HAS, .has = C(c.has_summary),
	  .sub = summary_fields },
	{ 0 },
};

int wire_record_build(struct strbuf *out, const struct db_comparison *c, bool with_output)
{
	struct wire_record rec = {
		.origin_id = c->id, .origin_job = c->job_id, .origin_base_build = c->base_build,
		.origin_head_build = c->head_build, .c = *c,
	};
	json_t *root = wire_fields_build(wire_record_fields, &rec);
	json_t *procs = json_object_get(root, "processes");
	const struct db_process *p;
	size_t i;
	int r;

	for (i = 0; with_output && i < c->nprocesses; i++) {
		p = &c->processes[i];
		if (p->out || p->err)
			json_object_set_new(json_array_get(procs, i), "output",
					    json_pack("{s:o,s:o}", "stdout", b64(p->out, p->out_len),
						      "stderr", b64(p->err, p->err_len)));
	}
	fit_lines(root, "processes");
	r = finish_record(out, root);
	json_decref(root);
	return r;
}

/* What the rows cannot say: a host and a case not empty, args an object's
 * text, the processes in execution order with the warm-ups at pair 0. */
static int check_record(struct wire_record *rec)
{
	struct db_comparison *c = &rec->c;
	json_t *args = json_loads(c->args_json, 0, NULL);
	bool is_object = json_is_object(args);
	struct wire_at top = { "" }, a;
	size_t i;

	json_decref(args);
	if (!*c->host)
		return wire_bad(&top, "a host of 1 to 63 bytes");
	a = wire_at_key(&top, "settings");
	if (!*c->case_name)
		return wire_bad(&a, "a case of 1 to 63 bytes");
	if (!is_object)
		return err_set(-EINVAL, "settings.args: expected the text of a JSON object");
	for (i = 0; i < c->nprocesses; i++) {
		a = wire_at_index(&(struct wire_at){ "processes" }, i);
		if (c->processes[i].seq != (int)i + 1)
			return err_set(-EINVAL, "%s.seq: expected %zu (processes in execution order)",
				       a.path, i + 1);
		if (c->processes[i].warmup != (c->processes[i].pair == 0))
			return err_set(-EINVAL, "%s: a warm-up has pair 0, and only a warm-up", a.path);
	}
	return 0;
}

static int parse_record(void *ctx, json_t *root)
{
	struct wire_record *rec = ctx;
	struct db_comparison *c = &rec->c;
	struct wire_at top = { "" };
	int r = wire_fields_parse(rec, wire_record_fields, root, &top);

	if (r == 0)
		r = check_record(rec);
	if (r < 0 || !c->has_summary)
		return r;
	if (c->metric)
		c->summary.metric = xstrdup(c->metric);
	/* Parallel to the processes, as db_comparison_load fills them. */
	db_summary_validity_fill(c);
	return 0;
}

int wire_record_parse(struct wire_record *out, const char *text, size_t len)
{
	memset(out, 0, sizeof(*out));
	return parse_hashed(text, len, out, out->sha256, parse_record);
}

void wire_record_release(struct wire_record *r)
{
	if (!r)
		return;
	db_comparison_release(&r->c);
	memset(r, 0, sizeof(*r));
}

/* ---- a job's update (docs/hub.md, "The job record") ---- */

#define JOB(m) offsetof(struct wire_job_record, m)

/* A history job says what it is and its one case (docs/history.md). */
static bool job_is_history(const void *rec)
{
	return ((const struct wire_job_record *)rec)->job.kind != DB_JOB_HEAD;
}

const struct wire_field wire_job_fields[] = {
	{ "format", WIRE_CONST, .words = WIRE_WORDS(WIRE_JOB_FORMAT) },
	{ "host", WIRE_HOST, .offset = JOB(job.host) },
	{ "id", WIRE_I64, .offset = JOB(job.origin_id), .lo = 1, .hi = INT64_MAX },
	{ "seq", WIRE_I64, .offset = JOB(job.seq), .lo = 1, .hi = INT64_MAX },
	{ "sha256", WIRE_HASH, WIRE_SEALED, JOB(sha256), .size = 65 },
	{ "head", WIRE_TEXT, .offset = JOB(job.head), .size = 256, .lo = 1, .hi = 255 },
	{ "commit", WIRE_COMMIT, .offset = JOB(job.commit) },
	{ "base", WIRE_COMMIT, WIRE_NULL, .offset = JOB(job.base) },
	{ "subject", WIRE_TEXT, WIRE_NULL, JOB(job.subject), .hi = TEXT_MAX },
	{ "state", WIRE_ENUM, .offset = JOB(job.state),
	  .words = WIRE_WORDS("queued", "running", "done", "failed") },
	{ "detail", WIRE_TEXT, WIRE_NULL, JOB(job.detail), .hi = TEXT_MAX },
	{ "created_at", WIRE_TIME, .offset = JOB(job.created_at) },
	{ "started_at", WIRE_TIME, WIRE_NULL, .offset = JOB(job.started_at) },
	{ "finished_at", WIRE_TIME, WIRE_NULL, .offset = JOB(job.finished_at) },
	{ "kind", WIRE_ENUM, WIRE_OPTIONAL, JOB(job.kind), .present = job_is_history,
	  .words = WIRE_WORDS("head", "span", "confirm", "bisect") },
	{ "case", WIRE_TEXT, WIRE_OPTIONAL | WIRE_NULL, JOB(job.case_name), .size = 64, .hi = 63,
	  .present = job_is_history },
	/* A done job says how many comparisons it made, so that the hub
	 * counts its status only once they are all in. */
	{ "comparisons", WIRE_I64, WIRE_OPTIONAL, JOB(job.comparisons), .lo = 0,
	  .hi = WIRE_JOB_COMPARISONS_MAX, .since = "schema 18" },
	{ 0 },
};

int wire_job_record_build(struct strbuf *out, const struct db_job *j, const char *host)
{
	struct wire_job_record rec = { .job = *j };

	snprintf(rec.job.host, sizeof(rec.job.host), "%s", host);
	rec.job.origin_id = j->id;
	return build_sealed(out, wire_job_fields, &rec);
}

static int parse_job(void *rec, json_t *root)
{
	struct wire_at top = { "" };

	return wire_fields_parse(rec, wire_job_fields, root, &top);
}

int wire_job_record_parse(struct wire_job_record *out, const char *text, size_t len)
{
	memset(out, 0, sizeof(*out));
	return parse_hashed(text, len, out, out->sha256, parse_job);
}

void wire_job_record_release(struct wire_job_record *r)
{
	if (!r)
		return;
	db_job_release(&r->job);
	memset(r, 0, sizeof(*r));
}

/* ---- a host's heartbeat (docs/hub.md, "The heartbeat") ---- */

#define HB(m) offsetof(struct wire_heartbeat, m)
#define HOLD(m) offsetof(struct wire_hold, m)
#define GREEN(m) offsetof(struct wire_greenlight, m)
#define REPLY(m) offsetof(struct wire_heartbeat_reply, m)

/* A heartbeat's sandbox (wire.h): a name of letters, digits and '-', or
 * "none", or "none: " and why. */
static int sandbox_parse(void *at, json_t *v, const struct wire_at *path)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i;
	bool ok = s && n > 0 && n <= WIRE_SANDBOX_MAX;

	if (ok && strncmp(s, "none", 4)) {
		ok = n <= WIRE_SANDBOX_NAME_MAX;
		for (i = 0; ok && i < n; i++)
			ok = isalnum((unsigned char)s[i]) || s[i] == '-';
	} else if (ok) {
		ok = n == 4 || (n > 6 && !strncmp(s, "none: ", 6));
	}
	if (!ok)
		return wire_bad(path, "a sandbox's name (letters, digits, '-'; at most 32 bytes), "
				"or 'none: ' and why (at most 1024 bytes)");
	*(char **)at = xstrndup(s, n);
	return 0;
}

static json_t *sandbox_build(const void *at)
{
	return json_text(*(char *const *)at);
}

static bool has_sandbox(const void *base)
{
	return ((const struct wire_heartbeat *)base)->sandbox != NULL;
}

static bool has_holds(const void *base)
{
	return ((const struct wire_heartbeat *)base)->nholds > 0;
}

static const struct wire_field hold_fields[] = {
	{ "id", WIRE_I64, .offset = HOLD(id), .lo = 1, .hi = INT64_MAX },
	{ "why", WIRE_ENUM, .offset = HOLD(why), .words = db_hold_why_words },
	{ "step", WIRE_ENUM, .offset = HOLD(step), .words = db_hold_step_words },
	{ "commit", WIRE_COMMIT, WIRE_NULL, .offset = HOLD(commit) },
	{ "tree", WIRE_COMMIT, WIRE_NULL, .offset = HOLD(tree) },
	{ "since", WIRE_TIME, .offset = HOLD(since) },
	{ "text", WIRE_TEXT, .offset = HOLD(text), .hi = WIRE_HOLD_TEXT_MAX, .dflt = "" },
	{ 0 },
};
static const struct wire_field hold_entry = { "holds[]", WIRE_OBJECT, .sub = hold_fields };

/* The quarantine's members lie in the heartbeat itself. */
static const struct wire_field quarantine_fields[] = {
	{ "fault", WIRE_TEXT, .offset = HB(fault), .hi = TEXT_MAX, .dflt = "" },
	{ "since", WIRE_TIME, WIRE_NULL, .offset = HB(since) },
	{ 0 },
};

const struct wire_field wire_heartbeat_fields[] = {
	{ "format", WIRE_CONST, .words = WIRE_WORDS(WIRE_HEARTBEAT_FORMAT) },
	{ "host", WIRE_HOST, .offset = HB(host) },
	{ "seq", WIRE_I64, .offset = HB(seq), .lo = 1, .hi = INT64_MAX },
	{ "sent_at", WIRE_TIME, .offset = HB(sent_at) },
	{ "state", WIRE_WORD, .offset = HB(state), .size = 16,
	  .words = WIRE_WORDS("idle", "polling", "building", "measuring", "calibrating") },
	{ "job", WIRE_I64, WIRE_NULL, HB(job), .lo = 1, .hi = INT64_MAX },
	{ "backlog", WIRE_I64, .offset = HB(backlog), .lo = 0, .hi = INT64_MAX },
	{ "fingerprint", WIRE_TEXT, WIRE_NULL, HB(fingerprint), .hi = JSON_TEXT_MAX },
	{ "quarantine", WIRE_OBJECT, WIRE_NULL | WIRE_HAS, 0, .has = HB(quarantined),
	  .sub = quarantine_fields },
	{ "sandbox", WIRE_CUSTOM, WIRE_OPTIONAL, HB(sandbox), .present = has_sandbox,
	  .build = sandbox_build, .parse = sandbox_parse, .since = "schema 17",
	  .what = "a sandbox's name, or 'none: ' and why" },
	{ "kind", WIRE_TEXT, WIRE_OPTIONAL, HB(kind), .hi = WIRE_KIND_MAX, .since = "schema 23" },
	{ "holds", WIRE_LIST, WIRE_OPTIONAL, HB(holds), .size = sizeof(struct wire_hold),
	  .count = HB(nholds), .hi = WIRE_HOLDS_MAX, .sub = &hold_entry, .present = has_holds,
	  .since = "schema 23" },
	{ 0 },
};

int wire_heartbeat_build(struct strbuf *out, const struct wire_heartbeat *h)
{
	struct wire_heartbeat cut = *h;
	json_t *root;

	if (cut.nholds > WIRE_HOLDS_MAX)
		cut.nholds = WIRE_HOLDS_MAX;
	root = wire_fields_build(wire_heartbeat_fields, &cut);
	canonical_write(out, root);
	strbuf_addch(out, '\n');
	json_decref(root);
	return 0;
}

static int parse_heartbeat(void *rec, json_t *root)
{
	struct wire_at top = { "" };

	return wire_fields_parse(rec, wire_heartbeat_fields, root, &top);
}

int wire_heartbeat_parse(struct wire_heartbeat *out, const char *text, size_t len)
{
	memset(out, 0, sizeof(*out));
	return parse_hashed(text, len, out, NULL, parse_heartbeat);
}

void wire_heartbeat_release(struct wire_heartbeat *h)
{
	size_t i;

	if (!h)
		return;
	free(h->fingerprint);
	free(h->fault);
	free(h->sandbox);
	free(h->kind);
	for (i = 0; i < h->nholds; i++)
		free(h->holds[i].text);
	free(h->holds);
	memset(h, 0, sizeof(*h));
}

static const struct wire_field greenlight_fields[] = {
	{ "hold", WIRE_I64, .offset = GREEN(hold), .lo = 1, .hi = INT64_MAX },
	{ "by", WIRE_TEXT, .offset = GREEN(by), .size = sizeof(((struct wire_greenlight *)0)->by),
	  .hi = sizeof(((struct wire_greenlight *)0)->by) - 1 },
	{ "pr", WIRE_INT, .offset = GREEN(pr), .lo = 0, .hi = INT32_MAX },
	{ 0 },
};
static const struct wire_field greenlight_entry = {
	"greenlit[]", WIRE_OBJECT, .sub = greenlight_fields,
};

/* The hub's answer to a heartbeat. An older hub's has no greenlit. */
const struct wire_field wire_heartbeat_reply_fields[] = {
	{ "host", WIRE_HOST, WIRE_OPTIONAL, .offset = REPLY(host) },
	{ "seq", WIRE_I64, WIRE_OPTIONAL, REPLY(seq), .lo = 1, .hi = INT64_MAX },
	{ "stored", WIRE_BOOL, .offset = REPLY(stored) },
	{ "greenlit", WIRE_LIST, WIRE_OPTIONAL, REPLY(greenlit),
	  .size = sizeof(struct wire_greenlight), .count = REPLY(ngreenlit),
	  .hi = WIRE_GREENLIT_MAX, .sub = &greenlight_entry, .since = "schema 23" },
	{ 0 },
};

int wire_heartbeat_reply_build(struct strbuf *out, const struct wire_heartbeat_reply *r)
{
	json_t *root = wire_fields_build(wire_heartbeat_reply_fields, r);

	canonical_write(out, root);
	json_decref(root);
	return 0;
}

static int parse_heartbeat_reply(void *rec, json_t *root)
{
	struct wire_at top = { "" };

	return wire_fields_parse(rec, wire_heartbeat_reply_fields, root, &top);
}

int wire_heartbeat_reply_parse(struct wire_heartbeat_reply *out, const char *text, size_t len)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = parse_hashed(text, len, out, NULL, parse_heartbeat_reply);
	return r == -EINVAL ? -EPROTO : r;
}

void wire_heartbeat_reply_release(struct wire_heartbeat_reply *r)
{
	if (!r)
		return;
	free(r->greenlit);
	memset(r, 0, sizeof(*r));
}

/* ---- a build with its runner results (docs/hub.md, "The build record") ---- */

#define ARTIFACTS_MAX 4096
#define RESULTS_MAX 1024
#define BUILD(m) offsetof(struct wire_build_record, m)
#define RESULT(m) offsetof(struct db_runner_result, m)
#define BUILT(m) offsetof(struct db_build_artifact, m)

static const struct wire_field result_fields[] = {
	{ "id", WIRE_I64, .offset = RESULT(id), .lo = 1, .hi = INT64_MAX },
	{ "runner", WIRE_TEXT, .offset = RESULT(runner), .size = 64, .lo = 1, .hi = 63 },
	{ "chunk", WIRE_INT, .offset = RESULT(chunk), .lo = 1, .hi = 4096 },
	{ "chunks", WIRE_INT, .offset = RESULT(chunks), .lo = 1, .hi = 4096 },
	{ "binary_sha256", WIRE_HASH, WIRE_NULL, .offset = RESULT(binary_sha256) },
	{ "started_at", WIRE_TIME, .offset = RESULT(started_at) },
	{ "ended_at", WIRE_TIME, WIRE_NULL, .offset = RESULT(ended_at) },
	{ "exit", WIRE_INT, .offset = RESULT(exit_code), .lo = -1, .hi = 255 },
	{ "signal", WIRE_INT, .offset = RESULT(signal), .lo = 0, .hi = 128 },
	{ "timed_out", WIRE_BOOL, .offset = RESULT(timed_out) },
	{ "elapsed_ms", WIRE_REAL, WIRE_NULL, .offset = RESULT(elapsed_ms) },
	{ "spawn_error", WIRE_TEXT, WIRE_NULL, RESULT(spawn_error), .hi = TEXT_MAX },
	{ "lines", WIRE_LIST, .offset = RESULT(lines), .size = sizeof(struct db_line),
	  .count = RESULT(nlines), .hi = RUNNER_LINES_MAX, .sub = &line_entry },
	{ 0 },
};
static const struct wire_field result_entry = {
	"runner_results[]", WIRE_OBJECT, .sub = result_fields,
};

static const struct wire_field built_fields[] = {
	{ "name", WIRE_TEXT, .offset = BUILT(name), .hi = 4096 },
	{ "path", WIRE_TEXT, .offset = BUILT(artifact.path), .hi = 4096, .dflt = "" },
	{ "size", WIRE_I64, .offset = BUILT(artifact.size), .lo = 0, .hi = INT64_MAX },
	{ "sha256", WIRE_HASH, .offset = BUILT(artifact.sha256), .size = 65 },
	{ 0 },
};
static const struct wire_field built_entry = { "artifacts[]", WIRE_OBJECT, .sub = built_fields };

static json_t *log_build(const void *at)
{
	const struct db_build *b = at;

	return b64(b->log, b->log_len);
}

/* The build's log: base64 of at most CHILD_CAPTURE_DEFAULT bytes. */
static int log_parse(void *at, json_t *v, const struct wire_at *a)
{
	struct db_build *b = at;
	struct strbuf log = STRBUF_INIT;
	int r = 0;

	if (!json_is_string(v))
		r = wire_bad(a, "base64 text");
	else if (base64_decode(&log, json_string_value(v), json_string_length(v),
			       CHILD_CAPTURE_DEFAULT) < 0)
		r = err_set(-EINVAL, "%s: %s", a->path, err_last());
	b->log_len = log.len;
	b->log = strbuf_detach(&log);
	return r;
}

const struct wire_field wire_build_fields[] = {
	{ "format", WIRE_CONST, .words = WIRE_WORDS(WIRE_BUILD_FORMAT) },
	{ "host", WIRE_HOST, .offset = BUILD(build.host) },
	{ "id", WIRE_I64, .offset = BUILD(origin_id), .lo = 1, .hi = INT64_MAX },
	{ "sha256", WIRE_HASH, WIRE_SEALED, BUILD(sha256), .size = 65 },
	{ "commit", WIRE_COMMIT, .offset = BUILD(build.commit) },
	{ "tree", WIRE_COMMIT, .offset = BUILD(build.tree) },
	{ "recipe", WIRE_HASH, .offset = BUILD(build.recipe_hash), .size = 65 },
	/* A running build is not sent. */
	{ "state", WIRE_ENUM, .offset = BUILD(build.state), .lo = 1, .hi = 2,
	  .words = WIRE_WORDS("running", "done", "failed", "abandoned") },
	{ "dir", WIRE_TEXT, .offset = BUILD(build.dir), .hi = 4096, .dflt = "" },
	{ "started_at", WIRE_TIME, .offset = BUILD(build.started_at) },
	{ "finished_at", WIRE_TIME, WIRE_NULL, .offset = BUILD(build.finished_at) },
	{ "exit", WIRE_INT, .offset = BUILD(build.exit_code), .lo = -1, .hi = 255 },
	{ "signal", WIRE_INT, .offset = BUILD(build.signal), .lo = 0, .hi = 128 },
	{ "timed_out", WIRE_BOOL, .offset = BUILD(build.timed_out) },
	{ "wall_ms", WIRE_REAL, WIRE_NULL, .offset = BUILD(build.wall_ms) },
	{ "log", WIRE_CUSTOM, .offset = BUILD(build), .what = "base64 text of at most 1 MiB",
	  .build = log_build, .parse = log_parse },
	{ "log_bytes", WIRE_I64, .offset = BUILD(build.log_bytes), .lo = 0, .hi = INT64_MAX },
	{ "toolchain", WIRE_TEXT, WIRE_NULL, BUILD(build.toolchain), .hi = TEXT_MAX },
	{ "fingerprint", WIRE_TEXT, WIRE_NULL, BUILD(build.fingerprint), .hi = JSON_TEXT_MAX },
	{ "detail", WIRE_TEXT, WIRE_NULL, BUILD(build.detail), .hi = TEXT_MAX },
	{ "artifacts", WIRE_LIST, .offset = BUILD(build.artifacts),
	  .size = sizeof(struct db_build_artifact), .count = BUILD(build.nartifacts),
	  .hi = ARTIFACTS_MAX, .sub = &built_entry },
	{ "runner_results", WIRE_LIST, .offset = BUILD(results),
	  .size = sizeof(struct db_runner_result), .count = BUILD(nresults), .hi = RESULTS_MAX,
	  .sub = &result_entry },
	{ 0 },
};

int wire_build_record_build(struct strbuf *out, const struct db_build *b, const char *host,
			      const struct db_runner_result *rs, size_t n)
{
	struct wire_build_record rec = {
		.origin_id = b->id, .build = *b, .results = (struct db_runner_result *)rs,
		.nresults = n,
	};
	json_t *root;
	int r;

	snprintf(rec.build.host, sizeof(rec.build.host), "%s", host);
	root = wire_fields_build(wire_build_fields, &rec);
	fit_lines(root, "runner_results");
	r = finish_record(out, root);
	json_decref(root);
	return r;
}

static int parse_build(void *ctx, json_t *root)
{
	struct wire_build_record *rec = ctx;
	struct wire_at top = { "" };
	json_t *copy;
	size_t i;
	int r;

	r = wire_fields_parse(rec, wire_build_fields, root, &top);
	if (r == 0 && rec->build.log_bytes < (int64_t)rec->build.log_len)
		r = err_set(-EINVAL, "log_bytes: expected a whole number from %zu (the log's bytes)",
			    rec->build.log_len);
	if (r < 0)
		return r;
	/* The results' ids are the host's. */
	rec->results_origin = xcalloc(rec->nresults + 1, sizeof(*rec->results_origin));
	for (i = 0; i < rec->nresults; i++) {
		rec->results_origin[i] = rec->results[i].id;
		rec->results[i].id = 0;
		rec->results[i].state = DB_STATE_DONE;
	}
	/* The build's own hash, its runner results left out: what a later
	 * record of the same build, with more results, must still match. */
	copy = json_copy(root);
	json_object_del(copy, "runner_results");
	r = canonical_hash(rec->build_sha256, copy);
	json_decref(copy);
	return r;
}

int wire_build_record_parse(struct wire_build_record *out, const char *text, size_t len)
{
	memset(out, 0, sizeof(*out));
	return parse_hashed(text, len, out, out->sha256, parse_build);
}

void wire_build_record_release(struct wire_build_record *r)
{
	size_t i;

	if (!r)
		return;
	db_build_release(&r->build);
	for (i = 0; i < r->nresults; i++)
		db_runner_result_release(&r->results[i]);
	free(r->results);
	free(r->results_origin);
	memset(r, 0, sizeof(*r));
}

/* ---- an alert's update (docs/hub.md, "The alert record") ---- */

#define FINDING(m) offsetof(struct db_alert_finding, m)
#define ALERT(m) offsetof(struct wire_alert_record, m)

static const struct wire_field finding_fields[] = {
	{ "what", WIRE_FLAG, .offset = FINDING(commit), .words = WIRE_WORDS("range", "commit") },
	{ "lo", WIRE_COMMIT, .offset = FINDING(lo) },
	{ "hi", WIRE_COMMIT, .offset = FINDING(hi) },
	{ "commits", WIRE_INT, .offset = FINDING(commits), .lo = 1, .hi = WIRE_ALERT_COMMITS_MAX },
	{ "gain", WIRE_REAL, WIRE_NULL | WIRE_HAS, FINDING(gain), .has = FINDING(has_gain) },
	{ "comparison", WIRE_I64, WIRE_NULL, FINDING(comparison_id), .lo = 1, .hi = INT64_MAX },
	{ "note", WIRE_TEXT, WIRE_NULL, FINDING(note), .hi = TEXT_MAX },
	{ 0 },
};

static const struct wire_field finding_entry = {
	"findings[]", WIRE_OBJECT, .sub = finding_fields,
};

const struct wire_field wire_alert_fields[] = {
	{ "format", WIRE_CONST, .words = WIRE_WORDS(WIRE_ALERT_FORMAT) },
	{ "host", WIRE_HOST, .offset = ALERT(alert.host) },
	{ "id", WIRE_I64, .offset = ALERT(alert.origin_id), .lo = 1, .hi = INT64_MAX },
	{ "seq", WIRE_I64, .offset = ALERT(alert.seq), .lo = 1, .hi = INT64_MAX },
	{ "sha256", WIRE_HASH, WIRE_SEALED, ALERT(sha256), .size = 65 },
	{ "branch", WIRE_TEXT, .offset = ALERT(alert.branch), .size = 256, .lo = 1, .hi = 255 },
	{ "case", WIRE_TEXT, .offset = ALERT(alert.case_name), .size = 64, .lo = 1,
	  .hi = NAME_MAX_BYTES },
	{ "found_by", WIRE_FLAG, .offset = ALERT(alert.found_by_span),
	  .words = WIRE_WORDS("head", "span") },
	{ "lo", WIRE_COMMIT, .offset = ALERT(alert.lo) },
	{ "hi", WIRE_COMMIT, .offset = ALERT(alert.hi) },
	{ "commits", WIRE_INT, .offset = ALERT(alert.commits), .lo = 1,
	  .hi = WIRE_ALERT_COMMITS_MAX },
	{ "direction", WIRE_FLAG, .offset = ALERT(alert.slower),
	  .words = WIRE_WORDS("faster", "slower") },
	{ "gain", WIRE_REAL, .offset = ALERT(alert.gain) },
	{ "comparison", WIRE_I64, .offset = ALERT(alert.comparison_id), .lo = 1, .hi = INT64_MAX },
	{ "confirm", WIRE_I64, WIRE_NULL, ALERT(alert.confirm_id), .lo = 1, .hi = INT64_MAX },
	{ "state", WIRE_ENUM, .offset = ALERT(alert.state),
	  .words = WIRE_WORDS("confirming", "raised", "dismissed") },
	{ "bisect", WIRE_ENUM, .offset = ALERT(alert.bisect),
	  .words = WIRE_WORDS("none", "running", "done", "budget") },
	{ "detail", WIRE_TEXT, WIRE_NULL, ALERT(alert.detail), .hi = TEXT_MAX },
	{ "created_at", WIRE_TIME, .offset = ALERT(alert.created_at) },
	{ "updated_at", WIRE_TIME, .offset = ALERT(alert.updated_at) },
	{ "findings", WIRE_LIST, .offset = ALERT(findings), .size = sizeof(struct db_alert_finding),
	  .count = ALERT(nfindings), .hi = WIRE_ALERT_FINDINGS_MAX, .sub = &finding_entry },
	{ 0 },
};

int wire_alert_record_build(struct strbuf *out, const struct db_alert *a, const char *host,
			      const struct db_alert_finding *f, size_t n)
{
	struct wire_alert_record rec = {
		.alert = *a, .findings = (struct db_alert_finding *)f, .nfindings = n,
	};

	snprintf(rec.alert.host, sizeof(rec.alert.host), "%s", host);
	rec.alert.origin_id = a->id;
	return build_sealed(out, wire_alert_fields, &rec);
}

static int parse_alert(void *rec, json_t *root)
{
	struct wire_at top = { "" };

	return wire_fields_parse(rec, wire_alert_fields, root, &top);
}

int wire_alert_record_parse(struct wire_alert_record *out, const char *text, size_t len)
{
	memset(out, 0, sizeof(*out));
	return parse_hashed(text, len, out, out->sha256, parse_alert);
}

void wire_alert_record_release(struct wire_alert_record *r)
{
	size_t i;

	if (!r)
		return;
	db_alert_release(&r->alert);
	for (i = 0; i < r->nfindings; i++)
		db_alert_finding_release(&r->findings[i]);
	free(r->findings);
	memset(r, 0, sizeof(*r));
}
