/* perfd serve: the hub's read-only HTTP server over one database. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "common.h"
#include "daemon.h"
#include "hub.h"

#ifndef PERFD_WEB_DIR
#define PERFD_WEB_DIR "web/static"
#endif
#ifndef PERFD_DOCS_DIR
#define PERFD_DOCS_DIR "docs"
#endif

const char cmd_serve_usage[] =
	"usage: perfd serve [options]\n"
	"\n"
	"Serves the database over HTTP: the JSON API under /api/v1 (CSV with\n"
	"?format=csv), /metrics in Prometheus text format, the static files at /\n"
	"and /static/, and perfd's documents at /docs/NAME.md (the rule, which\n"
	"pull-request comments link to). It only reads: any method but GET and HEAD, and any\n"
	"request body, is refused. docs/api.md describes every endpoint.\n"
	"The first line it logs is \"serving http://ADDRESS:PORT/\".\n"
	"\n"
	"options:\n"
	"  --db FILE          database file (default ./perfd.db)\n"
	"  --listen ADDR:PORT numeric address and port (default " WEB_LISTEN_DEFAULT ");\n"
	"                     port 0 picks a free one; [::1]:PORT for IPv6\n"
	"  --static DIR       the static files (default " PERFD_WEB_DIR ")\n"
	"  --docs DIR         the documents (default " PERFD_DOCS_DIR ")\n"
	"\n"
	"SIGINT or SIGTERM stops it; it then exits 0. Exit status 2: a usage,\n"
	"address or database error.\n";

enum { OPT_DB = 256, OPT_LISTEN, OPT_STATIC, OPT_DOCS };

static const struct option serve_options[] = {
	{ "db", required_argument, NULL, OPT_DB },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "static", required_argument, NULL, OPT_STATIC },
	{ "docs", required_argument, NULL, OPT_DOCS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_serve(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	const char *listen = WEB_LISTEN_DEFAULT, *static_dir = PERFD_WEB_DIR;
	const char *docs_dir = PERFD_DOCS_DIR;
	struct web_server *srv = NULL;
	struct signalfd_siginfo si;
	struct pollfd pfd;
	struct db *db = NULL;
	int opt, r, sfd = -1, ret = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", serve_options, NULL)) != -1) {
		switch (opt) {
		case OPT_DB:
			dbo.path = optarg;
			break;
		case OPT_LISTEN:
			listen = optarg;
			break;
		case OPT_STATIC:
			static_dir = optarg;
			break;
		case OPT_DOCS:
			docs_dir = optarg;
			break;
		case 'h':
			fputs(cmd_serve_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("serve");
		}
	}
	if (optind != argc)
		return cli_extra_argument("serve", argv[optind]);
	/* Blocked before the server's thread starts, so that thread inherits
	 * the mask and the signals reach the signalfd alone. */
	signal(SIGPIPE, SIG_IGN);
	sfd = cli_signal_fd((const int[]){ SIGINT, SIGTERM, 0 });
	if (sfd < 0)
		goto out;
	db = cli_db_open_readonly(&dbo);
	if (!db)
		goto out;
	r = web_server_start(&srv, db, listen, static_dir, docs_dir);
	if (r < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	cli_log_url("serving", listen, web_server_port(srv));
	pfd.fd = sfd;
	pfd.events = POLLIN;
	for (;;) {
		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_warn("poll");
			goto out;
		}
		if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			break;
	}
	log_info("%s: stopped", si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
	ret = EXIT_OK;
out:
	/* The server's thread ends before the handle it reads is closed. */
	web_server_free(srv);
	db_close(db);
	if (sfd >= 0)
		close(sfd);
	return ret;
}
