/* perfd comment: the Markdown comment for a pull request's head commit. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-internal.h"
#include "common.h"
#include "daemon.h"
#include "forge.h"
#include "hub.h"

#define HUB_DEFAULT "http://" WEB_LISTEN_DEFAULT

const char cmd_comment_usage[] =
	"usage: perfd comment --pr N [--config FILE] [--dry-run] [--commit SHA]\n"
	"                     [--db FILE] [--hub URL]\n"
	"\n"
	"Makes pull request N's perfd comment describe its head commit: a row per\n"
	"host and case with every cell linking to its receipt on the hub, each\n"
	"host's contract runner lines, the base and head commits and the rule. It\n"
	"is rendered from stored rows only (docs/comment.md) and posted through\n"
	"the [github] section of the agent's configuration (docs/github.md): the\n"
	"comment perfd made before is edited, or one is made; nothing is sent\n"
	"when the comment says this already.\n"
	"\n"
	"options:\n"
	"  --pr N          the pull request's number\n"
	"  --config FILE   the agent's configuration: its [github] section and its\n"
	"                  database\n"
	"  --dry-run       print the comment instead of posting it\n"
	"  --commit SHA    the head commit, 40 hex digits (default: the pull\n"
	"                  request's head, asked of the API; required without\n"
	"                  --config)\n"
	"  --db FILE       database file (default: the configuration's, or\n"
	"                  ./perfd.db)\n"
	"  --hub URL       the hub the links point to (default: the configuration's\n"
	"                  hub_url, or " HUB_DEFAULT ")\n"
	"\n"
	"Exit status 2: a usage, configuration, database or API error (a refused\n"
	"token, a pull request that is not there, a commit that is not its head).\n";

enum { OPT_DB = 256, OPT_PR, OPT_DRY_RUN, OPT_COMMIT, OPT_HUB, OPT_CONFIG };

static const struct option comment_options[] = {
	{ "db", required_argument, NULL, OPT_DB },
	{ "pr", required_argument, NULL, OPT_PR },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "commit", required_argument, NULL, OPT_COMMIT },
	{ "hub", required_argument, NULL, OPT_HUB },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_comment(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	const char *hub = NULL, *commit_arg = NULL, *config = NULL;
	struct strbuf md = STRBUF_INIT, errors = STRBUF_INIT;
	struct agent_config *cfg = NULL;
	struct web_gh_client *gh = NULL;
	struct db *db = NULL;
	struct web_gh_pull pull;
	struct web_pulls pulls;
	enum web_post what;
	char commit[41];
	bool dry_run = false, db_given = false;
	int opt, pr = 0, r, ret = EXIT_USAGE;
	size_t i;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", comment_options, NULL)) != -1) {
		switch (opt) {
		case OPT_DB:
			dbo.path = optarg;
			db_given = true;
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
		case OPT_CONFIG:
			config = optarg;
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
	if (!config && !dry_run) {
		log_warnx("comment: posting needs --config FILE with a [github] section; "
			  "--dry-run prints the comment instead");
		return cli_usage_error("comment");
	}
	if (!config && !commit_arg) {
		log_warnx("comment: without --config the pull request's head cannot be asked "
			  "for: give --commit");
		return cli_usage_error("comment");
	}
	if (commit_arg &&
	    (strlen(commit_arg) != 40 || strspn(commit_arg, "0123456789abcdefABCDEF") != 40)) {
		log_warnx("comment: --commit '%s' is not a full commit id (40 hex digits)",
			  commit_arg);
		return EXIT_USAGE;
	}
	if (config) {
		r = agent_config_load(&cfg, config, &errors);
		if (r < 0) {
			fputs(errors.buf, stderr);
			log_warnx("comment: %s", err_last());
			goto out;
		}
		if (!cfg->github.on) {
			log_warnx("comment: '%s' has no [github] section", config);
			goto out;
		}
		if (!db_given)
			dbo.path = cfg->database;
		if (!hub)
			hub = cfg->github.hub_url;
		if (agent_github_client(&gh, &cfg->github, -1, NULL) < 0)
			goto out;
	}
	if (!hub)
		hub = HUB_DEFAULT;
	if (commit_arg) {
		for (i = 0; i <= 40; i++)
			commit[i] = (char)tolower((unsigned char)commit_arg[i]);
	}
	if (gh) {
		r = web_gh_pull_get(gh, &pull, pr);
		if (r < 0) {
			log_warnx("comment: %s", err_last());
			goto out;
		}
		if (!commit_arg) {
			memcpy(commit, pull.head_sha, sizeof(commit));
		} else if (strcmp(commit, pull.head_sha) && !dry_run) {
			log_warnx("comment: pull request %d's head is %s, not %s: its comment "
				  "describes its head alone", pr, pull.head_sha, commit);
			goto out;
		}
		if (!pull.open && !dry_run) {
			log_warnx("comment: pull request %d is closed", pr);
			goto out;
		}
	}
	/* Reading only: a mistyped path must not leave a new, empty database. */
	if (access(dbo.path, F_OK) < 0) {
		log_warn("comment: database '%s'", dbo.path);
		goto out;
	}
	db = cli_db_open(&dbo);
	if (!db)
		goto out;
	if (dry_run) {
		r = web_comment_render(&md, db, commit, hub, cfg ? cfg->github.comment_key : NULL,
				       WEB_COMMENT_BYTES_MAX);
		if (r < 0) {
			log_warnx("comment: pull request %d: %s", pr, err_last());
			goto out;
		}
		fwrite(md.buf, 1, md.len, stdout);
		ret = EXIT_OK;
		goto out;
	}
	pulls.gh = gh;
	pulls.db = db;
	pulls.hub_url = hub;
	pulls.key = cfg->github.comment_key;
	r = web_pull_comment_post(&what, &pulls, pr, commit);
	if (r < 0) {
		log_warnx("comment: pull request %d: %s", pr, err_last());
		goto out;
	}
	printf("pull request %d, head %s: comment %s\n", pr, commit, web_post_name(what));
	ret = EXIT_OK;
out:
	strbuf_release(&md);
	strbuf_release(&errors);
	db_close(db);
	web_gh_client_free(gh);
	agent_config_free(cfg);
	return ret;
}
