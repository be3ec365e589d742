/*
 * Records: a stored comparison as an agent sends it to the hub
 * (docs/hub.md, "The comparison record"), and the same record taken apart
 * again, checked field by field, at the hub.
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
 * The parser is strict: every member is required (the one exception is a
 * process's "output"), no other member is allowed, each has one type, and
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

/* ---- building ---- */

static json_t *b64(const char *data, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	base64_encode(&sb, data ? data : "", len);
	j = json_stringn(sb.buf, sb.len);
	strbuf_release(&sb);
	return j;
}

static json_t *process_record(const struct db_process *p, bool with_output)
{
	json_t *o = json_object(), *m = json_object(), *lines = json_array();
	size_t i;

	json_object_set_new(o, "seq", json_integer(p->seq));
	json_object_set_new(o, "arm", json_string(p->arm));
	json_object_set_new(o, "pair", json_integer(p->pair));
	json_object_set_new(o, "warmup", json_boolean(p->warmup));
	json_object_set_new(o, "state", json_string(db_state_name(p->state)));
	json_object_set_new(o, "started_at", json_text(p->started_at));
	json_object_set_new(o, "ended_at", json_text_or_null(p->ended_at));
	json_object_set_new(o, "exit", p->exit_code >= 0 ? json_integer(p->exit_code) :
			    json_null());
	json_object_set_new(o, "signal", json_integer(p->signal));
	json_object_set_new(o, "timed_out", json_boolean(p->timed_out));
	json_object_set_new(o, "spawn_error", json_text(p->spawn_error));
	json_object_set_new(o, "wall_ms", json_real_or_null(p->wall_ms));
	json_object_set_new(o, "user_ms", json_real_or_null(p->user_ms));
	json_object_set_new(o, "sys_ms", json_real_or_null(p->sys_ms));
	json_object_set_new(o, "maxrss_kb", json_integer(p->maxrss_kb));
	/* Left out where not recorded, so that a hub older than the key
	 * (schema 21) still takes such records. */
	if (isfinite(p->cpu_wait_ms))
		json_object_set_new(o, "cpu_wait_ms", json_real(p->cpu_wait_ms));
	json_object_set_new(o, "cpus", json_text(p->cpus));
	json_object_set_new(o, "digest", json_text(p->digest));
	json_object_set_new(o, "record_valid", json_boolean(p->record_valid));
	for (i = 0; i < p->nmetrics; i++)
		utf8_json_set(m, p->metrics[i].name, json_real_or_null(p->metrics[i].value));
	json_object_set_new(o, "metrics", m);
	for (i = 0; i < p->nlines; i++)
		json_array_append_new(lines, json_pack("{s:o,s:o}",
			"kind", json_text(p->lines[i].kind), "text", json_text(p->lines[i].text)));
	json_object_set_new(o, "lines", lines);
	json_object_set_new(o, "protocol_errors",
			    json_texts(p->protocol_errors, p->nprotocol_errors));
	json_object_set_new(o, "fault", json_text(p->fault));
	json_object_set_new(o, "fault_watch", json_text(p->fault_watch));
	json_object_set_new(o, "stdout_bytes", json_integer(p->stdout_bytes));
	json_object_set_new(o, "stderr_bytes", json_integer(p->stderr_bytes));
	json_object_set_new(o, "valid", json_boolean(p->valid));
	json_object_set_new(o, "invalid_reason", json_text(p->invalid_reason));
	if (with_output && (p->out || p->err))
		json_object_set_new(o, "output", json_pack("{s:o,s:o}",
			"stdout", b64(p->out, p->out_len), "stderr", b64(p->err, p->err_len)));
	return o;
}

static json_t *arm_figures(const struct db_arm_stats *a)
{
	if (!a->set)
		return json_null();
	return json_pack("{s:o,s:o,s:o,s:o}", "median", json_real_or_null(a->median),
			 "min", json_real_or_null(a->min), "max", json_real_or_null(a->max),
			 "spread", json_real_or_null(a->spread));
}

/* A pairs-median/2.1 or /2.2 stage's figures beyond the sign test's, each
 * a member of its own only where the stage has it (docs/hub.md). */
static const char *const stage21_keys[] = {
	"cal_p_faster", "cal_p_slower", "cal_p_below", "cal_p_above", "gate_p", "spread_ratio",
	"load_p", "load_above",
};

static double *stage21_field(const struct db_stage *g, size_t k)
{
	const double *f[] = {
		&g->cal_p_faster, &g->cal_p_slower, &g->cal_p_below, &g->cal_p_above,
		&g->gate_p, &g->spread_ratio, &g->load_p, &g->load_above,
	};

	return (double *)f[k];
}

static json_t *summary_record(const struct db_comparison *c)
{
	const struct db_summary *s = &c->summary;
	json_t *o, *gains = json_array(), *stages = json_array();
	size_t i;

	if (!c->has_summary)
		return json_null();
	for (i = 0; i < s->npair_gains; i++)
		json_array_append_new(gains, json_real_or_null(s->pair_gains[i]));
	for (i = 0; i < s->nstages; i++) {
		const struct db_stage *g = &s->stages[i];

		json_t *e = json_pack("{s:i,s:s,s:i,s:o,s:o,s:o,s:o,s:o,s:s}",
			"pairs", g->pairs, "test", g->test, "calibration_gains",
			g->calibration_gains, "alpha", json_real_or_null(g->alpha),
			"p_faster", json_real_or_null(g->p_faster),
			"p_slower", json_real_or_null(g->p_slower),
			"p_below", json_real_or_null(g->p_below),
			"p_above", json_real_or_null(g->p_above), "verdict", g->verdict);
		size_t k;

		for (k = 0; k < ARRAY_SIZE(stage21_keys); k++) {
			double v = *stage21_field(g, k);

			if (!isnan(v))
				json_object_set_new(e, stage21_keys[k], json_real(v));
		}
		json_array_append_new(stages, e);
	}
	o = json_object();
	json_object_set_new(o, "metric", json_text(c->metric));
	json_object_set_new(o, "verdict", json_string(s->verdict));
	json_object_set_new(o, "gain", !s->has_gain ? json_null() :
			    json_pack("{s:o,s:o,s:o}", "median", json_real_or_null(s->gain_median),
				      "min", json_real_or_null(s->gain_min),
				      "max", json_real_or_null(s->gain_max)));
	json_object_set_new(o, "old", arm_figures(&s->old));
	json_object_set_new(o, "new", arm_figures(&s->new));
	json_object_set_new(o, "pair_gains", gains);
	json_object_set_new(o, "digests_equal", json_boolean(s->digests_equal));
	json_object_set_new(o, "pairs_run", s->pairs_run > 0 ? json_integer(s->pairs_run) :
			    json_null());
	json_object_set_new(o, "stages", stages);
	json_object_set_new(o, "flags", json_texts(s->flags, s->nflags));
	json_object_set_new(o, "reasons", json_texts(s->reasons, s->nreasons));
	return o;
}

