/* perfd host: a host's standing (quarantine after a GPU fault), and the
 * commits held on it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "daemon.h"
#include "runners.h"

const char cmd_host_usage[] =
	"usage: perfd host list [--db FILE]\n"
	"       perfd host clear [--db FILE] NAME\n"
	"\n"
	"A GPU fault in the kernel log while a process runs under --host quarantines\n"
	"that host: perfd pair --host refuses to run on it (exit 3) and an agent runs\n"
	"nothing on it until it is cleared. So does a process that outlives SIGKILL,\n"
	"and, at an agent's start, a step that an earlier boot left running: the\n"
	"machine went down under it. The commit that ran is held on the host too\n"
	"(docs/hosts.md, \"When the machine goes down\"). 'list' shows every host\n"
	"perfd has recorded a standing for, then the held commits; 'clear' lifts a\n"
	"quarantine, once the machine has been checked: the agent then takes other\n"
	"heads, while a held commit waits for 'perfd retry --held' (or, at a hub, a\n"
	"maintainer's '/perfd greenlight HOST' on its pull request).\n"
	"\n"
	"options:\n"
	"  --db FILE          database file (default ./perfd.db)\n";

static const struct option host_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The holds in force (of host, or every one when NULL) into *out. */
static size_t holds_load(struct db *db, struct db_hold **out, const char *host)
{
	size_t n = 0;

	if (db_hold_list(db, out, &n, host, true) < 0) {
		log_warnx("%s", err_last());
		return 0;
	}
	return n;
}

static void holds_free(struct db_hold *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		db_hold_release(&v[i]);
	free(v);
}

/* 'list': each commit held, with what it did. */
static void holds_list(struct db *db)
{
	struct db_hold *v = NULL;
	size_t n = holds_load(db, &v, NULL), i;

	if (n)
		printf("\n%-6s %-16s %s\n", "hold", "host", "held commit");
	for (i = 0; i < n; i++) {
		char *text = runner_hold_text(&v[i]);

		printf("%-6lld %-16s %s\n", (long long)v[i].id, v[i].host, text);
		free(text);
	}
	holds_free(v, n);
}

/* 'clear': what the host still holds, and how it is released. */
static void holds_said(struct db *db, const char *host, const char *path)
{
	struct db_hold *v = NULL;
	size_t n = holds_load(db, &v, host);

	if (n)
		printf("%zu commit%s still held on it, which the agent does not run: 'perfd retry "
		       "--held --db %s' releases %s\n", n, n == 1 ? "" : "s", path,
		       n == 1 ? "it" : "them");
	holds_free(v, n);
}

int cmd_host(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	struct db_host *hosts = NULL;
	struct db *db = NULL;
	const char *action;
	size_t n = 0, i;
	int opt, r, ret = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", host_options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dbo.path = optarg;
			break;
		case 'h':
			fputs(cmd_host_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("host");
		}
	}
	if (optind >= argc) {
		log_warnx("host: expected 'list' or 'clear NAME'");
		return cli_usage_error("host");
	}
	action = argv[optind];
	if (!strcmp(action, "list") && optind + 1 == argc) {
		db = cli_db_open_readonly(&dbo);
		if (!db)
			goto out;
		if (db_host_list(db, &hosts, &n) < 0) {
			log_warnx("%s", err_last());
			goto out;
		}
		printf("%-16s %-12s %-24s %s\n", "host", "standing", "since", "fault");
		for (i = 0; i < n; i++)
			printf("%-16s %-12s %-24s %s\n", hosts[i].name,
			       hosts[i].quarantined ? "quarantined" : "clear",
			       hosts[i].quarantined ? hosts[i].since : hosts[i].cleared_at,
			       hosts[i].quarantined && hosts[i].fault ? hosts[i].fault : "");
		holds_list(db);
		ret = EXIT_OK;
	} else if (!strcmp(action, "clear") && optind + 2 == argc) {
		db = cli_db_open(&dbo);
		if (!db)
			goto out;
		r = db_host_clear(db, argv[optind + 1]);
		if (r < 0) {
			log_warnx("%s", err_last());
			goto out;
		}
		printf(r ? "host '%s': quarantine lifted\n" :
		       "host '%s' was not quarantined\n", argv[optind + 1]);
		holds_said(db, argv[optind + 1], dbo.path);
		ret = EXIT_OK;
	} else {
		log_warnx("host: expected 'list' or 'clear NAME'");
		ret = cli_usage_error("host");
	}
out:
	for (i = 0; i < n; i++)
		db_host_release(&hosts[i]);
	free(hosts);
	db_close(db);
	return ret;
}
