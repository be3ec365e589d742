/*
 * The rule (docs/rule.md says it in words): the steps every version shares,
 * and version 1's verdict; the stages and tests of versions 2, 2.1 and 2.2
 * are in pair-rule2.c.
 *
 * Pair i is the old and new processes with pair number i. For the metric,
 * gain_i = (old_i - new_i) / old_i; the gain is the median of the gain_i.
 * Version 1: a one-sided sign test at alpha 1/8 on the count of agreeing
 * pairs, plus a minimum effect on the median, gives the verdict. Any invalid
 * process, or unequal digests, makes the whole comparison invalid, with no
 * gain at all.
 *
 * Everything here is a pure function of the stored rows, so `perfd verify`
 * recomputes exactly what was stored.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule-internal.h"

/*
 * The numbers of the rule (docs/rule.md, "Verdict"). They belong to the
 * rule's name: a different value is a new rule (pairs-median/2), never a new
 * pairs-median/1, or stored comparisons would no longer verify.
 *
 * The sign test is one-sided at alpha = 1/SIGN_TEST_ALPHA_INV = 1/8: the
 * count of agreeing pairs it needs (runner_sign_threshold) is 3 of 3, 5 of
 * 6, 8 of 10, the table in docs/rule.md. min_effect and the noise threshold
 * are not here: each comparison stores its own (defaults 1% and 5%,
 * HOST_DEFAULT_MIN_EFFECT and HOST_DEFAULT_NOISE in hosts.h).
 */
#define SIGN_TEST_ALPHA_INV 8
/* Up to this many pairs the binomial tail is summed exactly in 64-bit
 * integers (2^n and every C(n, j) fit); above it, in doubles. */
#define SIGN_TEST_EXACT_MAX 60
/* The doubles' tail may exceed alpha by this fraction of it, so that rounding
 * cannot reject a count whose exact tail is alpha. */
#define SIGN_TEST_FLOAT_SLACK 1e-12
/* Wall times are stored in milliseconds; a time-out reason says seconds. */
#define MS_PER_S 1e3

/* P(X >= k) for X ~ Binomial(n, 1/2) is at most alpha = 1/8, i.e.
 * 8 * sum_{j>=k} C(n, j) <= 2^n. */
static bool sign_test_accepts(int n, int k)
{
	if (n <= SIGN_TEST_EXACT_MAX) {
		unsigned long long c = 1, tail = 0;
		int j;

		/* c walks C(n, j) for j = 0..n; 2^n / 8 is exact for n >= 3 and
		 * 0 below, where no count passes. */
		for (j = 0; j <= n; j++) {
			if (j >= k)
				tail += c;
			c = (unsigned long long)((unsigned __int128)c * (unsigned)(n - j) /
						 (unsigned)(j + 1));
		}
		return tail <= (1ULL << n) / SIGN_TEST_ALPHA_INV;
	} else {
		double tail = 0;
		int j;

		for (j = k; j <= n; j++)
			tail += exp(lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0) -
				    n * log(2.0));
		return tail <= (1.0 / SIGN_TEST_ALPHA_INV) * (1 + SIGN_TEST_FLOAT_SLACK);
	}
}

int runner_sign_threshold(int n)
{
	int k;

	for (k = 0; k <= n; k++)
		if (k > 0 && sign_test_accepts(n, k))
			return k;
	return 0;
}

/* The fewest pairs for which some count passes the sign test: 3, where all
 * 3 agreeing has probability 1/8. */
static int sign_test_min_pairs(void)
{
	int n = 1;

	while (!runner_sign_threshold(n))
		n++;
	return n;
}

/* The metric value of a process: a printed TIMING metric, or for wall_ms
 * the launcher's wall time when the program printed no such metric. */
bool runner_metric_value(const struct db_process *p, const char *metric, double *out)
{
	if (db_process_metric(p, metric, out))
		return true;
	if (!strcmp(metric, RUNNER_WALL_METRIC) && p->state == DB_STATE_DONE &&
	    !p->spawn_error && isfinite(p->wall_ms)) {
		*out = p->wall_ms;
		return true;
	}
	return false;
}

