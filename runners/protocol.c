/*
 * The line protocol parser. It is fed the raw bytes a program writes, in
 * chunks of any size, and never trusts them: lines over RUNNER_LINE_MAX or
 * holding a NUL are skipped and counted, CR before LF is dropped, anything
 * that is not a protocol line is ignored, and every count it keeps is
 * bounded. A malformed protocol line becomes an error that names its line
 * number; the rule makes such a process invalid.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runners.h"

void runner_protocol_init(struct runner_protocol *p)
{
	memset(p, 0, sizeof(*p));
	strbuf_init(&p->line);
}

void runner_protocol_release(struct runner_protocol *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nmetrics; i++)
		free(p->metrics[i].name);
	free(p->metrics);
	for (i = 0; i < p->ndigests; i++) {
		free(p->digests[i].name);
		free(p->digests[i].hex);
	}
	free(p->digests);
	for (i = 0; i < p->nlines; i++) {
		free(p->lines[i].kind);
		free(p->lines[i].text);
	}
	free(p->lines);
	for (i = 0; i < p->nerrors; i++)
		free(p->errors[i]);
	free(p->errors);
	strbuf_release(&p->line);
	memset(p, 0, sizeof(*p));
}

static void add_error(struct runner_protocol *p, size_t lineno, const char *fmt, ...)
	PRINTF_LIKE(3, 4);
static void add_error(struct runner_protocol *p, size_t lineno, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (p->nerrors >= RUNNER_ERRORS_MAX)
		return;
	strbuf_addf(&sb, "line %zu: ", lineno);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	p->errors = xrealloc(p->errors, (p->nerrors + 1) * sizeof(char *));
	p->errors[p->nerrors++] = strbuf_detach(&sb);
}

static bool is_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.' || c == '-' || c == ':';
}

/* A metric or digest name: a letter or '_' first, then [A-Za-z0-9_.:-],
 * at most 64 characters. */
static bool is_valid_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 64 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (i = 1; i < n; i++)
		if (!is_name_char(s[i]))
			return false;
	return true;
}

bool runner_metric_name_is_valid(const char *name)
{
	return is_valid_name(name, strlen(name));
}

/* Splits s at runs of blanks; returns the next token and its length. */
static const char *next_token(const char **s, const char *end, size_t *len)
{
	const char *t;

	while (*s < end && (**s == ' ' || **s == '\t'))
		(*s)++;
	if (*s >= end)
		return NULL;
	t = *s;
	while (*s < end && **s != ' ' && **s != '\t')
		(*s)++;
	*len = (size_t)(*s - t);
	return t;
}

/* The figures perfd measures of each process itself (docs/protocol.md,
 * "Reserved names"): a program's TIMING line may not name one, so that no
 * program can overwrite the launcher's measurement with its claim. */
static const char *const reserved[] = { RUNNER_WALL_METRIC, "user_ms", "sys_ms", "maxrss_kb",
					"cpu_wait_ms" };

bool runner_metric_name_is_reserved(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(reserved); i++)
		if (strlen(reserved[i]) == len && !memcmp(reserved[i], name, len))
			return true;
	return false;
}

static void parse_timing(struct runner_protocol *p, const char *s, const char *end,
			 size_t lineno)
{
	const char *tok;
	size_t len, i;
	bool any = false;

	while ((tok = next_token(&s, end, &len))) {
		const char *eq = memchr(tok, '=', len);
		char value[64], *vend;
		size_t nlen, vlen;
		double v;

		any = true;
		if (!eq) {
			add_error(p, lineno, "TIMING: '%.*s' is not name=value",
				  (int)utf8_cut(tok, len, 64), tok);
			continue;
		}
		nlen = (size_t)(eq - tok);
		vlen = len - nlen - 1;
		if (!is_valid_name(tok, nlen)) {
			add_error(p, lineno, "TIMING: '%.*s' is not a metric name",
				  (int)utf8_cut(tok, nlen, 64), tok);
			continue;
		}
		if (runner_metric_name_is_reserved(tok, nlen)) {
			add_error(p, lineno, "TIMING: '%.*s' is a figure perfd measures itself: a "
				  "program may not print it (print its own, such as t_ms)", (int)nlen,
				  tok);
			continue;
		}
		if (vlen == 0 || vlen >= sizeof(value)) {
			add_error(p, lineno, "TIMING: metric '%.*s' has no usable value",
				  (int)nlen, tok);
			continue;
		}
		memcpy(value, eq + 1, vlen);
		value[vlen] = '\0';
		errno = 0;
		v = strtod(value, &vend);
		if (*vend != '\0' || vend == value) {
			add_error(p, lineno, "TIMING: metric '%.*s' value '%s' is not a number",
				  (int)nlen, tok, value);
			continue;
		}
		for (i = 0; i < p->nmetrics; i++)
			if (strlen(p->metrics[i].name) == nlen &&
			    !memcmp(p->metrics[i].name, tok, nlen))
				break;
		if (i < p->nmetrics) {
			add_error(p, lineno, "TIMING: metric '%.*s' printed twice",
				  (int)nlen, tok);
			continue;
		}
		if (!isfinite(v))
			add_error(p, lineno, "TIMING: metric '%.*s' is %s", (int)nlen, tok,
				  isnan(v) ? "nan" : "infinite");
		if (p->nmetrics >= RUNNER_METRICS_MAX) {
			add_error(p, lineno, "TIMING: more than %d metrics", RUNNER_METRICS_MAX);
			return;
		}
		p->metrics = xrealloc(p->metrics, (p->nmetrics + 1) * sizeof(*p->metrics));
		p->metrics[p->nmetrics].name = xstrndup(tok, nlen);
		p->metrics[p->nmetrics].value = v;
		p->nmetrics++;
	}
	if (!any)
		add_error(p, lineno, "TIMING: no metric on the line");
}

