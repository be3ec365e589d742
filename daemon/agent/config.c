/*
 * The agent's configuration: an INI file (common/ini.c). Sections: [agent],
 * [repo], [github], [calibration], and the suite: [build], [runner NAME]
 * (any number), [case NAME] (any number). Every problem is
 * reported as file:line: message, all of them, then the load fails; nothing
 * is half-applied since the result is a fresh struct.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "forge.h"

enum section { SEC_NONE, SEC_AGENT, SEC_REPO, SEC_GITHUB, SEC_HUB, SEC_CALIBRATION, SEC_SANDBOX, SEC_HISTORY, SEC_BUILD,
	SEC_RUNNER, SEC_CASE, SEC_OTHER };

struct parse {
	struct config_report r;    /* the file's name, the line, its errors */
	enum section sec;
	bool suite_only;           /* a suite read from the repository */
	struct agent_config *c;    /* NULL when suite_only */
	struct agent_suite *s;
	bool seen_build;
	bool seen_calibration;
	bool seen_sandbox;
	bool seen_history;
};

/* Any words, as branches or a command's. */
static const struct config_words any_words = { .max = AGENT_ITEMS_MAX };

static void key_agent(struct parse *ps, const char *k, const char *v)
{
	struct agent_config *c = ps->c;

	if (!strcmp(k, "database"))
		config_set_text(&c->database, &ps->r, k, v);
	else if (!strcmp(k, "workdir"))
		config_set_text(&c->workdir, &ps->r, k, v);
	else if (!strcmp(k, "host"))
		config_set_text(&c->host, &ps->r, k, v);
	else if (!strcmp(k, "poll_s"))
		config_set_seconds(&c->poll_s, &ps->r, k, v, CONFIG_SECONDS_MAX);
	else
		config_refuse(&ps->r, "unknown key '%s' in [agent] (database, workdir, host, "
			      "poll_s)", k);
}

static void key_repo(struct parse *ps, const char *k, const char *v)
{
	struct agent_config *c = ps->c;

	if (!strcmp(k, "url")) {
		config_set_text(&c->url, &ps->r, k, v);
	} else if (!strcmp(k, "branches")) {
		config_add_words(&c->branches, &c->nbranches, &ps->r, k, v, &any_words);
	} else if (!strcmp(k, "pulls")) {
		config_set_bool(&c->pulls, &ps->r, k, v);
	} else if (!strcmp(k, "pull_base")) {
		config_set_text(&c->pull_base, &ps->r, k, v);
	} else if (!strcmp(k, "pull_base_mode")) {
		static const char *const modes[] = { [AGENT_BASE_MERGE_BASE] = "merge-base",
			[AGENT_BASE_HEAD] = "head", NULL };
		int mode;

		if (config_set_choice(&mode, &ps->r, k, v, modes) == 0)
			c->pull_base_mode = (enum agent_pull_base)mode;
	} else if (!strcmp(k, "default_branch")) {
		config_set_text(&c->default_branch, &ps->r, k, v);
	} else if (!strcmp(k, "suite")) {
		config_set_text(&c->suite_file, &ps->r, k, v);
	} else if (!strcmp(k, "timeout_s")) {
		config_set_seconds(&c->fetch_timeout_s, &ps->r, k, v, CONFIG_SECONDS_MAX);
	} else {
		config_refuse(&ps->r, "unknown key '%s' in [repo] (url, branches, pulls, "
			      "pull_base, pull_base_mode, default_branch, suite, timeout_s)", k);
	}
}

static void key_github(struct parse *ps, const char *k, const char *v)
{
	struct forge_config *g = &ps->c->github;
	int r = forge_config_key(g, &ps->r, k, v);

	if (r == 1 && !strcmp(k, "comment_key")) {
		config_set_name(&g->comment_key, &ps->r, k, v, FORGE_COMMENT_KEY_MAX);
	} else if (r == 1 && !strcmp(k, "fetch_token")) {
		config_set_bool(&g->fetch_token, &ps->r, k, v);
	} else if (r == 1) {
		config_refuse(&ps->r, "unknown key '%s' in [github] (api, repo, token_file, login, "
			      "allow, hub_url, comment, comment_key, statuses, fetch_token, "
			      "timeout_s, max_wait_s, retries, backoff_s)", k);
	}
}

