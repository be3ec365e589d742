/*
 * A client of the GitHub REST API (and of those that answer the same calls:
 * GitHub Enterprise, Gitea, Forgejo), each request on web/wire's HTTP
 * client (wire_http_conn_send), one connection per client. docs/github.md
 * describes what it asks and how it waits.
 *
 * On top of the client's own bounds (wire.h: time, reply size, no
 * redirect, the token never in a detail), the pages of a list and the
 * waits a rate limit asks for are bounded here, and a list's next page
 * must lie under the configured base URL. Nothing here logs.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "forge-internal.h"
#include "wire.h"

#define WEB_GH_URL_MAX 2048
#define WEB_GH_MESSAGE_MAX 200          /* characters of an error reply quoted in a detail */
#define WEB_GH_RATE_WAITS_MAX 3         /* rate-limit waits for one request */
#define WEB_GH_RATE_WAIT_DEFAULT_S 60   /* a rate limit that names no time: GitHub's advice */

struct web_gh_client {
	struct wire_http_conn *conn;
	char *api;                  /* no trailing slash */
	char *repo;
	char *auth;                 /* "Authorization: Bearer ..." */
	struct web_gh_options o;
	char login[WEB_GH_LOGIN_MAX + 1];
	time_t limited_until;       /* a reply said the quota is spent until then */
};

/* What one reply said, besides its body. */
struct web_gh_reply {
	long status;
	struct strbuf body;
	double retry_after;         /* seconds; < 0 when not sent */
	long remaining;             /* X-RateLimit-Remaining; -1 when not sent */
	time_t reset;               /* X-RateLimit-Reset; 0 when not sent */
	char next[WEB_GH_URL_MAX];      /* the Link header's rel="next", "" when none */
	bool next_too_long;         /* a next page's URL longer than next */
	char content_type[128];
};

enum { WEB_GH_IDEMPOTENT = 0, WEB_GH_ONCE = 1 };

/* ---- the client ---- */

static bool valid_repo(const char *s)
{
	const char *slash = strchr(s, '/');
	size_t i;

	if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/') || strlen(s) > 200)
		return false;
	for (i = 0; s[i]; i++) {
		if (!isalnum((unsigned char)s[i]) && !strchr("-_./", s[i]))
			return false;
	}
	return strcmp(slash + 1, ".") && strcmp(slash + 1, "..");
}

static bool valid_api(const char *s)
{
	const char *p;

	if (strncmp(s, "http://", 7) && strncmp(s, "https://", 8))
		return false;
	if (strlen(s) > 512)
		return false;
	for (p = s; *p; p++) {
		if (*p <= ' ' || *p >= 0x7f || strchr("?#@\"<>\\", *p))
			return false;
	}
	return true;
}

int web_gh_client_new(struct web_gh_client **out, const struct web_gh_options *o)
{
	struct web_gh_client *c;
	size_t len;
	int r;

	*out = NULL;
	if (!o->api || !valid_api(o->api))
		return err_set(-EINVAL, "API URL '%s': expected http:// or https:// with no query, "
			       "credentials or blanks", o->api ? o->api : "");
	if (!o->repo || !valid_repo(o->repo))
		return err_set(-EINVAL, "repository '%s': expected OWNER/NAME",
			       o->repo ? o->repo : "");
	if (!o->token || !*o->token)
		return err_set(-EINVAL, "no token");
	c = xcalloc(1, sizeof(*c));
	c->o = *o;
	r = wire_http_conn_new(&c->conn);
	if (r < 0) {
		free(c);
		return r;
	}
	len = strlen(o->api);
	while (len > 0 && o->api[len - 1] == '/')
		len--;
	c->api = xstrndup(o->api, len);
	c->repo = xstrdup(o->repo);
	c->auth = xasprintf("Authorization: Bearer %s", o->token);
	c->o.api = c->api;
	c->o.repo = c->repo;
	c->o.token = NULL;          /* kept only inside auth */
	*out = c;
	return 0;
}

void web_gh_client_free(struct web_gh_client *c)
{
	if (!c)
		return;
	wire_http_conn_free(c->conn);
	explicit_bzero(c->auth, strlen(c->auth));
	free(c->auth);
	free(c->api);
	free(c->repo);
	free(c);
}

const char *web_gh_client_repo(const struct web_gh_client *c)
{
	return c->repo;
}

static int wait_s(const struct web_gh_client *c, double s);

int web_gh_client_backoff(struct web_gh_client *c, int attempt)
{
	return wait_s(c, c->o.backoff_s * (double)(1 << (attempt < 10 ? attempt : 10)));
}

/* ---- one request ---- */

