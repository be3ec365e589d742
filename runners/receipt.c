/*
 * Receipts: a stored comparison rendered as JSON (the receipt object of
 * docs/protocol.md), text, CSV (one row per process in execution order) or
 * Markdown. Every format reads the same loaded rows and stored summary;
 * nothing here computes a figure.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "runners.h"

int runner_format_parse(enum runner_format *out, const char *name)
{
	static const struct { const char *name; enum runner_format f; } formats[] = {
		{ "text", RUNNER_FORMAT_TEXT }, { "json", RUNNER_FORMAT_JSON },
		{ "csv", RUNNER_FORMAT_CSV }, { "md", RUNNER_FORMAT_MD },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		if (!strcmp(name, formats[i].name)) {
			*out = formats[i].f;
			return 0;
		}
	}
	return err_set(-EINVAL, "unknown format '%s': expected text, json, csv or md", name);
}

/* ---- values ---- */

/* Figures in the receipt's JSON: json_number, so a whole one is an integer
 * (common.h); fractions rounded to six decimals. The database keeps them
 * whole. */
static json_t *jfrac(double v)
{
	return json_number(json_fraction(v));
}

static const struct db_process *pair_process(const struct db_comparison *c, int pair,
					     const char *arm)
{
	size_t i;

	for (i = 0; i < c->nprocesses; i++)
		if (!c->processes[i].warmup && c->processes[i].pair == pair &&
		    !strcmp(c->processes[i].arm, arm))
			return &c->processes[i];
	return NULL;
}

/* Pair p's gain; NAN for a pair without one. */
static double pair_gain(const struct db_comparison *c, int p)
{
	return p >= 1 && (size_t)p <= c->summary.npair_gains ? c->summary.pair_gains[p - 1] : NAN;
}

/* The value of the comparison's metric for one process, as the rule reads
 * it; NAN when there is none. */
static double process_value(const struct db_comparison *c, const struct db_process *p)
{
	double v;

	return p && c->metric && runner_metric_value(p, c->metric, &v) ? v : NAN;
}

static const char *short_hash(const char *h)
{
	static char buf[13];

	snprintf(buf, sizeof(buf), "%s", h ? h : "");
	return buf;
}

/* Distinct digests of the pair processes, in order of first appearance. */
static size_t digest_values(const struct db_comparison *c, const char **out, size_t max)
{
	size_t n = 0, i, j;

	for (i = 0; i < c->nprocesses; i++) {
		const char *d = c->processes[i].digest;

		if (c->processes[i].warmup || !d)
			continue;
		for (j = 0; j < n; j++)
			if (!strcmp(out[j], d))
				break;
		if (j == n && n < max)
			out[n++] = d;
	}
	return n;
}

/* ---- JSON ---- */

static json_t *arm_json(const struct db_artifact *a, const char *manifest,
			const struct db_arm_stats *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "path", json_text(a->path ? a->path : ""));
	json_object_set_new(o, "sha256", json_text(a->sha256));
	json_object_set_new(o, "size", json_integer(a->size));
	json_object_set_new(o, "manifest", json_text(manifest));
	json_object_set_new(o, "median", s->set ? json_number(s->median) : json_null());
	json_object_set_new(o, "min", s->set ? json_number(s->min) : json_null());
	json_object_set_new(o, "max", s->set ? json_number(s->max) : json_null());
	json_object_set_new(o, "spread", s->set ? jfrac(s->spread) : json_null());
	return o;
}

json_t *runner_line_json(const struct db_line *l)
{
	struct runner_result r;
	json_t *o = json_object();
	size_t i;

	json_object_set_new(o, "kind", json_text(l->kind));
	json_object_set_new(o, "line", json_text(l->text));
	if (l->kind && !strcmp(l->kind, "RESULT") && runner_result_parse(&r, l->text) == 0) {
		json_t *counts = json_object(), *attrs = json_object();

		json_object_set_new(o, "name", json_text(r.name));
		json_object_set_new(o, "device", json_text(r.device));
		for (i = 0; i < r.nattrs; i++)
			utf8_json_set(attrs, r.attrs[i].key, json_text(r.attrs[i].value));
		for (i = 0; i < r.ncounts; i++)
			utf8_json_set(counts, r.counts[i].key, json_number_text(r.counts[i].value));
		json_object_set_new(o, "attrs", attrs);
		json_object_set_new(o, "counts", counts);
		runner_result_release(&r);
	}
	return o;
}

