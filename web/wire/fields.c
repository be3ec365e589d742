/*
 * Field tables (wire-internal.h): a C struct written as a JSON object and
 * read back from one, member by member as its table says, and the table
 * docs/hub.md shows of it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire-internal.h"

#define HOST_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
#define TIME_SHAPE "dddd-dd-ddTdd:dd:dd.dddZ"

/* ---- paths ---- */

static void at_cut(struct wire_at *a, int n)
{
	if (n >= (int)sizeof(a->path))
		memcpy(a->path + sizeof(a->path) - 4, "...", 4);
}

struct wire_at wire_at_key(const struct wire_at *parent, const char *key)
{
	struct wire_at a;

	at_cut(&a, snprintf(a.path, sizeof(a.path), "%s%s%s", parent->path,
			    *parent->path ? "." : "", key));
	return a;
}

struct wire_at wire_at_index(const struct wire_at *parent, size_t i)
{
	struct wire_at a;

	at_cut(&a, snprintf(a.path, sizeof(a.path), "%s[%zu]", parent->path, i));
	return a;
}

int wire_bad(const struct wire_at *a, const char *what)
{
	return err_set(-EINVAL, "%s: expected %s", *a->path ? a->path : "the record", what);
}

/* ---- what a value must be: the errors' words and the docs' ---- */

static void words_join(struct strbuf *out, const char *const *words, size_t from, size_t to)
{
	size_t i;

	for (i = from; i <= to; i++)
		strbuf_addf(out, "%s%s", i == from ? "" : i == to ? " or " : ", ", words[i]);
}

static size_t words_count(const char *const *words)
{
	size_t n = 0;

	while (words[n])
		n++;
	return n;
}

static void real_bounds(struct strbuf *out, const struct wire_field *f)
{
	strbuf_adds(out, "a number");
	if (f->flags & (WIRE_FROM | WIRE_ABOVE))
		strbuf_addf(out, " %s %lld", f->flags & WIRE_FROM ? "from" : "above",
			    (long long)f->lo);
	if (f->hi)
		strbuf_addf(out, " and at most %lld", (long long)f->hi);
}

/* Appends what f's value must be, without "or null". */
static void describe(struct strbuf *out, const struct wire_field *f)
{
	static const char *const fixed[] = {
		[WIRE_BOOL] = "true or false",
		[WIRE_HOST] = "a host's name: 1 to 63 letters, digits, '.', '_' or '-'",
		[WIRE_TIME] = "a time as 2026-11-04T10:00:00.123Z",
		[WIRE_COMMIT] = "a commit id (40 lower-case hex digits)",
		[WIRE_HASH] = "64 lower-case hex digits",
		[WIRE_OBJECT] = "an object",
	};

	if (f->what) {
		strbuf_adds(out, f->what);
	} else if (f->type < ARRAY_SIZE(fixed) && fixed[f->type]) {
		strbuf_adds(out, fixed[f->type]);
	} else if (f->type == WIRE_CONST) {
		strbuf_addf(out, "'%s'", f->words[0]);
	} else if (f->type == WIRE_INT || f->type == WIRE_I64) {
		strbuf_addf(out, "a whole number from %lld to %lld", (long long)f->lo,
			    (long long)f->hi);
	} else if (f->type == WIRE_REAL) {
		real_bounds(out, f);
	} else if (f->type == WIRE_TEXT && f->lo) {
		strbuf_addf(out, "a string of %lld to %lld bytes", (long long)f->lo,
			    (long long)f->hi);
	} else if (f->type == WIRE_TEXT) {
		strbuf_addf(out, "a string of at most %lld bytes", (long long)f->hi);
	} else if (f->type == WIRE_ENUM && f->hi) {
		words_join(out, f->words, (size_t)f->lo, (size_t)f->hi);
	} else if (f->type == WIRE_WORD || f->type == WIRE_ENUM || f->type == WIRE_FLAG) {
		words_join(out, f->words, 0, words_count(f->words) - 1);
	} else if (f->type == WIRE_LIST) {
		strbuf_addf(out, "a list of at most %lld entries", (long long)f->hi);
	}
}

/* -EINVAL: the value at parent's key (parent itself for key NULL) is not
 * what f says. */
static int refuse(const struct wire_field *f, const struct wire_at *parent, const char *key)
{
	struct strbuf what = STRBUF_INIT;
	struct wire_at a = key ? wire_at_key(parent, key) : *parent;
	int r;

	describe(&what, f);
	if (f->flags & WIRE_NULL)
		strbuf_adds(&what, " or null");
	r = wire_bad(&a, what.buf);
	strbuf_release(&what);
	return r;
}

