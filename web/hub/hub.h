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
 * web_server_start and web_server_free.
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
#define WEB_CONNECTIONS_MAX 256      /* connections at once, in all */
#define WEB_CONNECTIONS_PER_IP 64
#define WEB_TIMEOUT_S 15             /* an idle connection is closed after this */

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
	 * comparison, a job's end). */
	void (*on_change)(void *ctx, const char *commit, bool urgent);
	void *on_change_ctx;
	/* With ingest: the repository (OWNER/NAME) whose open pull heads
	 * GET /api/v1/hub/pulls lists to a token's holder, and GET
	 * /api/v1/pulls to anyone; NULL: none. */
	const char *repo;
	/* With repo: the hosts every pull head is measured on, and how long a
	 * host goes unheard before GET /api/v1/pulls calls it silent. */
	const char *const *expect;
	size_t nexpect;
	double silent_after_s;
};

/* Starts answering with o's files, documents and, with ingest, writes.
 * -EINVAL for a malformed listen address or a directory that is not one,
 * -ENOTSUP when TLS is asked of a libmicrohttpd built without it,
 * -EADDRINUSE (or another errno) when the address cannot be bound or TLS
 * cannot start with the certificate and key. */
int web_server_start(struct web_server **out, struct db *db, const struct web_server_opts *o);
/* 1 when listen ("ADDRESS:PORT" as above) is a loopback address (127.0.0.0/8,
 * ::1), 0 when not, -EINVAL when it is malformed. */
int web_listen_is_loopback(const char *listen);
/* The port bound (the chosen one when listen asked for port 0). */
int web_server_port(const struct web_server *s);
/* Stops answering, waits for the server's thread and frees s. */
void web_server_free(struct web_server *s);

#endif