static json_t *process_json(const struct db_process *p)
{
	json_t *o = json_object(), *m = json_object(), *lines = json_array();
	size_t i;

	json_object_set_new(o, "seq", json_integer(p->seq));
	json_object_set_new(o, "arm", json_text(p->arm));
	json_object_set_new(o, "pair", json_integer(p->pair));
	json_object_set_new(o, "warmup", json_boolean(p->warmup));
	json_object_set_new(o, "state", json_text(db_state_name(p->state)));
	json_object_set_new(o, "exit", p->exit_code >= 0 ? json_integer(p->exit_code) : json_null());
	json_object_set_new(o, "signal", json_integer(p->signal));
	json_object_set_new(o, "timed_out", json_boolean(p->timed_out));
	json_object_set_new(o, "valid", json_boolean(p->valid));
	json_object_set_new(o, "invalid_reason", json_text(p->invalid_reason));
	json_object_set_new(o, "wall_ms", json_real_or_null(round(p->wall_ms * 1000) / 1000));
	json_object_set_new(o, "user_ms", json_number(round(p->user_ms * 1000) / 1000));
	json_object_set_new(o, "sys_ms", json_number(round(p->sys_ms * 1000) / 1000));
	json_object_set_new(o, "maxrss_kb", json_integer(p->maxrss_kb));
	json_object_set_new(o, "cpu_wait_ms", json_real_or_null(round(p->cpu_wait_ms * 1000) / 1000));
	for (i = 0; i < p->nmetrics; i++)
		json_object_set_new(m, p->metrics[i].name, json_number(p->metrics[i].value));
	json_object_set_new(o, "metrics", m);
	json_object_set_new(o, "digest", json_text(p->digest));
	json_object_set_new(o, "record_valid", json_boolean(p->record_valid));
	for (i = 0; i < p->nlines; i++)
		json_array_append_new(lines, runner_line_json(&p->lines[i]));
	json_object_set_new(o, "results", lines);
	json_object_set_new(o, "protocol_errors",
			    json_texts(p->protocol_errors, p->nprotocol_errors));
	json_object_set_new(o, "spawn_error", json_text(p->spawn_error));
	json_object_set_new(o, "fault", json_text(p->fault));
	json_object_set_new(o, "fault_watch", json_text(p->fault_watch));
	json_object_set_new(o, "cpus", json_text(p->cpus));
	json_object_set_new(o, "stdout_bytes", json_integer(p->stdout_bytes));
	json_object_set_new(o, "stderr_bytes", json_integer(p->stderr_bytes));
	json_object_set_new(o, "stdout_kept", json_integer(p->stdout_kept));
	json_object_set_new(o, "stderr_kept", json_integer(p->stderr_kept));
	json_object_set_new(o, "output_truncated",
			    json_boolean(p->stdout_bytes > p->stdout_kept ||
					 p->stderr_bytes > p->stderr_kept));
	json_object_set_new(o, "started_at", json_text(p->started_at));
	json_object_set_new(o, "ended_at", json_text_or_null(p->ended_at));
	return o;
}

/* The pairs a receipt lists: every pair that ran (a version 2 comparison
 * may run more than its first stage), else the pairs it was to run. */
static int pairs_shown(const struct db_comparison *c)
{
	int n = c->pairs;

	if ((int)c->summary.npair_gains > n)
		n = (int)c->summary.npair_gains;
	return n;
}

/* pairs-median/2.1 and /2.2's stage beyond the sign test: the calibrated
 * test's p values (null where it did not run), the scale gate (null
 * without a calibration) and the load gate (2.2; null where it did not
 * run); the calibrated test ran where every gate passed. */
static void stage21_json(json_t *o, const struct db_stage *g)
{
	json_object_set_new(o, "calibrated", isnan(g->cal_p_faster) ? json_null() :
		json_pack("{s:o,s:o,s:o,s:o}", "p_faster", json_number(g->cal_p_faster),
			  "p_slower", json_number(g->cal_p_slower),
			  "p_below", json_number(g->cal_p_below),
			  "p_above", json_number(g->cal_p_above)));
	json_object_set_new(o, "gate", isnan(g->gate_p) ? json_null() :
		json_pack("{s:o,s:o,s:b}", "p", json_number(g->gate_p),
			  "spread_ratio", json_number(g->spread_ratio),
			  "passed", g->gate_p > RUNNER_RULE21_GATE_P));
	json_object_set_new(o, "load_gate", isnan(g->load_p) ? json_null() :
		json_pack("{s:o,s:o,s:b}", "p", json_number(g->load_p),
			  "above", json_number(g->load_above),
			  "passed", g->load_p > RUNNER_RULE22_LOAD_P));
}

