/*
 * The agent's A/A comparisons: one build of a case's program against
 * itself, whose pair gains calibrate the case's comparisons and whose
 * verdicts are the false verdict rate the host shows ([calibration],
 * docs/config.md). After the first job of a case that has no calibration on
 * this host as it is now (or before its comparison, when = before), and one
 * at a time when the agent is idle, within an hourly budget. They belong to no job.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "daemon.h"
#include "db.h"
#include "runners.h"

/* The A/A comparisons of case k that a comparison starting now would be
 * calibrated with: the count of their gains, and the newest one's id (0
 * when none). */
static int case_calibration(struct agent *a, const struct agent_case *k, size_t *out_gains,
			    int64_t *out_newest)
{
	struct cli_progress progress = { .on = false };
	struct runner_calibration cal;
	struct runner_pair_opts o;
	int r;

	*out_gains = 0;
	*out_newest = 0;
	agent_case_opts(a, k, &o, &progress);
	r = runner_calibration_choose(&cal, a->db, &o);
	if (r < 0)
		return r;
	*out_gains = cal.gains;
	*out_newest = cal.n ? cal.v[cal.n - 1].comparison_id : 0;
	runner_calibration_release(&cal);
	return 0;
}

/* One A/A comparison of case k: build b's program against itself, of at
 * least pairs pairs. It belongs to no job: stored as kind 'aa' with the
 * build as both arms' and no job id. */
static int run_aa(struct agent *a, const struct agent_case *k, const struct db_build *b,
		  int pairs, const char *why)
{
	const struct db_build_artifact *prog = agent_artifact_named(b, k->program);
	const char *const ro[] = { b->dir, NULL };
	struct cli_progress progress = { .on = isatty(2), .label = "A/A" };
	struct runner_calibration cal;
	struct runner_pair_opts o;
	char manifest[65];
	char *prefix;
	int64_t cid = 0;
	int r;

	assert(prog);
	r = agent_build_manifest(a, manifest, b);
	if (r < 0)
		return r;
	agent_case_opts(a, k, &o, &progress);
	o.sandbox_ro = ro;
	o.old_manifest = o.new_manifest = manifest;
	o.old.path = o.new.path = prog->artifact.path;
	o.old_artifact = o.new_artifact = prog->artifact.id;
	o.old_sha256 = o.new_sha256 = prog->artifact.sha256;
	o.base_build = o.head_build = b->id;
	o.aa = true;
	if (pairs > o.pairs)
		o.pairs = pairs;
	if (o.max_pairs < o.pairs)
		o.max_pairs = o.pairs;
	/* Its stages, as any comparison's: from the first to the most. */
	if (o.max_pairs > o.pairs)
		log_info("case %s: A/A comparison of build %lld against itself, %d to %d pairs "
			 "(%s)", k->name, (long long)b->id, o.pairs, o.max_pairs, why);
	else
		log_info("case %s: A/A comparison of build %lld against itself, %d pairs (%s)",
			 k->name, (long long)b->id, o.pairs, why);
	r = runner_calibration_choose(&cal, a->db, &o);
	if (r == 0)
		r = runner_pair_run(a->db, &cid, &o);
	runner_calibration_release(&cal);
	prefix = xasprintf("case %s", k->name);
	if (r == 0) {
		a->aa_runs++;
		agent_log_verdict(a, prefix, cid);
	} else if (r == -ECANCELED) {
		r = err_set(-ECANCELED, "A/A comparison %lld of case %s: stopped, kept as "
			    "abandoned and not counted", (long long)cid, k->name);
	}
	free(prefix);
	return r;
}

/*
 * For case k, before its comparison or after its job ([calibration] when):
 * when the case has no calibration on
 * this host as it is now (fewer than RUNNER_CALIBRATION_MIN_GAINS A/A gains
 * of this fingerprint: a new case, or a driver, kernel or device that
 * changed since), [calibration] runs A/As of the base build, each of enough
 * pairs that together they give that many gains, stopping as soon as the
 * case has them (after a restart, the ones done before count).
 */
int agent_calibrate_case(struct agent *a, const struct agent_case *k, const struct db_build *base)
{
	int runs = a->cfg->calibration.runs, pairs, i, r = 0;
	char why[128];
	size_t have;
	int64_t newest;

	if (runs <= 0)
		return 0;
	pairs = (RUNNER_CALIBRATION_MIN_GAINS + runs - 1) / runs;
	for (i = 0; i < runs && r == 0; i++) {
		r = case_calibration(a, k, &have, &newest);
		if (r < 0 || have >= RUNNER_CALIBRATION_MIN_GAINS)
			break;
		snprintf(why, sizeof(why), "%d of %d: the case has %zu of the %d A/A gains it needs "
			 "on this host", i + 1, runs, have, RUNNER_CALIBRATION_MIN_GAINS);
		/* After its job, the hub sees the host calibrating, not measuring. */
		if (a->cfg->calibration.when == AGENT_CALIBRATE_AFTER)
			agent_heartbeat(a, "calibrating", 0);
		r = run_aa(a, k, base, pairs, why);
	}
	return r;
}

