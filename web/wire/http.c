/*
 * One small HTTP client on libcurl, the only file that includes curl.h:
 * the agent's exchanges with its hub, and each request of web/forge's
 * GitHub client. libcurl is opened at run time, at the first connection
 * made, not linked (web/dl says why).
 *
 * Every request is bounded: its time, the reply's size, and a stop
 * (cancel_fd readable) ends it at once. A token goes in one header to the
 * URL asked alone: redirects are not followed. Nothing here logs; errors
 * come back as a negative errno with a detail that never holds the token.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dl.h"
#include "wire.h"

struct wire_http_conn {
	CURL *curl;
};

/* libcurl, opened at the first connection (web/dl). */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *h);
	void (*easy_reset)(CURL *h);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	CURLcode (*easy_perform)(CURL *h);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode e);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	time_t (*getdate)(const char *s, const time_t *unused);
} lc;

static int curl_open(void)
{
	static void *lib;
	static const struct web_dl_symbol syms[] = {
		{ "curl_global_init", (void **)&lc.global_init },
		{ "curl_easy_init", (void **)&lc.easy_init },
		{ "curl_easy_cleanup", (void **)&lc.easy_cleanup },
		{ "curl_easy_reset", (void **)&lc.easy_reset },
		{ "curl_easy_setopt", (void **)&lc.easy_setopt },
		{ "curl_easy_perform", (void **)&lc.easy_perform },
		{ "curl_easy_getinfo", (void **)&lc.easy_getinfo },
		{ "curl_easy_strerror", (void **)&lc.easy_strerror },
		{ "curl_slist_append", (void **)&lc.slist_append },
		{ "curl_slist_free_all", (void **)&lc.slist_free_all },
		{ "curl_getdate", (void **)&lc.getdate },
	};
	bool fresh = !lib;
	int r;

	r = web_dl_open(&lib, "libcurl.so.4", "libcurl4", syms, ARRAY_SIZE(syms));
	if (r == 0 && fresh && lc.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		r = err_set(-ENOMEM, "libcurl could not be set up");
	return r;
}

/* ---- the token ---- */

int wire_http_token_read(char **out, const char *path)
{
	char buf[WIRE_HTTP_TOKEN_MAX + 2];
	struct stat st;
	ssize_t n;
	size_t len, i;
	int fd;

	*out = NULL;
	/* Not blocking at the open: a FIFO would wait for a writer for ever. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return err_set(-errno, "token file '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(-EINVAL, "token file '%s': not a regular file", path);
	}
	if (st.st_mode & 077) {
		close(fd);
		return err_set(-EPERM, "token file '%s' is mode %04o: others than its owner can "
			       "read it; refused: chmod 600 '%s'", path,
			       (unsigned)(st.st_mode & 07777), path);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return err_set(-errno, "token file '%s': %s", path, strerror(errno));
	len = (size_t)n;
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	if (len == 0)
		return err_set(-EINVAL, "token file '%s' is empty", path);
	if (len > WIRE_HTTP_TOKEN_MAX)
		return err_set(-EINVAL, "token file '%s' holds more than %d bytes: not a token",
			       path, WIRE_HTTP_TOKEN_MAX);
	/* The token goes into a header line: printable, no blanks. Which byte
	 * is wrong is said, never the token. */
	for (i = 0; i < len; i++) {
		if (buf[i] <= ' ' || buf[i] >= 0x7f) {
			explicit_bzero(buf, sizeof(buf));
			return err_set(-EINVAL, "token file '%s': byte %zu is a blank, a control "
				       "or a non-ASCII character; expected the token alone on one "
				       "line", path, i + 1);
		}
	}
	*out = xstrndup(buf, len);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/* ---- a connection ---- */

int wire_http_conn_new(struct wire_http_conn **out)
{
	CURL *curl;
	int r;

	*out = NULL;
	r = curl_open();
	if (r < 0)
		return r;
	curl = lc.easy_init();
	if (!curl)
		return err_set(-ENOMEM, "libcurl could not be set up");
	*out = xcalloc(1, sizeof(**out));
	(*out)->curl = curl;
	return 0;
}

void wire_http_conn_free(struct wire_http_conn *c)
{
	if (!c)
		return;
	lc.easy_cleanup(c->curl);
	free(c);
}

int64_t wire_http_date(const char *s)
{
	if (curl_open() < 0)
		return -1;
	return (int64_t)lc.getdate(s, NULL);
}

/* ---- one request ---- */

/* What libcurl's callbacks share with one request. */
struct exchange {
	const struct wire_http_request *rq;
	struct strbuf *body;
	bool too_big;
};

/* libcurl calls this at least once a second during a request: a stop
 * (cancel_fd readable) aborts the request in hand instead of waiting out
 * its timeout. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	const struct exchange *x = ctx;
	struct pollfd p = { .fd = x->rq->cancel_fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct exchange *x = ctx;
	size_t max = x->rq->max, room = max > x->body->len ? max - x->body->len : 0;

	if (x->rq->cut) {
		strbuf_add(x->body, data, n < room ? n : room);
		return n;
	}
	if (n > room) {
		x->too_big = true;
		return 0;               /* curl stops with CURLE_WRITE_ERROR */
	}
	strbuf_add(x->body, data, n);
	return n;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	const struct exchange *x = ctx;

	x->rq->on_header(x->rq->ctx, data, n);
	return n;
}

/* The request's header lines: the User-Agent, the caller's, and the
 * body's type; NULL when libcurl has no memory for them. */