static json_t *stages_json(const struct db_comparison *c)
{
	const struct db_summary *s = &c->summary;
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < s->nstages; i++) {
		const struct db_stage *g = &s->stages[i];
		json_t *o = json_pack("{s:i,s:s,s:i,s:o,s:o,s:o,s:o,s:o,s:s}",
			"pairs", g->pairs, "test", g->test, "calibration_gains",
			g->calibration_gains, "alpha", json_number(g->alpha),
			"p_faster", json_number(g->p_faster), "p_slower", json_number(g->p_slower),
			"p_below", json_number(g->p_below), "p_above", json_number(g->p_above),
			"verdict", g->verdict);

		if (runner_rule_has(c->rule, RUNNER_RULE_F_BOTH_TESTS))
			stage21_json(o, g);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *calibration_json(const struct db_comparison *c)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < c->ncalibration; i++)
		json_array_append_new(a, json_integer(c->calibration[i].comparison_id));
	return a;
}

/* What the calibration lets the host see (docs/rule.md, "What a host can
 * see"): mde, a fraction or null, and the sentence every view says. */
static void mde_json(json_t *root, const struct db_comparison *c)
{
	double mde = runner_comparison_mde(c);
	char text[128], why[128];

	runner_mde_format(text, sizeof(text), mde, c->max_pairs);
	json_object_set_new(root, "mde", isfinite(mde) ? jfrac(mde) : json_null());
	json_object_set_new(root, "mde_text", runner_rule_has(c->rule, RUNNER_RULE_F_CALIBRATED) ?
			    json_text(text) : json_null());
	json_object_set_new(root, "unresolved_because", c->has_summary &&
			    !strcmp(c->summary.verdict, "unresolved") &&
			    runner_mde_unresolved(why, sizeof(why), mde, c->min_effect) ?
			    json_text(why) : json_null());
}

