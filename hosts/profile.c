/*
 * Host profile parsing: common/ini.c splits the file into numbered sections
 * and keys; this file knows the keys and checks each value, reporting every
 * mistake with its line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#include "hosts.h"

enum key_kind {
	KIND_NAME,
	KIND_TEXT,
	KIND_REQUIRED_TEXT,
	KIND_SECONDS,
	KIND_FRACTION,
	KIND_MS,
	KIND_PAIRS,
	KIND_CPUS,
	KIND_PATTERN,
	KIND_NODES,
	KIND_PATHS,
	KIND_GLOBS,
};

enum key_id {
	KEY_NAME,
	KEY_DESCRIPTION,
	KEY_DEVICE_MATCH,
	KEY_EXPECTED_DRIVER,
	KEY_NODES,
	KEY_PROCESS_TIMEOUT,
	KEY_CPUS,
	KEY_NOISE,
	KEY_MIN_EFFECT,
	KEY_COOLDOWN,
	KEY_PAIRS,
	KEY_MAX_PAIRS,
	KEY_TIME_BUDGET,
	KEY_FAULT_LOG,
	KEY_FAULT_PATTERN,
	KEY_BOOT_LOG_COMMAND,
	KEY_BOOT_LOG,
	KEY_GATE_PATHS,
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
	[KEY_NODES] = { "device", "nodes", KIND_NODES, false, false },
	[KEY_PROCESS_TIMEOUT] = { "timing", "process_timeout_s", KIND_SECONDS, false, false },
	[KEY_CPUS] = { "timing", "cpus", KIND_CPUS, false, false },
	[KEY_NOISE] = { "timing", "noise", KIND_FRACTION, false, false },
	[KEY_MIN_EFFECT] = { "timing", "min_effect", KIND_FRACTION, false, false },
	[KEY_COOLDOWN] = { "timing", "cooldown_ms", KIND_MS, false, false },
	[KEY_PAIRS] = { "timing", "pairs", KIND_PAIRS, false, false },
	[KEY_MAX_PAIRS] = { "timing", "max_pairs", KIND_PAIRS, false, false },
	[KEY_TIME_BUDGET] = { "timing", "time_budget_s", KIND_SECONDS, false, false },
	[KEY_FAULT_LOG] = { "faults", "fault_log", KIND_REQUIRED_TEXT, false, false },
	[KEY_FAULT_PATTERN] = { "faults", "fault_pattern", KIND_PATTERN, false, true },
	[KEY_BOOT_LOG_COMMAND] = { "faults", "boot_log_command", KIND_TEXT, false, false },
	[KEY_BOOT_LOG] = { "faults", "boot_log", KIND_PATHS, false, false },
	[KEY_GATE_PATHS] = { "gate", "paths", KIND_GLOBS, false, false },
};

static const char *const sections[] = { "host", "device", "timing", "faults", "gate" };

#define COOLDOWN_MAX_MS 600000
#define HOST_PROFILE_MAX (64 * 1024)

struct parse {
	struct config_report r;         /* the file, the line being read, its errors */
	int section;                    /* index in sections[]; -1 before one or after an unknown one */
	unsigned section_line[ARRAY_SIZE(sections)];
	unsigned key_line[KEY_COUNT];   /* where each key was first set */
	struct host_profile *p;
};

static int section_index(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++)
		if (strcmp(sections[i], name) == 0)
			return (int)i;
	return -1;
}

static void on_section(void *ctx, unsigned line, char *name, char *arg)
{
	struct parse *ps = ctx;

	ps->r.line = line;
	ps->section = -2;       /* keys after it were reported with it */
	if (!name)
		return;         /* a malformed header, reported */
	if (arg || section_index(name) < 0) {
		config_refuse(&ps->r, "unknown section [%s%s%s] (expected [host], [device], "
			      "[timing], [faults] or [gate])", name, arg ? " " : "", arg ? arg : "");
		return;
	}
	ps->section = section_index(name);
	if (ps->section_line[ps->section] == 0)
		ps->section_line[ps->section] = line;
}

