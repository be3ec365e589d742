/*
 * The HTTP server: libmicrohttpd setup (HTTPS when given a certificate),
 * the checks every request passes before it is routed, static files, and
 * the one request that carries a body: a record pushed to the ingest
 * endpoint, whose token, size and host are checked before any of the body
 * is read.
 *
 * One internal polling thread (MHD_USE_INTERNAL_POLLING_THREAD with epoll
 * or poll, whichever MHD finds) answers every connection. The API reads
 * SQLite through one handle opened with SQLITE_OPEN_NOMUTEX, which is safe
 * only from one thread at a time: with one answering thread that handle
 * needs neither a mutex nor a handle per request (which would lose the
 * prepared-statement cache and re-check the schema on every request). Every
 * answer is a bounded, indexed read, so one thread keeps up; a pool of
 * threads with a handle each is the step if measurements ever say
 * otherwise.
 *
 * Every connection is also the guard's (guard.c): MHD's accept policy asks
 * it whether an address may have one more, its start and close are told
 * to it, and so are a request's head being whole (the first call of
 * on_request) and its answer being sent (on_completed), from which its
 * deadlines count.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "dl.h"
#include "hub-internal.h"
#include "hub.h"

#define RAW_URI_MAX 4096             /* bytes of the request target kept for checks */
#define REQUEST_MEMORY (32 * 1024)   /* MHD's buffer per connection: bounds the
				      * request line and headers */
#define STATIC_FILE_MAX (64 * 1024 * 1024)

/* libmicrohttpd, opened when the first server starts (web/dl). */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_fd) *create_response_from_fd;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_get_connection_values) *get_connection_values;
	__typeof__(MHD_get_connection_values_n) *get_connection_values_n;
	__typeof__(MHD_is_feature_supported) *is_feature_supported;
	__typeof__(MHD_get_connection_info) *get_connection_info;
} lm;

static int mhd_open(void)
{
	static void *lib;
	static const struct web_dl_symbol syms[] = {
		{ "MHD_start_daemon", (void **)&lm.start_daemon },
		{ "MHD_stop_daemon", (void **)&lm.stop_daemon },
		{ "MHD_get_daemon_info", (void **)&lm.get_daemon_info },
		{ "MHD_create_response_from_buffer", (void **)&lm.create_response_from_buffer },
		{ "MHD_create_response_from_fd", (void **)&lm.create_response_from_fd },
		{ "MHD_add_response_header", (void **)&lm.add_response_header },
		{ "MHD_queue_response", (void **)&lm.queue_response },
		{ "MHD_destroy_response", (void **)&lm.destroy_response },
		{ "MHD_lookup_connection_value", (void **)&lm.lookup_connection_value },
		{ "MHD_get_connection_values", (void **)&lm.get_connection_values },
		{ "MHD_get_connection_values_n", (void **)&lm.get_connection_values_n },
		{ "MHD_is_feature_supported", (void **)&lm.is_feature_supported },
		{ "MHD_get_connection_info", (void **)&lm.get_connection_info },
	};

	return web_dl_open(&lib, "libmicrohttpd.so.12", "libmicrohttpd12", syms,
			   ARRAY_SIZE(syms));
}

struct web_server {
	struct MHD_Daemon *mhd;
	struct db *db;               /* borrowed; used by the MHD thread alone */
	char *static_root;           /* realpath of the static directory */
	char *docs_root;             /* realpath of the documents' directory, or NULL */
	int port;
	struct web_counters counters;
	bool ingest;                 /* accepts records from hosts */
	char **hosts;                /* the hosts whose records it accepts */
	size_t nhosts;
	char *tls_cert, *tls_key;    /* PEM text, or NULL for plain HTTP */
	void (*on_change)(void *ctx, const char *commit, bool urgent);
	void *on_change_ctx;
	char *repo;                  /* [github] repo: the pull heads agents read, or NULL */
	char **expect;               /* the hosts each pull head is measured on */
	struct web_api_pulls pulls;  /* what GET /api/v1/pulls lists: the above */
	char *default_branch;        /* of GET /api/v1/changepoints */
	struct web_guard guard;      /* deadlines and shares; started when guarded */
	bool guarded;
};

/* What is known of a request before MHD routes it. */
struct request {
	char *raw;                   /* the target as sent, NULL when over RAW_URI_MAX */
	bool called;                 /* the first call of on_request is over */
	bool head;                   /* on_request was called: the head is whole */
	int ingest;                  /* a record's body is being read, for who: INGEST_* */
	int64_t alert;               /* the alert a triage names */
	struct web_identity who;
	struct strbuf body;
};