static json_t *artifact_record(const struct db_artifact *a, const char *manifest)
{
	return json_pack("{s:o,s:I,s:s,s:o}", "path", json_text(a->path ? a->path : ""),
			 "size", (json_int_t)a->size, "sha256", a->sha256,
			 "manifest", json_text(manifest));
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

int wire_record_build(struct strbuf *out, const struct db_comparison *c, bool with_output)
{
	json_t *root = json_object(), *settings = json_object(), *cal = json_array();
	json_t *procs = json_array();
	size_t i;
	int r;

	json_object_set_new(settings, "case", json_text(c->case_name));
	json_object_set_new(settings, "kind", json_string(c->aa ? "aa" : "compare"));
	json_object_set_new(settings, "pairs", json_integer(c->pairs));
	json_object_set_new(settings, "max_pairs", json_integer(c->max_pairs));
	json_object_set_new(settings, "warmup", json_integer(c->warmup));
	json_object_set_new(settings, "better", json_string(c->higher_better ? "higher" : "lower"));
	json_object_set_new(settings, "timeout_s", json_real_or_null(c->timeout_s));
	json_object_set_new(settings, "min_effect", json_real_or_null(c->min_effect));
	json_object_set_new(settings, "noise", json_real_or_null(c->noise));
	json_object_set_new(settings, "metric_requested", json_text(c->metric_requested));
	json_object_set_new(settings, "fingerprint", json_text(c->fingerprint));
	json_object_set_new(settings, "args", json_text(c->args_json ? c->args_json : "{}"));
	/* Only where a budget set max_pairs: a record without one stays what
	 * a hub before the key takes. */
	if (c->time_budget_s > 0)
		json_object_set_new(settings, "time_budget_s", json_real(c->time_budget_s));
	for (i = 0; i < c->ncalibration; i++)
		json_array_append_new(cal, json_integer(c->calibration[i].comparison_id));
	for (i = 0; i < c->nprocesses; i++)
		json_array_append_new(procs, process_record(&c->processes[i], with_output));
	json_object_set_new(root, "format", json_string(WIRE_RECORD_FORMAT));
	json_object_set_new(root, "host", json_text(c->host));
	json_object_set_new(root, "id", json_integer(c->id));
	json_object_set_new(root, "state", json_string(db_state_name(c->state)));
	json_object_set_new(root, "rule", json_text(c->rule));
	json_object_set_new(root, "created_at", json_text(c->created_at));
	json_object_set_new(root, "finished_at", json_text_or_null(c->finished_at));
	json_object_set_new(root, "settings", settings);
	json_object_set_new(root, "old", artifact_record(&c->old, c->old_manifest));
	json_object_set_new(root, "new", artifact_record(&c->new, c->new_manifest));
	json_object_set_new(root, "calibration", cal);
	json_object_set_new(root, "job", json_id(c->job_id));
	json_object_set_new(root, "base_build", json_id(c->base_build));
	json_object_set_new(root, "head_build", json_id(c->head_build));
	json_object_set_new(root, "processes", procs);
	json_object_set_new(root, "summary", summary_record(c));
	fit_lines(root, "processes");
	r = finish_record(out, root);
	json_decref(root);
	return r;
}

/* ---- parsing ---- */

/* Where in the record a value is, for messages: "processes[3].exit". */
struct at {
	char path[96];
};

/* A path too long for the buffer ends in "...": it is only ever shown. */
static void at_cut(struct at *a, int n)
{
	if (n >= (int)sizeof(a->path))
		memcpy(a->path + sizeof(a->path) - 4, "...", 4);
}

static struct at at_key(const struct at *parent, const char *key)
{
	struct at a;

	at_cut(&a, snprintf(a.path, sizeof(a.path), "%s%s%s", parent->path,
			    *parent->path ? "." : "", key));
	return a;
}

static struct at at_index(const struct at *parent, size_t i)
{
	struct at a;

	at_cut(&a, snprintf(a.path, sizeof(a.path), "%s[%zu]", parent->path, i));
	return a;
}

static enum db_state state_of(const char *word)
{
	if (!strcmp(word, "done"))
		return DB_STATE_DONE;
	if (!strcmp(word, "abandoned"))
		return DB_STATE_ABANDONED;
	return DB_STATE_RUNNING;
}

static int bad(const struct at *a, const char *what)
{
	return err_set(-EINVAL, "%s: expected %s", *a->path ? a->path : "the record", what);
}

/* bad() for parent's member key: the path is written only for a message. */
static int bad_at(const struct at *parent, const char *key, const char *what)
{
	struct at a = at_key(parent, key);

	return bad(&a, what);
}

/* o is an object with exactly the members of keys (a NULL-terminated list;
 * those after a NULL entry in optional are optional). */
static int object_check(json_t *o, const struct at *a, const char *const *keys,
			const char *const *optional)
{
	const char *key;
	json_t *v;
	size_t i, n;

	if (!json_is_object(o))
		return bad(a, "an object");
	for (i = 0; keys[i]; i++) {
		if (!json_object_get(o, keys[i])) {
			struct at k = at_key(a, keys[i]);

			return err_set(-EINVAL, "%s: missing", k.path);
		}
	}
	/* Every required member is there, so with no more members than those
	 * and the optional ones present, none is unknown. */
	n = i;
	for (i = 0; optional && optional[i]; i++)
		n += json_object_get(o, optional[i]) != NULL;
	if (json_object_size(o) == n)
		return 0;
	json_object_foreach(o, key, v) {
		bool known = false;

		for (i = 0; keys[i] && !known; i++)
			known = !strcmp(key, keys[i]);
		for (i = 0; optional && optional[i] && !known; i++)
			known = !strcmp(key, optional[i]);
		if (!known) {
			char shown[48];

			/* The name is the sender's: shown cut, and only in quotes. */
			snprintf(shown, sizeof(shown), "%s", key);
			return err_set(-EINVAL, "%s: unknown member '%s'%s",
				       *a->path ? a->path : "the record", shown,
				       strlen(key) >= sizeof(shown) ? "..." : "");
		}
	}
	return 0;
}

/* A string of at most max bytes into a new copy (*out NULL for null when
 * nullable). */
static int get_text(char **out, json_t *o, const struct at *parent, const char *key,
		    bool nullable, size_t max)
{
	json_t *v = json_object_get(o, key);
	char what[80];

	*out = NULL;
	if (nullable && json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) > max) {
		snprintf(what, sizeof(what), "a string of at most %zu bytes%s", max,
			 nullable ? " or null" : "");
		return bad_at(parent, key, what);
	}
	*out = xstrndup(json_string_value(v), json_string_length(v));
	return 0;
}

/* A string that is one of words (NULL-terminated), into out. */
static int get_word(char *out, size_t outlen, json_t *o, const struct at *parent,
		    const char *key, const char *const *words, const char *what)
{
	json_t *v = json_object_get(o, key);
	size_t i;

	for (i = 0; json_is_string(v) && words[i]; i++) {
		if (!strcmp(json_string_value(v), words[i])) {
			size_t n = strlen(words[i]);

			n = n < outlen ? n : outlen - 1;
			memcpy(out, words[i], n);
			out[n] = '\0';
			return 0;
		}
	}
	return bad_at(parent, key, what);
}

static int get_int(int64_t *out, json_t *o, const struct at *parent, const char *key,
		   int64_t lo, int64_t hi)
{
	json_t *v = json_object_get(o, key);
	char what[96];

	if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi) {
		*out = json_integer_value(v);
		return 0;
	}
	snprintf(what, sizeof(what), "a whole number from %lld to %lld", (long long)lo,
		 (long long)hi);
	return bad_at(parent, key, what);
}

static int get_int32(int *out, json_t *o, const struct at *parent, const char *key, int lo,
		     int hi)
{
	int64_t v = 0;
	int r = get_int(&v, o, parent, key, lo, hi);

	*out = (int)v;
	return r;
}

/* A number (NAN for null when nullable); a finite one. */
static int get_num(double *out, json_t *o, const struct at *parent, const char *key,
		   bool nullable)
{
	json_t *v = json_object_get(o, key);

	*out = NAN;
	if (nullable && json_is_null(v))
		return 0;
	if (json_is_number(v) && isfinite(json_number_value(v))) {
		*out = json_number_value(v);
		return 0;
	}
	return bad_at(parent, key, nullable ? "a number or null" : "a number");
}

