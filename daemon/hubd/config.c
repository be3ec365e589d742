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
static const struct config_words expect_words = { .max = HUB_HOSTS_MAX, .once = true };

static int set_listen(void *base, const struct config_key *row, struct config_report *r,
		      const char *v)
{
	int rc = config_set_text(config_key_field(base, row), r, row->key, v);

	if (web_listen_is_loopback(v) < 0) {
		config_refuse(r, "'listen': expected ADDRESS:PORT with a numeric address "
			      "(0.0.0.0:8443, [::]:8443, 127.0.0.1:8080) and a port from 0 to "
			      "65535, not '%s'", v);
		return -EINVAL;
	}
	return rc;
}

/* A number once: 0 is "not given" (the server's default). */
static int set_connections(void *base, const struct config_key *row, struct config_report *r,
			   const char *v)
{
	unsigned *dst = config_key_field(base, row);
	int n;

	if (*dst) {
		config_refuse(r, "'%s': set twice in this section", row->key);
		return -EINVAL;
	}
	if (config_set_int(&n, r, row->key, v, (int)row->lo, (int)row->hi) < 0)
		return -EINVAL;
	*dst = (unsigned)n;
	return 0;
}

/* A connection's deadline, once: 0 is "not given". */
static int set_deadline(void *base, const struct config_key *row, struct config_report *r,
			const char *v)
{
	double *dst = config_key_field(base, row);

	if (*dst) {
		config_refuse(r, "'%s': set twice in this section", row->key);
		return -EINVAL;
	}
	return config_set_seconds(dst, r, row->key, v, row->hi);
}

static int set_default_branch(void *base, const struct config_key *row,
			      struct config_report *r, const char *v)
{
	int rc = config_set_text(config_key_field(base, row), r, row->key, v);

	if (strlen(v) > 255 || strspn(v, " \t") == strlen(v)) {
		config_refuse(r, "'default_branch': expected a branch name (1 to 255 bytes), not "
			      "'%.255s'", v);
		return -EINVAL;
	}
	return rc;
}

/* A list of logins, as allow's, the key given once. */
static int set_logins(void *base, const struct config_key *row, struct config_report *r,
		      const char *v)
{
	size_t *n = (size_t *)((char *)base + row->count);

	if (*n) {
		config_refuse(r, "'%s': set twice in this section", row->key);
		return -EINVAL;
	}
	return config_add_words(config_key_field(base, row), n, r, row->key, v, &login_words);
}

/* A field of struct hub_config; the count of a list's. */
#define F(f) .offset = offsetof(struct hub_config, f)
#define N(f) .count = offsetof(struct hub_config, f)

static const struct config_key hub_keys[] = {
	{ "database", CONFIG_TEXT, F(database) },
	{ "listen", CONFIG_CUSTOM, F(listen), .set = set_listen },
	{ "tls_cert", CONFIG_TEXT, F(tls_cert) },
	{ "tls_key", CONFIG_TEXT, F(tls_key) },
	{ "allow_plain_http", CONFIG_BOOL, F(allow_plain_http) },
	{ "hosts", CONFIG_WORDS, F(hosts), N(nhosts), .words = &host_words },
	{ "max_connections", CONFIG_CUSTOM, F(max_connections), .lo = WEB_CONNECTIONS_MIN,
	  .hi = WEB_CONNECTIONS_LIMIT, .set = set_connections },
	{ "header_timeout_s", CONFIG_CUSTOM, F(header_timeout_s), .hi = WEB_TIMEOUT_MAX_S,
	  .set = set_deadline },
	{ "body_timeout_s", CONFIG_CUSTOM, F(body_timeout_s), .hi = WEB_TIMEOUT_MAX_S,
	  .set = set_deadline },
	{ "trusted_proxy", CONFIG_WORDS, F(trusted_proxies), N(ntrusted_proxies),
	  .words = &proxy_words },
	{ "default_branch", CONFIG_CUSTOM, F(default_branch), .set = set_default_branch },
	{ .key = NULL },
};

