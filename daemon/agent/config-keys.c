/*
 * The agent's configuration keys (docs/config.md): a table for each
 * section, [agent], [repo], [github], [hub], [sandbox], [calibration],
 * [history], [build], [runner NAME] and [case NAME], each row a key, its
 * field and bounds (common.h's struct config_key), listed in the order the
 * "unknown key" message says them. What a kind cannot say is a setter
 * here; what needs the whole file is checked in config.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-internal.h"
#include "forge.h"

const struct config_words agent_any_words = { .max = AGENT_ITEMS_MAX };

/* config_set_choice writes an int: each enum a choice sets is one. */
_Static_assert(sizeof(enum agent_pull_base) == sizeof(int) &&
	       sizeof(enum agent_sandbox_mode) == sizeof(int) &&
	       sizeof(enum agent_calibrate_when) == sizeof(int), "an enum is not an int");

/* A field of a section's struct; the count of a list's. */
#define F(type, f) .offset = offsetof(struct type, f)
#define N(type, f) .count = offsetof(struct type, f)
/* A key every [github] takes (web/forge). */
#define SHARED(k) { k, CONFIG_SUB, .sub = forge_config_keys }

static const char *const base_modes[] = { [AGENT_BASE_MERGE_BASE] = "merge-base",
	[AGENT_BASE_HEAD] = "head", NULL };

static const struct config_key agent_keys[] = {
	{ "database", CONFIG_TEXT, F(agent_config, database) },
	{ "workdir", CONFIG_TEXT, F(agent_config, workdir) },
	{ "host", CONFIG_TEXT, F(agent_config, host) },
	{ "poll_s", CONFIG_SECONDS, F(agent_config, poll_s), .hi = CONFIG_SECONDS_MAX },
	{ .key = NULL },
};

static const struct config_key repo_keys[] = {
	{ "url", CONFIG_TEXT, F(agent_config, url) },
	{ "branches", CONFIG_WORDS, F(agent_config, branches),
	  N(agent_config, nbranches), .words = &agent_any_words },
	{ "pulls", CONFIG_BOOL, F(agent_config, pulls) },
	{ "pull_base", CONFIG_TEXT, F(agent_config, pull_base) },
	{ "pull_base_mode", CONFIG_CHOICE, F(agent_config, pull_base_mode),
	  .choices = base_modes },
	{ "default_branch", CONFIG_TEXT, F(agent_config, default_branch) },
	{ "suite", CONFIG_TEXT, F(agent_config, suite_file) },
	{ "timeout_s", CONFIG_SECONDS, F(agent_config, fetch_timeout_s),
	  .hi = CONFIG_SECONDS_MAX },
	{ .key = NULL },
};

/* Over the struct forge_config: the agent's own keys are in it too. */
static const struct config_key github_keys[] = {
	SHARED("api"), SHARED("repo"), SHARED("token_file"), SHARED("login"), SHARED("allow"),
	SHARED("hub_url"), SHARED("comment"),
	{ "comment_key", CONFIG_NAME, F(forge_config, comment_key),
	  .hi = FORGE_COMMENT_KEY_MAX },
	SHARED("statuses"),
	{ "fetch_token", CONFIG_BOOL, F(forge_config, fetch_token) },
	SHARED("timeout_s"), SHARED("max_wait_s"), SHARED("retries"), SHARED("backoff_s"),
	{ .key = NULL },
};

static int set_hub_url(void *base, const struct config_key *row, struct config_report *r,
		       const char *v)
{
	int rc = config_set_text(config_key_field(base, row), r, row->key, v);

	if (!forge_url_is_http(v) ||
	    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		   "0123456789-._~:/[]%") < strlen(v)) {
		config_refuse(r, "'url': expected an https:// URL, not '%s'", v);
		return -EINVAL;
	}
	if (!strncmp(v, "http://", 7) && !forge_url_is_loopback(v)) {
		config_refuse(r, "'url': '%s' is plain HTTP to a host other than this one: the "
			      "token would cross the network in clear; use https://", v);
		return -EINVAL;
	}
	return rc;
}

/* A file of PEM certificates, read now so that --check finds one that is
 * missing or not PEM. */
static int set_ca_file(void *base, const struct config_key *row, struct config_report *r,
		       const char *v)
{
	char *text = NULL;
	int rc = config_set_text(config_key_field(base, row), r, row->key, v);

	if (config_read_pem(&text, r, row->key, v, AGENT_PEM_MAX,
			    "-----BEGIN CERTIFICATE-----") < 0)
		rc = -EINVAL;
	free(text);
	return rc;
}

