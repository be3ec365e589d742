/*
 * Forecasts a pull request states before it is measured (docs/comment.md,
 * "Forecasts"): lines "perfd-expect: CASE faster|slower LO%..HI%" or
 * "perfd-expect: CASE unchanged [B%]" in its description or its head
 * commit's message. A line that starts with perfd-expect but does not read
 * so is kept with why, so that the comment names it rather than drop it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "forge.h"

#define KEYWORD "perfd-expect"

const char *web_forecast_dir_name(enum web_forecast_dir d)
{
	switch (d) {
	case WEB_FORECAST_FASTER:
		return "faster";
	case WEB_FORECAST_SLOWER:
		return "slower";
	case WEB_FORECAST_UNCHANGED:
		return "unchanged";
	case WEB_FORECAST_BAD:
		break;
	}
	return "";
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* The word at p: letters, digits, '.', '_' or '-'; its length. */
static size_t word_len(const char *p, const char *end)
{
	const char *q = p;

	while (q < end && (isalnum((unsigned char)*q) || *q == '.' || *q == '_' || *q == '-'))
		q++;
	return (size_t)(q - p);
}

/* A percentage "N%" or "N.DDD%" (0 to 1000, at most 3 decimals) at *pp,
 * as a fraction; *pp moves past the '%'. */
static int percent(double *out, const char **pp, const char *end, char *why, size_t whylen)
{
	const char *p = *pp;
	size_t ints, decs = 0;
	char num[16];
	double v;

	/* Counted within [p, end): the text is not a string (strspn read
	 * past a text that ended in digits or right after "..") */
	ints = 0;
	while (p + ints < end && isdigit((unsigned char)p[ints]))
		ints++;
	if (ints == 0 || ints > 4) {
		snprintf(why, whylen, "expected a percentage (0 to 1000, e.g. 5%% or 2.5%%)");
		return -EINVAL;
	}
	if (p + ints + 1 < end && p[ints] == '.' && isdigit((unsigned char)p[ints + 1])) {
		while (p + ints + 1 + decs < end && isdigit((unsigned char)p[ints + 1 + decs]))
			decs++;
		if (decs == 0 || decs > 3) {
			snprintf(why, whylen, "a percentage has 1 to 3 decimals");
			return -EINVAL;
		}
	}
	snprintf(num, sizeof(num), "%.*s", (int)(ints + (decs ? decs + 1 : 0)), p);
	p += ints + (decs ? decs + 1 : 0);
	if (p >= end || *p != '%') {
		snprintf(why, whylen, "expected '%%' after %s", num);
		return -EINVAL;
	}
	v = strtod(num, NULL);
	if (v > 1000) {
		snprintf(why, whylen, "%s%% is over 1000%%", num);
		return -EINVAL;
	}
	*out = v / 100;
	*pp = p + 1;
	return 0;
}

/* Reads one line (without its end) that starts with the keyword. */
static void parse_line(struct web_forecast *f, const char *s, const char *end)
{
	const char *p = s + strlen(KEYWORD);
	size_t n;

	p = skip_blanks(p, end);
	if (p >= end || *p != ':') {
		snprintf(f->why, sizeof(f->why), "expected ':' after perfd-expect");
		return;
	}
	p = skip_blanks(p + 1, end);
	n = word_len(p, end);
	if (n == 0) {
		snprintf(f->why, sizeof(f->why), "expected a case name (letters, digits, '.', '_', "
			 "'-')");
		return;
	}
	if (n >= sizeof(f->case_name)) {
		snprintf(f->why, sizeof(f->why), "the case name is longer than %zu bytes",
			 sizeof(f->case_name) - 1);
		return;
	}
	memcpy(f->case_name, p, n);
	f->case_name[n] = '\0';
	if (p + n < end && *(p + n) != ' ' && *(p + n) != '\t') {
		snprintf(f->why, sizeof(f->why), "unexpected '%c' in the case name", p[n]);
		return;
	}
	p = skip_blanks(p + n, end);
	n = word_len(p, end);
	if (n == 6 && !strncasecmp(p, "faster", 6)) {
		f->dir = WEB_FORECAST_FASTER;
	} else if (n == 6 && !strncasecmp(p, "slower", 6)) {
		f->dir = WEB_FORECAST_SLOWER;
	} else if (n == 9 && !strncasecmp(p, "unchanged", 9)) {
		f->dir = WEB_FORECAST_UNCHANGED;
	} else {
		snprintf(f->why, sizeof(f->why), "expected faster, slower or unchanged after the "
			 "case name");
		return;
	}
	p = skip_blanks(p + n, end);
	if (f->dir == WEB_FORECAST_UNCHANGED && p == end)
		goto done;
	if (p == end) {
		snprintf(f->why, sizeof(f->why), "expected a band LO%%..HI%% after %s",
			 web_forecast_dir_name(f->dir));
		goto bad;
	}
	if (percent(&f->lo, &p, end, f->why, sizeof(f->why)) < 0)
		goto bad;
	if (f->dir == WEB_FORECAST_UNCHANGED) {
		/* "unchanged B%": |gain| <= B */
		f->hi = f->lo;
		f->lo = 0;
	} else {
		if (end - p < 2 || strncmp(p, "..", 2)) {
			snprintf(f->why, sizeof(f->why), "expected '..' between the band's ends");
			goto bad;
		}
		p += 2;
		if (percent(&f->hi, &p, end, f->why, sizeof(f->why)) < 0)
			goto bad;
		if (f->lo > f->hi) {
			snprintf(f->why, sizeof(f->why), "the band's low end is above its high end");
			goto bad;
		}
	}
	f->has_band = true;
	p = skip_blanks(p, end);
	if (p != end) {
		snprintf(f->why, sizeof(f->why), "unexpected text after the %s",
			 f->has_band ? "band" : "direction");
		goto bad;
	}
done:
	return;
bad:
	f->dir = WEB_FORECAST_BAD;
	f->has_band = false;
	f->lo = f->hi = 0;
}

