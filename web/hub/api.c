/*
 * The JSON API under /api/v1 and /metrics, free of HTTP plumbing: each
 * endpoint reads checked parameters, asks db/ and renders JSON (every
 * string through jansson, so a branch named "<script>" stays a JSON string)
 * or CSV. docs/api.md is the contract.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge.h"
#include "runners.h"
#include "hub-internal.h"

#define PAGE_DEFAULT 50
#define PAGE_MAX 500
#define HOSTS_MAX 1000
#define HEADS_MAX 10000
#define PULLS_DEFAULT 50             /* pull heads per answer */
#define PULLS_MAX 500
#define TIMELINE_DEFAULT 100
#define TIMELINE_MAX 1000
#define CELLS_ROWS_MAX 10000         /* comparisons pooled per answer */
#define CALIBRATION_MAX 1000         /* hosts and cases per answer */
#define CALIBRATION_AA_MAX 1000      /* A/A comparisons counted per host and case */
#define LOG_MAX (256 * 1024)         /* bytes of a build log in an answer */
#define ID_MAX 999999999999999999LL

#define TYPE_JSON "application/json"
#define TYPE_CSV "text/csv; charset=utf-8"
#define TYPE_METRICS "text/plain; version=0.0.4; charset=utf-8"

/* ---- JSON values ---- */

/* A gain or another fraction: a real with six decimals, as the receipt
 * has them (json_fraction); null when there is none. */
static json_t *jfrac(bool has, double v)
{
	return has ? json_real_or_null(json_fraction(v)) : json_null();
}

/* A stored fingerprint parsed, and its hash: the first 12 hex digits of the
 * sha256 of its text, as kernel_fingerprint_hash computes it. The memo keeps
 * the last one: the points of a timeline mostly share one, so it is read
 * once per change rather than once per point. */
struct fp_memo {
	char *text;
	json_t *json;
	char hash[65];
};

static void fp_memo_release(struct fp_memo *m)
{
	if (!m)
		return;
	free(m->text);
	json_decref(m->json);
	memset(m, 0, sizeof(*m));
}

/* Makes m describe text (not NULL); true when it was another one. */
static bool fp_memo_update(struct fp_memo *m, const char *text)
{
	json_t *fp;

	if (m->text && !strcmp(m->text, text))
		return false;
	fp = json_loads(text, JSON_DECODE_ANY, NULL);
	fp_memo_release(m);
	m->text = xstrdup(text);
	m->json = fp ? fp : json_text(text);
	/* A libcrypto that cannot hash leaves the hash "": shown as null. */
	sha256_hex(m->hash, text, strlen(text));
	m->hash[12] = '\0';
	return true;
}

static void set_fingerprint_memo(json_t *o, const char *text, struct fp_memo *m)
{
	if (!text) {
		json_object_set_new(o, "fingerprint", json_null());
		json_object_set_new(o, "fingerprint_hash", json_null());
		return;
	}
	fp_memo_update(m, text);
	json_object_set(o, "fingerprint", m->json);
	json_object_set_new(o, "fingerprint_hash", json_text_or_null(m->hash));
}

static void set_fingerprint(json_t *o, const char *text)
{
	struct fp_memo m = { 0 };

	set_fingerprint_memo(o, text, &m);
	fp_memo_release(&m);
}

/* ---- replies ---- */

static void reply_json(struct web_reply *out, int status, json_t *root)
{
	/* Compact: indentation was a third of a timeline's bytes and of the time
	 * to write it (docs/performance.md). Receipts keep perfd show's form. */
	char *text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(12));

	out->status = status;
	out->type = TYPE_JSON;
	strbuf_reset(&out->body);
	strbuf_adds(&out->body, text ? text : "null");
	strbuf_addch(&out->body, '\n');
	free(text);
	json_decref(root);
}

/* Appends v (stolen) as compact JSON. */
static void put_json(struct strbuf *sb, json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(12));

	strbuf_adds(sb, text ? text : "null");
	free(text);
	json_decref(v);
}

/* Appends a real as jansson writes it (12 significant digits, ".0" on an
 * integral value), or null. */
static void put_real(struct strbuf *sb, double v)
{
	char buf[64];

	if (!isfinite(v)) {
		strbuf_adds(sb, "null");
		return;
	}
	snprintf(buf, sizeof(buf), "%.12g", v);
	strbuf_adds(sb, buf);
	if (!strpbrk(buf, ".e"))
		strbuf_adds(sb, ".0");
}

void web_reply_error(struct web_reply *out, int status, const char *msg)
{
	json_t *root = json_object();

	json_object_set_new(root, "error", json_text(msg));
	reply_json(out, status, root);
}

static void reply_bad(struct web_reply *out)
{
	web_reply_error(out, 400, err_last());
}

/* 404 for an unknown id, else 500; the 500 is logged here, once. */
static void reply_db_error(struct web_reply *out, int r)
{
	if (r == -ENOENT) {
		web_reply_error(out, 404, err_last());
		return;
	}
	log_warnx("api: %s", err_last());
	web_reply_error(out, 500, err_last());
}

/* ---- CSV ---- */

/* One line per object of rows with the columns named; a missing or null
 * value is an empty field, a nested one its compact JSON. */
static void reply_csv(struct web_reply *out, const char *const *cols, json_t *rows)
{
	size_t i, j;
	json_t *row;

	out->status = 200;
	out->type = TYPE_CSV;
	strbuf_reset(&out->body);
	for (j = 0; cols[j]; j++) {
		if (j)
			strbuf_addch(&out->body, ',');
		csv_text(&out->body, cols[j], strlen(cols[j]));
	}
	strbuf_addch(&out->body, '\n');
	json_array_foreach(rows, i, row) {
		for (j = 0; cols[j]; j++) {
			json_t *v = json_object_get(row, cols[j]);
			char buf[64];
			char *text;

			if (j)
				strbuf_addch(&out->body, ',');
			if (!v || json_is_null(v))
				continue;
			if (json_is_string(v)) {
				csv_text(&out->body, json_string_value(v), json_string_length(v));
			} else if (json_is_integer(v)) {
				strbuf_addf(&out->body, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
			} else if (json_is_real(v)) {
				snprintf(buf, sizeof(buf), "%.12g", json_real_value(v));
				strbuf_adds(&out->body, buf);
			} else if (json_is_boolean(v)) {
				strbuf_adds(&out->body, json_is_true(v) ? "true" : "false");
			} else {
				text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
				if (text)
					csv_text(&out->body, text, strlen(text));
				free(text);
			}
		}
		strbuf_addch(&out->body, '\n');
	}
	json_decref(rows);
}

/* Copies the named fields of src into a fresh object, for a flat CSV row. */
static json_t *pick(json_t *src, const char *const *cols)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; cols[i]; i++) {
		json_t *v = json_object_get(src, cols[i]);

		if (v)
			json_object_set(o, cols[i], v);
	}
	return o;
}

/* The parameters of a list that has no others. */
static const char *const format_only[] = { "format", NULL };

/* Whether pa holds only the parameters allowed and a good "format", read
 * into *csv; when not, out is the 400 that says why. */
static bool params_format(bool *csv, struct web_reply *out, const struct web_params *pa,
			  const char *const *allowed)
{
	*csv = false;
	if (web_params_check(pa, allowed) < 0 || web_param_format(csv, pa) < 0) {
		reply_bad(out);
		return false;
	}
	return true;
}

/* A list's answer: {"key": list} (list stolen), or CSV with the columns
 * cols of rows, which flat (when not NULL) makes from list. */
static void reply_list(struct web_reply *out, bool csv, const char *key, json_t *list,
		       const char *const *cols, json_t *(*flat)(json_t *))
{
	if (csv)
		reply_csv(out, cols, flat ? flat(list) : list);
	else
		reply_json(out, 200, json_pack("{s:o}", key, list));
}

static json_t *jnext(bool more, int64_t last)
{
	return more ? json_integer(last) : json_null();
}

/* ---- /api/v1/hosts ---- */

static const char *const host_cols[] = { "name", "fingerprint_hash", "heartbeat", "quarantined",
	"fault", "since", "last_push", "state", "backlog", "sandbox", "held", "hold", NULL };

/* A list with no parameter but "format": load appends its rows to list
 * and returns 0, or a negative errno (a database error). */
static void reply_format_list(struct web_reply *out, struct db *db, const struct web_params *pa,
			      const char *key, const char *const *cols,
			      int (*load)(json_t *list, struct db *db))
{
	json_t *list;
	bool csv;
	int r;

	if (!params_format(&csv, out, pa, format_only))
		return;
	list = json_array();
	r = load(list, db);
	if (r < 0) {
		json_decref(list);
		reply_db_error(out, r);
		return;
	}
	reply_list(out, csv, key, list, cols, NULL);
}

/* The commits held on host (docs/hosts.md, "When the machine goes down"):
 * how many, and what the newest did, as o's "held" and "hold" (null for
 * none): this database's own holds, and at a hub those its heartbeat said. */
static int set_holds(json_t *o, struct db *db, const char *host)
{
	struct db_hold *own = NULL;
	struct db_hub_hold *said = NULL;
	size_t nown = 0, nsaid = 0, i;
	char *text = NULL;
	int r = db_hold_list(db, &own, &nown, host, true);

	if (r == 0)
		r = db_hub_holds_list(db, &said, &nsaid, host, NULL, NULL);
	if (r == 0 && nown)
		text = runner_hold_text(&own[0]);
	else if (r == 0 && nsaid)
		text = xstrdup(said[0].text);
	json_object_set_new(o, "held", json_integer((json_int_t)(nown + nsaid)));
	json_object_set_new(o, "hold", json_text_or_null(text));
	for (i = 0; i < nown; i++)
		db_hold_release(&own[i]);
	for (i = 0; i < nsaid; i++)
		db_hub_hold_release(&said[i]);
	free(own);
	free(said);
	free(text);
	return r;
}