/* A file of PEM certificates, read now so that --check finds one that is
 * missing or not PEM. */
static void check_pem(struct parse *ps, const char *k, const char *path)
{
	char *text = NULL;

	config_read_pem(&text, &ps->r, k, path, AGENT_PEM_MAX, "-----BEGIN CERTIFICATE-----");
	free(text);
}

static void key_hub(struct parse *ps, const char *k, const char *v)
{
	struct agent_hub *h = &ps->c->hub;

	if (!strcmp(k, "url")) {
		config_set_text(&h->url, &ps->r, k, v);
		if (!forge_url_is_http(v) ||
		    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			   "0123456789-._~:/[]%") < strlen(v))
			config_refuse(&ps->r, "'url': expected an https:// URL, not '%s'", v);
		else if (!strncmp(v, "http://", 7) && !forge_url_is_loopback(v))
			config_refuse(&ps->r, "'url': '%s' is plain HTTP to a host other than this "
				      "one: the token would cross the network in clear; use "
				      "https://", v);
	} else if (!strcmp(k, "token_file")) {
		config_set_text(&h->token_file, &ps->r, k, v);
	} else if (!strcmp(k, "ca_file")) {
		config_set_text(&h->ca_file, &ps->r, k, v);
		check_pem(ps, k, v);
	} else if (!strcmp(k, "timeout_s")) {
		/* A hub slower than that stops the measuring. */
		config_set_seconds(&h->timeout_s, &ps->r, k, v, 600);
	} else {
		config_refuse(&ps->r, "unknown key '%s' in [hub] (url, token_file, ca_file, "
			      "timeout_s)", k);
	}
}

/* A limit of [sandbox]: a whole number from 1 to max, or "none" (0). */
static void set_limit(struct parse *ps, long *dst, const char *k, const char *v, long max)
{
	if (!strcmp(v, "none"))
		*dst = 0;
	else if (config_parse_long(dst, v, 1, max) < 0)
		config_refuse(&ps->r, "'%s': expected 'none' or a whole number from 1 to %ld, "
			      "not '%s'", k, max, v);
}

/* A name in the environment, or a pattern of them ('*', '?'). */
static bool is_env_pattern(const char *w)
{
	return strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_*?") ==
	       strlen(w);
}

static const struct config_words env_words = { .max = AGENT_ITEMS_MAX,
	.is_valid = is_env_pattern,
	.what = "a variable name (letters, digits, '_', with '*' or '?')" };
static const struct config_words node_words = { .max = AGENT_ITEMS_MAX,
	.is_valid = config_path_is_device, .what = "a path under /dev/" };
static const struct config_words path_words = { .max = AGENT_ITEMS_MAX,
	.is_valid = config_path_is_absolute, .what = "an absolute path" };

