/*
 * perfd's entry point: global flags, the verb table and the helpers every
 * verb shares.
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
	{ "host", cmd_host, "list host standings; clear a quarantine", cmd_host_usage },
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

bool cmd_wants_help(int argc, char **argv, const char *usage)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return true;
		}
	}
	return false;
}

void cli_log_url(const char *what, const char *scheme, const char *listen, int port)
{
	const char *colon = strrchr(listen, ':');

	log_info("%s %s://%.*s:%d/", what, scheme,
		 colon ? (int)(colon - listen) : (int)strlen(listen), listen, port);
}

static void signals_set(sigset_t *set, const int *signals)
{
	sigemptyset(set);
	for (; *signals; signals++)
		sigaddset(set, *signals);
}

void cli_signals_block(const int *signals)
{
	sigset_t set;

	signals_set(&set, signals);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

int cli_signal_fd(const int *signals)
{
	sigset_t set;
	int fd;

	signals_set(&set, signals);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		log_warn("signalfd");
	return fd;
}

int cli_usage_error(const char *verb)
{
	fprintf(stderr, "perfd %s: see 'perfd %s --help'\n", verb, verb);
	return EXIT_USAGE;
}

/* Notes p's value for its pair; true once both arms of it are known. */
static bool progress_pair(struct cli_progress *pr, const struct db_process *p, bool has,
			  double v)
{
	if (p->warmup)
		return false;
	if (p->pair != pr->pair) {
		pr->pair = p->pair;
		pr->has_old = pr->has_new = false;
	}
	if (!strcmp(p->arm, "old")) {
		pr->has_old = has;
		pr->old_v = v;
	} else {
		pr->has_new = has;
		pr->new_v = v;
	}
	return pr->has_old && pr->has_new && pr->old_v != 0;
}

/* The line after a stage is judged. */
static void progress_stage(const struct runner_progress *rp)
{
	const struct db_stage *g = rp->judged;

	fprintf(stderr, "perfd: stage %d of %d (%d pairs, %s test): %s, p %.3g faster, "
		"%.3g slower, bound %.3g%s\n", rp->stage, rp->nstages, g->pairs, g->test,
		g->verdict, g->p_faster, g->p_slower, g->alpha,
		rp->more ? "; running the next stage" : "");
}

void cli_progress_line(void *ctx, const struct runner_progress *rp)
{
	struct cli_progress *pr = ctx;
	const struct db_process *p = rp->p;
	const char *metric = rp->metric;
	char what[96] = "", pair[24];
	double v = 0, gain;
	bool has;

	if (!pr->on)
		return;
	if (!p) {
		progress_stage(rp);
		return;
	}
	if (!metric && p->nmetrics)
		metric = p->metrics[0].name;
	has = metric && db_process_metric(p, metric, &v);
	if (has)
		snprintf(what, sizeof(what), "  %s %.6g", metric, v);
	if (p->warmup)
		snprintf(pair, sizeof(pair), "warm-up");
	else
		snprintf(pair, sizeof(pair), "pair %d", p->pair);
	fprintf(stderr, "perfd: [%d/%d] stage %d %s%s%s %-7s wall %.1f ms%s", p->seq, rp->total,
		rp->stage, pr->label ? pr->label : "", pr->label ? " " : "", p->arm, pair,
		p->wall_ms, what);
	if (p->spawn_error)
		fprintf(stderr, "  could not start: %s", p->spawn_error);
	else if (p->timed_out)
		fprintf(stderr, "  timed out");
	else if (p->signal)
		fprintf(stderr, "  killed by signal %d", p->signal);
	else if (p->exit_code)
		fprintf(stderr, "  exited %d", p->exit_code);
	if (progress_pair(pr, p, has, v)) {
		char text[32];

		gain = (pr->old_v - pr->new_v) / pr->old_v;
		runner_format_gain_signed(text, sizeof(text), rp->higher_better ? -gain : gain);
		fprintf(stderr, "  pair gain %s", text);
	}
	fputc('\n', stderr);
}

int cli_extra_argument(const char *verb, const char *arg)
{
	log_warnx("%s: unexpected argument '%s'", verb, arg);
	return cli_usage_error(verb);
}

struct db *cli_db_open(const struct db_opts *o)
{
	struct db *db = NULL;
	int r = db_open(&db, o->path, (int)(o->lock_timeout_s * 1000));

	if (r < 0) {
		log_warnx("%s", err_last());
		return NULL;
	}
	return db;
}

struct db *cli_db_open_readonly(const struct db_opts *o)
{
	struct db *db = NULL;
	int r = db_open_readonly(&db, o->path, (int)(o->lock_timeout_s * 1000));

	if (r < 0) {
		log_warnx("%s", err_last());
		return NULL;
	}
	return db;
}

int cli_parse_int(int *out, const char *opt, const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		log_warnx("%s: '%s' is not a whole number from %d to %d", opt, s, min, max);
		return -1;
	}
	*out = (int)v;
	return 0;
}

int cli_parse_double(double *out, const char *opt, const char *s, double min, double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > max) {
		log_warnx("%s: '%s' is not a number from %g to %g", opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_fraction(double *out, const char *opt, const char *s)
{
	size_t n = strlen(s);
	char *copy;
	double v;
	int r;

	if (n && s[n - 1] == '%') {
		copy = xstrndup(s, n - 1);
		r = cli_parse_double(&v, opt, copy, 0, 100);
		free(copy);
		if (r < 0)
			return r;
		*out = v / 100.0;
		return 0;
	}
	return cli_parse_double(out, opt, s, 0, 1);
}

int cli_parse_id(long long *out, const char *s)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v <= 0) {
		log_warnx("'%s' is not a comparison id (a positive whole number)", s);
		return -1;
	}
	*out = v;
	return 0;
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