static const struct config_key hub_keys[] = {
	{ "url", CONFIG_CUSTOM, F(agent_hub, url), .set = set_hub_url },
	{ "token_file", CONFIG_TEXT, F(agent_hub, token_file) },
	{ "ca_file", CONFIG_CUSTOM, F(agent_hub, ca_file), .set = set_ca_file },
	/* A hub slower than that stops the measuring. */
	{ "timeout_s", CONFIG_SECONDS, F(agent_hub, timeout_s), .hi = 600 },
	{ .key = NULL },
};

/* A limit of [sandbox]: a whole number from 1 to hi, or "none" (0). */
static int set_limit(void *base, const struct config_key *row, struct config_report *r,
		     const char *v)
{
	long *dst = config_key_field(base, row);

	if (!strcmp(v, "none")) {
		*dst = 0;
	} else if (config_parse_long(dst, v, 1, (long)row->hi) < 0) {
		config_refuse(r, "'%s': expected 'none' or a whole number from 1 to %ld, not "
			      "'%s'", row->key, (long)row->hi, v);
		return -EINVAL;
	}
	return 0;
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
	.is_valid = config_path_is_gpu_node, .what = CONFIG_GPU_NODE_WHAT };
static const struct config_words path_words = { .max = AGENT_ITEMS_MAX,
	.is_valid = config_path_is_absolute, .what = "an absolute path" };

/* Given, env replaces the default list. */
static int set_env(void *base, const struct config_key *row, struct config_report *r,
		   const char *v)
{
	struct agent_sandbox *b = base;

	config_words_free(b->env, b->nenv);
	b->env = NULL;
	b->nenv = 0;
	return config_add_words(&b->env, &b->nenv, r, row->key, v, &env_words);
}

static const char *const sandbox_modes[] = { [AGENT_SANDBOX_AUTO] = "auto",
	[AGENT_SANDBOX_ON] = "on", [AGENT_SANDBOX_OFF] = "off", NULL };

#define LIMIT(k, max) { #k, CONFIG_CUSTOM, F(agent_sandbox, limits.k), .hi = (max), \
			.set = set_limit }
#define PATHS(k, how) { #k, CONFIG_WORDS, F(agent_sandbox, k), N(agent_sandbox, n##k), \
			.words = (how) }
static const struct config_key sandbox_keys[] = {
	{ "mode", CONFIG_CHOICE, F(agent_sandbox, mode), .choices = sandbox_modes },
	{ "env", CONFIG_CUSTOM, F(agent_sandbox, env), .set = set_env },
	PATHS(nodes, &node_words),
	PATHS(ro, &path_words),
	PATHS(rw, &path_words),
	{ "user", CONFIG_TEXT, F(agent_sandbox, user) },
	{ "bwrap", CONFIG_PATH, F(agent_sandbox, bwrap) },
	LIMIT(processes, 1L << 22),
	LIMIT(memory_mb, 1L << 30),
	LIMIT(file_size_mb, 1L << 30),
	LIMIT(open_files, 1L << 20),
	LIMIT(tmp_mb, 1L << 30),
	LIMIT(step_memory_mb, 1L << 30),
	LIMIT(step_processes, 1L << 22),
	{ .key = NULL },
};

static const char *const whens[] = { [AGENT_CALIBRATE_BEFORE] = "before",
	[AGENT_CALIBRATE_AFTER] = "after", NULL };

static const struct config_key calibration_keys[] = {
	{ "runs", CONFIG_INT, F(agent_calibration, runs), .lo = 0,
	  .hi = AGENT_CALIBRATION_RUNS_MAX },
	{ "when", CONFIG_CHOICE, F(agent_calibration, when), .choices = whens },
	/* Per hour; 0 runs no idle A/A. */
	{ "idle_budget_s", CONFIG_NUMBER, F(agent_calibration, idle_budget_s), .lo = 0,
	  .hi = AGENT_IDLE_WINDOW_S, .unit = "seconds" },
	{ .key = NULL },
};

static int set_reference(void *base, const struct config_key *row, struct config_report *r,
			 const char *v)
{
	struct agent_history *h = base;

	if (!strcmp(v, "back")) {
		h->reference = AGENT_SPAN_BACK;
	} else if (!strcmp(v, "last")) {
		h->reference = AGENT_SPAN_LAST;
	} else if (!strncmp(v, "tag:", 4) && v[4]) {
		h->reference = AGENT_SPAN_TAG;
		free(h->tag_pattern);
		h->tag_pattern = xstrdup(v + 4);
	} else {
		config_refuse(r, "'reference': expected back (span_commits back), last (the last "
			      "span's head) or tag:PATTERN (the newest tag matching PATTERN, as "
			      "v*), not '%s'", v);
		return -EINVAL;
	}
	return 0;
}