static int hosts_load(json_t *list, struct db *db)
{
	struct db_host_info *hosts = NULL;
	size_t n = 0, i;
	int r = db_host_infos(db, &hosts, &n, HOSTS_MAX);

	for (i = 0; i < n; i++) {
		const struct db_host_info *h = &hosts[i];
		json_t *o = json_object();

		json_object_set_new(o, "name", json_text(h->name));
		set_fingerprint(o, h->fingerprint);
		json_object_set_new(o, "heartbeat", json_text_or_null(h->heartbeat));
		json_object_set_new(o, "quarantined", json_boolean(h->quarantined));
		json_object_set_new(o, "fault", json_text(h->fault));
		json_object_set_new(o, "since", json_text_or_null(h->since));
		json_object_set_new(o, "last_push", h->has_status ?
				    json_text_or_null(h->last_push) : json_null());
		json_object_set_new(o, "state", h->has_status ? json_text_or_null(h->state) :
				    json_null());
		json_object_set_new(o, "backlog", h->has_status ? json_integer(h->backlog) :
				    json_null());
		json_object_set_new(o, "sandbox", json_text(h->sandbox));
		if (r == 0)
			r = set_holds(o, db, h->name);
		json_array_append_new(list, o);
		db_host_info_release(&hosts[i]);
	}
	free(hosts);
	return r;
}

static void api_hosts(struct web_reply *out, struct db *db, const struct web_params *pa)
{
	reply_format_list(out, db, pa, "hosts", host_cols, hosts_load);
}

/* ---- /api/v1/heads ---- */

static const char *const head_cols[] = { "name", "commit", "pull", "seen_at", "job",
	"job_state", "job_detail", "subject", NULL };

static int heads_load(json_t *list, struct db *db)
{
	struct db_head_info *heads = NULL;
	size_t n = 0, i;
	int r = db_head_infos(db, &heads, &n, HEADS_MAX);

	for (i = 0; i < n; i++) {
		const struct db_head_info *h = &heads[i];

		json_array_append_new(list, json_pack("{s:o,s:o,s:b,s:o,s:o,s:o,s:o,s:o}",
			"name", json_text(h->name), "commit", json_text(h->oid), "pull", h->is_pull,
			"seen_at", json_text(h->seen_at), "job", json_id(h->job_id),
			"job_state", json_text_or_null(h->job_state),
			"job_detail", json_text_or_null(h->job_detail),
			"subject", json_text_or_null(h->subject)));
		db_head_info_release(&heads[i]);
	}
	free(heads);
	return r;
}

static void api_heads(struct web_reply *out, struct db *db, const struct web_params *pa)
{
	reply_format_list(out, db, pa, "heads", head_cols, heads_load);
}

/* ---- /api/v1/pulls ---- */

/* Where each expected host stands with one head (web_host_state); -errno
 * with the detail in err_last() on a database error. */
static int pull_hosts_json(json_t **out, struct db *db, const struct web_api_pulls *pu,
			   const struct db_hub_pull *p)
{
	json_t *list = json_array();
	size_t i;
	int r;

	for (i = 0; i < pu->nexpect; i++) {
		struct web_host_state hs;

		r = web_host_state(&hs, db, pu->expect[i], p->commit, p->base, pu->silent_after_s);
		if (r < 0) {
			web_host_state_release(&hs);
			json_decref(list);
			return r;
		}
		json_array_append_new(list, json_pack("{s:o,s:s,s:s,s:o,s:o,s:o,s:b}",
			"host", json_text(hs.host), "state", web_host_at_name(hs.state),
			"status", hs.status, "detail", json_textn(hs.desc.buf, hs.desc.len),
			"job", hs.has_job ? json_integer(hs.job.id) : json_null(),
			"job_state", hs.has_job ? json_text(db_job_state_name(hs.job.state)) :
			json_null(),
			"base_differs", hs.base_differs));
		web_host_state_release(&hs);
	}
	*out = list;
	return 0;
}

static void api_pulls(struct web_reply *out, struct db *db, const struct web_api_pulls *pu,
		      const struct web_params *pa)
{
	static const char *const allowed[] = { "commit", "limit", NULL };
	struct db_hub_pull *ps = NULL;
	const char *commit = NULL;
	json_t *list = NULL;
	size_t n = 0, i;
	int64_t limit;
	int r;

	if (web_params_check(pa, allowed) < 0 || web_param_hex(&commit, pa, "commit") < 0 ||
	    web_param_int(&limit, pa, "limit", PULLS_DEFAULT, 1, PULLS_MAX) < 0) {
		reply_bad(out);
		return;
	}
	if (pu && pu->repo) {
		r = db_hub_pulls_find(db, &ps, &n, pu->repo, commit, (size_t)limit);
		if (r < 0) {
			reply_db_error(out, r);
			return;
		}
	}
	list = json_array();
	for (i = 0; i < n; i++) {
		const struct db_hub_pull *p = &ps[i];
		json_t *hosts;

		r = pull_hosts_json(&hosts, db, pu, p);
		if (r < 0) {
			free(ps);
			json_decref(list);
			reply_db_error(out, r);
			return;
		}
		json_array_append_new(list, json_pack("{s:i,s:s,s:s,s:o,s:s,s:o,s:b,s:b,s:o,s:o}",
			"number", p->pr, "head", p->commit, "base", p->base,
			"base_ref", json_text(p->base_ref), "how", p->how,
			"author", json_text(p->author), "trusted", p->trusted, "open", p->open,
			"fixed_at", json_text_or_null(p->fixed_at),
			"hosts", hosts));
	}
	free(ps);
	reply_json(out, 200, json_pack("{s:o,s:o,s:o}",
		"repo", pu && pu->repo ? json_text(pu->repo) : json_null(),
		"silent_after_s", pu && pu->repo ? json_real(pu->silent_after_s) : json_null(),
		"pulls", list));
}

/* ---- /api/v1/jobs ---- */

static const char *const job_cols[] = { "id", "head", "commit", "base", "subject", "state",
	"detail", "created_at", "started_at", "finished_at", NULL };
static const char *const job_csv_cols[] = { "id", "head", "commit", "base", "subject", "state",
	"detail", "created_at", "started_at", "finished_at", "comparison", "case", "verdict",
	"gain", "kind", NULL };

static json_t *job_json(const struct db_job_info *j)
{
	json_t *o = json_object(), *cs = json_array();
	size_t i;

	json_object_set_new(o, "id", json_integer(j->id));
	json_object_set_new(o, "head", json_text(j->head));
	json_object_set_new(o, "commit", json_text(j->commit));
	json_object_set_new(o, "base", json_text_or_null(j->base));
	json_object_set_new(o, "subject", json_text(j->subject));
	json_object_set_new(o, "state", json_text(j->state));
	json_object_set_new(o, "detail", json_text(j->detail));
	json_object_set_new(o, "created_at", json_text_or_null(j->created_at));
	json_object_set_new(o, "started_at", json_text_or_null(j->started_at));
	json_object_set_new(o, "finished_at", json_text_or_null(j->finished_at));
	for (i = 0; i < j->ncomparisons; i++) {
		const struct db_job_comparison *c = &j->comparisons[i];

		json_array_append_new(cs, json_pack("{s:I,s:o,s:o,s:o,s:s}", "id", (json_int_t)c->id,
						    "case", json_text(c->case_name),
						    "verdict", json_text_or_null(c->verdict),
						    "gain", jfrac(c->has_gain, c->gain_median),
						    "kind", c->aa ? "aa" : "compare"));
	}
	json_object_set_new(o, "comparisons", cs);
	return o;
}

/* One CSV row per job and comparison; a job without one has one row. */
static json_t *jobs_flat(json_t *jobs)
{
	json_t *rows = json_array(), *job, *c;
	size_t i, k;

	json_array_foreach(jobs, i, job) {
		json_t *cs = json_object_get(job, "comparisons");

		if (!json_array_size(cs))
			json_array_append_new(rows, pick(job, job_cols));
		json_array_foreach(cs, k, c) {
			json_t *row = pick(job, job_cols);

			json_object_set(row, "comparison", json_object_get(c, "id"));
			json_object_set(row, "case", json_object_get(c, "case"));
			json_object_set(row, "verdict", json_object_get(c, "verdict"));
			json_object_set(row, "gain", json_object_get(c, "gain"));
			json_object_set(row, "kind", json_object_get(c, "kind"));
			json_array_append_new(rows, row);
		}
	}
	json_decref(jobs);
	return rows;
}

static void api_jobs(struct web_reply *out, struct db *db, const struct web_params *pa)
{
	static const char *const allowed[] = { "limit", "before", "format", NULL };
	struct db_job_info *jobs = NULL;
	int64_t limit, before;
	json_t *list;
	bool csv, more;
	int n, i;

	if (web_params_check(pa, allowed) < 0 || web_param_format(&csv, pa) < 0 ||
	    web_param_int(&limit, pa, "limit", PAGE_DEFAULT, 1, PAGE_MAX) < 0 ||
	    web_param_int(&before, pa, "before", 0, 1, ID_MAX) < 0) {
		reply_bad(out);
		return;
	}
	/* One row past the page says whether there is a next one. */
	jobs = xcalloc((size_t)limit + 1, sizeof(*jobs));
	n = db_job_infos(db, jobs, (size_t)limit + 1, before);
	if (n < 0) {
		free(jobs);
		reply_db_error(out, n);
		return;
	}
	more = n > limit;
	list = json_array();
	for (i = 0; i < n; i++) {
		if (i < limit)
			json_array_append_new(list, job_json(&jobs[i]));
		db_job_info_release(&jobs[i]);
	}
	free(jobs);
	if (csv) {
		reply_csv(out, job_csv_cols, jobs_flat(list));
		return;
	}
	reply_json(out, 200, json_pack("{s:o,s:o}", "jobs", list, "next",
				       jnext(more, more ? json_integer_value(json_object_get(
					       json_array_get(list, (size_t)limit - 1), "id")) : 0)));
}

