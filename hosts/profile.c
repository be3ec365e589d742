/*
 * Host profile parsing: common/ini.c splits the file into numbered sections
 * and keys; this file knows the keys and checks each value, reporting every
 * mistake with its line.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#include "hosts.h"

#define COOLDOWN_MAX_MS 600000
#define HOST_PROFILE_MAX (64 * 1024)
#define SECTION_KEYS_MAX 8

/* A section of a profile: its keys, which of them a profile must give, and
 * the one that may be given more than once. */
struct section {
	const char *name;
	const struct config_key *keys;     /* at most SECTION_KEYS_MAX */
	const char *const *required;       /* NULL-ended, or NULL */
	const char *repeatable;            /* or NULL */
};
#define NSECTIONS 5

struct parse {
	struct config_report r;         /* the file, the line being read, its errors */
	int section;                    /* index in sections[]; -1 before one or after an unknown one */
	unsigned section_line[NSECTIONS];
	unsigned key_line[NSECTIONS][SECTION_KEYS_MAX];   /* where each key was first set */
	struct host_profile *p;
};

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

/* A fault pattern, compiled; each one given is kept. */
static int add_pattern(void *base, const struct config_key *row, struct config_report *r,
		       const char *value)
{
	struct host_profile *p = base;
	const char *key = row->key;
	struct host_fault *f;
	const char *why;
	char msg[256];
	int rc;

	if (*value == '\0') {
		config_refuse(r, "'%s': expected a value", key);
		return -EINVAL;
	}
	if (strlen(value) > PATTERN_BYTES_MAX) {
		config_refuse(r, "'%s': expected at most %d bytes", key, PATTERN_BYTES_MAX);
		return -EINVAL;
	}
	if ((why = pattern_refusal(value))) {
		config_refuse(r, "'%s': '%s' %s", key, value, why);
		return -EINVAL;
	}
	p->faults = xrealloc(p->faults, (p->nfaults + 1) * sizeof(*p->faults));
	f = &p->faults[p->nfaults];
	rc = regcomp(&f->re, value, REG_EXTENDED | REG_ICASE | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &f->re, msg, sizeof(msg));
		config_refuse(r, "'%s': expected a regular expression, not '%s' (%s)", key,
			      value, msg);
		return -EINVAL;
	}
	f->text = xstrdup(value);
	f->line = r->line;
	p->nfaults++;
	return 0;
}

/* Text that may be empty, in place of its default. */
static int set_any_text(void *base, const struct config_key *row, struct config_report *r,
			const char *v)
{
	char **field = config_key_field(base, row);

	free(*field);
	*field = xstrdup(v);
	return 0;
}

/* Text in place of its default (on_key refuses a key given twice). */
static int set_text(void *base, const struct config_key *row, struct config_report *r,
		    const char *v)
{
	char **field = config_key_field(base, row);

	free(*field);
	*field = NULL;
	return config_set_text(field, r, row->key, v);
}

/* A list of paths (nodes, boot_log): kept as written once each is
 * checked; an empty value is none. */
static int set_words(void *base, const struct config_key *row, struct config_report *r,
		     const char *v)
{
	char **field = config_key_field(base, row);
	char **words = NULL;
	size_t n = 0;
	int rc = 0;

	if (!*v || (rc = config_add_words(&words, &n, r, row->key, v, row->words)) == 0) {
		free(*field);
		*field = xstrdup(v);
	}
	config_words_free(words, n);
	return rc;
}

/* [gate] paths: an empty value is none. */
static int set_globs(void *base, const struct config_key *row, struct config_report *r,
		     const char *v)
{
	struct host_profile *p = base;

	if (!*v)
		return 0;
	return config_add_words(&p->gate, &p->ngate, r, row->key, v, row->words);
}

static int set_cpus(void *base, const struct config_key *row, struct config_report *r,
		    const char *v)
{
	if (cpus_parse(config_key_field(base, row), v) < 0) {
		config_refuse(r, "'%s': %s", row->key, err_last());
		return -EINVAL;
	}
	return 0;
}

/* A [gate] pattern: a path in the repository, so not absolute, of at
 * most HOST_GATE_PATTERN_MAX bytes. */
static bool is_gate_pattern(const char *w)
{
	return *w && *w != '/' && strlen(w) <= HOST_GATE_PATTERN_MAX;
}

static const struct config_words gate_words = { .max = HOST_GATE_MAX,
	.is_valid = is_gate_pattern, .once = true,
	.what = "a pattern of paths in the repository (not absolute)" };
static const struct config_words node_words = { .max = SIZE_MAX,
	.is_valid = config_path_is_gpu_node, .what = CONFIG_GPU_NODE_WHAT };
static const struct config_words path_words = { .max = HOST_BOOT_LOG_MAX,
	.is_valid = config_path_is_absolute, .what = "an absolute path", .once = true };

#define F(f) .offset = offsetof(struct host_profile, f)

static const struct config_key host_keys[] = {
	{ "name", CONFIG_NAME, F(name), .hi = HOST_NAME_LEN_MAX },
	{ "description", CONFIG_CUSTOM, F(description), .set = set_any_text },
	{ .key = NULL },
};

