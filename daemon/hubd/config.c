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
	const char *name;            /* the file, for messages */
	unsigned lineno;
	struct strbuf *errors;
	int nerrors;
	bool in_hub;                 /* the keys that follow are [hub]'s */
	bool in_github;              /* ... [github]'s */
	unsigned expect_line;
	bool in_other;               /* ... of an unknown section, reported once */
	int hubs;
	unsigned listen_line, cert_line, key_line;
	struct hub_config *c;
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

bool hub_name_is_valid(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= HUB_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static void set_text(struct parse *ps, char **dst, const char *key, const char *v)
{
	if (*dst) {
		perr(ps, "'%s' is set twice", key);
		return;
	}
	if (!*v) {
		perr(ps, "'%s' needs a value", key);
		return;
	}
	*dst = xstrdup(v);
}

static void add_hosts(struct parse *ps, const char *v)
{
	struct hub_config *c = ps->c;
	char *copy = xstrdup(v), *save = NULL, *w;
	size_t i;

	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (!hub_name_is_valid(w)) {
			perr(ps, "'hosts': '%s' is not a host's name (1 to 63 letters, digits, '.', "
			     "'_' or '-')", w);
			continue;
		}
		for (i = 0; i < c->nhosts && strcmp(c->hosts[i], w); i++)
			;
		if (i < c->nhosts) {
			perr(ps, "'hosts': '%s' is named twice", w);
			continue;
		}
		if (c->nhosts >= HUB_HOSTS_MAX) {
			perr(ps, "'hosts': more than %d hosts", HUB_HOSTS_MAX);
			break;
		}
		c->hosts = xrealloc(c->hosts, (c->nhosts + 1) * sizeof(char *));
		c->hosts[c->nhosts++] = xstrdup(w);
	}
	free(copy);
}

/* trusted_proxy: numeric addresses, on one line or several. */
static void add_proxies(struct parse *ps, const char *v)
{
	struct hub_config *c = ps->c;
	char *copy = xstrdup(v), *save = NULL, *w;
	size_t i;

	if (!*v)
		perr(ps, "'trusted_proxy' needs a value: the proxy's numeric address");
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (!web_address_is_valid(w)) {
			perr(ps, "'trusted_proxy': '%s' is not a numeric IPv4 or IPv6 address "
			     "(127.0.0.1, ::1)", w);
			continue;
		}
		for (i = 0; i < c->ntrusted_proxies && strcmp(c->trusted_proxies[i], w); i++)
			;
		if (i < c->ntrusted_proxies) {
			perr(ps, "'trusted_proxy': '%s' is named twice", w);
			continue;
		}
		if (c->ntrusted_proxies >= WEB_TRUSTED_PROXIES_MAX) {
			perr(ps, "'trusted_proxy': more than %d addresses", WEB_TRUSTED_PROXIES_MAX);
			break;
		}
		c->trusted_proxies = xrealloc(c->trusted_proxies,
					      (c->ntrusted_proxies + 1) * sizeof(char *));
		c->trusted_proxies[c->ntrusted_proxies++] = xstrdup(w);
	}
	free(copy);
}

/* max_connections: a whole number within the server's range. */
static void set_connections(struct parse *ps, unsigned *dst, const char *k, const char *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (*dst)
		perr(ps, "'%s' is set twice", k);
	else if (end == v || *end || errno || n < WEB_CONNECTIONS_MIN || n > WEB_CONNECTIONS_LIMIT)
		perr(ps, "'%s': '%s' is not a whole number from %d to %d", k, v,
		     WEB_CONNECTIONS_MIN, WEB_CONNECTIONS_LIMIT);
	else
		*dst = (unsigned)n;
}

/* A connection's deadline: seconds above 0, at most WEB_TIMEOUT_MAX_S. */
static void set_deadline(struct parse *ps, double *dst, const char *k, const char *v)
{
	char *end;
	double d = strtod(v, &end);

	if (*dst)
		perr(ps, "'%s' is set twice", k);
	else if (end == v || *end || !(d > 0 && d <= WEB_TIMEOUT_MAX_S))
		perr(ps, "'%s': '%s' is not a number of seconds above 0 and at most %.0f", k, v,
		     WEB_TIMEOUT_MAX_S);
	else
		*dst = d;
}

