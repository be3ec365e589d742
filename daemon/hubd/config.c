/*
 * The hub's configuration: an INI file (common/ini.c) with one section,
 * [hub]. Every problem is reported as file:line: message, all of them,
 * then the load fails; the result is a fresh struct, so nothing is half
 * applied.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "hubd.h"
#include "hub.h"

struct parse {
	struct config_report r;      /* the file's name, the line, its errors */
	bool in_hub;                 /* the keys that follow are [hub]'s */
	bool in_github;              /* ... [github]'s */
	unsigned expect_line;
	bool in_other;               /* ... of an unknown section, reported once */
	int hubs;
	unsigned listen_line, cert_line, key_line;
	struct hub_config *c;
};

bool hub_name_is_valid(const char *s)
{
	return config_name_is_valid(s, HUB_NAME_MAX);
}

static const struct config_words host_words = { .max = HUB_HOSTS_MAX, .once = true,
	.is_valid = hub_name_is_valid,
	.what = "a host's name (1 to 63 letters, digits, '.', '_' or '-')" };
static const struct config_words proxy_words = { .max = WEB_TRUSTED_PROXIES_MAX,
	.once = true, .is_valid = web_address_is_valid,
	.what = "a numeric IPv4 or IPv6 address (127.0.0.1, ::1)" };
static const struct config_words login_words = { .max = FORGE_ALLOW_MAX };

/* A number once: 0 is "not given" (the server's default). */
static void set_connections(struct parse *ps, unsigned *dst, const char *k, const char *v)
{
	int n;

	if (*dst)
		config_refuse(&ps->r, "'%s': set twice in this section", k);
	else if (config_set_int(&n, &ps->r, k, v, WEB_CONNECTIONS_MIN, WEB_CONNECTIONS_LIMIT) == 0)
		*dst = (unsigned)n;
}

/* A connection's deadline, once: 0 is "not given". */
static void set_deadline(struct parse *ps, double *dst, const char *k, const char *v)
{
	if (*dst)
		config_refuse(&ps->r, "'%s': set twice in this section", k);
	else
		config_set_seconds(dst, &ps->r, k, v, WEB_TIMEOUT_MAX_S);
}

/* A list of logins, as allow's, the key given once. */
static void set_logins(struct parse *ps, char ***dst, size_t *n, const char *k, const char *v)
{
	if (*n)
		config_refuse(&ps->r, "'%s': set twice in this section", k);
	else
		config_add_words(dst, n, &ps->r, k, v, &login_words);
}

static void key_github(struct parse *ps, const char *k, const char *v)
{
	static const struct config_words expect_words = { .max = HUB_HOSTS_MAX, .once = true };
	struct hub_config *c = ps->c;
	int r = forge_config_key(&c->github, &ps->r, k, v);

	if (r == 1 && !strcmp(k, "expect")) {
		ps->expect_line = ps->r.line;
		config_add_words(&c->expect, &c->nexpect, &ps->r, k, v, &expect_words);
	} else if (r == 1 && !strcmp(k, "poll_s")) {
		config_set_seconds(&c->poll_s, &ps->r, k, v, CONFIG_SECONDS_MAX);
	} else if (r == 1 && !strcmp(k, "silent_after_s")) {
		config_set_seconds(&c->silent_after_s, &ps->r, k, v, CONFIG_SECONDS_MAX);
	} else if (r == 1 && !strcmp(k, "alert_issues")) {
		config_set_bool(&c->alert_issues, &ps->r, k, v);
	} else if (r == 1 && !strcmp(k, "culprit_comments")) {
		config_set_bool(&c->culprit_comments, &ps->r, k, v);
	} else if (r == 1 && !strcmp(k, "triage_allow")) {
		set_logins(ps, &c->triage_allow, &c->ntriage_allow, k, v);
	} else if (r == 1 && !strcmp(k, "forge_actions_per_hour")) {
		config_set_int(&c->forge_actions_per_hour, &ps->r, k, v, 1, HUB_FORGE_ACTIONS_MAX);
	} else if (r == 1) {
		config_refuse(&ps->r, "unknown key '%s' in [github] (api, repo, token_file, login, "
			      "allow, hub_url, expect, comment, statuses, poll_s, silent_after_s, "
			      "alert_issues, culprit_comments, triage_allow, "
			      "forge_actions_per_hour, timeout_s, "
			      "max_wait_s, retries, backoff_s)", k);
	}
}