/* ---- /api/v1/builds/ID ---- */

static json_t *runner_result_json(const struct db_runner_result *x)
{
	json_t *o = json_object(), *lines = json_array();
	size_t i;

	json_object_set_new(o, "id", json_integer(x->id));
	json_object_set_new(o, "runner", json_text(x->runner));
	json_object_set_new(o, "chunk", json_integer(x->chunk));
	json_object_set_new(o, "chunks", json_integer(x->chunks));
	json_object_set_new(o, "exit", x->exit_code >= 0 ? json_integer(x->exit_code) : json_null());
	json_object_set_new(o, "signal", json_integer(x->signal));
	json_object_set_new(o, "timed_out", json_boolean(x->timed_out));
	json_object_set_new(o, "elapsed_ms",
			    json_real_or_null(round(x->elapsed_ms * 1000) / 1000));
	json_object_set_new(o, "binary_sha256", json_text(x->binary_sha256));
	json_object_set_new(o, "started_at", json_text_or_null(x->started_at));
	json_object_set_new(o, "ended_at", json_text_or_null(x->ended_at));
	json_object_set_new(o, "spawn_error", json_text(x->spawn_error));
	for (i = 0; i < x->nlines; i++)
		json_array_append_new(lines, runner_line_json(&x->lines[i]));
	json_object_set_new(o, "lines", lines);
	return o;
}

static void api_build(struct web_reply *out, struct db *db, int64_t id,
		      const struct web_params *pa)
{
	static const char *const allowed[] = { NULL };
	struct db_runner_result *res = NULL;
	struct db_build b;
	json_t *o, *arts, *rs;
	size_t nres = 0, i, keep;
	int r;

	memset(&b, 0, sizeof(b));
	if (web_params_check(pa, allowed) < 0) {
		reply_bad(out);
		return;
	}
	r = db_build_load(db, &b, id);
	if (r == 0)
		r = db_runner_results_load(db, &res, &nres, id);
	if (r < 0) {
		reply_db_error(out, r);
		goto out;
	}
	o = json_object();
	json_object_set_new(o, "id", json_integer(b.id));
	json_object_set_new(o, "host", json_text(b.host));
	json_object_set_new(o, "commit", json_text(b.commit));
	json_object_set_new(o, "tree", json_text(b.tree));
	json_object_set_new(o, "recipe_hash", json_text(b.recipe_hash));
	json_object_set_new(o, "state", json_string(db_build_state_name(b.state)));
	json_object_set_new(o, "dir", json_text(b.dir));
	json_object_set_new(o, "started_at", json_text_or_null(b.started_at));
	json_object_set_new(o, "finished_at", json_text_or_null(b.finished_at));
	json_object_set_new(o, "exit", b.exit_code >= 0 ? json_integer(b.exit_code) : json_null());
	json_object_set_new(o, "signal", json_integer(b.signal));
	json_object_set_new(o, "timed_out", json_boolean(b.timed_out));
	json_object_set_new(o, "wall_ms", json_real_or_null(round(b.wall_ms * 1000) / 1000));
	json_object_set_new(o, "toolchain", json_text(b.toolchain));
	set_fingerprint(o, b.fingerprint);
	json_object_set_new(o, "detail", json_text(b.detail));
	arts = json_array();
	for (i = 0; i < b.nartifacts; i++)
		json_array_append_new(arts, json_pack("{s:o,s:o,s:I,s:s}",
			"name", json_text(b.artifacts[i].name),
			"path", json_text(b.artifacts[i].artifact.path),
			"size", (json_int_t)b.artifacts[i].artifact.size,
			"sha256", b.artifacts[i].artifact.sha256));
	json_object_set_new(o, "artifacts", arts);
	/* The stored log is bounded when it is written; the answer is bounded
	 * again so one page stays small. log_bytes counts all the build wrote. */
	keep = utf8_cut(b.log ? b.log : "", b.log_len, LOG_MAX);
	json_object_set_new(o, "log", json_textn(b.log ? b.log : "", keep));
	json_object_set_new(o, "log_bytes", json_integer(b.log_bytes));
	json_object_set_new(o, "log_truncated",
			    json_boolean(keep < b.log_len || (int64_t)keep < b.log_bytes));
	rs = json_array();
	for (i = 0; i < nres; i++)
		json_array_append_new(rs, runner_result_json(&res[i]));
	json_object_set_new(o, "runner_results", rs);
	reply_json(out, 200, o);
out:
	for (i = 0; i < nres; i++)
		db_runner_result_release(&res[i]);
	free(res);
	db_build_release(&b);
}

/* ---- /api/v1/manifests/HASH ---- */

static void api_manifest(struct web_reply *out, struct db *db, const char *hash,
			 const struct web_params *pa)
{
	static const char *const allowed[] = { NULL };
	struct db_manifest m;
	json_t *o, *files;
	size_t i;
	int r;

	memset(&m, 0, sizeof(m));
	if (web_params_check(pa, allowed) < 0) {
		reply_bad(out);
		return;
	}
	if (strlen(hash) != 64 || strspn(hash, "0123456789abcdef") != 64) {
		web_reply_error(out, 400, "a manifest is named by its sha256: 64 lower-case hex "
				"digits");
		return;
	}
	r = db_manifest_load(db, &m, hash);
	if (r < 0) {
		reply_db_error(out, r);
		return;
	}
	o = json_object();
	json_object_set_new(o, "hash", json_text(m.hash));
	json_object_set_new(o, "build", json_id(m.build_id));
	json_object_set_new(o, "commit", json_text_or_null(m.commit));
	json_object_set_new(o, "tree", json_text_or_null(m.tree));
	json_object_set_new(o, "recipe_hash", json_text_or_null(m.recipe_hash));
	json_object_set_new(o, "created_at", json_text(m.created_at));
	files = json_array();
	for (i = 0; i < m.nfiles; i++)
		json_array_append_new(files, json_pack("{s:o,s:I,s:s}", "name",
			json_text(m.files[i].name), "size", (json_int_t)m.files[i].size,
			"sha256", m.files[i].sha256));
	json_object_set_new(o, "files", files);
	reply_json(out, 200, o);
	db_manifest_release(&m);
}

/* ---- /api/v1/comparisons ---- */

static const char *const verdicts[] = { "faster", "slower", "unchanged", "unresolved",
	"invalid", NULL };

static const char *const cmp_cols[] = { "id", "created_at", "state", "host", "case", "metric",
	"verdict", "gain", "old_sha256", "new_sha256", "old_manifest", "new_manifest", "job", "head",
	"commit", "kind", "made_by", NULL };

static json_t *entry_json(const struct db_comparison_entry *e)
{
	const struct db_comparison_row *c = &e->row;
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(c->id));
	json_object_set_new(o, "created_at", json_text(c->created_at));
	json_object_set_new(o, "state", json_string(db_state_name(c->state)));
	json_object_set_new(o, "host", json_text(c->host));
	json_object_set_new(o, "case", json_text(c->case_name));
	json_object_set_new(o, "metric", json_text_or_null(c->metric));
	json_object_set_new(o, "verdict", json_text_or_null(c->verdict));
	json_object_set_new(o, "gain", jfrac(c->has_gain, c->gain_median));
	json_object_set_new(o, "old_sha256", json_text(c->old_sha256));
	json_object_set_new(o, "new_sha256", json_text(c->new_sha256));
	json_object_set_new(o, "old_manifest", json_text_or_null(c->old_manifest));
	json_object_set_new(o, "new_manifest", json_text_or_null(c->new_manifest));
	json_object_set_new(o, "job", json_id(e->job_id));
	json_object_set_new(o, "head", json_text_or_null(e->head));
	json_object_set_new(o, "commit", json_text_or_null(e->commit));
	json_object_set_new(o, "kind", json_string(c->aa ? "aa" : "compare"));
	json_object_set_new(o, "made_by", json_string(e->made_by));
	return o;
}

static int param_verdict(const char **out, const struct web_params *pa)
{
	const char *v = web_param_get(pa, "verdict");
	size_t i;

	*out = NULL;
	if (!v)
		return 0;
	for (i = 0; verdicts[i]; i++) {
		if (!strcmp(v, verdicts[i])) {
			*out = verdicts[i];
			return 0;
		}
	}
	return err_set(-EINVAL, "parameter 'verdict': expected faster, slower, unchanged, "
		       "unresolved or invalid");
}

