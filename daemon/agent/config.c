/*
 * The agent's configuration: an INI file (common/ini.c). Sections: [agent],
 * [repo], [github], [calibration], and the suite: [build], [runner NAME]
 * (any number), [case NAME] (any number). Every problem is
 * reported as file:line: message, all of them, then the load fails; nothing
 * is half-applied since the result is a fresh struct.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "forge.h"

enum section { SEC_NONE, SEC_AGENT, SEC_REPO, SEC_GITHUB, SEC_HUB, SEC_CALIBRATION, SEC_SANDBOX, SEC_HISTORY, SEC_BUILD,
	SEC_RUNNER, SEC_CASE, SEC_OTHER };

struct parse {
	const char *name;          /* the file, for messages */
	unsigned lineno;
	struct strbuf *errors;
	int nerrors;
	enum section sec;
	bool suite_only;           /* a suite read from the repository */
	struct agent_config *c;    /* NULL when suite_only */
	struct agent_suite *s;
	bool seen_build;
	bool seen_calibration;
	bool seen_sandbox;
	bool seen_history;
};

static void perr(struct parse *ps, const char *fmt, ...) PRINTF_LIKE(2, 3);
static void perr(struct parse *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ini_error_add(ps->errors, ps->name, ps->lineno, fmt, ap);
	va_end(ap);
	ps->nerrors++;
}

static bool valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > AGENT_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("_.-", s[i])))
			return false;
	return true;
}

static void set_text(struct parse *ps, char **dst, const char *key, const char *v)
{
	if (*dst) {
		perr(ps, "'%s' is set twice in this section", key);
		return;
	}
	if (!*v) {
		perr(ps, "'%s' needs a value", key);
		return;
	}
	*dst = xstrdup(v);
}

static void free_strv(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void set_seconds(struct parse *ps, double *dst, const char *key, const char *v)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !isfinite(d) || d <= 0 || d > 86400 * 7)
		perr(ps, "'%s': '%s' is not a number of seconds above 0", key, v);
	else
		*dst = d;
}

static void set_int(struct parse *ps, int *dst, const char *key, const char *v, int lo, int hi)
{
	char *end;
	long n = strtol(v, &end, 10);

	if (end == v || *end || n < lo || n > hi)
		perr(ps, "'%s': '%s' is not a whole number from %d to %d", key, v, lo, hi);
	else
		*dst = (int)n;
}

/* A fraction in [0, 1), as a host profile's noise and min_effect. */
static void set_fraction(struct parse *ps, double *dst, bool *given, const char *key,
			 const char *v)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !isfinite(d) || d < 0 || d >= 1) {
		perr(ps, "'%s': '%s' is not a fraction in [0, 1) (0.05 is 5%%)", key, v);
		return;
	}
	*dst = d;
	*given = true;
}

static void set_bool(struct parse *ps, bool *dst, const char *key, const char *v)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
		*dst = true;
	else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
		*dst = false;
	else
		perr(ps, "'%s': '%s' is not true or false", key, v);
}

/* Splits v at blanks and appends each word to the list. */
static void add_words(struct parse *ps, char ***list, size_t *n, const char *key, const char *v)
{
	char *copy = xstrdup(v), *save = NULL, *w;

	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (*n >= AGENT_ITEMS_MAX) {
			perr(ps, "'%s': more than %d entries", key, AGENT_ITEMS_MAX);
			break;
		}
		*list = xrealloc(*list, (*n + 1) * sizeof(char *));
		(*list)[(*n)++] = xstrdup(w);
	}
	if (!*n)
		perr(ps, "'%s' needs a value", key);
	free(copy);
}

static void key_agent(struct parse *ps, const char *k, const char *v)
{
	struct agent_config *c = ps->c;

	if (!strcmp(k, "database"))
		set_text(ps, &c->database, k, v);
	else if (!strcmp(k, "workdir"))
		set_text(ps, &c->workdir, k, v);
	else if (!strcmp(k, "host"))
		set_text(ps, &c->host, k, v);
	else if (!strcmp(k, "poll_s"))
		set_seconds(ps, &c->poll_s, k, v);
	else
		perr(ps, "unknown key '%s' in [agent] (database, workdir, host, poll_s)", k);
}