static bool is_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return n > 0;
}

static void parse_digest(struct runner_protocol *p, const char *s, const char *end,
			 size_t lineno)
{
	const char *tok, *name = "", *hex;
	size_t len, nlen = 0, hlen, i;
	char *lower;

	tok = next_token(&s, end, &len);
	if (!tok || next_token(&s, end, &hlen)) {
		add_error(p, lineno, "DIGEST: expected one [name=]hex");
		return;
	}
	hex = tok;
	hlen = len;
	if (memchr(tok, '=', len)) {
		const char *eq = memchr(tok, '=', len);

		name = tok;
		nlen = (size_t)(eq - tok);
		hex = eq + 1;
		hlen = len - nlen - 1;
		if (!is_valid_name(name, nlen)) {
			add_error(p, lineno, "DIGEST: '%.*s' is not a digest name",
				  (int)utf8_cut(name, nlen, 64), name);
			return;
		}
	}
	if (!is_hex(hex, hlen) || hlen > 128) {
		add_error(p, lineno, "DIGEST: '%.*s' is not hexadecimal (at most 128 digits)",
			  (int)utf8_cut(hex, hlen, 64), hex);
		return;
	}
	for (i = 0; i < p->ndigests; i++) {
		if (strlen(p->digests[i].name) == nlen && !memcmp(p->digests[i].name, name, nlen)) {
			add_error(p, lineno, "DIGEST: digest '%.*s' printed twice", (int)nlen, name);
			return;
		}
	}
	if (p->ndigests >= RUNNER_DIGESTS_MAX) {
		add_error(p, lineno, "DIGEST: more than %d digests", RUNNER_DIGESTS_MAX);
		return;
	}
	lower = xstrndup(hex, hlen);
	for (i = 0; i < hlen; i++)
		lower[i] = (char)tolower((unsigned char)lower[i]);
	p->digests = xrealloc(p->digests, (p->ndigests + 1) * sizeof(*p->digests));
	p->digests[p->ndigests].name = xstrndup(name, nlen);
	p->digests[p->ndigests].hex = lower;
	p->ndigests++;
}

static void keep_line(struct runner_protocol *p, const char *kind, const char *line,
		      size_t len)
{
	if (p->nlines >= RUNNER_LINES_MAX)
		return;
	len = utf8_cut(line, len, RUNNER_KEPT_LINE_MAX);
	p->lines = xrealloc(p->lines, (p->nlines + 1) * sizeof(*p->lines));
	p->lines[p->nlines].kind = xstrdup(kind);
	p->lines[p->nlines].text = xstrndup(line, len);
	p->nlines++;
}

/* True when the line starts with the keyword followed by a blank or its end. */
static bool keyword(const char *line, size_t len, const char *kw)
{
	size_t n = strlen(kw);

	return len >= n && !memcmp(line, kw, n) &&
	       (len == n || line[n] == ' ' || line[n] == '\t');
}

void runner_protocol_line(struct runner_protocol *p, const char *line, size_t len,
			  size_t lineno)
{
	const char *end;

	if (len && line[len - 1] == '\r')
		len--;
	end = line + len;
	if (keyword(line, len, "TIMING_RECORD_VALID")) {
		p->record_valid = true;
	} else if (keyword(line, len, "TIMING")) {
		parse_timing(p, line + 6, end, lineno);
	} else if (keyword(line, len, "DIGEST")) {
		parse_digest(p, line + 6, end, lineno);
	} else if (keyword(line, len, "RESULT")) {
		keep_line(p, "RESULT", line, len);
	} else if (keyword(line, len, "SUMMARY")) {
		keep_line(p, "SUMMARY", line, len);
	}
}

