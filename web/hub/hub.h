/*
 * web/hub: the hub's HTTP side. A libmicrohttpd server (the only folder that
 * includes microhttpd.h; the library is opened at run time through web/dl)
 * answering a read-only JSON API under /api/v1, CSV for every list, /metrics
 * in Prometheus text format, and static files from one directory (the
 * dashboard, web/static/). docs/api.md describes every endpoint. Started to
 * accept writes, it also takes the records agents push, each with a host's
 * token (docs/hub.md), over HTTPS when given a certificate.
 *
 * Threading: the server answers from one thread of its own (MHD's internal
 * polling thread). That thread is the only user of the database handle
 * while the server runs; the caller must not touch the handle between
 * web_server_start and web_server_free. A second thread, the connection
 * guard's (guard.c), only shuts down sockets past their deadlines.
 *
 * Ownership: the server borrows db, which must outlive it; it copies
 * everything in its options. web_server_free(NULL) does nothing.
 * Errors: negative errno with a detail in err_last(). *out is zeroed on
 * entry, before anything can fail.
 */
#ifndef PERFD_WEB_HUB_H
#define PERFD_WEB_HUB_H

#include "common.h"
#include "db.h"

#define WEB_LISTEN_DEFAULT "127.0.0.1:8080"
/* The branch whose series GET /api/v1/changepoints reads when not asked,
 * the agent's [repo] default_branch's default. */
#define WEB_DEFAULT_BRANCH "main"
/* The bounds on connections (docs/hub.md, "Bounds"), each a default that
 * web_server_opts may change within its range. */
#define WEB_CONNECTIONS_MAX 256      /* connections at once, in all */
#define WEB_CONNECTIONS_MIN 16
#define WEB_CONNECTIONS_LIMIT 65536
#define WEB_HEADER_TIMEOUT_S 10.0    /* a request head whole, from the start or last answer */
#define WEB_BODY_TIMEOUT_S 60.0      /* a body read and the answer sent, from the head's end */
#define WEB_TIMEOUT_MAX_S 3600.0
#define WEB_TRUSTED_PROXIES_MAX 16
#define WEB_TIMEOUT_S 15             /* a connection without a byte either way is closed */

struct web_server;

struct web_server_opts {
	/* "ADDRESS:PORT", a numeric IPv4 address or a bracketed IPv6 one; port
	 * 0 picks a free port. */
	const char *listen;
	const char *static_dir;      /* the dashboard's files */
	const char *docs_dir;        /* Markdown documents under /docs/; NULL: none */
	/* PEM text of the certificate (chain) and its private key: HTTPS when
	 * both are set. */
	const char *tls_cert;
	const char *tls_key;
	/* Accept records (POST /api/v1/ingest/comparisons) from the hosts
	 * named, each with a token of its own (db_token_*); the database must
	 * then be open for writing. */
	bool ingest;
	const char *const *hosts;
	size_t nhosts;
	/* Called on the server's thread after a record changed what the hub
	 * holds of a head commit (a comparison of its job, the job's update, a
	 * heartbeat naming the job), with that commit; urgent for a result (a
	 * comparison, a job's end). commit is "" after an alert's update or
	 * triage changed an alert. */
	void (*on_change)(void *ctx, const char *commit, bool urgent);
	void *on_change_ctx;
	/* Called on the server's thread as /metrics answers: appends metric
	 * families of the caller's own (Prometheus text) to out. NULL: none. */
	void (*metrics)(void *ctx, struct strbuf *out);
	void *metrics_ctx;
	/* With ingest: the repository (OWNER/NAME) whose open pull heads
	 * GET /api/v1/hub/pulls lists to a token's holder, and GET
	 * /api/v1/pulls to anyone; NULL: none. */
	const char *repo;
	/* With repo: the hosts every pull head is measured on, and how long a
	 * host goes unheard before GET /api/v1/pulls calls it silent. */
	const char *const *expect;
	size_t nexpect;
	double silent_after_s;
	/* The bounds: 0 for each default above. Connections from a trusted
	 * proxy (numeric addresses) are not held to an address's share. */
	unsigned max_connections;
	double header_timeout_s;
	double body_timeout_s;
	const char *const *trusted_proxies;
	size_t ntrusted_proxies;
	/* The branch of the change points when a request names none; NULL:
	 * WEB_DEFAULT_BRANCH. */
	const char *default_branch;
};

/* Starts answering with o's files, documents and, with ingest, writes.
 * -EINVAL for a malformed listen address or a directory that is not one,
 * -ENOTSUP when TLS is asked of a libmicrohttpd built without it,
 * -EADDRINUSE (or another errno) when the address cannot be bound or TLS
 * cannot start with the certificate and key, -EMFILE when the bound on
 * connections needs more descriptors than RLIMIT_NOFILE allows (the
 * caller raises its soft limit first). */
int web_server_start(struct web_server **out, struct db *db, const struct web_server_opts *o);
/* Whether addr is a numeric IPv4 or IPv6 address (a trusted proxy's). */
bool web_address_is_valid(const char *addr);
/* 1 when listen ("ADDRESS:PORT" as above) is a loopback address (127.0.0.0/8,
 * ::1), 0 when not, -EINVAL when it is malformed. */
int web_listen_is_loopback(const char *listen);
/* The descriptors a server of max_connections (0: the default) needs. */
unsigned web_server_fds_needed(unsigned max_connections);
/* The port bound (the chosen one when listen asked for port 0). */
int web_server_port(const struct web_server *s);
/* Stops answering, waits for the server's thread and frees s. */
void web_server_free(struct web_server *s);

#endif