static void on_error(void *ctx, unsigned line, const char *msg)
{
	struct parse *ps = ctx;

	ps->r.line = line;
	config_refuse(&ps->r, "%s", msg);
}

/* A bound on what regcomp makes of one fault pattern. glibc copies an atom
 * for each repetition ('+' once, '{m,n}' n times over), and repetitions
 * stacked or nested under one another make its closures grow out of all
 * proportion: "t" and 95 '+' took over 2 GB, "((a{255}){255}){255}"
 * would take more, 'n' and 23 '?' then 5 '+' ran for minutes, and 8
 * levels of "(...?)+" took 14 s, all before the profile was checked. The
 * real patterns are a few words (docs/hosts.md), so a repetition applies
 * to an atom, or to a group whose own repetitions apply to atoms (two
 * levels: "(\\([0-9a-f]+\\))?"), never to another repetition (POSIX leaves
 * "a*+" undefined anyway); and its copies are counted (at two levels and
 * 256 nodes regcomp takes at most about 0.1 s). A pattern of at most 256
 * bytes that repeats nothing is never over the count. */
#define PATTERN_BYTES_MAX 256
#define PATTERN_NODES_MAX 256
#define PATTERN_DEPTH_MAX 16

/* The count of a pattern's nodes so far, at each level of open groups:
 * sum, all of the group's so far; last, its last atom's or group's (what a
 * repetition copies); levels, of repetitions nested in it. */
struct pattern_count {
	size_t sum[PATTERN_DEPTH_MAX + 1], last[PATTERN_DEPTH_MAX + 1];
	int levels[PATTERN_DEPTH_MAX + 1];
	int last_levels;                /* in the last atom or group */
	bool after_repeat;
	int d;                          /* groups open */
};

static const char *const too_many = "would compile to more than 256 nodes: it repeats too much";

static const char *count_check(const struct pattern_count *pc)
{
	return pc->sum[pc->d] > PATTERN_NODES_MAX ? too_many : NULL;
}

static const char *count_atom(struct pattern_count *pc)
{
	pc->sum[pc->d] += 1;
	pc->last[pc->d] = 1;
	pc->last_levels = 0;
	pc->after_repeat = false;
	return count_check(pc);
}

static const char *count_open(struct pattern_count *pc)
{
	if (++pc->d > PATTERN_DEPTH_MAX)
		return "nests groups more than 16 deep";
	pc->sum[pc->d] = pc->last[pc->d] = 0;
	pc->levels[pc->d] = 0;
	pc->after_repeat = false;
	return NULL;
}

/* A group closed is one node to what follows, the sum of what it holds. */
static const char *count_close(struct pattern_count *pc)
{
	size_t k = pc->sum[pc->d] ? pc->sum[pc->d] : 1;

	pc->last_levels = pc->levels[pc->d];
	pc->d--;
	if (pc->last_levels > pc->levels[pc->d])
		pc->levels[pc->d] = pc->last_levels;
	pc->sum[pc->d] += k;
	pc->last[pc->d] = k;
	pc->after_repeat = false;
	return count_check(pc);
}

static void count_alternative(struct pattern_count *pc)
{
	pc->last[pc->d] = 0;
	pc->last_levels = 0;
	pc->after_repeat = false;
}

/* A repetition makes k copies of the last atom or group. */
static const char *count_repeat(struct pattern_count *pc, unsigned long k)
{
	size_t *last = &pc->last[pc->d];

	if (pc->after_repeat)
		return "repeats a repetition ('+' after '*', '{m,n}' after '?', ...)";
	if (++pc->last_levels > 2)
		return "nests repetitions more than 2 deep";
	if (pc->last_levels > pc->levels[pc->d])
		pc->levels[pc->d] = pc->last_levels;
	pc->after_repeat = true;
	if (*last > PATTERN_NODES_MAX / k)
		return too_many;
	pc->sum[pc->d] += *last * (k - 1);
	*last *= k;
	return count_check(pc);
}

/* s at '{': its copies ("{m,n}" n + 1, "{m}" or "{m,}" m + 1) and in *end
 * what follows it; 0 when it is a literal '{'; *why when a bound is over
 * the count. */