static const struct config_key history_keys[] = {
	{ "branches", CONFIG_WORDS, F(agent_history, branches),
	  N(agent_history, nbranches), .words = &agent_any_words },
	{ "span_commits", CONFIG_INT, F(agent_history, span_commits), .lo = 0,
	  .hi = AGENT_SPAN_COMMITS_MAX },
	{ "span_hours", CONFIG_NUMBER, F(agent_history, span_hours), .lo = 0, .hi = 24 * 365,
	  .unit = "hours" },
	{ "reference", CONFIG_CUSTOM, F(agent_history, reference), .set = set_reference },
	{ "bisect_comparisons", CONFIG_INT, F(agent_history, bisect_comparisons), .lo = 0,
	  .hi = DB_BISECT_STEPS_MAX },
	{ "bisect_hours", CONFIG_NUMBER, F(agent_history, bisect_hours), .lo = 0,
	  .hi = 24 * 365, .unit = "hours" },
	{ .key = NULL },
};

/* [build] env: one K=V a line, as given. */
static int set_build_env(void *base, const struct config_key *row, struct config_report *r,
			 const char *v)
{
	struct agent_suite *s = base;

	if (!strchr(v, '=') || *v == '=') {
		config_refuse(r, "'env': expected K=V, not '%s'", v);
		return -EINVAL;
	}
	if (s->nbuild_env >= AGENT_ITEMS_MAX) {
		config_refuse(r, "'env': expected at most %d entries", AGENT_ITEMS_MAX);
		return -EINVAL;
	}
	s->build_env = xrealloc(s->build_env, (s->nbuild_env + 1) * sizeof(char *));
	s->build_env[s->nbuild_env++] = xstrdup(v);
	return 0;
}

static int set_hash_max_mb(void *base, const struct config_key *row, struct config_report *r,
			   const char *v)
{
	struct agent_suite *s = base;
	long mb;

	if (config_set_long(&mb, r, row->key, v, 1, AGENT_HASH_MAX_MB) < 0)
		return -EINVAL;
	s->hash.max_bytes = (int64_t)mb << 20;
	return 0;
}

static const struct config_key build_keys[] = {
	{ "command", CONFIG_TEXT, F(agent_suite, build_command) },
	{ "env", CONFIG_CUSTOM, F(agent_suite, build_env), .set = set_build_env },
	{ "artifacts", CONFIG_WORDS, F(agent_suite, artifacts),
	  N(agent_suite, nartifacts), .words = &agent_any_words },
	{ "timeout_s", CONFIG_SECONDS, F(agent_suite, build_timeout_s),
	  .hi = CONFIG_SECONDS_MAX },
	{ "toolchain", CONFIG_TEXT, F(agent_suite, toolchain) },
	{ "network", CONFIG_BOOL, F(agent_suite, build_network) },
	{ "hash_max_mb", CONFIG_CUSTOM, F(agent_suite, hash), .set = set_hash_max_mb },
	{ "hash_timeout_s", CONFIG_SECONDS, F(agent_suite, hash.max_s),
	  .hi = CONFIG_SECONDS_MAX },
	{ .key = NULL },
};

static const struct config_key runner_keys[] = {
	{ "command", CONFIG_TEXT, F(runner_contract, command) },
	{ "timeout_s", CONFIG_SECONDS, F(runner_contract, timeout_s), .hi = CONFIG_SECONDS_MAX },
	{ "chunks", CONFIG_INT, F(runner_contract, chunks), .lo = 1, .hi = 1000 },
	{ .key = NULL },
};

/* A case's command: its program, a path inside the build, then its
 * arguments. */
static int set_case_command(void *base, const struct config_key *row,
			    struct config_report *r, const char *v)
{
	struct agent_case *c = base;
	char **words = NULL;
	size_t n = 0, i;

	if (c->program) {
		config_refuse(r, "'command': set twice in this section");
		return -EINVAL;
	}
	config_add_words(&words, &n, r, row->key, v, &agent_any_words);
	if (!n)
		return -EINVAL;
	c->program = words[0];
	c->nargs = n - 1;
	c->args = xcalloc(n, sizeof(char *));
	for (i = 1; i < n; i++)
		c->args[i - 1] = words[i];
	free(words);
	if (c->program[0] == '/' || strstr(c->program, "..")) {
		config_refuse(r, "'command': the program '%s' must be a path inside the build",
			      c->program);
		return -EINVAL;
	}
	return 0;
}