static void end_line(struct runner_protocol *p)
{
	p->lines_seen++;
	if (p->skipping || p->has_nul)
		p->lines_skipped++;
	else
		runner_protocol_line(p, p->line.buf, p->line.len, p->lines_seen);
	strbuf_reset(&p->line);
	p->skipping = false;
	p->has_nul = false;
}

void runner_protocol_feed(struct runner_protocol *p, const char *buf, size_t len)
{
	while (len) {
		const char *nl = memchr(buf, '\n', len);
		size_t n = nl ? (size_t)(nl - buf) : len;

		if (!p->skipping) {
			if (p->line.len + n > RUNNER_LINE_MAX) {
				p->skipping = true;
				strbuf_reset(&p->line);
			} else {
				if (memchr(buf, '\0', n))
					p->has_nul = true;
				strbuf_add(&p->line, buf, n);
			}
		}
		if (!nl)
			return;
		end_line(p);
		buf += n + 1;
		len -= n + 1;
	}
}

void runner_protocol_finish(struct runner_protocol *p)
{
	if (p->line.len || p->skipping)
		end_line(p);
}

static int digest_cmp(const void *a, const void *b)
{
	return strcmp(((const struct runner_digest *)a)->name,
		      ((const struct runner_digest *)b)->name);
}

char *runner_protocol_digest(const struct runner_protocol *p)
{
	struct runner_digest *sorted;
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	if (p->ndigests == 0)
		return NULL;
	if (p->ndigests == 1 && !*p->digests[0].name)
		return xstrdup(p->digests[0].hex);
	sorted = xmalloc(p->ndigests * sizeof(*sorted));
	memcpy(sorted, p->digests, p->ndigests * sizeof(*sorted));
	qsort(sorted, p->ndigests, sizeof(*sorted), digest_cmp);
	for (i = 0; i < p->ndigests; i++)
		strbuf_addf(&sb, "%s%s=%s", i ? " " : "",
			    *sorted[i].name ? sorted[i].name : "digest", sorted[i].hex);
	free(sorted);
	return strbuf_detach(&sb);
}

/* ---- RESULT lines ---- */

void runner_result_release(struct runner_result *r)
{
	size_t i;

	if (!r)
		return;
	free(r->name);
	free(r->device);
	for (i = 0; i < r->nattrs; i++) {
		free(r->attrs[i].key);
		free(r->attrs[i].value);
	}
	free(r->attrs);
	for (i = 0; i < r->ncounts; i++) {
		free(r->counts[i].key);
		free(r->counts[i].value);
	}
	free(r->counts);
	memset(r, 0, sizeof(*r));
}

static void add_kv(struct runner_kv **kv, size_t *n, const char *tok, size_t len)
{
	const char *eq = memchr(tok, '=', len);

	*kv = xrealloc(*kv, (*n + 1) * sizeof(**kv));
	(*kv)[*n].key = xstrndup(tok, (size_t)(eq - tok));
	(*kv)[*n].value = xstrndup(eq + 1, len - (size_t)(eq - tok) - 1);
	(*n)++;
}

int runner_result_parse(struct runner_result *out, const char *line)
{
	struct runner_result r;
	const char *s = line, *end = line + strlen(line), *tok;
	size_t len;

	memset(out, 0, sizeof(*out));
	memset(&r, 0, sizeof(r));
	if (!keyword(line, (size_t)(end - line), "RESULT"))
		return -EINVAL;
	s += 6;
	tok = next_token(&s, end, &len);
	if (!tok)
		return -EINVAL;
	r.name = xstrndup(tok, len);
	while ((tok = next_token(&s, end, &len))) {
		if (len == 2 && !memcmp(tok, "on", 2))
			break;
		if (memchr(tok, '=', len) && r.nattrs < 64)
			add_kv(&r.attrs, &r.nattrs, tok, len);
	}
	if (tok) {
		const char *q, *q2;

		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		q = s;
		if (q < end && *q == '"' && (q2 = memchr(q + 1, '"', (size_t)(end - q - 1)))) {
			r.device = xstrndup(q + 1, (size_t)(q2 - q - 1));
			s = q2 + 1;
		} else {
			while (s < end && *s != ':')
				s++;
			r.device = xstrndup(q, (size_t)(s - q));
		}
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (s < end && *s == ':')
			s++;
		while ((tok = next_token(&s, end, &len)))
			if (memchr(tok, '=', len) && r.ncounts < 64)
				add_kv(&r.counts, &r.ncounts, tok, len);
	}
	*out = r;
	return 0;
}