static void api_comparisons(struct web_reply *out, struct db *db, const struct web_params *pa)
{
	static const char *const allowed[] = { "host", "case", "commit", "verdict", "limit",
		"before", "format", NULL };
	struct db_comparison_filter f;
	struct db_comparison_entry *rows;
	int64_t limit, next = 0;
	json_t *list;
	bool csv;
	int n, i;

	memset(&f, 0, sizeof(f));
	if (web_params_check(pa, allowed) < 0 || web_param_format(&csv, pa) < 0 ||
	    web_param_text(&f.host, pa, "host", false) < 0 ||
	    web_param_text(&f.case_name, pa, "case", false) < 0 ||
	    web_param_hex(&f.commit, pa, "commit") < 0 || param_verdict(&f.verdict, pa) < 0 ||
	    web_param_int(&limit, pa, "limit", PAGE_DEFAULT, 1, PAGE_MAX) < 0 ||
	    web_param_int(&f.before_id, pa, "before", 0, 1, ID_MAX) < 0) {
		reply_bad(out);
		return;
	}
	rows = xcalloc((size_t)limit + 1, sizeof(*rows));
	n = db_comparison_find(db, rows, (size_t)limit + 1, &f);
	if (n < 0) {
		free(rows);
		reply_db_error(out, n);
		return;
	}
	list = json_array();
	for (i = 0; i < n && i < limit; i++)
		json_array_append_new(list, entry_json(&rows[i]));
	if (n > limit)
		next = rows[limit - 1].row.id;
	free(rows);
	if (csv) {
		reply_csv(out, cmp_cols, list);
		return;
	}
	reply_json(out, 200, json_pack("{s:o,s:o}", "comparisons", list, "next",
				       jnext(next > 0, next)));
}

/* ---- /api/v1/comparisons/ID ---- */

/*
 * A done or abandoned comparison never changes: its receipt is rendered the
 * first time it is asked for and answered from then on as the bytes stored
 * (db/receipts.c). A handle opened read-only (perfd serve --db) renders it
 * each time but stores nothing; a writer that holds the lock, or one that
 * wrote since the comparison was loaded, leaves it to the next ask. A
 * running comparison is rendered each time.
 */
static void api_comparison(struct web_reply *out, struct db *db, int64_t id,
			   const struct web_params *pa)
{
	static const char *const allowed[] = { "format", NULL };
	struct db_receipt stored;
	struct db_comparison c;
	char sha[SHA256_HEX_SIZE];
	const char *format;
	int64_t mark = 0;
	bool csv;
	int r;

	memset(&c, 0, sizeof(c));
	if (!params_format(&csv, out, pa, allowed))
		return;
	format = csv ? "csv" : "json";
	out->status = 200;
	out->type = csv ? TYPE_CSV : TYPE_JSON;
	strbuf_reset(&out->body);
	r = db_receipt_get(db, &stored, id, format, RUNNER_RECEIPT_RENDERER);
	if (r == 0) {
		/* The bytes as read, not copied again: the body owns them. */
		snprintf(out->etag, sizeof(out->etag), "\"%s\"", stored.sha256);
		strbuf_attach(&out->body, stored.body, stored.len, stored.len + 1);
		stored.body = NULL;
		db_receipt_release(&stored);
		return;
	}
	if (r == -ENOENT)
		r = db_receipt_mark(db, &mark);
	if (r == 0)
		r = db_comparison_load(db, &c, id);
	if (r < 0) {
		reply_db_error(out, r);
		goto out;
	}
	/* Exactly what perfd show prints: the receipt names the job and builds
	 * of an agent's comparison itself. */
	runner_receipt_render(&out->body, &c, csv ? RUNNER_FORMAT_CSV : RUNNER_FORMAT_JSON);
	/* A libcrypto that cannot hash leaves sha "": nothing is stored. */
	if (c.state == DB_STATE_RUNNING || sha256_hex(sha, out->body.buf, out->body.len) < 0 ||
	    !*sha)
		goto out;
	snprintf(out->etag, sizeof(out->etag), "\"%s\"", sha);
	r = db_receipt_put(db, id, format, RUNNER_RECEIPT_RENDERER, sha, out->body.buf,
			   out->body.len, mark);
	if (r < 0 && r != -EACCES && r != -EBUSY && r != -EAGAIN)
		log_warnx("api: %s", err_last());
out:
	db_comparison_release(&c);
}

static void api_verify(struct web_reply *out, struct db *db, int64_t id,
		       const struct web_params *pa)
{
	static const char *const allowed[] = { NULL };
	struct strbuf report = STRBUF_INIT;
	struct db_comparison c;
	json_t *root, *mism;
	const char *line;
	int checked = 0, n, r;

	memset(&c, 0, sizeof(c));
	if (web_params_check(pa, allowed) < 0) {
		reply_bad(out);
		return;
	}
	r = db_comparison_load(db, &c, id);
	if (r < 0) {
		reply_db_error(out, r);
		goto out;
	}
	n = runner_verify(&report, &c, &checked);
	root = json_object();
	mism = json_array();
	json_object_set_new(root, "comparison", json_integer(id));
	json_object_set_new(root, "rule", json_text(c.rule));
	json_object_set_new(root, "checked", json_integer(checked));
	for (line = report.buf; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0))
		json_array_append_new(mism, json_textn(line, strcspn(line, "\n")));
	json_object_set_new(root, "mismatches", mism);
	json_object_set_new(root, "ok", json_boolean(n == 0));
	/* A comparison that cannot be verified (no summary, unknown rule) is
	 * not ok, and says why. */
	json_object_set_new(root, "error", n < 0 ? json_text(err_last()) : json_null());
	reply_json(out, 200, root);
out:
	strbuf_release(&report);
	db_comparison_release(&c);
}

/* ---- /api/v1/changepoints ---- */

/* A branch's series and its change points (docs/history.md, "Change
 * points"): the points of the newest point's metric (a case whose metric
 * changed is a new series), their head medians the values. */
struct changes {
	struct db_series_point *pts;
	size_t n;
	double *values;
	struct runner_changepoint cp[RUNNER_CHANGEPOINT_MAX];
	int ncp;
};

static void changes_release(struct changes *c)
{
	free(c->pts);
	free(c->values);
	memset(c, 0, sizeof(*c));
}

/*
 * The change points of the series asked for last, by the sha256 of their
 * values: they are a function of the values alone (the method's seed is
 * fixed), and a timeline page asks for them twice, for its points' marks
 * and for its table. The least recently used entry makes room.
 */
#define CHANGES_CACHED 8
static struct changes_cached {
	char key[SHA256_HEX_SIZE];
	uint64_t used;               /* 0: empty */
	int ncp;
	struct runner_changepoint cp[RUNNER_CHANGEPOINT_MAX];
} changes_cache[CHANGES_CACHED];
static uint64_t changes_clock;
static pthread_mutex_t changes_lock = PTHREAD_MUTEX_INITIALIZER;

/* runner_changepoints_find of v[0..n) into out (RUNNER_CHANGEPOINT_MAX),
 * from the cache when it holds them. */
static int changes_find(struct runner_changepoint *out, const double *v, size_t n)
{
	struct changes_cached *e, *lru = &changes_cache[0];
	char key[SHA256_HEX_SIZE];
	int r;

	r = sha256_hex(key, v, n * sizeof(*v));
	if (r < 0)
		return r;
	pthread_mutex_lock(&changes_lock);
	for (e = changes_cache; e < changes_cache + CHANGES_CACHED; e++) {
		if (e->used && !strcmp(e->key, key)) {
			e->used = ++changes_clock;
			memcpy(out, e->cp, sizeof(e->cp));
			r = e->ncp;
			pthread_mutex_unlock(&changes_lock);
			return r;
		}
		if (e->used < lru->used)
			lru = e;
	}
	pthread_mutex_unlock(&changes_lock);
	r = runner_changepoints_find(out, RUNNER_CHANGEPOINT_MAX, v, n);
	if (r < 0)
		return r;
	pthread_mutex_lock(&changes_lock);
	memcpy(lru->key, key, sizeof(key));
	memcpy(lru->cp, out, sizeof(lru->cp));
	lru->ncp = r;
	lru->used = ++changes_clock;
	pthread_mutex_unlock(&changes_lock);
	return r;
}

/* Fills *out (zeroed first): 0, or a negative errno from db/ or runners/. */
static int changes_load(struct changes *out, struct db *db, const char *host,
			const char *case_name, const char *branch)
{
	const char *metric;
	size_t i, k;
	int r;

	memset(out, 0, sizeof(*out));
	out->pts = xcalloc(RUNNER_CHANGEPOINT_POINTS_MAX, sizeof(*out->pts));
	r = db_series_load(db, out->pts, RUNNER_CHANGEPOINT_POINTS_MAX, host, case_name, branch);
	if (r < 0)
		return r;
	out->values = xcalloc((size_t)r + 1, sizeof(*out->values));
	metric = r ? out->pts[r - 1].metric : "";
	for (i = k = 0; i < (size_t)r; i++) {
		if (strcmp(out->pts[i].metric, metric) || !isfinite(out->pts[i].value))
			continue;
		out->pts[k] = out->pts[i];
		out->values[k++] = out->pts[i].value;
	}
	out->n = k;
	r = changes_find(out->cp, out->values, out->n);
	if (r < 0)
		return r;
	out->ncp = r;
	return 0;
}

static const char *const changepoint_cols[] = { "index", "comparison", "job", "commit",
	"mean_before", "mean_after", "change", "p", "energy", "fingerprint_changed", NULL };

static json_t *method_json(void)
{
	char seed[24];

	snprintf(seed, sizeof(seed), "0x%llx", (unsigned long long)RUNNER_CHANGEPOINT_SEED);
	return json_pack("{s:s, s:i, s:f, s:i, s:i, s:s, s:f, s:i, s:i}",
			 "name", RUNNER_CHANGEPOINT_METHOD, "version", RUNNER_CHANGEPOINT_VERSION,
			 "alpha", RUNNER_CHANGEPOINT_ALPHA,
			 "min_segment", RUNNER_CHANGEPOINT_MIN_SEGMENT,
			 "permutations", RUNNER_CHANGEPOINT_PERMUTATIONS, "seed", seed,
			 "p_threshold", RUNNER_CHANGEPOINT_P,
			 "max_points", RUNNER_CHANGEPOINT_POINTS_MAX,
			 "max_changepoints", RUNNER_CHANGEPOINT_MAX);
}