int runner_better_parse(bool *higher, const char *word)
{
	*higher = false;
	if (!strcmp(word, "lower"))
		return 0;
	if (!strcmp(word, "higher")) {
		*higher = true;
		return 0;
	}
	return err_set(-EINVAL, "'%s' is neither 'lower' nor 'higher'", word);
}

int runner_metric_choose(char **out, const struct db_process *procs, size_t n)
{
	const char *first = NULL;
	struct strbuf names = STRBUF_INIT;
	size_t i, j, k, count = 0;

	*out = NULL;
	for (i = 0; i < n; i++) {
		if (procs[i].warmup)
			continue;
		for (j = 0; j < procs[i].nmetrics; j++) {
			const char *name = procs[i].metrics[j].name;
			bool seen = false;

			/* Seen in an earlier process or earlier in this one? */
			for (k = 0; k < i && !seen; k++) {
				size_t m;

				if (procs[k].warmup)
					continue;
				for (m = 0; m < procs[k].nmetrics; m++)
					if (!strcmp(procs[k].metrics[m].name, name))
						seen = true;
			}
			if (seen)
				continue;
			count++;
			if (!first)
				first = name;
			strbuf_addf(&names, "%s%s", names.len ? ", " : "", name);
		}
	}
	if (count > 1) {
		int r = err_set(-EDOM, "the processes printed several metrics (%s): "
				"choose one with --metric", names.buf);
		strbuf_release(&names);
		return r;
	}
	strbuf_release(&names);
	*out = xstrdup(first ? first : RUNNER_WALL_METRIC);
	return 0;
}

static const char *signal_name(int sig)
{
	const char *s = sigabbrev_np(sig);

	return s ? s : "?";
}

/* A version with RUNNER_RULE_F_POSITIVE counts only a positive normal value whose median with another
 * cannot overflow: a timer that gives a negative, zero or subnormal value is
 * broken, and its gain would be meaningless (-5 against 98 is "+2060%"). */
static char *value_problem(const char *metric, double v)
{
	char text[32];

	snprintf(text, sizeof(text), "%.6g", v);
	if (v <= 0)
		return xasprintf("metric '%s' is %s, not a positive number", metric, text);
	if (fpclassify(v) == FP_SUBNORMAL)
		return xasprintf("metric '%s' is %s, too small to be a measurement "
				 "(subnormal)", metric, text);
	if (v > DBL_MAX / 2)
		return xasprintf("metric '%s' is %s, so large that a median of two "
				 "such values would overflow", metric, text);
	return NULL;
}

/* Why one process cannot be counted, or NULL when it can. */
static char *process_problem(const struct db_process *p, const char *metric,
			     bool record_valid_expected, const struct runner_rule_version *v)
{
	double x;

	if (p->state == DB_STATE_RUNNING || p->state == DB_STATE_ABANDONED)
		return xstrdup("did not finish (abandoned)");
	if (p->spawn_error)
		return xasprintf("could not start: %s", p->spawn_error);
	if (p->timed_out)
		return xasprintf("timed out after %.3g s", p->wall_ms / MS_PER_S);
	if (p->signal)
		return xasprintf("killed by signal %d (SIG%s)", p->signal, signal_name(p->signal));
	if (p->exit_code != 0)
		return xasprintf("exited %d", p->exit_code);
	/* A stored reason: its text is the rule's, and verify compares it with
	 * the rows of older databases, so its quotes stay. */
	if (p->fault)
		return xasprintf("GPU fault in the kernel log: \"%s\"", p->fault);
	if (p->nprotocol_errors)
		return xasprintf("malformed output: %s", p->protocol_errors[0]);
	if (!metric)
		return NULL;
	if (!runner_metric_value(p, metric, &x))
		return xasprintf("printed no metric '%s'", metric);
	if (!isfinite(x))
		return xasprintf("metric '%s' is not a finite number", metric);
	if (runner_rule_version_has(v, RUNNER_RULE_F_POSITIVE)) {
		char *why = value_problem(metric, x);

		if (why)
			return why;
	}
	if (record_valid_expected && !p->record_valid)
		return xstrdup("did not print TIMING_RECORD_VALID (other processes did)");
	return NULL;
}

