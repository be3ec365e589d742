/*
 * The values of configuration files, checked one way for all of them (the
 * agent's, the hub's, [github], host profiles): each refusal names its
 * file and line and says "'KEY': expected WHAT, not 'VALUE'", so that a
 * user reads one wording whichever file was wrong.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

void config_refuse(struct config_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->line)
		strbuf_addf(r->errors, "%s:%u: ", r->name, r->line);
	else
		strbuf_addf(r->errors, "%s: ", r->name);
	va_start(ap, fmt);
	strbuf_vaddf(r->errors, fmt, ap);
	va_end(ap);
	strbuf_addch(r->errors, '\n');
	r->count++;
}

int config_report_end(const struct config_report *r)
{
	if (!r->count)
		return 0;
	return err_set(-EINVAL, "%u error%s in '%s'", r->count, r->count == 1 ? "" : "s",
		       r->name);
}

int config_read(char **out, size_t *out_len, const char *path, size_t max)
{
	int r = fs_read_file(out, out_len, path, max);

	return r < 0 ? err_set(r, "configuration %s", err_last()) : 0;
}

int config_read_pem(char **out, struct config_report *r, const char *key, const char *path,
		    size_t max, const char *begin)
{
	size_t len = 0;

	*out = NULL;
	if (fs_read_file(out, &len, path, max) < 0) {
		config_refuse(r, "'%s': %s", key, err_last());
		return -EINVAL;
	}
	if (memchr(*out, '\0', len) || !strstr(*out, begin)) {
		config_refuse(r, "'%s': expected a file of PEM text (%s...), not '%s'", key, begin,
			      path);
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

int config_parse_long(long *out, const char *v, long lo, long hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (end == v || *end || errno || n < lo || n > hi)
		return -EINVAL;
	*out = n;
	return 0;
}

/* A finite number, the whole of v. */
static int parse_double(double *out, const char *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(d))
		return -EINVAL;
	*out = d;
	return 0;
}

int config_set_text(char **out, struct config_report *r, const char *key, const char *v)
{
	if (*out) {
		config_refuse(r, "'%s': set twice in this section", key);
		return -EINVAL;
	}
	if (!*v) {
		config_refuse(r, "'%s': expected a value", key);
		return -EINVAL;
	}
	*out = xstrdup(v);
	return 0;
}

bool config_name_is_valid(const char *s, size_t max)
{
	size_t n = strlen(s);

	return n >= 1 && n <= max &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

int config_set_name(char **out, struct config_report *r, const char *key, const char *v,
		    size_t max)
{
	if (*v && !config_name_is_valid(v, max)) {
		config_refuse(r, "'%s': expected a name of 1 to %zu letters, digits, '.', '_' or "
			      "'-', not '%s'", key, max, v);
		return -EINVAL;
	}
	return config_set_text(out, r, key, v);
}

/* Whether a segment of path s is "." or "..": "/dev/.." names the root,
 * "/dev/./x" hides where it points from a prefix check. */
static bool has_dot_segment(const char *s)
{
	const char *p = s;

	while (*p) {
		size_t n = strcspn(p, "/");

		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return true;
		p += n;
		p += strspn(p, "/");
	}
	return false;
}

bool config_path_is_absolute(const char *s)
{
	return s[0] == '/' && !has_dot_segment(s);
}

bool config_path_is_device(const char *s)
{
	return !strncmp(s, "/dev/", 5) && s[5 + strspn(s + 5, "/")] && !has_dot_segment(s);
}

bool config_path_is_gpu_node(const char *s)
{
	static const char *const kinds[] = { "/dev/dri/", "/dev/kfd", "/dev/nvidia", "/dev/accel/",
					     "/dev/mali", "/dev/dxg", NULL };
	size_t i;

	if (!config_path_is_device(s))
		return false;
	for (i = 0; kinds[i]; i++) {
		size_t n = strlen(kinds[i]);

		/* A directory's prefix needs a name after it. */
		if (!strncmp(s, kinds[i], n) && (kinds[i][n - 1] != '/' || s[n]))
			return true;
	}
	return false;
}

int config_set_path(char **out, struct config_report *r, const char *key, const char *v)
{
	if (*v && !config_path_is_absolute(v)) {
		config_refuse(r, "'%s': expected an absolute path, not '%s'", key, v);
		return -EINVAL;
	}
	return config_set_text(out, r, key, v);
}

int config_set_bool(bool *out, struct config_report *r, const char *key, const char *v)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1")) {
		*out = true;
	} else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0")) {
		*out = false;
	} else {
		config_refuse(r, "'%s': expected true or false, not '%s'", key, v);
		return -EINVAL;
	}
	return 0;
}

int config_set_choice(int *out, struct config_report *r, const char *key, const char *v,
		      const char *const *words)
{
	struct strbuf list = STRBUF_INIT;
	size_t i;

	for (i = 0; words[i]; i++) {
		if (!strcmp(v, words[i])) {
			*out = (int)i;
			return 0;
		}
	}
	for (i = 0; words[i]; i++)
		strbuf_addf(&list, "%s%s", i == 0 ? "" : words[i + 1] ? ", " : " or ", words[i]);
	config_refuse(r, "'%s': expected %s, not '%s'", key, list.buf, v);
	strbuf_release(&list);
	return -EINVAL;
}

int config_set_long(long *out, struct config_report *r, const char *key, const char *v,
		    long lo, long hi)
{
	if (config_parse_long(out, v, lo, hi) < 0) {
		config_refuse(r, "'%s': expected a whole number from %ld to %ld, not '%s'", key,
			      lo, hi, v);
		return -EINVAL;
	}
	return 0;
}

