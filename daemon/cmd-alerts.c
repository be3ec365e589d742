/* perfd alerts: the history's alerts, their confirmation and bisection. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "daemon.h"
#include "runners.h"

const char cmd_alerts_usage[] =
	"usage: perfd alerts [--db FILE] [ID]\n"
	"\n"
	"Lists the alerts of the agent's history ([history], docs/history.md): a\n"
	"range of a branch whose comparison on one host and case was slower or\n"
	"faster, found by a head's job or by a span (the head against an older\n"
	"reference while no single commit in the range was), then compared again:\n"
	"raised when the repeated comparison agrees, dismissed when not. A raised\n"
	"alert of several commits is bisected: the commit or commits that carry\n"
	"the change, with their shares, or the range that carries it when no\n"
	"commit alone does. With ID, one alert: every bisection step with its\n"
	"jobs and verdicts, then what was found.\n"
	"\n"
	"options:\n"
	"  --db FILE          database file (default ./perfd.db)\n";

static const struct option alerts_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *state_word(const struct db_alert *al)
{
	if (al->state != DB_ALERT_RAISED)
		return db_alert_state_name(al->state);
	return db_alert_triage_name(al->triage);
}

/* The culprit column: the one commit, or how many findings. */
static void culprit(char *out, size_t n, struct db *db, const struct db_alert *al)
{
	struct db_alert_finding *f = NULL;
	size_t nf = 0, i;

	snprintf(out, n, "%s", al->bisect == DB_BISECT_RUNNING ? "bisecting" : "-");
	if (db_alert_findings(db, &f, &nf, al->id) < 0)
		return;
	if (nf == 1 && f[0].commit)
		snprintf(out, n, "%.12s", f[0].hi);
	else if (nf == 1)
		snprintf(out, n, "range of %d", f[0].commits);
	else if (nf > 1)
		snprintf(out, n, "%zu findings", nf);
	for (i = 0; i < nf; i++)
		db_alert_finding_release(&f[i]);
	free(f);
}

static void print_list(struct db *db, const struct db_alert *al, size_t n)
{
	size_t i;

	printf("%-5s %-12s %-16s %-5s %-25s %7s %9s %-13s %s\n", "alert", "branch", "case", "found",
	       "range", "commits", "gain", "state", "culprit");
	for (i = 0; i < n; i++) {
		char range[32], who[32], gain[32];

		snprintf(range, sizeof(range), "%.12s..%.12s", al[i].lo, al[i].hi);
		culprit(who, sizeof(who), db, &al[i]);
		runner_format_gain_signed(gain, sizeof(gain), al[i].gain);
		printf("%-5lld %-12.12s %-16.16s %-5s %-25s %7d %9s %-13s %s\n",
		       (long long)al[i].id, al[i].branch, al[i].case_name,
		       al[i].found_by_span ? "span" : "head", range, al[i].commits,
		       gain, state_word(&al[i]), who);
	}
}

static int print_one(struct db *db, int64_t id)
{
	struct db_bisect_step *st = NULL;
	struct db_alert_finding *f = NULL;
	struct db_alert al;
	size_t nst = 0, nf = 0, i;
	double total = 0;
	char gain[32];
	int r;

	r = db_alert_load(db, &al, id);
	if (r == -ENOENT)
		return err_set(r, "no alert %lld", (long long)id);
	if (r < 0)
		return r;
	runner_format_gain_signed(gain, sizeof(gain), al.gain);
	printf("alert %lld: %s, case %s, %s %s over %d commit%s %s..%s\n", (long long)al.id,
	       al.branch, al.case_name, al.slower ? "slower" : "faster", gain, al.commits,
	       al.commits == 1 ? "" : "s", al.lo, al.hi);
	printf("found by: %s job's comparison %lld\n", al.found_by_span ? "a span" : "a head",
	       (long long)al.comparison_id);
	printf("state: %s%s%s\n", db_alert_state_name(al.state), al.detail ? ": " : "",
	       al.detail ? al.detail : "");
	if (al.state == DB_ALERT_RAISED)
		printf("triage: %s\n", db_alert_triage_name(al.triage));
	printf("bisection: %s\n", db_alert_bisect_name(al.bisect));
	r = db_bisect_steps(db, &st, &nst, id);
	for (i = 0; r == 0 && i < nst; i++)
		printf("  step %d: %.12s in %.12s..%.12s, jobs %lld and %lld: %s%s%s\n", st[i].step,
		       st[i].mid, st[i].lo, st[i].hi, (long long)st[i].lo_job,
		       (long long)st[i].hi_job, *st[i].outcome ? st[i].outcome : "running",
		       st[i].detail ? ": " : "", st[i].detail ? st[i].detail : "");
	if (r == 0)
		r = db_alert_findings(db, &f, &nf, id);
	for (i = 0; r == 0 && i < nf; i++)
		total = f[i].has_gain ? total + f[i].gain : NAN;
	for (i = 0; r == 0 && i < nf; i++) {
		printf("  %s %s", f[i].commit ? "commit" : "range", f[i].hi);
		if (!f[i].commit)
			printf(" from %s (%d commit%s)", f[i].lo, f[i].commits,
			       f[i].commits == 1 ? "" : "s");
		runner_format_gain_signed(gain, sizeof(gain), f[i].gain);
		if (f[i].has_gain)
			printf(", %s", gain);
		if (nf > 1 && isfinite(total) && total != 0)
			printf(" (%.0f%% of the findings' sum)", f[i].gain / total * 100);
		if (f[i].comparison_id)
			printf(", comparison %lld", (long long)f[i].comparison_id);
		if (f[i].note)
			printf(" (%s)", f[i].note);
		putchar('\n');
	}
	for (i = 0; i < nst; i++)
		db_bisect_step_release(&st[i]);
	free(st);
	for (i = 0; i < nf; i++)
		db_alert_finding_release(&f[i]);
	free(f);
	db_alert_release(&al);
	return r;
}

int cmd_alerts(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	struct db_alert *al = NULL;
	struct db *db = NULL;
	size_t n = 0, i;
	int64_t id = 0;
	int opt, ret = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", alerts_options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dbo.path = optarg;
			break;
		case 'h':
			fputs(cmd_alerts_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("alerts");
		}
	}
	if (optind + 1 == argc) {
		char *end;
		long long v = strtoll(argv[optind], &end, 10);

		if (end == argv[optind] || *end || v < 1) {
			log_warnx("alerts: '%s' is not an alert's id (a whole number from 1)",
				  argv[optind]);
			return cli_usage_error("alerts");
		}
		id = v;
	} else if (optind != argc) {
		log_warnx("alerts: expected at most one alert's id");
		return cli_usage_error("alerts");
	}
	db = cli_db_open_readonly(&dbo);
	if (!db)
		goto out;
	if (id) {
		if (print_one(db, id) < 0) {
			log_warnx("%s", err_last());
			goto out;
		}
	} else {
		if (db_alerts_list(db, &al, &n, false, SIZE_MAX) < 0) {
			log_warnx("%s", err_last());
			goto out;
		}
		print_list(db, al, n);
	}
	ret = EXIT_OK;
out:
	for (i = 0; i < n; i++)
		db_alert_release(&al[i]);
	free(al);
	db_close(db);
	return ret;
}
