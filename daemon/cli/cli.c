/*
 * What the verbs share: --help, usage errors, option values, the database
 * opened for a verb, signals as a descriptor, the listen URL said, and the
 * progress line of a running comparison (cli.h).
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