static void render_json(struct strbuf *out, const struct db_comparison *c)
{
	const struct db_summary *s = &c->summary;
	json_t *root = json_object(), *pairs = json_array(), *procs = json_array();
	json_t *gain = json_object(), *dig = json_object(), *vals = json_array();
	json_t *settings = json_object(), *args, *fp;
	struct runner_metric_unit unit;
	const char *values[64];
	size_t nvalues, i;
	char *text;
	int p;

	json_object_set_new(root, "comparison", json_integer(c->id));
	json_object_set_new(root, "rule", json_text(c->rule));
	json_object_set_new(root, "kind", json_text(c->aa ? "aa" : "compare"));
	json_object_set_new(root, "case", json_text(c->case_name));
	runner_metric_unit(&unit, c->metric);
	json_object_set_new(root, "metric", json_text(c->metric));
	json_object_set_new(root, "unit", json_text_or_null(unit.text));
	json_object_set_new(root, "host", json_text(c->host));
	json_object_set_new(root, "state", json_text(db_state_name(c->state)));
	json_object_set_new(root, "created_at", json_text(c->created_at));
	json_object_set_new(root, "old", arm_json(&c->old, c->old_manifest, &s->old));
	json_object_set_new(root, "new", arm_json(&c->new, c->new_manifest, &s->new));
	for (p = 1; p <= pairs_shown(c); p++) {
		json_t *row = json_object();
		double g = pair_gain(c, p);

		json_object_set_new(row, "pair", json_integer(p));
		json_object_set_new(row, "old",
				    json_number(process_value(c, pair_process(c, p, "old"))));
		json_object_set_new(row, "new",
				    json_number(process_value(c, pair_process(c, p, "new"))));
		json_object_set_new(row, "gain", jfrac(g));
		json_array_append_new(pairs, row);
	}
	json_object_set_new(root, "pairs", pairs);
	json_object_set_new(root, "kind", json_text(c->aa ? "aa" : "compare"));
	json_object_set_new(root, "pairs_run", s->pairs_run ? json_integer(s->pairs_run) :
			    json_null());
	json_object_set_new(root, "stages", stages_json(c));
	json_object_set_new(root, "calibration", calibration_json(c));
	mde_json(root, c);
	json_object_set_new(gain, "median", s->has_gain ? jfrac(s->gain_median) : json_null());
	json_object_set_new(gain, "min", s->has_gain ? jfrac(s->gain_min) : json_null());
	json_object_set_new(gain, "max", s->has_gain ? jfrac(s->gain_max) : json_null());
	json_object_set_new(root, "gain", gain);
	nvalues = digest_values(c, values, ARRAY_SIZE(values));
	for (i = 0; i < nvalues; i++)
		json_array_append_new(vals, json_text(values[i]));
	json_object_set_new(dig, "equal", json_boolean(s->digests_equal));
	json_object_set_new(dig, "values", vals);
	json_object_set_new(root, "digests", dig);
	json_object_set_new(root, "verdict", c->has_summary ? json_text(s->verdict) : json_null());
	json_object_set_new(root, "flags", json_texts(s->flags, s->nflags));
	json_object_set_new(root, "reasons", json_texts(s->reasons, s->nreasons));
	json_object_set_new(settings, "pairs", json_integer(c->pairs));
	json_object_set_new(settings, "max_pairs", json_integer(c->max_pairs));
	json_object_set_new(settings, "time_budget_s", c->time_budget_s > 0 ?
			    json_real(c->time_budget_s) : json_null());
	json_object_set_new(settings, "better", json_text(c->higher_better ? "higher" : "lower"));
	json_object_set_new(settings, "warmup", json_integer(c->warmup));
	json_object_set_new(settings, "timeout_s", json_number(c->timeout_s));
	json_object_set_new(settings, "min_effect", json_number(c->min_effect));
	json_object_set_new(settings, "noise", json_number(c->noise));
	json_object_set_new(settings, "metric_requested",
			    json_text(c->metric_requested));
	json_object_set_new(root, "settings", settings);
	args = c->args_json ? json_loads(c->args_json, 0, NULL) : NULL;
	json_object_set_new(root, "args", args ? args : json_null());
	if (c->job_id) {
		/* The agent's comparison: the job it was run for and its builds. */
		json_object_set_new(root, "job", json_pack("{s:I,s:o,s:o,s:o}", "id",
			(json_int_t)c->job_id, "head", json_text(c->job_head), "commit",
			json_text(c->job_commit), "base", json_text_or_null(c->job_base)));
	}
	if (c->job_id || c->base_build || c->head_build) {
		/* The agent's builds; an A/A of its own has one build, and no job. */
		json_object_set_new(root, "builds", json_pack("{s:o,s:o}",
			"base", c->base_build ? json_integer(c->base_build) : json_null(),
			"head", c->head_build ? json_integer(c->head_build) : json_null()));
	}
	fp = c->fingerprint ? json_loads(c->fingerprint, 0, NULL) : NULL;
	json_object_set_new(root, "fingerprint", fp ? fp : json_null());
	for (i = 0; i < c->nprocesses; i++)
		json_array_append_new(procs, process_json(&c->processes[i]));
	json_object_set_new(root, "processes", procs);
	text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(12));
	strbuf_adds(out, text ? text : "null");
	strbuf_addch(out, '\n');
	free(text);
	json_decref(root);
}

/* ---- CSV ---- */

/* A text field after a comma (none for the first); NULL for an empty one. */
static void csv_field(struct strbuf *out, const char *s, bool first)
{
	if (!first)
		strbuf_addch(out, ',');
	if (s)
		csv_text(out, s, strlen(s));
}

/* A number's field, unquoted: a figure stays a figure to a spreadsheet. */
static void csv_plain(struct strbuf *out, const char *digits, bool first)
{
	if (!first)
		strbuf_addch(out, ',');
	strbuf_adds(out, digits);
}

static void csv_num(struct strbuf *out, double v)
{
	char buf[64];

	if (isfinite(v)) {
		snprintf(buf, sizeof(buf), "%.12g", v);
		csv_plain(out, buf, false);
	} else {
		csv_field(out, NULL, false);
	}
}

