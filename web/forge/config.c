/*
 * [github]: the pull requests' host, as an agent's configuration and the
 * hub's both take it (docs/github.md, docs/hub.md). The keys they share are
 * read here, once; each caller reads the keys of its own and says what is
 * unknown. Also the client made from such a section.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge.h"
#include "wire.h"

void forge_config_defaults(struct forge_config *g)
{
	g->comment = true;
	g->statuses = true;
	g->timeout_s = 30;
	g->max_wait_s = 300;
	g->retries = 3;
	g->backoff_s = 1;
}

bool forge_url_is_http(const char *v)
{
	return (!strncmp(v, "http://", 7) && v[7]) || (!strncmp(v, "https://", 8) && v[8]);
}

bool forge_url_is_loopback(const char *url)
{
	const char *h = strstr(url, "://");
	size_t n;

	if (!h)
		return false;
	h += 3;
	if (!strncmp(h, "[::1]", 5))
		return h[5] == '\0' || h[5] == ':' || h[5] == '/';
	n = strcspn(h, ":/");
	if (n == 9 && !strncmp(h, "localhost", 9))
		return true;
	/* 127.0.0.0/8 written as an address, not a name that begins so. */
	return n > 4 && !strncmp(h, "127.", 4) && strspn(h, "0123456789.") == n;
}

/* A URL of the API or the hub: http:// only to this host, when with_token. */
static int set_url(char **out, struct config_report *r, const char *k, const char *v,
		   bool with_token)
{
	if (config_set_text(out, r, k, v) < 0)
		return -EINVAL;
	if (!forge_url_is_http(v)) {
		config_refuse(r, "'%s': expected an http:// or https:// URL, not '%s'", k, v);
		return -EINVAL;
	}
	if (with_token && !strncmp(v, "http://", 7) && !forge_url_is_loopback(v)) {
		config_refuse(r, "'%s': '%s' is plain HTTP to a host other than this one: the "
			      "token would cross the network in clear; use https://", k, v);
		return -EINVAL;
	}
	return 0;
}

static int set_api(void *base, const struct config_key *row, struct config_report *r,
		   const char *v)
{
	return set_url(config_key_field(base, row), r, row->key, v, true);
}

static int set_hub_url(void *base, const struct config_key *row, struct config_report *r,
		       const char *v)
{
	return set_url(config_key_field(base, row), r, row->key, v, false);
}

static int set_repo(void *base, const struct config_key *row, struct config_report *r,
		    const char *v)
{
	if (config_set_text(config_key_field(base, row), r, row->key, v) < 0)
		return -EINVAL;
	if (!strchr(v, '/') || strchr(v, '/') != strrchr(v, '/')) {
		config_refuse(r, "'repo': expected OWNER/NAME, not '%s'", v);
		return -EINVAL;
	}
	return 0;
}

static bool is_login(const char *v)
{
	return strlen(v) <= 39 + 5 && strspn(v, "abcdefghijklmnopqrstuvwxyz"
					     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-[]") == strlen(v);
}

static int set_login(void *base, const struct config_key *row, struct config_report *r,
		     const char *v)
{
	if (config_set_text(config_key_field(base, row), r, row->key, v) < 0)
		return -EINVAL;
	if (!is_login(v)) {
		config_refuse(r, "'login': expected a GitHub login, not '%s'", v);
		return -EINVAL;
	}
	return 0;
}

static const struct config_words logins = { .max = FORGE_ALLOW_MAX };

#define G(f) .offset = offsetof(struct forge_config, f)
const struct config_key forge_config_keys[] = {
	{ "api", CONFIG_CUSTOM, G(api), .set = set_api },
	{ "repo", CONFIG_CUSTOM, G(repo), .set = set_repo },
	{ "token_file", CONFIG_TEXT, G(token_file) },
	{ "login", CONFIG_CUSTOM, G(login), .set = set_login },
	{ "allow", CONFIG_WORDS, G(allow), .count = offsetof(struct forge_config, nallow), .words = &logins },
	{ "hub_url", CONFIG_CUSTOM, G(hub_url), .set = set_hub_url },
	{ "comment", CONFIG_BOOL, G(comment) },
	{ "statuses", CONFIG_BOOL, G(statuses) },
	{ "timeout_s", CONFIG_SECONDS, G(timeout_s), .hi = CONFIG_SECONDS_MAX },
	{ "max_wait_s", CONFIG_SECONDS, G(max_wait_s), .hi = CONFIG_SECONDS_MAX },
	{ "retries", CONFIG_INT, G(retries), .lo = 0, .hi = 10 },
	{ "backoff_s", CONFIG_SECONDS, G(backoff_s), .hi = CONFIG_SECONDS_MAX },
	{ .key = NULL },
};
#undef G

void forge_config_finish(struct forge_config *g)
{
	if (!g->api)
		g->api = xstrdup("https://api.github.com");
	if (!g->hub_url)
		g->hub_url = xstrdup("http://127.0.0.1:8080");
	while (strlen(g->hub_url) > 8 && g->hub_url[strlen(g->hub_url) - 1] == '/')
		g->hub_url[strlen(g->hub_url) - 1] = '\0';
}

void forge_config_release(struct forge_config *g)
{
	size_t i;

	free(g->api);
	free(g->repo);
	free(g->token_file);
	free(g->login);
	for (i = 0; i < g->nallow; i++)
		free(g->allow[i]);
	free(g->allow);
	free(g->hub_url);
	free(g->comment_key);
	memset(g, 0, sizeof(*g));
}

int forge_client(struct web_gh_client **out, const struct forge_config *g, int cancel_fd,
		 char **token_out)
{
	struct web_gh_options o = WEB_GH_OPTIONS_INIT;
	char *token = NULL;
	int r;

	*out = NULL;
	if (token_out)
		*token_out = NULL;
	r = wire_http_token_read(&token, g->token_file);
	if (r < 0)
		return err_set(r, "[github] %s", err_last());
	o.api = g->api;
	o.repo = g->repo;
	o.token = token;
	o.timeout_s = g->timeout_s;
	o.max_wait_s = g->max_wait_s;
	o.retries = g->retries;
	o.backoff_s = g->backoff_s;
	o.cancel_fd = cancel_fd;
	r = web_gh_client_new(out, &o);
	if (r == 0 && token_out) {
		*token_out = token;
		token = NULL;
	}
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	if (r < 0)
		return err_set(r, "[github] %s", err_last());
	if (g->login)
		web_gh_client_set_login(*out, g->login);
	return 0;
}

int forge_check(const struct forge_config *g)
{
	struct web_gh_client *gh = NULL;
	int r = forge_client(&gh, g, -1, NULL);

	web_gh_client_free(gh);
	return r;
}

int forge_login_check(struct web_gh_client *gh, const struct forge_config *g)
{
	const char *login;
	int r;

	r = web_gh_login(gh, &login);
	if (r == -EKEYREJECTED)
		return err_set(r, "[github] %s", err_last());
	if (r < 0)
		log_warnx("[github] %s; going on: the API is asked again at each poll", err_last());
	else
		log_info("[github] %s at %s, as %s", g->repo, g->api, login);
	return 0;
}