static json_t *changepoint_json(const struct changes *c, int i)
{
	const struct runner_changepoint *cp = &c->cp[i];
	const struct db_series_point *p = &c->pts[cp->index];
	const struct db_series_point *prev = &c->pts[cp->index - 1];
	json_t *o = json_object();

	json_object_set_new(o, "index", json_integer((json_int_t)cp->index));
	json_object_set_new(o, "comparison", json_integer(p->comparison_id));
	json_object_set_new(o, "job", json_integer(p->job_id));
	json_object_set_new(o, "commit", json_text(p->commit));
	json_object_set_new(o, "mean_before", json_real_or_null(cp->mean_before));
	json_object_set_new(o, "mean_after", json_real_or_null(cp->mean_after));
	/* As the series' values are times or other metrics alike: relative to
	 * the regime before, positive when the value grew. */
	json_object_set_new(o, "change", jfrac(cp->mean_before != 0,
					       (cp->mean_after - cp->mean_before) /
					       fabs(cp->mean_before)));
	json_object_set_new(o, "p", jfrac(true, cp->p));
	json_object_set_new(o, "energy", json_real_or_null(cp->q));
	json_object_set_new(o, "fingerprint_changed",
			    json_boolean(strcmp(p->fingerprint_hash, prev->fingerprint_hash) != 0));
	return o;
}

/* Why c, the series of host, case_name and branch, holds no change point
 * when it is too short for one: a sentence the caller owns, or NULL when
 * it is long enough. */
static char *changes_note(const struct changes *c, const char *branch, bool branch_known)
{
	if (c->n >= 2 * RUNNER_CHANGEPOINT_MIN_SEGMENT)
		return NULL;
	if (!c->n && !branch_known)
		return xasprintf("no head job of branch '%s' is stored: it has no series", branch);
	if (!c->n)
		return xasprintf("branch '%s' has no comparison of this host and case", branch);
	return xasprintf("too few points: %zu, where a change point needs %d on either side "
			 "(%d in all)", c->n, RUNNER_CHANGEPOINT_MIN_SEGMENT,
			 2 * RUNNER_CHANGEPOINT_MIN_SEGMENT);
}

static void api_changepoints(struct web_reply *out, struct db *db, const char *default_branch,
			     const struct web_params *pa)
{
	static const char *const allowed[] = { "host", "case", "branch", "format", NULL };
	struct db_series_known known = { true, true, true };
	struct changes c;
	const char *host, *case_name, *branch;
	char *note;
	json_t *root, *list;
	bool csv, asked;
	int r, i;

	if (web_params_check(pa, allowed) < 0 || web_param_format(&csv, pa) < 0 ||
	    web_param_text(&host, pa, "host", true) < 0 ||
	    web_param_text(&case_name, pa, "case", true) < 0 ||
	    web_param_text(&branch, pa, "branch", false) < 0) {
		reply_bad(out);
		return;
	}
	asked = branch != NULL;
	if (!branch)
		branch = default_branch;
	r = changes_load(&c, db, host, case_name, branch);
	/* An empty series names what it lacks: a host or case never measured,
	 * or a branch asked for that has no job, is the caller's mistake; the
	 * default branch without one is an answer with no point. */
	if (r == 0 && !c.n)
		r = db_series_known(db, &known, host, case_name, branch);
	if (r < 0) {
		changes_release(&c);
		reply_db_error(out, r);
		return;
	}
	if (!known.host || !known.case_name || (asked && !known.branch)) {
		if (!known.host)
			err_set(-EINVAL, "parameter 'host': no comparison of host '%s' is stored", host);
		else if (!known.case_name)
			err_set(-EINVAL, "parameter 'case': no comparison of case '%s' on host '%s' "
				"is stored", case_name, host);
		else
			err_set(-EINVAL, "parameter 'branch': no head job of branch '%s' is stored",
				branch);
		changes_release(&c);
		reply_bad(out);
		return;
	}
	list = json_array();
	for (i = 0; i < c.ncp; i++)
		json_array_append_new(list, changepoint_json(&c, i));
	if (csv) {
		changes_release(&c);
		reply_csv(out, changepoint_cols, list);
		return;
	}
	root = json_object();
	json_object_set_new(root, "host", json_text(host));
	json_object_set_new(root, "case", json_text(case_name));
	json_object_set_new(root, "branch", json_text(branch));
	json_object_set_new(root, "method", method_json());
	json_object_set_new(root, "series", json_pack("{s:i, s:o, s:s}", "points", (json_int_t)c.n,
						      "metric", c.n ? json_text(c.pts[0].metric) :
						      json_null(), "value", "head median"));
	note = changes_note(&c, branch, known.branch);
	json_object_set_new(root, "note", json_text(note));
	free(note);
	json_object_set_new(root, "changepoints", list);
	changes_release(&c);
	reply_json(out, 200, root);
}

/* ---- /api/v1/timeline ---- */

static const char *const timeline_cols[] = { "id", "created_at", "job", "head", "commit",
	"verdict", "gain", "old_median", "new_median", "fingerprint_hash", "changepoint", "seq",
	"arm", "pair", "value", "valid", NULL };

/* Whether comparison id starts a regime of c, the default branch's. */
static bool is_changepoint(const struct changes *c, int64_t id)
{
	int i;

	for (i = 0; i < c->ncp; i++)
		if (c->pts[c->cp[i].index].comparison_id == id)
			return true;
	return false;
}

/* The timeline as JSON, written straight into the reply: a page holds
 * thousands of values, and building a jansson object for each was most of
 * its time (docs/performance.md). The same shape as the CSV path's objects. */
static void timeline_write(struct strbuf *sb, const char *host, const char *case_name,
			   const struct db_timeline_point *pts, size_t n,
			   const struct changes *changes)
{
	struct fp_memo memo = { 0 };
	size_t i, k;

	strbuf_adds(sb, "{\"host\":");
	put_json(sb, json_text(host));
	strbuf_adds(sb, ",\"case\":");
	put_json(sb, json_text(case_name));
	strbuf_adds(sb, ",\"points\":[");
	for (i = 0; i < n; i++) {
		const struct db_timeline_point *p = &pts[i];

		strbuf_addf(sb, "%s{\"id\":%lld,\"created_at\":", i ? "," : "", (long long)p->id);
		put_json(sb, json_text(p->created_at));
		if (p->job_id)
			strbuf_addf(sb, ",\"job\":%lld", (long long)p->job_id);
		else
			strbuf_adds(sb, ",\"job\":null");
		strbuf_adds(sb, ",\"head\":");
		put_json(sb, json_text_or_null(p->head));
		strbuf_adds(sb, ",\"commit\":");
		put_json(sb, json_text_or_null(p->commit));
		strbuf_adds(sb, ",\"metric\":");
		put_json(sb, json_text_or_null(p->metric));
		strbuf_adds(sb, ",\"verdict\":");
		put_json(sb, json_text_or_null(p->verdict));
		strbuf_adds(sb, ",\"gain\":");
		put_real(sb, p->has_gain ? json_fraction(p->gain_median) : NAN);
		strbuf_adds(sb, ",\"old_median\":");
		put_real(sb, p->old_median);
		strbuf_adds(sb, ",\"new_median\":");
		put_real(sb, p->new_median);
		/* The whole fingerprint only where it changes: the hash says which. */
		if (!p->fingerprint) {
			strbuf_adds(sb, ",\"fingerprint\":null,\"fingerprint_hash\":null");
			fp_memo_release(&memo);  /* the next one is a change */
		} else {
			strbuf_adds(sb, ",\"fingerprint\":");
			if (fp_memo_update(&memo, p->fingerprint))
				put_json(sb, json_incref(memo.json));
			else
				strbuf_adds(sb, "null");
			strbuf_addf(sb, ",\"fingerprint_hash\":\"%s\"", memo.hash);
		}
		strbuf_addf(sb, ",\"changepoint\":%s",
			    is_changepoint(changes, p->id) ? "true" : "false");
		strbuf_adds(sb, ",\"values\":[");
		for (k = 0; k < p->nvalues; k++) {
			const struct db_timeline_value *v = &p->values[k];

			strbuf_addf(sb, "%s{\"seq\":%d,\"arm\":\"%s\",\"pair\":%d,\"value\":",
				    k ? "," : "", v->seq, strcmp(v->arm, "old") ? "new" : "old", v->pair);
			put_real(sb, v->has_value ? v->value : NAN);
			strbuf_addf(sb, ",\"valid\":%s}", v->valid ? "true" : "false");
		}
		strbuf_adds(sb, "]}");
	}
	strbuf_adds(sb, "]}\n");
	fp_memo_release(&memo);
}

