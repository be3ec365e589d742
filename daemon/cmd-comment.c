/* perfd comment: the Markdown comment for a pull request's head commit. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "daemon.h"
#include "web.h"

#define HUB_DEFAULT "http://" WEB_LISTEN_DEFAULT

const char cmd_comment_usage[] =
	"usage: perfd comment --pr N --dry-run --commit SHA [--db FILE] [--hub URL]\n"
	"\n"
	"Prints the Markdown comment for pull request N's head commit: a row per\n"
	"host and case with every cell linking to its receipt on the hub, each\n"
	"host's contract runner lines, the base and head commits and the rule.\n"
	"It is rendered from stored rows only (docs/comment.md).\n"
	"\n"
	"Not built yet: perfd has no client for the pull request's host, so it\n"
	"cannot look up the pull request's head (give it with --commit) nor post\n"
	"the comment (only --dry-run, which prints it, is available).\n"
	"\n"
	"options:\n"
	"  --pr N          the pull request's number\n"
	"  --dry-run       print the comment instead of posting it (required for now)\n"
	"  --commit SHA    the head commit, 40 hex digits (required for now)\n"
	"  --db FILE       database file (default ./perfd.db)\n"
	"  --hub URL       the hub the links point to (default " HUB_DEFAULT ")\n"
	"\n"
	"Exit status 2: a usage or database error, or a request for what is not\n"
	"built yet.\n";

enum { OPT_DB = 256, OPT_PR, OPT_DRY_RUN, OPT_COMMIT, OPT_HUB };

static const struct option comment_options[] = {
	{ "db", required_argument, NULL, OPT_DB },
	{ "pr", required_argument, NULL, OPT_PR },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "commit", required_argument, NULL, OPT_COMMIT },
	{ "hub", required_argument, NULL, OPT_HUB },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_comment(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	const char *hub = HUB_DEFAULT, *commit_arg = NULL;
	struct strbuf md = STRBUF_INIT;
	struct db *db = NULL;
	char commit[41];
	bool dry_run = false;
	int opt, pr = 0, r, ret = EXIT_USAGE;
	size_t i;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", comment_options, NULL)) != -1) {
		switch (opt) {
		case OPT_DB:
			dbo.path = optarg;
			break;
		case OPT_PR:
			if (cli_parse_int(&pr, "--pr", optarg, 1, 2147483647) < 0)
				return cli_usage_error("comment");
			break;
		case OPT_DRY_RUN:
			dry_run = true;
			break;
		case OPT_COMMIT:
			commit_arg = optarg;
			break;
		case OPT_HUB:
			hub = optarg;
			break;
		case 'h':
			fputs(cmd_comment_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("comment");
		}
	}
	if (optind != argc) {
		log_warnx("comment: unexpected argument '%s'", argv[optind]);
		return cli_usage_error("comment");
	}
	if (!pr) {
		log_warnx("comment: --pr N is required");
		return cli_usage_error("comment");
	}
	if (!dry_run) {
		log_warnx("comment: posting to a pull request is not available yet; use --dry-run");
		return EXIT_USAGE;
	}
	if (!commit_arg) {
		log_warnx("comment: the pull request's head cannot be looked up yet: give --commit");
		return EXIT_USAGE;
	}
	if (strlen(commit_arg) != 40 || strspn(commit_arg, "0123456789abcdefABCDEF") != 40) {
		log_warnx("comment: --commit '%s' is not a full commit id (40 hex digits)",
			  commit_arg);
		return EXIT_USAGE;
	}
	for (i = 0; i <= 40; i++)
		commit[i] = (char)tolower((unsigned char)commit_arg[i]);
	/* Reading only: a mistyped path must not leave a new, empty database. */
	if (access(dbo.path, F_OK) < 0) {
		log_warn("comment: database '%s'", dbo.path);
		return EXIT_USAGE;
	}
	db = cli_db_open(&dbo);
	if (!db)
		goto out;
	r = web_comment_render(&md, db, commit, hub);
	if (r < 0) {
		log_warnx("comment: pull request %d: %s", pr, err_last());
		goto out;
	}
	fwrite(md.buf, 1, md.len, stdout);
	ret = EXIT_OK;
out:
	strbuf_release(&md);
	db_close(db);
	return ret;
}
