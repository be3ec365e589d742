/*
 * Base64 (RFC 4648, section 4: the standard alphabet with '=' padding), for
 * bytes that travel inside JSON: a process's captured output in an ingest
 * record. Decoding is strict: no line breaks, no blanks, padding exactly
 * where it belongs, and the unused bits of the last character zero, so that
 * one byte string has one encoding.
 */
#include <errno.h>
#include <string.h>

#include "common.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(struct strbuf *out, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	strbuf_grow(out, (len + 2) / 3 * 4);
	for (i = 0; i + 2 < len; i += 3) {
		strbuf_addch(out, alphabet[p[i] >> 2]);
		strbuf_addch(out, alphabet[((p[i] & 3) << 4) | (p[i + 1] >> 4)]);
		strbuf_addch(out, alphabet[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)]);
		strbuf_addch(out, alphabet[p[i + 2] & 63]);
	}
	if (len - i == 1) {
		strbuf_addch(out, alphabet[p[i] >> 2]);
		strbuf_addch(out, alphabet[(p[i] & 3) << 4]);
		strbuf_adds(out, "==");
	} else if (len - i == 2) {
		strbuf_addch(out, alphabet[p[i] >> 2]);
		strbuf_addch(out, alphabet[((p[i] & 3) << 4) | (p[i + 1] >> 4)]);
		strbuf_addch(out, alphabet[(p[i + 1] & 15) << 2]);
		strbuf_addch(out, '=');
	}
}

static int value_of(char c)
{
	const char *at = c ? strchr(alphabet, c) : NULL;

	return at ? (int)(at - alphabet) : -1;
}

static int decode(struct strbuf *out, const char *text, size_t len, size_t max)
{
	size_t i, pad = 0;
	int v[4], k;

	if (len % 4)
		return err_set(-EINVAL, "base64 of %zu characters: not a multiple of 4", len);
	if (len / 4 * 3 > max + 2)
		return err_set(-EFBIG, "base64 of more than %zu bytes", max);
	if (len && text[len - 1] == '=')
		pad = len >= 2 && text[len - 2] == '=' ? 2 : 1;
	for (i = 0; i < len; i += 4) {
		bool last = i + 4 == len;

		for (k = 0; k < 4; k++) {
			if (last && k >= 4 - (int)pad) {
				v[k] = 0;
				continue;
			}
			v[k] = value_of(text[i + k]);
			if (v[k] < 0)
				return err_set(-EINVAL, "base64: character %zu is not of the "
					       "alphabet", i + (size_t)k + 1);
		}
		if (last && ((pad == 1 && (v[2] & 3)) || (pad == 2 && (v[1] & 15))))
			return err_set(-EINVAL, "base64: the last character has bits set "
				       "past the data");
		strbuf_addch(out, (char)((v[0] << 2) | (v[1] >> 4)));
		if (!last || pad < 2)
			strbuf_addch(out, (char)(((v[1] & 15) << 4) | (v[2] >> 2)));
		if (!last || pad < 1)
			strbuf_addch(out, (char)(((v[2] & 3) << 6) | v[3]));
	}
	if (out->len > max)
		return err_set(-EFBIG, "base64 of more than %zu bytes", max);
	return 0;
}

int base64_decode(struct strbuf *out, const char *text, size_t len, size_t max)
{
	int r;

	strbuf_reset(out);
	r = decode(out, text, len, max);
	if (r < 0)
		strbuf_reset(out);
	return r;
}
