/*
 * A record's text into jansson values, as json_loadb(text, len,
 * JSON_REJECT_DUPLICATES) makes them, in one pass over the bytes: jansson's
 * own reader takes each character through a callback and a buffer, which
 * made it the larger part of the hub's parse of a record. Only what is
 * certainly well formed is read here: on anything else (a malformed text,
 * an escape it does not take, a duplicate member, a number out of range,
 * a deep nesting) json_loadb reads the text again and gives its own value
 * or its own error, so that what is accepted and every message stay
 * jansson's.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "record-internal.h"

#define DEPTH_MAX 32   /* a record nests 5 deep */

struct reader {
	const char *p, *end;
	struct strbuf text;   /* a string with escapes, decoded */
};

static void skip_blanks(struct reader *rd)
{
	while (rd->p < rd->end && (*rd->p == ' ' || *rd->p == '\n' || *rd->p == '\t' ||
				   *rd->p == '\r'))
		rd->p++;
}

static int hex4(const char *s)
{
	int v = 0, i;

	for (i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static void add_utf8(struct strbuf *sb, unsigned cp)
{
	char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | cp >> 6);
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | cp >> 12);
		b[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | cp >> 18);
		b[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	strbuf_add(sb, b, n);
}

/* A string after its opening quote: its bytes into *s and *len (borrowed
 * from the text, or from rd->text when it had escapes). False for what is
 * not certainly well formed. */
static bool read_string(struct reader *rd, const char **s, size_t *len)
{
	const char *start = rd->p, *p = rd->p;
	bool ascii = true;

	while (p < rd->end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) {
		ascii &= (unsigned char)*p < 0x80;
		p++;
	}
	if (p == rd->end || (unsigned char)*p < 0x20)
		return false;
	if (!ascii && !utf8_is_valid(start, (size_t)(p - start)))
		return false;
	if (*p == '"') {
		*s = start;
		*len = (size_t)(p - start);
		rd->p = p + 1;
		return true;
	}
	strbuf_reset(&rd->text);
	strbuf_add(&rd->text, start, (size_t)(p - start));
	while (p < rd->end && *p != '"') {
		const char *run = p;
		int cp, lo;

		if ((unsigned char)*p < 0x20)
			return false;
		if (*p != '\\') {
			while (p < rd->end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
				p++;
			if (!utf8_is_valid(run, (size_t)(p - run)))
				return false;
			strbuf_add(&rd->text, run, (size_t)(p - run));
			continue;
		}
		if (rd->end - p < 2)
			return false;
		switch (p[1]) {
		case '"': case '\\': case '/':
			strbuf_addch(&rd->text, p[1]);
			p += 2;
			continue;
		case 'b': strbuf_addch(&rd->text, '\b'); p += 2; continue;
		case 'f': strbuf_addch(&rd->text, '\f'); p += 2; continue;
		case 'n': strbuf_addch(&rd->text, '\n'); p += 2; continue;
		case 'r': strbuf_addch(&rd->text, '\r'); p += 2; continue;
		case 't': strbuf_addch(&rd->text, '\t'); p += 2; continue;
		case 'u':
			break;
		default:
			return false;
		}
		if (rd->end - p < 6 || (cp = hex4(p + 2)) <= 0)
			return false;   /* \u0000 included: jansson refuses it */
		p += 6;
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return false;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (rd->end - p < 6 || p[0] != '\\' || p[1] != 'u' ||
			    (lo = hex4(p + 2)) < 0xdc00 || lo > 0xdfff)
				return false;
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			p += 6;
		}
		add_utf8(&rd->text, (unsigned)cp);
	}
	if (p == rd->end)
		return false;
	rd->p = p + 1;
	*s = rd->text.buf;
	*len = rd->text.len;
	return true;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A number as JSON writes one: an integer when it has neither fraction nor
 * exponent. NULL for one out of range. */
static json_t *read_number(struct reader *rd)
{
	const char *p = rd->p, *start = rd->p;
	char buf[64], *end;
	bool real = false;
	size_t n;

	if (p < rd->end && *p == '-')
		p++;
	if (p < rd->end && *p == '0')
		p++;
	else if (p < rd->end && is_digit(*p))
		while (p < rd->end && is_digit(*p))
			p++;
	else
		return NULL;
	if (p < rd->end && *p == '.') {
		real = true;
		if (++p == rd->end || !is_digit(*p))
			return NULL;
		while (p < rd->end && is_digit(*p))
			p++;
	}
	if (p < rd->end && (*p == 'e' || *p == 'E')) {
		real = true;
		if (++p < rd->end && (*p == '+' || *p == '-'))
			p++;
		if (p == rd->end || !is_digit(*p))
			return NULL;
		while (p < rd->end && is_digit(*p))
			p++;
	}
	n = (size_t)(p - start);
	if (n >= sizeof(buf))
		return NULL;
	memcpy(buf, start, n);
	buf[n] = '\0';
	errno = 0;
	rd->p = p;
	if (!real) {
		long long v = strtoll(buf, &end, 10);

		return errno == ERANGE ? NULL : json_integer(v);
	} else {
		double d = strtod(buf, &end);

		return isfinite(d) ? json_real(d) : NULL;
	}
}

static json_t *read_value(struct reader *rd, int depth);

static json_t *read_object(struct reader *rd, int depth)
{
	json_t *o = json_object(), *v;
	const char *k;
	char *copy;
	size_t klen, had;
	int r;

	skip_blanks(rd);
	if (rd->p < rd->end && *rd->p == '}') {
		rd->p++;
		return o;
	}
	for (;;) {
		if (rd->p == rd->end || *rd->p != '"')
			goto fail;
		rd->p++;
		if (!read_string(rd, &k, &klen))
			goto fail;
		/* A key with escapes is in rd->text, which the value reuses. */
		copy = k == rd->text.buf ? xstrndup(k, klen) : NULL;
		skip_blanks(rd);
		if (rd->p == rd->end || *rd->p != ':') {
			free(copy);
			goto fail;
		}
		rd->p++;
		v = read_value(rd, depth + 1);
		had = json_object_size(o);
		/* A duplicate replaces its first: the count says so. */
		r = v ? json_object_setn_new_nocheck(o, copy ? copy : k, klen, v) : -1;
		free(copy);
		if (r < 0 || json_object_size(o) == had)
			goto fail;
		skip_blanks(rd);
		if (rd->p == rd->end)
			goto fail;
		if (*rd->p == '}') {
			rd->p++;
			return o;
		}
		if (*rd->p != ',')
			goto fail;
		rd->p++;
		skip_blanks(rd);
	}
fail:
	json_decref(o);
	return NULL;
}

static json_t *read_array(struct reader *rd, int depth)
{
	json_t *a = json_array(), *v;

	skip_blanks(rd);
	if (rd->p < rd->end && *rd->p == ']') {
		rd->p++;
		return a;
	}
	for (;;) {
		v = read_value(rd, depth + 1);
		if (!v || json_array_append_new(a, v) < 0)
			goto fail;
		skip_blanks(rd);
		if (rd->p == rd->end)
			goto fail;
		if (*rd->p == ']') {
			rd->p++;
			return a;
		}
		if (*rd->p != ',')
			goto fail;
		rd->p++;
	}
fail:
	json_decref(a);
	return NULL;
}

/* A word (true, false, null) ends where a letter does not follow. */
static bool read_word(struct reader *rd, const char *word, size_t n)
{
	if ((size_t)(rd->end - rd->p) < n || memcmp(rd->p, word, n))
		return false;
	rd->p += n;
	return rd->p == rd->end || !((*rd->p >= 'a' && *rd->p <= 'z') ||
				     (*rd->p >= 'A' && *rd->p <= 'Z'));
}

static json_t *read_value(struct reader *rd, int depth)
{
	const char *s;
	size_t len;

	if (depth > DEPTH_MAX)
		return NULL;
	skip_blanks(rd);
	if (rd->p == rd->end)
		return NULL;
	switch (*rd->p) {
	case '{':
		rd->p++;
		return read_object(rd, depth);
	case '[':
		rd->p++;
		return read_array(rd, depth);
	case '"':
		rd->p++;
		return read_string(rd, &s, &len) ? json_stringn_nocheck(s, len) : NULL;
	case 't':
		return read_word(rd, "true", 4) ? json_true() : NULL;
	case 'f':
		return read_word(rd, "false", 5) ? json_false() : NULL;
	case 'n':
		return read_word(rd, "null", 4) ? json_null() : NULL;
	default:
		return read_number(rd);
	}
}

json_t *record_json_read(const char *text, size_t len)
{
	struct reader rd = { text, text + len, STRBUF_INIT };
	json_t *root = NULL;

	skip_blanks(&rd);
	if (rd.p < rd.end && (*rd.p == '{' || *rd.p == '['))
		root = read_value(&rd, 0);
	skip_blanks(&rd);
	if (root && rd.p != rd.end) {
		json_decref(root);
		root = NULL;
	}
	strbuf_release(&rd.text);
	return root;
}

json_t *record_json_load(const char *text, size_t len, json_error_t *err)
{
	json_t *root = record_json_read(text, len);

	return root ? root : json_loadb(text, len, JSON_REJECT_DUPLICATES, err);
}