/* The guard's entry of conn (NULL if none). */
static struct web_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		lm.get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* The request line is read: the request's state begins, and the guard
 * learns that the rest of the head is the client's to send. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct web_server *s = cls;
	struct request *rq = xcalloc(1, sizeof(*rq));

	if (strlen(uri) <= RAW_URI_MAX)
		rq->raw = xstrdup(uri);
	strbuf_init(&rq->body);
	web_guard_heard(&s->guard, conn_of(conn));
	return rq;
}

/* MHD's accept policy: the guard's share and bound. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct web_server *s = cls;

	return web_guard_admit(&s->guard, addr) ? MHD_YES : MHD_NO;
}

/* A connection's start and close, each on the server's thread. MHD closes
 * the descriptor after the close notification, so the guard's entry is
 * gone before the number can be handed to another connection. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct web_server *s = cls;
	const union MHD_ConnectionInfo *fd, *addr;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		web_guard_remove(&s->guard, *socket_context);
		*socket_context = NULL;
		return;
	}
	fd = lm.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = lm.get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	*socket_context = fd && addr ? web_guard_add(&s->guard, fd->connect_fd, addr->client_addr) :
			  NULL;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct web_server *s = cls;
	struct request *rq = *con_cls;

	web_guard_phase(&s->guard, conn_of(conn), WEB_PHASE_IDLE);
	if (!rq)
		return;
	free(rq->raw);
	strbuf_release(&rq->body);
	free(rq);
	*con_cls = NULL;
}

struct param_walk {
	struct web_params params;
	bool bad;                    /* the detail is in err_last() */
};

static enum MHD_Result add_param(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct param_walk *w = cls;

	if (web_params_add(&w->params, key, value) < 0) {
		w->bad = true;
		return MHD_NO;  /* the first bad parameter stops the walk */
	}
	return MHD_YES;
}

struct header_walk {
	unsigned lengths;            /* Content-Length headers */
	unsigned hosts;              /* Host headers */
	const char *bad;             /* what is wrong with a header's name or value */
};

static enum MHD_Result walk_header(void *cls, enum MHD_ValueKind kind, const char *key,
				   size_t key_size, const char *value, size_t value_size)
{
	struct header_walk *w = cls;

	if (!strcasecmp(key, "Content-Length"))
		w->lengths++;
	if (!strcasecmp(key, "Host"))
		w->hosts++;
	if (w->bad)
		return MHD_YES;
	if (key_size == 0)
		w->bad = "a header with no name";
	else if (strpbrk(key, " \t"))
		w->bad = "a header's name holds a blank (no blank may stand before its ':')";
	else if (memchr(key, '\r', key_size) || strlen(key) != key_size)
		w->bad = "a header's name holds a CR or NUL";
	else if (value && (memchr(value, '\r', value_size) || strlen(value) != value_size))
		w->bad = "a header's value holds a CR or NUL";
	return MHD_YES;
}

/* Why the request's headers cannot frame it, or NULL (RFC 9112 says to
 * refuse each of these): two Content-Length headers would leave which one
 * frames the body to whoever reads it, a proxy or this server; two Host
 * headers, or none on HTTP/1.1, leave which site is asked to the reader;
 * a blank in a header's name ("Content-Length : 10"), a name that is
 * empty, and a CR or NUL in a name or value hide a header that a proxy may
 * have read otherwise. */
static const char *headers_refused(struct MHD_Connection *conn, const char *version)
{
	struct header_walk w = { 0 };

	lm.get_connection_values_n(conn, MHD_HEADER_KIND, walk_header, &w);
	if (w.lengths > 1)
		return "more than one Content-Length header";
	if (w.hosts > 1)
		return "more than one Host header";
	if (w.hosts == 0 && version && !strcmp(version, MHD_HTTP_VERSION_1_1))
		return "no Host header (HTTP/1.1 requires one)";
	return w.bad;
}

/* Whether the If-None-Match header names etag (or is "*"). */
static bool etag_matches(const char *header, const char *etag)
{
	const char *p;
	size_t n = strlen(etag);

	if (!header)
		return false;
	if (!strcmp(header, "*"))
		return true;
	for (p = strstr(header, etag); p; p = strstr(p + 1, etag)) {
		bool start = p == header || p[-1] == ' ' || p[-1] == ',' || p[-1] == '/';
		bool end = p[n] == '\0' || p[n] == ',' || p[n] == ' ';

		if (start && end)
			return true;
	}
	return false;
}

/*
 * allow: the Allow header of a 405 (NULL: GET, HEAD). An answer with an
 * entity tag (web_reply.etag) is kept by a client only if revalidated
 * (no-cache rather than no-store), and a request naming that tag in
 * If-None-Match is answered 304 without the body.
 */