static void key_sandbox(struct parse *ps, const char *k, const char *v)
{
	struct agent_sandbox *b = &ps->c->sandbox;
	static const char *const modes[] = { [AGENT_SANDBOX_AUTO] = "auto",
		[AGENT_SANDBOX_ON] = "on", [AGENT_SANDBOX_OFF] = "off", NULL };
	int mode;

	if (!strcmp(k, "mode")) {
		if (config_set_choice(&mode, &ps->r, k, v, modes) == 0)
			b->mode = (enum agent_sandbox_mode)mode;
	} else if (!strcmp(k, "env")) {
		/* Given, it replaces the default list. */
		config_words_free(b->env, b->nenv);
		b->env = NULL;
		b->nenv = 0;
		config_add_words(&b->env, &b->nenv, &ps->r, k, v, &env_words);
	} else if (!strcmp(k, "nodes")) {
		config_add_words(&b->nodes, &b->nnodes, &ps->r, k, v, &node_words);
	} else if (!strcmp(k, "ro")) {
		config_add_words(&b->ro, &b->nro, &ps->r, k, v, &path_words);
	} else if (!strcmp(k, "rw")) {
		config_add_words(&b->rw, &b->nrw, &ps->r, k, v, &path_words);
	} else if (!strcmp(k, "user")) {
		config_set_text(&b->user, &ps->r, k, v);
	} else if (!strcmp(k, "bwrap")) {
		config_set_path(&b->bwrap, &ps->r, k, v);
	} else if (!strcmp(k, "processes")) {
		set_limit(ps, &b->limits.processes, k, v, 1L << 22);
	} else if (!strcmp(k, "memory_mb")) {
		set_limit(ps, &b->limits.memory_mb, k, v, 1L << 30);
	} else if (!strcmp(k, "file_size_mb")) {
		set_limit(ps, &b->limits.file_size_mb, k, v, 1L << 30);
	} else if (!strcmp(k, "open_files")) {
		set_limit(ps, &b->limits.open_files, k, v, 1L << 20);
	} else if (!strcmp(k, "tmp_mb")) {
		set_limit(ps, &b->limits.tmp_mb, k, v, 1L << 30);
	} else {
		config_refuse(&ps->r, "unknown key '%s' in [sandbox] (mode, env, nodes, ro, rw, "
			      "user, bwrap, processes, memory_mb, file_size_mb, open_files, "
			      "tmp_mb)", k);
	}
}

static void key_calibration(struct parse *ps, const char *k, const char *v)
{
	struct agent_calibration *c = &ps->c->calibration;

	if (!strcmp(k, "runs")) {
		config_set_int(&c->runs, &ps->r, k, v, 0, AGENT_CALIBRATION_RUNS_MAX);
	} else if (!strcmp(k, "idle_budget_s")) {
		/* Per hour; 0 runs no idle A/A. */
		config_set_number(&c->idle_budget_s, &ps->r, k, v, 0, AGENT_IDLE_WINDOW_S,
				  "seconds");
	} else if (!strcmp(k, "when")) {
		static const char *const whens[] = { [AGENT_CALIBRATE_BEFORE] = "before",
			[AGENT_CALIBRATE_AFTER] = "after", NULL };
		int when;

		if (config_set_choice(&when, &ps->r, k, v, whens) == 0)
			c->when = (enum agent_calibrate_when)when;
	} else {
		config_refuse(&ps->r, "unknown key '%s' in [calibration] (runs, when, "
			      "idle_budget_s)", k);
	}
}

static void key_history(struct parse *ps, const char *k, const char *v)
{
	struct agent_history *h = &ps->c->history;

	if (!strcmp(k, "branches")) {
		config_add_words(&h->branches, &h->nbranches, &ps->r, k, v, &any_words);
	} else if (!strcmp(k, "span_commits")) {
		config_set_int(&h->span_commits, &ps->r, k, v, 0, AGENT_SPAN_COMMITS_MAX);
	} else if (!strcmp(k, "span_hours")) {
		config_set_number(&h->span_hours, &ps->r, k, v, 0, 24 * 365, "hours");
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
			config_refuse(&ps->r, "'reference': expected back (span_commits back), "
				      "last (the last span's head) or tag:PATTERN (the newest tag "
				      "matching PATTERN, as v*), not '%s'", v);
	} else if (!strcmp(k, "bisect_comparisons")) {
		config_set_int(&h->bisect_comparisons, &ps->r, k, v, 0, DB_BISECT_STEPS_MAX);
	} else if (!strcmp(k, "bisect_hours")) {
		config_set_number(&h->bisect_hours, &ps->r, k, v, 0, 24 * 365, "hours");
	} else {
		config_refuse(&ps->r, "unknown key '%s' in [history] (branches, span_commits, "
			      "span_hours, reference, bisect_comparisons, bisect_hours)", k);
	}
}