static void arm_stats(struct db_arm_stats *out, double *v, size_t n)
{
	size_t i;

	if (n == 0)
		return;
	out->set = true;
	out->min = out->max = v[0];
	for (i = 1; i < n; i++) {
		if (v[i] < out->min)
			out->min = v[i];
		if (v[i] > out->max)
			out->max = v[i];
	}
	out->median = runner_median(v, n);
	if (out->median != 0)
		out->spread = (out->max - out->min) / fabs(out->median);
	else
		out->spread = out->max == out->min ? 0 : INFINITY;
}

static void run_init(struct rule_run *run, const struct db_comparison *c,
		     const struct runner_rule_version *v)
{
	memset(run, 0, sizeof(*run));
	run->c = c;
	run->v = v;
	if (runner_rule_version_has(v, RUNNER_RULE_F_STAGES))
		run->npairs = rule2_pairs_run(c);
	else
		run->npairs = c->pairs > 0 ? (size_t)c->pairs : 0;
	run->old_of = xcalloc(run->npairs + 1, sizeof(*run->old_of));
	run->new_of = xcalloc(run->npairs + 1, sizeof(*run->new_of));
	run->gains = xcalloc(run->npairs + 1, sizeof(double));
	run->olds = xcalloc(run->npairs + 1, sizeof(double));
	run->news = xcalloc(run->npairs + 1, sizeof(double));
	run->s.nprocesses = c->nprocesses;
	run->s.process_valid = xcalloc(c->nprocesses + 1, sizeof(bool));
	run->s.process_reason = xcalloc(c->nprocesses + 1, sizeof(char *));
	run->s.npair_gains = run->npairs;
	run->s.pair_gains = xcalloc(run->npairs + 1, sizeof(double));
	run->s.digests_equal = true;
}

/* Frees what the steps used; the summary is the caller's. */
static void run_release(struct rule_run *run)
{
	free(run->old_of);
	free(run->new_of);
	free(run->gains);
	free(run->olds);
	free(run->news);
}

/* The metric the figures use: the one asked for, else the rule's default;
 * when the default cannot choose, none, and the comparison is invalid. */
static void choose_metric(struct rule_run *run)
{
	const struct db_comparison *c = run->c;

	if (c->metric_requested)
		run->s.metric = xstrdup(c->metric_requested);
	else if (runner_metric_choose(&run->s.metric, c->processes, c->nprocesses) < 0)
		rule_reject(run, "%s", err_last());
}

/* Once one pair process printed TIMING_RECORD_VALID, each must. */
static bool is_record_valid_expected(const struct db_comparison *c)
{
	size_t i;

	for (i = 0; i < c->nprocesses; i++)
		if (!c->processes[i].warmup && c->processes[i].record_valid)
			return true;
	return false;
}

static bool is_pair_in_range(const struct db_process *p, size_t npairs)
{
	return p->pair >= 1 && (size_t)p->pair <= npairs;
}

/* Each process's validity; each pair process filed under its pair and arm,
 * and the comparison invalid for one that cannot count or has no pair. */
static void check_processes(struct rule_run *run)
{
	const struct db_comparison *c = run->c;
	bool record_valid_expected = is_record_valid_expected(c);
	size_t i;

	for (i = 0; i < c->nprocesses; i++) {
		const struct db_process *p = &c->processes[i];
		char *why = process_problem(p, run->s.metric, record_valid_expected, run->v);

		run->s.process_valid[i] = !why;
		run->s.process_reason[i] = why;
		if (p->warmup)
			continue;
		if (!is_pair_in_range(p, run->npairs)) {
			rule_reject(run, "process %d has pair %d, outside 1 to %zu", p->seq, p->pair,
			       run->npairs);
			continue;
		}
		if (!strcmp(p->arm, "old"))
			run->old_of[p->pair] = p;
		else
			run->new_of[p->pair] = p;
		if (why)
			rule_reject(run, "process %d (%s, pair %d) %s", p->seq, p->arm, p->pair, why);
	}
}

/* The digest every other must equal: the first one printed by a pair
 * process within the pairs; NULL when none printed one. */
static const char *first_digest(const struct rule_run *run)
{
	size_t i;

	for (i = 0; i < run->c->nprocesses; i++) {
		const struct db_process *p = &run->c->processes[i];

		if (!p->warmup && is_pair_in_range(p, run->npairs) && p->digest)
			return p->digest;
	}
	return NULL;
}