static struct curl_slist *header_lines(const struct wire_http_request *rq)
{
	struct curl_slist *h = NULL, *next;
	char ua[64];
	size_t i;

	snprintf(ua, sizeof(ua), "User-Agent: perfd/%s", PERFD_VERSION);
	h = lc.slist_append(h, ua);
	for (i = 0; h && rq->headers && rq->headers[i]; i++) {
		next = lc.slist_append(h, rq->headers[i]);
		if (!next)
			lc.slist_free_all(h);
		h = next;
	}
	if (h && rq->body) {
		next = lc.slist_append(h, "Content-Type: application/json");
		if (!next)
			lc.slist_free_all(h);
		h = next;
	}
	return h;
}

static void set_options(CURL *curl, struct exchange *x, struct curl_slist *h)
{
	const struct wire_http_request *rq = x->rq;

	lc.easy_setopt(curl, CURLOPT_URL, rq->url);
	lc.easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	lc.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
	lc.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	lc.easy_setopt(curl, CURLOPT_HTTPHEADER, h);
	if (strcmp(rq->method, rq->body ? "POST" : "GET"))
		lc.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, rq->method);
	/* libcurl sends a request again, by itself, when the kept-alive
	 * connection it went on closes before any answer: a request sent once
	 * goes on a connection of its own, so that it never is. */
	if (rq->fresh)
		lc.easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);
	if (rq->body) {
		lc.easy_setopt(curl, CURLOPT_POSTFIELDS, rq->body);
		lc.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
	}
	lc.easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(rq->timeout_s * 1000));
	lc.easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(fmin(rq->timeout_s, 10) * 1000));
	if (rq->decode)
		lc.easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
	if (!rq->cut)
		lc.easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)rq->max);
	lc.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	lc.easy_setopt(curl, CURLOPT_WRITEDATA, x);
	if (rq->on_header) {
		lc.easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
		lc.easy_setopt(curl, CURLOPT_HEADERDATA, x);
	}
	if (rq->ca_file)
		lc.easy_setopt(curl, CURLOPT_CAINFO, rq->ca_file);
	if (rq->cancel_fd >= 0) {
		lc.easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
		lc.easy_setopt(curl, CURLOPT_XFERINFODATA, x);
		lc.easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
	}
}

/* libcurl's failure e as wire_http_conn_send returns it. */
static int failure(CURLcode e, bool too_big, size_t max)
{
	const char *what = lc.easy_strerror(e);

	if (e == CURLE_ABORTED_BY_CALLBACK)
		return err_set(-ECANCELED, "stopped");
	if (too_big || e == CURLE_FILESIZE_EXCEEDED)
		return err_set(-EFBIG, "the reply is over %zu bytes", max);
	if (e == CURLE_UNSUPPORTED_PROTOCOL || e == CURLE_URL_MALFORMAT ||
	    e == CURLE_OUT_OF_MEMORY)
		return err_set(-EINVAL, "%s", what);
	if (e == CURLE_COULDNT_CONNECT || e == CURLE_COULDNT_RESOLVE_HOST)
		return err_set(-ENOTCONN, "%s", what);
	return err_set(-EIO, "%s", what);
}

int wire_http_conn_send(struct wire_http_conn *c, struct strbuf *body,
			const struct wire_http_request *rq)
{
	struct exchange x = { .rq = rq, .body = body };
	struct curl_slist *h;
	long status = 0;
	CURLcode e;

	strbuf_reset(body);
	h = header_lines(rq);
	if (!h)
		return err_set(-ENOMEM, "libcurl could not be set up");
	lc.easy_reset(c->curl);
	set_options(c->curl, &x, h);
	e = lc.easy_perform(c->curl);
	if (e == CURLE_OK)
		lc.easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	lc.slist_free_all(h);
	if (e != CURLE_OK)
		return failure(e, x.too_big, rq->max);
	if (status < 100 || status > 599)
		return err_set(-EPROTO, "no HTTP status in the answer");
	return (int)status;
}

/* ---- the agent's exchanges with its hub ---- */

/* A POST of body (a GET when body is NULL), as wire_http_post_json says. */
static int hub_exchange(struct strbuf *reply, const struct wire_http *o, const char *url,
			const char *body, size_t len)
{
	const char *const headers[] = { o->auth, NULL };
	struct wire_http_request rq = {
		.method = body ? "POST" : "GET", .url = url, .headers = headers, .body = body,
		.len = len, .ca_file = o->ca_file, .timeout_s = o->timeout_s,
		.cancel_fd = o->cancel_fd, .max = o->max, .cut = true,
	};
	struct wire_http_conn *c;
	int r;

	strbuf_reset(reply);
	r = wire_http_conn_new(&c);
	if (r < 0)
		return r;
	r = wire_http_conn_send(c, reply, &rq);
	wire_http_conn_free(c);
	if (r < 0)
		r = err_set(r == -ECANCELED || r == -EPROTO ? r : -EIO, "%s %s: %s", rq.method, url,
			    err_last());
	return r;
}

int wire_http_post_json(struct strbuf *reply, const struct wire_http *h, const char *url,
			const char *body, size_t len)
{
	return hub_exchange(reply, h, url, body ? body : "", len);
}

int wire_http_get(struct strbuf *reply, const struct wire_http *h, const char *url)
{
	return hub_exchange(reply, h, url, NULL, 0);
}
