/*
 * The Markdown comment for one head commit of a pull request
 * (docs/comment.md). Every figure in it was stored by the rule; this file
 * only lays stored rows out, links each cell to its receipt and escapes
 * whatever came from a repository or a runner, so that a branch name or a
 * RESULT line can neither break the table nor inject HTML.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runners.h"
#include "forge-internal.h"
#include "forge.h"

#define WEB_COMMENT_HOSTS_MAX 64     /* hosts a forecast is reported for */

/* Escapes s for Markdown text and table cells: the characters that open
 * emphasis, code, links or HTML, the pipe that ends a cell, and the # and @
 * that GitHub turns into references and mentions. A line break would end
 * the table row, so it becomes a blank. Bytes that are not UTF-8 are
 * repaired (utf8_repair): the body is sent as a JSON string. */
void web_md_text(struct strbuf *out, const char *s)
{
	struct strbuf fixed = STRBUF_INIT;
	const char *p;

	if (!s)
		return;
	utf8_repair(&fixed, s, strlen(s));
	for (p = fixed.buf; *p; p++) {
		switch (*p) {
		case '<':
			strbuf_adds(out, "&lt;");
			break;
		case '>':
			strbuf_adds(out, "&gt;");
			break;
		case '&':
			strbuf_adds(out, "&amp;");
			break;
		case '\n':
		case '\r':
			strbuf_addch(out, ' ');
			break;
		case '|': case '`': case '*': case '_': case '[': case ']': case '\\':
		case '~': case '#': case '@':
			strbuf_addch(out, '\\');
			strbuf_addch(out, *p);
			break;
		default:
			strbuf_addch(out, *p);
		}
	}
	strbuf_release(&fixed);
}

/* A runner's line as it was printed, but repaired (a line stored by an
 * older perfd may not be UTF-8) and with no line break to end it early. */
static void verbatim_line(struct strbuf *out, const char *s)
{
	size_t start = out->len, i;

	utf8_repair(out, s, strlen(s));
	for (i = start; i < out->len; i++) {
		if (out->buf[i] == '\n' || out->buf[i] == '\r')
			out->buf[i] = ' ';
	}
	strbuf_addch(out, '\n');
}

/* A hub URL goes into link targets unescaped, so it may hold only what a
 * plain http(s) URL needs. */
bool web_hub_url_is_valid(const char *url)
{
	const char *p;

	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return false;
	for (p = url; *p; p++) {
		if (*p <= ' ' || *p >= 0x7f || strchr("<>()[]|`\"'\\", *p))
			return false;
	}
	return true;
}

struct comment {
	struct strbuf *out;
	const char *hub;         /* without a trailing slash */
	size_t hub_len;
	size_t max;              /* bytes the body may hold; 0: no bound */
	bool cut;                /* something was left to the hub */
};

/* Room kept for the closing note when a body is cut. */
#define COMMENT_RESERVE 1024

/* Whether what was appended since mark keeps the body within its bound,
 * with room for the closing note; if not, it is taken back. */
static bool fits(struct comment *cm, size_t mark)
{
	if (!cm->max || cm->out->len + COMMENT_RESERVE <= cm->max)
		return true;
	cm->out->len = mark;
	cm->out->buf[mark] = '\0';
	cm->cut = true;
	return false;
}

static void link_open(struct comment *cm)
{
	strbuf_addch(cm->out, '[');
}

static void link_close(struct comment *cm, int64_t id)
{
	strbuf_addf(cm->out, "](%.*s/static/comparison.html?id=%lld)", (int)cm->hub_len, cm->hub,
		    (long long)id);
}

/* A whole cell that is one link to comparison id. */
static void cell_link(struct comment *cm, int64_t id, const char *text)
{
	strbuf_adds(cm->out, " ");
	link_open(cm);
	web_md_text(cm->out, text);
	link_close(cm, id);
	strbuf_adds(cm->out, " |");
}