static void key_build(struct parse *ps, const char *k, const char *v)
{
	struct agent_suite *s = ps->s;
	long mb;

	if (!strcmp(k, "command")) {
		config_set_text(&s->build_command, &ps->r, k, v);
	} else if (!strcmp(k, "env")) {
		if (!strchr(v, '=') || *v == '=') {
			config_refuse(&ps->r, "'env': expected K=V, not '%s'", v);
			return;
		}
		if (s->nbuild_env >= AGENT_ITEMS_MAX) {
			config_refuse(&ps->r, "'env': expected at most %d entries",
				      AGENT_ITEMS_MAX);
			return;
		}
		s->build_env = xrealloc(s->build_env, (s->nbuild_env + 1) * sizeof(char *));
		s->build_env[s->nbuild_env++] = xstrdup(v);
	} else if (!strcmp(k, "artifacts")) {
		config_add_words(&s->artifacts, &s->nartifacts, &ps->r, k, v, &any_words);
	} else if (!strcmp(k, "timeout_s")) {
		config_set_seconds(&s->build_timeout_s, &ps->r, k, v, CONFIG_SECONDS_MAX);
	} else if (!strcmp(k, "toolchain")) {
		config_set_text(&s->toolchain, &ps->r, k, v);
	} else if (!strcmp(k, "network")) {
		config_set_bool(&s->build_network, &ps->r, k, v);
	} else if (!strcmp(k, "hash_max_mb")) {
		if (config_set_long(&mb, &ps->r, k, v, 1, AGENT_HASH_MAX_MB) == 0)
			s->hash.max_bytes = (int64_t)mb << 20;
	} else if (!strcmp(k, "hash_timeout_s")) {
		config_set_seconds(&s->hash.max_s, &ps->r, k, v, CONFIG_SECONDS_MAX);
	} else {
		config_refuse(&ps->r, "unknown key '%s' in [build] (command, env, artifacts, "
			      "timeout_s, toolchain, network, hash_max_mb, hash_timeout_s)", k);
	}
}

static void key_runner(struct parse *ps, const char *k, const char *v)
{
	struct runner_contract *r = &ps->s->runners[ps->s->nrunners - 1];

	if (!strcmp(k, "command"))
		config_set_text(&r->command, &ps->r, k, v);
	else if (!strcmp(k, "timeout_s"))
		config_set_seconds(&r->timeout_s, &ps->r, k, v, CONFIG_SECONDS_MAX);
	else if (!strcmp(k, "chunks"))
		config_set_int(&r->chunks, &ps->r, k, v, 1, 1000);
	else
		config_refuse(&ps->r, "unknown key '%s' in [runner %s] (command, timeout_s, "
			      "chunks)", k, r->name);
}