static unsigned long brace_copies(const char *s, const char **end, const char **why)
{
	char *e;
	unsigned long m = strtoul(s + 1, &e, 10), n = m;

	if (e == s + 1 || s[1] == '-' || s[1] == '+')
		return 0;
	if (*e == ',' && e[1] != '}')
		n = strtoul(e + 1, &e, 10);
	if (m > PATTERN_NODES_MAX || n > PATTERN_NODES_MAX)
		*why = too_many;
	*end = strchr(s, '}') ? strchr(s, '}') + 1 : s + strlen(s);
	return (n > m ? n : m) + 1;
}

/* s at '[': its closing ']', or NULL when there is none. One first is a
 * member, and so is every ']' of a "[:class:]", "[.x.]" or "[=x=]". */
static const char *bracket_end(const char *s)
{
	s++;
	if (*s == '^')
		s++;
	if (*s == ']')
		s++;
	while (*s && *s != ']') {
		if (*s == '[' && (s[1] == ':' || s[1] == '.' || s[1] == '=')) {
			const char *close = strchr(s + 2, s[1]);

			s = close && close[1] == ']' ? close + 1 : s + 1;
		}
		s++;
	}
	return *s ? s : NULL;
}

/* Why pattern s is refused (static text), or NULL. Nodes are counted from
 * above: an atom (a character, an escape, a bracket expression) is one, a
 * group the sum of what it holds, '+' doubles the atom before it and
 * '{m,n}' makes it n + 1 copies (m + 1 without n). */
static const char *pattern_refusal(const char *s)
{
	struct pattern_count pc = { .d = 0 };
	const char *why = NULL, *next;
	unsigned long k;

	while (*s && !why) {
		switch (*s) {
		case '(':
			why = count_open(&pc);
			break;
		case ')':
			why = pc.d ? count_close(&pc) : count_atom(&pc);
			break;
		case '|':
			count_alternative(&pc);
			break;
		case '*':
		case '?':
		case '+':
			why = count_repeat(&pc, *s == '+' ? 2 : 1);
			break;
		case '{':
			k = brace_copies(s, &next, &why);
			if (!k) {
				why = count_atom(&pc);
				break;
			}
			if (!why)
				why = count_repeat(&pc, k);
			s = next;
			continue;
		case '\\':
			if (s[1])
				s++;
			why = count_atom(&pc);
			break;
		case '[':
			s = bracket_end(s);
			if (!s)
				return NULL;  /* regcomp refuses it, and says why */
			why = count_atom(&pc);
			break;
		default:
			why = count_atom(&pc);
			break;
		}
		s++;
	}
	return why;
}

static void add_pattern(struct parse *ps, const char *key, const char *value)
{
	struct host_profile *p = ps->p;
	struct host_fault *f;
	const char *why;
	char msg[256];
	int rc;

	if (*value == '\0') {
		config_refuse(&ps->r, "'%s': expected a value", key);
		return;
	}
	if (strlen(value) > PATTERN_BYTES_MAX) {
		config_refuse(&ps->r, "'%s': expected at most %d bytes", key, PATTERN_BYTES_MAX);
		return;
	}
	if ((why = pattern_refusal(value))) {
		config_refuse(&ps->r, "'%s': '%s' %s", key, value, why);
		return;
	}
	p->faults = xrealloc(p->faults, (p->nfaults + 1) * sizeof(*p->faults));
	f = &p->faults[p->nfaults];
	rc = regcomp(&f->re, value, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &f->re, msg, sizeof(msg));
		config_refuse(&ps->r, "'%s': expected a regular expression, not '%s' (%s)", key,
			      value, msg);
		return;
	}
	f->text = xstrdup(value);
	f->line = ps->r.line;
	p->nfaults++;
}

/* A text key: its default, when it has one, gives way (on_key refuses a
 * key given twice). */
static void set_text(struct parse *ps, char **field, const char *key, const char *value)
{
	free(*field);
	*field = NULL;
	config_set_text(field, &ps->r, key, value);
}

/* A list of paths (nodes, boot_log): kept as written once each is
 * checked; an empty value is none. */