static void api_timeline(struct web_reply *out, struct db *db, const char *default_branch,
			 const struct web_params *pa)
{
	static const char *const allowed[] = { "host", "case", "limit", "format", NULL };
	struct db_timeline_point *pts = NULL;
	struct changes changes;
	struct fp_memo memo = { 0 };
	const char *host, *case_name;
	json_t *rows;
	int64_t limit;
	size_t n = 0, i, k;
	bool csv;
	int r;

	if (web_params_check(pa, allowed) < 0 || web_param_format(&csv, pa) < 0 ||
	    web_param_text(&host, pa, "host", true) < 0 ||
	    web_param_text(&case_name, pa, "case", true) < 0 ||
	    web_param_int(&limit, pa, "limit", TIMELINE_DEFAULT, 1, TIMELINE_MAX) < 0) {
		reply_bad(out);
		return;
	}
	r = db_timeline(db, &pts, &n, host, case_name, (size_t)limit);
	if (r < 0) {
		reply_db_error(out, r);
		return;
	}
	/* The marks are the default branch's change points, as
	 * /api/v1/changepoints answers them. */
	r = changes_load(&changes, db, host, case_name, default_branch);
	if (r < 0) {
		for (i = 0; i < n; i++)
			db_timeline_point_release(&pts[i]);
		free(pts);
		changes_release(&changes);
		reply_db_error(out, r);
		return;
	}
	if (!csv) {
		out->status = 200;
		out->type = TYPE_JSON;
		strbuf_reset(&out->body);
		timeline_write(&out->body, host, case_name, pts, n, &changes);
		for (i = 0; i < n; i++)
			db_timeline_point_release(&pts[i]);
		free(pts);
		changes_release(&changes);
		return;
	}
	rows = json_array();
	for (i = 0; i < n; i++) {
		const struct db_timeline_point *p = &pts[i];
		json_t *o = json_object(), *vals = json_array();
		json_t *arms[2] = { json_string("old"), json_string("new") };

		json_object_set_new(o, "id", json_integer(p->id));
		json_object_set_new(o, "created_at", json_text(p->created_at));
		json_object_set_new(o, "job", json_id(p->job_id));
		json_object_set_new(o, "head", json_text_or_null(p->head));
		json_object_set_new(o, "commit", json_text_or_null(p->commit));
		json_object_set_new(o, "metric", json_text_or_null(p->metric));
		json_object_set_new(o, "verdict", json_text_or_null(p->verdict));
		json_object_set_new(o, "gain", jfrac(p->has_gain, p->gain_median));
		json_object_set_new(o, "old_median", json_real_or_null(p->old_median));
		json_object_set_new(o, "new_median", json_real_or_null(p->new_median));
		set_fingerprint_memo(o, p->fingerprint, &memo);
		json_object_set_new(o, "changepoint", json_boolean(is_changepoint(&changes, p->id)));
		for (k = 0; k < p->nvalues; k++) {
			const struct db_timeline_value *v = &p->values[k];
			json_t *row, *val = json_object();

			/* Built directly: json_pack's format parsing per value was a
			 * good part of a timeline's time. */
			json_object_set_new_nocheck(val, "seq", json_integer(v->seq));
			json_object_set_nocheck(val, "arm", arms[strcmp(v->arm, "old") != 0]);
			json_object_set_new_nocheck(val, "pair", json_integer(v->pair));
			json_object_set_new_nocheck(val, "value",
						    json_real_or_null(v->has_value ? v->value : NAN));
			json_object_set_new_nocheck(val, "valid", json_boolean(v->valid));
			json_array_append_new(vals, val);
			row = pick(o, timeline_cols);
			json_object_update(row, json_array_get(vals, k));
			json_array_append_new(rows, row);
		}
		json_object_set_new(o, "values", vals);
		json_decref(o);  /* the CSV rows hold what they need of it */
		json_decref(arms[0]);
		json_decref(arms[1]);
		db_timeline_point_release(&pts[i]);
	}
	free(pts);
	fp_memo_release(&memo);
	changes_release(&changes);
	reply_csv(out, timeline_cols, rows);
}

/* ---- /api/v1/cells ---- */

static const char *const cell_cols[] = { "host", "case", "old_manifest", "new_manifest",
	"old_sha256", "new_sha256", "gain_median", "comparison", "verdict", "gain", NULL };

/* One measurement: the same host and case, the same two manifests (what
 * each arm's build or files were; none for a row stored before them) and
 * the same two programs. A wrapper script has one sha256 in every build,
 * so the programs alone would pool unrelated builds. */
static bool same_cell(const struct db_comparison_row *a, const struct db_comparison_row *b)
{
	return !strcmp(a->host, b->host) && !strcmp(a->case_name, b->case_name) &&
	       !strcmp(a->old_manifest, b->old_manifest) &&
	       !strcmp(a->new_manifest, b->new_manifest) &&
	       !strcmp(a->old_sha256, b->old_sha256) && !strcmp(a->new_sha256, b->new_sha256);
}

/*
 * A cell's figure is the median of its comparisons' gain medians, over the
 * comparisons that have a gain and are not invalid; each comparison is
 * listed whatever its verdict.
 */
static json_t *cell_json(const struct db_comparison_entry *e, size_t n)
{
	json_t *o = json_object(), *cs = json_array();
	double *gains = xcalloc(n, sizeof(*gains));
	size_t i, ng = 0;

	json_object_set_new(o, "host", json_text(e[0].row.host));
	json_object_set_new(o, "case", json_text(e[0].row.case_name));
	json_object_set_new(o, "old_manifest", json_text_or_null(e[0].row.old_manifest));
	json_object_set_new(o, "new_manifest", json_text_or_null(e[0].row.new_manifest));
	json_object_set_new(o, "old_sha256", json_text(e[0].row.old_sha256));
	json_object_set_new(o, "new_sha256", json_text(e[0].row.new_sha256));
	for (i = 0; i < n; i++) {
		const struct db_comparison_row *c = &e[i].row;

		json_array_append_new(cs, json_pack("{s:I,s:o,s:o}", "id", (json_int_t)c->id,
						    "verdict", json_text_or_null(c->verdict),
						    "gain", jfrac(c->has_gain, c->gain_median)));
		if (c->has_gain && isfinite(c->gain_median) && strcmp(c->verdict, "invalid"))
			gains[ng++] = c->gain_median;
	}
	json_object_set_new(o, "comparisons", cs);
	json_object_set_new(o, "gain_median", jfrac(ng > 0, ng ? runner_median(gains, ng) : NAN));
	json_object_set_new(o, "pooled", json_integer((json_int_t)ng));
	free(gains);
	return o;
}

static json_t *cells_flat(json_t *cells)
{
	json_t *rows = json_array(), *cell, *c;
	size_t i, k;

	json_array_foreach(cells, i, cell) {
		json_array_foreach(json_object_get(cell, "comparisons"), k, c) {
			json_t *row = pick(cell, cell_cols);

			json_object_set(row, "comparison", json_object_get(c, "id"));
			json_object_set(row, "verdict", json_object_get(c, "verdict"));
			json_object_set(row, "gain", json_object_get(c, "gain"));
			json_array_append_new(rows, row);
		}
	}
	json_decref(cells);
	return rows;
}

static void api_cells(struct web_reply *out, struct db *db, const struct web_params *pa)
{
	static const char *const allowed[] = { "host", "case", "format", NULL };
	struct db_comparison_entry *rows;
	const char *host, *case_name;
	json_t *list;
	bool csv;
	int n, i, start;

	if (web_params_check(pa, allowed) < 0 || web_param_format(&csv, pa) < 0 ||
	    web_param_text(&host, pa, "host", false) < 0 ||
	    web_param_text(&case_name, pa, "case", false) < 0) {
		reply_bad(out);
		return;
	}
	rows = xcalloc(CELLS_ROWS_MAX + 1, sizeof(*rows));
	n = db_comparison_cells(db, rows, CELLS_ROWS_MAX + 1, host, case_name);
	if (n < 0) {
		free(rows);
		reply_db_error(out, n);
		return;
	}
	if (n > CELLS_ROWS_MAX) {
		free(rows);
		web_reply_error(out, 400, "more than 10000 comparisons match: name a host and a case");
		return;
	}
	list = json_array();
	for (start = 0, i = 1; i <= n; i++) {
		if (i < n && same_cell(&rows[start].row, &rows[i].row))
			continue;
		json_array_append_new(list, cell_json(&rows[start], (size_t)(i - start)));
		start = i;
	}
	free(rows);
	reply_list(out, csv, "cells", list, cell_cols, cells_flat);
}

/* ---- /api/v1/calibration ---- */

static const char *const calibration_cols[] = { "host", "case", "count", "faster", "slower",
	"unchanged", "unresolved", "invalid", "false_verdict_rate", "newest_at", "rule", "better",
	"fingerprint_hash", "calibration", "gains", "noise_median", "noise_p90", "max_pairs",
	"min_effect", "mde", "mde_text", NULL };

/* One host and case: its A/As counted, and the noise of the calibration a
 * comparison of it would start with now (that of its newest A/A's rule,
 * fingerprint and direction). */