/* "name: value" when line's header is name (any case), else NULL. */
static const char *header_value(const char *line, size_t len, const char *name)
{
	size_t nl = strlen(name);

	if (len <= nl || strncasecmp(line, name, nl) || line[nl] != ':')
		return NULL;
	line += nl + 1;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

/* The rel="next" target of a Link header (v, len bytes, not terminated),
 * copied into r->next. */
static void link_next(struct web_gh_reply *r, const char *v, size_t len)
{
	char *out = r->next;
	const char *end = v + len, *p = v;

	while (p < end) {
		const char *lt = memchr(p, '<', (size_t)(end - p)), *gt, *stop;

		if (!lt)
			return;
		gt = memchr(lt, '>', (size_t)(end - lt));
		if (!gt)
			return;
		stop = memchr(gt, ',', (size_t)(end - gt));
		if (!stop)
			stop = end;
		if (memmem(gt, (size_t)(stop - gt), "rel=\"next\"", 10)) {
			if ((size_t)(gt - lt - 1) >= WEB_GH_URL_MAX) {
				r->next_too_long = true;
				return;
			}
			memcpy(out, lt + 1, (size_t)(gt - lt - 1));
			out[gt - lt - 1] = '\0';
			return;
		}
		p = stop + 1;
	}
}

static void reply_headers_forget(struct web_gh_reply *r)
{
	r->retry_after = -1;
	r->remaining = -1;
	r->reset = 0;
	r->next[0] = '\0';
	r->next_too_long = false;
	r->content_type[0] = '\0';
}

static void on_header(void *ctx, const char *data, size_t n)
{
	struct web_gh_reply *r = ctx;
	size_t len = n;
	char line[WEB_GH_URL_MAX + 64];
	const char *v;

	/* A new status line starts a new reply (after a 100 Continue). */
	if (n >= 5 && !strncmp(data, "HTTP/", 5)) {
		reply_headers_forget(r);
		return;
	}
	while (len > 0 && (data[len - 1] == '\r' || data[len - 1] == '\n'))
		len--;
	/* Read in place: a Link header may be longer than any other. */
	if (len > 5 && !strncasecmp(data, "link:", 5)) {
		link_next(r, data + 5, len - 5);
		return;
	}
	if (len >= sizeof(line))
		return;             /* no header perfd reads is that long */
	memcpy(line, data, len);
	line[len] = '\0';
	if ((v = header_value(line, len, "retry-after"))) {
		char *end;
		double s = strtod(v, &end);

		if (end != v && !*end && s >= 0)
			r->retry_after = s;
		else if (wire_http_date(v) > 0)
			r->retry_after = fmax(0, (double)(wire_http_date(v) - time(NULL)));
	} else if ((v = header_value(line, len, "x-ratelimit-remaining"))) {
		r->remaining = strtol(v, NULL, 10);
	} else if ((v = header_value(line, len, "x-ratelimit-reset"))) {
		r->reset = (time_t)strtoll(v, NULL, 10);
	} else if ((v = header_value(line, len, "content-type"))) {
		snprintf(r->content_type, sizeof(r->content_type), "%s", v);
	}
}

/* Sleeps s seconds, or until the cancel descriptor is readable. */
static int wait_s(const struct web_gh_client *c, double s)
{
	struct pollfd p = { .fd = c->o.cancel_fd, .events = POLLIN };
	int64_t end = time_monotonic_ns() + (int64_t)(s * 1e9);

	for (;;) {
		int64_t left = end - time_monotonic_ns();
		int r;

		if (left <= 0)
			return 0;
		r = poll(&p, c->o.cancel_fd >= 0 ? 1 : 0, (int)(left / 1000000) + 1);
		if (r > 0)
			return err_set(-ECANCELED, "stopped while waiting for the API");
	}
}

/* The message field of an error reply, printable and bounded, or a note on
 * what the reply was when it is not JSON. */
static void reply_message(char *out, size_t outlen, const struct web_gh_reply *r)
{
	json_t *j = json_loadb(r->body.buf, r->body.len, 0, NULL);
	const char *m = j ? json_string_value(json_object_get(j, "message")) : NULL;
	size_t i, n;

	if (!m) {
		snprintf(out, outlen, "%s",
			 r->body.len ? "a reply that is not JSON" : "an empty reply");
		json_decref(j);
		return;
	}
	n = utf8_cut(m, strlen(m), outlen - 1 < WEB_GH_MESSAGE_MAX ? outlen - 1 : WEB_GH_MESSAGE_MAX);
	for (i = 0; i < n; i++)
		out[i] = (unsigned char)m[i] < ' ' || m[i] == 0x7f ? ' ' : m[i];
	out[n] = '\0';
	json_decref(j);
}

static bool is_json(const struct web_gh_reply *r)
{
	return !strncasecmp(r->content_type, "application/json", 16) ||
	       !strncasecmp(r->content_type, "application/vnd.github", 22);
}

/* Sends one request: the HTTP status, or the failure as
 * wire_http_conn_send returns it. */
static int perform(struct web_gh_client *c, struct web_gh_reply *rep, const char *method,
		   const char *url, const char *body, int flags)
{
	const char *const headers[] = { "Accept: application/vnd.github+json",
					"X-GitHub-Api-Version: 2022-11-28", c->auth, NULL };
	struct wire_http_request rq = {
		.method = method, .url = url, .headers = headers, .body = body,
		.len = body ? strlen(body) : 0, .timeout_s = c->o.timeout_s,
		.cancel_fd = c->o.cancel_fd, .max = WEB_GH_REPLY_MAX,
		.fresh = flags & WEB_GH_ONCE, .decode = true, .on_header = on_header, .ctx = rep,
	};
	int r;

	rep->status = 0;
	reply_headers_forget(rep);
	r = wire_http_conn_send(c->conn, &rep->body, &rq);
	if (r > 0)
		rep->status = r;
	return r;
}

/* What a failed exchange asks for next: the error itself (returned, < 0),
 * a wait of *wait seconds (a rate limit), or a retry after the back-off.
 * msg gets what to say of it when it is retried until no try is left. */
enum { NEXT_WAIT = 1, NEXT_RETRY = 2 };

static int judge(const struct web_gh_reply *rep, int sent, const char *method,
		 const char *path, int flags, double *wait, char *msg, size_t msglen)
{
	long s = rep->status;

	if (sent < 0) {
		if (sent == -EFBIG)
			return err_set(-EFBIG, "%s %s: the reply is over %d MiB", method, path,
				       WEB_GH_REPLY_MAX >> 20);
		if (sent != -EIO && sent != -ENOTCONN)
			return err_set(sent, "%s %s: %s", method, path, err_last());
		/* Nothing was sent when no connection was made: safe to send. */
		if (flags & WEB_GH_ONCE && sent != -ENOTCONN)
			return err_set(-EAGAIN, "%s %s: %s; whether it was done is unknown", method,
				       path, err_last());
		snprintf(msg, msglen, "%s", err_last());
		return NEXT_RETRY;
	}
	reply_message(msg, msglen, rep);
	if (s == 403 || s == 429) {
		if (rep->retry_after >= 0)
			*wait = rep->retry_after;
		else if (rep->remaining == 0 && rep->reset > 0)
			*wait = fmax(0, (double)(rep->reset - time(NULL))) + 1;
		else if (s == 429 || strcasestr(msg, "rate limit"))
			*wait = WEB_GH_RATE_WAIT_DEFAULT_S;  /* a secondary limit names no time */
		else
			return err_set(-EACCES, "%s %s: forbidden (403: %s); the token may lack a "
				       "permission", method, path, msg);
		return NEXT_WAIT;
	}
	if (s == 401)
		return err_set(-EKEYREJECTED, "%s %s: the token was refused (401: %s); check the "
			       "token file, or make a new token", method, path, msg);
	if (s == 404 || s == 410)
		return err_set(-ENOENT, "%s %s: not found (%ld: %s)", method, path, s, msg);
	if (s == 422)
		return err_set(-EINVAL, "%s %s: refused (422: %s)", method, path, msg);
	if (s >= 300 && s < 400)
		return err_set(-EPROTO, "%s %s: answered %ld (a redirect); perfd does not follow "
			       "it: check the API URL and the repository's name", method, path, s);
	if (s < 500)
		return err_set(-EPROTO, "%s %s: answered %ld: %s", method, path, s, msg);
	if (flags & WEB_GH_ONCE)
		return err_set(-EAGAIN, "%s %s: answered %ld: %s; whether it was done is unknown",
			       method, path, s, msg);
	snprintf(msg + strlen(msg), msglen - strlen(msg), " (%ld)", s);
	return NEXT_RETRY;
}

/* A 2xx reply's JSON into *out (NULL for an empty reply). */
static int parse_reply(json_t **out, const struct web_gh_reply *rep, const char *method,
		       const char *path)
{
	json_error_t je;

	*out = NULL;
	if (rep->status == 204 || !rep->body.len)
		return 0;
	if (!is_json(rep))
		return err_set(-EPROTO, "%s %s: the reply is not JSON (%s, %zu bytes)", method,
			       path, *rep->content_type ? rep->content_type : "no Content-Type",
			       rep->body.len);
	*out = json_loadb(rep->body.buf, rep->body.len, 0, &je);
	if (!*out)
		return err_set(-EPROTO, "%s %s: the reply is not JSON (line %d: %s)", method, path,
			       je.line, je.text);
	return 0;
}

/*
 * Sends one request, waiting out rate limits and retrying 5xx replies and
 * transport failures with doubling delays. With WEB_GH_ONCE a request that
 * may have been carried out (a 5xx, a lost connection) is not sent again:
 * -EAGAIN tells the caller the outcome is unknown. On success *out holds
 * the parsed JSON reply (NULL for an empty one), the caller's to json_decref.
 */
static int request(struct web_gh_client *c, json_t **out, struct web_gh_reply *rep,
		   const char *method, const char *url, const char *body, int flags)
{
	const char *path = url + strlen(c->api);
	double delay = c->o.backoff_s;
	int tries = 0, waits = 0;
	char msg[WEB_GH_MESSAGE_MAX + 16];

	*out = NULL;
	for (;;) {
		time_t now = time(NULL);
		double wait = 0;
		int sent, r;

		if (c->limited_until > now) {
			wait = (double)(c->limited_until - now) + 1;
			if (wait > c->o.max_wait_s)
				return err_set(-EAGAIN, "%s %s: the API's quota is spent for "
					       "%.0f s more, longer than the %.0f s perfd waits",
					       method, path, wait, c->o.max_wait_s);
			r = wait_s(c, wait);
			if (r < 0)
				return r;
		}
		tries++;
		sent = perform(c, rep, method, url, body, flags);
		c->limited_until = rep->remaining == 0 && rep->reset > 0 ? rep->reset : 0;
		if (sent >= 200 && sent < 300)
			return parse_reply(out, rep, method, path);
		r = judge(rep, sent, method, path, flags, &wait, msg, sizeof(msg));
		if (r < 0)
			return r;
		if (r == NEXT_WAIT) {
			if (++waits > WEB_GH_RATE_WAITS_MAX || wait > c->o.max_wait_s)
				return err_set(-EAGAIN, "%s %s: rate limited (%ld: %s), asked to "
					       "wait %.0f s; perfd waits at most %.0f s, %d times",
					       method, path, rep->status, msg, wait,
					       c->o.max_wait_s, WEB_GH_RATE_WAITS_MAX);
			c->limited_until = 0;
			r = wait_s(c, wait);
			if (r < 0)
				return r;
			continue;
		}
		if (tries > c->o.retries)
			return err_set(-EIO, "%s %s: %s, after %d tries", method, path, msg, tries);
		r = wait_s(c, delay);
		if (r < 0)
			return r;
		delay *= 2;
	}
}

static char *repo_url(const struct web_gh_client *c, const char *fmt, ...) PRINTF_LIKE(2, 3);
static char *repo_url(const struct web_gh_client *c, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	strbuf_addf(&sb, "%s/repos/%s", c->api, c->repo);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb);
}

