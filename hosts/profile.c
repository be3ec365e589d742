/*
 * Host profile parsing. inih splits the file into sections and keys; this
 * file feeds it one line at a time so that every message can name its line,
 * checks what inih would only report once (syntax), and checks each value.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "hosts.h"

enum key_kind {
	KIND_NAME,
	KIND_TEXT,
	KIND_REQUIRED_TEXT,
	KIND_SECONDS,
	KIND_FRACTION,
	KIND_MS,
	KIND_CPUS,
	KIND_PATTERN,
};

enum key_id {
	KEY_NAME,
	KEY_DESCRIPTION,
	KEY_DEVICE_MATCH,
	KEY_EXPECTED_DRIVER,
	KEY_PROCESS_TIMEOUT,
	KEY_CPUS,
	KEY_NOISE,
	KEY_MIN_EFFECT,
	KEY_COOLDOWN,
	KEY_FAULT_LOG,
	KEY_FAULT_PATTERN,
	KEY_COUNT,
};

static const struct key {
	const char *section;
	const char *name;
	enum key_kind kind;
	bool required;
	bool repeatable;
} keys[KEY_COUNT] = {
	[KEY_NAME] = { "host", "name", KIND_NAME, true, false },
	[KEY_DESCRIPTION] = { "host", "description", KIND_TEXT, false, false },
	[KEY_DEVICE_MATCH] = { "device", "device_match", KIND_REQUIRED_TEXT, true, false },
	[KEY_EXPECTED_DRIVER] = { "device", "expected_driver", KIND_REQUIRED_TEXT, true, false },
	[KEY_PROCESS_TIMEOUT] = { "timing", "process_timeout_s", KIND_SECONDS, false, false },
	[KEY_CPUS] = { "timing", "cpus", KIND_CPUS, false, false },
	[KEY_NOISE] = { "timing", "noise", KIND_FRACTION, false, false },
	[KEY_MIN_EFFECT] = { "timing", "min_effect", KIND_FRACTION, false, false },
	[KEY_COOLDOWN] = { "timing", "cooldown_ms", KIND_MS, false, false },
	[KEY_FAULT_LOG] = { "faults", "fault_log", KIND_REQUIRED_TEXT, false, false },
	[KEY_FAULT_PATTERN] = { "faults", "fault_pattern", KIND_PATTERN, false, true },
};

static const char *const sections[] = { "host", "device", "timing", "faults" };

#define COOLDOWN_MAX_MS 600000

struct parse {
	const char *path;
	FILE *f;
	char *buf;                      /* getline's buffer */
	size_t cap;
	unsigned lineno;                /* the line inih is handling now */
	unsigned section_line[ARRAY_SIZE(sections)];
	unsigned key_line[KEY_COUNT];   /* where each key was first set */
	struct strbuf *errors;
	unsigned nerrors;
	struct host_profile *p;
};