static void key_repo(struct parse *ps, const char *k, const char *v)
{
	struct agent_config *c = ps->c;

	if (!strcmp(k, "url")) {
		set_text(ps, &c->url, k, v);
	} else if (!strcmp(k, "branches")) {
		add_words(ps, &c->branches, &c->nbranches, k, v);
	} else if (!strcmp(k, "pulls")) {
		set_bool(ps, &c->pulls, k, v);
	} else if (!strcmp(k, "pull_base")) {
		set_text(ps, &c->pull_base, k, v);
	} else if (!strcmp(k, "pull_base_mode")) {
		if (!strcmp(v, "merge-base"))
			c->pull_base_mode = AGENT_BASE_MERGE_BASE;
		else if (!strcmp(v, "head"))
			c->pull_base_mode = AGENT_BASE_HEAD;
		else
			perr(ps, "'pull_base_mode': '%s' is not merge-base or head", v);
	} else if (!strcmp(k, "default_branch")) {
		set_text(ps, &c->default_branch, k, v);
	} else if (!strcmp(k, "suite")) {
		set_text(ps, &c->suite_file, k, v);
	} else if (!strcmp(k, "timeout_s")) {
		set_seconds(ps, &c->fetch_timeout_s, k, v);
	} else {
		perr(ps, "unknown key '%s' in [repo] (url, branches, pulls, pull_base, "
		     "pull_base_mode, default_branch, suite, timeout_s)", k);
	}
}

static bool is_http_url(const char *v)
{
	return (!strncmp(v, "http://", 7) && v[7]) || (!strncmp(v, "https://", 8) && v[8]);
}

static void key_github(struct parse *ps, const char *k, const char *v)
{
	struct forge_config *g = &ps->c->github;
	struct strbuf why = STRBUF_INIT;
	int r = forge_config_key(g, k, v, &why);

	if (r == 1 && !strcmp(k, "comment_key")) {
		set_text(ps, &g->comment_key, k, v);
		if (!web_comment_key_is_valid(v))
			perr(ps, "'comment_key': '%s' is not at most 63 letters, digits, '.', '_' "
			     "or '-'", v);
	} else if (r == 1 && !strcmp(k, "fetch_token")) {
		set_bool(ps, &g->fetch_token, k, v);
	} else if (r == 1) {
		perr(ps, "unknown key '%s' in [github] (api, repo, token_file, login, allow, hub_url, "
		     "comment, comment_key, statuses, fetch_token, timeout_s, max_wait_s, retries, "
		     "backoff_s)", k);
	} else if (r < 0) {
		perr(ps, "%s", why.buf);
	}
	strbuf_release(&why);
}

/* A file of PEM certificates, read now so that --check finds one that is
 * missing or not PEM. */
static void check_pem(struct parse *ps, const char *k, const char *path)
{
	char *text = NULL;
	size_t len = 0;

	if (fs_read_file(&text, &len, path, AGENT_PEM_MAX) < 0)
		perr(ps, "'%s': %s", k, err_last());
	else if (memchr(text, '\0', len) || !strstr(text, "-----BEGIN CERTIFICATE-----"))
		perr(ps, "'%s': '%s' holds no PEM certificate (-----BEGIN CERTIFICATE-----)", k,
		     path);
	free(text);
}

static void key_hub(struct parse *ps, const char *k, const char *v)
{
	struct agent_hub *h = &ps->c->hub;

	if (!strcmp(k, "url")) {
		set_text(ps, &h->url, k, v);
		if (!is_http_url(v) || strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					      "0123456789-._~:/[]%") < strlen(v))
			perr(ps, "'url': '%s' is not an https:// URL", v);
		else if (!strncmp(v, "http://", 7) && !forge_url_is_loopback(v))
			perr(ps, "'url': '%s' is plain HTTP to a host other than this one: the token "
			     "would cross the network in clear; use https://", v);
	} else if (!strcmp(k, "token_file")) {
		set_text(ps, &h->token_file, k, v);
	} else if (!strcmp(k, "ca_file")) {
		set_text(ps, &h->ca_file, k, v);
		check_pem(ps, k, v);
	} else if (!strcmp(k, "timeout_s")) {
		set_seconds(ps, &h->timeout_s, k, v);
		if (h->timeout_s > 600)
			perr(ps, "'timeout_s': '%s' is over 600 s: a hub that slow stops the measuring", v);
	} else {
		perr(ps, "unknown key '%s' in [hub] (url, token_file, ca_file, timeout_s)", k);
	}
}

