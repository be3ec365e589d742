/*
 * The agent: its configuration and its loop. Shared by the files of daemon/
 * alone (cmd-agent.c, agent.c, agent-config.c, cmd-demo.c).
 */
#ifndef PERFD_DAEMON_AGENT_INTERNAL_H
#define PERFD_DAEMON_AGENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "common.h"
#include "runners.h"

#define AGENT_NAME_MAX 63
#define AGENT_LINE_MAX 8192        /* a configuration line */
#define AGENT_ITEMS_MAX 64         /* runners, cases, patterns, env entries */
#define AGENT_FETCH_TIMEOUT_S 600.0
/* How the agent hands the fetch token to its fetch process (perfd fetch). */
#define AGENT_FETCH_TOKEN_ENV "PERFD_FETCH_TOKEN"

struct agent_case {
	char *name;
	char *program;             /* an artifact of the build, relative to its directory */
	char **args;
	size_t nargs;
	char *metric;              /* NULL: the rule's default */
	int pairs;
	int warmup;
	double timeout_s;
};

struct agent_suite {
	char *build_command;       /* /bin/sh -c in the checkout */
	char **build_env;          /* "K=V" */
	size_t nbuild_env;
	char **artifacts;          /* glob patterns relative to the checkout */
	size_t nartifacts;
	double build_timeout_s;
	char *toolchain;           /* a command whose first line names the toolchain, or NULL */
	struct runner_contract *runners;
	size_t nrunners;
	struct agent_case *cases;
	size_t ncases;
};

enum agent_pull_base { AGENT_BASE_MERGE_BASE, AGENT_BASE_HEAD };

/* [github]: the pull requests' host (docs/github.md). */
struct agent_github {
	bool on;                   /* the section is there */
	char *api;                 /* the API's base URL */
	char *repo;                /* OWNER/NAME */
	char *token_file;
	char *login;               /* the token's login, or NULL: asked of the API */
	char **allow;              /* logins whose pull requests are built at once */
	size_t nallow;
	char *hub_url;             /* where links in comments and statuses point */
	char *comment_key;         /* tells this agent's comment from others', or NULL */
	bool comment;              /* post the comment */
	bool statuses;             /* set commit statuses */
	bool fetch_token;          /* fetch [repo] url over http(s) with the token */
	double timeout_s;
	double max_wait_s;
	int retries;
	double backoff_s;
};

struct agent_config {
	char *path;
	char *database;
	char *workdir;
	char *host;                /* a host profile (name or file), or NULL */
	double poll_s;
	char *url;
	char **branches;           /* fnmatch patterns */
	size_t nbranches;
	bool pulls;
	char *pull_base;           /* the branch pull requests merge into */
	enum agent_pull_base pull_base_mode;
	char *default_branch;
	char *suite_file;          /* the suite's file on the default branch, or NULL */
	double fetch_timeout_s;    /* [repo] timeout_s: the bound on one fetch */
	struct agent_suite suite;  /* from this file when suite_file is NULL */
	struct agent_github github;
};

/* Parses the agent configuration at path into a fresh struct. Returns 0, or
 * -EINVAL with every problem as a "file:line: message" line in errors (or
 * -errno when the file cannot be read). *out is NULL on every failure, and
 * *out of agent_suite_parse zeroed: both may be released on every path. */
int agent_config_load(struct agent_config **out, const char *path, struct strbuf *errors);
void agent_config_free(struct agent_config *c);
/* Parses a suite alone (the [build], [runner NAME] and [case NAME]
 * sections) from text; name is for messages. */
int agent_suite_parse(struct agent_suite *out, const char *text, size_t len,
		      const char *name, struct strbuf *errors);
void agent_suite_release(struct agent_suite *s);
/* The sha256 of everything that decides how a tree is built. */
void agent_suite_recipe_hash(char out[65], const struct agent_suite *s);

struct web_gh_client;
/* The client of g, with its token read from its file and kept nowhere but
 * in the client; with token_out, a copy of the token too (the caller's, to
 * zero and free). Logs its own failure; *out and *token_out are NULL then. */
int agent_github_client(struct web_gh_client **out, const struct agent_github *g, int cancel_fd,
			char **token_out);

/* ---- the loop ---- */

struct agent;

/* Opens the database, the host (profile, probe, fault watch) and the mirror
 * of the repository, and marks what a killed agent left running as
 * abandoned. cancel_fd becomes readable when the agent must stop. Logs its
 * own failures; returns a daemon EXIT_ status, with *out NULL unless
 * EXIT_OK. */
int agent_open(struct agent **out, struct agent_config *cfg, int cancel_fd);
void agent_free(struct agent *a);
/* The host name its rows carry: the profile's, else this machine's. */
const char *agent_host(const struct agent *a);
/* Fetches, and queues a job for every watched head at a new commit. */
int agent_poll(struct agent *a);
/* Does every queued job: builds, contract runners, comparisons. Returns 0,
 * -ECANCELED when stopped, or a negative errno on a database error. */
int agent_work(struct agent *a);
/* Prints what the agent has done, a line per job. */
void agent_summary(struct agent *a, FILE *f);

#endif
