/*
 * The end of a stored log, as a failure shows it where the user looks (the
 * agent's console and its --once summary): the last lines, each cut to a
 * width, and a word of the shell for the commands that show all of it.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common.h"
#include "daemon.h"

/* One line of a log, cut at width on a character's boundary, with its
 * control characters (an escape, a carriage return) made '?': a line of
 * the console is one line. */
static void add_line(struct strbuf *out, const char *s, size_t len, size_t width,
		     const char *prefix)
{
	struct strbuf fixed = STRBUF_INIT;
	size_t keep, i;

	if (len && s[len - 1] == '\r')
		len--;
	keep = utf8_cut(s, len, width);
	utf8_repair(&fixed, s, keep);
	for (i = 0; i < fixed.len; i++)
		if ((unsigned char)fixed.buf[i] < 0x20 && fixed.buf[i] != '\t')
			fixed.buf[i] = '?';
	strbuf_addf(out, "%s%s%s\n", prefix, fixed.buf, keep < len ? " ..." : "");
	strbuf_release(&fixed);
}

size_t cli_tail_lines(struct strbuf *out, const char *text, size_t len, size_t n,
		      size_t width, const char *prefix)
{
	size_t total = 0, seen = 0, shown, start, end, i;

	if (!text || !len)
		return 0;
	/* A final line feed ends the last line; it starts none. */
	end = text[len - 1] == '\n' ? len - 1 : len;
	for (i = 0; i < end; i++)
		if (text[i] == '\n')
			total++;
	total++;
	shown = n < total ? n : total;
	/* Back from the end to just after the line feed before the first shown. */
	for (i = end; shown && i > 0; i--)
		if (text[i - 1] == '\n' && ++seen == shown)
			break;
	for (start = i; shown > 0; shown--) {
		const char *nl = memchr(text + start, '\n', end - start);
		size_t l = nl ? (size_t)(nl - (text + start)) : end - start;

		add_line(out, text + start, l, width, prefix);
		start += l + 1;
	}
	return total;
}

/* Whether a log line reads as an error a compiler, a linker or make says:
 * "error:" in any case ("prog.c:3:5: error: ...", "fatal error:", "ERROR:"),
 * make's "Error N", or "undefined reference" (not -Werror's flag). */
static bool is_error_line(const char *s, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++) {
		if (j + 6 <= len && !strncasecmp(s + j, "error:", 6))
			return true;
		if (j + 7 <= len && !strncmp(s + j, "Error ", 6) && s[j + 6] >= '0' &&
		    s[j + 6] <= '9')
			return true;
		if (j + 19 <= len && !strncmp(s + j, "undefined reference", 19))
			return true;
	}
	return false;
}

size_t cli_first_error(struct strbuf *out, const char *text, size_t len, size_t before,
		       size_t width, const char *prefix)
{
	size_t line = 1, start = 0;

	while (text && start < len && line < before) {
		const char *nl = memchr(text + start, '\n', len - start);
		size_t l = nl ? (size_t)(nl - (text + start)) : len - start;

		if (is_error_line(text + start, l)) {
			add_line(out, text + start, l, width, prefix);
			return line;
		}
		start += l + 1;
		line++;
	}
	return 0;
}

void cli_shell_word(struct strbuf *out, const char *s)
{
	const char *p;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789_./-=:,+@%") == strlen(s)) {
		strbuf_adds(out, s);
		return;
	}
	strbuf_addch(out, '\'');
	for (p = s; *p; p++) {
		if (*p == '\'')
			strbuf_adds(out, "'\\''");
		else
			strbuf_addch(out, *p);
	}
	strbuf_addch(out, '\'');
}