/* A limit of [sandbox]: a whole number from 1 to max, or "none" (0). */
static void set_limit(struct parse *ps, long *dst, const char *k, const char *v, long max)
{
	char *end;
	long n;

	if (!strcmp(v, "none")) {
		*dst = 0;
		return;
	}
	n = strtol(v, &end, 10);
	if (end == v || *end || n < 1 || n > max)
		perr(ps, "'%s': '%s' is not 'none' or a whole number from 1 to %ld", k, v, max);
	else
		*dst = n;
}

static void key_sandbox(struct parse *ps, const char *k, const char *v)
{
	struct agent_sandbox *b = &ps->c->sandbox;
	size_t i;

	if (!strcmp(k, "mode")) {
		if (!strcmp(v, "auto"))
			b->mode = AGENT_SANDBOX_AUTO;
		else if (!strcmp(v, "on"))
			b->mode = AGENT_SANDBOX_ON;
		else if (!strcmp(v, "off"))
			b->mode = AGENT_SANDBOX_OFF;
		else
			perr(ps, "'mode': '%s' is not auto, on or off", v);
	} else if (!strcmp(k, "env")) {
		free_strv(b->env, b->nenv);
		b->env = NULL;
		b->nenv = 0;
		add_words(ps, &b->env, &b->nenv, k, v);
		for (i = 0; i < b->nenv; i++)
			if (strspn(b->env[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
					      "0123456789_*?") < strlen(b->env[i]))
				perr(ps, "'env': '%s' is not a variable name (letters, digits, '_', "
				     "with '*' or '?')", b->env[i]);
	} else if (!strcmp(k, "nodes")) {
		add_words(ps, &b->nodes, &b->nnodes, k, v);
		for (i = 0; i < b->nnodes; i++)
			if (strncmp(b->nodes[i], "/dev/", 5) || strstr(b->nodes[i], "/../"))
				perr(ps, "'nodes': '%s' is not a path under /dev/", b->nodes[i]);
	} else if (!strcmp(k, "ro") || !strcmp(k, "rw")) {
		char ***list = !strcmp(k, "ro") ? &b->ro : &b->rw;
		size_t *n = !strcmp(k, "ro") ? &b->nro : &b->nrw;

		add_words(ps, list, n, k, v);
		for (i = 0; i < *n; i++)
			if ((*list)[i][0] != '/' || strstr((*list)[i], "/../"))
				perr(ps, "'%s': '%s' is not an absolute path", k, (*list)[i]);
	} else if (!strcmp(k, "user")) {
		set_text(ps, &b->user, k, v);
	} else if (!strcmp(k, "bwrap")) {
		set_text(ps, &b->bwrap, k, v);
		if (*v != '/')
			perr(ps, "'bwrap': '%s' is not an absolute path", v);
	} else if (!strcmp(k, "processes")) {
		set_limit(ps, &b->limits.processes, k, v, 1L << 22);
	} else if (!strcmp(k, "memory_mb")) {
		set_limit(ps, &b->limits.memory_mb, k, v, 1L << 30);
	} else if (!strcmp(k, "file_size_mb")) {
		set_limit(ps, &b->limits.file_size_mb, k, v, 1L << 30);
	} else if (!strcmp(k, "open_files")) {
		set_limit(ps, &b->limits.open_files, k, v, 1L << 20);
	} else {
		perr(ps, "unknown key '%s' in [sandbox] (mode, env, nodes, ro, rw, user, bwrap, "
		     "processes, memory_mb, file_size_mb, open_files)", k);
	}
}

static void key_calibration(struct parse *ps, const char *k, const char *v)
{
	struct agent_calibration *c = &ps->c->calibration;

	if (!strcmp(k, "runs")) {
		set_int(ps, &c->runs, k, v, 0, AGENT_CALIBRATION_RUNS_MAX);
	} else if (!strcmp(k, "idle_budget_s")) {
		char *end;
		double d = strtod(v, &end);

		if (end == v || *end || !isfinite(d) || d < 0 || d > AGENT_IDLE_WINDOW_S)
			perr(ps, "'idle_budget_s': '%s' is not a number of seconds from 0 to %g "
			     "(per hour; 0 runs no idle A/A)", v, AGENT_IDLE_WINDOW_S);
		else
			c->idle_budget_s = d;
	} else {
		perr(ps, "unknown key '%s' in [calibration] (runs, idle_budget_s)", k);
	}
}

static void set_hours(struct parse *ps, double *dst, const char *key, const char *v)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !isfinite(d) || d < 0 || d > 24 * 365)
		perr(ps, "'%s': '%s' is not a number of hours from 0 to %d", key, v, 24 * 365);
	else
		*dst = d;
}

