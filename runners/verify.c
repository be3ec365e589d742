/*
 * verify: recompute every stored figure of a comparison from its raw
 * process rows with the rule it names, and report each figure that differs.
 * Numbers match when they agree to nine significant digits (the rule is
 * deterministic; the tolerance only absorbs the last bits of a REAL column).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runners.h"

struct check {
	struct strbuf *report;
	int checked;
	int mismatches;
};

static bool same_num(double a, double b)
{
	double scale;

	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	scale = fmax(1.0, fmax(fabs(a), fabs(b)));
	return fabs(a - b) <= 1e-9 * scale;
}

static void num(struct check *k, const char *what, double stored, double again)
{
	k->checked++;
	if (same_num(stored, again))
		return;
	k->mismatches++;
	strbuf_addf(k->report, "%s: stored %.9g, recomputed %.9g\n", what, stored, again);
}

static void str(struct check *k, const char *what, const char *stored, const char *again)
{
	k->checked++;
	if ((!stored && !again) || (stored && again && !strcmp(stored, again)))
		return;
	k->mismatches++;
	strbuf_addf(k->report, "%s: stored '%s', recomputed '%s'\n", what,
		    stored ? stored : "(none)", again ? again : "(none)");
}

static void list(struct check *k, const char *what, char **stored, size_t ns,
		 char **again, size_t na)
{
	size_t i;
	char name[64];

	if (ns != na) {
		k->checked++;
		k->mismatches++;
		strbuf_addf(k->report, "%s: stored %zu, recomputed %zu\n", what, ns, na);
	}
	for (i = 0; i < ns && i < na; i++) {
		snprintf(name, sizeof(name), "%s[%zu]", what, i);
		str(k, name, stored[i], again[i]);
	}
}

static void arm(struct check *k, const char *name, const struct db_arm_stats *s,
		const struct db_arm_stats *a)
{
	char what[64];

	snprintf(what, sizeof(what), "%s.median", name);
	num(k, what, s->set ? s->median : NAN, a->set ? a->median : NAN);
	snprintf(what, sizeof(what), "%s.min", name);
	num(k, what, s->set ? s->min : NAN, a->set ? a->min : NAN);
	snprintf(what, sizeof(what), "%s.max", name);
	num(k, what, s->set ? s->max : NAN, a->set ? a->max : NAN);
	snprintf(what, sizeof(what), "%s.spread", name);
	num(k, what, s->set ? s->spread : NAN, a->set ? a->spread : NAN);
}

/* A figure that only some stages have (pairs-median/2.1's calibrated p
 * values and scale gate, 2.2's load gate): checked where either side has
 * it, so that a stage of the earlier rules reports as it always did. */
static void num_if_any(struct check *k, const char *what, size_t n, double stored, double again)
{
	char name[64];

	if (isnan(stored) && isnan(again))
		return;
	snprintf(name, sizeof(name), "stage %zu %s", n, what);
	num(k, name, stored, again);
}

static void stage(struct check *k, size_t n, const struct db_stage *s, const struct db_stage *a)
{
	char what[64];

	snprintf(what, sizeof(what), "stage %zu pairs", n);
	num(k, what, s->pairs, a->pairs);
	snprintf(what, sizeof(what), "stage %zu test", n);
	str(k, what, s->test, a->test);
	snprintf(what, sizeof(what), "stage %zu calibration gains", n);
	num(k, what, s->calibration_gains, a->calibration_gains);
	snprintf(what, sizeof(what), "stage %zu alpha", n);
	num(k, what, s->alpha, a->alpha);
	snprintf(what, sizeof(what), "stage %zu p faster", n);
	num(k, what, s->p_faster, a->p_faster);
	snprintf(what, sizeof(what), "stage %zu p slower", n);
	num(k, what, s->p_slower, a->p_slower);
	snprintf(what, sizeof(what), "stage %zu p below", n);
	num(k, what, s->p_below, a->p_below);
	snprintf(what, sizeof(what), "stage %zu p above", n);
	num(k, what, s->p_above, a->p_above);
	num_if_any(k, "calibrated p faster", n, s->cal_p_faster, a->cal_p_faster);
	num_if_any(k, "calibrated p slower", n, s->cal_p_slower, a->cal_p_slower);
	num_if_any(k, "calibrated p below", n, s->cal_p_below, a->cal_p_below);
	num_if_any(k, "calibrated p above", n, s->cal_p_above, a->cal_p_above);
	num_if_any(k, "gate p", n, s->gate_p, a->gate_p);
	num_if_any(k, "spread ratio", n, s->spread_ratio, a->spread_ratio);
	num_if_any(k, "load p", n, s->load_p, a->load_p);
	num_if_any(k, "load above", n, s->load_above, a->load_above);
	snprintf(what, sizeof(what), "stage %zu verdict", n);
	str(k, what, s->verdict, a->verdict);
}