static void set_words(struct parse *ps, char **field, const char *key, const char *value,
		      const struct config_words *how)
{
	char **words = NULL;
	size_t n = 0;

	if (!*value || config_add_words(&words, &n, &ps->r, key, value, how) == 0) {
		free(*field);
		*field = xstrdup(value);
	}
	config_words_free(words, n);
}

/* The field a text key's value goes in. */
static char **text_field(struct host_profile *p, enum key_id id)
{
	switch (id) {
	case KEY_NAME:
		return &p->name;
	case KEY_DESCRIPTION:
		return &p->description;
	case KEY_DEVICE_MATCH:
		return &p->device_match;
	case KEY_EXPECTED_DRIVER:
		return &p->expected_driver;
	case KEY_BOOT_LOG_COMMAND:
		return &p->boot_log_command;
	default:
		return &p->fault_log;
	}
}

/* A [gate] pattern: a path in the repository, so not absolute, of at
 * most HOST_GATE_PATTERN_MAX bytes. */
static bool is_gate_pattern(const char *w)
{
	return *w && *w != '/' && strlen(w) <= HOST_GATE_PATTERN_MAX;
}

static void set_value(struct parse *ps, enum key_id id, const char *value)
{
	static const struct config_words gate_words = { .max = HOST_GATE_MAX,
		.is_valid = is_gate_pattern, .once = true,
		.what = "a pattern of paths in the repository (not absolute)" };
	static const struct config_words node_words = { .max = SIZE_MAX,
		.is_valid = config_path_is_device, .what = "a path under /dev/" };
	static const struct config_words path_words = { .max = HOST_BOOT_LOG_MAX,
		.is_valid = config_path_is_absolute, .what = "an absolute path", .once = true };
	const struct key *k = &keys[id];
	struct host_profile *p = ps->p;
	long ms;

	switch (k->kind) {
	case KIND_NAME:
		config_set_name(&p->name, &ps->r, k->name, value, HOST_NAME_LEN_MAX);
		break;
	case KIND_TEXT:
		free(*text_field(p, id));
		*text_field(p, id) = xstrdup(value);
		break;
	case KIND_REQUIRED_TEXT:
		set_text(ps, text_field(p, id), k->name, value);
		break;
	case KIND_SECONDS:
		config_set_seconds(id == KEY_TIME_BUDGET ? &p->time_budget_s :
				   &p->process_timeout_s, &ps->r, k->name, value,
				   CONFIG_SECONDS_MAX);
		break;
	case KIND_FRACTION:
		config_set_fraction(id == KEY_NOISE ? &p->noise : &p->min_effect, &ps->r, k->name,
				    value);
		break;
	case KIND_MS:
		if (config_set_long(&ms, &ps->r, k->name, value, 0, COOLDOWN_MAX_MS) == 0)
			p->cooldown_ms = (unsigned)ms;
		break;
	case KIND_PAIRS:
		config_set_int(id == KEY_PAIRS ? &p->pairs : &p->max_pairs, &ps->r, k->name, value,
			       1, HOST_MAX_PAIRS);
		break;
	case KIND_CPUS:
		if (cpus_parse(&p->cpus, value) < 0)
			config_refuse(&ps->r, "'%s': %s", k->name, err_last());
		break;
	case KIND_PATTERN:
		add_pattern(ps, k->name, value);
		break;
	case KIND_NODES:
		set_words(ps, &p->nodes, k->name, value, &node_words);
		break;
	case KIND_PATHS:
		set_words(ps, &p->boot_log, k->name, value, &path_words);
		break;
	case KIND_GLOBS:
		if (*value)
			config_add_words(&p->gate, &p->ngate, &ps->r, k->name, value, &gate_words);
		break;
	}
}