/* Walks a list's pages: calls page(ctx, reply) for each page's JSON. */
static int list_pages(struct web_gh_client *c, char *url, int (*page)(void *, json_t *), void *ctx)
{
	struct web_gh_reply rep = { .body = STRBUF_INIT };
	int pages = 0, r = 0;

	while (url) {
		json_t *j;

		if (++pages > WEB_GH_PAGES_MAX) {
			r = err_set(-E2BIG, "GET %s: more than %d pages", url + strlen(c->api),
				    WEB_GH_PAGES_MAX);
			break;
		}
		r = request(c, &j, &rep, "GET", url, NULL, WEB_GH_IDEMPOTENT);
		if (r < 0)
			break;
		r = page(ctx, j);
		json_decref(j);
		if (r < 0) {
			err_set(r, "GET %s: %s", url + strlen(c->api), err_last());
			break;
		}
		free(url);
		url = NULL;
		if (rep.next_too_long) {
			r = err_set(-EPROTO, "a list's next page has a URL over %d bytes",
				    WEB_GH_URL_MAX);
			break;
		}
		if (*rep.next) {
			/* The token goes to the configured base alone. */
			if (strncmp(rep.next, c->api, strlen(c->api)) ||
			    rep.next[strlen(c->api)] != '/') {
				r = err_set(-EPROTO, "a list's next page is not under the API "
					    "URL %s", c->api);
				break;
			}
			url = xstrdup(rep.next);
		}
	}
	free(url);
	strbuf_release(&rep.body);
	return r;
}