static size_t metric_names(const struct db_comparison *c, const char **out, size_t max)
{
	size_t n = 0, i, j, k;

	for (i = 0; i < c->nprocesses; i++) {
		for (j = 0; j < c->processes[i].nmetrics; j++) {
			const char *name = c->processes[i].metrics[j].name;

			for (k = 0; k < n; k++)
				if (!strcmp(out[k], name))
					break;
			if (k == n && n < max)
				out[n++] = name;
		}
	}
	return n;
}

static void render_csv(struct strbuf *out, const struct db_comparison *c)
{
	const char *names[RUNNER_METRICS_MAX];
	size_t nnames = metric_names(c, names, ARRAY_SIZE(names)), i, j;
	char buf[64];

	strbuf_adds(out, "comparison,seq,arm,pair,warmup,state,started_at,ended_at,exit,"
		    "signal,timed_out,valid,invalid_reason,wall_ms,user_ms,sys_ms,maxrss_kb,"
		    "cpu_wait_ms,digest,old_sha256,new_sha256,old_manifest,new_manifest");
	for (j = 0; j < nnames; j++)
		csv_field(out, names[j], false);
	strbuf_addch(out, '\n');
	for (i = 0; i < c->nprocesses; i++) {
		const struct db_process *p = &c->processes[i];

		snprintf(buf, sizeof(buf), "%lld", (long long)c->id);
		csv_plain(out, buf, true);
		snprintf(buf, sizeof(buf), "%d", p->seq);
		csv_plain(out, buf, false);
		csv_field(out, p->arm, false);
		snprintf(buf, sizeof(buf), "%d", p->pair);
		csv_plain(out, buf, false);
		csv_field(out, p->warmup ? "1" : "0", false);
		csv_field(out, db_state_name(p->state), false);
		csv_field(out, p->started_at, false);
		csv_field(out, p->ended_at, false);
		if (p->exit_code >= 0) {
			snprintf(buf, sizeof(buf), "%d", p->exit_code);
			csv_plain(out, buf, false);
		} else {
			csv_field(out, NULL, false);
		}
		snprintf(buf, sizeof(buf), "%d", p->signal);
		csv_plain(out, buf, false);
		csv_field(out, p->timed_out ? "1" : "0", false);
		csv_field(out, p->valid ? "1" : "0", false);
		csv_field(out, p->invalid_reason, false);
		csv_num(out, p->wall_ms);
		csv_num(out, p->user_ms);
		csv_num(out, p->sys_ms);
		csv_num(out, (double)p->maxrss_kb);
		csv_num(out, p->cpu_wait_ms);
		csv_field(out, p->digest, false);
		csv_field(out, c->old.sha256, false);
		csv_field(out, c->new.sha256, false);
		csv_field(out, c->old_manifest, false);
		csv_field(out, c->new_manifest, false);
		for (j = 0; j < nnames; j++) {
			double v;

			if (db_process_metric(p, names[j], &v))
				csv_num(out, v);
			else
				csv_field(out, NULL, false);
		}
		strbuf_addch(out, '\n');
	}
}

/* ---- text and Markdown ---- */

/* What an A/A's receipt says before anything else. */
#define AA_NOTE "A/A: one build against itself; its verdict is a calibration sample " \
	"(of the false verdict rate), not a change"

/* The rest of a pairs-median/2.1 or /2.2 stage's line: each test's p
 * values, and why the calibration was left out when a gate failed. */
static void stage21_line(struct strbuf *out, const struct db_stage *g, const char *alpha)
{
	strbuf_addf(out, ": sign p %.4g faster, %.4g slower, within min_effect %.4g, %.4g",
		    g->p_faster, g->p_slower, g->p_below, g->p_above);
	if (!isnan(g->cal_p_faster))
		strbuf_addf(out, "; calibrated p %.4g faster, %.4g slower, within min_effect "
			    "%.4g, %.4g", g->cal_p_faster, g->cal_p_slower, g->cal_p_below,
			    g->cal_p_above);
	if (!(g->gate_p > RUNNER_RULE21_GATE_P) && !isnan(g->gate_p)) {
		strbuf_adds(out, "; the pairs spread");
		if (isfinite(g->spread_ratio))
			strbuf_addf(out, " %.2gx", g->spread_ratio);
		strbuf_addf(out, " their calibration's (p %.2g): judged without the calibration",
			    g->gate_p);
	}
	_Static_assert(RUNNER_RULE22_LOAD_RANK == 2, "the words: all but the largest");
	if (!(g->load_p > RUNNER_RULE22_LOAD_P) && !isnan(g->load_p))
		strbuf_addf(out, "; %.0f processes ran under more CPU pressure than all but the "
			    "largest of the calibration's (p %.2g): judged without the calibration",
			    g->load_above, g->load_p);
	strbuf_addf(out, "; bound %s: %s\n", alpha, g->verdict);
}