static void set_seconds(struct parse *ps, double *dst, const char *k, const char *v)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !(d > 0 && d <= 86400 * 7))
		perr(ps, "'%s': '%s' is not a number of seconds above 0", k, v);
	else
		*dst = d;
}

/* A list of logins, as allow's: blank-separated, FORGE_ALLOW_MAX at most,
 * the key given once. */
static void set_logins(struct parse *ps, char ***dst, size_t *n, const char *k, const char *v)
{
	char *copy, *save = NULL, *w;

	if (*n) {
		perr(ps, "'%s' is set twice", k);
		return;
	}
	copy = xstrdup(v);
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (*n >= FORGE_ALLOW_MAX) {
			perr(ps, "'%s': more than %d logins", k, FORGE_ALLOW_MAX);
			break;
		}
		*dst = xrealloc(*dst, (*n + 1) * sizeof(char *));
		(*dst)[(*n)++] = xstrdup(w);
	}
	free(copy);
	if (!*n)
		perr(ps, "'%s' needs a value", k);
}

/* [github]: the keys every [github] takes, and the hub's own. */
static void key_github(struct parse *ps, const char *k, const char *v)
{
	struct hub_config *c = ps->c;
	struct strbuf why = STRBUF_INIT;
	int r = forge_config_key(&c->github, k, v, &why);

	if (r == 1 && !strcmp(k, "expect")) {
		char *copy = xstrdup(v), *save = NULL, *w;

		ps->expect_line = ps->lineno;
		for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
			if (c->nexpect >= HUB_HOSTS_MAX)
				break;
			c->expect = xrealloc(c->expect, (c->nexpect + 1) * sizeof(char *));
			c->expect[c->nexpect++] = xstrdup(w);
		}
		free(copy);
	} else if (r == 1 && !strcmp(k, "poll_s")) {
		set_seconds(ps, &c->poll_s, k, v);
	} else if (r == 1 && !strcmp(k, "silent_after_s")) {
		set_seconds(ps, &c->silent_after_s, k, v);
	} else if (r == 1 && !strcmp(k, "alert_issues")) {
		if (forge_config_bool(&c->alert_issues, k, v, &why) < 0)
			perr(ps, "%s", why.buf);
	} else if (r == 1 && !strcmp(k, "culprit_comments")) {
		if (forge_config_bool(&c->culprit_comments, k, v, &why) < 0)
			perr(ps, "%s", why.buf);
	} else if (r == 1 && !strcmp(k, "triage_allow")) {
		set_logins(ps, &c->triage_allow, &c->ntriage_allow, k, v);
	} else if (r == 1) {
		perr(ps, "unknown key '%s' in [github] (api, repo, token_file, login, allow, hub_url, "
		     "expect, comment, statuses, poll_s, silent_after_s, alert_issues, "
		     "culprit_comments, triage_allow, timeout_s, max_wait_s, retries, backoff_s)", k);
	} else if (r < 0) {
		perr(ps, "%s", why.buf);
	}
	strbuf_release(&why);
}