/* ---- reading replies ---- */

static int copy_string(char *out, size_t outlen, json_t *obj, const char *path, bool required)
{
	char key[64];
	const char *p = path, *dot;
	json_t *v = obj;

	*out = '\0';
	while (v && (dot = strchr(p, '.'))) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - p), p);
		v = json_object_get(v, key);
		p = dot + 1;
	}
	v = v ? json_object_get(v, p) : NULL;
	if (!json_is_string(v))
		return required ? err_set(-EPROTO, "%s is missing or not a string", path) : 0;
	if (json_string_length(v) >= outlen)
		return err_set(-EPROTO, "%s is longer than %zu bytes", path, outlen - 1);
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* A user's login: "" when it is missing or longer than any login, so that it
 * matches no allow list and no own login, and never fails a whole list. */
static void copy_login(char out[WEB_GH_LOGIN_MAX + 1], json_t *obj)
{
	if (copy_string(out, WEB_GH_LOGIN_MAX + 1, obj, "user.login", false) < 0)
		*out = '\0';
}

static bool is_sha(const char *s)
{
	return strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

static int pull_from_json(void *item, json_t *j)
{
	struct web_gh_pull *p = item;
	json_t *num = json_object_get(j, "number"), *body;
	char state[16];
	int r;

	memset(p, 0, sizeof(*p));
	if (!json_is_integer(num) || json_integer_value(num) < 1 ||
	    json_integer_value(num) > 2147483647)
		return err_set(-EPROTO, "number is missing or not a positive integer");
	p->number = (int)json_integer_value(num);
	copy_login(p->author, j);
	if ((r = copy_string(p->head_ref, sizeof(p->head_ref), j, "head.ref", true)) < 0 ||
	    (r = copy_string(p->head_sha, sizeof(p->head_sha), j, "head.sha", true)) < 0 ||
	    (r = copy_string(p->base_ref, sizeof(p->base_ref), j, "base.ref", true)) < 0 ||
	    (r = copy_string(p->base_sha, sizeof(p->base_sha), j, "base.sha", false)) < 0 ||
	    (r = copy_string(state, sizeof(state), j, "state", true)) < 0)
		return r;
	if (!is_sha(p->head_sha))
		return err_set(-EPROTO, "head.sha '%s' is not 40 lower-case hex digits",
			       p->head_sha);
	p->open = !strcmp(state, "open");
	p->merged = json_is_string(json_object_get(j, "merged_at"));
	/* The description (null when there is none): only its forecasts' lines
	 * are kept, bounded. */
	body = json_object_get(j, "body");
	if (json_is_string(body))
		web_forecast_lines(p->expect, sizeof(p->expect), json_string_value(body),
				   json_string_length(body));
	return 0;
}

/* A list read page by page: items of size bytes, each filled by from_json. */
struct item_list {
	void *v;
	size_t n, alloc, size;
	int (*from_json)(void *item, json_t *j);
	const char *what;
};

static int each_item(struct item_list *l, json_t *j)
{
	int r;

	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 32;
		l->v = xrealloc(l->v, l->alloc * l->size);
	}
	r = l->from_json((char *)l->v + l->n * l->size, j);
	if (r < 0)
		return err_set(r, "the list of %s: item %zu: %s", l->what, l->n + 1, err_last());
	l->n++;
	return 0;
}