/* ---- writing ---- */

static bool is_string(enum wire_type t)
{
	return t == WIRE_TEXT || t == WIRE_HOST || t == WIRE_TIME || t == WIRE_COMMIT ||
	       t == WIRE_HASH || t == WIRE_WORD;
}

/* The text of a string member: NULL for null. */
static const char *text_of(const struct wire_field *f, const void *p)
{
	const char *s;

	if (f->size || (f->type != WIRE_TEXT && f->type != WIRE_HASH && f->type != WIRE_WORD)) {
		s = p;
		return !*s && (f->flags & WIRE_NULL) ? NULL : s;
	}
	s = *(char *const *)p;
	return s ? s : f->dflt;
}

static int64_t int_of(const struct wire_field *f, const void *p)
{
	int v;

	if (f->type == WIRE_I64)
		return *(const int64_t *)p;
	memcpy(&v, p, sizeof(v));    /* an int, or an enum of an int's size */
	return v;
}

/* A number below its lower bound, or a real not finite: null, or absent. */
static bool is_below(const struct wire_field *f, const void *p)
{
	double v;

	if (f->type == WIRE_INT || f->type == WIRE_I64)
		return int_of(f, p) < f->lo;
	v = *(const double *)p;
	return !isfinite(v) || ((f->flags & WIRE_FROM) && v < (double)f->lo) ||
	       ((f->flags & WIRE_ABOVE) && v <= (double)f->lo);
}

static bool is_present(const struct wire_field *f, const void *base)
{
	const char *p = (const char *)base + f->offset;

	if (f->present)
		return f->present(base);
	if (f->type == WIRE_INT || f->type == WIRE_I64 || f->type == WIRE_REAL)
		return !is_below(f, p);
	if (is_string(f->type) && !f->size)
		return text_of(f, p) != NULL;
	return true;
}

static json_t *build_value(const struct wire_field *f, const void *base);

static json_t *build_list(const struct wire_field *f, const char *p, const void *base)
{
	json_t *list = json_array();
	const char *entries = *(const char *const *)p;
	size_t n = *(const size_t *)((const char *)base + f->count), i;

	for (i = 0; i < n; i++)
		json_array_append_new(list, build_value(f->sub, entries + i * f->size));
	return list;
}

static json_t *build_value(const struct wire_field *f, const void *base)
{
	const char *p = (const char *)base + f->offset;

	if ((f->flags & WIRE_HAS) && !*(const bool *)((const char *)base + f->has))
		return json_null();
	switch (f->type) {
	case WIRE_CONST:
		return json_string(f->words[0]);
	case WIRE_BOOL:
		return json_boolean(*(const bool *)p);
	case WIRE_INT:
	case WIRE_I64:
		return (f->flags & WIRE_NULL) && is_below(f, p) ? json_null() :
		       json_integer(int_of(f, p));
	case WIRE_REAL:
		return json_real_or_null(*(const double *)p);
	case WIRE_ENUM: {
		int64_t v = int_of(f, p);

		return v >= 0 && (size_t)v < words_count(f->words) ? json_string(f->words[v]) :
		       json_null();
	}
	case WIRE_FLAG:
		return json_string(f->words[*(const bool *)p]);
	case WIRE_OBJECT:
		return wire_fields_build(f->sub, p);
	case WIRE_LIST:
		return build_list(f, p, base);
	case WIRE_CUSTOM:
		return f->build ? f->build(p) : NULL;
	default:
		return json_text(text_of(f, p));
	}
}

json_t *wire_fields_build(const struct wire_field *table, const void *base)
{
	json_t *o = json_object(), *v;
	const struct wire_field *f;

	for (f = table; f->name; f++) {
		if ((f->flags & WIRE_SEALED) || ((f->flags & WIRE_OPTIONAL) && !is_present(f, base)))
			continue;
		v = build_value(f, base);
		if (v)
			json_object_set_new(o, f->name, v);
	}
	return o;
}

/* ---- reading ---- */

int wire_fields_check(const struct wire_field *table, json_t *o, const struct wire_at *a)
{
	const struct wire_field *f;
	const char *key;
	char shown[48];
	size_t n = 0;
	json_t *v;

	if (!json_is_object(o))
		return wire_bad(a, "an object");
	for (f = table; f->name; f++) {
		if (json_object_get(o, f->name))
			n++;
		else if (!(f->flags & WIRE_OPTIONAL))
			return err_set(-EINVAL, "%s: missing", wire_at_key(a, f->name).path);
	}
	/* With no more members than the table's that are there, none is unknown. */
	if (json_object_size(o) == n)
		return 0;
	json_object_foreach(o, key, v) {
		for (f = table; f->name && strcmp(f->name, key); f++)
			;
		if (f->name)
			continue;
		/* The name is the sender's: shown cut, and only in quotes. */
		snprintf(shown, sizeof(shown), "%s", key);
		return err_set(-EINVAL, "%s: unknown member '%s'%s", *a->path ? a->path : "the record",
			       shown, strlen(key) >= sizeof(shown) ? "..." : "");
	}
	return 0;
}