static void key_case(struct parse *ps, const char *k, const char *v)
{
	struct agent_case *c = &ps->s->cases[ps->s->ncases - 1];

	if (!strcmp(k, "command")) {
		char **words = NULL;
		size_t n = 0, i;

		if (c->program) {
			config_refuse(&ps->r, "'command': set twice in this section");
			return;
		}
		config_add_words(&words, &n, &ps->r, k, v, &any_words);
		if (!n)
			return;
		c->program = words[0];
		c->nargs = n - 1;
		c->args = xcalloc(n, sizeof(char *));
		for (i = 1; i < n; i++)
			c->args[i - 1] = words[i];
		free(words);
		if (c->program[0] == '/' || strstr(c->program, ".."))
			config_refuse(&ps->r, "'command': the program '%s' must be a path inside "
				      "the build", c->program);
	} else if (!strcmp(k, "metric")) {
		config_set_text(&c->metric, &ps->r, k, v);
		if (!runner_metric_name_is_valid(v))
			config_refuse(&ps->r, "'metric': expected a metric name (a letter or '_' "
				      "first, then letters, digits, '_', '.', ':' or '-', at most "
				      "64), not '%s'", v);
	} else if (!strcmp(k, "pairs")) {
		config_set_int(&c->pairs, &ps->r, k, v, 1, HOST_MAX_PAIRS);
	} else if (!strcmp(k, "max_pairs")) {
		config_set_int(&c->max_pairs, &ps->r, k, v, 1, HOST_MAX_PAIRS);
	} else if (!strcmp(k, "time_budget_s")) {
		config_set_seconds(&c->time_budget_s, &ps->r, k, v, CONFIG_SECONDS_MAX);
	} else if (!strcmp(k, "better")) {
		if (runner_better_parse(&c->higher_better, v) < 0)
			config_refuse(&ps->r, "'better': %s", err_last());
		else
			c->has_better = true;
	} else if (!strcmp(k, "warmup")) {
		config_set_int(&c->warmup, &ps->r, k, v, 0, 100);
	} else if (!strcmp(k, "timeout_s")) {
		config_set_seconds(&c->timeout_s, &ps->r, k, v, CONFIG_SECONDS_MAX);
	} else if (!strcmp(k, "min_effect")) {
		if (config_set_fraction(&c->min_effect, &ps->r, k, v) == 0)
			c->has_min_effect = true;
	} else if (!strcmp(k, "noise")) {
		if (config_set_fraction(&c->noise, &ps->r, k, v) == 0)
			c->has_noise = true;
	} else if (!strcmp(k, "cpus")) {
		if (cpus_parse(&c->cpus, v) < 0)
			config_refuse(&ps->r, "'cpus': %s", err_last());
		else
			c->has_cpus = true;
	} else if (!strcmp(k, "cooldown_ms")) {
		int ms = 0;

		config_set_int(&ms, &ps->r, k, v, 0, 600000);
		c->cooldown_ms = (unsigned)ms;
		c->has_cooldown = true;
	} else {
		config_refuse(&ps->r, "unknown key '%s' in [case %s] (command, metric, better, "
			      "pairs, max_pairs, time_budget_s, warmup, timeout_s, min_effect, "
			      "noise, cpus, cooldown_ms)", k, c->name);
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
			config_refuse(&ps->r, "a second [github] section");
		ps->c->github.on = true;
		ps->sec = SEC_GITHUB;
	} else if (!ps->suite_only && !strcmp(name, "hub") && !arg) {
		if (ps->c->hub.on)
			config_refuse(&ps->r, "a second [hub] section");
		ps->c->hub.on = true;
		ps->sec = SEC_HUB;
	} else if (!ps->suite_only && !strcmp(name, "calibration") && !arg) {
		if (ps->seen_calibration)
			config_refuse(&ps->r, "a second [calibration] section");
		ps->seen_calibration = true;
		ps->sec = SEC_CALIBRATION;
	} else if (!ps->suite_only && !strcmp(name, "history") && !arg) {
		if (ps->seen_history)
			config_refuse(&ps->r, "a second [history] section");
		ps->seen_history = true;
		ps->c->history.on = true;
		ps->sec = SEC_HISTORY;
	} else if (!ps->suite_only && !strcmp(name, "sandbox") && !arg) {
		if (ps->seen_sandbox)
			config_refuse(&ps->r, "a second [sandbox] section");
		ps->seen_sandbox = true;
		ps->sec = SEC_SANDBOX;
	} else if (!strcmp(name, "build") && !arg) {
		if (ps->seen_build)
			config_refuse(&ps->r, "a second [build] section");
		ps->seen_build = true;
		ps->sec = SEC_BUILD;
	} else if ((!strcmp(name, "runner") || !strcmp(name, "case")) && arg) {
		struct agent_suite *s = ps->s;
		bool runner = !strcmp(name, "runner");
		size_t i, n = runner ? s->nrunners : s->ncases;

		if (!config_name_is_valid(arg, AGENT_NAME_MAX)) {
			config_refuse(&ps->r, "[%s %s]: a name of letters, digits, '_', '.' and "
				      "'-' is expected", name, arg);
			return;
		}
		if (n >= AGENT_ITEMS_MAX) {
			config_refuse(&ps->r, "more than %d [%s] sections", AGENT_ITEMS_MAX, name);
			return;
		}
		for (i = 0; i < n; i++) {
			if (!strcmp(runner ? s->runners[i].name : s->cases[i].name, arg)) {
				config_refuse(&ps->r, "a second [%s %s] section", name, arg);
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
		config_refuse(&ps->r, ps->suite_only ?
			      "unknown section [%s%s%s] in a suite ([build], [runner NAME], "
			      "[case NAME])" :
			      "unknown section [%s%s%s] ([agent], [repo], [github], [hub], "
			      "[calibration], [history], [sandbox], [build], [runner NAME], "
			      "[case NAME])",
			      name, arg ? " " : "", arg ? arg : "");
	}
}

static void on_section(void *ctx, unsigned lineno, char *name, char *arg)
{
	struct parse *ps = ctx;

	ps->r.line = lineno;
	section(ps, name, arg);
}

static void on_error(void *ctx, unsigned lineno, const char *msg)
{
	struct parse *ps = ctx;

	ps->r.line = lineno;
	config_refuse(&ps->r, "%s", msg);
}

static void on_key(void *ctx, unsigned lineno, char *k, char *v)
{
	struct parse *ps = ctx;

	ps->r.line = lineno;
	switch (ps->sec) {
	case SEC_NONE:
		config_refuse(&ps->r, "'%s' is outside any section", k);
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

	ps->r.line = 0;
	if (!s->build_command)
		config_refuse(&ps->r, "[build] needs 'command'");
	if (!s->nartifacts)
		config_refuse(&ps->r, "[build] needs 'artifacts'");
	if (!s->build_timeout_s)
		s->build_timeout_s = 1800;
	if (!s->hash.max_bytes)
		s->hash.max_bytes = (int64_t)AGENT_HASH_MAX_MB_DEFAULT << 20;
	if (!s->hash.max_s)
		s->hash.max_s = AGENT_HASH_TIMEOUT_S_DEFAULT;
	for (i = 0; i < s->nrunners; i++)
		if (!s->runners[i].command)
			config_refuse(&ps->r, "[runner %s] needs 'command'", s->runners[i].name);
	for (i = 0; i < s->ncases; i++) {
		const struct agent_case *c = &s->cases[i];

		if (!c->program)
			config_refuse(&ps->r, "[case %s] needs 'command'", c->name);
		else if (s->nartifacts && !is_artifact(s, c->program))
			config_refuse(&ps->r, "[case %s]: its program '%s' is none of [build] "
				      "artifacts: only artifacts are kept and hashed for the "
				      "comparison", c->name, c->program);
		if (c->pairs && c->max_pairs && c->max_pairs < c->pairs)
			config_refuse(&ps->r, "[case %s]: max_pairs %d is under pairs %d", c->name,
				      c->max_pairs, c->pairs);
		if (c->metric && !c->has_better && runner_metric_needs_better(c->metric))
			config_refuse(&ps->r, "[case %s]: metric '%s' reads as a rate: say which "
				      "way is better with 'better = higher' (or lower)", c->name,
				      c->metric);
	}
}

int agent_suite_parse(struct agent_suite *out, const char *text, size_t len,
		      const char *name, struct strbuf *errors)
{
	struct agent_suite s;
	struct parse ps = { .r = { .name = name, .errors = errors }, .suite_only = true, .s = &s };

	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	parse_text(&ps, text, len);
	check_suite(&ps);
	if (ps.r.count) {
		agent_suite_release(&s);
		return config_report_end(&ps.r);
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
	r = config_read(&text, &len, path, AGENT_CONFIG_MAX);
	if (r == 0)
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
		config_add_words(&h->branches, &h->nbranches, &ps->r, "branches",
				 c->default_branch, &any_words);
	for (i = 0; i < h->nbranches; i++) {
		bool watched = false;

		for (k = 0; k < c->nbranches && !watched; k++)
			watched = fnmatch(c->branches[k], h->branches[i], 0) == 0;
		if (!watched)
			config_refuse(&ps->r, "[history] branch '%s' is none of [repo] branches",
				      h->branches[i]);
	}
	if (h->span_hours > 0 && !h->span_commits && h->reference != AGENT_SPAN_TAG)
		config_refuse(&ps->r, "[history] 'span_hours' needs 'span_commits': how far back a "
			      "span reaches (reference = back), or the first span (reference = "
			      "last)");
}

int agent_config_parse(struct agent_config **out, const char *path, const char *text,
		       size_t len, struct strbuf *errors)
{
	struct agent_config *c = xcalloc(1, sizeof(*c));
	struct parse ps = { .r = { .name = path, .errors = errors }, .c = c, .s = &c->suite };

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
		.file_size_mb = AGENT_SANDBOX_FILE_SIZE_MB, .open_files = AGENT_SANDBOX_OPEN_FILES,
		.tmp_mb = AGENT_SANDBOX_TMP_MB };
	parse_text(&ps, text, len);
	if (!c->sandbox.env)
		config_add_words(&c->sandbox.env, &c->sandbox.nenv, &ps.r, "env", AGENT_SANDBOX_ENV,
				 &any_words);
	ps.r.line = 0;
	if (!c->url)
		config_refuse(&ps.r, "[repo] needs 'url'");
	if (!c->nbranches && !c->pulls)
		config_refuse(&ps.r, "[repo] needs 'branches' or 'pulls = true'");
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
			config_refuse(&ps.r, "[github] needs 'repo' (OWNER/NAME)");
		if (!g->token_file)
			config_refuse(&ps.r, "[github] needs 'token_file' (a file holding the "
				      "token alone)");
		if (c->pulls && !g->nallow)
			config_refuse(&ps.r, "[github] needs 'allow' with 'pulls = true': the "
				      "logins whose pull requests are built at once and who may "
				      "approve others' with /perfd run");
		if (g->fetch_token && c->url && strncmp(c->url, "https://", 8) &&
		    strncmp(c->url, "http://", 7))
			config_refuse(&ps.r, "[github] 'fetch_token' is for an http(s) [repo] url, "
				      "not '%s'", c->url);
		forge_config_finish(g);
	}
	if (c->hub.on) {
		if (!c->hub.url)
			config_refuse(&ps.r, "[hub] needs 'url' (https://HOST:PORT)");
		if (!c->hub.token_file)
			config_refuse(&ps.r, "[hub] needs 'token_file' (a file holding this host's "
				      "token alone, from 'perfd token new HOST' at the hub)");
		while (c->hub.url && strlen(c->hub.url) > 8 &&
		       c->hub.url[strlen(c->hub.url) - 1] == '/')
			c->hub.url[strlen(c->hub.url) - 1] = '\0';
	}
	if (c->history.on)
		check_history(&ps);
	if (c->suite_file) {
		if (ps.seen_build || c->suite.nrunners || c->suite.ncases)
			config_refuse(&ps.r, "[repo] 'suite' reads the suite from the default "
				      "branch: [build], [runner] and [case] cannot be here too");
	} else {
		check_suite(&ps);
	}
	if (ps.r.count) {
		agent_config_free(c);
		return config_report_end(&ps.r);
	}
	*out = c;
	return 0;
}


void agent_suite_release(struct agent_suite *s)
{
	size_t i;

	free(s->build_command);
	config_words_free(s->build_env, s->nbuild_env);
	config_words_free(s->artifacts, s->nartifacts);
	free(s->toolchain);
	for (i = 0; i < s->nrunners; i++) {
		free(s->runners[i].name);
		free(s->runners[i].command);
	}
	free(s->runners);
	for (i = 0; i < s->ncases; i++) {
		free(s->cases[i].name);
		free(s->cases[i].program);
		config_words_free(s->cases[i].args, s->cases[i].nargs);
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
	config_words_free(c->branches, c->nbranches);
	free(c->pull_base);
	free(c->default_branch);
	free(c->suite_file);
	agent_suite_release(&c->suite);
	forge_config_release(&c->github);
	free(c->hub.url);
	free(c->hub.token_file);
	free(c->hub.ca_file);
	config_words_free(c->sandbox.env, c->sandbox.nenv);
	config_words_free(c->sandbox.nodes, c->sandbox.nnodes);
	config_words_free(c->sandbox.ro, c->sandbox.nro);
	config_words_free(c->sandbox.rw, c->sandbox.nrw);
	free(c->sandbox.user);
	free(c->sandbox.bwrap);
	config_words_free(c->history.branches, c->history.nbranches);
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