static int set_metric(void *base, const struct config_key *row, struct config_report *r,
		      const char *v)
{
	int rc = config_set_text(config_key_field(base, row), r, row->key, v);

	if (!runner_metric_name_is_valid(v)) {
		config_refuse(r, "'metric': expected a metric name (a letter or '_' first, then "
			      "letters, digits, '_', '.', ':' or '-', at most 64), not '%s'", v);
		return -EINVAL;
	}
	return rc;
}

static int set_better(void *base, const struct config_key *row, struct config_report *r,
		      const char *v)
{
	if (runner_better_parse(config_key_field(base, row), v) < 0) {
		config_refuse(r, "'better': %s", err_last());
		return -EINVAL;
	}
	return 0;
}

static int set_cpus(void *base, const struct config_key *row, struct config_report *r,
		    const char *v)
{
	if (cpus_parse(config_key_field(base, row), v) < 0) {
		config_refuse(r, "'cpus': %s", err_last());
		return -EINVAL;
	}
	return 0;
}

#define SEEN(f) .seen = CONFIG_SEEN(struct agent_case, f)
static const struct config_key case_keys[] = {
	{ "command", CONFIG_CUSTOM, F(agent_case, program), .set = set_case_command },
	{ "metric", CONFIG_CUSTOM, F(agent_case, metric), .set = set_metric },
	{ "better", CONFIG_CUSTOM, F(agent_case, higher_better), .set = set_better,
	  SEEN(has_better) },
	{ "pairs", CONFIG_INT, F(agent_case, pairs), .lo = 1, .hi = HOST_MAX_PAIRS },
	{ "max_pairs", CONFIG_INT, F(agent_case, max_pairs), .lo = 1, .hi = HOST_MAX_PAIRS },
	{ "time_budget_s", CONFIG_SECONDS, F(agent_case, time_budget_s),
	  .hi = CONFIG_SECONDS_MAX },
	{ "warmup", CONFIG_INT, F(agent_case, warmup), .lo = 0, .hi = 100 },
	{ "timeout_s", CONFIG_SECONDS, F(agent_case, timeout_s), .hi = CONFIG_SECONDS_MAX },
	{ "min_effect", CONFIG_FRACTION, F(agent_case, min_effect), SEEN(has_min_effect) },
	{ "noise", CONFIG_FRACTION, F(agent_case, noise), SEEN(has_noise) },
	{ "cpus", CONFIG_CUSTOM, F(agent_case, cpus), .set = set_cpus, SEEN(has_cpus) },
	{ "cooldown_ms", CONFIG_UNSIGNED, F(agent_case, cooldown_ms), .lo = 0, .hi = 600000,
	  SEEN(has_cooldown) },
	{ .key = NULL },
};

/* A [runner NAME] or [case NAME] section's keys, its name in messages. */
static void key_named(struct parse *ps, const struct config_key *table, void *base,
		      const char *section, const char *name, const char *k, const char *v)
{
	char full[AGENT_NAME_MAX + 16];

	snprintf(full, sizeof(full), "%s %s", section, name);
	config_table_set(table, base, &ps->r, full, k, v);
}

void agent_config_key(struct parse *ps, const char *k, const char *v)
{
	struct agent_config *c = ps->c;
	struct agent_suite *s = ps->s;

	switch (ps->sec) {
	case SEC_NONE:
		config_refuse(&ps->r, "'%s' is outside any section", k);
		break;
	case SEC_AGENT:
		config_table_set(agent_keys, c, &ps->r, "agent", k, v);
		break;
	case SEC_REPO:
		config_table_set(repo_keys, c, &ps->r, "repo", k, v);
		break;
	case SEC_GITHUB:
		config_table_set(github_keys, &c->github, &ps->r, "github", k, v);
		break;
	case SEC_HUB:
		config_table_set(hub_keys, &c->hub, &ps->r, "hub", k, v);
		break;
	case SEC_CALIBRATION:
		config_table_set(calibration_keys, &c->calibration, &ps->r, "calibration", k, v);
		break;
	case SEC_SANDBOX:
		config_table_set(sandbox_keys, &c->sandbox, &ps->r, "sandbox", k, v);
		break;
	case SEC_HISTORY:
		config_table_set(history_keys, &c->history, &ps->r, "history", k, v);
		break;
	case SEC_BUILD:
		config_table_set(build_keys, s, &ps->r, "build", k, v);
		break;
	case SEC_RUNNER:
		key_named(ps, runner_keys, &s->runners[s->nrunners - 1], "runner",
			  s->runners[s->nrunners - 1].name, k, v);
		break;
	case SEC_CASE:
		key_named(ps, case_keys, &s->cases[s->ncases - 1], "case",
			  s->cases[s->ncases - 1].name, k, v);
		break;
	case SEC_OTHER:
		break;  /* the section was reported */
	}
}