static void key_history(struct parse *ps, const char *k, const char *v)
{
	struct agent_history *h = &ps->c->history;

	if (!strcmp(k, "branches")) {
		add_words(ps, &h->branches, &h->nbranches, k, v);
	} else if (!strcmp(k, "span_commits")) {
		set_int(ps, &h->span_commits, k, v, 0, AGENT_SPAN_COMMITS_MAX);
	} else if (!strcmp(k, "span_hours")) {
		set_hours(ps, &h->span_hours, k, v);
	} else if (!strcmp(k, "reference")) {
		if (!strcmp(v, "back"))
			h->reference = AGENT_SPAN_BACK;
		else if (!strcmp(v, "last"))
			h->reference = AGENT_SPAN_LAST;
		else if (!strncmp(v, "tag:", 4) && v[4]) {
			h->reference = AGENT_SPAN_TAG;
			free(h->tag_pattern);
			h->tag_pattern = xstrdup(v + 4);
		} else
			perr(ps, "'reference': '%s' is not back (span_commits back), last "
			     "(the last span's head) or tag:PATTERN (the newest tag matching "
			     "PATTERN, as v*)", v);
	} else if (!strcmp(k, "bisect_comparisons")) {
		set_int(ps, &h->bisect_comparisons, k, v, 0, DB_BISECT_STEPS_MAX);
	} else if (!strcmp(k, "bisect_hours")) {
		set_hours(ps, &h->bisect_hours, k, v);
	} else {
		perr(ps, "unknown key '%s' in [history] (branches, span_commits, span_hours, "
		     "reference, bisect_comparisons, bisect_hours)", k);
	}
}

static void key_build(struct parse *ps, const char *k, const char *v)
{
	struct agent_suite *s = ps->s;

	if (!strcmp(k, "command")) {
		set_text(ps, &s->build_command, k, v);
	} else if (!strcmp(k, "env")) {
		if (!strchr(v, '=') || *v == '=') {
			perr(ps, "'env': '%s' is not K=V", v);
			return;
		}
		if (s->nbuild_env >= AGENT_ITEMS_MAX) {
			perr(ps, "'env': more than %d entries", AGENT_ITEMS_MAX);
			return;
		}
		s->build_env = xrealloc(s->build_env, (s->nbuild_env + 1) * sizeof(char *));
		s->build_env[s->nbuild_env++] = xstrdup(v);
	} else if (!strcmp(k, "artifacts")) {
		add_words(ps, &s->artifacts, &s->nartifacts, k, v);
	} else if (!strcmp(k, "timeout_s")) {
		set_seconds(ps, &s->build_timeout_s, k, v);
	} else if (!strcmp(k, "toolchain")) {
		set_text(ps, &s->toolchain, k, v);
	} else if (!strcmp(k, "network")) {
		set_bool(ps, &s->build_network, k, v);
	} else {
		perr(ps, "unknown key '%s' in [build] (command, env, artifacts, timeout_s, "
		     "toolchain, network)", k);
	}
}

static void key_runner(struct parse *ps, const char *k, const char *v)
{
	struct runner_contract *r = &ps->s->runners[ps->s->nrunners - 1];

	if (!strcmp(k, "command"))
		set_text(ps, &r->command, k, v);
	else if (!strcmp(k, "timeout_s"))
		set_seconds(ps, &r->timeout_s, k, v);
	else if (!strcmp(k, "chunks"))
		set_int(ps, &r->chunks, k, v, 1, 1000);
	else
		perr(ps, "unknown key '%s' in [runner %s] (command, timeout_s, chunks)", k, r->name);
}