/* An id on the record's host (a whole number from 1), or 0 for null. */
static int get_id(int64_t *out, json_t *o, const struct at *parent, const char *key)
{
	*out = 0;
	if (json_is_null(json_object_get(o, key)))
		return 0;
	return get_int(out, o, parent, key, 1, INT64_MAX);
}

static int get_bool(bool *out, json_t *o, const struct at *parent, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_boolean(v))
		return bad_at(parent, key, "true or false");
	*out = json_is_true(v);
	return 0;
}

static bool is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[64] == '\0';
}

/* 64 lower-case hex digits (NULL for null when nullable). */
static int get_hash(char **out, json_t *o, const struct at *parent, const char *key,
		    bool nullable)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (nullable && json_is_null(v))
		return 0;
	if (!json_is_string(v) || !is_hex64(json_string_value(v)))
		return bad_at(parent, key, nullable ? "64 lower-case hex digits or null" :
			   "64 lower-case hex digits");
	*out = xstrdup(json_string_value(v));
	return 0;
}

/* A time as perfd writes them, "2026-11-04T10:00:00.123Z", into out (""
 * for null when nullable). */
static int get_time(char out[32], json_t *o, const struct at *parent, const char *key,
		    bool nullable)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	json_t *v = json_object_get(o, key);
	const char *s;
	size_t i;

	out[0] = '\0';
	if (nullable && json_is_null(v))
		return 0;
	s = json_is_string(v) ? json_string_value(v) : "";
	for (i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
			break;
	if (shape[i] || s[i])
		return bad_at(parent, key, nullable ? "a time as 2026-11-04T10:00:00.123Z or null" :
			   "a time as 2026-11-04T10:00:00.123Z");
	memcpy(out, s, sizeof(shape));
	return 0;
}

/* A list of at most max strings of at most TEXT_MAX bytes each. */
static int get_texts(char ***out, size_t *out_n, json_t *o, const struct at *parent,
		     const char *key, size_t max)
{
	json_t *v = json_object_get(o, key), *e;
	char what[64];
	size_t i;

	*out = NULL;
	*out_n = 0;
	if (!json_is_array(v) || json_array_size(v) > max) {
		snprintf(what, sizeof(what), "a list of at most %zu strings", max);
		return bad_at(parent, key, what);
	}
	*out = xcalloc(json_array_size(v) + 1, sizeof(char *));
	json_array_foreach(v, i, e) {
		if (!json_is_string(e) || json_string_length(e) > TEXT_MAX) {
			struct at a = at_key(parent, key), ai = at_index(&a, i);

			return bad(&ai, "a string of at most 65536 bytes");
		}
		(*out)[(*out_n)++] = xstrndup(json_string_value(e), json_string_length(e));
	}
	return 0;
}

static int get_list(json_t **out, json_t *o, const struct at *parent, const char *key,
		    size_t max)
{
	json_t *v = json_object_get(o, key);
	char what[48];

	*out = v;
	if (json_is_array(v) && json_array_size(v) <= max)
		return 0;
	snprintf(what, sizeof(what), "a list of at most %zu entries", max);
	return bad_at(parent, key, what);
}

static int parse_metrics(struct db_process *p, json_t *o, const struct at *parent)
{
	json_t *m = json_object_get(o, "metrics"), *v;
	const char *name;

	if (!json_is_object(m) || json_object_size(m) > RUNNER_METRICS_MAX)
		return bad_at(parent, "metrics", "an object of at most 256 metrics");
	p->metrics = xcalloc(json_object_size(m) + 1, sizeof(*p->metrics));
	json_object_foreach(m, name, v) {
		if (!*name || strlen(name) > 255)
			return bad_at(parent, "metrics", "metric names of 1 to 255 bytes");
		if (!json_is_null(v) && !(json_is_number(v) && isfinite(json_number_value(v)))) {
			struct at a = at_key(parent, "metrics"), am;

			at_cut(&am, snprintf(am.path, sizeof(am.path), "%s['%.32s']", a.path, name));
			return bad(&am, "a number or null");
		}
		p->metrics[p->nmetrics].name = xstrdup(name);
		p->metrics[p->nmetrics++].value = json_is_null(v) ? NAN : json_number_value(v);
	}
	return 0;
}

/* The RESULT and SUMMARY lines of a process or a runner result. */
static int parse_lines(struct db_line **lines, size_t *nlines, json_t *o,
		       const struct at *parent)
{
	static const char *const keys[] = { "kind", "text", NULL };
	static const char *const kinds[] = { "RESULT", "SUMMARY", NULL };
	struct at a = at_key(parent, "lines");
	json_t *list, *e;
	size_t i;
	int r;

	r = get_list(&list, o, parent, "lines", RUNNER_LINES_MAX);
	if (r < 0)
		return r;
	*lines = xcalloc(json_array_size(list) + 1, sizeof(**lines));
	json_array_foreach(list, i, e) {
		struct at ai = at_index(&a, i);
		struct db_line *l = &(*lines)[*nlines];
		char kind[8];

		r = object_check(e, &ai, keys, NULL);
		if (r == 0)
			r = get_word(kind, sizeof(kind), e, &ai, "kind", kinds, "RESULT or SUMMARY");
		if (r == 0)
			r = get_text(&l->text, e, &ai, "text", false, TEXT_MAX);
		if (r < 0)
			return r;
		l->kind = xstrdup(kind);
		(*nlines)++;
	}
	return 0;
}

/* The captured output, when the record carries it: each stream decoded,
 * at most WIRE_RECORD_OUTPUT_MAX bytes and no more than the process
 * wrote. */