static void on_key(void *ctx, unsigned line, char *name, char *value)
{
	struct parse *ps = ctx;
	const char *section;
	int other = -1;

	ps->r.line = line;
	if (ps->section == -1) {
		config_refuse(&ps->r, "key '%s' outside a section", name);
		return;
	}
	if (ps->section < 0)
		return;         /* reported with the section header */
	section = sections[ps->section];
	for (int i = 0; i < KEY_COUNT; i++) {
		if (strcmp(keys[i].name, name) != 0)
			continue;
		if (strcmp(keys[i].section, section) != 0) {
			other = i;
			continue;
		}
		if (ps->key_line[i] && !keys[i].repeatable) {
			config_refuse(&ps->r, "duplicate key '%s' (first set on line %u)", name,
				      ps->key_line[i]);
			return;
		}
		if (!ps->key_line[i])
			ps->key_line[i] = line;
		set_value(ps, (enum key_id)i, value);
		return;
	}
	if (other >= 0)
		config_refuse(&ps->r, "key '%s' belongs in [%s], not [%s]", name,
			      keys[other].section, section);
	else
		config_refuse(&ps->r, "unknown key '%s' in [%s]", name, section);
}

static void check_required(struct parse *ps)
{
	unsigned line;
	int s;

	for (int i = 0; i < KEY_COUNT; i++) {
		if (!keys[i].required || ps->key_line[i])
			continue;
		s = section_index(keys[i].section);
		/* A profile without [device] is a CPU host: it names no GPU. */
		if (!strcmp(keys[i].section, "device") && !ps->section_line[s])
			continue;
		line = ps->section_line[s] ? ps->section_line[s] : ps->r.line;
		ps->r.line = line ? line : 1;
		config_refuse(&ps->r, "missing required key '%s' in [%s]", keys[i].name,
			      keys[i].section);
	}
}

static struct host_profile *profile_new(const char *path)
{
	struct host_profile *p = xcalloc(1, sizeof(*p));

	p->path = xstrdup(path);
	p->description = xstrdup("");
	p->fault_log = xstrdup(HOST_DEFAULT_FAULT_LOG);
	p->boot_log_command = xstrdup(HOST_DEFAULT_BOOT_LOG_COMMAND);
	p->boot_log = xstrdup(HOST_DEFAULT_BOOT_LOG);
	p->process_timeout_s = HOST_DEFAULT_TIMEOUT_S;
	p->noise = HOST_DEFAULT_NOISE;
	p->min_effect = HOST_DEFAULT_MIN_EFFECT;
	p->cooldown_ms = HOST_DEFAULT_COOLDOWN_MS;
	p->pairs = HOST_DEFAULT_PAIRS;
	p->max_pairs = HOST_DEFAULT_MAX_PAIRS;
	return p;
}

int host_profile_parse(struct host_profile **out, const char *path, const char *text,
		       size_t len, struct strbuf *errors)
{
	struct parse ps = { .r = { .name = path, .errors = errors }, .section = -1 };
	const struct ini_handler h = { on_section, on_key, on_error, &ps };

	*out = NULL;
	ps.p = profile_new(path);
	ini_parse(text, len, &h);
	check_required(&ps);
	if (ps.p->max_pairs < ps.p->pairs) {
		ps.r.line = ps.key_line[KEY_MAX_PAIRS] ? ps.key_line[KEY_MAX_PAIRS] :
			    ps.key_line[KEY_PAIRS];
		config_refuse(&ps.r, "max_pairs %d is under pairs %d", ps.p->max_pairs,
			      ps.p->pairs);
	}
	if (ps.r.count) {
		host_profile_free(ps.p);
		return config_report_end(&ps.r);
	}
	*out = ps.p;
	return 0;
}

int host_profile_load(struct host_profile **out, const char *path,
		      struct strbuf *errors)
{
	char *text = NULL;
	size_t len;
	int rc;

	*out = NULL;
	rc = fs_read_file(&text, &len, path, HOST_PROFILE_MAX);
	if (rc < 0) {
		strbuf_addf(errors, "%s\n", err_last());
		return rc;
	}
	rc = host_profile_parse(out, path, text, len, errors);
	free(text);
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
	free(p->nodes);
	free(p->fault_log);
	free(p->boot_log_command);
	free(p->boot_log);
	config_words_free(p->gate, p->ngate);
	free(p);
}

bool host_profile_has_device(const struct host_profile *p)
{
	return p->device_match != NULL;
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
