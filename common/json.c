/* JSON strings of text perfd did not write (a program's lines, a commit's
 * subject, a device's name), repaired rather than refused by jansson. */
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