static void key_case(struct parse *ps, const char *k, const char *v)
{
	struct agent_case *c = &ps->s->cases[ps->s->ncases - 1];

	if (!strcmp(k, "command")) {
		char **words = NULL;
		size_t n = 0, i;

		if (c->program) {
			perr(ps, "'command' is set twice in this section");
			return;
		}
		add_words(ps, &words, &n, k, v);
		if (!n)
			return;
		c->program = words[0];
		c->nargs = n - 1;
		c->args = xcalloc(n, sizeof(char *));
		for (i = 1; i < n; i++)
			c->args[i - 1] = words[i];
		free(words);
		if (c->program[0] == '/' || strstr(c->program, ".."))
			perr(ps, "'command': the program '%s' must be a path inside the build",
			     c->program);
	} else if (!strcmp(k, "metric")) {
		set_text(ps, &c->metric, k, v);
		if (!runner_metric_name_is_valid(v))
			perr(ps, "'metric': '%s' is not a metric name (a letter or '_' first, then "
			     "letters, digits, '_', '.', ':' or '-', at most 64)", v);
	} else if (!strcmp(k, "pairs")) {
		set_int(ps, &c->pairs, k, v, 1, HOST_MAX_PAIRS);
	} else if (!strcmp(k, "max_pairs")) {
		set_int(ps, &c->max_pairs, k, v, 1, HOST_MAX_PAIRS);
	} else if (!strcmp(k, "better")) {
		if (runner_better_parse(&c->higher_better, v) < 0)
			perr(ps, "'better': %s", err_last());
		else
			c->has_better = true;
	} else if (!strcmp(k, "warmup")) {
		set_int(ps, &c->warmup, k, v, 0, 100);
	} else if (!strcmp(k, "timeout_s")) {
		set_seconds(ps, &c->timeout_s, k, v);
	} else if (!strcmp(k, "min_effect")) {
		set_fraction(ps, &c->min_effect, &c->has_min_effect, k, v);
	} else if (!strcmp(k, "noise")) {
		set_fraction(ps, &c->noise, &c->has_noise, k, v);
	} else if (!strcmp(k, "cpus")) {
		if (cpus_parse(&c->cpus, v) < 0)
			perr(ps, "'cpus': %s", err_last());
		else
			c->has_cpus = true;
	} else if (!strcmp(k, "cooldown_ms")) {
		int ms = 0;

		set_int(ps, &ms, k, v, 0, 600000);
		c->cooldown_ms = (unsigned)ms;
		c->has_cooldown = true;
	} else {
		perr(ps, "unknown key '%s' in [case %s] (command, metric, better, pairs, "
		     "max_pairs, warmup, timeout_s, min_effect, noise, cpus, cooldown_ms)", k,
		     c->name);
	}
}

static void section(struct parse *ps, const char *name, const char *arg)
{
	ps->sec = SEC_OTHER;
	if (!name)
		return;         /* a malformed header, reported */
	if (!ps->suite_only && !strcmp(name, "agent") && !arg) {
		ps->sec = SEC_AGENT;
	} else if (!ps->suite_only && !strcmp(name, "repo") && !arg) {
		ps->sec = SEC_REPO;
	} else if (!ps->suite_only && !strcmp(name, "github") && !arg) {
		if (ps->c->github.on)
			perr(ps, "a second [github] section");
		ps->c->github.on = true;
		ps->sec = SEC_GITHUB;
	} else if (!ps->suite_only && !strcmp(name, "hub") && !arg) {
		if (ps->c->hub.on)
			perr(ps, "a second [hub] section");
		ps->c->hub.on = true;
		ps->sec = SEC_HUB;
	} else if (!ps->suite_only && !strcmp(name, "calibration") && !arg) {
		if (ps->seen_calibration)
			perr(ps, "a second [calibration] section");
		ps->seen_calibration = true;
		ps->sec = SEC_CALIBRATION;
	} else if (!ps->suite_only && !strcmp(name, "history") && !arg) {
		if (ps->seen_history)
			perr(ps, "a second [history] section");
		ps->seen_history = true;
		ps->c->history.on = true;
		ps->sec = SEC_HISTORY;
	} else if (!ps->suite_only && !strcmp(name, "sandbox") && !arg) {
		if (ps->seen_sandbox)
			perr(ps, "a second [sandbox] section");
		ps->seen_sandbox = true;
		ps->sec = SEC_SANDBOX;
	} else if (!strcmp(name, "build") && !arg) {
		if (ps->seen_build)
			perr(ps, "a second [build] section");
		ps->seen_build = true;
		ps->sec = SEC_BUILD;
	} else if ((!strcmp(name, "runner") || !strcmp(name, "case")) && arg) {
		struct agent_suite *s = ps->s;
		bool runner = !strcmp(name, "runner");
		size_t i, n = runner ? s->nrunners : s->ncases;

		if (!valid_name(arg)) {
			perr(ps, "[%s %s]: a name of letters, digits, '_', '.' and '-' is expected",
			     name, arg);
			return;
		}
		if (n >= AGENT_ITEMS_MAX) {
			perr(ps, "more than %d [%s] sections", AGENT_ITEMS_MAX, name);
			return;
		}
		for (i = 0; i < n; i++) {
			if (!strcmp(runner ? s->runners[i].name : s->cases[i].name, arg)) {
				perr(ps, "a second [%s %s] section", name, arg);
				return;
			}
		}
		if (runner) {
			s->runners = xrealloc(s->runners, (n + 1) * sizeof(*s->runners));
			memset(&s->runners[n], 0, sizeof(s->runners[n]));
			s->runners[n].name = xstrdup(arg);
			s->runners[n].timeout_s = 600;
			s->runners[n].chunks = 1;
			s->nrunners++;
			ps->sec = SEC_RUNNER;
		} else {
			s->cases = xrealloc(s->cases, (n + 1) * sizeof(*s->cases));
			memset(&s->cases[n], 0, sizeof(s->cases[n]));
			s->cases[n].name = xstrdup(arg);
			s->cases[n].warmup = 1;
			s->cases[n].timeout_s = 600;
			s->ncases++;
			ps->sec = SEC_CASE;
		}
	} else {
		perr(ps, ps->suite_only ?
		     "unknown section [%s%s%s] in a suite ([build], [runner NAME], [case NAME])" :
		     "unknown section [%s%s%s] ([agent], [repo], [github], [hub], [calibration], [history], "
		     "[sandbox], "
		     "[build],"
		     " [runner NAME], [case NAME])",
		     name, arg ? " " : "", arg ? arg : "");
	}
}