int config_set_int(int *out, struct config_report *r, const char *key, const char *v, int lo,
		   int hi)
{
	long n;

	if (config_set_long(&n, r, key, v, lo, hi) < 0)
		return -EINVAL;
	*out = (int)n;
	return 0;
}

int config_set_seconds(double *out, struct config_report *r, const char *key, const char *v,
		       double max)
{
	double d;

	if (parse_double(&d, v) < 0 || d <= 0 || d > max) {
		config_refuse(r, "'%s': expected a number of seconds above 0 and at most %g, "
			      "not '%s'", key, max, v);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

int config_set_number(double *out, struct config_report *r, const char *key, const char *v,
		      double lo, double hi, const char *unit)
{
	double d;

	if (parse_double(&d, v) < 0 || d < lo || d > hi) {
		config_refuse(r, "'%s': expected a number of %s from %g to %g, not '%s'", key, unit,
			      lo, hi, v);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

int config_set_fraction(double *out, struct config_report *r, const char *key, const char *v)
{
	double d;

	if (parse_double(&d, v) < 0 || d < 0 || d >= 1) {
		config_refuse(r, "'%s': expected a fraction in [0, 1) (0.05 is 5%%), not '%s'", key,
			      v);
		return -EINVAL;
	}
	*out = d;
	return 0;
}

static bool is_listed(char *const *list, size_t n, const char *w)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], w))
			return true;
	return false;
}

int config_add_words(char ***list, size_t *n, struct config_report *r, const char *key,
		     const char *v, const struct config_words *how)
{
	char *copy = xstrdup(v), *save = NULL, *w;
	unsigned before = r->count;
	bool any = false;

	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		any = true;
		if (how->is_valid && !how->is_valid(w)) {
			config_refuse(r, "'%s': expected %s, not '%s'", key, how->what, w);
			continue;
		}
		if (how->once && is_listed(*list, *n, w)) {
			config_refuse(r, "'%s': expected each once, not '%s' twice", key, w);
			continue;
		}
		if (*n >= how->max) {
			config_refuse(r, "'%s': expected at most %zu entries", key, how->max);
			break;
		}
		*list = xrealloc(*list, (*n + 1) * sizeof(char *));
		(*list)[(*n)++] = xstrdup(w);
	}
	free(copy);
	if (!any)
		config_refuse(r, "'%s': expected a value", key);
	return r->count > before ? -EINVAL : 0;
}

void config_words_free(char **list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

void *config_key_field(void *base, const struct config_key *row)
{
	return (char *)base + row->offset;
}

const struct config_key *config_table_find(const struct config_key *table, const char *k)
{
	for (; table->key; table++)
		if (!strcmp(table->key, k))
			return table;
	return NULL;
}

/* The whole-number kinds: an int, or an unsigned said as a long is. */
static int set_whole(const struct config_key *row, void *field, struct config_report *r,
		     const char *v)
{
	long n;

	if (row->kind == CONFIG_INT)
		return config_set_int(field, r, row->key, v, (int)row->lo, (int)row->hi);
	if (config_set_long(&n, r, row->key, v, (long)row->lo, (long)row->hi) < 0)
		return -EINVAL;
	*(unsigned *)field = (unsigned)n;
	return 0;
}

static int set_kind(const struct config_key *row, void *base, struct config_report *r,
		    const char *v)
{
	void *field = config_key_field(base, row);
	const char *k = row->key;

	switch (row->kind) {
	case CONFIG_TEXT:
		return config_set_text(field, r, k, v);
	case CONFIG_NAME:
		return config_set_name(field, r, k, v, (size_t)row->hi);
	case CONFIG_PATH:
		return config_set_path(field, r, k, v);
	case CONFIG_BOOL:
		return config_set_bool(field, r, k, v);
	case CONFIG_CHOICE:
		return config_set_choice(field, r, k, v, row->choices);
	case CONFIG_INT:
	case CONFIG_UNSIGNED:
		return set_whole(row, field, r, v);
	case CONFIG_SECONDS:
		return config_set_seconds(field, r, k, v, row->hi);
	case CONFIG_NUMBER:
		return config_set_number(field, r, k, v, row->lo, row->hi, row->unit);
	case CONFIG_FRACTION:
		return config_set_fraction(field, r, k, v);
	case CONFIG_WORDS:
		return config_add_words(field, (size_t *)((char *)base + row->count), r, k, v,
					row->words);
	case CONFIG_CUSTOM:
		return row->set(base, row, r, v);
	case CONFIG_SUB:
		return config_key_set(config_table_find(row->sub, k), (char *)base + row->offset,
				      r, v);
	}
	assert(!"a configuration key of no kind");
	return -EINVAL;
}

int config_key_set(const struct config_key *row, void *base, struct config_report *r,
		   const char *v)
{
	int rc;

	assert(row);
	rc = set_kind(row, base, r, v);
	if (rc == 0 && row->seen)
		*(bool *)((char *)base + row->seen - 1) = true;
	return rc;
}

int config_table_set(const struct config_key *table, void *base, struct config_report *r,
		     const char *section, const char *k, const char *v)
{
	const struct config_key *row = config_table_find(table, k);
	struct strbuf list = STRBUF_INIT;

	if (row)
		return config_key_set(row, base, r, v);
	for (row = table; row->key; row++)
		strbuf_addf(&list, "%s%s", row == table ? "" : ", ", row->key);
	config_refuse(r, "unknown key '%s' in [%s] (%s)", k, section, list.buf);
	strbuf_release(&list);
	return -ENOENT;
}