/* One page of a list: a JSON array, each element an item. */
static int page_items(void *ctx, json_t *page)
{
	size_t i;
	int r = 0;

	if (!json_is_array(page))
		return err_set(-EPROTO, "expected a JSON array");
	for (i = 0; r == 0 && i < json_array_size(page); i++)
		r = each_item(ctx, json_array_get(page, i));
	return r;
}

int web_gh_pulls_open(struct web_gh_client *c, struct web_gh_pull **out, size_t *out_n)
{
	struct item_list l = { .size = sizeof(struct web_gh_pull), .from_json = pull_from_json,
			       .what = "pull requests" };
	int r;

	*out = NULL;
	*out_n = 0;
	r = list_pages(c, repo_url(c, "/pulls?state=open&per_page=100"), page_items, &l);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*out = l.v;
	*out_n = l.n;
	return 0;
}

/* A pull request's reply: a JSON object. */
static int pull_object(struct web_gh_pull *out, json_t *j)
{
	if (!json_is_object(j))
		return err_set(-EPROTO, "expected a JSON object");
	return pull_from_json(out, j);
}

int web_gh_pull_get(struct web_gh_client *c, struct web_gh_pull *out, int number)
{
	struct web_gh_reply rep = { .body = STRBUF_INIT };
	char *url = repo_url(c, "/pulls/%d", number);
	json_t *j = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	r = request(c, &j, &rep, "GET", url, NULL, WEB_GH_IDEMPOTENT);
	if (r == 0 && (r = pull_object(out, j)) < 0)
		err_set(r, "GET /pulls/%d: %s", number, err_last());
	json_decref(j);
	free(url);
	strbuf_release(&rep.body);
	return r;
}

/* A compare's reply: its merge_base_commit.sha into out. */
static int merge_base_from_json(char out[41], json_t *j)
{
	const char *sha;

	sha = json_string_value(json_object_get(json_object_get(j, "merge_base_commit"), "sha"));
	if (!sha || !is_sha(sha))
		return err_set(-EPROTO, "no merge_base_commit.sha in the reply");
	memcpy(out, sha, 41);
	return 0;
}

int web_gh_merge_base(struct web_gh_client *c, char out[41], const char *base_ref,
		      const char *head_sha)
{
	struct web_gh_reply rep = { .body = STRBUF_INIT };
	json_t *j = NULL;
	char *url;
	int r;

	out[0] = '\0';
	/* A branch name goes into the path as it is: only what needs no escaping. */
	if (!*base_ref || strspn(base_ref, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789._/-") != strlen(base_ref) || strstr(base_ref, ".."))
		return err_set(-EINVAL, "base branch '%s': not asked of the API (a name with "
			       "characters a URL would need escaped)", base_ref);
	url = repo_url(c, "/compare/%s...%s", base_ref, head_sha);
	r = request(c, &j, &rep, "GET", url, NULL, WEB_GH_IDEMPOTENT);
	if (r == 0 && (r = merge_base_from_json(out, j)) < 0)
		err_set(r, "GET /compare/%s...%.12s: %s", base_ref, head_sha, err_last());
	json_decref(j);
	free(url);
	strbuf_release(&rep.body);
	return r;
}

int web_gh_commit_message(struct web_gh_client *c, struct strbuf *out, const char *sha)
{
	struct web_gh_reply rep = { .body = STRBUF_INIT };
	json_t *j = NULL, *msg;
	char *url;
	int r;

	if (!is_sha(sha))
		return err_set(-EINVAL, "commit '%s': not 40 lower-case hex digits", sha);
	url = repo_url(c, "/git/commits/%s", sha);
	r = request(c, &j, &rep, "GET", url, NULL, WEB_GH_IDEMPOTENT);
	if (r == 0) {
		msg = json_is_object(j) ? json_object_get(j, "message") : NULL;
		if (!json_is_string(msg)) {
			r = err_set(-EPROTO, "GET /git/commits/%.12s: message is missing or not a "
				    "string", sha);
		} else {
			size_t len = json_string_length(msg);

			strbuf_add(out, json_string_value(msg),
				   len < WEB_FORECAST_BODY_MAX ? len : WEB_FORECAST_BODY_MAX);
		}
	}
	json_decref(j);
	free(url);
	strbuf_release(&rep.body);
	return r;
}

/* "2026-11-30T01:02:03Z" as seconds since the epoch; 0 for anything else. */
static int64_t iso_time(const char *s)
{
	struct tm tm;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (!s || !(end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return 0;
	if (*end == '.')
		end += 1 + strspn(end + 1, "0123456789");
	if (strcmp(end, "Z") && strcmp(end, "+00:00"))
		return 0;
	return (int64_t)timegm(&tm);
}

static int comment_from_json(void *item, json_t *j)
{
	struct web_gh_comment *cm = item;
	json_t *id = json_object_get(j, "id"), *body = json_object_get(j, "body");

	memset(cm, 0, sizeof(*cm));
	if (!json_is_integer(id) || json_integer_value(id) < 1)
		return err_set(-EPROTO, "id is missing or not a positive integer");
	cm->id = json_integer_value(id);
	copy_login(cm->author, j);
	cm->created = iso_time(json_string_value(json_object_get(j, "created_at")));
	/* A comment body is at most 65536 characters on GitHub; more is cut. */
	if (json_is_string(body))
		cm->body = xstrndup(json_string_value(body),
				    utf8_cut(json_string_value(body), json_string_length(body),
					     WEB_GH_COMMENT_MAX));
	else
		cm->body = xstrdup("");
	return 0;
}

void web_gh_comments_free(struct web_gh_comment *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].body);
	free(v);
}

int web_gh_comments_list(struct web_gh_client *c, struct web_gh_comment **out, size_t *out_n,
			 int pr)
{
	return web_gh_comments_since(c, out, out_n, pr, NULL);
}

void web_gh_time_format(char out[32], int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm))
		memset(&tm, 0, sizeof(tm));
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int web_gh_comments_since(struct web_gh_client *c, struct web_gh_comment **out, size_t *out_n,
			  int number, const char *since)
{
	struct item_list l = { .size = sizeof(struct web_gh_comment),
			       .from_json = comment_from_json, .what = "comments" };
	char *url;
	int r;

	*out = NULL;
	*out_n = 0;
	/* The time goes into the query as it is: only a time as the API
	 * writes it (read back by iso_time), which needs no escaping. */
	if (since && *since && (strlen(since) > 31 || !iso_time(since) ||
				strspn(since, "0123456789-:TZ.+") != strlen(since)))
		return err_set(-EINVAL, "since '%s': not a time as the API writes it", since);
	if (since && *since)
		url = repo_url(c, "/issues/%d/comments?per_page=100&since=%s", number, since);
	else
		url = repo_url(c, "/issues/%d/comments?per_page=100", number);
	r = list_pages(c, url, page_items, &l);
	if (r < 0) {
		web_gh_comments_free(l.v, l.n);
		return r;
	}
	*out = l.v;
	*out_n = l.n;
	return 0;
}

/* o (built by the caller, NULL when jansson refused a string that is not
 * UTF-8) as compact JSON text into *out, the caller's; o is released.
 * -EINVAL for NULL: nothing is sent. */
static int encode(char **out, json_t *o, const char *what)
{
	*out = NULL;
	if (!o)
		return err_set(-EINVAL, "%s cannot be encoded as JSON (is it UTF-8?)", what);
	*out = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!*out)
		xalloc_die();       /* json_dumps fails only when it cannot allocate */
	return 0;
}