static void on_section(void *ctx, unsigned lineno, char *name, char *arg)
{
	struct parse *ps = ctx;

	ps->lineno = lineno;
	section(ps, name, arg);
}

static void on_error(void *ctx, unsigned lineno, const char *msg)
{
	struct parse *ps = ctx;

	ps->lineno = lineno;
	perr(ps, "%s", msg);
}

static void on_key(void *ctx, unsigned lineno, char *k, char *v)
{
	struct parse *ps = ctx;

	ps->lineno = lineno;
	switch (ps->sec) {
	case SEC_NONE:
		perr(ps, "'%s' is outside any section", k);
		break;
	case SEC_AGENT:
		key_agent(ps, k, v);
		break;
	case SEC_REPO:
		key_repo(ps, k, v);
		break;
	case SEC_GITHUB:
		key_github(ps, k, v);
		break;
	case SEC_HUB:
		key_hub(ps, k, v);
		break;
	case SEC_CALIBRATION:
		key_calibration(ps, k, v);
		break;
	case SEC_SANDBOX:
		key_sandbox(ps, k, v);
		break;
	case SEC_HISTORY:
		key_history(ps, k, v);
		break;
	case SEC_BUILD:
		key_build(ps, k, v);
		break;
	case SEC_RUNNER:
		key_runner(ps, k, v);
		break;
	case SEC_CASE:
		key_case(ps, k, v);
		break;
	case SEC_OTHER:
		break;  /* the section was reported */
	}
}

static void parse_text(struct parse *ps, const char *text, size_t len)
{
	const struct ini_handler h = { on_section, on_key, on_error, ps };

	ini_parse(text, len, &h);
}

/* What a suite needs, said once at its end (line 0 names the file). */
/* Whether program (a path in the build, "./" before it or not) is one that
 * an artifact pattern names: only artifacts are kept and hashed, so a
 * case's program must be one. */
static bool is_artifact(const struct agent_suite *s, const char *program)
{
	size_t i;

	if (!strncmp(program, "./", 2))
		program += 2;
	for (i = 0; i < s->nartifacts; i++) {
		const char *pat = s->artifacts[i];

		if (!strncmp(pat, "./", 2))
			pat += 2;
		if (fnmatch(pat, program, FNM_PATHNAME | FNM_PERIOD) == 0)
			return true;
	}
	return false;
}