/* Whether the line [s, end) is a forecast's: blanks, then the keyword in
 * any case. */
static const char *keyword_at(const char *s, const char *end)
{
	s = skip_blanks(s, end);
	if ((size_t)(end - s) >= strlen(KEYWORD) && !strncasecmp(s, KEYWORD, strlen(KEYWORD)))
		return s;
	return NULL;
}

/* The line at p of a text that ends at end: *eol is its '\n' (or end),
 * *stop its end before its final '\r's (all of them: with one taken, the
 * copy web_forecast_lines keeps, "...\r\n", would read one shorter).
 * Returns where its forecast's keyword starts (keyword_at), or NULL. */
static const char *line_at(const char *p, const char *end, const char **eol, const char **stop)
{
	*eol = memchr(p, '\n', (size_t)(end - p));
	if (!*eol)
		*eol = end;
	*stop = *eol;
	while (*stop > p && (*stop)[-1] == '\r')
		(*stop)--;
	return keyword_at(p, *stop);
}

int web_forecasts_parse(struct web_forecast *out, size_t max, const char *text, size_t len,
			bool *more)
{
	const char *p = text, *end, *eol, *kw;
	size_t n = 0, linelen;

	*more = false;
	if (len > WEB_FORECAST_BODY_MAX)
		len = WEB_FORECAST_BODY_MAX;
	end = text + len;
	for (; p < end; p = eol + 1) {
		struct web_forecast *f;
		const char *stop;

		if (!(kw = line_at(p, end, &eol, &stop)))
			continue;
		if (n == max) {
			*more = true;
			break;
		}
		f = &out[n++];
		memset(f, 0, sizeof(*f));
		linelen = (size_t)(stop - kw);
		if (memchr(kw, '\0', linelen))
			linelen = strlen(kw);
		snprintf(f->line, sizeof(f->line), "%.*s",
			 (int)(linelen < WEB_FORECAST_LINE_MAX ? linelen : WEB_FORECAST_LINE_MAX), kw);
		if (linelen > WEB_FORECAST_LINE_MAX)
			snprintf(f->why, sizeof(f->why), "the line is longer than %d bytes",
				 WEB_FORECAST_LINE_MAX);
		else
			parse_line(f, kw, kw + linelen);
		if (eol == end)
			break;
	}
	return (int)n;
}

size_t web_forecast_lines(char *out, size_t cap, const char *text, size_t len)
{
	const char *p = text, *end, *eol, *kw, *stop;
	size_t used = 0, k, lines = 0;

	if (cap == 0)
		return 0;
	*out = '\0';
	if (len > WEB_FORECAST_BODY_MAX)
		len = WEB_FORECAST_BODY_MAX;
	end = text + len;
	for (; p < end && lines <= WEB_FORECASTS_MAX; p = eol + 1) {
		if ((kw = line_at(p, end, &eol, &stop))) {
			/* One byte past the bound is kept, so that the parse
			 * still sees the line is too long. */
			k = (size_t)(stop - kw);
			if (k > WEB_FORECAST_LINE_MAX + 1)
				k = WEB_FORECAST_LINE_MAX + 1;
			if (used + k + 2 > cap)
				break;
			memcpy(out + used, kw, k);
			/* A '\r' last would be taken for the line's end. */
			if (k == WEB_FORECAST_LINE_MAX + 1 && out[used + k - 1] == '\r')
				out[used + k - 1] = '.';
			used += k;
			out[used++] = '\n';
			out[used] = '\0';
			lines++;
		}
		if (eol == end)
			break;
	}
	return used;
}

