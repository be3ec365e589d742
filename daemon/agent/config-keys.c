/*
 * The agent's configuration keys (docs/config.md): a setter for each
 * section's keys, [agent], [repo], [github], [hub], [sandbox],
 * [calibration], [history], [build], [runner NAME] and [case NAME], each
 * checking its value's form and bounds and naming the keys it knows when
 * it meets another. What needs the whole file is checked in config.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-internal.h"
#include "forge.h"

const struct config_words agent_any_words = { .max = AGENT_ITEMS_MAX };

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
		config_add_words(&c->branches, &c->nbranches, &ps->r, k, v, &agent_any_words);
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
		config_add_words(&h->branches, &h->nbranches, &ps->r, k, v, &agent_any_words);
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
		config_add_words(&s->artifacts, &s->nartifacts, &ps->r, k, v, &agent_any_words);
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
		config_add_words(&words, &n, &ps->r, k, v, &agent_any_words);
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

void agent_config_key(struct parse *ps, const char *k, const char *v)
{
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