/* A key every [github] takes (web/forge), in c->github. */
#define SHARED(k) { k, CONFIG_SUB, F(github), .sub = forge_config_keys }

static const struct config_key github_keys[] = {
	SHARED("api"), SHARED("repo"), SHARED("token_file"), SHARED("login"), SHARED("allow"),
	SHARED("hub_url"),
	{ "expect", CONFIG_WORDS, F(expect), N(nexpect), .words = &expect_words },
	SHARED("comment"), SHARED("statuses"),
	{ "poll_s", CONFIG_SECONDS, F(poll_s), .hi = CONFIG_SECONDS_MAX },
	{ "silent_after_s", CONFIG_SECONDS, F(silent_after_s), .hi = CONFIG_SECONDS_MAX },
	{ "alert_issues", CONFIG_BOOL, F(alert_issues) },
	{ "culprit_comments", CONFIG_BOOL, F(culprit_comments) },
	{ "triage_allow", CONFIG_CUSTOM, F(triage_allow), N(ntriage_allow), .set = set_logins },
	{ "forge_actions_per_hour", CONFIG_INT, F(forge_actions_per_hour), .lo = 1,
	  .hi = HUB_FORGE_ACTIONS_MAX },
	SHARED("timeout_s"), SHARED("max_wait_s"), SHARED("retries"), SHARED("backoff_s"),
	{ .key = NULL },
};

struct parse {
	struct config_report r;      /* the file's name, the line, its errors */
	bool in_hub;                 /* the keys that follow are [hub]'s */
	bool in_github;              /* ... [github]'s */
	bool in_other;               /* ... of an unknown section, reported once */
	int hubs;
	/* Where each key was last given, for what is checked at the end. */
	unsigned hub_line[ARRAY_SIZE(hub_keys)];
	unsigned github_line[ARRAY_SIZE(github_keys)];
	struct hub_config *c;
};

/* The line key k of table was last given on, or 0. */
static unsigned line_of(const struct config_key *table, const unsigned *lines, const char *k)
{
	const struct config_key *row = config_table_find(table, k);

	return row ? lines[row - table] : 0;
}

/* Sets key k of section (table's) to v, noting its line in lines. */
static void set_key(struct parse *ps, const struct config_key *table, unsigned *lines,
		    const char *section, const char *k, const char *v)
{
	const struct config_key *row = config_table_find(table, k);

	if (row)
		lines[row - table] = ps->r.line;
	config_table_set(table, ps->c, &ps->r, section, k, v);
}

static void on_key(void *ctx, unsigned lineno, char *k, char *v)
{
	struct parse *ps = ctx;

	ps->r.line = lineno;
	if (ps->in_github)
		set_key(ps, github_keys, ps->github_line, "github", k, v);
	else if (ps->in_hub)
		set_key(ps, hub_keys, ps->hub_line, "hub", k, v);
	else if (!ps->in_other)
		config_refuse(&ps->r, "'%s' is outside any section: the keys go under [hub]", k);
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
static void read_pem(struct parse *ps, char **out, const char *key, const char *path)
{
	ps->r.line = line_of(hub_keys, ps->hub_line, key);
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
	ps->r.line = line_of(github_keys, ps->github_line, "expect");
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
		ps->r.line = line_of(hub_keys, ps->hub_line, c->tls_cert ? "tls_cert" : "tls_key");
		config_refuse(&ps->r, "'%s' needs '%s' too: HTTPS needs the certificate and its "
			      "key", c->tls_cert ? "tls_cert" : "tls_key",
			      c->tls_cert ? "tls_key" : "tls_cert");
		return;
	}
	if (c->tls_cert) {
		read_pem(ps, &c->cert_pem, "tls_cert", c->tls_cert);
		read_pem(ps, &c->key_pem, "tls_key", c->tls_key);
		return;
	}
	loopback = web_listen_is_loopback(c->listen);
	if (loopback == 0 && !c->allow_plain_http) {
		ps->r.line = line_of(hub_keys, ps->hub_line, "listen");
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