static void on_key(void *ctx, unsigned lineno, char *k, char *v)
{
	struct parse *ps = ctx;
	struct hub_config *c = ps->c;

	ps->r.line = lineno;
	if (ps->in_github) {
		key_github(ps, k, v);
		return;
	}
	if (!ps->in_hub) {
		if (!ps->in_other)
			config_refuse(&ps->r, "'%s' is outside any section: the keys go under "
				      "[hub]", k);
		return;
	}
	if (!strcmp(k, "database")) {
		config_set_text(&c->database, &ps->r, k, v);
	} else if (!strcmp(k, "listen")) {
		config_set_text(&c->listen, &ps->r, k, v);
		ps->listen_line = lineno;
		if (web_listen_is_loopback(v) < 0)
			config_refuse(&ps->r, "'listen': expected ADDRESS:PORT with a numeric "
				      "address (0.0.0.0:8443, [::]:8443, 127.0.0.1:8080) and a "
				      "port from 0 to 65535, not '%s'", v);
	} else if (!strcmp(k, "tls_cert")) {
		config_set_text(&c->tls_cert, &ps->r, k, v);
		ps->cert_line = lineno;
	} else if (!strcmp(k, "tls_key")) {
		config_set_text(&c->tls_key, &ps->r, k, v);
		ps->key_line = lineno;
	} else if (!strcmp(k, "allow_plain_http")) {
		config_set_bool(&c->allow_plain_http, &ps->r, k, v);
	} else if (!strcmp(k, "hosts")) {
		config_add_words(&c->hosts, &c->nhosts, &ps->r, k, v, &host_words);
	} else if (!strcmp(k, "max_connections")) {
		set_connections(ps, &c->max_connections, k, v);
	} else if (!strcmp(k, "header_timeout_s")) {
		set_deadline(ps, &c->header_timeout_s, k, v);
	} else if (!strcmp(k, "body_timeout_s")) {
		set_deadline(ps, &c->body_timeout_s, k, v);
	} else if (!strcmp(k, "trusted_proxy")) {
		config_add_words(&c->trusted_proxies, &c->ntrusted_proxies, &ps->r, k, v,
				 &proxy_words);
	} else if (!strcmp(k, "default_branch")) {
		config_set_text(&c->default_branch, &ps->r, k, v);
		if (strlen(v) > 255 || strspn(v, " \t") == strlen(v))
			config_refuse(&ps->r, "'default_branch': expected a branch name (1 to 255 "
				      "bytes), not '%.255s'", v);
	} else {
		config_refuse(&ps->r, "unknown key '%s' in [hub] (database, listen, tls_cert, "
			      "tls_key, allow_plain_http, hosts, max_connections, "
			      "header_timeout_s, body_timeout_s, trusted_proxy, default_branch)",
			      k);
	}
}

static void on_section(void *ctx, unsigned lineno, char *name, char *arg)
{
	struct parse *ps = ctx;

	ps->r.line = lineno;
	ps->in_hub = false;
	ps->in_github = false;
	ps->in_other = true;
	if (!name)
		return;         /* a malformed header, reported */
	if (!strcmp(name, "github") && !arg) {
		if (ps->c->github.on)
			config_refuse(&ps->r, "a second [github] section");
		ps->c->github.on = true;
		ps->in_github = true;
		ps->in_other = false;
		return;
	}
	if (strcmp(name, "hub") || arg) {
		config_refuse(&ps->r, "unknown section [%s%s%s]: the hub's configuration is [hub] "
			      "and [github]", name, arg ? " " : "", arg ? arg : "");
		return;
	}
	if (ps->hubs++)
		config_refuse(&ps->r, "a second [hub] section");
	ps->in_hub = true;
}

static void on_error(void *ctx, unsigned lineno, const char *msg)
{
	struct parse *ps = ctx;

	ps->r.line = lineno;
	config_refuse(&ps->r, "%s", msg);
}

/* A certificate or key file, read whole, which must be PEM text. */
static void read_pem(struct parse *ps, char **out, const char *key, const char *path,
		     unsigned lineno)
{
	ps->r.line = lineno;
	config_read_pem(out, &ps->r, key, path, HUB_PEM_MAX, "-----BEGIN ");
}