int web_gh_comment_create(struct web_gh_client *c, int64_t *out_id, int pr, const char *body)
{
	struct web_gh_reply rep = { .body = STRBUF_INIT };
	struct web_gh_comment cm = { 0 };
	char *url = NULL, *text = NULL;
	json_t *j = NULL;
	int r;

	*out_id = 0;
	r = encode(&text, json_pack("{s:s}", "body", body), "the comment");
	if (r < 0)
		return r;
	url = repo_url(c, "/issues/%d/comments", pr);
	r = request(c, &j, &rep, "POST", url, text, WEB_GH_ONCE);
	if (r == 0 && (!json_is_object(j) || comment_from_json(&cm, j) < 0))
		r = err_set(-EAGAIN, "POST /issues/%d/comments: the reply names no comment; "
			    "whether it was made is unknown", pr);
	*out_id = cm.id;
	free(cm.body);
	json_decref(j);
	free(text);
	free(url);
	strbuf_release(&rep.body);
	return r;
}

/* Sends a request that is safe to repeat and whose reply is not needed;
 * frees url and text. */
static int send_idempotent(struct web_gh_client *c, const char *method, char *url, char *text)
{
	struct web_gh_reply rep = { .body = STRBUF_INIT };
	json_t *j = NULL;
	int r;

	r = request(c, &j, &rep, method, url, text, WEB_GH_IDEMPOTENT);
	json_decref(j);
	free(text);
	free(url);
	strbuf_release(&rep.body);
	return r;
}

int web_gh_comment_edit(struct web_gh_client *c, int64_t id, const char *body)
{
	char *text;
	int r;

	r = encode(&text, json_pack("{s:s}", "body", body), "the comment");
	if (r < 0)
		return r;
	/* The same body sent twice leaves the same comment: safe to retry. */
	return send_idempotent(c, "PATCH", repo_url(c, "/issues/comments/%lld", (long long)id),
			       text);
}

int web_gh_status_set(struct web_gh_client *c, const char *sha, const char *state,
		      const char *context, const char *description, const char *target_url)
{
	char *text;
	json_t *o;
	int r;

	if (!is_sha(sha))
		return err_set(-EINVAL, "'%s' is not a full commit id", sha);
	o = json_pack("{s:s, s:s, s:s}", "state", state, "context", context, "description",
		      description);
	if (o && target_url && json_object_set_new(o, "target_url", json_string(target_url)) < 0) {
		json_decref(o);
		o = NULL;
	}
	r = encode(&text, o, "the status");
	if (r < 0)
		return r;
	/* A status set twice is the same status: safe to retry. */
	return send_idempotent(c, "POST", repo_url(c, "/statuses/%s", sha), text);
}

/* ---- issues ---- */

