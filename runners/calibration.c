/*
 * Calibration: the A/A comparisons (one build against itself) whose pair
 * gains a new comparison is judged against, chosen once where a comparison
 * starts (perfd pair, the agent), and what they show: the noise of a host
 * and case, and how to say an A/A's verdict, which is a sample of the false
 * verdict rate and never a change.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runners.h"

void runner_calibration_release(struct runner_calibration *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		db_calibration_release(&c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static size_t finite_gains(const struct db_calibration *v, size_t n)
{
	size_t i, k, count = 0;

	for (i = 0; i < n; i++)
		for (k = 0; k < v[i].ngains; k++)
			count += isfinite(v[i].gains[k]) ? 1 : 0;
	return count;
}

/* The calibration of host and case under rule, direction and fingerprint,
 * loaded into *out (zeroed first). */
static int calibration_load(struct runner_calibration *out, struct db *db, const char *rule,
			    const char *host, const char *case_name, bool higher_better,
			    const char *fingerprint)
{
	struct runner_calibration c;
	int r;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	r = db_calibration_select(db, &c.v, &c.n, rule, host, case_name, higher_better,
				  fingerprint, RUNNER_CALIBRATION_MAX_GAINS);
	if (r == 0)
		r = db_calibration_load(db, c.v, c.n);
	if (r < 0) {
		runner_calibration_release(&c);
		return r;
	}
	c.gains = finite_gains(c.v, c.n);
	*out = c;
	return 0;
}

int runner_calibration_choose(struct runner_calibration *out, struct db *db,
			      struct runner_pair_opts *o)
{
	int r;

	o->calibration = NULL;
	o->ncalibration = 0;
	r = calibration_load(out, db, RUNNER_RULE, o->host, o->case_name, o->higher_better,
			     o->fingerprint);
	if (r < 0)
		return r;
	o->calibration = out->v;
	o->ncalibration = out->n;
	return 0;
}

int runner_calibration_current(struct runner_calibration *out, struct db *db,
			       const struct db_calibration_info *info)
{
	memset(out, 0, sizeof(*out));
	if (!info->newest_id)
		return 0;
	return calibration_load(out, db, info->rule, info->host, info->case_name,
				info->higher_better, info->fingerprint);
}

void runner_calibration_noise(struct runner_noise *out, const struct db_calibration *v, size_t n)
{
	size_t total = finite_gains(v, n), i, k, m = 0;
	double *abs_gains;

	memset(out, 0, sizeof(*out));
	out->median = out->p90 = NAN;
	if (!total)
		return;
	abs_gains = xcalloc(total, sizeof(*abs_gains));
	for (i = 0; i < n; i++)
		for (k = 0; k < v[i].ngains; k++)
			if (isfinite(v[i].gains[k]))
				abs_gains[m++] = fabs(v[i].gains[k]);
	out->gains = m;
	out->median = runner_median(abs_gains, m);   /* which sorts them */
	/* Nearest rank: the smallest value with at least 90% of them at or
	 * below it, rank ceil(0.9 m). */
	out->p90 = abs_gains[(9 * m + 9) / 10 - 1];
	free(abs_gains);
}

const char *runner_aa_verdict(const char *verdict)
{
	if (!verdict || !*verdict)
		return "A/A";
	if (!strcmp(verdict, "faster") || !strcmp(verdict, "slower"))
		return "A/A: a false verdict (calibration sample, not a change)";
	if (!strcmp(verdict, "unchanged"))
		return "A/A: unchanged (calibration sample)";
	if (!strcmp(verdict, "unresolved"))
		return "A/A: unresolved (calibration sample)";
	if (!strcmp(verdict, "invalid"))
		return "A/A: invalid";
	return "A/A";
}
