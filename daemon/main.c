/*
 * perfd's entry point: global flags and the verb table. What the verbs
 * share is in cli/.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>

#include "common.h"
#include "daemon.h"
#include "runners.h"

struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage;
};

static const struct verb verbs[] = {
	{ "pair", cmd_pair, "run interleaved timing pairs of OLD and NEW and store the receipt",
	  cmd_pair_usage },
	{ "show", cmd_show, "print a stored comparison (text, json, csv or md)", cmd_show_usage },
	{ "verify", cmd_verify, "recompute stored figures from the raw rows", cmd_verify_usage },
	{ "list", cmd_list, "list stored comparisons", cmd_list_usage },
	{ "probe", cmd_probe, "list Vulkan devices; check a host profile's device",
	  cmd_probe_usage },
	{ "canary", cmd_canary, "run the canary kernels and print the line protocol",
	  cmd_canary_usage },
	{ "log", cmd_log, "print a build's log and runners' output, or a job's, from the database",
	  cmd_log_usage },
	{ "retry", cmd_retry, "queue a failed job again with a fresh build; release a held commit",
	  cmd_retry_usage },
	{ "host", cmd_host, "list host standings and held commits; clear a quarantine",
	  cmd_host_usage },
	{ "agent", cmd_agent, "watch a repository: build, run contracts, compare each new head",
	  cmd_agent_usage },
	{ "alerts", cmd_alerts, "list the history's alerts; one with its bisection",
	  cmd_alerts_usage },
	{ "demo", cmd_demo, "measure the demo's history with the agent (the embedded default)",
	  cmd_demo_usage },
	{ "serve", cmd_serve, "serve the dashboard, JSON API and /metrics; with --config, the hub",
	  cmd_serve_usage },
	{ "comment", cmd_comment, "post or edit a pull request's comment, or print it (--dry-run)",
	  cmd_comment_usage },
	{ "fetch", cmd_fetch, "fetch a repository into the agent's mirror (the agent runs it, bounded)",
	  cmd_fetch_usage },
	{ "export", cmd_export, "print a stored comparison as the record the hub ingests",
	  cmd_export_usage },
	{ "token", cmd_token, "make, revoke or list the hub's tokens for hosts and maintainers",
	  cmd_token_usage },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: perfd [--version] [--help] VERB [ARGS...]\n\n"
		"perfd runs fresh processes of two programs in interleaved pairs, stores\n"
		"every process's record in SQLite and derives each figure with one fixed,\n"
		"versioned rule that anyone can recompute. As an agent it watches a git\n"
		"repository, builds each new head and compares it against its base, and\n"
		"keeps a comment and a status per host on each pull request.\n\nverbs:\n");
	for (i = 0; i < ARRAY_SIZE(verbs); i++)
		fprintf(f, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "\n'perfd VERB --help' describes a verb. Exit status: 0 success, 1 a result\n"
		"to look at (an invalid comparison, a failed verify), 2 a usage or\n"
		"environment error, 3 a required device is absent or the host is\n"
		"quarantined, 130 interrupted.\n");
}


int main(int argc, char **argv)
{
	const char *verb;
	size_t i;

	log_init("perfd", LOG_LEVEL_INFO);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	verb = argv[1];
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h") || !strcmp(verb, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(verb, "--version") || !strcmp(verb, "version")) {
		printf("perfd %s (rule %s, schema %d)\n", PERFD_VERSION, RUNNER_RULE,
		       DB_SCHEMA_VERSION);
		return EXIT_OK;
	}
	for (i = 0; i < ARRAY_SIZE(verbs); i++) {
		if (strcmp(verb, verbs[i].name))
			continue;
		if (argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
			fputs(verbs[i].usage, stdout);
			return EXIT_OK;
		}
		return verbs[i].fn(argc - 1, argv + 1);
	}
	log_warnx("unknown verb '%s'; 'perfd --help' lists them", verb);
	return EXIT_USAGE;
}
