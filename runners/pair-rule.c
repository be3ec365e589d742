/*
 * The rule, version 1: pairs-median/1 (docs/rule.md says it in words).
 *
 * Pair i is the old and new processes with pair number i. For the metric,
 * gain_i = (old_i - new_i) / old_i; the gain is the median of the gain_i.
 * A one-sided sign test at alpha 1/8 on the count of agreeing pairs, plus a
 * minimum effect on the median, gives the verdict. Any invalid process, or
 * unequal digests, makes the whole comparison invalid, with no gain at all.
 *
 * Everything here is a pure function of the stored rows, so `perfd verify`
 * recomputes exactly what was stored.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "runners.h"

bool runner_rule_is_known(const char *rule)
{
	return rule && !strcmp(rule, RUNNER_RULE);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double runner_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* P(X >= k) for X ~ Binomial(n, 1/2) is at most 1/8, i.e.
 * 8 * sum_{j>=k} C(n, j) <= 2^n. Exact in integers up to n = 62. */
static bool sign_test_accepts(int n, int k)
{
	if (n <= 60) {
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
		return tail <= (1ULL << n) / 8;
	} else {
		double tail = 0;
		int j;

		for (j = k; j <= n; j++)
			tail += exp(lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0) -
				    n * log(2.0));
		return tail <= 0.125 * (1 + 1e-12);
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

static void add_note(char ***list, size_t *n, const char *fmt, ...) PRINTF_LIKE(3, 4);
static void add_note(char ***list, size_t *n, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	*list = xrealloc(*list, (*n + 1) * sizeof(char *));
	(*list)[(*n)++] = strbuf_detach(&sb);
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

/* Why one process cannot be counted, or NULL when it can. */
static char *process_problem(const struct db_process *p, const char *metric,
			     bool record_valid_expected)
{
	double v;

	if (p->state == DB_STATE_RUNNING || p->state == DB_STATE_ABANDONED)
		return xstrdup("did not finish (abandoned)");
	if (p->spawn_error)
		return xasprintf("could not start: %s", p->spawn_error);
	if (p->timed_out)
		return xasprintf("timed out after %.3g s", p->wall_ms / 1e3);
	if (p->signal)
		return xasprintf("killed by signal %d (SIG%s)", p->signal, signal_name(p->signal));
	if (p->exit_code != 0)
		return xasprintf("exited %d", p->exit_code);
	if (p->fault)
		return xasprintf("GPU fault in the kernel log: \"%s\"", p->fault);
	if (p->nprotocol_errors)
		return xasprintf("malformed output: %s", p->protocol_errors[0]);
	if (!metric)
		return NULL;
	if (!runner_metric_value(p, metric, &v))
		return xasprintf("printed no metric '%s'", metric);
	if (!isfinite(v))
		return xasprintf("metric '%s' is not a finite number", metric);
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

static void percent(char *buf, size_t len, double frac)
{
	snprintf(buf, len, "%.3f%%", frac * 100.0);
}

int runner_rule_apply(struct db_summary *out, const struct db_comparison *c)
{
	struct db_summary s;
	const struct db_process **old_of, **new_of;
	double *gains = NULL, *olds = NULL, *news = NULL, *sorted = NULL;
	bool record_valid_expected = false, invalid = false;
	const char *first_digest = NULL;
	size_t i, npairs, ngains = 0;
	int pos = 0, neg = 0, need, r = 0;

	memset(out, 0, sizeof(*out));
	if (!runner_rule_is_known(c->rule))
		return err_set(-EINVAL, "comparison %lld uses rule '%s', which this perfd "
			       "does not know", (long long)c->id, c->rule ? c->rule : "");
	memset(&s, 0, sizeof(s));
	npairs = c->pairs > 0 ? (size_t)c->pairs : 0;
	old_of = xcalloc(npairs + 1, sizeof(*old_of));
	new_of = xcalloc(npairs + 1, sizeof(*new_of));
	s.nprocesses = c->nprocesses;
	s.process_valid = xcalloc(c->nprocesses + 1, sizeof(bool));
	s.process_reason = xcalloc(c->nprocesses + 1, sizeof(char *));
	s.digests_equal = true;

	for (i = 0; i < c->nprocesses; i++)
		if (!c->processes[i].warmup && c->processes[i].record_valid)
			record_valid_expected = true;
	if (c->metric_requested) {
		s.metric = xstrdup(c->metric_requested);
	} else if (runner_metric_choose(&s.metric, c->processes, c->nprocesses) < 0) {
		add_note(&s.reasons, &s.nreasons, "%s", err_last());
		invalid = true;
	}
	if (c->state == DB_STATE_ABANDONED) {
		add_note(&s.reasons, &s.nreasons, "the comparison was interrupted");
		invalid = true;
	}

	for (i = 0; i < c->nprocesses; i++) {
		const struct db_process *p = &c->processes[i];
		char *why = process_problem(p, s.metric, record_valid_expected);

		s.process_valid[i] = !why;
		s.process_reason[i] = why;
		if (p->warmup)
			continue;
		if (p->pair < 1 || (size_t)p->pair > npairs) {
			add_note(&s.reasons, &s.nreasons, "process %d has pair %d, outside 1 to %zu",
				 p->seq, p->pair, npairs);
			invalid = true;
			continue;
		}
		if (!strcmp(p->arm, "old"))
			old_of[p->pair] = p;
		else
			new_of[p->pair] = p;
		if (why) {
			add_note(&s.reasons, &s.nreasons, "process %d (%s, pair %d) %s",
				 p->seq, p->arm, p->pair, why);
			invalid = true;
		}
		/* Digests: printed by all pair processes and all equal, or by none. */
		if (!first_digest && p->digest)
			first_digest = p->digest;
	}
	if (first_digest) {
		for (i = 0; i < c->nprocesses; i++) {
			const struct db_process *p = &c->processes[i];

			if (p->warmup || p->state != DB_STATE_DONE || p->spawn_error)
				continue;
			if (!p->digest) {
				add_note(&s.reasons, &s.nreasons,
					 "process %d (%s, pair %d) printed no digest while others did",
					 p->seq, p->arm, p->pair);
				s.digests_equal = false;
			} else if (strcmp(p->digest, first_digest)) {
				add_note(&s.reasons, &s.nreasons,
					 "process %d (%s, pair %d) printed digest %s, not %s",
					 p->seq, p->arm, p->pair, p->digest, first_digest);
				s.digests_equal = false;
			}
		}
		if (!s.digests_equal)
			invalid = true;
	}

	s.npair_gains = npairs;
	s.pair_gains = xcalloc(npairs + 1, sizeof(double));
	gains = xcalloc(npairs + 1, sizeof(double));
	olds = xcalloc(npairs + 1, sizeof(double));
	news = xcalloc(npairs + 1, sizeof(double));
	for (i = 1; i <= npairs; i++) {
		double o, n;

		s.pair_gains[i - 1] = NAN;
		if (!old_of[i] || !new_of[i]) {
			add_note(&s.reasons, &s.nreasons, "pair %zu has no %s process", i,
				 !old_of[i] ? "old" : "new");
			invalid = true;
			continue;
		}
		if (invalid || !runner_metric_value(old_of[i], s.metric, &o) ||
		    !runner_metric_value(new_of[i], s.metric, &n))
			continue;
		if (o == 0) {
			add_note(&s.reasons, &s.nreasons, "pair %zu: the old metric is 0, "
				 "so its gain is undefined", i);
			invalid = true;
			continue;
		}
		s.pair_gains[i - 1] = (o - n) / o;
		gains[ngains] = s.pair_gains[i - 1];
		olds[ngains] = o;
		news[ngains] = n;
		ngains++;
	}

	if (invalid) {
		snprintf(s.verdict, sizeof(s.verdict), "invalid");
		for (i = 0; i < npairs; i++)
			s.pair_gains[i] = NAN;
		goto out;
	}

	sorted = xmalloc((ngains + 1) * sizeof(double));
	memcpy(sorted, gains, ngains * sizeof(double));
	s.has_gain = ngains > 0;
	s.gain_median = runner_median(sorted, ngains);
	s.gain_min = ngains ? sorted[0] : NAN;
	s.gain_max = ngains ? sorted[ngains - 1] : NAN;
	arm_stats(&s.old, olds, ngains);
	arm_stats(&s.new, news, ngains);

	for (i = 0; i < ngains; i++) {
		if (gains[i] > 0)
			pos++;
		else if (gains[i] < 0)
			neg++;
	}
	need = runner_sign_threshold((int)ngains);
	if (need && pos >= need && s.gain_median >= c->min_effect) {
		snprintf(s.verdict, sizeof(s.verdict), "faster");
	} else if (need && neg >= need && -s.gain_median >= c->min_effect) {
		snprintf(s.verdict, sizeof(s.verdict), "slower");
	} else {
		bool all_small = ngains > 0;
		char a[32], b[32];

		for (i = 0; i < ngains; i++)
			if (fabs(gains[i]) >= c->min_effect)
				all_small = false;
		if (all_small) {
			snprintf(s.verdict, sizeof(s.verdict), "unchanged");
			goto flags;
		}
		snprintf(s.verdict, sizeof(s.verdict), "unresolved");
		if (pos && neg)
			add_note(&s.reasons, &s.nreasons, "pair gains disagree in sign");
		if (!need)
			add_note(&s.reasons, &s.nreasons, "%zu pairs cannot pass the sign test "
				 "at alpha 1/8; it needs 3 at least", ngains);
		else if (pos < need && neg < need)
			add_note(&s.reasons, &s.nreasons, "%d of %zu pairs faster and %d slower; "
				 "the sign test at alpha 1/8 needs %d in one direction",
				 pos, ngains, neg, need);
		percent(a, sizeof(a), fabs(s.gain_median));
		percent(b, sizeof(b), c->min_effect);
		if (fabs(s.gain_median) < c->min_effect)
			add_note(&s.reasons, &s.nreasons, "gain median %s is under the "
				 "minimum effect %s", a, b);
	}
flags:
	if ((s.old.set && !(s.old.spread <= c->noise)) ||
	    (s.new.set && !(s.new.spread <= c->noise)))
		add_note(&s.flags, &s.nflags, "noisy");
out:
	for (i = 0; i < c->nprocesses; i++) {
		if (c->processes[i].fault_watch && !strncmp(c->processes[i].fault_watch, "off", 3)) {
			add_note(&s.flags, &s.nflags, "fault-watch-off");
			break;
		}
	}
	if (s.metric && !strcmp(s.metric, RUNNER_WALL_METRIC)) {
		bool printed = false;

		for (i = 0; i < c->nprocesses; i++) {
			double v;

			if (db_process_metric(&c->processes[i], RUNNER_WALL_METRIC, &v))
				printed = true;
		}
		if (!printed)
			add_note(&s.flags, &s.nflags, "wall-time");
	}
	free(old_of);
	free(new_of);
	free(gains);
	free(olds);
	free(news);
	free(sorted);
	*out = s;
	return r;
}