static bool is_hex(const char *s, size_t n)
{
	return strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

static bool is_time(const char *s)
{
	static const char shape[] = TIME_SHAPE;
	size_t i;

	for (i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != shape[i])
			return false;
	return !s[i];
}

/* The index of v among words from..to, or -1. */
static int64_t word_index(json_t *v, const char *const *words, size_t from, size_t to)
{
	size_t i;

	for (i = from; json_is_string(v) && i <= to && words[i]; i++)
		if (!strcmp(json_string_value(v), words[i]))
			return (int64_t)i;
	return -1;
}

/* Stores string s (len bytes) as f holds it: in its char array, or a copy. */
static void store_text(const struct wire_field *f, char *p, const char *s, size_t len)
{
	size_t size = f->size;

	if (!size && (f->type == WIRE_TEXT || f->type == WIRE_HASH || f->type == WIRE_WORD)) {
		*(char **)p = xstrndup(s, len);
		return;
	}
	if (!size)
		size = f->type == WIRE_HOST ? 64 : f->type == WIRE_TIME ? 32 : 41;
	len = len < size ? len : size - 1;
	memcpy(p, s, len);
	p[len] = '\0';
}

/* Whether string v is of f's shape. */
static bool string_fits(const struct wire_field *f, json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);

	switch (f->type) {
	case WIRE_TEXT:
		return (int64_t)n >= f->lo && (int64_t)n <= f->hi;
	case WIRE_HOST:
		return n > 0 && n < 64 && strspn(s, HOST_CHARS) == n;
	case WIRE_TIME:
		return is_time(s);
	case WIRE_COMMIT:
		return is_hex(s, 40);
	case WIRE_HASH:
		return is_hex(s, 64);
	default:
		return word_index(v, f->words, 0, SIZE_MAX) >= 0;
	}
}

static bool number_fits(const struct wire_field *f, json_t *v)
{
	double d;

	if (f->type != WIRE_REAL)
		return json_is_integer(v) && json_integer_value(v) >= f->lo &&
		       json_integer_value(v) <= f->hi;
	if (!json_is_number(v))
		return false;
	d = json_number_value(v);
	return isfinite(d) && !is_below(f, &d) && !(f->hi && d > (double)f->hi);
}

static void store_number(const struct wire_field *f, char *p, json_t *v)
{
	int i;

	if (f->type == WIRE_REAL) {
		*(double *)p = json_number_value(v);
	} else if (f->type == WIRE_I64) {
		*(int64_t *)p = json_integer_value(v);
	} else {
		i = (int)json_integer_value(v);
		memcpy(p, &i, sizeof(i));
	}
}

/* A number left out or null: the value just below its bounds. */
static void store_below(const struct wire_field *f, char *p)
{
	int i = (int)(f->lo - 1);

	if (f->type == WIRE_REAL)
		*(double *)p = f->flags & WIRE_ABOVE ? (double)f->lo : NAN;
	else if (f->type == WIRE_I64)
		*(int64_t *)p = f->lo - 1;
	else if (f->type == WIRE_INT)
		memcpy(p, &i, sizeof(i));
}

static int parse_value(void *base, const struct wire_field *f, json_t *v,
		       const struct wire_at *parent, const char *key);

static int parse_list(const struct wire_field *f, char *p, void *base, json_t *v,
		      const struct wire_at *parent, const char *key)
{
	struct wire_at a = key ? wire_at_key(parent, key) : *parent, ai;
	size_t *n = (size_t *)((char *)base + f->count), i;
	char *entries;
	json_t *e;
	int r;

	if (!json_is_array(v) || (int64_t)json_array_size(v) > f->hi)
		return refuse(f, parent, key);
	entries = xcalloc(json_array_size(v) + 1, f->size);
	*(char **)p = entries;
	json_array_foreach(v, i, e) {
		ai = wire_at_index(&a, i);
		(*n)++;      /* counted first, so that its release frees what it holds */
		r = parse_value(entries + i * f->size, f->sub, e, &ai, NULL);
		if (r < 0)
			return r;
	}
	return 0;
}