static void check_suite(struct parse *ps)
{
	struct agent_suite *s = ps->s;
	size_t i;

	ps->lineno = 0;
	if (!s->build_command)
		perr(ps, "[build] needs 'command'");
	if (!s->nartifacts)
		perr(ps, "[build] needs 'artifacts'");
	if (!s->build_timeout_s)
		s->build_timeout_s = 1800;
	for (i = 0; i < s->nrunners; i++)
		if (!s->runners[i].command)
			perr(ps, "[runner %s] needs 'command'", s->runners[i].name);
	for (i = 0; i < s->ncases; i++) {
		const struct agent_case *c = &s->cases[i];

		if (!c->program)
			perr(ps, "[case %s] needs 'command'", c->name);
		else if (s->nartifacts && !is_artifact(s, c->program))
			perr(ps, "[case %s]: its program '%s' is none of [build] artifacts: only "
			     "artifacts are kept and hashed for the comparison", c->name,
			     c->program);
		if (c->pairs && c->max_pairs && c->max_pairs < c->pairs)
			perr(ps, "[case %s]: max_pairs %d is under pairs %d", c->name,
			     c->max_pairs, c->pairs);
		if (c->metric && !c->has_better && runner_metric_is_rate(c->metric))
			perr(ps, "[case %s]: metric '%s' reads as a rate: say which way is "
			     "better with 'better = higher' (or lower)", c->name, c->metric);
	}
}

int agent_suite_parse(struct agent_suite *out, const char *text, size_t len,
		      const char *name, struct strbuf *errors)
{
	struct agent_suite s;
	struct parse ps = { .name = name, .errors = errors, .suite_only = true, .s = &s };

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	parse_text(&ps, text, len);
	check_suite(&ps);
	if (ps.nerrors) {
		agent_suite_release(&s);
		return err_set(-EINVAL, "%d error%s in '%s'", ps.nerrors,
			       ps.nerrors == 1 ? "" : "s", name);
	}
	*out = s;
	return 0;
}

int agent_config_load(struct agent_config **out, const char *path, struct strbuf *errors)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	*out = NULL;
	r = fs_read_file(&text, &len, path, AGENT_CONFIG_MAX);
	if (r < 0)
		return err_set(r, "configuration %s", err_last());
	r = agent_config_parse(out, path, text, len, errors);
	free(text);
	return r;
}

/* [history]'s branches are watched ones, and its spans can be made. */
static void check_history(struct parse *ps)
{
	struct agent_config *c = ps->c;
	struct agent_history *h = &c->history;
	size_t i, k;

	if (!h->branches)
		add_words(ps, &h->branches, &h->nbranches, "branches", c->default_branch);
	for (i = 0; i < h->nbranches; i++) {
		bool watched = false;

		for (k = 0; k < c->nbranches && !watched; k++)
			watched = fnmatch(c->branches[k], h->branches[i], 0) == 0;
		if (!watched)
			perr(ps, "[history] branch '%s' is none of [repo] branches", h->branches[i]);
	}
	if (h->span_hours > 0 && !h->span_commits && h->reference != AGENT_SPAN_TAG)
		perr(ps, "[history] 'span_hours' needs 'span_commits': how far back a span "
		     "reaches (reference = back), or the first span (reference = last)");
}