static int issue_from_json(void *item, json_t *j)
{
	struct web_gh_issue *is = item;
	json_t *num = json_object_get(j, "number"), *body = json_object_get(j, "body");
	const char *state = json_string_value(json_object_get(j, "state"));

	memset(is, 0, sizeof(*is));
	if (!json_is_object(j))
		return err_set(-EPROTO, "expected a JSON object");
	if (!json_is_integer(num) || json_integer_value(num) < 1 ||
	    json_integer_value(num) > 2147483647)
		return err_set(-EPROTO, "number is missing or not a positive integer");
	is->number = (int)json_integer_value(num);
	if (!state)
		return err_set(-EPROTO, "state is missing or not a string");
	is->open = !strcmp(state, "open");
	is->pull = json_object_get(j, "pull_request") != NULL;
	copy_login(is->author, j);
	/* Only its start is kept: where perfd's marker would be. */
	if (json_is_string(body)) {
		size_t n = utf8_cut(json_string_value(body), json_string_length(body),
				    WEB_GH_ISSUE_HEAD_MAX);

		memcpy(is->head, json_string_value(body), n);
		is->head[n] = '\0';
	}
	return 0;
}

/* A title as the API takes it: repaired where it is not UTF-8, no line
 * break, at most WEB_GH_TITLE_MAX characters (bytes bound them). */
static char *title_clean(const char *title)
{
	char *t = utf8_repair_dup(title), *p;

	for (p = t; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	t[utf8_cut(t, strlen(t), WEB_GH_TITLE_MAX)] = '\0';
	return t;
}

int web_gh_issue_create(struct web_gh_client *c, int *out_number, const char *title,
			const char *body)
{
	struct web_gh_reply rep = { .body = STRBUF_INIT };
	struct web_gh_issue is;
	char *url = NULL, *text = NULL, *t = title_clean(title);
	json_t *j = NULL;
	int r;

	*out_number = 0;
	r = encode(&text, json_pack("{s:s, s:s}", "title", t, "body", body), "the issue");
	free(t);
	if (r < 0)
		return r;
	url = repo_url(c, "/issues");
	r = request(c, &j, &rep, "POST", url, text, WEB_GH_ONCE);
	if (r == 0 && issue_from_json(&is, j) < 0)
		r = err_set(-EAGAIN, "POST /issues: the reply names no issue; whether it was made "
			    "is unknown");
	else if (r == 0)
		*out_number = is.number;
	json_decref(j);
	free(text);
	free(url);
	strbuf_release(&rep.body);
	return r;
}

int web_gh_issue_edit(struct web_gh_client *c, int number, const char *title, const char *body,
		      const char *state)
{
	char *text, *t = title_clean(title);
	json_t *o;
	int r;

	o = json_pack("{s:s, s:s}", "title", t, "body", body);
	free(t);
	if (o && state && json_object_set_new(o, "state", json_string(state)) < 0) {
		json_decref(o);
		o = NULL;
	}
	r = encode(&text, o, "the issue");
	if (r < 0)
		return r;
	/* The same title, body and state sent twice leave the same issue. */
	return send_idempotent(c, "PATCH", repo_url(c, "/issues/%d", number), text);
}

int web_gh_issues_mine(struct web_gh_client *c, struct web_gh_issue **out, size_t *out_n)
{
	struct item_list l = { .size = sizeof(struct web_gh_issue), .from_json = issue_from_json,
			       .what = "issues" };
	struct web_gh_reply rep = { .body = STRBUF_INIT };
	struct strbuf who = STRBUF_INIT;
	const char *login, *p;
	json_t *j = NULL;
	char *url = NULL;
	int r;

	*out = NULL;
	*out_n = 0;
	r = web_gh_login(c, &login);
	if (r < 0)
		return r;
	/* A login is letters, digits and '-', an app's with "[bot]" after. */
	for (p = login; *p; p++) {
		if (*p == '[' || *p == ']')
			strbuf_addf(&who, "%%%02X", (unsigned char)*p);
		else if (isalnum((unsigned char)*p) || *p == '-' || *p == '_')
			strbuf_addch(&who, *p);
		else
			break;
	}
	if (*p || !who.len) {
		strbuf_release(&who);
		return err_set(-EINVAL, "login '%s': not asked of the API (not a login)", login);
	}
	/* One page: a create whose reply was lost is among the newest. */
	url = repo_url(c, "/issues?state=all&creator=%s&sort=created&direction=desc&per_page=100",
		       who.buf);
	r = request(c, &j, &rep, "GET", url, NULL, WEB_GH_IDEMPOTENT);
	if (r == 0 && (r = page_items(&l, j)) < 0)
		err_set(r, "GET /issues: %s", err_last());
	json_decref(j);
	free(url);
	strbuf_release(&who);
	strbuf_release(&rep.body);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*out = l.v;
	*out_n = l.n;
	return 0;
}

int web_gh_commit_pulls(struct web_gh_client *c, struct web_gh_pull **out, size_t *out_n,
			const char *sha)
{
	struct item_list l = { .size = sizeof(struct web_gh_pull), .from_json = pull_from_json,
			       .what = "pull requests" };
	int r;

	*out = NULL;
	*out_n = 0;
	if (!is_sha(sha))
		return err_set(-EINVAL, "commit '%s': not 40 lower-case hex digits", sha);
	r = list_pages(c, repo_url(c, "/commits/%s/pulls?per_page=100", sha), page_items, &l);
	if (r < 0) {
		free(l.v);
		return r;
	}
	*out = l.v;
	*out_n = l.n;
	return 0;
}

void web_gh_client_set_login(struct web_gh_client *c, const char *login)
{
	snprintf(c->login, sizeof(c->login), "%s", login);
}

int web_gh_login(struct web_gh_client *c, const char **out)
{
	struct web_gh_reply rep = { .body = STRBUF_INIT };
	char *url;
	json_t *j = NULL;
	int r;

	if (*c->login) {
		*out = c->login;
		return 0;
	}
	url = xasprintf("%s/user", c->api);
	r = request(c, &j, &rep, "GET", url, NULL, WEB_GH_IDEMPOTENT);
	if (r == 0 && (r = copy_string(c->login, sizeof(c->login), j, "login", true)) < 0)
		err_set(r, "GET /user: %s", err_last());
	json_decref(j);
	free(url);
	strbuf_release(&rep.body);
	*out = c->login;
	return r;
}

static bool is_oid(const char *s)
{
	return s && strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

int web_hub_pulls_parse(struct web_hub_pull **out, size_t *out_n, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, 0, &jerr), *list = json_object_get(root, "pulls"), *e;
	size_t i;
	int r = 0;

	*out = NULL;
	*out_n = 0;
	if (!json_is_array(list)) {
		json_decref(root);
		return err_set(-EPROTO, "not the hub's list of pull heads (docs/hub.md)");
	}
	*out = xcalloc(json_array_size(list) + 1, sizeof(**out));
	json_array_foreach(list, i, e) {
		struct web_hub_pull *p = &(*out)[*out_n];
		const char *head = json_string_value(json_object_get(e, "head"));
		const char *base = json_string_value(json_object_get(e, "base"));
		json_t *num = json_object_get(e, "number"), *trusted = json_object_get(e, "trusted");

		if (!json_is_integer(num) || json_integer_value(num) < 1 ||
		    json_integer_value(num) > INT32_MAX || !is_oid(head) || !is_oid(base) ||
		    !json_is_boolean(trusted)) {
			r = err_set(-EPROTO, "pulls[%zu] is not a pull head (docs/hub.md)", i);
			break;
		}
		p->number = (int)json_integer_value(num);
		memcpy(p->head, head, 41);
		memcpy(p->base, base, 41);
		p->trusted = json_is_true(trusted);
		(*out_n)++;
	}
	if (r < 0) {
		free(*out);
		*out = NULL;
		*out_n = 0;
	}
	json_decref(root);
	return r;
}

/* ---- a reply's body read without a request (forge-internal.h) ---- */

static json_t *reply_json(const char *text, size_t len)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);

	if (!j)
		err_set(-EPROTO, "the reply is not JSON (line %d: %s)", je.line, je.text);
	return j;
}

