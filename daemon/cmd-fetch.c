/*
 * perfd fetch: one fetch of the agent's mirror, in a process of its own.
 * The agent runs it as a child through the launcher: libgit2 1.5 has no
 * bound on a server that accepts the connection and never answers, and a
 * child can be timed out and stopped where a call in the agent cannot.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "builder.h"
#include "common.h"
#include "daemon.h"

const char cmd_fetch_usage[] =
	"usage: perfd fetch --dir MIRROR --url URL [--pulls] [--tags]\n"
	"\n"
	"Fetches URL's branches (with --pulls also its pull-request heads, with\n"
	"--tags its tags) into the bare mirror MIRROR, as the agent does at each\n"
	"poll: the agent runs this in a child process, bounded by [repo]\n"
	"timeout_s. With\n"
	"" AGENT_FETCH_TOKEN_ENV " set in the environment, its value is given as\n"
	"the password of user x-access-token to URL's own http(s) server.\n"
	"\n"
	"On failure it prints why on stdout, one line, and exits with the error's\n"
	"errno value (2 ENOENT, 5 EIO, 13 EACCES, 27 EFBIG, 71 EPROTO,\n"
	"113 EHOSTUNREACH), which the agent reports.\n";

static const struct option fetch_options[] = {
	{ "dir", required_argument, NULL, 'd' },
	{ "url", required_argument, NULL, 'u' },
	{ "pulls", no_argument, NULL, 'p' },
	{ "tags", no_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The token leaves our environment at once: nothing we start inherits it. */
static char *take_token(void)
{
	const char *v = getenv(AGENT_FETCH_TOKEN_ENV);
	char *token = v && *v ? xstrdup(v) : NULL;

	if (v)
		explicit_bzero((char *)v, strlen(v));
	unsetenv(AGENT_FETCH_TOKEN_ENV);
	return token;
}

int cmd_fetch(int argc, char **argv)
{
	const char *dir = NULL, *url = NULL;
	struct builder_repo *repo = NULL;
	char *token = take_token();
	unsigned what = 0;
	bool usage = false;
	int opt, r;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "", fetch_options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dir = optarg;
			break;
		case 'u':
			url = optarg;
			break;
		case 'p':
			what |= BUILDER_FETCH_PULLS;
			break;
		case 't':
			what |= BUILDER_FETCH_TAGS;
			break;
		case 'h':
			fputs(cmd_fetch_usage, stdout);
			r = 0;
			goto out;
		default:
			usage = true;
			r = -EINVAL;
			goto out;
		}
	}
	if (!dir || !url || optind != argc) {
		log_warnx("fetch: expected --dir MIRROR --url URL and no other argument");
		usage = true;
		r = -EINVAL;
		goto out;
	}
	r = builder_repo_open(&repo, dir, url);
	if (r == 0 && token)
		r = builder_repo_set_credentials(repo, "x-access-token", token);
	if (r == 0)
		r = builder_repo_fetch(repo, what);
out:
	if (token) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	builder_repo_free(repo);
	if (r == 0)
		return EXIT_OK;
	if (usage)
		return cli_usage_error("fetch");
	printf("%s\n", err_last());
	return -r > 0 && -r < 126 ? -r : EIO;
}