int agent_config_parse(struct agent_config **out, const char *path, const char *text,
		       size_t len, struct strbuf *errors)
{
	struct agent_config *c = xcalloc(1, sizeof(*c));
	struct parse ps = { .name = path, .errors = errors, .c = c, .s = &c->suite };

	*out = NULL;
	c->path = xstrdup(path);
	c->poll_s = 60;
	c->fetch_timeout_s = AGENT_FETCH_TIMEOUT_S;
	c->pull_base_mode = AGENT_BASE_MERGE_BASE;
	forge_config_defaults(&c->github);
	c->calibration.runs = AGENT_CALIBRATION_RUNS;
	c->hub.timeout_s = AGENT_PUSH_TIMEOUT_S;
	c->calibration.idle_budget_s = AGENT_IDLE_BUDGET_S;
	c->history.bisect_comparisons = AGENT_BISECT_COMPARISONS;
	c->history.bisect_hours = AGENT_BISECT_HOURS;
	c->sandbox.limits = (struct sandbox_limits){ .processes = AGENT_SANDBOX_PROCESSES,
		.file_size_mb = AGENT_SANDBOX_FILE_SIZE_MB, .open_files = AGENT_SANDBOX_OPEN_FILES };
	parse_text(&ps, text, len);
	if (!c->sandbox.env)
		add_words(&ps, &c->sandbox.env, &c->sandbox.nenv, "env", AGENT_SANDBOX_ENV);
	ps.lineno = 0;
	if (!c->url)
		perr(&ps, "[repo] needs 'url'");
	if (!c->nbranches && !c->pulls)
		perr(&ps, "[repo] needs 'branches' or 'pulls = true'");
	if (!c->default_branch)
		c->default_branch = xstrdup("main");
	if (!c->pull_base)
		c->pull_base = xstrdup(c->default_branch);
	if (!c->database)
		c->database = xstrdup("perfd.db");
	if (!c->workdir)
		c->workdir = xstrdup("perfd-work");
	if (c->github.on) {
		struct forge_config *g = &c->github;

		if (!g->repo)
			perr(&ps, "[github] needs 'repo' (OWNER/NAME)");
		if (!g->token_file)
			perr(&ps, "[github] needs 'token_file' (a file holding the token alone)");
		if (c->pulls && !g->nallow)
			perr(&ps, "[github] needs 'allow' with 'pulls = true': the logins whose "
			     "pull requests are built at once and who may approve others' with "
			     "/perfd run");
		if (g->fetch_token && c->url && strncmp(c->url, "https://", 8) &&
		    strncmp(c->url, "http://", 7))
			perr(&ps, "[github] 'fetch_token' is for an http(s) [repo] url, not '%s'",
			     c->url);
		forge_config_finish(g);
	}
	if (c->hub.on) {
		if (!c->hub.url)
			perr(&ps, "[hub] needs 'url' (https://HOST:PORT)");
		if (!c->hub.token_file)
			perr(&ps, "[hub] needs 'token_file' (a file holding this host's token alone, "
			     "from 'perfd token new HOST' at the hub)");
		while (c->hub.url && strlen(c->hub.url) > 8 &&
		       c->hub.url[strlen(c->hub.url) - 1] == '/')
			c->hub.url[strlen(c->hub.url) - 1] = '\0';
	}
	if (c->history.on)
		check_history(&ps);
	if (c->suite_file) {
		if (ps.seen_build || c->suite.nrunners || c->suite.ncases)
			perr(&ps, "[repo] 'suite' reads the suite from the default branch: "
			     "[build], [runner] and [case] cannot be here too");
	} else {
		check_suite(&ps);
	}
	if (ps.nerrors) {
		agent_config_free(c);
		return err_set(-EINVAL, "%d error%s in '%s'", ps.nerrors,
			       ps.nerrors == 1 ? "" : "s", path);
	}
	*out = c;
	return 0;
}


void agent_suite_release(struct agent_suite *s)
{
	size_t i;

	free(s->build_command);
	free_strv(s->build_env, s->nbuild_env);
	free_strv(s->artifacts, s->nartifacts);
	free(s->toolchain);
	for (i = 0; i < s->nrunners; i++) {
		free(s->runners[i].name);
		free(s->runners[i].command);
	}
	free(s->runners);
	for (i = 0; i < s->ncases; i++) {
		free(s->cases[i].name);
		free(s->cases[i].program);
		free_strv(s->cases[i].args, s->cases[i].nargs);
		free(s->cases[i].metric);
	}
	free(s->cases);
	memset(s, 0, sizeof(*s));
}

void agent_config_free(struct agent_config *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->database);
	free(c->workdir);
	free(c->host);
	free(c->url);
	free_strv(c->branches, c->nbranches);
	free(c->pull_base);
	free(c->default_branch);
	free(c->suite_file);
	agent_suite_release(&c->suite);
	forge_config_release(&c->github);
	free(c->hub.url);
	free(c->hub.token_file);
	free(c->hub.ca_file);
	free_strv(c->sandbox.env, c->sandbox.nenv);
	free_strv(c->sandbox.nodes, c->sandbox.nnodes);
	free_strv(c->sandbox.ro, c->sandbox.nro);
	free_strv(c->sandbox.rw, c->sandbox.nrw);
	free(c->sandbox.user);
	free(c->sandbox.bwrap);
	free_strv(c->history.branches, c->history.nbranches);
	free(c->history.tag_pattern);
	free(c);
}

int agent_suite_recipe_hash(char out[65], const struct agent_suite *s)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;
	int r;

	/* Everything that decides what a build produces, and nothing else:
	 * runners and cases do not change the build. */
	strbuf_addf(&sb, "command\n%s\n", s->build_command ? s->build_command : "");
	for (i = 0; i < s->nbuild_env; i++)
		strbuf_addf(&sb, "env\n%s\n", s->build_env[i]);
	for (i = 0; i < s->nartifacts; i++)
		strbuf_addf(&sb, "artifact\n%s\n", s->artifacts[i]);
	if (s->build_network)
		strbuf_adds(&sb, "network\n");
	r = sha256_hex(out, sb.buf, sb.len);
	strbuf_release(&sb);
	return r < 0 ? err_set(r, "the recipe's hash: %s", err_last()) : 0;
}