/* What a version 2 comparison is: its kind and direction, and each stage
 * its verdict came through. */
static void stage_lines(struct strbuf *out, const struct db_comparison *c, bool md)
{
	const struct db_summary *s = &c->summary;
	char alpha[32], mde[128];
	size_t i;

	if (runner_rule_has(c->rule, RUNNER_RULE_F_STAGES)) {
		strbuf_addf(out, md ? "- kind %s; better is %s; pairs %d, up to %d" :
			    "kind %s  better %s  pairs %d, up to %d", c->aa ? "A/A" : "compare",
			    c->higher_better ? "higher" : "lower", c->pairs, c->max_pairs);
		if (c->time_budget_s > 0)
			strbuf_addf(out, " (set by a time budget of %g s)", c->time_budget_s);
		if (c->ncalibration) {
			strbuf_adds(out, "; calibrated by A/A comparisons");
			for (i = 0; i < c->ncalibration; i++)
				strbuf_addf(out, "%s%lld", i ? "," : " ",
					    (long long)c->calibration[i].comparison_id);
		}
		strbuf_addch(out, '\n');
		runner_mde_format(mde, sizeof(mde), runner_comparison_mde(c), c->max_pairs);
		strbuf_addf(out, md ? "- what this host sees: %s\n" : "sees  %s\n", mde);
	}
	for (i = 0; i < s->nstages; i++) {
		const struct db_stage *g = &s->stages[i];

		runner_format_gain(alpha, sizeof(alpha), g->alpha);
		strbuf_addf(out, md ? "- stage %zu: %d pairs, %s test" : "stage %zu  %d pairs, %s test",
			    i + 1, g->pairs, g->test);
		if (g->calibration_gains)
			strbuf_addf(out, " (%d A/A gains)", g->calibration_gains);
		if (runner_rule_has(c->rule, RUNNER_RULE_F_BOTH_TESTS)) {
			stage21_line(out, g, alpha);
			continue;
		}
		strbuf_addf(out, ": p %.4g faster, %.4g slower; within min_effect p %.4g, %.4g; "
			    "bound %s: %s\n", g->p_faster, g->p_slower, g->p_below, g->p_above, alpha,
			    g->verdict);
	}
}

static void summary_lines(struct strbuf *out, const struct db_comparison *c, bool md)
{
	const struct db_summary *s = &c->summary;
	const char *values[64];
	size_t nvalues = digest_values(c, values, ARRAY_SIZE(values)), i;
	char a[128], b[32], d[32], e[32];
	const char *arms[2] = { "old", "new" };
	const struct db_arm_stats *st[2] = { &s->old, &s->new };
	struct runner_metric_unit unit;
	int k;

	runner_metric_unit(&unit, c->metric);
	for (k = 0; k < 2; k++) {
		if (!st[k]->set)
			continue;
		runner_format_value(a, sizeof(a), st[k]->median);
		runner_format_value(b, sizeof(b), st[k]->min);
		runner_format_value(d, sizeof(d), st[k]->max);
		runner_format_gain(e, sizeof(e), st[k]->spread);
		strbuf_addf(out, md ? "- %s: median %s%s%s (%s to %s), spread %s\n" :
			    "%-5s median %s%s%s (%s to %s), spread %s\n", arms[k], a,
			    *unit.text ? " " : "", unit.text, b, d, e);
	}
	if (s->has_gain) {
		runner_format_gain(a, sizeof(a), s->gain_median);
		runner_format_gain(b, sizeof(b), s->gain_min);
		runner_format_gain(d, sizeof(d), s->gain_max);
		strbuf_addf(out, md ? "- gain, median: **%s** (%s to %s)\n" :
			    "gain  median %s (%s to %s)\n", a, b, d);
	}
	strbuf_addf(out, md ? "- verdict: **%s**" : "verdict %s",
		    c->has_summary ? s->verdict : db_state_name(c->state));
	if (c->has_summary && !strcmp(s->verdict, "unresolved") &&
	    runner_mde_unresolved(a, sizeof(a), runner_comparison_mde(c), c->min_effect))
		strbuf_addf(out, ": %s", a);
	if (s->nflags) {
		strbuf_adds(out, md ? "; flags: " : "  (flags: ");
		for (i = 0; i < s->nflags; i++)
			strbuf_addf(out, "%s%s", i ? ", " : "", s->flags[i]);
		if (!md)
			strbuf_addch(out, ')');
	}
	strbuf_addch(out, '\n');
	for (i = 0; i < s->nreasons; i++)
		strbuf_addf(out, md ? "  - %s\n" : "  - %s\n", s->reasons[i]);
	if (nvalues == 0) {
		strbuf_adds(out, md ? "- digests: none printed\n" : "digests none printed\n");
	} else {
		strbuf_addf(out, md ? "- digests: %s" : "digests %s", s->digests_equal ?
			    "equal" : "differ");
		for (i = 0; i < nvalues; i++)
			strbuf_addf(out, md ? "%s`%s`" : "%s%s", i ? ", " : " ", values[i]);
		strbuf_addch(out, '\n');
	}
}