/* The rows of one source's lines: at most room forecasts, and past them
 * one row saying the rest was not read. Returns the count; v has room + 1. */
static size_t to_rows(struct db_forecast *v, const char *text, size_t len, size_t room)
{
	struct web_forecast *fs = xcalloc(room + 1, sizeof(*fs));
	bool more = false;
	size_t n, i;

	n = (size_t)web_forecasts_parse(fs, room, text, len, &more);
	for (i = 0; i < n; i++) {
		v[i].idx = (int)i;
		v[i].line = xstrdup(fs[i].line);
		if (fs[i].dir == WEB_FORECAST_BAD) {
			v[i].problem = xstrdup(fs[i].why);
			continue;
		}
		v[i].case_name = xstrdup(fs[i].case_name);
		snprintf(v[i].direction, sizeof(v[i].direction), "%s",
			 web_forecast_dir_name(fs[i].dir));
		v[i].has_band = fs[i].has_band;
		v[i].lo = fs[i].lo;
		v[i].hi = fs[i].hi;
	}
	if (more) {
		v[n].idx = (int)n;
		v[n].line = xstrdup("perfd-expect ...");
		v[n].problem = xasprintf("more than %d perfd-expect lines in the pull request: "
					 "the ones past them are not read", WEB_FORECASTS_MAX);
		n++;
	}
	free(fs);
	return n;
}

/* Reads one source's lines into its rows unless they are stored as they
 * are; *taken gets the forecasts it holds. */
static int record_source(const struct web_pulls *ps, const struct web_gh_pull *p,
			 const char *source, const char *lines, size_t len, size_t room,
			 size_t *taken)
{
	const char *repo = web_gh_client_repo(ps->gh);
	struct db_forecast *v;
	char sha[65], was[65];
	size_t n, i;
	int r;

	r = sha256_hex(sha, lines, len);
	if (r < 0)
		return r;
	v = xcalloc(room + 1, sizeof(*v));
	n = to_rows(v, lines, len, room);
	*taken = n;
	r = db_forecast_read_get(ps->db, was, NULL, repo, p->number, p->head_sha, source);
	if (r == 0 && !strcmp(was, sha))
		goto out;
	if (r < 0 && r != -ENOENT)
		goto out;
	r = db_forecasts_set(ps->db, repo, p->number, p->head_sha, source, sha, v, n);
out:
	for (i = 0; i < n; i++)
		db_forecast_release(&v[i]);
	free(v);
	return r;
}

int web_pull_forecasts_record(const struct web_pulls *ps, const struct web_gh_pull *p,
			      const char *message)
{
	const char *repo = web_gh_client_repo(ps->gh);
	struct strbuf msg = STRBUF_INIT, lines = STRBUF_INIT;
	char was[65], sha[65];
	bool measured, changed;
	size_t ndesc = 0, ncommit = 0;
	int r;

	r = db_commit_is_measured(ps->db, &measured, p->head_sha);
	if (r < 0)
		return r;
	if (measured) {
		/* Frozen: a description whose lines differ from those taken is
		 * only marked, once. */
		r = db_forecast_read_get(ps->db, was, &changed, repo, p->number, p->head_sha,
					 "description");
		if (r == -ENOENT)
			return 0;
		if (r < 0 || changed)
			return r;
		r = sha256_hex(sha, p->expect, strlen(p->expect));
		if (r == 0 && strcmp(was, sha))
			r = db_forecast_changed(ps->db, repo, p->number, p->head_sha, "description");
		return r;
	}
	r = record_source(ps, p, "description", p->expect, strlen(p->expect), WEB_FORECASTS_MAX,
			  &ndesc);
	if (r < 0)
		return r;
	/* A commit's message never changes: read once per head. */
	r = db_forecast_read_get(ps->db, was, NULL, repo, p->number, p->head_sha, "commit");
	if (r != -ENOENT)
		return r;
	if (!message) {
		r = web_gh_commit_message(ps->gh, &msg, p->head_sha);
		if (r < 0)
			goto out;
		message = msg.buf;
	}
	{
		char *keep = xcalloc(1, WEB_FORECAST_TEXT_MAX);
		size_t len = web_forecast_lines(keep, WEB_FORECAST_TEXT_MAX, message,
						message == msg.buf ? msg.len : strlen(message));

		strbuf_add(&lines, keep, len);
		free(keep);
	}
	r = record_source(ps, p, "commit", lines.buf, lines.len,
			  ndesc >= WEB_FORECASTS_MAX ? 0 : WEB_FORECASTS_MAX - ndesc, &ncommit);
out:
	strbuf_release(&msg);
	strbuf_release(&lines);
	return r;
}
