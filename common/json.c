/* The one vocabulary perfd writes JSON values in (common.h states its
 * rules): text repaired rather than refused by jansson, integers as
 * integers, and null for what is not there or not finite. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common.h"

json_t *utf8_json(const char *s, size_t len)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *j;

	if (utf8_is_valid(s, len))
		return json_stringn(s, len);
	utf8_repair(&sb, s, len);
	j = json_stringn(sb.buf, sb.len);
	strbuf_release(&sb);
	return j;
}

json_t *json_textn(const char *s, size_t len)
{
	return s ? utf8_json(s, len) : json_null();
}

json_t *json_text(const char *s)
{
	return s ? utf8_json(s, strlen(s)) : json_null();
}

json_t *json_text_or_null(const char *s)
{
	return s && *s ? json_text(s) : json_null();
}

json_t *json_texts(char *const *v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_text(v[i]));
	return a;
}

json_t *json_id(int64_t id)
{
	return id > 0 ? json_integer((json_int_t)id) : json_null();
}

json_t *json_real_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *json_number(double v)
{
	if (!isfinite(v))
		return json_null();
	if (v == floor(v) && fabs(v) < JSON_WHOLE_MAX)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *json_number_text(const char *text)
{
	char *end;
	double v = strtod(text, &end);

	return *end || end == text ? json_text(text) : json_number(v);
}

double json_fraction(double v)
{
	return round(v * 1e6) / 1e6;
}

void utf8_json_set(json_t *o, const char *key, json_t *v)
{
	char *fixed;

	if (utf8_is_valid(key, strlen(key))) {
		json_object_set_new(o, key, v);
		return;
	}
	fixed = utf8_repair_dup(key);
	json_object_set_new(o, fixed, v);
	free(fixed);
}

bool json_member_int(int64_t *out, const char *text, size_t len, const char *name)
{
	json_t *root = json_loadb(text, len, 0, NULL);
	json_t *v = json_object_get(root, name);   /* NULL-safe: NULL for a non-object */
	bool ok = json_is_integer(v);

	*out = ok ? (int64_t)json_integer_value(v) : 0;
	json_decref(root);
	return ok;
}