/* The items of a page of JSON text into l: 0, or a negative errno (-EPROTO
 * for text that is not such a page), what l holds left for the caller to
 * free either way. */
static int read_items(struct item_list *l, const char *text, size_t len)
{
	json_t *j = reply_json(text, len);
	int r;

	if (!j)
		return -EPROTO;
	r = page_items(l, j);
	json_decref(j);
	return r;
}

/* read_items of items that own nothing: *out the caller's, or NULL and 0
 * with an error. */
static int read_flat_items(void **out, size_t *out_n, struct item_list *l, const char *text,
			   size_t len)
{
	int r = read_items(l, text, len);

	if (r < 0) {
		free(l->v);
		*out = NULL;
		*out_n = 0;
		return r;
	}
	*out = l->v;
	*out_n = l->n;
	return 0;
}

int web_gh_pulls_read(struct web_gh_pull **out, size_t *out_n, const char *text, size_t len)
{
	struct item_list l = { .size = sizeof(struct web_gh_pull), .from_json = pull_from_json,
			       .what = "pull requests" };
	void *v;
	int r = read_flat_items(&v, out_n, &l, text, len);

	*out = v;
	return r;
}

int web_gh_comments_read(struct web_gh_comment **out, size_t *out_n, const char *text,
			 size_t len)
{
	struct item_list l = { .size = sizeof(struct web_gh_comment),
			       .from_json = comment_from_json, .what = "comments" };
	int r;

	*out = NULL;
	*out_n = 0;
	r = read_items(&l, text, len);
	if (r < 0) {
		web_gh_comments_free(l.v, l.n);
		return r;
	}
	*out = l.v;
	*out_n = l.n;
	return 0;
}

int web_gh_pull_read(struct web_gh_pull *out, const char *text, size_t len)
{
	json_t *j = reply_json(text, len);
	int r;

	memset(out, 0, sizeof(*out));
	if (!j)
		return -EPROTO;
	r = pull_object(out, j);
	json_decref(j);
	return r;
}

int web_gh_compare_read(char out[41], const char *text, size_t len)
{
	json_t *j = reply_json(text, len);
	int r;

	out[0] = '\0';
	if (!j)
		return -EPROTO;
	r = merge_base_from_json(out, j);
	json_decref(j);
	return r;
}

int web_gh_issue_read(struct web_gh_issue *out, const char *text, size_t len)
{
	json_t *j = reply_json(text, len);
	int r;

	memset(out, 0, sizeof(*out));
	if (!j)
		return -EPROTO;
	r = issue_from_json(out, j);
	json_decref(j);
	return r;
}

int web_gh_issues_read(struct web_gh_issue **out, size_t *out_n, const char *text, size_t len)
{
	struct item_list l = { .size = sizeof(struct web_gh_issue), .from_json = issue_from_json,
			       .what = "issues" };
	void *v;
	int r = read_flat_items(&v, out_n, &l, text, len);

	*out = v;
	return r;
}