static void on_key(void *ctx, unsigned lineno, char *k, char *v)
{
	struct parse *ps = ctx;
	struct hub_config *c = ps->c;

	ps->lineno = lineno;
	if (ps->in_github) {
		key_github(ps, k, v);
		return;
	}
	if (!ps->in_hub) {
		if (!ps->in_other)
			perr(ps, "'%s' is outside any section: the keys go under [hub]", k);
		return;
	}
	if (!strcmp(k, "database")) {
		set_text(ps, &c->database, k, v);
	} else if (!strcmp(k, "listen")) {
		set_text(ps, &c->listen, k, v);
		ps->listen_line = lineno;
		if (web_listen_is_loopback(v) < 0)
			perr(ps, "'listen': '%s' is not ADDRESS:PORT with a numeric address "
			     "(0.0.0.0:8443, [::]:8443, 127.0.0.1:8080) and a port from 0 to 65535",
			     v);
	} else if (!strcmp(k, "tls_cert")) {
		set_text(ps, &c->tls_cert, k, v);
		ps->cert_line = lineno;
	} else if (!strcmp(k, "tls_key")) {
		set_text(ps, &c->tls_key, k, v);
		ps->key_line = lineno;
	} else if (!strcmp(k, "allow_plain_http")) {
		if (!strcmp(v, "yes") || !strcmp(v, "true"))
			c->allow_plain_http = true;
		else if (!strcmp(v, "no") || !strcmp(v, "false"))
			c->allow_plain_http = false;
		else
			perr(ps, "'allow_plain_http': '%s' is not yes or no", v);
	} else if (!strcmp(k, "hosts")) {
		add_hosts(ps, v);
	} else if (!strcmp(k, "max_connections")) {
		set_connections(ps, &c->max_connections, k, v);
	} else if (!strcmp(k, "header_timeout_s")) {
		set_deadline(ps, &c->header_timeout_s, k, v);
	} else if (!strcmp(k, "body_timeout_s")) {
		set_deadline(ps, &c->body_timeout_s, k, v);
	} else if (!strcmp(k, "trusted_proxy")) {
		add_proxies(ps, v);
	} else if (!strcmp(k, "default_branch")) {
		set_text(ps, &c->default_branch, k, v);
		if (strlen(v) > 255 || strspn(v, " \t") == strlen(v))
			perr(ps, "'default_branch': '%.255s' is not a branch name (1 to 255 bytes)", v);
	} else {
		perr(ps, "unknown key '%s' in [hub] (database, listen, tls_cert, tls_key, "
		     "allow_plain_http, hosts, max_connections, header_timeout_s, "
		     "body_timeout_s, trusted_proxy, default_branch)", k);
	}
}

static void on_section(void *ctx, unsigned lineno, char *name, char *arg)
{
	struct parse *ps = ctx;

	ps->lineno = lineno;
	ps->in_hub = false;
	ps->in_github = false;
	ps->in_other = true;
	if (!name)
		return;         /* a malformed header, reported */
	if (!strcmp(name, "github") && !arg) {
		if (ps->c->github.on)
			perr(ps, "a second [github] section");
		ps->c->github.on = true;
		ps->in_github = true;
		ps->in_other = false;
		return;
	}
	if (strcmp(name, "hub") || arg) {
		perr(ps, "unknown section [%s%s%s]: the hub's configuration is [hub] and "
		     "[github]", name, arg ? " " : "", arg ? arg : "");
		return;
	}
	if (ps->hubs++)
		perr(ps, "a second [hub] section");
	ps->in_hub = true;
}

static void on_error(void *ctx, unsigned lineno, const char *msg)
{
	struct parse *ps = ctx;

	ps->lineno = lineno;
	perr(ps, "%s", msg);
}

/* A certificate or key file, read whole, which must be PEM text. */
static void read_pem(struct parse *ps, char **out, const char *key, const char *path,
		     unsigned lineno)
{
	size_t len = 0;
	int r;

	ps->lineno = lineno;
	r = fs_read_file(out, &len, path, HUB_PEM_MAX);
	if (r < 0) {
		perr(ps, "'%s': %s", key, err_last());
		return;
	}
	if (memchr(*out, '\0', len) || !strstr(*out, "-----BEGIN ")) {
		perr(ps, "'%s': '%s' is not PEM text (-----BEGIN ...)", key, path);
		free(*out);
		*out = NULL;
	}
}

