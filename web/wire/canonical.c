/*
 * The canonical form of a hub record, written straight into a buffer: the
 * bytes jansson's json_dumps gives with sorted keys, no blanks and reals at
 * 17 significant digits, without its per-container bookkeeping, so that the
 * hub hashes a record at the cost of one walk over it. The digits of a real
 * of the sizes records hold come from exact integer arithmetic rather than
 * printf, which rounds them the same way and took the larger part of the
 * walk.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record-internal.h"

struct member {
	const char *key;
	json_t *value;
};

/* strbuf_add, inline: the form is written a token at a time. */
static inline void put(struct strbuf *out, const void *data, size_t len)
{
	if (out->alloc - out->len <= len)
		strbuf_grow(out, len);
	memcpy(out->buf + out->len, data, len);
	out->len += len;
	out->buf[out->len] = '\0';
}

static inline void put_ch(struct strbuf *out, char c)
{
	if (out->alloc - out->len <= 1)
		strbuf_grow(out, 1);
	out->buf[out->len++] = c;
	out->buf[out->len] = '\0';
}

/* Sorted by the bytes of their keys. An insertion sort: members come few
 * to an object (a record is hashed only once its members are checked, at
 * most 256 metrics being the most), and mostly in order already. */
static void sort_members(struct member *m, size_t n)
{
	struct member t;
	size_t i, j;

	for (i = 1; i < n; i++) {
		t = m[i];
		for (j = i; j > 0 && strcmp(m[j - 1].key, t.key) > 0; j--)
			m[j] = m[j - 1];
		m[j] = t;
	}
}

static void write_integer(struct strbuf *out, json_int_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	put(out, p, (size_t)(buf + sizeof(buf) - p));
}

/* A JSON string: '"', '\' and the characters below U+0020 escaped, as
 * short escapes where JSON has one and as \u00XX with upper-case digits
 * otherwise; every other byte as it is (the text is UTF-8 already). */
static void write_string(struct strbuf *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i, from = 0;

	put_ch(out, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[6] = { '\\', 0, '0', '0', 0, 0 };
		size_t n = 2;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(out, s + from, i - from);
		from = i + 1;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = 'u';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		put(out, esc, n);
	}
	put(out, s + from, len - from);
	put_ch(out, '"');
}

/* The 17 significant digits of |v| as printf's "%.17g" rounds them (to
 * nearest, ties to even), in *digits, and the exponent of the first, in
 * *exp; false where the exact product of v and the power of ten does not
 * fit 128 bits (|v| under 1e-4 or from 1e17 on, and 0). */
static bool digits17(uint64_t *digits, int *exp, double v)
{
	static const uint64_t p10[] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
		1000000000000ull, 10000000000000ull, 100000000000000ull,
		1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
		1000000000000000000ull, 10000000000000000000ull,
	};
	unsigned __int128 num, q, rem, half;
	double a = fabs(v);
	uint64_t m;
	int e, k, p;

	if (!(a >= 1e-4 && a < 1e17))
		return false;
	m = (uint64_t)ldexp(frexp(a, &e), 53);   /* a = m * 2^e, exactly */
	e -= 53;
	k = (int)floor(log10(a));
	for (;;) {
		p = 16 - k;   /* the digits are a * 10^p, rounded */
		if (p < 0 || p > 20)
			return false;
		num = (unsigned __int128)m * p10[p < 19 ? p : 19] * (p == 20 ? 10 : 1);
		if (e >= 0) {
			q = num << e;
		} else {
			q = num >> -e;
			rem = num & (((unsigned __int128)1 << -e) - 1);
			half = (unsigned __int128)1 << (-e - 1);
			if (rem > half || (rem == half && (q & 1)))
				q++;
		}
		if (q < p10[16])
			k--;
		else if (q > p10[17])
			k++;
		else
			break;
	}
	if (q == p10[17]) {
		/* Rounded up to the next power of ten: 1.0000000000000000e(k+1). */
		q = p10[16];
		k++;
	}
	*digits = (uint64_t)q;
	*exp = k;
	return true;
}

/* A real as jansson writes one at precision 17: "%.17g", ".0" appended
 * when that has neither '.' nor 'e', and the exponent without '+' or
 * leading zeros. Reals printf writes without an exponent are written here
 * from their digits, the others by snprintf. */
static void write_real(struct strbuf *out, double v)
{
	char buf[64], d[17], *e, *from, *to;
	uint64_t digits;
	int n, x, i, last;

	if (digits17(&digits, &x, v) && x >= -4 && x < 17) {
		for (i = 16; i >= 0; i--) {
			d[i] = (char)('0' + digits % 10);
			digits /= 10;
		}
		for (last = 16; last > 0 && last > x && d[last] == '0'; last--)
			;
		n = 0;
		if (v < 0)
			buf[n++] = '-';
		if (x >= 0) {
			memcpy(buf + n, d, (size_t)x + 1);
			n += x + 1;
			if (last > x) {
				buf[n++] = '.';
				memcpy(buf + n, d + x + 1, (size_t)(last - x));
				n += last - x;
			} else {
				memcpy(buf + n, ".0", 2);
				n += 2;
			}
		} else {
			memcpy(buf + n, "0.", 2);
			n += 2;
			for (i = 0; i < -x - 1; i++)
				buf[n++] = '0';
			memcpy(buf + n, d, (size_t)last + 1);
			n += last + 1;
		}
		put(out, buf, (size_t)n);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%.17g", v);
	e = strchr(buf, 'e');
	if (!e && !strchr(buf, '.')) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	}
	if (e) {
		to = e + 1;
		if (*to == '-')
			to++;
		from = e + 2;
		while (*from == '0')
			from++;
		memmove(to, from, strlen(from) + 1);
		n = (int)strlen(buf);
	}
	put(out, buf, (size_t)n);
}

static void write_object(struct strbuf *out, const json_t *o, const char *skip)
{
	struct member stack[64], *m = stack;
	size_t n = 0, i, size = json_object_size(o);
	const char *key;
	json_t *v;

	if (size > ARRAY_SIZE(stack))
		m = xcalloc(size, sizeof(*m));
	json_object_foreach((json_t *)o, key, v) {
		if (skip && !strcmp(key, skip))
			continue;
		m[n].key = key;
		m[n++].value = v;
	}
	sort_members(m, n);
	put_ch(out, '{');
	for (i = 0; i < n; i++) {
		if (i)
			put_ch(out, ',');
		write_string(out, m[i].key, strlen(m[i].key));
		put_ch(out, ':');
		canonical_write(out, m[i].value, NULL);
	}
	put_ch(out, '}');
	if (m != stack)
		free(m);
}

void canonical_write(struct strbuf *out, const json_t *v, const char *skip)
{
	size_t i, n;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		write_object(out, v, skip);
		break;
	case JSON_ARRAY:
		put_ch(out, '[');
		n = json_array_size(v);
		for (i = 0; i < n; i++) {
			if (i)
				put_ch(out, ',');
			canonical_write(out, json_array_get(v, i), NULL);
		}
		put_ch(out, ']');
		break;
	case JSON_STRING:
		write_string(out, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		write_integer(out, json_integer_value(v));
		break;
	case JSON_REAL:
		write_real(out, json_real_value(v));
		break;
	case JSON_TRUE:
		put(out, "true", 4);
		break;
	case JSON_FALSE:
		put(out, "false", 5);
		break;
	case JSON_NULL:
		put(out, "null", 4);
		break;
	}
}