static enum MHD_Result send_reply_allow(struct web_server *s, struct MHD_Connection *conn,
					struct web_reply *rp, bool is_api, const char *allow)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	bool tagged = rp->status == MHD_HTTP_OK && rp->etag[0];
	int status = rp->status;

	if (tagged && etag_matches(lm.lookup_connection_value(conn, MHD_HEADER_KIND,
							      "If-None-Match"), rp->etag))
		status = MHD_HTTP_NOT_MODIFIED;
	if (status == MHD_HTTP_NOT_MODIFIED) {
		resp = lm.create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	} else {
		/* The body's buffer is handed over, not copied: MHD frees it with
		 * the response (or here, when none could be made). */
		size_t len = rp->body.len;
		char *body = strbuf_detach(&rp->body);

		resp = lm.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
		if (!resp)
			free(body);
	}
	if (!resp)
		return MHD_NO;
	if (status != MHD_HTTP_NOT_MODIFIED)
		lm.add_response_header(resp, "Content-Type", rp->type);
	lm.add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (tagged)
		lm.add_response_header(resp, "ETag", rp->etag);
	if (is_api)
		lm.add_response_header(resp, "Cache-Control", tagged ? "no-cache" : "no-store");
	if (status == 405)
		lm.add_response_header(resp, "Allow", allow ? allow : "GET, HEAD");
	if (status == 401)
		lm.add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"perfd\"");
	ret = lm.queue_response(conn, (unsigned)status, resp);
	lm.destroy_response(resp);
	web_counters_add(&s->counters, status);
	return ret;
}

static enum MHD_Result send_reply(struct web_server *s, struct MHD_Connection *conn,
				  struct web_reply *rp, bool is_api)
{
	return send_reply_allow(s, conn, rp, is_api, NULL);
}

static enum MHD_Result send_error_allow(struct web_server *s, struct MHD_Connection *conn,
					int status, const char *msg, const char *allow)
{
	struct web_reply rp = { .status = status, .body = STRBUF_INIT };
	enum MHD_Result ret;

	web_reply_error(&rp, status, msg);
	ret = send_reply_allow(s, conn, &rp, true, allow);
	strbuf_release(&rp.body);
	return ret;
}

static enum MHD_Result send_error(struct web_server *s, struct MHD_Connection *conn, int status,
				  const char *msg)
{
	return send_error_allow(s, conn, status, msg, NULL);
}

static const char *content_type(const char *name)
{
	static const struct { const char *ext, *type; } types[] = {
		{ ".html", "text/html; charset=utf-8" }, { ".js", "text/javascript; charset=utf-8" },
		{ ".mjs", "text/javascript; charset=utf-8" }, { ".css", "text/css; charset=utf-8" },
		{ ".json", "application/json" }, { ".svg", "image/svg+xml" },
		{ ".png", "image/png" }, { ".ico", "image/x-icon" },
		{ ".txt", "text/plain; charset=utf-8" }, { ".map", "application/json" },
		{ ".md", "text/plain; charset=utf-8" },
	};
	size_t n = strlen(name), i;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		size_t e = strlen(types[i].ext);

		if (n > e && !strcmp(name + n - e, types[i].ext))
			return types[i].type;
	}
	return "application/octet-stream";
}

/*
 * A file under root (the static or the documents' directory). The name was
 * checked by web_static_name or web_doc_name; realpath then resolves any
 * symlink and the result must still lie under the root, and O_NOFOLLOW
 * refuses a link swapped in since.
 */
