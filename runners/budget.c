/*
 * A time budget in place of a pair count (docs/config.md, time_budget_s):
 * at a comparison's start, the most pairs that fit the budget, from the
 * process times of the A/As that calibrate it, as the end of a stage.
 */
#include <math.h>

#include "runners.h"

int runner_budget_max_pairs(int *out, struct db *db, const struct runner_pair_opts *o)
{
	int64_t ids[RUNNER_CALIBRATION_MAX_GAINS];
	double mean_s, pair_s, fit;
	size_t i, n = 0;
	int max, r;

	*out = o->max_pairs > 0 ? o->max_pairs : o->pairs;
	if (o->time_budget_s <= 0)
		return 0;
	for (i = 0; i < o->ncalibration && n < RUNNER_CALIBRATION_MAX_GAINS; i++)
		ids[n++] = o->calibration[i].comparison_id;
	r = db_comparisons_process_mean_s(db, &mean_s, ids, n);
	if (r < 0 || mean_s <= 0)
		return r;       /* no time measured yet: the pairs configured */
	/* A pair is two processes and two cool-downs; the warm-up pairs come
	 * out of the budget first. */
	pair_s = 2 * (mean_s + o->cooldown_ms / 1000.0);
	fit = floor(o->time_budget_s / pair_s) - o->warmup;
	for (max = o->pairs; max * 2 <= RUNNER_RULE2_MAX_PAIRS && max * 2 <= fit; max *= 2)
		;
	*out = max;
	return 1;
}