static int parse_output(struct db_process *p, json_t *o, const struct at *parent)
{
	static const char *const keys[] = { "stdout", "stderr", NULL };
	struct at a = at_key(parent, "output");
	json_t *out = json_object_get(o, "output");
	struct strbuf sb = STRBUF_INIT;
	int i, r;

	if (!out)
		return 0;
	r = object_check(out, &a, keys, NULL);
	for (i = 0; i < 2 && r == 0; i++) {
		struct at as = at_key(&a, keys[i]);
		json_t *v = json_object_get(out, keys[i]);

		if (!json_is_string(v)) {
			r = bad(&as, "base64 text");
			break;
		}
		r = base64_decode(&sb, json_string_value(v), json_string_length(v),
				  WIRE_RECORD_OUTPUT_MAX);
		if (r < 0) {
			r = err_set(-EINVAL, "%s: %s", as.path, err_last());
			break;
		}
		if ((int64_t)sb.len > (i ? p->stderr_bytes : p->stdout_bytes)) {
			r = bad(&as, "no more bytes than the process wrote");
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

static int parse_process(struct db_process *p, json_t *o, const struct at *a, size_t index)
{
	static const char *const keys[] = {
		"seq", "arm", "pair", "warmup", "state", "started_at", "ended_at", "exit",
		"signal", "timed_out", "spawn_error", "wall_ms", "user_ms", "sys_ms", "maxrss_kb",
		"cpus", "digest", "record_valid", "metrics", "lines", "protocol_errors", "fault",
		"fault_watch", "stdout_bytes", "stderr_bytes", "valid", "invalid_reason", NULL,
	};
	static const char *const optional[] = { "output", "cpu_wait_ms", NULL };
	static const char *const arms[] = { "old", "new", NULL };
	static const char *const states[] = { "running", "done", "abandoned", NULL };
	char state[16];
	json_t *v;
	int r;

	r = object_check(o, a, keys, optional);
	if (r == 0)
		r = get_int32(&p->seq, o, a, "seq", 1, PROCESSES_MAX);
	if (r == 0 && p->seq != (int)index + 1)
		r = err_set(-EINVAL, "%s.seq: expected %zu (processes in execution order)", a->path,
			    index + 1);
	if (r == 0)
		r = get_word(p->arm, sizeof(p->arm), o, a, "arm", arms, "old or new");
	if (r == 0)
		r = get_int32(&p->pair, o, a, "pair", 0, PAIRS_MAX);
	if (r == 0)
		r = get_bool(&p->warmup, o, a, "warmup");
	if (r == 0 && p->warmup != (p->pair == 0))
		r = err_set(-EINVAL, "%s: a warm-up has pair 0, and only a warm-up", a->path);
	if (r == 0)
		r = get_word(state, sizeof(state), o, a, "state", states,
			     "running, done or abandoned");
	if (r < 0)
		return r;
	p->state = state_of(state);
	r = get_time(p->started_at, o, a, "started_at", false);
	if (r == 0)
		r = get_time(p->ended_at, o, a, "ended_at", true);
	if (r < 0)
		return r;
	v = json_object_get(o, "exit");
	p->exit_code = -1;
	if (!json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 255)
			return bad_at(a, "exit", "a whole number from 0 to 255, or null");
		p->exit_code = (int)json_integer_value(v);
	}
	r = get_int32(&p->signal, o, a, "signal", 0, 128);
	if (r == 0)
		r = get_bool(&p->timed_out, o, a, "timed_out");
	if (r == 0)
		r = get_text(&p->spawn_error, o, a, "spawn_error", true, TEXT_MAX);
	if (r == 0)
		r = get_num(&p->wall_ms, o, a, "wall_ms", true);
	if (r == 0)
		r = get_num(&p->user_ms, o, a, "user_ms", true);
	if (r == 0)
		r = get_num(&p->sys_ms, o, a, "sys_ms", true);
	if (r == 0)
		r = get_int(&p->maxrss_kb, o, a, "maxrss_kb", 0, INT64_MAX);
	if (r == 0)
		r = get_text(&p->cpus, o, a, "cpus", true, 4096);
	if (r == 0)
		r = get_text(&p->digest, o, a, "digest", true, TEXT_MAX);
	if (r == 0)
		r = get_bool(&p->record_valid, o, a, "record_valid");
	if (r == 0)
		r = parse_metrics(p, o, a);
	if (r == 0)
		r = parse_lines(&p->lines, &p->nlines, o, a);
	if (r == 0)
		r = get_texts(&p->protocol_errors, &p->nprotocol_errors, o, a, "protocol_errors",
			      RUNNER_ERRORS_MAX);
	if (r == 0)
		r = get_text(&p->fault, o, a, "fault", true, TEXT_MAX);
	if (r == 0)
		r = get_text(&p->fault_watch, o, a, "fault_watch", true, TEXT_MAX);
	if (r == 0)
		r = get_int(&p->stdout_bytes, o, a, "stdout_bytes", 0, INT64_MAX);
	if (r == 0)
		r = get_int(&p->stderr_bytes, o, a, "stderr_bytes", 0, INT64_MAX);
	if (r == 0)
		r = get_bool(&p->valid, o, a, "valid");
	if (r == 0)
		r = get_text(&p->invalid_reason, o, a, "invalid_reason", true, TEXT_MAX);
	p->cpu_wait_ms = NAN;
	if (r == 0 && json_object_get(o, "cpu_wait_ms"))
		r = get_num(&p->cpu_wait_ms, o, a, "cpu_wait_ms", false);
	if (r == 0 && p->cpu_wait_ms < 0)
		r = bad_at(a, "cpu_wait_ms", "a number from 0");
	if (r == 0)
		r = parse_output(p, o, a);
	return r;
}

static int parse_artifact(struct db_artifact *out, char **manifest, json_t *root,
			  const char *key)
{
	static const char *const keys[] = { "path", "size", "sha256", "manifest", NULL };
	struct at top = { "" }, a = at_key(&top, key);
	json_t *o = json_object_get(root, key);
	char *sha = NULL;
	int r;

	r = object_check(o, &a, keys, NULL);
	if (r == 0)
		r = get_text(&out->path, o, &a, "path", false, 4096);
	if (r == 0)
		r = get_int(&out->size, o, &a, "size", 0, INT64_MAX);
	if (r == 0)
		r = get_hash(&sha, o, &a, "sha256", false);
	if (r == 0)
		memcpy(out->sha256, sha, sizeof(out->sha256));
	free(sha);
	if (r == 0)
		r = get_hash(manifest, o, &a, "manifest", true);
	return r;
}

/* settings.time_budget_s, when there: the seconds that set max_pairs, as a
 * case or host profile may give them (above 0, at most a week); 0 when
 * absent. */
static int parse_budget(double *out, json_t *o, const struct at *a)
{
	*out = 0;
	if (!json_object_get(o, "time_budget_s"))
		return 0;
	if (get_num(out, o, a, "time_budget_s", false) < 0 ||
	    !(*out > 0 && *out <= CONFIG_SECONDS_MAX)) {
		*out = 0;
		return bad_at(a, "time_budget_s", "a number of seconds above 0 and at most 604800");
	}
	return 0;
}

static int parse_settings(struct db_comparison *c, json_t *root)
{
	static const char *const keys[] = {
		"case", "kind", "pairs", "max_pairs", "warmup", "better", "timeout_s",
		"min_effect", "noise", "metric_requested", "fingerprint", "args", NULL,
	};
	static const char *const optional[] = { "time_budget_s", NULL };
	static const char *const kinds[] = { "compare", "aa", NULL };
	static const char *const betters[] = { "lower", "higher", NULL };
	struct at top = { "" }, a = at_key(&top, "settings");
	json_t *o = json_object_get(root, "settings"), *args;
	char word[16];
	int r;

	r = object_check(o, &a, keys, optional);
	if (r == 0)
		r = get_text(&c->case_name, o, &a, "case", false, NAME_MAX_BYTES);
	if (r == 0 && !*c->case_name)
		r = bad(&a, "a case of 1 to 63 bytes");
	if (r == 0)
		r = get_word(word, sizeof(word), o, &a, "kind", kinds, "compare or aa");
	if (r < 0)
		return r;
	c->aa = !strcmp(word, "aa");
	r = get_int32(&c->pairs, o, &a, "pairs", 1, PAIRS_MAX);
	if (r == 0)
		r = get_int32(&c->max_pairs, o, &a, "max_pairs", 1, PAIRS_MAX);
	if (r == 0)
		r = get_int32(&c->warmup, o, &a, "warmup", 0, WARMUP_MAX);
	if (r == 0)
		r = get_word(word, sizeof(word), o, &a, "better", betters, "lower or higher");
	if (r < 0)
		return r;
	c->higher_better = !strcmp(word, "higher");
	r = get_num(&c->timeout_s, o, &a, "timeout_s", false);
	if (r == 0)
		r = get_num(&c->min_effect, o, &a, "min_effect", false);
	if (r == 0)
		r = get_num(&c->noise, o, &a, "noise", false);
	if (r == 0)
		r = get_text(&c->metric_requested, o, &a, "metric_requested", true, 255);
	if (r == 0)
		r = get_text(&c->fingerprint, o, &a, "fingerprint", true, JSON_TEXT_MAX);
	if (r == 0)
		r = get_text(&c->args_json, o, &a, "args", false, JSON_TEXT_MAX);
	if (r == 0)
		r = parse_budget(&c->time_budget_s, o, &a);
	if (r < 0)
		return r;
	/* The receipt shows args as the JSON it holds. */
	args = json_loads(c->args_json, 0, NULL);
	if (!json_is_object(args))
		r = err_set(-EINVAL, "settings.args: expected the text of a JSON object");
	json_decref(args);
	return r;
}

static int parse_figures(struct db_arm_stats *out, json_t *s, const struct at *parent,
			 const char *key)
{
	static const char *const keys[] = { "median", "min", "max", "spread", NULL };
	struct at a = at_key(parent, key);
	json_t *o = json_object_get(s, key);
	int r;

	memset(out, 0, sizeof(*out));
	if (json_is_null(o))
		return 0;
	r = object_check(o, &a, keys, NULL);
	if (r == 0)
		r = get_num(&out->median, o, &a, "median", true);
	if (r == 0)
		r = get_num(&out->min, o, &a, "min", true);
	if (r == 0)
		r = get_num(&out->max, o, &a, "max", true);
	if (r == 0)
		r = get_num(&out->spread, o, &a, "spread", true);
	out->set = r == 0;
	return r;
}

static int parse_stage(struct db_stage *g, json_t *o, const struct at *a)
{
	static const char *const keys[] = {
		"pairs", "test", "calibration_gains", "alpha", "p_faster", "p_slower",
		"p_below", "p_above", "verdict", NULL,
	};
	static const char *const optional[] = {
		"cal_p_faster", "cal_p_slower", "cal_p_below", "cal_p_above", "gate_p",
		"spread_ratio", "load_p", "load_above", NULL,
	};
	static const char *const tests[] = { "sign", "calibrated", "sign+calibrated", NULL };
	static const char *const verdicts[] = {
		"faster", "slower", "unchanged", "unresolved", "invalid", NULL,
	};
	size_t k;
	int r;

	_Static_assert(ARRAY_SIZE(optional) == ARRAY_SIZE(stage21_keys) + 1, "one list");
	r = object_check(o, a, keys, optional);
	for (k = 0; r == 0 && k < ARRAY_SIZE(stage21_keys); k++) {
		*stage21_field(g, k) = NAN;
		if (json_object_get(o, stage21_keys[k]))
			r = get_num(stage21_field(g, k), o, a, stage21_keys[k], true);
	}
	if (r == 0)
		r = get_int32(&g->pairs, o, a, "pairs", 1, PAIRS_MAX);
	if (r == 0)
		r = get_word(g->test, sizeof(g->test), o, a, "test", tests,
			     "sign, calibrated or sign+calibrated");
	if (r == 0)
		r = get_int32(&g->calibration_gains, o, a, "calibration_gains", 0,
			      RUNNER_CALIBRATION_MAX_GAINS);
	if (r == 0)
		r = get_num(&g->alpha, o, a, "alpha", false);
	if (r == 0)
		r = get_num(&g->p_faster, o, a, "p_faster", true);
	if (r == 0)
		r = get_num(&g->p_slower, o, a, "p_slower", true);
	if (r == 0)
		r = get_num(&g->p_below, o, a, "p_below", true);
	if (r == 0)
		r = get_num(&g->p_above, o, a, "p_above", true);
	if (r == 0)
		r = get_word(g->verdict, sizeof(g->verdict), o, a, "verdict", verdicts,
			     "a verdict");
	return r;
}

static int parse_summary(struct db_comparison *c, json_t *root)
{
	static const char *const keys[] = {
		"metric", "verdict", "gain", "old", "new", "pair_gains", "digests_equal",
		"pairs_run", "stages", "flags", "reasons", NULL,
	};
	static const char *const gain_keys[] = { "median", "min", "max", NULL };
	static const char *const verdicts[] = {
		"faster", "slower", "unchanged", "unresolved", "invalid", NULL,
	};
	struct at top = { "" }, a = at_key(&top, "summary"), ag = at_key(&a, "gain");
	struct at ap = at_key(&a, "pair_gains"), as = at_key(&a, "stages");
	json_t *o = json_object_get(root, "summary"), *gain, *list, *e, *v;
	struct db_summary *s = &c->summary;
	size_t i;
	int r;

	if (json_is_null(o))
		return 0;
	r = object_check(o, &a, keys, NULL);
	if (r == 0)
		r = get_text(&c->metric, o, &a, "metric", true, 255);
	if (r == 0)
		r = get_word(s->verdict, sizeof(s->verdict), o, &a, "verdict", verdicts,
			     "faster, slower, unchanged, unresolved or invalid");
	if (r < 0)
		return r;
	if (c->metric)
		s->metric = xstrdup(c->metric);
	gain = json_object_get(o, "gain");
	if (!json_is_null(gain)) {
		r = object_check(gain, &ag, gain_keys, NULL);
		if (r == 0)
			r = get_num(&s->gain_median, gain, &ag, "median", false);
		if (r == 0)
			r = get_num(&s->gain_min, gain, &ag, "min", false);
		if (r == 0)
			r = get_num(&s->gain_max, gain, &ag, "max", false);
		if (r < 0)
			return r;
		s->has_gain = true;
	}
	r = parse_figures(&s->old, o, &a, "old");
	if (r == 0)
		r = parse_figures(&s->new, o, &a, "new");
	if (r == 0)
		r = get_list(&list, o, &a, "pair_gains", PAIRS_MAX);
	if (r < 0)
		return r;
	s->pair_gains = xcalloc(json_array_size(list) + 1, sizeof(double));
	json_array_foreach(list, i, e) {
		struct at ai = at_index(&ap, i);

		if (!json_is_null(e) && !(json_is_number(e) && isfinite(json_number_value(e))))
			return bad(&ai, "a number or null");
		s->pair_gains[s->npair_gains++] = json_is_null(e) ? NAN : json_number_value(e);
	}
	r = get_bool(&s->digests_equal, o, &a, "digests_equal");
	if (r < 0)
		return r;
	v = json_object_get(o, "pairs_run");
	if (!json_is_null(v)) {
		r = get_int32(&s->pairs_run, o, &a, "pairs_run", 1, PAIRS_MAX);
		if (r < 0)
			return r;
	}
	r = get_list(&list, o, &a, "stages", RUNNER_STAGES_MAX);
	if (r < 0)
		return r;
	s->stages = xcalloc(json_array_size(list) + 1, sizeof(*s->stages));
	json_array_foreach(list, i, e) {
		struct at ai = at_index(&as, i);

		r = parse_stage(&s->stages[s->nstages], e, &ai);
		if (r < 0)
			return r;
		s->nstages++;
	}
	r = get_texts(&s->flags, &s->nflags, o, &a, "flags", NOTES_MAX);
	if (r == 0)
		r = get_texts(&s->reasons, &s->nreasons, o, &a, "reasons", NOTES_MAX);
	if (r < 0)
		return r;
	c->has_summary = true;
	return 0;
}

static int parse_record(struct wire_record *rec, json_t *root)
{
	static const char *const keys[] = {
		"format", "host", "id", "sha256", "state", "rule", "created_at", "finished_at",
		"settings", "old", "new", "calibration", "job", "base_build", "head_build",
		"processes", "summary", NULL,
	};
	static const char *const formats[] = { WIRE_RECORD_FORMAT, NULL };
	static const char *const states[] = { "running", "done", "abandoned", NULL };
	struct at top = { "" }, ac = at_key(&top, "calibration"), ap = at_key(&top, "processes");
	struct db_comparison *c = &rec->c;
	char word[32], *sha = NULL;
	json_t *list, *e;
	size_t i;
	int r;

	r = object_check(root, &top, keys, NULL);
	if (r == 0)
		r = get_word(word, sizeof(word), root, &top, "format", formats,
			     "'" WIRE_RECORD_FORMAT "'");
	if (r == 0)
		r = get_text(&c->host, root, &top, "host", false, NAME_MAX_BYTES);
	if (r == 0 && !*c->host)
		r = bad(&top, "a host of 1 to 63 bytes");
	if (r == 0)
		r = get_int(&rec->origin_id, root, &top, "id", 1, INT64_MAX);
	if (r == 0)
		r = get_hash(&sha, root, &top, "sha256", false);
	if (r == 0)
		memcpy(rec->sha256, sha, sizeof(rec->sha256));
	free(sha);
	if (r == 0)
		r = get_word(word, sizeof(word), root, &top, "state", states,
			     "running, done or abandoned");
	if (r < 0)
		return r;
	c->state = state_of(word);
	r = get_text(&c->rule, root, &top, "rule", false, 255);
	if (r == 0)
		r = get_time(c->created_at, root, &top, "created_at", false);
	if (r == 0)
		r = get_time(c->finished_at, root, &top, "finished_at", true);
	if (r == 0)
		r = parse_settings(c, root);
	if (r == 0)
		r = parse_artifact(&c->old, &c->old_manifest, root, "old");
	if (r == 0)
		r = parse_artifact(&c->new, &c->new_manifest, root, "new");
	if (r == 0)
		r = get_list(&list, root, &top, "calibration", RUNNER_CALIBRATION_MAX_GAINS);
	if (r < 0)
		return r;
	c->calibration = xcalloc(json_array_size(list) + 1, sizeof(*c->calibration));
	json_array_foreach(list, i, e) {
		struct at ai = at_index(&ac, i);

		if (!json_is_integer(e) || json_integer_value(e) < 1)
			return bad(&ai, "a comparison id (a whole number from 1)");
		c->calibration[c->ncalibration++].comparison_id = json_integer_value(e);
	}
	r = get_id(&rec->origin_job, root, &top, "job");
	if (r == 0)
		r = get_id(&rec->origin_base_build, root, &top, "base_build");
	if (r == 0)
		r = get_id(&rec->origin_head_build, root, &top, "head_build");
	if (r < 0)
		return r;
	r = get_list(&list, root, &top, "processes", PROCESSES_MAX);
	if (r < 0)
		return r;
	c->processes = xcalloc(json_array_size(list) + 1, sizeof(*c->processes));
	json_array_foreach(list, i, e) {
		struct at ai = at_index(&ap, i);

		r = parse_process(&c->processes[c->nprocesses], e, &ai, i);
		c->nprocesses++;
		if (r < 0)
			return r;
	}
	r = parse_summary(c, root);
	if (r < 0 || !c->has_summary)
		return r;
	/* Parallel to the processes, as db_comparison_load fills them. */
	db_summary_validity_fill(c);
	return 0;
}

int wire_record_parse(struct wire_record *out, const char *text, size_t len)
{
	char hash[SHA256_HEX_SIZE];
	json_error_t jerr;
	json_t *root;
	int r;

	memset(out, 0, sizeof(*out));
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return err_set(-EINVAL, "malformed JSON: line %d, column %d: %s", jerr.line,
			       jerr.column, jerr.text);
	r = parse_record(out, root);
	if (r == 0)
		r = canonical_hash(hash, root);
	if (r == 0 && strcmp(hash, out->sha256))
		r = err_set(-EBADMSG, "sha256: the record says %s, and its canonical form "
			    "(docs/hub.md) hashes to %s", out->sha256, hash);
	json_decref(root);
	return r;
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
	json_t *root;
	int r;

	snprintf(rec.job.host, sizeof(rec.job.host), "%s", host);
	rec.job.origin_id = j->id;
	root = wire_fields_build(wire_job_fields, &rec);
	r = finish_record(out, root);
	json_decref(root);
	return r;
}

static bool is_commit(const char *s)
{
	return strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

/* A commit id, 40 lower-case hex digits, into out ("" for null when nullable). */
static int get_commit(char out[41], json_t *o, const struct at *parent, const char *key,
		      bool nullable)
{
	json_t *v = json_object_get(o, key);

	out[0] = '\0';
	if (nullable && json_is_null(v))
		return 0;
	if (!json_is_string(v) || !is_commit(json_string_value(v)))
		return bad_at(parent, key, nullable ? "a commit id (40 lower-case hex digits) or null" :
			   "a commit id (40 lower-case hex digits)");
	memcpy(out, json_string_value(v), 41);
	return 0;
}

/* Host names as the hub's configuration takes them. */
static int get_host(char *out, size_t outlen, json_t *o, const struct at *parent)
{
	struct at a = at_key(parent, "host");
	json_t *v = json_object_get(o, "host");
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	size_t n = strlen(s);

	if (n == 0 || n > NAME_MAX_BYTES || n >= outlen ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
		return bad(&a, "a host's name: 1 to 63 letters, digits, '.', '_' or '-'");
	memcpy(out, s, n + 1);
	return 0;
}

/* The members every host's record starts with: its format (formats[0],
 * the one taken), its host, its id there and its sha256. */
static int get_header(json_t *root, const struct at *top, const char *const *formats,
		      char host[64], int64_t *id, char sha256[65])
{
	char word[32], *text = NULL, what[48];
	int r;

	snprintf(what, sizeof(what), "'%s'", formats[0]);
	r = get_word(word, sizeof(word), root, top, "format", formats, what);
	if (r == 0)
		r = get_host(host, 64, root, top);
	if (r == 0)
		r = get_int(id, root, top, "id", 1, INT64_MAX);
	if (r == 0)
		r = get_hash(&text, root, top, "sha256", false);
	if (r == 0)
		memcpy(sha256, text, 65);
	free(text);
	return r;
}

static int parse_job(void *rec, json_t *root)
{
	struct wire_at top = { "" };

	return wire_fields_parse(rec, wire_job_fields, root, &top);
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

static const char *const heartbeat_states[] = { "idle", "polling", "building", "measuring",
						"calibrating", NULL };

int wire_heartbeat_build(struct strbuf *out, const struct wire_heartbeat *h)
{
	json_t *root = json_object();

	json_object_set_new(root, "format", json_string(WIRE_HEARTBEAT_FORMAT));
	json_object_set_new(root, "host", json_text(h->host));
	json_object_set_new(root, "seq", json_integer(h->seq));
	json_object_set_new(root, "sent_at", json_text(h->sent_at));
	json_object_set_new(root, "state", json_string(h->state));
	json_object_set_new(root, "job", json_id(h->job));
	json_object_set_new(root, "backlog", json_integer(h->backlog));
	json_object_set_new(root, "fingerprint", json_text(h->fingerprint));
	json_object_set_new(root, "quarantine", h->quarantined ?
			    json_pack("{s:o,s:o}", "fault", json_text(h->fault ? h->fault : ""),
				      "since", json_text_or_null(h->since)) :
			    json_null());
	if (h->sandbox)
		json_object_set_new(root, "sandbox", json_text(h->sandbox));
	canonical_write(out, root);
	strbuf_addch(out, '\n');
	json_decref(root);
	return 0;
}

/* A heartbeat's sandbox (wire.h), when present: absent, it stays NULL. */
static int get_sandbox(char **out, json_t *root, const struct at *top)
{
	json_t *v = json_object_get(root, "sandbox");
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), i;
	bool ok;

	*out = NULL;
	if (!v)
		return 0;
	ok = s && n > 0 && n <= WIRE_SANDBOX_MAX;
	if (ok && strncmp(s, "none", 4)) {
		ok = n <= WIRE_SANDBOX_NAME_MAX;
		for (i = 0; ok && i < n; i++)
			ok = isalnum((unsigned char)s[i]) || s[i] == '-';
	} else if (ok) {
		ok = n == 4 || (n > 6 && !strncmp(s, "none: ", 6));
	}
	if (!ok)
		return bad_at(top, "sandbox", "a sandbox's name (letters, digits, '-'; at most "
			      "32 bytes), or 'none: ' and why (at most 1024 bytes)");
	*out = xstrndup(s, n);
	return 0;
}

static int parse_heartbeat(void *rec, json_t *root)
{
	static const char *const keys[] = {
		"format", "host", "seq", "sent_at", "state", "job", "backlog", "fingerprint",
		"quarantine", NULL,
	};
	static const char *const optional[] = { "sandbox", NULL };
	static const char *const qkeys[] = { "fault", "since", NULL };
	static const char *const formats[] = { WIRE_HEARTBEAT_FORMAT, NULL };
	struct wire_heartbeat *h = rec;
	struct at top = { "" }, aq = at_key(&top, "quarantine");
	char word[32];
	json_t *q;
	int r;

	r = object_check(root, &top, keys, optional);
	if (r == 0)
		r = get_word(word, sizeof(word), root, &top, "format", formats,
			     "'" WIRE_HEARTBEAT_FORMAT "'");
	if (r == 0)
		r = get_host(h->host, sizeof(h->host), root, &top);
	if (r == 0)
		r = get_int(&h->seq, root, &top, "seq", 1, INT64_MAX);
	if (r == 0)
		r = get_time(h->sent_at, root, &top, "sent_at", false);
	if (r == 0)
		r = get_word(h->state, sizeof(h->state), root, &top, "state", heartbeat_states,
			     "idle, polling, building, measuring or calibrating");
	if (r == 0 && !json_is_null(json_object_get(root, "job")))
		r = get_int(&h->job, root, &top, "job", 1, INT64_MAX);
	if (r == 0)
		r = get_int(&h->backlog, root, &top, "backlog", 0, INT64_MAX);
	if (r == 0)
		r = get_text(&h->fingerprint, root, &top, "fingerprint", true, JSON_TEXT_MAX);
	if (r == 0)
		r = get_sandbox(&h->sandbox, root, &top);
	if (r < 0)
		return r;
	q = json_object_get(root, "quarantine");
	if (json_is_null(q))
		return 0;
	h->quarantined = true;
	r = object_check(q, &aq, qkeys, NULL);
	if (r == 0)
		r = get_text(&h->fault, q, &aq, "fault", false, TEXT_MAX);
	if (r == 0)
		r = get_time(h->since, q, &aq, "since", true);
	return r;
}

int wire_heartbeat_parse(struct wire_heartbeat *out, const char *text, size_t len)
{
	memset(out, 0, sizeof(*out));
	return parse_hashed(text, len, out, NULL, parse_heartbeat);
}

void wire_heartbeat_release(struct wire_heartbeat *h)
{
	if (!h)
		return;
	free(h->fingerprint);
	free(h->fault);
	free(h->sandbox);
	memset(h, 0, sizeof(*h));
}

/* ---- a build with its runner results (docs/hub.md, "The build record") ---- */

#define ARTIFACTS_MAX 4096
#define RESULTS_MAX 1024

static json_t *build_fields(const struct db_build *b, const char *host)
{
	json_t *root = json_object(), *arts = json_array();
	size_t i;

	for (i = 0; i < b->nartifacts; i++)
		json_array_append_new(arts, json_pack("{s:o,s:o,s:I,s:s}",
			"name", json_text(b->artifacts[i].name),
			"path", json_text(b->artifacts[i].artifact.path ?
					  b->artifacts[i].artifact.path : ""),
			"size", (json_int_t)b->artifacts[i].artifact.size,
			"sha256", b->artifacts[i].artifact.sha256));
	json_object_set_new(root, "format", json_string(WIRE_BUILD_FORMAT));
	json_object_set_new(root, "host", json_text(host));
	json_object_set_new(root, "id", json_integer(b->id));
	json_object_set_new(root, "commit", json_text(b->commit));
	json_object_set_new(root, "tree", json_text(b->tree));
	json_object_set_new(root, "recipe", json_text(b->recipe_hash));
	json_object_set_new(root, "state", json_string(db_build_state_name(b->state)));
	json_object_set_new(root, "dir", json_text(b->dir ? b->dir : ""));
	json_object_set_new(root, "started_at", json_text(b->started_at));
	json_object_set_new(root, "finished_at", json_text_or_null(b->finished_at));
	json_object_set_new(root, "exit", json_integer(b->exit_code));
	json_object_set_new(root, "signal", json_integer(b->signal));
	json_object_set_new(root, "timed_out", json_boolean(b->timed_out));
	json_object_set_new(root, "wall_ms", json_real_or_null(b->wall_ms));
	json_object_set_new(root, "log", b64(b->log, b->log_len));
	json_object_set_new(root, "log_bytes", json_integer(b->log_bytes));
	json_object_set_new(root, "toolchain", json_text(b->toolchain));
	json_object_set_new(root, "fingerprint", json_text(b->fingerprint));
	json_object_set_new(root, "detail", json_text(b->detail));
	json_object_set_new(root, "artifacts", arts);
	return root;
}

static json_t *result_record(const struct db_runner_result *x)
{
	json_t *lines = json_array();
	size_t i;

	for (i = 0; i < x->nlines; i++)
		json_array_append_new(lines, json_pack("{s:o,s:o}",
			"kind", json_text(x->lines[i].kind), "text", json_text(x->lines[i].text)));
	return json_pack("{s:I,s:o,s:i,s:i,s:o,s:o,s:o,s:i,s:i,s:b,s:o,s:o,s:o}",
		"id", (json_int_t)x->id, "runner", json_text(x->runner), "chunk", x->chunk,
		"chunks", x->chunks, "binary_sha256", json_text(x->binary_sha256),
		"started_at", json_text(x->started_at),
		"ended_at", json_text_or_null(x->ended_at),
		"exit", x->exit_code, "signal", x->signal, "timed_out", x->timed_out,
		"elapsed_ms", json_real_or_null(x->elapsed_ms),
		"spawn_error", json_text(x->spawn_error),
		"lines", lines);
}

int wire_build_record_build(struct strbuf *out, const struct db_build *b, const char *host,
			      const struct db_runner_result *rs, size_t n)
{
	json_t *root = build_fields(b, host), *list = json_array();
	size_t i;
	int r;

	for (i = 0; i < n; i++)
		json_array_append_new(list, result_record(&rs[i]));
	json_object_set_new(root, "runner_results", list);
	fit_lines(root, "runner_results");
	r = finish_record(out, root);
	json_decref(root);
	return r;
}

static int parse_result(struct db_runner_result *x, int64_t *origin, json_t *o,
			const struct at *a)
{
	static const char *const keys[] = {
		"id", "runner", "chunk", "chunks", "binary_sha256", "started_at", "ended_at", "exit",
		"signal", "timed_out", "elapsed_ms", "spawn_error", "lines", NULL,
	};
	char *text = NULL;
	int r;

	r = object_check(o, a, keys, NULL);
	if (r == 0)
		r = get_int(origin, o, a, "id", 1, INT64_MAX);
	if (r == 0)
		r = get_text(&text, o, a, "runner", false, sizeof(x->runner) - 1);
	if (r == 0 && !*text)
		r = bad(&(struct at){ "runner" }, "a runner's name");
	if (r == 0)
		snprintf(x->runner, sizeof(x->runner), "%s", text);
	free(text);
	if (r == 0)
		r = get_int32(&x->chunk, o, a, "chunk", 1, 4096);
	if (r == 0)
		r = get_int32(&x->chunks, o, a, "chunks", 1, 4096);
	if (r == 0)
		r = get_hash(&x->binary_sha256, o, a, "binary_sha256", true);
	if (r == 0)
		r = get_time(x->started_at, o, a, "started_at", false);
	if (r == 0)
		r = get_time(x->ended_at, o, a, "ended_at", true);
	if (r == 0)
		r = get_int32(&x->exit_code, o, a, "exit", -1, 255);
	if (r == 0)
		r = get_int32(&x->signal, o, a, "signal", 0, 128);
	if (r == 0)
		r = get_bool(&x->timed_out, o, a, "timed_out");
	if (r == 0)
		r = get_num(&x->elapsed_ms, o, a, "elapsed_ms", true);
	if (r == 0)
		r = get_text(&x->spawn_error, o, a, "spawn_error", true, TEXT_MAX);
	if (r == 0)
		r = parse_lines(&x->lines, &x->nlines, o, a);
	x->state = DB_STATE_DONE;
	return r;
}

/* The build's log: base64 of at most CHILD_CAPTURE_DEFAULT bytes. */
static int parse_build_log(struct db_build *b, json_t *root)
{
	struct strbuf log = STRBUF_INIT;
	json_t *v = json_object_get(root, "log");
	int r = 0;

	if (!json_is_string(v))
		r = bad(&(struct at){ "log" }, "base64 text");
	else if (base64_decode(&log, json_string_value(v), json_string_length(v),
			       CHILD_CAPTURE_DEFAULT) < 0)
		r = err_set(-EINVAL, "log: %s", err_last());
	b->log_len = log.len;
	b->log = strbuf_detach(&log);
	return r;
}

/* What the build was and how it ended: from its commit to its detail. */
static int parse_build_run(struct db_build *b, json_t *root, const struct at *top)
{
	static const char *const states[] = { "done", "failed", NULL };
	char word[32], *text = NULL;
	int r;

	r = get_commit(b->commit, root, top, "commit", false);
	if (r == 0)
		r = get_commit(b->tree, root, top, "tree", false);
	if (r == 0)
		r = get_hash(&text, root, top, "recipe", false);
	if (r == 0)
		memcpy(b->recipe_hash, text, sizeof(b->recipe_hash));
	free(text);
	if (r == 0)
		r = get_word(word, sizeof(word), root, top, "state", states, "done or failed");
	if (r < 0)
		return r;
	b->state = !strcmp(word, "done") ? DB_BUILD_DONE : DB_BUILD_FAILED;
	r = get_text(&b->dir, root, top, "dir", false, 4096);
	if (r == 0)
		r = get_time(b->started_at, root, top, "started_at", false);
	if (r == 0)
		r = get_time(b->finished_at, root, top, "finished_at", true);
	if (r == 0)
		r = get_int32(&b->exit_code, root, top, "exit", -1, 255);
	if (r == 0)
		r = get_int32(&b->signal, root, top, "signal", 0, 128);
	if (r == 0)
		r = get_bool(&b->timed_out, root, top, "timed_out");
	if (r == 0)
		r = get_num(&b->wall_ms, root, top, "wall_ms", true);
	if (r == 0)
		r = parse_build_log(b, root);
	if (r == 0)
		r = get_int(&b->log_bytes, root, top, "log_bytes", (int64_t)b->log_len, INT64_MAX);
	if (r == 0)
		r = get_text(&b->toolchain, root, top, "toolchain", true, TEXT_MAX);
	if (r == 0)
		r = get_text(&b->fingerprint, root, top, "fingerprint", true, JSON_TEXT_MAX);
	if (r == 0)
		r = get_text(&b->detail, root, top, "detail", true, TEXT_MAX);
	return r;
}

static int parse_build_artifacts(struct db_build *b, json_t *root, const struct at *top)
{
	static const char *const akeys[] = { "name", "path", "size", "sha256", NULL };
	struct at aa = at_key(top, "artifacts");
	json_t *list, *e;
	size_t i;
	int r;

	r = get_list(&list, root, top, "artifacts", ARTIFACTS_MAX);
	if (r < 0)
		return r;
	b->artifacts = xcalloc(json_array_size(list) + 1, sizeof(*b->artifacts));
	json_array_foreach(list, i, e) {
		struct at ai = at_index(&aa, i);
		struct db_build_artifact *ba = &b->artifacts[b->nartifacts];
		char *sha = NULL;

		r = object_check(e, &ai, akeys, NULL);
		if (r == 0)
			r = get_text(&ba->name, e, &ai, "name", false, 4096);
		if (r == 0)
			r = get_text(&ba->artifact.path, e, &ai, "path", false, 4096);
		if (r == 0)
			r = get_int(&ba->artifact.size, e, &ai, "size", 0, INT64_MAX);
		if (r == 0)
			r = get_hash(&sha, e, &ai, "sha256", false);
		if (r == 0)
			memcpy(ba->artifact.sha256, sha, sizeof(ba->artifact.sha256));
		free(sha);
		b->nartifacts++;
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_build_results(struct wire_build_record *rec, json_t *root, const struct at *top)
{
	struct at ar = at_key(top, "runner_results");
	json_t *list, *e;
	size_t i;
	int r;

	r = get_list(&list, root, top, "runner_results", RESULTS_MAX);
	if (r < 0)
		return r;
	rec->results = xcalloc(json_array_size(list) + 1, sizeof(*rec->results));
	rec->results_origin = xcalloc(json_array_size(list) + 1, sizeof(*rec->results_origin));
	json_array_foreach(list, i, e) {
		struct at ai = at_index(&ar, i);

		r = parse_result(&rec->results[rec->nresults], &rec->results_origin[rec->nresults],
				 e, &ai);
		rec->nresults++;
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_build(void *ctx, json_t *root)
{
	static const char *const keys[] = {
		"format", "host", "id", "sha256", "commit", "tree", "recipe", "state", "dir",
		"started_at", "finished_at", "exit", "signal", "timed_out", "wall_ms", "log",
		"log_bytes", "toolchain", "fingerprint", "detail", "artifacts", "runner_results",
		NULL,
	};
	static const char *const formats[] = { WIRE_BUILD_FORMAT, NULL };
	struct wire_build_record *rec = ctx;
	struct at top = { "" };
	json_t *copy;
	int r;

	r = object_check(root, &top, keys, NULL);
	if (r == 0)
		r = get_header(root, &top, formats, rec->build.host, &rec->origin_id, rec->sha256);
	if (r == 0)
		r = parse_build_run(&rec->build, root, &top);
	if (r == 0)
		r = parse_build_artifacts(&rec->build, root, &top);
	if (r == 0)
		r = parse_build_results(rec, root, &top);
	if (r < 0)
		return r;
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
	json_t *root;
	int r;

	snprintf(rec.alert.host, sizeof(rec.alert.host), "%s", host);
	rec.alert.origin_id = a->id;
	root = wire_fields_build(wire_alert_fields, &rec);
	r = finish_record(out, root);
	json_decref(root);
	return r;
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