static enum MHD_Result serve_file(struct web_server *s, struct MHD_Connection *conn,
				  const char *root, const char *name)
{
	struct MHD_Response *resp = NULL;
	char *joined = xasprintf("%s/%s", root, name);
	char real[PATH_MAX], etag[64];
	size_t rootlen = strlen(root);
	enum MHD_Result ret;
	struct stat stb;
	int fd = -1;

	if (!realpath(joined, real) || strncmp(real, root, rootlen) ||
	    real[rootlen] != '/') {
		ret = send_error(s, conn, 404, "no such file");
		goto out;
	}
	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &stb) < 0 || !S_ISREG(stb.st_mode) ||
	    stb.st_size > STATIC_FILE_MAX) {
		ret = send_error(s, conn, 404, "no such file");
		goto out;
	}
	snprintf(etag, sizeof(etag), "\"%llx-%llx.%lx\"", (unsigned long long)stb.st_size,
		 (unsigned long long)stb.st_mtim.tv_sec, (unsigned long)stb.st_mtim.tv_nsec);
	if (etag_matches(lm.lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match"),
			 etag)) {
		resp = lm.create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (!resp) {
			ret = MHD_NO;
			goto out;
		}
		lm.add_response_header(resp, "ETag", etag);
		lm.add_response_header(resp, "Cache-Control", "max-age=300");
		lm.add_response_header(resp, "X-Content-Type-Options", "nosniff");
		ret = lm.queue_response(conn, MHD_HTTP_NOT_MODIFIED, resp);
		web_counters_add(&s->counters, MHD_HTTP_NOT_MODIFIED);
		goto out;
	}
	/* MHD owns fd from here, and closes it with the response. */
	resp = lm.create_response_from_fd((uint64_t)stb.st_size, fd);
	if (!resp) {
		ret = MHD_NO;
		goto out;
	}
	fd = -1;
	lm.add_response_header(resp, "Content-Type", content_type(real));
	lm.add_response_header(resp, "ETag", etag);
	lm.add_response_header(resp, "Cache-Control", "max-age=300");
	lm.add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (strstr(content_type(real), "text/html"))
		lm.add_response_header(resp, "Content-Security-Policy",
					"default-src 'self'; object-src 'none'; base-uri 'none'");
	ret = lm.queue_response(conn, MHD_HTTP_OK, resp);
	web_counters_add(&s->counters, MHD_HTTP_OK);
out:
	if (resp)
		lm.destroy_response(resp);
	if (fd >= 0)
		close(fd);
	free(joined);
	return ret;
}

static bool accepts_host(const struct web_server *s, const char *host)
{
	size_t i;

	for (i = 0; i < s->nhosts; i++)
		if (!strcmp(s->hosts[i], host))
			return true;
	return false;
}

/*
 * MHD's first call for the ingest endpoint: everything that can be said
 * before the body is read is said here, and an answer queued now makes MHD
 * close the connection without reading the body. The token comes first, so
 * that nobody without one can make the hub read a byte of a body; then the
 * host, then the length, which must be announced (a record's sender knows
 * it) and within WEB_INGEST_BODY_MAX.
 */
enum { INGEST_NONE, INGEST_COMPARISON, INGEST_JOB, INGEST_HEARTBEAT, INGEST_BUILD,
       INGEST_ALERT, INGEST_TRIAGE };

#define TRIAGE_PREFIX "/api/v1/alerts/"
#define TRIAGE_SUFFIX "/triage"

/* Which record url takes, or INGEST_NONE. */
static int ingest_kind(const char *url)
{
	size_t n = strlen(url);

	if (!strncmp(url, TRIAGE_PREFIX, strlen(TRIAGE_PREFIX)) &&
	    n > strlen(TRIAGE_PREFIX) + strlen(TRIAGE_SUFFIX) &&
	    !strcmp(url + n - strlen(TRIAGE_SUFFIX), TRIAGE_SUFFIX))
		return INGEST_TRIAGE;
	if (!strcmp(url, WEB_INGEST_ALERTS))
		return INGEST_ALERT;
	if (!strcmp(url, WEB_INGEST_COMPARISONS))
		return INGEST_COMPARISON;
	if (!strcmp(url, WEB_INGEST_JOBS))
		return INGEST_JOB;
	if (!strcmp(url, WEB_INGEST_HEARTBEAT))
		return INGEST_HEARTBEAT;
	if (!strcmp(url, WEB_INGEST_BUILDS))
		return INGEST_BUILD;
	return INGEST_NONE;
}