static const struct config_key device_keys[] = {
	{ "device_match", CONFIG_CUSTOM, F(device_match), .set = set_text },
	{ "expected_driver", CONFIG_CUSTOM, F(expected_driver), .set = set_text },
	{ "nodes", CONFIG_CUSTOM, F(nodes), .words = &node_words, .set = set_words },
	{ .key = NULL },
};

static const struct config_key timing_keys[] = {
	{ "process_timeout_s", CONFIG_SECONDS, F(process_timeout_s), .hi = CONFIG_SECONDS_MAX },
	{ "cpus", CONFIG_CUSTOM, F(cpus), .set = set_cpus },
	{ "noise", CONFIG_FRACTION, F(noise) },
	{ "min_effect", CONFIG_FRACTION, F(min_effect) },
	{ "cooldown_ms", CONFIG_UNSIGNED, F(cooldown_ms), .lo = 0, .hi = COOLDOWN_MAX_MS },
	{ "pairs", CONFIG_INT, F(pairs), .lo = 1, .hi = HOST_MAX_PAIRS },
	{ "max_pairs", CONFIG_INT, F(max_pairs), .lo = 1, .hi = HOST_MAX_PAIRS },
	{ "time_budget_s", CONFIG_SECONDS, F(time_budget_s), .hi = CONFIG_SECONDS_MAX },
	{ .key = NULL },
};

static const struct config_key faults_keys[] = {
	{ "fault_log", CONFIG_CUSTOM, F(fault_log), .set = set_text },
	{ "fault_pattern", CONFIG_CUSTOM, F(faults), .set = add_pattern },
	{ "boot_log_command", CONFIG_CUSTOM, F(boot_log_command), .set = set_any_text },
	{ "boot_log", CONFIG_CUSTOM, F(boot_log), .words = &path_words, .set = set_words },
	{ .key = NULL },
};

static const struct config_key gate_keys[] = {
	{ "paths", CONFIG_CUSTOM, F(gate), .words = &gate_words, .set = set_globs },
	{ .key = NULL },
};

static const char *const host_required[] = { "name", NULL };
static const char *const device_required[] = { "device_match", "expected_driver", NULL };

static const struct section sections[NSECTIONS] = {
	{ "host", host_keys, host_required, NULL },
	{ "device", device_keys, device_required, NULL },
	{ "timing", timing_keys, NULL, NULL },
	{ "faults", faults_keys, NULL, "fault_pattern" },
	{ "gate", gate_keys, NULL, NULL },
};

static int section_index(const char *name)
{
	for (int i = 0; i < NSECTIONS; i++)
		if (strcmp(sections[i].name, name) == 0)
			return i;
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

/* The section other than ps's whose key name is, or NULL. */
static const struct section *section_of(const struct parse *ps, const char *name)
{
	for (int i = 0; i < NSECTIONS; i++)
		if (i != ps->section && config_table_find(sections[i].keys, name))
			return &sections[i];
	return NULL;
}

static void on_key(void *ctx, unsigned line, char *name, char *value)
{
	struct parse *ps = ctx;
	const struct section *sec, *other;
	const struct config_key *row;
	unsigned *first;

	ps->r.line = line;
	if (ps->section == -1) {
		config_refuse(&ps->r, "key '%s' outside a section", name);
		return;
	}
	if (ps->section < 0)
		return;         /* reported with the section header */
	sec = &sections[ps->section];
	row = config_table_find(sec->keys, name);
	if (!row) {
		other = section_of(ps, name);
		if (other)
			config_refuse(&ps->r, "key '%s' belongs in [%s], not [%s]", name,
				      other->name, sec->name);
		else
			config_refuse(&ps->r, "unknown key '%s' in [%s]", name, sec->name);
		return;
	}
	assert(row - sec->keys < SECTION_KEYS_MAX);
	first = &ps->key_line[ps->section][row - sec->keys];
	if (*first && !(sec->repeatable && !strcmp(sec->repeatable, name))) {
		config_refuse(&ps->r, "duplicate key '%s' (first set on line %u)", name, *first);
		return;
	}
	if (!*first)
		*first = line;
	config_key_set(row, ps->p, &ps->r, value);
}

/* The line key name of section s was first given on, or 0. */
static unsigned key_line(const struct parse *ps, int s, const char *name)
{
	return ps->key_line[s][config_table_find(sections[s].keys, name) - sections[s].keys];
}

static void check_required(struct parse *ps)
{
	unsigned line;

	for (int s = 0; s < NSECTIONS; s++) {
		const char *const *k = sections[s].required;

		for (; k && *k; k++) {
			if (key_line(ps, s, *k))
				continue;
			/* A profile without [device] is a CPU host: it names no GPU. */
			if (!strcmp(sections[s].name, "device") && !ps->section_line[s])
				continue;
			line = ps->section_line[s] ? ps->section_line[s] : ps->r.line;
			ps->r.line = line ? line : 1;
			config_refuse(&ps->r, "missing required key '%s' in [%s]", *k,
				      sections[s].name);
		}
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
		int timing = section_index("timing");

		ps.r.line = key_line(&ps, timing, "max_pairs") ? key_line(&ps, timing, "max_pairs") :
			    key_line(&ps, timing, "pairs");
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
