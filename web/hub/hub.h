/*
 * web/hub: the hub's HTTP side. A libmicrohttpd server (the only folder that
 * includes microhttpd.h; the library is opened at run time through web/dl)
 * answering a read-only JSON API under /api/v1, CSV for every list, /metrics
 * in Prometheus text format, and static files from one directory (the
 * dashboard, web/static/). docs/api.md describes every endpoint.
 *
 * Threading: the server answers from one thread of its own (MHD's internal
 * polling thread). That thread is the only user of the database handle
 * while the server runs; the caller must not touch the handle between
 * web_server_start and web_server_free.
 *
 * Ownership: the server borrows db, which must outlive it; it copies
 * listen, static_dir and docs_dir. web_server_free(NULL) does nothing.
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

/* Starts answering on listen ("ADDRESS:PORT", a numeric IPv4 address or a
 * bracketed IPv6 one; port 0 picks a free port) with the files of
 * static_dir, and the Markdown documents of docs_dir under /docs/ (NULL:
 * none), which the pull-request comment links to. -EINVAL for a malformed
 * listen address or a directory that is not one, -EADDRINUSE (or another
 * errno) when the address cannot be bound. */
int web_server_start(struct web_server **out, struct db *db, const char *listen,
		     const char *static_dir, const char *docs_dir);
/* The port bound (the chosen one when listen asked for port 0). */
int web_server_port(const struct web_server *s);
/* Stops answering, waits for the server's thread and frees s. */
void web_server_free(struct web_server *s);

#endif