static enum MHD_Result ingest_start(struct web_server *s, struct MHD_Connection *conn,
				    struct request *rq, const char *url, const char *method,
				    const char *version)
{
	int kind = ingest_kind(url);
	unsigned long long max = kind == INGEST_COMPARISON || kind == INGEST_BUILD ?
				 WEB_INGEST_BODY_MAX : kind == INGEST_TRIAGE ?
				 WEB_TRIAGE_BODY_MAX : WEB_INGEST_SMALL_MAX;
	const char *length, *auth, *refused;
	char msg[160], *end;
	unsigned long long n;
	int r;

	if (strcmp(method, MHD_HTTP_METHOD_POST))
		return send_error_allow(s, conn, 405, kind == INGEST_TRIAGE ?
					"a triage is POSTed" : "this endpoint takes a record: "
					"use POST", "POST");
	if (!rq->raw || web_path_check(rq->raw, url) < 0 || strchr(rq->raw, '?'))
		return send_error(s, conn, 400, "this endpoint takes no parameters");
	if (kind == INGEST_TRIAGE) {
		const char *p = url + strlen(TRIAGE_PREFIX);
		size_t idlen = strlen(p) - strlen(TRIAGE_SUFFIX);

		errno = 0;
		rq->alert = (int64_t)strtoll(p, &end, 10);
		if (idlen > 18 || end != p + idlen || rq->alert <= 0 || *p < '0' || *p > '9')
			return send_error(s, conn, 400, "an alert's id is a positive whole number: "
					  "POST /api/v1/alerts/ID/triage");
	}
	auth = lm.lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	r = web_token_check(&rq->who, s->db, auth);
	if (r == -EACCES)
		return send_error(s, conn, 401, err_last());
	if (r < 0) {
		log_warnx("ingest: %s", err_last());
		return send_error(s, conn, 500, err_last());
	}
	if (kind == INGEST_TRIAGE && rq->who.kind != DB_TOKEN_MAINTAINER) {
		snprintf(msg, sizeof(msg), "'%s' holds a host's token: an alert's triage takes a "
			 "maintainer's", rq->who.name);
		return send_error(s, conn, 403, msg);
	}
	if (kind != INGEST_TRIAGE && rq->who.kind != DB_TOKEN_HOST) {
		snprintf(msg, sizeof(msg), "'%s' holds a maintainer's token, which does not push "
			 "a host's records", rq->who.name);
		return send_error(s, conn, 403, msg);
	}
	if (kind != INGEST_TRIAGE && !accepts_host(s, rq->who.name)) {
		snprintf(msg, sizeof(msg), "host '%s' is not among the hosts this hub accepts",
			 rq->who.name);
		return send_error(s, conn, 403, msg);
	}
	length = lm.lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	refused = headers_refused(conn, version);
	if (refused)
		return send_error(s, conn, 400, refused);
	if (!length || lm.lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding"))
		return send_error(s, conn, 411, "a record is sent with its Content-Length");
	errno = 0;
	n = strtoull(length, &end, 10);
	if (!*length || *end || errno || *length < '0' || *length > '9')
		return send_error(s, conn, 400, "Content-Length is not a number");
	if (n > max) {
		snprintf(msg, sizeof(msg), "a record of %llu bytes is over this endpoint's bound "
			 "of %llu bytes", n, max);
		return send_error(s, conn, 413, msg);
	}
	rq->ingest = kind;
	rq->called = true;
	return MHD_YES;
}

/* The last call for a record: its whole body is read. */
static enum MHD_Result ingest_answer(struct web_server *s, struct MHD_Connection *conn,
				     struct request *rq)
{
	struct web_reply rp = { .status = 500, .body = STRBUF_INIT };
	enum MHD_Result ret;

	char commit[41];
	int changed;

	if (rq->ingest == INGEST_COMPARISON)
		changed = web_ingest_comparison(&rp, s->db, &rq->who, rq->body.buf, rq->body.len,
						commit);
	else if (rq->ingest == INGEST_JOB)
		changed = web_ingest_job(&rp, s->db, &rq->who, rq->body.buf, rq->body.len, commit);
	else if (rq->ingest == INGEST_BUILD)
		changed = web_ingest_build(&rp, s->db, &rq->who, rq->body.buf, rq->body.len, commit);
	else if (rq->ingest == INGEST_ALERT)
		changed = web_ingest_alert(&rp, s->db, &rq->who, rq->body.buf, rq->body.len, commit);
	else if (rq->ingest == INGEST_TRIAGE) {
		/* A person's word on an alert: no pull request's comment changes. */
		commit[0] = '\0';
		changed = web_alert_triage(&rp, s->db, &rq->who, rq->alert, rq->body.buf,
					   rq->body.len);
	} else
		changed = web_ingest_heartbeat(&rp, s->db, &rq->who, rq->body.buf, rq->body.len,
					       commit);
	/* An alert's update or triage changes no head: "" says an alert did. */
	if (changed && s->on_change &&
	    (*commit || rq->ingest == INGEST_ALERT || rq->ingest == INGEST_TRIAGE))
		s->on_change(s->on_change_ctx, commit, changed == 2);
	ret = send_reply(s, conn, &rp, true);
	strbuf_release(&rp.body);
	strbuf_release(&rq->body);
	rq->ingest = INGEST_NONE;
	return ret;
}

/* GET /api/v1/hub/pulls: the pull heads agents build, for a token's
 * holder alone (the list names commits of pull requests that may be
 * private). */
static enum MHD_Result hub_pulls(struct web_server *s, struct MHD_Connection *conn,
				 struct request *rq)
{
	struct web_params params = { .n = 0 };
	struct web_reply rp = { .status = 500, .body = STRBUF_INIT };
	const char *auth = lm.lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	enum MHD_Result ret;
	int r;

	if (strchr(rq->raw, '?'))
		return send_error(s, conn, 400, "this endpoint takes no parameters");
	r = web_token_check(&rq->who, s->db, auth);
	if (r == -EACCES)
		return send_error(s, conn, 401, err_last());
	if (r < 0) {
		log_warnx("pulls: %s", err_last());
		return send_error(s, conn, 500, err_last());
	}
	/* What /api/v1/pulls lists, every open head at once (500 at most). */
	if (web_params_add(&params, "limit", "500") < 0) {
		web_params_release(&params);
		return send_error(s, conn, 500, err_last());
	}
	web_api_answer(&rp, s->db, &s->counters, &s->pulls, s->default_branch, "/api/v1/pulls",
		       &params);
	web_params_release(&params);
	ret = send_reply(s, conn, &rp, true);
	strbuf_release(&rp.body);
	return ret;
}

/*
 * A method other than GET or HEAD, or a request that announces a body, is
 * refused with 405 on MHD's first call, before any body is read, and MHD
 * closes that connection rather than read what follows (the server only
 * reads). Any other request is answered on the second call, once MHD knows
 * the request is complete: an answer queued on the first call would cost
 * the connection its keep-alive.
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	struct web_server *s = cls;
	struct request *rq = *con_cls;
	struct param_walk walk = { .params = { .n = 0 }, .bad = false };
	struct web_reply rp = { .status = 500, .body = STRBUF_INIT };
	const char *length, *chunked, *refused;
	char name[WEB_PATH_MAX + 1];
	enum MHD_Result ret;

	if (rq && !rq->head) {
		/* The first call: the head is whole, and the body and answer
		 * are due from now. */
		rq->head = true;
		web_guard_phase(&s->guard, conn_of(conn), WEB_PHASE_BODY);
	}
	if (*upload_data_size) {
		/* A record's body, whose announced length was checked: MHD hands
		 * no more than that. Any other body comes after an answer: the
		 * connection is dropped. */
		if (!rq || !rq->ingest || rq->body.len + *upload_data_size > WEB_INGEST_BODY_MAX)
			return MHD_NO;
		strbuf_add(&rq->body, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (rq && rq->ingest)
		return ingest_answer(s, conn, rq);
	if (s->ingest && rq && !rq->called && ingest_kind(url) != INGEST_NONE)
		return ingest_start(s, conn, rq, url, method, version);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return send_error(s, conn, 405, s->ingest ?
				  "use GET or HEAD (records are POSTed to " WEB_INGEST_COMPARISONS ")" :
				  "this server only reads: use GET or HEAD");
	length = lm.lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	chunked = lm.lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding");
	refused = headers_refused(conn, version);
	if (refused)
		return send_error(s, conn, 400, refused);
	if ((length && strcmp(length, "0")) || chunked)
		return send_error(s, conn, 405, "a request body is not accepted");
	if (rq && !rq->called) {
		rq->called = true;
		return MHD_YES;
	}
	if (!rq || !rq->raw)
		return send_error(s, conn, 400, "the request target is too long");
	if (web_path_check(rq->raw, url) < 0)
		return send_error(s, conn, 400, err_last());
	if (web_static_name(name, sizeof(name), url) == 0)
		return serve_file(s, conn, s->static_root, name);
	if (s->docs_root && web_doc_name(name, sizeof(name), url) == 0)
		return serve_file(s, conn, s->docs_root, name);
	if (s->ingest && !strcmp(url, WEB_HUB_PULLS))
		return hub_pulls(s, conn, rq);
	if (strcmp(url, "/metrics") && strncmp(url, "/api/", 5))
		return send_error(s, conn, 404, "no such page");
	if (!strcmp(url, "/metrics"))
		web_guard_stats(&s->guard, &s->counters.conns);
	lm.get_connection_values(conn, MHD_GET_ARGUMENT_KIND, add_param, &walk);
	if (walk.bad) {
		ret = send_error(s, conn, 400, err_last());
		goto out;
	}
	web_api_answer(&rp, s->db, &s->counters, &s->pulls, s->default_branch, url, &walk.params);
	ret = send_reply(s, conn, &rp, true);
out:
	strbuf_release(&rp.body);
	web_params_release(&walk.params);
	return ret;
}

/* "A.B.C.D:PORT" or "[V6]:PORT" into ss; -EINVAL naming what is wrong. */
static int parse_listen(struct sockaddr_storage *ss, socklen_t *len, const char *listen)
{
	char host[64];
	const char *colon, *port;
	size_t hlen;
	char *end;
	long p;

	memset(ss, 0, sizeof(*ss));
	if (listen[0] == '[') {
		colon = strstr(listen, "]:");
		if (!colon)
			goto bad;
		hlen = (size_t)(colon - listen - 1);
		if (hlen >= sizeof(host))
			goto bad;
		memcpy(host, listen + 1, hlen);
		port = colon + 2;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			goto bad;
		hlen = (size_t)(colon - listen);
		if (hlen >= sizeof(host))
			goto bad;
		memcpy(host, listen, hlen);
		port = colon + 1;
	}
	host[hlen] = '\0';
	errno = 0;
	p = strtol(port, &end, 10);
	if (!*port || *end || errno || p < 0 || p > 65535)
		goto bad;
	if (listen[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			goto bad;
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)p);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		*len = sizeof(*a);
	}
	return 0;
bad:
	return err_set(-EINVAL, "--listen '%s': expected ADDRESS:PORT with a numeric address "
		       "(127.0.0.1:8080, [::1]:8080) and a port from 0 to 65535", listen);
}