static void process_cell_value(char *buf, size_t len, const struct db_comparison *c,
			       const struct db_process *p)
{
	runner_format_value(buf, len, process_value(c, p));
}

/* Pair p's row as text and Markdown show it: the old and new values and
 * its gain ("-" where there is none). */
static void pair_cells(char cell[3][32], const struct db_comparison *c, int p)
{
	process_cell_value(cell[0], sizeof(cell[0]), c, pair_process(c, p, "old"));
	process_cell_value(cell[1], sizeof(cell[1]), c, pair_process(c, p, "new"));
	runner_format_gain(cell[2], sizeof(cell[2]), pair_gain(c, p));
}

static void render_text(struct strbuf *out, const struct db_comparison *c)
{
	const char *metric = c->metric ? c->metric : "-";
	char a[32], w[32], cell[3][32];
	size_t i;
	int p;

	strbuf_addf(out, "comparison %lld  rule %s  case %s  metric %s  host %s\n",
		    (long long)c->id, c->rule, c->case_name, metric, c->host);
	if (c->aa)
		strbuf_adds(out, AA_NOTE "\n");
	strbuf_addf(out, "old  %s  sha256 %s\n", c->old.path, c->old.sha256);
	if (c->old_manifest)
		strbuf_addf(out, "     manifest %s\n", c->old_manifest);
	strbuf_addf(out, "new  %s  sha256 %s\n", c->new.path, c->new.sha256);
	if (c->new_manifest)
		strbuf_addf(out, "     manifest %s\n", c->new_manifest);
	strbuf_addch(out, '\n');
	strbuf_addf(out, "%-6s %12s %12s %10s\n", "pair", "old", "new", "gain");
	for (p = 1; p <= pairs_shown(c); p++) {
		pair_cells(cell, c, p);
		strbuf_addf(out, "%-6d %12s %12s %10s\n", p, cell[0], cell[1], cell[2]);
	}
	strbuf_addch(out, '\n');
	stage_lines(out, c, false);
	summary_lines(out, c, false);
	strbuf_addf(out, "\n%-4s %-4s %-5s %-6s %10s %12s  %-14s %s\n", "seq", "arm", "pair",
		    "exit", "wall_ms", metric, "digest", "valid");
	for (i = 0; i < c->nprocesses; i++) {
		const struct db_process *pr = &c->processes[i];
		char exit_s[32], pair_s[16];

		if (pr->signal)
			snprintf(exit_s, sizeof(exit_s), "sig%d", pr->signal);
		else if (pr->exit_code >= 0)
			snprintf(exit_s, sizeof(exit_s), "%d", pr->exit_code);
		else
			snprintf(exit_s, sizeof(exit_s), "-");
		if (pr->warmup)
			snprintf(pair_s, sizeof(pair_s), "warm");
		else
			snprintf(pair_s, sizeof(pair_s), "%d", pr->pair);
		snprintf(w, sizeof(w), "%.3f", pr->wall_ms);
		process_cell_value(a, sizeof(a), c, pr);
		strbuf_addf(out, "%-4d %-4s %-5s %-6s %10s %12s  %-14s %s%s%s\n", pr->seq, pr->arm,
			    pair_s, exit_s, w, a, pr->digest ? short_hash(pr->digest) : "-",
			    pr->valid ? "yes" : "no", pr->invalid_reason ? ": " : "",
			    pr->invalid_reason ? pr->invalid_reason : "");
	}
}

