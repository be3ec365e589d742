/* Allocation that aborts on out-of-memory: a benchmark daemon that cannot
 * allocate a few bytes has nothing sensible left to record. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

void xalloc_die(void)
{
	fputs("perfd: out of memory\n", stderr);
	abort();
}

static void *check(void *p)
{
	if (!p)
		xalloc_die();
	return p;
}

void *xmalloc(size_t n)
{
	return check(malloc(n ? n : 1));
}

void *xcalloc(size_t n, size_t size)
{
	return check(calloc(n ? n : 1, size ? size : 1));
}

void *xrealloc(void *p, size_t n)
{
	return check(realloc(p, n ? n : 1));
}

char *xstrdup(const char *s)
{
	return check(strdup(s));
}

char *xstrndup(const char *s, size_t n)
{
	return check(strndup(s, n));
}

/* vasprintf, not a strbuf: strbuf grows with xrealloc, and the two
 * would then need each other. A format the C library refuses gives "",
 * as strbuf_vaddf does. */
char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0 && errno == ENOMEM)
		xalloc_die();
	return n < 0 ? xstrdup("") : s;
}
