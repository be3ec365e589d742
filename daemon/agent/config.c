/*
 * The agent's configuration: an INI file (common/ini.c) read into a fresh
 * struct. This file reads it: its sections ([agent], [repo], [github],
 * [hub], [calibration], [history], [sandbox], and the suite: [build],
 * [runner NAME] and [case NAME], any number of each), the checks that need
 * the whole file, loading and releasing; each section's keys are set in
 * config-keys.c. Every problem is reported as file:line: message, all of
 * them, then the load fails; nothing is half-applied since the result is
 * a fresh struct.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-internal.h"
#include "forge.h"

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
	agent_config_key(ps, k, v);
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
				 c->default_branch, &agent_any_words);
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
				 &agent_any_words);
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
