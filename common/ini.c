/*
 * INI text, line by line: "[name]" and "[name arg]" headers, "key = value"
 * lines, '#' and ';' comment lines, blank lines. No continuation lines and
 * no comments after a value: a build command may hold ';' and '#'.
 */
#include <stdlib.h>
#include <string.h>

#include "common.h"

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static void one_line(const struct ini_handler *h, unsigned lineno, char *text)
{
	char *s = trim(text), *eq, *close, *arg;

	if (!*s || *s == '#' || *s == ';')
		return;
	if (*s == '[') {
		close = strchr(s, ']');
		if (!close || *trim(close + 1)) {
			h->error(h->ctx, lineno, "a section header is '[name]' alone on its line");
			h->section(h->ctx, lineno, NULL, NULL);
			return;
		}
		*close = '\0';
		s = trim(s + 1);
		arg = strpbrk(s, " \t");
		if (arg) {
			*arg++ = '\0';
			arg = trim(arg);
		}
		h->section(h->ctx, lineno, s, arg);
		return;
	}
	eq = strchr(s, '=');
	if (!eq) {
		h->error(h->ctx, lineno, "expected 'key = value' or '[section]'");
		return;
	}
	*eq = '\0';
	h->key(h->ctx, lineno, trim(s), trim(eq + 1));
}

void ini_parse(const char *text, size_t len, const struct ini_handler *h)
{
	const char *p = text, *end = text + len;
	char *buf = xmalloc(INI_LINE_MAX + 1);
	unsigned lineno = 0;

	/* A UTF-8 byte order mark, which some editors write first, is no part
	 * of the first line. */
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		lineno++;
		if (memchr(p, '\0', n)) {
			h->error(h->ctx, lineno, "a NUL byte: this is not a text file");
		} else if (n > INI_LINE_MAX) {
			h->error(h->ctx, lineno, "a line of more than 8192 bytes");
		} else {
			memcpy(buf, p, n);
			buf[n] = '\0';
			one_line(h, lineno, buf);
		}
		p += n + (nl ? 1 : 0);
	}
	free(buf);
}
