/* perfd serve: the hub's HTTP server over one database; with --config, the
 * hub that also accepts what agents push. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "common.h"
#include "daemon.h"
#include "hubd.h"
#include "hub.h"

/* Set by meson: where `meson install` puts the dashboard and documents. */
#ifndef PERFD_DATA_DIR
#error "PERFD_DATA_DIR must name perfd's installed data directory"
#endif

const char cmd_serve_usage[] =
	"usage: perfd serve [--db FILE] [--listen ADDR:PORT] [options]\n"
	"       perfd serve --config FILE [--check] [options]\n"
	"\n"
	"Serves the database over HTTP: the JSON API under /api/v1 (CSV with\n"
	"?format=csv), /metrics in Prometheus text format, the static files at /\n"
	"and /static/, and perfd's documents at /docs/NAME.md (the rule, which\n"
	"pull-request comments link to). docs/api.md describes every endpoint.\n"
	"With --db it only reads: any method but GET and HEAD, and any request\n"
	"body, is refused. With --config it is the hub (docs/hub.md): it also\n"
	"accepts the records agents push (builds, jobs' updates, comparisons and\n"
	"heartbeats under /api/v1/ingest/, each with a host's token from 'perfd\n"
	"token'), over HTTPS when the configuration names a certificate and key,\n"
	"and creates or migrates its database; with [github] it alone speaks to\n"
	"the pull requests' host: one comment per pull request with a row per\n"
	"host, a status per host, and the pull heads agents build; with\n"
	"alert_issues, an issue per raised alert of the default branch, which\n"
	"a listed maintainer triages by a /perfd triage comment; with\n"
	"culprit_comments, a comment on each culprit's pull request. The first\n"
	"line it logs is \"serving http(s)://ADDRESS:PORT/\".\n"
	"\n"
	"options:\n"
	"  --config FILE      the hub's configuration: its database, address, TLS\n"
	"                     certificate and key, the hosts it accepts records\n"
	"                     from, its bounds on connections (deadlines, a share\n"
	"                     per address, trusted proxies) and [github]; not\n"
	"                     with --db or --listen\n"
	"  --check            with --config: print \"configuration OK\" or every\n"
	"                     mistake as FILE:LINE: message, and exit\n"
	"  --db FILE          database file (default ./perfd.db)\n"
	"  --listen ADDR:PORT numeric address and port (default " WEB_LISTEN_DEFAULT ");\n"
	"                     port 0 picks a free one; [::1]:PORT for IPv6\n"
	"  --static DIR       the static files (default " PERFD_DATA_DIR "/static,\n"
	"                     or the source tree's web/static for a perfd run from\n"
	"                     its build tree)\n"
	"  --docs DIR         the documents (default " PERFD_DATA_DIR "/docs, or\n"
	"                     the source tree's docs/ likewise)\n"
	"\n"
	"Every connection's request head is due within 10 s of its start and its\n"
	"body and answer within 60 s of the head's end, however the bytes trickle\n"
	"in; at most 256 connections at once, shared fairly between addresses\n"
	"when crowded (docs/hub.md, \"Bounds\"). It raises its own descriptor\n"
	"limit as far as that bound needs.\n"
	"\n"
	"SIGINT or SIGTERM stops it; it then exits 0. Exit status 2: a usage,\n"
	"configuration, address or database error.\n";

enum { OPT_DB = 256, OPT_LISTEN, OPT_STATIC, OPT_DOCS, OPT_CONFIG, OPT_CHECK };

static const struct option serve_options[] = {
	{ "db", required_argument, NULL, OPT_DB },
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "static", required_argument, NULL, OPT_STATIC },
	{ "docs", required_argument, NULL, OPT_DOCS },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* "accepting records of hosts a, b" or that it accepts none. */
static void log_hosts(const struct hub_config *cfg)
{
	struct strbuf sb = STRBUF_INIT;
	size_t i;

	for (i = 0; i < cfg->nhosts; i++)
		strbuf_addf(&sb, "%s'%s'", i ? ", " : "", cfg->hosts[i]);
	if (cfg->nhosts)
		log_info("accepting records of host%s %s", cfg->nhosts > 1 ? "s" : "", sb.buf);
	else
		log_info("accepting no records: '%s' names no hosts", cfg->path);
	strbuf_release(&sb);
}

/* A connection is a descriptor: the soft RLIMIT_NOFILE is raised towards
 * the hard one as far as the bound on connections needs (the server says
 * so at start when even the hard limit is too low). */
static void raise_nofile(unsigned need)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_warn("setrlimit RLIMIT_NOFILE %llu", (unsigned long long)rl.rlim_cur);
}

/* What a hub's configuration sets of the server (its database: hub_db_open). */
static void opts_from_config(struct web_server_opts *wo, const struct hub_config *cfg)
{
	wo->listen = cfg->listen;
	wo->tls_cert = cfg->cert_pem;
	wo->tls_key = cfg->key_pem;
	wo->ingest = true;
	wo->hosts = (const char *const *)cfg->hosts;
	wo->nhosts = cfg->nhosts;
	wo->max_connections = cfg->max_connections;
	wo->header_timeout_s = cfg->header_timeout_s;
	wo->body_timeout_s = cfg->body_timeout_s;
	wo->trusted_proxies = (const char *const *)cfg->trusted_proxies;
	wo->ntrusted_proxies = cfg->ntrusted_proxies;
	wo->default_branch = cfg->default_branch;
}