static void parse_error(struct parse *ps, unsigned line, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

static void parse_error(struct parse *ps, unsigned line, const char *fmt, ...)
{
	va_list ap;

	strbuf_addf(ps->errors, "%s:%u: ", ps->path, line);
	va_start(ap, fmt);
	strbuf_vaddf(ps->errors, fmt, ap);
	va_end(ap);
	strbuf_addch(ps->errors, '\n');
	ps->nerrors++;
}

static int section_index(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
		if (strcmp(sections[i], name) == 0)
			return (int)i;
	return -1;
}

/*
 * Checks one line's shape before inih sees it: inih reports only the first
 * malformed line, we want them all. A line we reject reaches inih as an
 * empty line. Leading blanks are dropped so that an indented key is a key
 * and never the continuation of the one before.
 */
static const char *check_line(struct parse *ps, char *line)
{
	char *s = line + strspn(line, " \t");
	size_t len = strcspn(s, "\r\n");
	char *end;

	s[len] = '\0';
	if (len == 0 || *s == ';' || *s == '#')
		return s;
	if (*s == '[') {
		end = strchr(s, ']');
		if (!end) {
			parse_error(ps, ps->lineno, "section header without ']'");
			return "";
		}
		*end = '\0';
		if (section_index(s + 1) < 0) {
			parse_error(ps, ps->lineno,
				    "unknown section [%s] (expected [host], [device], [timing] or [faults])",
				    s + 1);
		} else if (ps->section_line[section_index(s + 1)] == 0) {
			ps->section_line[section_index(s + 1)] = ps->lineno;
		}
		*end = ']';
		return s;
	}
	if (!strpbrk(s, "=:")) {
		parse_error(ps, ps->lineno, "expected \"key = value\" or \"[section]\"");
		return "";
	}
	return s;
}

/* inih's reader: one whole line per call, so calls count lines. */
static char *read_line(char *str, int num, void *stream)
{
	struct parse *ps = stream;
	const char *s;
	ssize_t n;

	n = getline(&ps->buf, &ps->cap, ps->f);
	if (n < 0)
		return NULL;
	ps->lineno++;
	/* inih's buffer holds num bytes: the line, a newline and a NUL. */
	if (strcspn(ps->buf, "\r\n") > (size_t)num - 3) {
		parse_error(ps, ps->lineno, "line longer than %d characters", num - 3);
		s = "";
	} else {
		s = check_line(ps, ps->buf);
	}
	snprintf(str, (size_t)num, "%s\n", s);
	return str;
}

static bool is_name(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_'))
			return false;
	return true;
}

static int parse_number(double *out, const char *value)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (end == value || *end != '\0' || errno != 0 || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

static void set_text(char **field, const char *value)
{
	free(*field);
	*field = xstrdup(value);
}

static void add_pattern(struct parse *ps, const char *value)
{
	struct host_profile *p = ps->p;
	struct host_fault *f;
	char msg[256];
	int rc;

	if (*value == '\0') {
		parse_error(ps, ps->lineno, "fault_pattern is empty");
		return;
	}
	p->faults = xrealloc(p->faults, (p->nfaults + 1) * sizeof(*p->faults));
	f = &p->faults[p->nfaults];
	rc = regcomp(&f->re, value, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &f->re, msg, sizeof(msg));
		parse_error(ps, ps->lineno, "fault_pattern \"%s\" is not a valid regex: %s",
			    value, msg);
		return;
	}
	f->text = xstrdup(value);
	f->line = ps->lineno;
	p->nfaults++;
}

static void set_value(struct parse *ps, enum key_id id, const char *value)
{
	const struct key *k = &keys[id];
	struct host_profile *p = ps->p;
	struct host_cpus cpus;
	double v;
	char *end;
	unsigned long ms;

	switch (k->kind) {
	case KIND_NAME:
		if (!is_name(value)) {
			parse_error(ps, ps->lineno,
				    "%s \"%s\" must be letters, digits, '-' or '_'",
				    k->name, value);
			return;
		}
		set_text(&p->name, value);
		break;
	case KIND_TEXT:
		set_text(&p->description, value);
		break;
	case KIND_REQUIRED_TEXT:
		if (*value == '\0') {
			parse_error(ps, ps->lineno, "%s is empty", k->name);
			return;
		}
		if (id == KEY_DEVICE_MATCH)
			set_text(&p->device_match, value);
		else if (id == KEY_EXPECTED_DRIVER)
			set_text(&p->expected_driver, value);
		else
			set_text(&p->fault_log, value);
		break;
	case KIND_SECONDS:
		if (parse_number(&v, value) < 0) {
			parse_error(ps, ps->lineno, "%s \"%s\" is not a number of seconds",
				    k->name, value);
			return;
		}
		if (v <= 0) {
			parse_error(ps, ps->lineno, "%s must be positive, not %s",
				    k->name, value);
			return;
		}
		p->process_timeout_s = v;
		break;
	case KIND_FRACTION:
		if (parse_number(&v, value) < 0) {
			parse_error(ps, ps->lineno, "%s \"%s\" is not a number",
				    k->name, value);
			return;
		}
		if (v < 0 || v >= 1) {
			parse_error(ps, ps->lineno,
				    "%s must be a fraction in [0, 1) (0.05 is 5%%), not %s",
				    k->name, value);
			return;
		}
		if (id == KEY_NOISE)
			p->noise = v;
		else
			p->min_effect = v;
		break;
	case KIND_MS:
		errno = 0;
		ms = strtoul(value, &end, 10);
		if (end == value || *end != '\0' || errno != 0 || *value == '-' ||
		    ms > COOLDOWN_MAX_MS) {
			parse_error(ps, ps->lineno,
				    "%s \"%s\" is not a whole number of milliseconds from 0 to %d",
				    k->name, value, COOLDOWN_MAX_MS);
			return;
		}
		p->cooldown_ms = (unsigned)ms;
		break;
	case KIND_CPUS:
		if (host_cpus_parse(&cpus, value) < 0) {
			parse_error(ps, ps->lineno, "cpus: %s", err_last());
			return;
		}
		p->cpus = cpus;
		set_text(&p->cpus_text, value);
		break;
	case KIND_PATTERN:
		add_pattern(ps, value);
		break;
	}
}

static int handle_key(void *user, const char *section, const char *name,
		      const char *value)
{
	struct parse *ps = user;
	int other = -1;

	if (*section == '\0') {
		parse_error(ps, ps->lineno, "key \"%s\" outside a section", name);
		return 1;
	}
	if (section_index(section) < 0)
		return 1; /* reported with the section header */
	for (int i = 0; i < KEY_COUNT; i++) {
		if (strcmp(keys[i].name, name) != 0)
			continue;
		if (strcmp(keys[i].section, section) != 0) {
			other = i;
			continue;
		}
		if (ps->key_line[i] && !keys[i].repeatable) {
			parse_error(ps, ps->lineno, "duplicate key \"%s\" (first set on line %u)",
				    name, ps->key_line[i]);
			return 1;
		}
		if (!ps->key_line[i])
			ps->key_line[i] = ps->lineno;
		set_value(ps, (enum key_id)i, value);
		return 1;
	}
	if (other >= 0)
		parse_error(ps, ps->lineno, "key \"%s\" belongs in [%s], not [%s]",
			    name, keys[other].section, section);
	else
		parse_error(ps, ps->lineno, "unknown key \"%s\" in [%s]", name, section);
	return 1;
}

static void check_required(struct parse *ps)
{
	unsigned line;
	int s;

	for (int i = 0; i < KEY_COUNT; i++) {
		if (!keys[i].required || ps->key_line[i])
			continue;
		s = section_index(keys[i].section);
		line = ps->section_line[s] ? ps->section_line[s] : ps->lineno;
		if (line == 0)
			line = 1;
		parse_error(ps, line, "missing required key \"%s\" in [%s]",
			    keys[i].name, keys[i].section);
	}
}

static struct host_profile *profile_new(const char *path)
{
	struct host_profile *p = xcalloc(1, sizeof(*p));

	p->path = xstrdup(path);
	p->description = xstrdup("");
	p->cpus_text = xstrdup("");
	p->fault_log = xstrdup(HOST_DEFAULT_FAULT_LOG);
	p->process_timeout_s = HOST_DEFAULT_TIMEOUT_S;
	p->noise = HOST_DEFAULT_NOISE;
	p->min_effect = HOST_DEFAULT_MIN_EFFECT;
	p->cooldown_ms = HOST_DEFAULT_COOLDOWN_MS;
	return p;
}

int host_profile_load(struct host_profile **out, const char *path,
		      struct strbuf *errors)
{
	struct parse ps = { .path = path, .errors = errors };
	int rc;

	*out = NULL;
	ps.f = fopen(path, "re");
	if (!ps.f) {
		rc = -errno;
		strbuf_addf(errors, "%s: cannot open: %s\n", path, strerror(-rc));
		return err_set(rc, "%s: cannot open: %s", path, strerror(-rc));
	}
	ps.p = profile_new(path);

	rc = ini_parse_stream(read_line, &ps, handle_key, &ps);
	if (rc == -2)
		xalloc_die();       /* inih's only -2: an allocation failed */
	if (rc > 0 && ps.nerrors == 0)
		parse_error(&ps, (unsigned)rc, "cannot parse this line");
	if (ferror(ps.f)) {
		rc = -EIO;
		strbuf_addf(errors, "%s: read error\n", path);
		err_set(rc, "%s: read error", path);
		goto out;
	}
	check_required(&ps);
	if (ps.nerrors) {
		rc = err_set(-EINVAL, "%s: %u error%s", path, ps.nerrors,
			     ps.nerrors == 1 ? "" : "s");
		goto out;
	}
	*out = ps.p;
	ps.p = NULL;
	rc = 0;
out:
	host_profile_free(ps.p);
	free(ps.buf);
	fclose(ps.f);
	return rc;
}

void host_profile_free(struct host_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nfaults; i++) {
		regfree(&p->faults[i].re);
		free(p->faults[i].text);
	}
	free(p->faults);
	free(p->path);
	free(p->name);
	free(p->description);
	free(p->device_match);
	free(p->expected_driver);
	free(p->cpus_text);
	free(p->fault_log);
	free(p);
}

bool host_profile_fault_match(const struct host_profile *p, const char *line,
			      size_t *out_index)
{
	for (size_t i = 0; i < p->nfaults; i++) {
		if (regexec(&p->faults[i].re, line, 0, NULL, 0) == 0) {
			if (out_index)
				*out_index = i;
			return true;
		}
	}
	return false;
}
