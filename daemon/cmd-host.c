/* perfd host: a host's standing (quarantine after a GPU fault). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "daemon.h"

const char cmd_host_usage[] =
	"usage: perfd host list [--db FILE]\n"
	"       perfd host clear [--db FILE] NAME\n"
	"\n"
	"A GPU fault in the kernel log while a process runs under --host quarantines\n"
	"that host: perfd pair --host refuses to run on it (exit 3) until it is\n"
	"cleared. 'list' shows every host perfd has recorded a standing for;\n"
	"'clear' lifts a quarantine, once the machine has been checked.\n"
	"\n"
	"options:\n"
	"  --db FILE          database file (default ./perfd.db)\n";

static const struct option host_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

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