/* [github] as a whole: what it needs, and expected hosts the hub accepts. */
static void check_github(struct parse *ps)
{
	struct hub_config *c = ps->c;
	struct forge_config *g = &c->github;
	size_t i;

	ps->r.line = 0;
	if (!g->on)
		return;
	if (!g->repo)
		config_refuse(&ps->r, "[github] needs 'repo' (OWNER/NAME)");
	if (!g->token_file)
		config_refuse(&ps->r, "[github] needs 'token_file' (a file holding the forge's "
			      "token alone)");
	if (!g->nallow)
		config_refuse(&ps->r, "[github] needs 'allow': the logins whose pull requests are "
			      "built at once and who may approve others' with /perfd run");
	ps->r.line = ps->expect_line;
	if (!c->nexpect)
		config_refuse(&ps->r, "[github] needs 'expect': the hosts each pull request is "
			      "measured on (m1 m1-max arc-b60 gfx1201)");
	for (i = 0; i < c->nexpect; i++)
		if (!hub_config_accepts(c, c->expect[i]))
			config_refuse(&ps->r, "'expect': expected one of [hub] hosts, whose "
				      "records the hub accepts, not '%s'", c->expect[i]);
	forge_config_finish(g);
}

/* What holds across keys, said once the file is read. */
static void check(struct parse *ps)
{
	struct hub_config *c = ps->c;
	int loopback;

	ps->r.line = 0;
	if (!c->database)
		c->database = xstrdup("perfd.db");
	if (!c->default_branch)
		c->default_branch = xstrdup(WEB_DEFAULT_BRANCH);
	if (!c->listen)
		c->listen = xstrdup(WEB_LISTEN_DEFAULT);
	if (!!c->tls_cert != !!c->tls_key) {
		ps->r.line = c->tls_cert ? ps->cert_line : ps->key_line;
		config_refuse(&ps->r, "'%s' needs '%s' too: HTTPS needs the certificate and its "
			      "key", c->tls_cert ? "tls_cert" : "tls_key",
			      c->tls_cert ? "tls_key" : "tls_cert");
		return;
	}
	if (c->tls_cert) {
		read_pem(ps, &c->cert_pem, "tls_cert", c->tls_cert, ps->cert_line);
		read_pem(ps, &c->key_pem, "tls_key", c->tls_key, ps->key_line);
		return;
	}
	loopback = web_listen_is_loopback(c->listen);
	if (loopback == 0 && !c->allow_plain_http) {
		ps->r.line = ps->listen_line;
		config_refuse(&ps->r, "'listen': %s is not a loopback address, and without "
			      "tls_cert and tls_key the hub would take tokens in plain HTTP there: "
			      "give them, or say 'allow_plain_http = yes' (behind a proxy that "
			      "ends TLS)", c->listen);
	}
}

int hub_config_load(struct hub_config **out, const char *path, struct strbuf *errors)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	*out = NULL;
	r = config_read(&text, &len, path, HUB_CONFIG_MAX);
	if (r == 0)
		r = hub_config_parse(out, path, text, len, errors);
	free(text);
	return r;
}

int hub_config_parse(struct hub_config **out, const char *path, const char *text, size_t len,
		     struct strbuf *errors)
{
	struct hub_config *c = xcalloc(1, sizeof(*c));
	struct parse ps = { .r = { .name = path, .errors = errors }, .c = c };
	const struct ini_handler h = { on_section, on_key, on_error, &ps };

	*out = NULL;
	c->path = xstrdup(path);
	c->poll_s = HUB_POLL_S;
	c->silent_after_s = HUB_SILENT_AFTER_S;
	c->forge_actions_per_hour = HUB_FORGE_ACTIONS_PER_HOUR;
	forge_config_defaults(&c->github);
	ini_parse(text, len, &h);
	check(&ps);
	check_github(&ps);
	if (ps.r.count) {
		hub_config_free(c);
		return config_report_end(&ps.r);
	}
	*out = c;
	return 0;
}

void hub_config_free(struct hub_config *c)
{
	if (!c)
		return;
	free(c->path);
	free(c->database);
	free(c->default_branch);
	free(c->listen);
	free(c->tls_cert);
	free(c->tls_key);
	free(c->cert_pem);
	if (c->key_pem) {
		/* The private key leaves no copy behind in freed memory. */
		explicit_bzero(c->key_pem, strlen(c->key_pem));
		free(c->key_pem);
	}
	config_words_free(c->hosts, c->nhosts);
	config_words_free(c->expect, c->nexpect);
	config_words_free(c->trusted_proxies, c->ntrusted_proxies);
	forge_config_release(&c->github);
	config_words_free(c->triage_allow, c->ntriage_allow);
	free(c);
}

bool hub_config_accepts(const struct hub_config *c, const char *host)
{
	size_t i;

	for (i = 0; i < c->nhosts; i++)
		if (!strcmp(c->hosts[i], host))
			return true;
	return false;
}
