/*
 * UTF-8 as Unicode defines it (chapter 3, table 3-7): no overlong forms, no
 * surrogates, nothing above U+10FFFF. A byte sequence that is not is
 * repaired the way Unicode recommends ("U+FFFD substitution of maximal
 * subparts"), which is also what Python, browsers and ICU do, so a line
 * reads the same here, in the dashboard and in a test's checks.
 */
#include <string.h>

#include "common.h"

static bool is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

/*
 * The length of the unit that starts s (len > 0 bytes): a well-formed
 * character (*ok true) or, when s starts ill-formed, its maximal subpart:
 * the longest start of a well-formed sequence, at least one byte (*ok
 * false). Every byte of a unit after its first is a continuation byte.
 */
static size_t unit(const unsigned char *s, size_t len, bool *ok)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t need, k;

	*ok = false;
	if (s[0] < 0x80) {
		*ok = true;
		return 1;
	}
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 1;               /* a stray continuation, an overlong lead, or > U+10FFFF */
	need = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (s[0] == 0xe0)
		lo = 0xa0;              /* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;              /* a surrogate */
	else if (s[0] == 0xf0)
		lo = 0x90;              /* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;              /* above U+10FFFF */
	if (len < 2 || s[1] < lo || s[1] > hi)
		return 1;
	for (k = 2; k < need; k++) {
		if (k >= len || !is_cont(s[k]))
			return k;
	}
	*ok = true;
	return need;
}

bool utf8_is_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	bool ok;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		i += unit(p + i, len - i, &ok);
		if (!ok)
			return false;
	}
	return true;
}

void utf8_repair(struct strbuf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, n;
	bool ok;

	strbuf_grow(out, len);
	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		n = unit(p + i, len - i, &ok);
		if (!ok) {
			strbuf_add(out, s + start, i - start);
			strbuf_adds(out, UTF8_REPLACEMENT);
			start = i + n;
		}
		i += n;
	}
	strbuf_add(out, s + start, len - start);
}

char *utf8_repair_dup(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	utf8_repair(&sb, s, strlen(s));
	return strbuf_detach(&sb);
}

size_t utf8_cut(const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t q;
	bool ok;

	if (len <= max)
		return len;
	if (!is_cont(p[max]))
		return max;             /* a unit starts here */
	/* The unit holding p[max] starts at most 3 bytes before it, at the
	 * nearest byte that is no continuation; if it ends before max, p[max]
	 * is a stray continuation and a unit of its own. */
	for (q = max; q > 0 && max - q < 3;) {
		q--;
		if (!is_cont(p[q]))
			return q + unit(p + q, len - q, &ok) > max ? q : max;
	}
	return max;
}