static void md_escape(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		if (strchr("|`*_<>[]\\", *s))
			strbuf_addch(out, '\\');
		strbuf_addch(out, *s == '\n' ? ' ' : *s);
	}
}

/* A manifest in a table cell: its first 12 hex digits, or "-" for none. */
static void md_manifest(struct strbuf *out, const char *manifest)
{
	if (manifest)
		strbuf_addf(out, " `%.12s` |", manifest);
	else
		strbuf_adds(out, " - |");
}

static void render_md(struct strbuf *out, const struct db_comparison *c)
{
	const char *metric = c->metric ? c->metric : "-";
	char a[32], w[32], cell[3][32];
	size_t i;
	int p;

	strbuf_addf(out, "### perfd comparison %lld\n\n", (long long)c->id);
	strbuf_addf(out, "rule `%s` · case `", c->rule);
	md_escape(out, c->case_name);
	strbuf_addf(out, "` · metric `%s` · host `", metric);
	md_escape(out, c->host);
	strbuf_adds(out, "`\n\n");
	if (c->aa)
		strbuf_adds(out, "**" AA_NOTE "**\n\n");
	strbuf_adds(out, "| arm | binary | sha256 | manifest |\n|---|---|---|---|\n");
	strbuf_adds(out, "| old | ");
	md_escape(out, c->old.path);
	strbuf_addf(out, " | `%s` |", c->old.sha256);
	md_manifest(out, c->old_manifest);
	strbuf_adds(out, "\n| new | ");
	md_escape(out, c->new.path);
	strbuf_addf(out, " | `%s` |", c->new.sha256);
	md_manifest(out, c->new_manifest);
	strbuf_adds(out, "\n\n");
	strbuf_addf(out, "| pair | old (%s) | new (%s) | gain |\n|---:|---:|---:|---:|\n",
		    metric, metric);
	for (p = 1; p <= pairs_shown(c); p++) {
		pair_cells(cell, c, p);
		strbuf_addf(out, "| %d | %s | %s | %s |\n", p, cell[0], cell[1], cell[2]);
	}
	strbuf_addch(out, '\n');
	stage_lines(out, c, true);
	summary_lines(out, c, true);
	strbuf_addf(out, "\n<details><summary>%zu processes in execution order</summary>\n\n",
		    c->nprocesses);
	strbuf_addf(out, "| seq | arm | pair | exit | wall_ms | %s | digest | valid |\n"
		    "|---:|---|---:|---:|---:|---:|---|---|\n", metric);
	for (i = 0; i < c->nprocesses; i++) {
		const struct db_process *pr = &c->processes[i];

		snprintf(w, sizeof(w), "%.3f", pr->wall_ms);
		process_cell_value(a, sizeof(a), c, pr);
		strbuf_addf(out, "| %d | %s | %s | ", pr->seq, pr->arm, pr->warmup ? "warm-up" : "");
		if (!pr->warmup)
			strbuf_addf(out, "%d", pr->pair);
		if (pr->signal)
			strbuf_addf(out, " | signal %d", pr->signal);
		else if (pr->exit_code >= 0)
			strbuf_addf(out, " | %d", pr->exit_code);
		else
			strbuf_adds(out, " | -");
		strbuf_addf(out, " | %s | %s | %s | %s", w, a,
			    pr->digest ? short_hash(pr->digest) : "-", pr->valid ? "yes" : "no");
		if (pr->invalid_reason) {
			strbuf_adds(out, ": ");
			md_escape(out, pr->invalid_reason);
		}
		strbuf_adds(out, " |\n");
	}
	strbuf_adds(out, "\n</details>\n");
}

void runner_receipt_render(struct strbuf *out, const struct db_comparison *c,
			   enum runner_format f)
{
	switch (f) {
	case RUNNER_FORMAT_JSON:
		render_json(out, c);
		break;
	case RUNNER_FORMAT_CSV:
		render_csv(out, c);
		break;
	case RUNNER_FORMAT_MD:
		render_md(out, c);
		break;
	case RUNNER_FORMAT_TEXT:
		render_text(out, c);
		break;
	}
}