static int calibration_json(json_t **out, struct db *db, const struct db_calibration_info *c)
{
	struct runner_calibration cal;
	struct runner_noise noise = { 0, NAN, NAN };
	json_t *o = json_object(), *ids = json_array();
	int64_t count = c->total - c->invalid;
	double mde = NAN;
	char text[128];
	size_t i;
	int r;

	r = runner_calibration_current(&cal, db, c);
	if (r == 0 && cal.n) {
		runner_calibration_noise(&noise, cal.v, cal.n);
		mde = runner_calibration_mde(cal.v, cal.n, NULL, c->pairs, c->max_pairs,
					     c->min_effect);
	}
	for (i = 0; i < cal.n; i++)
		json_array_append_new(ids, json_integer(cal.v[i].comparison_id));
	runner_calibration_release(&cal);
	runner_mde_format(text, sizeof(text), mde, c->max_pairs);
	json_object_set_new(o, "host", json_text(c->host));
	json_object_set_new(o, "case", json_text(c->case_name));
	json_object_set_new(o, "count", json_integer(count));
	json_object_set_new(o, "faster", json_integer(c->faster));
	json_object_set_new(o, "slower", json_integer(c->slower));
	json_object_set_new(o, "unchanged", json_integer(c->unchanged));
	json_object_set_new(o, "unresolved", json_integer(c->unresolved));
	json_object_set_new(o, "invalid", json_integer(c->invalid));
	json_object_set_new(o, "false_verdict_rate",
			    jfrac(count > 0, (double)(c->faster + c->slower) / (double)count));
	json_object_set_new(o, "newest_at", json_text_or_null(c->newest_at));
	json_object_set_new(o, "rule", c->newest_id ? json_text(c->rule) : json_null());
	json_object_set_new(o, "better", c->newest_id ?
			    json_string(c->higher_better ? "higher" : "lower") : json_null());
	if (c->fingerprint) {
		struct fp_memo m = { 0 };

		fp_memo_update(&m, c->fingerprint);
		json_object_set_new(o, "fingerprint_hash", json_text_or_null(m.hash));
		fp_memo_release(&m);
	} else {
		json_object_set_new(o, "fingerprint_hash", json_null());
	}
	json_object_set_new(o, "calibration", ids);
	json_object_set_new(o, "gains", json_integer((json_int_t)noise.gains));
	json_object_set_new(o, "noise_median", jfrac(noise.gains > 0, noise.median));
	json_object_set_new(o, "noise_p90", jfrac(noise.gains > 0, noise.p90));
	json_object_set_new(o, "max_pairs", c->newest_id ? json_integer(c->max_pairs) : json_null());
	json_object_set_new(o, "min_effect", jfrac(c->newest_id, c->min_effect));
	json_object_set_new(o, "mde", jfrac(isfinite(mde), mde));
	json_object_set_new(o, "mde_text", c->newest_id ? json_text(text) : json_null());
	if (r < 0) {
		json_decref(o);
		return r;
	}
	*out = o;
	return 0;
}

static void api_calibration(struct web_reply *out, struct db *db, const struct web_params *pa)
{
	static const char *const allowed[] = { "host", "case", "format", NULL };
	struct db_calibration_info *infos = NULL;
	const char *host, *case_name;
	json_t *list;
	size_t n = 0, i;
	bool csv;
	int r;

	if (web_params_check(pa, allowed) < 0 || web_param_format(&csv, pa) < 0 ||
	    web_param_text(&host, pa, "host", false) < 0 ||
	    web_param_text(&case_name, pa, "case", false) < 0) {
		reply_bad(out);
		return;
	}
	r = db_calibration_infos(db, &infos, &n, host, case_name, CALIBRATION_MAX + 1,
				 CALIBRATION_AA_MAX);
	if (r < 0) {
		reply_db_error(out, r);
		return;
	}
	list = json_array();
	for (i = 0; r == 0 && i < n && i < CALIBRATION_MAX; i++) {
		json_t *o;

		r = calibration_json(&o, db, &infos[i]);
		if (r == 0)
			json_array_append_new(list, o);
	}
	for (i = 0; i < n; i++)
		db_calibration_info_release(&infos[i]);
	free(infos);
	if (r < 0) {
		json_decref(list);
		reply_db_error(out, r);
		return;
	}
	if (n > CALIBRATION_MAX) {
		json_decref(list);
		web_reply_error(out, 400, "more than 1000 hosts and cases have A/A comparisons: "
				"name a host");
		return;
	}
	reply_list(out, csv, "calibration", list, calibration_cols, NULL);
}

/* ---- /api/v1/alerts ---- */

#define ALERT_HOSTS_MAX 1000         /* hosts in an answer's triage counts */

static json_t *comparison_link(int64_t id)
{
	char url[64];

	if (id <= 0)
		return json_null();
	snprintf(url, sizeof(url), "/api/v1/comparisons/%lld", (long long)id);
	return json_string(url);
}

/* An alert with its findings; with links, each comparison's URL. */
static int alert_json(json_t **out, struct db *db, const struct db_alert *a, bool links)
{
	struct db_alert_finding *f = NULL;
	json_t *o, *list;
	size_t n = 0, i;
	int r;

	*out = NULL;
	r = db_alert_findings(db, &f, &n, a->id);
	if (r < 0)
		return r;
	o = json_object();
	json_object_set_new(o, "id", json_integer(a->id));
	json_object_set_new(o, "host", json_text(a->host));
	json_object_set_new(o, "origin_id", json_id(a->origin_id));
	json_object_set_new(o, "seq", json_integer(a->seq));
	json_object_set_new(o, "branch", json_text(a->branch));
	json_object_set_new(o, "case", json_text(a->case_name));
	json_object_set_new(o, "found_by", json_string(a->found_by_span ? "span" : "head"));
	json_object_set_new(o, "lo", json_text(a->lo));
	json_object_set_new(o, "hi", json_text(a->hi));
	json_object_set_new(o, "commits", json_integer(a->commits));
	json_object_set_new(o, "direction", json_string(a->slower ? "slower" : "faster"));
	json_object_set_new(o, "gain", jfrac(true, a->gain));
	json_object_set_new(o, "comparison", json_integer(a->comparison_id));
	json_object_set_new(o, "confirm", json_id(a->confirm_id));
	json_object_set_new(o, "state", json_string(db_alert_state_name(a->state)));
	json_object_set_new(o, "bisect", json_string(db_alert_bisect_name(a->bisect)));
	json_object_set_new(o, "detail", json_text(a->detail));
	json_object_set_new(o, "triage", json_string(db_alert_triage_name(a->triage)));
	json_object_set_new(o, "triage_by", json_text(a->triage_by));
	json_object_set_new(o, "triage_at", json_text_or_null(a->triage_at));
	json_object_set_new(o, "fixed_by", json_id(a->fixed_by));
	json_object_set_new(o, "created_at", json_text(a->created_at));
	json_object_set_new(o, "updated_at", json_text(a->updated_at));
	list = json_array();
	for (i = 0; i < n; i++) {
		json_t *e = json_pack("{s:s,s:o,s:o,s:i,s:o,s:o,s:o}",
				      "what", f[i].commit ? "commit" : "range",
				      "lo", json_text(f[i].lo), "hi", json_text(f[i].hi),
				      "commits", f[i].commits,
				      "gain", jfrac(f[i].has_gain, f[i].gain),
				      "comparison", f[i].comparison_id ?
				      json_integer(f[i].comparison_id) : json_null(),
				      "note", json_text(f[i].note));

		if (links)
			json_object_set_new(e, "link", comparison_link(f[i].comparison_id));
		json_array_append_new(list, e);
		db_alert_finding_release(&f[i]);
	}
	free(f);
	json_object_set_new(o, "findings", list);
	if (links)
		json_object_set_new(o, "links", json_pack("{s:o,s:o,s:o}",
			"comparison", comparison_link(a->comparison_id),
			"confirm", comparison_link(a->confirm_id),
			"fixed_by", comparison_link(a->fixed_by)));
	*out = o;
	return 0;
}

/* Per host, its raised alerts, how many a person triaged and how many of
 * those were false alarms, with their share. */
static int triage_hosts_json(json_t **out, struct db *db)
{
	struct db_alert_triage_count *t = NULL;
	size_t n = 0, i;
	int r;

	*out = NULL;
	r = db_alert_triage_counts(db, &t, &n, ALERT_HOSTS_MAX);
	if (r < 0)
		return r;
	*out = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(*out, json_pack("{s:o,s:I,s:I,s:I,s:o}",
			"host", json_text(t[i].host), "raised", (json_int_t)t[i].raised,
			"triaged", (json_int_t)t[i].triaged,
			"false_alarms", (json_int_t)t[i].false_alarms,
			"false_alarm_share", jfrac(t[i].triaged > 0,
				(double)t[i].false_alarms / (double)t[i].triaged)));
	free(t);
	return 0;
}

static void api_alerts(struct web_reply *out, struct db *db, const struct web_params *pa)
{
	static const char *const allowed[] = { "host", "case", "state", "triage", "limit", NULL };
	static const char *const states[] = { "confirming", "raised", "dismissed" };
	struct db_alert_filter f;
	struct db_alert *alerts = NULL;
	enum db_alert_triage t;
	json_t *list, *hosts = NULL, *o;
	int64_t limit;
	size_t n = 0, i;
	bool known = false;
	int r;

	memset(&f, 0, sizeof(f));
	if (web_params_check(pa, allowed) < 0 || web_param_text(&f.host, pa, "host", false) < 0 ||
	    web_param_text(&f.case_name, pa, "case", false) < 0 ||
	    web_param_text(&f.state, pa, "state", false) < 0 ||
	    web_param_text(&f.triage, pa, "triage", false) < 0 ||
	    web_param_int(&limit, pa, "limit", PAGE_DEFAULT, 1, PAGE_MAX) < 0) {
		reply_bad(out);
		return;
	}
	for (i = 0; f.state && i < ARRAY_SIZE(states); i++)
		known |= !strcmp(f.state, states[i]);
	if (f.state && !known) {
		web_reply_error(out, 400, "state: expected confirming, raised or dismissed");
		return;
	}
	if (f.triage && db_alert_triage_parse(&t, f.triage) < 0) {
		web_reply_error(out, 400, "triage: expected new, acknowledged, fixed or false_alarm");
		return;
	}
	r = db_alerts_find(db, &alerts, &n, &f, (size_t)limit);
	list = json_array();
	for (i = 0; r == 0 && i < n; i++) {
		r = alert_json(&o, db, &alerts[i], false);
		if (r == 0)
			json_array_append_new(list, o);
	}
	for (i = 0; i < n; i++)
		db_alert_release(&alerts[i]);
	free(alerts);
	if (r == 0)
		r = triage_hosts_json(&hosts, db);
	if (r < 0) {
		json_decref(list);
		reply_db_error(out, r);
		return;
	}
	reply_json(out, 200, json_pack("{s:o,s:o}", "alerts", list, "hosts", hosts));
}