/* Runs the hub's loop with the pull requests' host (forge, or NULL) until
 * a signal of sfd stops it. Returns the verb's exit status. */
static int serve_loop(int sfd, struct hub_forge *forge)
{
	struct signalfd_siginfo si;
	struct pollfd pfd[2];

	pfd[0].fd = sfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = forge ? hub_forge_fd(forge) : -1;
	pfd[1].events = POLLIN;
	for (;;) {
		int n = poll(pfd, 2, forge ? hub_forge_timeout_ms(forge) : -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_warn("poll");
			return EXIT_USAGE;
		}
		if ((pfd[0].revents & POLLIN) && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			break;
		if (forge)
			hub_forge_run(forge);
	}
	log_info("%s: stopped", si.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM");
	return EXIT_OK;
}

/* Reads serve's arguments into dbo, wo, config and check. Returns -1 to
 * go on, or the verb's exit status (--help, or a usage error said). */
static int serve_args(int argc, char **argv, struct db_opts *dbo, struct web_server_opts *wo,
		      const char **config, bool *check)
{
	bool db_given = false;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", serve_options, NULL)) != -1) {
		switch (opt) {
		case OPT_DB:
			dbo->path = optarg;
			db_given = true;
			break;
		case OPT_LISTEN:
			wo->listen = optarg;
			db_given = true;
			break;
		case OPT_STATIC:
			wo->static_dir = optarg;
			break;
		case OPT_DOCS:
			wo->docs_dir = optarg;
			break;
		case OPT_CONFIG:
			*config = optarg;
			break;
		case OPT_CHECK:
			*check = true;
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
	if (*config && db_given) {
		log_warnx("serve: --config names the database and the address: --db and --listen "
			  "go without it");
		return cli_usage_error("serve");
	}
	if (*check && !*config) {
		log_warnx("serve: --check checks the configuration named with --config");
		return cli_usage_error("serve");
	}
	return -1;
}

/* perfd serve --config --check: the configuration, and [github]'s token
 * file read as the hub would read it (a file others may read is refused;
 * nothing is sent). Returns the verb's exit status. */
static int serve_check(const struct hub_config *cfg)
{
	if (cfg->github.on && forge_check(&cfg->github) < 0) {
		log_warnx("%s", err_last());
		return EXIT_USAGE;
	}
	printf("configuration OK\n");
	return EXIT_OK;
}

int cmd_serve(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	struct web_server_opts wo = {
		.listen = WEB_LISTEN_DEFAULT,
		.static_dir = datadir_path(DATADIR_STATIC),
		.docs_dir = datadir_path(DATADIR_DOCS),
	};
	struct strbuf errors = STRBUF_INIT;
	struct hub_config *cfg = NULL;
	const char *config = NULL;
	struct web_server *srv = NULL;
	struct hub_forge *forge = NULL;
	struct db *db = NULL;
	bool check = false;
	int r, sfd = -1, ret;

	ret = serve_args(argc, argv, &dbo, &wo, &config, &check);
	if (ret >= 0)
		return ret;
	ret = EXIT_USAGE;
	if (config) {
		r = hub_config_load(&cfg, config, &errors);
		if (r < 0) {
			fputs(errors.buf, stderr);
			log_warnx("%s", err_last());
			goto out;
		}
		if (check) {
			ret = serve_check(cfg);
			goto out;
		}
		opts_from_config(&wo, cfg);
	}
	raise_nofile(web_server_fds_needed(wo.max_connections));
	/* Blocked before the server's thread starts, so that thread inherits
	 * the mask and the signals reach the signalfd alone. */
	signal(SIGPIPE, SIG_IGN);
	sfd = cli_signal_fd((const int[]){ SIGINT, SIGTERM, 0 });
	if (sfd < 0)
		goto out;
	/* The hub writes what it ingests; a plain server only reads. */
	db = cfg ? hub_db_open(cfg) : cli_db_open_readonly(&dbo);
	if (!db)
		goto out;
	if (cfg && cfg->github.on) {
		r = hub_forge_open(&forge, cfg, sfd);
		if (r < 0) {
			log_warnx("%s", err_last());
			goto out;
		}
		wo.on_change = hub_forge_kick;
		wo.on_change_ctx = forge;
		wo.metrics = hub_forge_metrics;
		wo.metrics_ctx = forge;
		wo.repo = cfg->github.repo;
		wo.expect = (const char *const *)cfg->expect;
		wo.nexpect = cfg->nexpect;
		wo.silent_after_s = cfg->silent_after_s;
	}
	r = web_server_start(&srv, db, &wo);
	if (r < 0) {
		log_warnx("%s", err_last());
		goto out;
	}
	cli_log_url("serving", wo.tls_cert ? "https" : "http", wo.listen, web_server_port(srv));
	if (cfg)
		log_hosts(cfg);
	ret = serve_loop(sfd, forge);
out:
	/* The server's thread ends before the handle it reads is closed, and
	 * before the loop it kicks is freed. */
	web_server_free(srv);
	hub_forge_free(forge);
	db_close(db);
	hub_config_free(cfg);
	strbuf_release(&errors);
	if (sfd >= 0)
		close(sfd);
	return ret;
}
