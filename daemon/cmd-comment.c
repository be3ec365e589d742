/* perfd comment: the Markdown comment for a pull request's head commit. */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
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

struct comment_cli {
	struct db_opts dbo;
	const char *hub, *commit_arg, *config;
	bool dry_run, db_given;
	int pr;
};

/* Parses and checks argv into c. Returns -1 to go on, else the exit
 * status (0 after --help). */
static int comment_parse(struct comment_cli *c, int argc, char **argv)
{
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", comment_options, NULL)) != -1) {
		switch (opt) {
		case OPT_DB:
			c->dbo.path = optarg;
			c->db_given = true;
			break;
		case OPT_PR:
			if (cli_parse_int(&c->pr, "--pr", optarg, 1, 2147483647) < 0)
				return cli_usage_error("comment");
			break;
		case OPT_DRY_RUN:
			c->dry_run = true;
			break;
		case OPT_COMMIT:
			c->commit_arg = optarg;
			break;
		case OPT_HUB:
			c->hub = optarg;
			break;
		case OPT_CONFIG:
			c->config = optarg;
			break;
		case 'h':
			fputs(cmd_comment_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("comment");
		}
	}
	if (optind != argc)
		return cli_extra_argument("comment", argv[optind]);
	if (!c->pr) {
		log_warnx("comment: --pr N is required");
		return cli_usage_error("comment");
	}
	if (!c->config && !c->dry_run) {
		log_warnx("comment: posting needs --config FILE with a [github] section; "
			  "--dry-run prints the comment instead");
		return cli_usage_error("comment");
	}
	if (!c->config && !c->commit_arg) {
		log_warnx("comment: without --config the pull request's head cannot be asked "
			  "for: give --commit");
		return cli_usage_error("comment");
	}
	if (c->commit_arg && (strlen(c->commit_arg) != 40 ||
			      strspn(c->commit_arg, "0123456789abcdefABCDEF") != 40)) {
		log_warnx("comment: --commit '%s' is not a full commit id (40 hex digits)",
			  c->commit_arg);
		return EXIT_USAGE;
	}
	return -1;
}

/* The configuration's database, hub and client, when --config is given;
 * 0, or -1 after saying why. */
static int comment_config(struct comment_cli *c, struct agent_config **cfg,
			  struct web_gh_client **gh)
{
	struct strbuf errors = STRBUF_INIT;
	int r;

	r = agent_config_load(cfg, c->config, &errors);
	fputs(errors.buf, stderr);
	strbuf_release(&errors);
	if (r < 0) {
		log_warnx("comment: %s", err_last());
		return -1;
	}
	if (!(*cfg)->github.on) {
		log_warnx("comment: '%s' has no [github] section", c->config);
		return -1;
	}
	if (!c->db_given)
		c->dbo.path = (*cfg)->database;
	if (!c->hub)
		c->hub = (*cfg)->github.hub_url;
	if (forge_client(gh, &(*cfg)->github, -1, NULL) < 0) {
		log_warnx("%s", err_last());
		return -1;
	}
	return 0;
}

/* The head commit to describe into commit: --commit, checked against the
 * pull request's head when the API can be asked, or that head. 0, or -1
 * after saying why. */
static int comment_head(char commit[41], const struct comment_cli *c, struct web_gh_client *gh)
{
	struct web_gh_pull pull;
	size_t i;

	if (c->commit_arg) {
		for (i = 0; i <= 40; i++)
			commit[i] = (char)tolower((unsigned char)c->commit_arg[i]);
	}
	if (!gh)
		return 0;
	if (web_gh_pull_get(gh, &pull, c->pr) < 0) {
		log_warnx("comment: %s", err_last());
		return -1;
	}
	if (!c->commit_arg) {
		memcpy(commit, pull.head_sha, 41);
	} else if (strcmp(commit, pull.head_sha) && !c->dry_run) {
		log_warnx("comment: pull request %d's head is %s, not %s: its comment "
			  "describes its head alone", c->pr, pull.head_sha, commit);
		return -1;
	}
	if (!pull.open && !c->dry_run) {
		log_warnx("comment: pull request %d is closed", c->pr);
		return -1;
	}
	return 0;
}

int cmd_comment(int argc, char **argv)
{
	struct comment_cli c = { .dbo = DB_OPTS_INIT };
	struct strbuf md = STRBUF_INIT;
	struct agent_config *cfg = NULL;
	struct web_gh_client *gh = NULL;
	struct db *db = NULL;
	struct web_pulls pulls = { 0 };
	enum web_post what;
	char commit[41];
	int r, ret;

	ret = comment_parse(&c, argc, argv);
	if (ret >= 0)
		return ret;
	ret = EXIT_USAGE;
	if (c.config && comment_config(&c, &cfg, &gh) < 0)
		goto out;
	if (!c.hub)
		c.hub = HUB_DEFAULT;
	if (comment_head(commit, &c, gh) < 0)
		goto out;
	/* Reading only: a mistyped path must not leave a new, empty database. */
	if (access(c.dbo.path, F_OK) < 0) {
		log_warn("comment: database '%s'", c.dbo.path);
		goto out;
	}
	db = c.dry_run ? cli_db_open_readonly(&c.dbo) : cli_db_open(&c.dbo);
	if (!db)
		goto out;
	if (c.dry_run) {
		r = web_comment_render(&md, db, commit, c.pr, c.hub, cfg ? cfg->github.comment_key : NULL,
				       WEB_COMMENT_BYTES_MAX, NULL);
		if (r < 0) {
			log_warnx("comment: pull request %d: %s", c.pr, err_last());
			goto out;
		}
		fwrite(md.buf, 1, md.len, stdout);
		ret = EXIT_OK;
		goto out;
	}
	pulls.gh = gh;
	pulls.db = db;
	pulls.hub_url = c.hub;
	pulls.key = cfg->github.comment_key;
	r = web_pull_comment_post(&what, &pulls, c.pr, commit);
	if (r < 0) {
		log_warnx("comment: pull request %d: %s", c.pr, err_last());
		goto out;
	}
	printf("pull request %d, head %s: comment %s\n", c.pr, commit, web_post_name(what));
	ret = EXIT_OK;
out:
	strbuf_release(&md);
	db_close(db);
	web_gh_client_free(gh);
	agent_config_free(cfg);
	return ret;
}