int runner_verify_summary(struct db_summary *out, struct strbuf *report,
			  const struct db_comparison *c, int *out_checked)
{
	const struct db_summary *s = &c->summary;
	struct db_summary a;
	struct check k = { report, 0, 0 };
	char what[64];
	size_t i;
	int r;

	memset(out, 0, sizeof(*out));
	if (!c->has_summary)
		return err_set(-EAGAIN, "comparison %lld has no summary yet (state %s)",
			       (long long)c->id, db_state_name(c->state));
	r = runner_rule_apply(&a, c);
	if (r < 0) {
		db_summary_release(&a);
		return r;
	}
	str(&k, "metric", c->metric, a.metric);
	str(&k, "verdict", s->verdict, a.verdict);
	num(&k, "gain.median", s->has_gain ? s->gain_median : NAN, a.has_gain ? a.gain_median : NAN);
	num(&k, "gain.min", s->has_gain ? s->gain_min : NAN, a.has_gain ? a.gain_min : NAN);
	num(&k, "gain.max", s->has_gain ? s->gain_max : NAN, a.has_gain ? a.gain_max : NAN);
	arm(&k, "old", &s->old, &a.old);
	arm(&k, "new", &s->new, &a.new);
	k.checked++;
	if (s->digests_equal != a.digests_equal) {
		k.mismatches++;
		strbuf_addf(report, "digests.equal: stored %s, recomputed %s\n",
			    s->digests_equal ? "true" : "false", a.digests_equal ? "true" : "false");
	}
	if (s->npair_gains != a.npair_gains) {
		k.checked++;
		k.mismatches++;
		strbuf_addf(report, "pairs: stored %zu gains, recomputed %zu\n",
			    s->npair_gains, a.npair_gains);
	}
	for (i = 0; i < s->npair_gains && i < a.npair_gains; i++) {
		snprintf(what, sizeof(what), "pair %zu gain", i + 1);
		num(&k, what, s->pair_gains[i], a.pair_gains[i]);
	}
	num(&k, "pairs_run", s->pairs_run, a.pairs_run);
	if (s->nstages != a.nstages) {
		k.checked++;
		k.mismatches++;
		strbuf_addf(report, "stages: stored %zu, recomputed %zu\n", s->nstages, a.nstages);
	}
	for (i = 0; i < s->nstages && i < a.nstages; i++)
		stage(&k, i + 1, &s->stages[i], &a.stages[i]);
	list(&k, "flags", s->flags, s->nflags, a.flags, a.nflags);
	list(&k, "reasons", s->reasons, s->nreasons, a.reasons, a.nreasons);
	for (i = 0; i < c->nprocesses && i < a.nprocesses; i++) {
		k.checked++;
		if (c->processes[i].valid != a.process_valid[i]) {
			k.mismatches++;
			strbuf_addf(report, "process %d valid: stored %s, recomputed %s\n",
				    c->processes[i].seq, c->processes[i].valid ? "yes" : "no",
				    a.process_valid[i] ? "yes" : "no");
		}
		snprintf(what, sizeof(what), "process %d reason", c->processes[i].seq);
		str(&k, what, c->processes[i].invalid_reason, a.process_reason[i]);
	}
	*out = a;
	if (out_checked)
		*out_checked = k.checked;
	return k.mismatches;
}

int runner_verify(struct strbuf *report, const struct db_comparison *c, int *out_checked)
{
	struct db_summary a;
	int n = runner_verify_summary(&a, report, c, out_checked);

	db_summary_release(&a);
	return n;
}