/* [github] as a whole: what it needs, and expected hosts the hub accepts. */
static void check_github(struct parse *ps)
{
	struct hub_config *c = ps->c;
	struct forge_config *g = &c->github;
	size_t i, k;

	ps->lineno = 0;
	if (!g->on)
		return;
	if (!g->repo)
		perr(ps, "[github] needs 'repo' (OWNER/NAME)");
	if (!g->token_file)
		perr(ps, "[github] needs 'token_file' (a file holding the forge's token alone)");
	if (!g->nallow)
		perr(ps, "[github] needs 'allow': the logins whose pull requests are built at once "
		     "and who may approve others' with /perfd run");
	ps->lineno = ps->expect_line;
	if (!c->nexpect)
		perr(ps, "[github] needs 'expect': the hosts each pull request is measured on "
		     "(m1 m1-max arc-b60 gfx1201)");
	for (i = 0; i < c->nexpect; i++) {
		for (k = 0; k < i && strcmp(c->expect[k], c->expect[i]); k++)
			;
		if (k < i)
			perr(ps, "'expect': '%s' is named twice", c->expect[i]);
		else if (!hub_config_accepts(c, c->expect[i]))
			perr(ps, "'expect': '%s' is not among [hub] hosts, whose records the hub "
			     "accepts", c->expect[i]);
	}
	forge_config_finish(g);
}

/* What holds across keys, said once the file is read. */
static void check(struct parse *ps)
{
	struct hub_config *c = ps->c;
	int loopback;

	ps->lineno = 0;
	if (!c->database)
		c->database = xstrdup("perfd.db");
	if (!c->default_branch)
		c->default_branch = xstrdup(WEB_DEFAULT_BRANCH);
	if (!c->listen)
		c->listen = xstrdup(WEB_LISTEN_DEFAULT);
	if (!!c->tls_cert != !!c->tls_key) {
		ps->lineno = c->tls_cert ? ps->cert_line : ps->key_line;
		perr(ps, "'%s' needs '%s' too: HTTPS needs the certificate and its key",
		     c->tls_cert ? "tls_cert" : "tls_key", c->tls_cert ? "tls_key" : "tls_cert");
		return;
	}
	if (c->tls_cert) {
		read_pem(ps, &c->cert_pem, "tls_cert", c->tls_cert, ps->cert_line);
		read_pem(ps, &c->key_pem, "tls_key", c->tls_key, ps->key_line);
		return;
	}
	loopback = web_listen_is_loopback(c->listen);
	if (loopback == 0 && !c->allow_plain_http) {
		ps->lineno = ps->listen_line;
		perr(ps, "'listen': %s is not a loopback address, and without tls_cert and tls_key "
		     "the hub would take tokens in plain HTTP there: give them, or say "
		     "'allow_plain_http = yes' (behind a proxy that ends TLS)", c->listen);
	}
}

int hub_config_load(struct hub_config **out, const char *path, struct strbuf *errors)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	*out = NULL;
	r = fs_read_file(&text, &len, path, HUB_CONFIG_MAX);
	if (r < 0)
		return err_set(r, "configuration %s", err_last());
	r = hub_config_parse(out, path, text, len, errors);
	free(text);
	return r;
}

int hub_config_parse(struct hub_config **out, const char *path, const char *text, size_t len,
		     struct strbuf *errors)
{
	struct hub_config *c = xcalloc(1, sizeof(*c));
	struct parse ps = { .name = path, .errors = errors, .c = c };
	const struct ini_handler h = { on_section, on_key, on_error, &ps };

	*out = NULL;
	c->path = xstrdup(path);
	c->poll_s = HUB_POLL_S;
	c->silent_after_s = HUB_SILENT_AFTER_S;
	forge_config_defaults(&c->github);
	ini_parse(text, len, &h);
	check(&ps);
	check_github(&ps);
	if (ps.nerrors) {
		hub_config_free(c);
		return err_set(-EINVAL, "%d error%s in '%s'", ps.nerrors, ps.nerrors == 1 ? "" : "s",
			       path);
	}
	*out = c;
	return 0;
}

void hub_config_free(struct hub_config *c)
{
	size_t i;

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
	for (i = 0; i < c->nhosts; i++)
		free(c->hosts[i]);
	free(c->hosts);
	for (i = 0; i < c->nexpect; i++)
		free(c->expect[i]);
	free(c->expect);
	for (i = 0; i < c->ntrusted_proxies; i++)
		free(c->trusted_proxies[i]);
	free(c->trusted_proxies);
	forge_config_release(&c->github);
	for (i = 0; i < c->ntriage_allow; i++)
		free(c->triage_allow[i]);
	free(c->triage_allow);
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
