/*
 * What a client sends, checked before anything reads it: the request path
 * and the query parameters. Every check here answers with a sentence naming
 * the path or the parameter; the server turns it into a 400.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hub-internal.h"

void web_params_release(struct web_params *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		free(p->v[i].key);
		free(p->v[i].value);
	}
	p->n = 0;
}

int web_params_add(struct web_params *p, const char *key, const char *value)
{
	size_t klen = strlen(key), vlen;

	if (!value)
		value = "";
	vlen = strlen(value);
	if (!klen || klen > WEB_PARAM_NAME_MAX)
		return err_set(-EINVAL, "a parameter name must be 1 to %d bytes",
			       WEB_PARAM_NAME_MAX);
	if (vlen > WEB_PARAM_VALUE_MAX)
		return err_set(-EINVAL, "parameter '%s': the value is over %d bytes", key,
			       WEB_PARAM_VALUE_MAX);
	if (web_param_get(p, key))
		return err_set(-EINVAL, "parameter '%s' is given twice", key);
	if (p->n == WEB_PARAMS_MAX)
		return err_set(-EINVAL, "more than %d parameters", WEB_PARAMS_MAX);
	p->v[p->n].key = xstrndup(key, klen);
	p->v[p->n].value = xstrndup(value, vlen);
	p->n++;
	return 0;
}

int web_params_check(const struct web_params *p, const char *const *allowed)
{
	size_t i, j;

	for (i = 0; i < p->n; i++) {
		for (j = 0; allowed[j]; j++)
			if (!strcmp(p->v[i].key, allowed[j]))
				break;
		if (!allowed[j])
			return err_set(-EINVAL, "unknown parameter '%s'", p->v[i].key);
	}
	return 0;
}

const char *web_param_get(const struct web_params *p, const char *key)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].key, key))
			return p->v[i].value;
	return NULL;
}

int web_param_int(int64_t *out, const struct web_params *p, const char *key, int64_t dflt,
		  int64_t min, int64_t max)
{
	const char *s = web_param_get(p, key);
	int64_t v = 0;

	if (!s) {
		*out = dflt;
		return 0;
	}
	/* Digits only: no sign, blank, hex or exponent slips through strtoll. */
	if (!*s || strlen(s) > 18 || strspn(s, "0123456789") != strlen(s))
		goto bad;
	for (; *s; s++)
		v = v * 10 + (*s - '0');
	if (v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return err_set(-EINVAL, "parameter '%s': expected a whole number from %lld to %lld",
		       key, (long long)min, (long long)max);
}

int web_param_text(const char **out, const struct web_params *p, const char *key,
		   bool required)
{
	const char *s = web_param_get(p, key), *c;

	*out = NULL;
	if (!s) {
		if (required)
			return err_set(-EINVAL, "parameter '%s' is required", key);
		return 0;
	}
	if (!*s)
		return err_set(-EINVAL, "parameter '%s' is empty", key);
	for (c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return err_set(-EINVAL, "parameter '%s' holds a control character", key);
	*out = s;
	return 0;
}

int web_param_hex(const char **out, const struct web_params *p, const char *key)
{
	const char *s = web_param_get(p, key);
	size_t n;

	*out = NULL;
	if (!s)
		return 0;
	n = strlen(s);
	if (n < 4 || n > 40 || strspn(s, "0123456789abcdef") != n)
		return err_set(-EINVAL, "parameter '%s': expected 4 to 40 lower-case hex digits",
			       key);
	*out = s;
	return 0;
}

int web_param_format(bool *csv, const struct web_params *p)
{
	const char *s = web_param_get(p, "format");

	if (!s || !strcmp(s, "json")) {
		*csv = false;
		return 0;
	}
	if (!strcmp(s, "csv")) {
		*csv = true;
		return 0;
	}
	return err_set(-EINVAL, "parameter 'format': expected json or csv");
}

int web_path_check(const char *raw, const char *path)
{
	size_t rawpath = strcspn(raw, "?"), n = strlen(path), i;
	const char *seg;

	if (memchr(raw, '%', rawpath))
		return err_set(-EINVAL, "the path is percent-encoded; perfd's paths never are");
	if (path[0] != '/')
		return err_set(-EINVAL, "the path does not start with '/'");
	if (n > WEB_PATH_MAX)
		return err_set(-EINVAL, "the path is over %d bytes", WEB_PATH_MAX);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];

		if (c <= 0x20 || c >= 0x7f || c == '\\')
			return err_set(-EINVAL, "the path holds a byte that is not printable "
				       "ASCII, or a backslash");
	}
	for (seg = path + 1; seg <= path + n; seg += strcspn(seg, "/") + 1) {
		size_t len = strcspn(seg, "/");

		if ((len == 1 && seg[0] == '.') || (len == 2 && !strncmp(seg, "..", 2)))
			return err_set(-EINVAL, "the path holds a '.' or '..' segment");
	}
	return 0;
}

int web_static_name(char *out, size_t outlen, const char *path)
{
	const char *rel, *seg;
	size_t n;

	if (outlen)
		*out = '\0';
	if (!strcmp(path, "/"))
		rel = "index.html";
	else if (!strncmp(path, "/static/", 8))
		rel = path + 8;
	else
		return -ENOENT;
	n = strlen(rel);
	if (!n || n >= outlen)
		return -ENOENT;
	for (seg = rel; seg <= rel + n; seg += strcspn(seg, "/") + 1) {
		size_t len = strcspn(seg, "/");

		if (!len || seg[0] == '.' ||
		    strspn(seg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			   "0123456789._-") < len)
			return -ENOENT;
	}
	memcpy(out, rel, n + 1);
	return 0;
}

int web_doc_name(char *out, size_t outlen, const char *path)
{
	const char *rel;
	size_t n;

	if (outlen)
		*out = '\0';
	if (strncmp(path, "/docs/", 6))
		return -ENOENT;
	rel = path + 6;
	n = strlen(rel);
	if (n <= 3 || n >= outlen || strcmp(rel + n - 3, ".md") || rel[0] == '.' ||
	    strspn(rel, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") < n)
		return -ENOENT;
	memcpy(out, rel, n + 1);
	return 0;
}