static void api_alert(struct web_reply *out, struct db *db, int64_t id,
		      const struct web_params *pa)
{
	static const char *const allowed[] = { NULL };
	struct db_alert a;
	json_t *o;
	int r;

	if (web_params_check(pa, allowed) < 0) {
		reply_bad(out);
		return;
	}
	r = db_alert_get(db, &a, id);
	if (r == -ENOENT) {
		web_reply_error(out, 404, err_last());
		return;
	}
	if (r == 0)
		r = alert_json(&o, db, &a, true);
	db_alert_release(&a);
	if (r < 0) {
		reply_db_error(out, r);
		return;
	}
	reply_json(out, 200, o);
}

/* ---- /metrics ---- */

void web_counters_add(struct web_counters *c, int code)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (c->codes[i] == code) {
			c->counts[i]++;
			return;
		}
	}
	if (c->n < WEB_CODES_MAX) {
		c->codes[c->n] = code;
		c->counts[c->n++] = 1;
	}
}

static int metric_family(struct strbuf *sb, struct db *db, enum db_count_kind kind,
			 const char *name, const char *label, const char *help)
{
	struct db_count counts[16];
	int n, i;

	n = db_count(db, counts, ARRAY_SIZE(counts), kind);
	if (n < 0)
		return n;
	strbuf_addf(sb, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
	for (i = 0; i < n; i++) {
		if (label)
			strbuf_addf(sb, "%s{%s=\"%s\"} %lld\n", name, label, counts[i].key,
				    (long long)counts[i].n);
		else
			strbuf_addf(sb, "%s %lld\n", name, (long long)counts[i].n);
	}
	return 0;
}

static void api_metrics(struct web_reply *out, struct db *db, const struct web_counters *ctr,
			const struct web_params *pa)
{
	static const char *const allowed[] = { NULL };
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int r;

	if (web_params_check(pa, allowed) < 0) {
		reply_bad(out);
		return;
	}
	/* Label values are perfd's own words (verdicts, states), never a
	 * client's or a repository's, so they need no escaping. */
	r = metric_family(&sb, db, DB_COUNT_VERDICTS, "perfd_comparisons_total", "verdict",
			  "stored comparisons by verdict (none: no summary yet)");
	if (r == 0)
		r = metric_family(&sb, db, DB_COUNT_JOBS, "perfd_jobs", "state", "jobs by state");
	if (r == 0)
		r = metric_family(&sb, db, DB_COUNT_BUILDS, "perfd_builds", "state",
				  "builds by state");
	if (r == 0)
		r = metric_family(&sb, db, DB_COUNT_QUARANTINED, "perfd_hosts_quarantined", NULL,
				  "hosts in quarantine");
	if (r == 0)
		r = metric_family(&sb, db, DB_COUNT_UNSANDBOXED, "perfd_hosts_unsandboxed", NULL,
				  "hosts whose newest heartbeat says their builds run unsandboxed");
	if (r == 0)
		r = metric_family(&sb, db, DB_COUNT_HELD, "perfd_holds", "why",
				  "commits held on a host until a person releases them, by why "
				  "(docs/hosts.md)");
	if (r == 0)
		r = metric_family(&sb, db, DB_COUNT_ALERT_COMMANDS, "perfd_alert_commands",
				  "outcome", "the /perfd triage commands read from alerts' issues, "
				  "by outcome (applied, refused, ignored, malformed)");
	if (r == 0) {
		int64_t backlog;

		r = db_push_backlog(db, &backlog);
		if (r == 0)
			strbuf_addf(&sb, "# HELP perfd_push_backlog records of this database's "
				    "own (done comparisons, job updates) the hub has not "
				    "answered for\n"
				    "# TYPE perfd_push_backlog gauge\nperfd_push_backlog %lld\n",
				    (long long)backlog);
	}
	if (r < 0) {
		strbuf_release(&sb);
		reply_db_error(out, r);
		return;
	}
	strbuf_adds(&sb, "# HELP perfd_http_requests_total answers sent since the server started,"
		    " by status code\n# TYPE perfd_http_requests_total counter\n");
	for (i = 0; i < ctr->n; i++)
		strbuf_addf(&sb, "perfd_http_requests_total{code=\"%d\"} %llu\n", ctr->codes[i],
			    (unsigned long long)ctr->counts[i]);
	strbuf_addf(&sb, "# HELP perfd_http_connections connections held open now\n"
		    "# TYPE perfd_http_connections gauge\nperfd_http_connections %u\n"
		    "# HELP perfd_http_connections_closed_total connections the server shut down: "
		    "past a deadline, or displaced to let another address in\n"
		    "# TYPE perfd_http_connections_closed_total counter\n"
		    "perfd_http_connections_closed_total{reason=\"header_deadline\"} %llu\n"
		    "perfd_http_connections_closed_total{reason=\"body_deadline\"} %llu\n"
		    "perfd_http_connections_closed_total{reason=\"displaced\"} %llu\n"
		    "# HELP perfd_http_connections_refused_total connections refused at once: "
		    "their address held its share, or every connection was busy\n"
		    "# TYPE perfd_http_connections_refused_total counter\n"
		    "perfd_http_connections_refused_total{reason=\"share\"} %llu\n"
		    "perfd_http_connections_refused_total{reason=\"full\"} %llu\n",
		    ctr->conns.open, (unsigned long long)ctr->conns.closed_header,
		    (unsigned long long)ctr->conns.closed_body,
		    (unsigned long long)ctr->conns.displaced,
		    (unsigned long long)ctr->conns.refused_share,
		    (unsigned long long)ctr->conns.refused_full);
	if (ctr->more)
		ctr->more(ctr->more_ctx, &sb);
	out->status = 200;
	out->type = TYPE_METRICS;
	strbuf_release(&out->body);
	out->body = sb;
}

/* ---- routing ---- */

/* A path segment as an id: -EINVAL for anything but a positive number. */
static int parse_id(int64_t *out, const char *s, size_t len)
{
	int64_t v = 0;
	size_t i;

	if (!len || len > 18)
		goto bad;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			goto bad;
		v = v * 10 + (s[i] - '0');
	}
	if (v <= 0)
		goto bad;
	*out = v;
	return 0;
bad:
	return err_set(-EINVAL, "'%.*s' is not an id (a positive whole number)",
		       (int)(len > 40 ? 40 : len), s);
}

void web_api_answer(struct web_reply *out, struct db *db, const struct web_counters *counters,
		    const struct web_api_pulls *pulls, const char *default_branch,
		    const char *path, const struct web_params *params)
{
	const char *rest;
	size_t idlen;
	int64_t id;

	if (!strcmp(path, "/metrics")) {
		api_metrics(out, db, counters, params);
		return;
	}
	if (!strcmp(path, "/api/v1/hosts")) {
		api_hosts(out, db, params);
		return;
	}
	if (!strcmp(path, "/api/v1/heads")) {
		api_heads(out, db, params);
		return;
	}
	if (!strcmp(path, "/api/v1/jobs")) {
		api_jobs(out, db, params);
		return;
	}
	if (!strcmp(path, "/api/v1/pulls")) {
		api_pulls(out, db, pulls, params);
		return;
	}
	if (!strcmp(path, "/api/v1/comparisons")) {
		api_comparisons(out, db, params);
		return;
	}
	if (!strcmp(path, "/api/v1/timeline")) {
		api_timeline(out, db, default_branch, params);
		return;
	}
	if (!strcmp(path, "/api/v1/changepoints")) {
		api_changepoints(out, db, default_branch, params);
		return;
	}
	if (!strcmp(path, "/api/v1/cells")) {
		api_cells(out, db, params);
		return;
	}
	if (!strcmp(path, "/api/v1/calibration")) {
		api_calibration(out, db, params);
		return;
	}
	if (!strcmp(path, "/api/v1/alerts")) {
		api_alerts(out, db, params);
		return;
	}
	if (!strncmp(path, "/api/v1/alerts/", 15)) {
		rest = path + 15;
		if (parse_id(&id, rest, strlen(rest)) < 0) {
			reply_bad(out);
			return;
		}
		api_alert(out, db, id, params);
		return;
	}
	if (!strncmp(path, "/api/v1/builds/", 15)) {
		rest = path + 15;
		idlen = strlen(rest);
		if (parse_id(&id, rest, idlen) < 0) {
			reply_bad(out);
			return;
		}
		api_build(out, db, id, params);
		return;
	}
	if (!strncmp(path, "/api/v1/manifests/", 18)) {
		api_manifest(out, db, path + 18, params);
		return;
	}
	if (!strncmp(path, "/api/v1/comparisons/", 20)) {
		rest = path + 20;
		idlen = strcspn(rest, "/");
		if (strcmp(rest + idlen, "") && strcmp(rest + idlen, "/verify")) {
			web_reply_error(out, 404, "no such endpoint");
			return;
		}
		if (parse_id(&id, rest, idlen) < 0) {
			reply_bad(out);
			return;
		}
		if (rest[idlen])
			api_verify(out, db, id, params);
		else
			api_comparison(out, db, id, params);
		return;
	}
	web_reply_error(out, 404, "no such endpoint");
}