int web_listen_is_loopback(const char *listen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int r;

	r = parse_listen(&ss, &len, listen);
	if (r < 0)
		return r;
	if (ss.ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	return (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
}

bool web_address_is_valid(const char *addr)
{
	unsigned char key[16];

	return web_guard_address(key, addr) == 0;
}

unsigned web_server_fds_needed(unsigned max_connections)
{
	if (!max_connections)
		max_connections = WEB_CONNECTIONS_MAX;
	/* Beyond the connections: the listening socket, epoll, the database
	 * and its journal, the files being sent, the forge's client. */
	return WEB_GUARD_SLOTS(max_connections) + 64;
}

/* The bounds of o, defaults filled in, checked; -EINVAL naming one out of
 * its range, -EMFILE when RLIMIT_NOFILE is below what they need. */
static int bounds(struct web_guard_opts *g, const struct web_server_opts *o)
{
	struct rlimit rl;
	unsigned need;

	g->max_connections = o->max_connections ? o->max_connections : WEB_CONNECTIONS_MAX;
	g->header_timeout_s = o->header_timeout_s > 0 ? o->header_timeout_s : WEB_HEADER_TIMEOUT_S;
	g->body_timeout_s = o->body_timeout_s > 0 ? o->body_timeout_s : WEB_BODY_TIMEOUT_S;
	g->trusted = o->trusted_proxies;
	g->ntrusted = o->ntrusted_proxies;
	if (g->max_connections < WEB_CONNECTIONS_MIN || g->max_connections > WEB_CONNECTIONS_LIMIT)
		return err_set(-EINVAL, "max_connections %u is not from %d to %d",
			       g->max_connections, WEB_CONNECTIONS_MIN, WEB_CONNECTIONS_LIMIT);
	if (g->header_timeout_s > WEB_TIMEOUT_MAX_S || g->body_timeout_s > WEB_TIMEOUT_MAX_S)
		return err_set(-EINVAL, "a connection's deadline is over %.0f seconds",
			       WEB_TIMEOUT_MAX_S);
	if (g->ntrusted > WEB_TRUSTED_PROXIES_MAX)
		return err_set(-EINVAL, "more than %d trusted proxies", WEB_TRUSTED_PROXIES_MAX);
	need = web_server_fds_needed(g->max_connections);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < need)
		return err_set(-EMFILE, "%u connections at once need %u descriptors, and this "
			       "process may open %llu (ulimit -n; its hard limit is %llu)",
			       g->max_connections, need, (unsigned long long)rl.rlim_cur,
			       (unsigned long long)rl.rlim_max);
	return 0;
}

/* Copies what the server keeps of o into s. */
static void server_settings(struct web_server *s, struct db *db, const struct web_server_opts *o)
{
	size_t i;

	s->db = db;
	s->ingest = o->ingest;
	s->on_change = o->on_change;
	s->on_change_ctx = o->on_change_ctx;
	s->counters.more = o->metrics;
	s->counters.more_ctx = o->metrics_ctx;
	s->repo = o->repo ? xstrdup(o->repo) : NULL;
	s->expect = xcalloc(o->nexpect + 1, sizeof(char *));
	for (i = 0; o->repo && i < o->nexpect; i++)
		s->expect[s->pulls.nexpect++] = xstrdup(o->expect[i]);
	s->pulls.repo = s->repo;
	s->pulls.expect = (const char *const *)s->expect;
	s->pulls.silent_after_s = o->silent_after_s;
	s->default_branch = xstrdup(o->default_branch ? o->default_branch : WEB_DEFAULT_BRANCH);
	s->hosts = xcalloc(o->nhosts + 1, sizeof(char *));
	for (i = 0; i < o->nhosts; i++)
		s->hosts[s->nhosts++] = xstrdup(o->hosts[i]);
	if (o->tls_cert && o->tls_key) {
		s->tls_cert = xstrdup(o->tls_cert);
		s->tls_key = xstrdup(o->tls_key);
	}
}

/* The served directories, as real paths: -EINVAL naming one that is not a
 * directory. */
static int server_dirs(struct web_server *s, const char *static_dir, const char *docs_dir)
{
	char real[PATH_MAX];
	struct stat stb;

	if (!realpath(static_dir, real) || stat(real, &stb) < 0 || !S_ISDIR(stb.st_mode))
		return err_set(-EINVAL, "static directory '%s' is not a directory", static_dir);
	s->static_root = xstrdup(real);
	if (docs_dir) {
		if (!realpath(docs_dir, real) || stat(real, &stb) < 0 || !S_ISDIR(stb.st_mode))
			return err_set(-EINVAL, "documents' directory '%s' is not a directory",
				       docs_dir);
		s->docs_root = xstrdup(real);
	}
	return 0;
}

int web_server_start(struct web_server **out, struct db *db, const struct web_server_opts *o)
{
	struct web_server *s = xcalloc(1, sizeof(*s));
	const char *listen = o->listen, *static_dir = o->static_dir, *docs_dir = o->docs_dir;
	struct sockaddr_storage ss;
	struct web_guard_opts go;
	const union MHD_DaemonInfo *info;
	struct MHD_OptionItem tls[3];
	socklen_t sslen = 0;
	unsigned flags;
	int r;

	*out = NULL;
	server_settings(s, db, o);
	r = bounds(&go, o);
	if (r < 0)
		goto out;
	r = mhd_open();
	if (r < 0)
		goto out;
	if (s->tls_cert && lm.is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		r = err_set(-ENOTSUP, "this libmicrohttpd was built without TLS: HTTPS cannot be "
			    "served (Debian's libmicrohttpd12 has it)");
		goto out;
	}
	r = parse_listen(&ss, &sslen, listen);
	if (r < 0)
		goto out;
	r = server_dirs(s, static_dir, docs_dir);
	if (r < 0)
		goto out;
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* The certificate and key as an option list: empty without TLS. */
	memset(tls, 0, sizeof(tls));
	tls[0].option = tls[1].option = tls[2].option = MHD_OPTION_END;
	if (s->tls_cert) {
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key };
		tls[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert };
	}
	r = web_guard_init(&s->guard, &go);
	if (r < 0)
		goto out;
	s->guarded = true;
	/* MHD's own limit leaves room for connections the guard shut down
	 * and MHD has not closed yet; the guard keeps the bound itself. */
	errno = 0;
	s->mhd = lm.start_daemon(flags, 0, on_accept, s, on_request, s,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)WEB_GUARD_SLOTS(go.max_connections),
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)WEB_TIMEOUT_S,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)REQUEST_MEMORY,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
		MHD_OPTION_ARRAY, tls,
		MHD_OPTION_END);
	if (!s->mhd && s->tls_cert && errno != EADDRINUSE && errno != EACCES) {
		r = err_set(-EPROTO, "cannot serve HTTPS on %s: libmicrohttpd refused the "
			    "certificate and key (each PEM, and the key the certificate's?)", listen);
		goto out;
	}
	if (!s->mhd) {
		r = err_set(errno ? -errno : -EADDRINUSE, "cannot listen on %s: %s", listen,
			    errno ? strerror(errno) : "the server did not start");
		goto out;
	}
	info = lm.get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	r = 0;
out:
	if (r < 0) {
		web_server_free(s);
		return r;
	}
	*out = s;
	return 0;
}

int web_server_port(const struct web_server *s)
{
	return s->port;
}

void web_server_free(struct web_server *s)
{
	size_t i;

	if (!s)
		return;
	if (s->mhd)
		lm.stop_daemon(s->mhd);
	if (s->guarded)
		web_guard_release(&s->guard);
	free(s->static_root);
	free(s->docs_root);
	for (i = 0; i < s->nhosts; i++)
		free(s->hosts[i]);
	free(s->hosts);
	for (i = 0; i < s->pulls.nexpect; i++)
		free(s->expect[i]);
	free(s->expect);
	free(s->repo);
	free(s->default_branch);
	free(s->tls_cert);
	if (s->tls_key)
		explicit_bzero(s->tls_key, strlen(s->tls_key));
	free(s->tls_key);
	free(s);
}