/* Digests: printed by every pair process that ran, all equal, or by none. A
 * process that printed none while others did counts as different. */
static void check_digests(struct rule_run *run)
{
	const char *first = first_digest(run);
	size_t i;

	if (!first)
		return;
	for (i = 0; i < run->c->nprocesses; i++) {
		const struct db_process *p = &run->c->processes[i];

		if (p->warmup || p->state != DB_STATE_DONE || p->spawn_error)
			continue;
		if (!p->digest) {
			rule_reject(run, "process %d (%s, pair %d) printed no digest while others did",
			       p->seq, p->arm, p->pair);
			run->s.digests_equal = false;
		} else if (strcmp(p->digest, first)) {
			rule_reject(run, "process %d (%s, pair %d) printed digest %s, not %s",
			       p->seq, p->arm, p->pair, p->digest, first);
			run->s.digests_equal = false;
		}
	}
}

/* gain_i = (old_i - new_i) / old_i for each pair (with direction, better =
 * higher: (new_i - old_i) / old_i), while the comparison is still valid; a
 * pair without both processes, or with an old value of 0, makes it
 * invalid. */
static void compute_pair_gains(struct rule_run *run)
{
	size_t i;

	for (i = 1; i <= run->npairs; i++) {
		double o, n;

		run->s.pair_gains[i - 1] = NAN;
		if (!run->old_of[i] || !run->new_of[i]) {
			rule_reject(run, "pair %zu has no %s process", i, !run->old_of[i] ? "old" : "new");
			continue;
		}
		if (run->invalid || !runner_metric_value(run->old_of[i], run->s.metric, &o) ||
		    !runner_metric_value(run->new_of[i], run->s.metric, &n))
			continue;
		if (o == 0) {
			rule_reject(run, "pair %zu: the old metric is 0, so its gain is undefined", i);
			continue;
		}
		run->s.pair_gains[i - 1] =
			runner_rule_version_has(run->v, RUNNER_RULE_F_DIRECTION) &&
			run->c->higher_better ? (n - o) / o : (o - n) / o;
		run->gains[run->ngains] = run->s.pair_gains[i - 1];
		run->olds[run->ngains] = o;
		run->news[run->ngains] = n;
		run->ngains++;
	}
}

static void compute_figures(struct rule_run *run)
{
	size_t n = run->ngains;
	double *sorted = xmalloc((n + 1) * sizeof(double));

	memcpy(sorted, run->gains, n * sizeof(double));
	run->s.has_gain = n > 0;
	run->s.gain_median = runner_median(sorted, n);
	run->s.gain_min = n ? sorted[0] : NAN;
	run->s.gain_max = n ? sorted[n - 1] : NAN;
	arm_stats(&run->s.old, run->olds, n);
	arm_stats(&run->s.new, run->news, n);
	free(sorted);
}

/* The sign test's input: how many gains are positive, how many negative, and
 * how many in one direction it needs. */
static void count_signs(struct rule_run *run)
{
	size_t i;

	for (i = 0; i < run->ngains; i++) {
		if (run->gains[i] > 0)
			run->pos++;
		else if (run->gains[i] < 0)
			run->neg++;
	}
	run->need = runner_sign_threshold((int)run->ngains);
}

/* Unchanged: there are gains and every |gain_i| is under min_effect. */
static bool is_unchanged(const struct rule_run *run)
{
	size_t i;

	if (run->ngains == 0)
		return false;
	for (i = 0; i < run->ngains; i++)
		if (fabs(run->gains[i]) >= run->c->min_effect)
			return false;
	return true;
}

/* Why neither faster nor slower nor unchanged, every reason that applies. */
static void explain_unresolved(struct rule_run *run)
{
	struct db_summary *s = &run->s;
	char a[32], b[32];

	if (run->pos && run->neg)
		rule_note(&s->reasons, &s->nreasons, "pair gains disagree in sign");
	if (!run->need)
		rule_note(&s->reasons, &s->nreasons, "%zu pairs cannot pass the sign test "
			 "at alpha 1/%d; it needs %d at least", run->ngains, SIGN_TEST_ALPHA_INV,
			 sign_test_min_pairs());
	else if (run->pos < run->need && run->neg < run->need)
		rule_note(&s->reasons, &s->nreasons, "%d of %zu pairs faster and %d slower; "
			 "the sign test at alpha 1/%d needs %d in one direction",
			 run->pos, run->ngains, run->neg, SIGN_TEST_ALPHA_INV, run->need);
	runner_format_gain(a, sizeof(a), fabs(s->gain_median));
	runner_format_gain(b, sizeof(b), run->c->min_effect);
	if (fabs(s->gain_median) < run->c->min_effect)
		rule_note(&s->reasons, &s->nreasons, "gain median %s is under the "
			 "minimum effect %s", a, b);
}