/* Drops the idle A/As that ended before the window; returns the seconds
 * the others took. */
static double idle_spent(struct agent *a, int64_t now)
{
	int64_t window = (int64_t)(AGENT_IDLE_WINDOW_S * 1e9);
	double spent = 0;
	size_t i, keep = 0;

	for (i = 0; i < a->nidle; i++)
		if (now - a->idle[i].end_ns < window)
			a->idle[keep++] = a->idle[i];
	a->nidle = keep;
	for (i = 0; i < a->nidle; i++)
		spent += a->idle[i].secs;
	return spent;
}

int agent_idle(struct agent *a)
{
	const struct agent_case *pick = NULL;
	int64_t pick_newest = INT64_MAX, start;
	double spent;
	struct db_build b;
	size_t i;
	int r;

	if (a->cfg->calibration.idle_budget_s <= 0 || !a->suite || !a->suite->ncases)
		return 0;
	spent = idle_spent(a, time_monotonic_ns());
	if (spent >= a->cfg->calibration.idle_budget_s || a->nidle >= AGENT_IDLE_RUNS_MAX)
		return 0;
	/* A quarantined host runs nothing until it is cleared, nor a held
	 * commit until it is released. */
	if (agent_refuse_quarantined(a) < 0)
		return 0;
	r = db_build_latest(a->db, &b, a->host, a->recipe_hash);
	if (r == -ENOENT)
		return 0;
	if (r == 0)
		r = agent_build_held(a, &b);
	if (r != 0) {
		db_build_release(&b);
		return r < 0 ? r : 0;
	}
	for (i = 0; i < a->suite->ncases; i++) {
		const struct agent_case *k = &a->suite->cases[i];
		const struct db_build_artifact *prog = agent_artifact_named(&b, k->program);
		size_t have;
		int64_t newest;

		if (!prog || access(prog->artifact.path, X_OK) < 0)
			continue;
		r = case_calibration(a, k, &have, &newest);
		if (r < 0)
			goto out;
		if (newest < pick_newest) {
			pick = k;
			pick_newest = newest;
		}
	}
	if (!pick)
		goto out;
	start = time_monotonic_ns();
	agent_heartbeat(a, "calibrating", 0);
	r = run_aa(a, pick, &b, pick->pairs, "idle, its calibration the oldest");
	if (a->nidle < AGENT_IDLE_RUNS_MAX) {
		int64_t end = time_monotonic_ns();

		a->idle[a->nidle].end_ns = end;
		a->idle[a->nidle++].secs = (double)(end - start) / 1e9;
	}
	if (r == 0)
		r = 1;
out:
	db_build_release(&b);
	return r;
}

/* One case's line for agent_check_visibility. */
static int case_visibility(FILE *f, struct agent *a, struct db *db, const struct agent_case *k)
{
	struct cli_progress progress = { .on = false };
	struct db_calibration_info *infos = NULL;
	struct runner_calibration cal = { 0 };
	struct runner_pair_opts o;
	char text[128];
	double mde = NAN;
	size_t n = 0, i;
	int r;

	agent_case_opts(a, k, &o, &progress);
	r = db_calibration_infos(db, &infos, &n, a->host, k->name, 1, 1);
	if (r == 0 && n)
		r = runner_calibration_current(&cal, db, &infos[0]);
	if (r == 0 && cal.n)
		mde = runner_calibration_mde(cal.v, cal.n, k->metric, o.pairs, o.max_pairs,
					     o.min_effect);
	runner_calibration_release(&cal);
	for (i = 0; i < n; i++)
		db_calibration_info_release(&infos[i]);
	free(infos);
	if (r < 0)
		return r;
	runner_mde_format(text, sizeof(text), mde, o.max_pairs);
	fprintf(f, "case %s: %s\n", k->name, text);
	return 0;
}

int agent_check_visibility(FILE *f, const struct agent_config *cfg,
			   const struct host_profile *profile)
{
	struct agent a;
	struct db *db = NULL;
	size_t i;
	int r = 0;

	if (cfg->suite_file) {
		fprintf(f, "cases: read from '%s' at each job; what this host can see of each is "
			"in its receipts\n", cfg->suite_file);
		return 0;
	}
	if (access(cfg->database, F_OK) < 0) {
		fprintf(f, "cases: no database yet at '%s', so no calibration says what this "
			"host can see\n", cfg->database);
		return 0;
	}
	memset(&a, 0, sizeof(a));
	a.cfg = (struct agent_config *)cfg;
	a.profile = (struct host_profile *)profile;
	agent_host_name(a.host, sizeof(a.host), profile);
	if (db_open_readonly(&db, cfg->database, 10000) < 0) {
		/* An older schema, say: the agent's start migrates it. */
		fprintf(f, "cases: %s, so no calibration says what this host can see\n",
			err_last());
		return 0;
	}
	for (i = 0; r == 0 && i < cfg->suite.ncases; i++)
		r = case_visibility(f, &a, db, &cfg->suite.cases[i]);
	db_close(db);
	return r;
}