/* An enum's or a flag's word into p: -1 when v is none of its words. */
static int parse_choice(const struct wire_field *f, char *p, json_t *v)
{
	size_t to = f->type == WIRE_FLAG ? 1 : f->hi ? (size_t)f->hi : SIZE_MAX;
	int64_t i = word_index(v, f->words, f->type == WIRE_ENUM ? (size_t)f->lo : 0, to);
	int n = (int)i;

	if (i < 0)
		return -1;
	if (f->type == WIRE_FLAG)
		*(bool *)p = i == 1;
	else
		memcpy(p, &n, sizeof(n));
	return 0;
}

/* Reads v, the member key of parent (parent itself for key NULL), into
 * base as f says. */
static int parse_value(void *base, const struct wire_field *f, json_t *v,
		       const struct wire_at *parent, const char *key)
{
	char *p = (char *)base + f->offset;
	struct wire_at a;

	if (json_is_null(v) && (f->flags & WIRE_NULL)) {
		store_below(f, p);
		return 0;
	}
	if (f->flags & WIRE_HAS)
		*(bool *)((char *)base + f->has) = true;
	switch (f->type) {
	case WIRE_CONST:
		return word_index(v, f->words, 0, 0) == 0 ? 0 : refuse(f, parent, key);
	case WIRE_BOOL:
		if (!json_is_boolean(v))
			return refuse(f, parent, key);
		*(bool *)p = json_is_true(v);
		return 0;
	case WIRE_INT:
	case WIRE_I64:
	case WIRE_REAL:
		if (!number_fits(f, v))
			return refuse(f, parent, key);
		store_number(f, p, v);
		return 0;
	case WIRE_ENUM:
	case WIRE_FLAG:
		return parse_choice(f, p, v) < 0 ? refuse(f, parent, key) : 0;
	case WIRE_OBJECT:
		a = key ? wire_at_key(parent, key) : *parent;
		return wire_fields_parse(p, f->sub, v, &a);
	case WIRE_LIST:
		return parse_list(f, p, base, v, parent, key);
	case WIRE_CUSTOM:
		a = key ? wire_at_key(parent, key) : *parent;
		return f->parse(p, v, &a);
	default:
		if (!json_is_string(v) || !string_fits(f, v))
			return refuse(f, parent, key);
		store_text(f, p, json_string_value(v), json_string_length(v));
		return 0;
	}
}

int wire_field_parse(void *base, const struct wire_field *f, json_t *o,
		     const struct wire_at *parent)
{
	json_t *v = json_object_get(o, f->name);

	if (!v && (f->flags & WIRE_OPTIONAL)) {
		store_below(f, (char *)base + f->offset);
		return 0;
	}
	return parse_value(base, f, v, parent, f->name);
}

int wire_fields_parse(void *base, const struct wire_field *table, json_t *o,
		      const struct wire_at *a)
{
	const struct wire_field *f;
	int r = wire_fields_check(table, o, a);

	for (f = table; r == 0 && f->name; f++)
		r = wire_field_parse(base, f, o, a);
	return r;
}

/* ---- the docs' table ---- */

static void doc_rows(struct strbuf *out, const struct wire_field *table, const char *prefix)
{
	const struct wire_field *f;
	char *path;

	for (f = table; f->name; f++) {
		path = xasprintf("%s%s", prefix, f->name);
		strbuf_addf(out, "| `%s` | ", path);
		describe(out, f);
		if (f->type == WIRE_LIST && f->sub->type != WIRE_OBJECT) {
			strbuf_adds(out, ", each ");
			describe(out, f->sub);
			if (f->sub->flags & WIRE_NULL)
				strbuf_adds(out, " or null");
		} else if (f->type == WIRE_LIST) {
			strbuf_adds(out, " (objects)");
		}
		strbuf_addf(out, "%s | %s%s%s |\n", f->flags & WIRE_NULL ? " or null" : "",
			    f->flags & WIRE_OPTIONAL ? "optional" : "required",
			    f->since ? ", since " : "", f->since ? f->since : "");
		if (f->type == WIRE_OBJECT || (f->type == WIRE_LIST && f->sub->type == WIRE_OBJECT)) {
			char *inner = xasprintf("%s%s.", path, f->type == WIRE_LIST ? "[]" : "");

			doc_rows(out, f->type == WIRE_LIST ? f->sub->sub : f->sub, inner);
			free(inner);
		}
		free(path);
	}
}

void wire_fields_doc(struct strbuf *out, const struct wire_field *table)
{
	strbuf_adds(out, "| member | value | |\n|---|---|---|\n");
	doc_rows(out, table, "");
}
