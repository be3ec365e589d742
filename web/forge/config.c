/*
 * [github]: the pull requests' host, as an agent's configuration and the
 * hub's both take it (docs/github.md, docs/hub.md). The keys they share are
 * read here, once; each caller reads the keys of its own and says what is
 * unknown. Also the client made from such a section.
 */
#include <errno.h>
#include <math.h>
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

static bool is_http_url(const char *v)
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

static int text(char **dst, const char *k, const char *v, struct strbuf *why)
{
	if (*dst) {
		strbuf_addf(why, "'%s' is set twice in this section", k);
		return -EINVAL;
	}
	if (!*v) {
		strbuf_addf(why, "'%s' needs a value", k);
		return -EINVAL;
	}
	*dst = xstrdup(v);
	return 0;
}

static int seconds(double *dst, const char *k, const char *v, struct strbuf *why)
{
	char *end;
	double d = strtod(v, &end);

	if (end == v || *end || !isfinite(d) || d <= 0 || d > 86400 * 7) {
		strbuf_addf(why, "'%s': '%s' is not a number of seconds above 0", k, v);
		return -EINVAL;
	}
	*dst = d;
	return 0;
}

int forge_config_bool(bool *dst, const char *k, const char *v, struct strbuf *why)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
		*dst = true;
	else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
		*dst = false;
	else {
		strbuf_addf(why, "'%s': '%s' is not true or false", k, v);
		return -EINVAL;
	}
	return 0;
}

int forge_config_key(struct forge_config *g, const char *k, const char *v, struct strbuf *why)
{
	if (!strcmp(k, "api")) {
		if (text(&g->api, k, v, why) < 0)
			return -EINVAL;
		if (!is_http_url(v)) {
			strbuf_addf(why, "'api': '%s' is not an http:// or https:// URL", v);
			return -EINVAL;
		}
		if (!strncmp(v, "http://", 7) && !forge_url_is_loopback(v)) {
			strbuf_addf(why, "'api': '%s' is plain HTTP to a host other than this one: the "
				    "token would cross the network in clear; use https://", v);
			return -EINVAL;
		}
	} else if (!strcmp(k, "repo")) {
		if (text(&g->repo, k, v, why) < 0)
			return -EINVAL;
		if (!strchr(v, '/') || strchr(v, '/') != strrchr(v, '/')) {
			strbuf_addf(why, "'repo': '%s' is not OWNER/NAME", v);
			return -EINVAL;
		}
	} else if (!strcmp(k, "token_file")) {
		return text(&g->token_file, k, v, why);
	} else if (!strcmp(k, "login")) {
		if (text(&g->login, k, v, why) < 0)
			return -EINVAL;
		if (strlen(v) > 39 + 5 || strspn(v, "abcdefghijklmnopqrstuvwxyz"
						 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-[]") < strlen(v)) {
			strbuf_addf(why, "'login': '%s' is not a GitHub login", v);
			return -EINVAL;
		}
	} else if (!strcmp(k, "allow")) {
		char *copy = xstrdup(v), *save = NULL, *w;
		size_t before = g->nallow;

		for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
			if (g->nallow >= FORGE_ALLOW_MAX) {
				strbuf_addf(why, "'%s': more than %d entries", k, FORGE_ALLOW_MAX);
				break;
			}
			g->allow = xrealloc(g->allow, (g->nallow + 1) * sizeof(char *));
			g->allow[g->nallow++] = xstrdup(w);
		}
		free(copy);
		if (g->nallow == before && !why->len)
			strbuf_addf(why, "'%s' needs a value", k);
		return why->len ? -EINVAL : 0;
	} else if (!strcmp(k, "hub_url")) {
		if (text(&g->hub_url, k, v, why) < 0)
			return -EINVAL;
		if (!is_http_url(v)) {
			strbuf_addf(why, "'hub_url': '%s' is not an http:// or https:// URL", v);
			return -EINVAL;
		}
	} else if (!strcmp(k, "comment")) {
		return forge_config_bool(&g->comment, k, v, why);
	} else if (!strcmp(k, "statuses")) {
		return forge_config_bool(&g->statuses, k, v, why);
	} else if (!strcmp(k, "timeout_s")) {
		return seconds(&g->timeout_s, k, v, why);
	} else if (!strcmp(k, "max_wait_s")) {
		return seconds(&g->max_wait_s, k, v, why);
	} else if (!strcmp(k, "backoff_s")) {
		return seconds(&g->backoff_s, k, v, why);
	} else if (!strcmp(k, "retries")) {
		char *end;
		long n = strtol(v, &end, 10);

		if (end == v || *end || n < 0 || n > 10) {
			strbuf_addf(why, "'%s': '%s' is not a whole number from 0 to 10", k, v);
			return -EINVAL;
		}
		g->retries = (int)n;
	} else {
		return 1;
	}
	return 0;
}

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
	bool loose = false;
	int r;

	*out = NULL;
	if (token_out)
		*token_out = NULL;
	r = wire_http_token_read(&token, g->token_file, &loose);
	if (r < 0)
		return err_set(r, "[github] %s", err_last());
	if (loose)
		log_warnx("[github] token file '%s' can be read by others than its owner: "
			  "chmod 600 it", g->token_file);
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