/* Faster or slower: enough pairs agree for the sign test and the median
 * reaches min_effect in that direction; else unchanged or unresolved. */
static void decide_verdict(struct rule_run *run)
{
	struct db_summary *s = &run->s;
	double min_effect = run->c->min_effect;

	count_signs(run);
	if (run->need && run->pos >= run->need && s->gain_median >= min_effect) {
		snprintf(s->verdict, sizeof(s->verdict), "faster");
	} else if (run->need && run->neg >= run->need && -s->gain_median >= min_effect) {
		snprintf(s->verdict, sizeof(s->verdict), "slower");
	} else if (is_unchanged(run)) {
		snprintf(s->verdict, sizeof(s->verdict), "unchanged");
	} else {
		snprintf(s->verdict, sizeof(s->verdict), "unresolved");
		explain_unresolved(run);
	}
}

/* Noisy: either arm's spread is above the noise threshold (or not a number). */
static void flag_noisy(struct rule_run *run)
{
	struct db_summary *s = &run->s;
	double noise = run->c->noise;

	if ((s->old.set && !(s->old.spread <= noise)) ||
	    (s->new.set && !(s->new.spread <= noise)))
		rule_note(&s->flags, &s->nflags, "noisy");
}

/* A process record's fault watch reads "on", or "off: why". */
static bool is_fault_watch_off(const struct db_process *p)
{
	static const char off[] = "off";

	return p->fault_watch && !strncmp(p->fault_watch, off, sizeof(off) - 1);
}

/* fault-watch-off: some process ran without the kernel log watched. */
static void flag_fault_watch_off(struct rule_run *run)
{
	size_t i;

	for (i = 0; i < run->c->nprocesses; i++) {
		if (is_fault_watch_off(&run->c->processes[i])) {
			rule_note(&run->s.flags, &run->s.nflags, "fault-watch-off");
			return;
		}
	}
}

/* wall-time: the figures use the launcher's wall time, as no process printed
 * a metric named wall_ms. */
static void flag_wall_time(struct rule_run *run)
{
	size_t i;
	double v;

	if (!run->s.metric || strcmp(run->s.metric, RUNNER_WALL_METRIC))
		return;
	for (i = 0; i < run->c->nprocesses; i++)
		if (db_process_metric(&run->c->processes[i], RUNNER_WALL_METRIC, &v))
			return;
	rule_note(&run->s.flags, &run->s.nflags, "wall-time");
}

int runner_rule_apply(struct db_summary *out, const struct db_comparison *c)
{
	const struct runner_rule_version *v;
	struct rule_run run;
	char *why;
	int r;

	memset(out, 0, sizeof(*out));
	r = runner_rule_lookup(&v, c->rule);
	if (r < 0) {
		why = xstrdup(err_last());
		r = err_set(r, "comparison %lld: %s", (long long)c->id, why);
		free(why);
		return r;
	}
	run_init(&run, c, v);
	choose_metric(&run);
	if (c->state == DB_STATE_ABANDONED && c->abandoned_reason)
		rule_reject(&run, "the comparison was interrupted: %s", c->abandoned_reason);
	else if (c->state == DB_STATE_ABANDONED)
		rule_reject(&run, "the comparison was interrupted");
	check_processes(&run);
	check_digests(&run);
	compute_pair_gains(&run);
	if (run.invalid) {
		rule_set_invalid(&run);
	} else {
		compute_figures(&run);
		if (runner_rule_version_has(v, RUNNER_RULE_F_STAGES))
			rule2_decide(&run);
		else
			decide_verdict(&run);
		flag_noisy(&run);
	}
	flag_fault_watch_off(&run);
	flag_wall_time(&run);
	*out = run.s;
	run_release(&run);
	return 0;
}