static void arm_text(char *buf, size_t len, const struct db_arm_stats *a, const char *unit)
{
	char m[32], lo[32], hi[32];

	if (!a->set) {
		snprintf(buf, len, "-");
		return;
	}
	runner_format_value(m, sizeof(m), a->median);
	runner_format_value(lo, sizeof(lo), a->min);
	runner_format_value(hi, sizeof(hi), a->max);
	snprintf(buf, len, "%s%s%s (%s to %s)", m, *unit ? " " : "", unit, lo, hi);
}

static const char *digests_text(const struct db_comparison *c)
{
	size_t i;

	for (i = 0; i < c->nprocesses; i++) {
		if (c->processes[i].digest)
			return c->summary.digests_equal ? "yes" : "no";
	}
	return "none printed";
}

static bool same_manifest(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* As /api/v1/cells pools them: host, case, both manifests, both programs. */
static bool same_cell(const struct db_comparison *a, const struct db_comparison *b)
{
	return !strcmp(a->host, b->host) && !strcmp(a->case_name, b->case_name) &&
	       same_manifest(a->old_manifest, b->old_manifest) &&
	       same_manifest(a->new_manifest, b->new_manifest) &&
	       !strcmp(a->old.sha256, b->old.sha256) && !strcmp(a->new.sha256, b->new.sha256);
}

/* "base, head": the first 12 hex digits of each arm's manifest, "-" for none. */
static void manifests_text(char *buf, size_t len, const struct db_comparison *c)
{
	snprintf(buf, len, "%.12s, %.12s", c->old_manifest ? c->old_manifest : "-",
		 c->new_manifest ? c->new_manifest : "-");
}

static bool counts_in_pool(const struct db_comparison *c)
{
	return c->has_summary && c->summary.has_gain && isfinite(c->summary.gain_median) &&
	       strcmp(c->summary.verdict, "invalid");
}

/* The verdict cell's words: an A/A (one build against itself) is never
 * shown as faster or slower, which would read as a change; an unresolved
 * comparison on a host that cannot see min_effect says what it can see. */
static const char *verdict_text(char *buf, size_t len, const struct db_comparison *c)
{
	const char *v = c->has_summary ? c->summary.verdict : db_state_name(c->state);
	char why[128];

	if (c->aa)
		return runner_aa_verdict(c->has_summary ? v : NULL);
	if (!strcmp(v, "unresolved") &&
	    runner_mde_unresolved(why, sizeof(why), runner_comparison_mde(c), c->min_effect)) {
		snprintf(buf, len, "%s: %s", v, why);
		return buf;
	}
	return v;
}

/*
 * One table row for the n comparisons of a cell (n >= 1). The gain is the
 * median of the runs' gain medians (as /api/v1/cells pools them) followed by
 * each run's, and the verdict lists each run's; the other cells are the
 * newest run's.
 */
static void render_row(struct comment *cm, const struct db_comparison *cs, size_t n)
{
	const struct db_comparison *c = &cs[n - 1];
	const struct db_summary *s = &c->summary;
	struct runner_metric_unit u;
	struct strbuf flags = STRBUF_INIT;
	char buf[128], vbuf[256];
	double *gains;
	size_t i, ng = 0;

	strbuf_adds(cm->out, "|");
	cell_link(cm, c->id, c->host);
	cell_link(cm, c->id, c->case_name);
	manifests_text(buf, sizeof(buf), c);
	cell_link(cm, c->id, buf);
	runner_metric_unit(&u, c->metric);
	arm_text(buf, sizeof(buf), &s->old, u.text);
	cell_link(cm, c->id, buf);
	arm_text(buf, sizeof(buf), &s->new, u.text);
	cell_link(cm, c->id, buf);
	if (n == 1) {
		runner_format_gain(buf, sizeof(buf), s->has_gain ? s->gain_median : NAN);
		cell_link(cm, c->id, buf);
	} else {
		gains = xcalloc(n, sizeof(*gains));
		for (i = 0; i < n; i++) {
			if (counts_in_pool(&cs[i]))
				gains[ng++] = cs[i].summary.gain_median;
		}
		runner_format_gain(buf, sizeof(buf), ng ? runner_median(gains, ng) : NAN);
		free(gains);
		strbuf_addf(cm->out, " %s, median of %zu runs:", buf, ng);
		for (i = 0; i < n; i++) {
			runner_format_gain(buf, sizeof(buf),
					   cs[i].summary.has_gain ? cs[i].summary.gain_median : NAN);
			strbuf_adds(cm->out, i ? ", " : " ");
			link_open(cm);
			web_md_text(cm->out, buf);
			link_close(cm, cs[i].id);
		}
		strbuf_adds(cm->out, " |");
	}
	/* The pairs its stages ran (pairs-median/2 and after), not its first
	 * stage's. */
	snprintf(buf, sizeof(buf), "%d", c->summary.pairs_run > 0 ? c->summary.pairs_run : c->pairs);
	cell_link(cm, c->id, buf);
	cell_link(cm, c->id, digests_text(c));
	if (n == 1) {
		cell_link(cm, c->id, verdict_text(vbuf, sizeof(vbuf), c));
	} else {
		for (i = 0; i < n; i++) {
			strbuf_adds(cm->out, i ? ", " : " ");
			link_open(cm);
			web_md_text(cm->out, verdict_text(vbuf, sizeof(vbuf), &cs[i]));
			link_close(cm, cs[i].id);
		}
		strbuf_adds(cm->out, " |");
	}
	for (i = 0; i < s->nflags; i++)
		strbuf_addf(&flags, "%s%s", i ? ", " : "", s->flags[i]);
	cell_link(cm, c->id, s->nflags ? flags.buf : "none");
	strbuf_adds(cm->out, "\n");
	strbuf_release(&flags);
}

/* The longest run of backticks in s. */
static size_t backtick_run(const char *s)
{
	size_t best = 0, run = 0;

	for (; *s; s++) {
		run = *s == '`' ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

static void add_fence(struct strbuf *out, size_t len)
{
	while (len--)
		strbuf_addch(out, '`');
	strbuf_addch(out, '\n');
}

/* The one writer of a code fence: its fence is longer than the longest
 * run of backticks in any line (and at least 3), so that no line can
 * close it, however long the run. */
void web_md_fenced(struct strbuf *out, const char *const *lines, size_t n)
{
	size_t fl = 3, i;

	for (i = 0; i < n; i++)
		if (backtick_run(lines[i]) + 1 > fl)
			fl = backtick_run(lines[i]) + 1;
	add_fence(out, fl);
	for (i = 0; i < n; i++)
		verbatim_line(out, lines[i]);
	add_fence(out, fl);
}

/* Whether a runner's line may be shown: a protocol line, RESULT or
 * SUMMARY, and nothing else a runner printed. */
bool web_runner_line_is_shown(const char *s)
{
	return !strncmp(s, "RESULT", 6) ? s[6] == ' ' || s[6] == '\t' || !s[6] :
	       !strncmp(s, "SUMMARY", 7) && (s[7] == ' ' || s[7] == '\t' || !s[7]);
}

/* runner result r's lines that may be shown, in a fence; those left out
 * are counted. */
static void render_lines(struct strbuf *out, const struct db_runner_result *r)
{
	const char **shown = xcalloc(r->nlines + 1, sizeof(*shown));
	size_t n = 0, k;

	for (k = 0; k < r->nlines; k++)
		if (web_runner_line_is_shown(r->lines[k].text))
			shown[n++] = r->lines[k].text;
	if (n) {
		strbuf_addch(out, '\n');
		web_md_fenced(out, shown, n);
	}
	if (n < r->nlines)
		strbuf_addf(out, "\n%zu line%s that %s not RESULT or SUMMARY left out.\n",
			    r->nlines - n, r->nlines - n == 1 ? "" : "s",
			    r->nlines - n == 1 ? "is" : "are");
	free(shown);
}

static void render_outcome(struct strbuf *out, const struct db_runner_result *r)
{
	if (r->spawn_error) {
		strbuf_adds(out, "could not start: ");
		web_md_text(out, r->spawn_error);
	} else if (r->timed_out) {
		strbuf_adds(out, "timed out");
	} else if (r->signal) {
		strbuf_addf(out, "killed by signal %d", r->signal);
	} else {
		strbuf_addf(out, "exited %d", r->exit_code);
	}
}

/* The contract runners of one head build: each runner's outcome and binary
 * hash, then its RESULT and SUMMARY lines verbatim in a fenced block. */
static int render_build(struct comment *cm, struct db *db, const char *host, int64_t build_id)
{
	struct strbuf *out = cm->out;
	struct db_runner_result *rs = NULL;
	struct db_build b;
	size_t n = 0, i;
	int r;

	memset(&b, 0, sizeof(b));
	r = db_build_load(db, &b, build_id);
	if (r < 0)
		goto out;
	r = db_runner_results_load(db, &rs, &n, build_id);
	if (r < 0)
		goto out;
	strbuf_adds(out, "\n#### Contract runners on ");
	web_md_text(out, host);
	strbuf_addf(out, "\n\nBuild %lld, made from commit `%s`", (long long)b.id, b.commit);
	if (n == 0) {
		strbuf_adds(out, ": no contract runner result is stored.\n");
		goto out;
	}
	strbuf_adds(out, ".\n");
	for (i = 0; i < n; i++) {
		strbuf_adds(out, "\n- ");
		web_md_text(out, rs[i].runner);
		if (rs[i].chunks > 1)
			strbuf_addf(out, " (chunk %d of %d)", rs[i].chunk, rs[i].chunks);
		strbuf_adds(out, ": ");
		render_outcome(out, &rs[i]);
		strbuf_adds(out, ", binary sha256 ");
		if (rs[i].binary_sha256)
			strbuf_addf(out, "`%s`", rs[i].binary_sha256);
		else
			strbuf_adds(out, "unknown");
		strbuf_adds(out, "\n");
		render_lines(out, &rs[i]);
	}
out:
	for (i = 0; i < n; i++)
		db_runner_result_release(&rs[i]);
	free(rs);
	db_build_release(&b);
	return r;
}

/* Appends s to list (a ", "-joined set of escaped items) unless it is
 * there already; "" is not added. */
static void set_add(struct strbuf *list, const char *s, bool code)
{
	struct strbuf item = STRBUF_INIT;
	const char *p;
	bool seen = false;

	if (!*s)
		return;
	if (code)
		strbuf_addf(&item, "`%s`", s);
	else
		web_md_text(&item, s);
	for (p = list->buf; !seen && (p = strstr(p, item.buf)); p++)
		seen = (p == list->buf || !strncmp(p - 2, ", ", 2)) &&
		       (p[item.len] == '\0' || !strncmp(p + item.len, ", ", 2));
	if (!seen) {
		if (list->len)
			strbuf_adds(list, ", ");
		strbuf_add(list, item.buf, item.len);
	}
	strbuf_release(&item);
}

/* What each host and case of the table can see with the calibration of
 * its newest comparison (docs/rule.md, "What a host can see"), a line each
 * in the table's order: a change under it going unseen is no news. */
static void render_visibility(struct comment *cm, const struct db_comparison *cs, size_t n)
{
	char text[128];
	size_t i, j, mark = cm->out->len;
	bool any = false;

	for (i = 0; i < n; i++) {
		const struct db_comparison *c = &cs[i];

		for (j = i + 1; j < n; j++)
			if (!strcmp(cs[j].host, c->host) && !strcmp(cs[j].case_name, c->case_name))
				break;
		if (j < n || !runner_rule_has(c->rule, RUNNER_RULE_F_CALIBRATED))
			continue;        /* a newer one of them follows, or no calibration */
		if (!any)
			strbuf_adds(cm->out, "\nWhat each host can see, with its calibration:\n\n");
		any = true;
		runner_mde_format(text, sizeof(text), runner_comparison_mde(c), c->max_pairs);
		strbuf_adds(cm->out, "- ");
		web_md_text(cm->out, c->host);
		strbuf_adds(cm->out, ", ");
		web_md_text(cm->out, c->case_name);
		strbuf_adds(cm->out, ": ");
		web_md_text(cm->out, text);
		strbuf_adds(cm->out, "\n");
	}
	fits(cm, mark);
}

static void render_table(struct comment *cm, const struct db_comparison *cs, size_t n,
			 const struct strbuf *heads, const struct strbuf *bases,
			 const struct strbuf *rules)
{
	struct strbuf *body = cm->out;
	size_t i, start;

	strbuf_addf(body, "Head commit `%s` (", cs[0].job_commit);
	strbuf_add(body, heads->buf, heads->len);
	strbuf_adds(body, ") against base ");
	strbuf_add(body, bases->buf, bases->len);
	strbuf_adds(body, ". Figures by the rule [");
	strbuf_add(body, rules->buf, rules->len);
	strbuf_adds(body, "](");
	strbuf_add(body, cm->hub, cm->hub_len);
	strbuf_adds(body, "/docs/rule.md), from stored rows; every cell links to its receipt.\n\n"
		    "| host | case | manifests (base, head) | base median (min to max) |"
		    " head median (min to max) | gain, median | pairs | digests equal | verdict |"
		    " flags |\n|---|---|---|---:|---:|---:|---:|---|---|---|\n");
	for (start = 0, i = 1; i <= n; i++) {
		size_t mark = body->len;

		if (i < n && same_cell(&cs[start], &cs[i]))
			continue;
		render_row(cm, &cs[start], i - start);
		if (!fits(cm, mark)) {
			strbuf_addf(body, "\nThe table goes on for the comparisons from %lld on, "
				    "on the hub.\n", (long long)cs[start].id);
			return;
		}
		start = i;
	}
	render_visibility(cm, cs, n);
}

/* Where comparison c's gain falls for forecast f: inside or outside its
 * band, or unresolved when the rule gave no verdict a band can be read
 * against (unresolved, invalid, an A/A). Bare "unchanged" is the rule's
 * verdict itself. */
static const char *forecast_outcome(const struct db_forecast *f, const struct db_comparison *c)
{
	const char *v = c->summary.verdict;
	double g;

	if (c->aa || !c->has_summary || !c->summary.has_gain ||
	    !isfinite(c->summary.gain_median) ||
	    (strcmp(v, "faster") && strcmp(v, "slower") && strcmp(v, "unchanged")))
		return "unresolved";
	if (!f->has_band)
		return !strcmp(v, "unchanged") ? "inside" : "outside";
	g = c->summary.gain_median;
	if (!strcmp(f->direction, "slower"))
		g = -g;
	else if (!strcmp(f->direction, "unchanged"))
		g = fabs(g);
	/* The band's ends are read to 3 decimals of a percent. */
	return g >= f->lo - 5e-7 && g <= f->hi + 5e-7 ? "inside" : "outside";
}

/* The hosts a forecast is reported for: the hub's expected ones, or those
 * of the table's comparisons. */
static size_t forecast_hosts(const char **out, size_t max, const struct db_comparison *cs,
			     size_t n, const struct web_comment_hosts *hosts)
{
	size_t k = 0, i, j;

	if (hosts) {
		for (i = 0; i < hosts->nexpect && k < max; i++)
			out[k++] = hosts->expect[i];
		return k;
	}
	for (i = 0; i < n && k < max; i++) {
		for (j = 0; j < k && strcmp(out[j], cs[i].host); j++)
			;
		if (j == k)
			out[k++] = cs[i].host;
	}
	return k;
}

/* The forecasts pull request pr stated for the head: per forecast and
 * host the newest comparison of that host and case, its gain and where it
 * falls; the lines that were not understood, with why. */
static int render_forecasts(struct comment *cm, struct db *db, const char *commit, int pr,
			    const struct db_comparison *cs, size_t n,
			    const struct web_comment_hosts *hosts)
{
	struct db_job jobs[WEB_COMMENT_JOBS_MAX];
	struct strbuf *out = cm->out;
	struct db_forecast *fs = NULL;
	const char *hs[WEB_COMMENT_HOSTS_MAX];
	char changed[32], gain[64];
	size_t nf = 0, nh, i, h, k, mark = out->len;
	bool ended = true, bad = false;
	int nj, r;

	r = db_forecasts_load(db, &fs, &nf, pr, commit, 2 * (WEB_FORECASTS_MAX + 1), changed);
	if (r < 0 || nf == 0)
		goto out;
	nj = db_commit_jobs(db, jobs, ARRAY_SIZE(jobs), commit);
	if (nj < 0) {
		r = nj;
		goto out;
	}
	for (i = 0; i < (size_t)nj; i++) {
		if (jobs[i].state != DB_JOB_DONE && jobs[i].state != DB_JOB_FAILED)
			ended = false;
		db_job_release(&jobs[i]);
	}
	nh = forecast_hosts(hs, ARRAY_SIZE(hs), cs, n, hosts);
	strbuf_adds(out, "\n#### Forecasts\n\nStated in the pull request before this head was "
		    "measured; each against the newest comparison of its case on each host.\n\n"
		    "| forecast | from | first seen | host | gain | outcome |\n"
		    "|---|---|---|---|---:|---|\n");
	for (i = 0; i < nf; i++) {
		if (fs[i].problem) {
			bad = true;
			continue;
		}
		for (h = 0; h < (nh ? nh : 1); h++) {
			const struct db_comparison *c = NULL;
			bool host_seen = false;

			for (k = 0; nh && k < n; k++) {
				if (strcmp(cs[k].host, hs[h]))
					continue;
				host_seen = true;
				if (!strcmp(cs[k].case_name, fs[i].case_name) &&
				    (!c || cs[k].id > c->id))
					c = &cs[k];
			}
			strbuf_adds(out, "| ");
			web_md_text(out, fs[i].line);
			strbuf_addf(out, " | %s | %s | ", fs[i].source, fs[i].first_seen);
			web_md_text(out, nh ? hs[h] : "-");
			strbuf_adds(out, " | ");
			if (c) {
				runner_format_gain(gain, sizeof(gain),
						   c->summary.has_gain ? c->summary.gain_median : NAN);
				link_open(cm);
				web_md_text(out, gain);
				link_close(cm, c->id);
				strbuf_addf(out, " | %s |\n", forecast_outcome(&fs[i], c));
			} else {
				strbuf_addf(out, "- | %s |\n", host_seen && ended ?
					    "unknown case: not measured at this head" :
					    "not measured yet");
			}
		}
	}
	if (bad) {
		strbuf_adds(out, "\nLines not understood:\n\n");
		for (i = 0; i < nf; i++) {
			if (!fs[i].problem)
				continue;
			strbuf_addf(out, "- %s, first seen %s: ", fs[i].source, fs[i].first_seen);
			web_md_text(out, fs[i].line);
			strbuf_adds(out, ": ");
			web_md_text(out, fs[i].problem);
			strbuf_addch(out, '\n');
		}
	}
	if (*changed)
		strbuf_addf(out, "\nThe description's perfd-expect lines changed after this head "
			    "was measured (seen %s): the forecasts above are those stated before.\n",
			    changed);
	fits(cm, mark);
out:
	for (i = 0; i < nf; i++)
		db_forecast_release(&fs[i]);
	free(fs);
	return r;
}

/* The commit's jobs that are not done (queued, running, failed), so that a
 * failed build or runner is said rather than shown as no result yet. */
static int render_jobs(struct comment *cm, struct db *db, const char *commit)
{
	struct db_job jobs[WEB_COMMENT_JOBS_MAX];
	bool title = false;
	int n, i;

	n = db_commit_jobs(db, jobs, ARRAY_SIZE(jobs), commit);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		size_t mark = cm->out->len;

		if (jobs[i].state != DB_JOB_DONE) {
			if (!title)
				strbuf_adds(cm->out,
					    "\nJobs of this commit that are not done:\n\n");
			title = true;
			strbuf_addf(cm->out, "- [job %lld](%.*s/static/head.html?job=%lld) (",
				    (long long)jobs[i].id, (int)cm->hub_len, cm->hub,
				    (long long)jobs[i].id);
			web_md_text(cm->out, jobs[i].head);
			strbuf_addf(cm->out, "): %s", db_job_state_name(jobs[i].state));
			if (jobs[i].detail) {
				strbuf_adds(cm->out, ", ");
				web_md_text(cm->out, jobs[i].detail);
			}
			strbuf_addch(cm->out, '\n');
			fits(cm, mark);
		}
		db_job_release(&jobs[i]);
	}
	return 0;
}

/* A hub's comment: the base every host uses, and a row per expected host
 * saying where it stands, linked to its job when it has one. */
static int render_hosts(struct comment *cm, struct db *db, const char *commit,
			const struct web_comment_hosts *hosts)
{
	struct strbuf *out = cm->out;
	size_t i, mark = out->len;
	int r;

	if (hosts->base && *hosts->base)
		strbuf_addf(out, "\nEvery host compares against base `%s`, fixed by the hub when it "
			    "first saw this head.\n", hosts->base);
	strbuf_adds(out, "\n| host | state | detail |\n|---|---|---|\n");
	for (i = 0; i < hosts->nexpect; i++) {
		struct web_host_state hs;

		r = web_host_state(&hs, db, hosts->expect[i], commit, hosts->base,
				   hosts->silent_after_s);
		if (r < 0) {
			web_host_state_release(&hs);
			return r;
		}
		strbuf_adds(out, "| ");
		web_md_text(out, hs.host);
		strbuf_adds(out, " | ");
		if (hs.has_job)
			strbuf_addf(out, "[%s](%.*s/static/head.html?job=%lld)",
				    web_host_at_name(hs.state), (int)cm->hub_len, cm->hub,
				    (long long)hs.job.id);
		else
			strbuf_adds(out, web_host_at_name(hs.state));
		strbuf_adds(out, " | ");
		web_md_text(out, hs.desc.buf);
		strbuf_adds(out, " |\n");
		web_host_state_release(&hs);
	}
	fits(cm, mark);
	return 0;
}

/* The comparisons of head_commit (at most WEB_COMMENT_ROWS_MAX) into cs
 * (room for them all, the caller's to release and free), their count in
 * *n also on failure; the sets of their heads, bases and rules appended. */
static int load_comparisons(struct db_comparison **cs, size_t *n, struct db *db,
			    const char *head_commit, struct strbuf *heads, struct strbuf *bases,
			    struct strbuf *rules)
{
	int64_t *ids = xcalloc(WEB_COMMENT_ROWS_MAX, sizeof(*ids));
	int r;

	*cs = NULL;
	*n = 0;
	r = db_commit_comparison_ids(db, ids, WEB_COMMENT_ROWS_MAX, head_commit);
	if (r < 0)
		goto out;
	*cs = xcalloc((size_t)r + 1, sizeof(**cs));
	for (; *n < (size_t)r; (*n)++) {
		struct db_comparison *c = &(*cs)[*n];
		int lr = db_comparison_load(db, c, ids[*n]);

		if (lr < 0) {
			r = lr;
			goto out;
		}
		/* The query's contract, checked: a comment never mixes heads. */
		assert(!strcmp(c->job_commit, head_commit));
		set_add(heads, c->job_head ? c->job_head : "", false);
		set_add(bases, c->job_base, true);
		set_add(rules, c->rule, false);
	}
	r = 0;
out:
	free(ids);
	return r;
}

/* The contract runners of each host's head build, in the table's order,
 * once each; a build too long with its lines is named, linked to the
 * hub's page of it. */
static int render_builds(struct comment *cm, struct db *db, const struct db_comparison *cs,
			 size_t n)
{
	size_t i, k, mark;
	int r;

	for (i = 0; i < n; i++) {
		for (k = 0; k < i; k++) {
			if (cs[k].head_build == cs[i].head_build && !strcmp(cs[k].host, cs[i].host))
				break;
		}
		if (k < i || cs[i].head_build <= 0)
			continue;
		mark = cm->out->len;
		r = render_build(cm, db, cs[i].host, cs[i].head_build);
		if (r < 0)
			return r;
		if (fits(cm, mark))
			continue;
		/* Too long with its lines: the build is named, and its lines are
		 * on the hub's page of it. */
		strbuf_adds(cm->out, "\n#### Contract runners on ");
		web_md_text(cm->out, cs[i].host);
		strbuf_addf(cm->out, "\n\nBuild %lld: [its runners' lines are on the hub]"
			    "(%.*s/static/build.html?id=%lld).\n", (long long)cs[i].head_build,
			    (int)cm->hub_len, cm->hub, (long long)cs[i].head_build);
		if (!fits(cm, mark))
			break;
	}
	return 0;
}

int web_comment_render(struct strbuf *out, struct db *db, const char *head_commit, int pr,
		       const char *hub_url, const char *key, size_t max,
		       const struct web_comment_hosts *hosts)
{
	struct strbuf body = STRBUF_INIT, heads = STRBUF_INIT, bases = STRBUF_INIT;
	struct strbuf rules = STRBUF_INIT;
	struct comment cm = { .out = &body, .hub = hub_url, .max = max };
	struct db_comparison *cs = NULL;
	size_t n = 0, i;
	int r;

	if (strlen(head_commit) != 40 || strspn(head_commit, "0123456789abcdef") != 40)
		return err_set(-EINVAL, "'%s' is not a full commit id (40 lower-case hex digits)",
			       head_commit);
	if (!web_hub_url_is_valid(hub_url))
		return err_set(-EINVAL, "hub URL '%s': expected http:// or https:// and no blanks,"
			       " quotes, brackets or parentheses", hub_url);
	cm.hub_len = strlen(hub_url);
	while (cm.hub_len > 0 && hub_url[cm.hub_len - 1] == '/')
		cm.hub_len--;

	r = load_comparisons(&cs, &n, db, head_commit, &heads, &bases, &rules);
	if (r < 0)
		goto out;
	if (key && !web_comment_key_is_valid(key)) {
		r = err_set(-EINVAL, "comment key '%s': expected at most 63 letters, digits, "
			    "'.', '_' or '-'", key);
		goto out;
	}
	web_comment_marker(&body, key);
	strbuf_addf(&body, "\n### perfd: `%s`\n\n", head_commit);
	if (n == 0)
		strbuf_addf(&body, "Head commit `%s`: no comparison of it is done yet.\n",
			    head_commit);
	else
		render_table(&cm, cs, n, &heads, &bases, &rules);
	if (pr > 0) {
		r = render_forecasts(&cm, db, head_commit, pr, cs, n, hosts);
		if (r < 0)
			goto out;
	}
	r = hosts ? render_hosts(&cm, db, head_commit, hosts) : render_jobs(&cm, db, head_commit);
	if (r < 0)
		goto out;
	r = render_builds(&cm, db, cs, n);
	if (r < 0)
		goto out;
	if (cm.cut)
		strbuf_addf(&body, "\nCut to stay under %zu bytes: everything about this commit is "
			    "at %.*s/static/head.html?commit=%s\n", cm.max, (int)cm.hub_len, cm.hub,
			    head_commit);
	strbuf_add(out, body.buf, body.len);
out:
	for (i = 0; i < n; i++)
		db_comparison_release(&cs[i]);
	free(cs);
	strbuf_release(&body);
	strbuf_release(&heads);
	strbuf_release(&bases);
	strbuf_release(&rules);
	return r;
}
