/* perfd log: a build's log and its contract runners' output, or a job's,
 * from the database, as GET /api/v1/builds/ID answers them. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "daemon.h"

/* Builds of a job's head and base commits shown, at most. */
#define LOG_JOB_BUILDS 64

const char cmd_log_usage[] =
	"usage: perfd log build ID [--db FILE]\n"
	"       perfd log job ID [--db FILE]\n"
	"\n"
	"Prints what the agent stored of a build or a job, from the database, as\n"
	"GET /api/v1/builds/ID answers it. A build: its commit, state and why it\n"
	"failed, its whole log as stored (the recipe's stdout and stderr, the\n"
	"first 1 MiB), then each contract runner's process with how it ended, its\n"
	"RESULT and SUMMARY lines and its output. A job: its head, commit, base and\n"
	"state, each build of its head and base commits as above, and each of its\n"
	"comparisons with its verdict and, when invalid, the reasons ('perfd show\n"
	"ID' prints one whole). The agent's console names the command when a job\n"
	"fails; 'perfd retry' queues a failed job again (docs/config.md, \"When a\n"
	"job fails\").\n"
	"\n"
	"options:\n"
	"  --db FILE          database file (default ./perfd.db)\n";

static const struct option log_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* How a runner's process ended, in words. */
static void runner_end(char *out, size_t n, const struct db_runner_result *x)
{
	if (x->spawn_error)
		snprintf(out, n, "did not start: %s", x->spawn_error);
	else if (x->timed_out)
		snprintf(out, n, "timed out");
	else if (x->signal)
		snprintf(out, n, "killed by signal %d", x->signal);
	else
		snprintf(out, n, "exited %d", x->exit_code);
}

/* Text as stored, ending with a line feed when it has any. */
static void put_text(const char *s, size_t len)
{
	if (!s || !len)
		return;
	fwrite(s, 1, len, stdout);
	if (s[len - 1] != '\n')
		putchar('\n');
}

static void print_runner(const struct db_runner_result *x)
{
	char end[256];
	size_t i;

	runner_end(end, sizeof(end), x);
	printf("--- runner %s", x->runner);
	if (x->chunks > 1)
		printf(" chunk %d of %d", x->chunk, x->chunks);
	printf(": %s (%.1f s)\n", end, x->elapsed_ms / 1e3);
	for (i = 0; i < x->nlines; i++)
		printf("%s %s\n", x->lines[i].kind ? x->lines[i].kind : "",
		       x->lines[i].text ? x->lines[i].text : "");
	if (x->output_len)
		printf("output:\n");
	put_text(x->output, x->output_len);
}

static int print_build(struct db *db, int64_t id)
{
	struct db_runner_result *res = NULL;
	struct db_build b;
	char *stale = NULL;
	size_t n = 0, i;
	int r;

	r = db_build_load(db, &b, id);
	if (r < 0)
		return r;
	r = db_runner_results_load(db, &res, &n, id);
	if (r < 0)
		goto out;
	if (db_build_stale_reason(db, &stale, id) < 0)
		stale = NULL;
	printf("build %lld of %s on %s, recipe %.12s: %s%s%s\n", (long long)b.id, b.commit,
	       b.host, b.recipe_hash, db_build_state_name(b.state), b.detail ? ": " : "",
	       b.detail ? b.detail : "");
	if (stale)
		printf("set aside: %s\n", stale);
	printf("started %s, %.1f s, in %s\n", b.started_at, b.wall_ms / 1e3, b.dir ? b.dir : "");
	if (b.log_bytes > (int64_t)b.log_len)
		printf("--- log: the first %zu of its %lld bytes\n", b.log_len,
		       (long long)b.log_bytes);
	else
		printf("--- log%s\n", b.log_len ? "" : ": empty");
	put_text(b.log, b.log_len);
	for (i = 0; r == 0 && i < n; i++) {
		r = db_runner_result_output(db, &res[i]);
		if (r == 0)
			print_runner(&res[i]);
	}
out:
	for (i = 0; i < n; i++)
		db_runner_result_release(&res[i]);
	free(res);
	free(stale);
	db_build_release(&b);
	return r;
}

/* A job's comparisons: each verdict, and an invalid one's reasons. */
static int print_comparisons(struct db *db, int64_t job_id)
{
	struct db_job_comparison *cs = NULL;
	size_t n = 0, i, k;
	int r;

	r = db_job_comparisons(db, &cs, &n, job_id);
	for (i = 0; r == 0 && i < n; i++) {
		struct db_comparison c;

		printf("comparison %lld, case %s%s: %s\n", (long long)cs[i].id, cs[i].case_name,
		       cs[i].aa ? " (A/A)" : "", *cs[i].verdict ? cs[i].verdict : "running");
		if (strcmp(cs[i].verdict, "invalid") || db_comparison_load(db, &c, cs[i].id) < 0)
			continue;
		for (k = 0; k < c.summary.nreasons; k++)
			printf("  %s\n", c.summary.reasons[k]);
		db_comparison_release(&c);
	}
	free(cs);
	return r;
}

static int print_job(struct db *db, const char *path, int64_t id)
{
	int64_t *ids = NULL;
	struct db_job j;
	size_t n = 0, i;
	int r;

	r = db_job_load(db, &j, id);
	if (r == -ENOENT)
		return err_set(r, "no job %lld in '%s'", (long long)id, path);
	if (r < 0)
		return r;
	printf("job %lld: %s at %s, base %s: %s%s%s\n", (long long)j.id, j.head, j.commit,
	       *j.base ? j.base : "(none)", db_job_state_name(j.state), j.detail ? ": " : "",
	       j.detail ? j.detail : "");
	r = db_build_ids_of_commits(db, &ids, &n, j.commit, j.base, LOG_JOB_BUILDS);
	if (r == 0 && n == 0)
		printf("no build of %.12s or its base\n", j.commit);
	for (i = 0; r == 0 && i < n; i++) {
		putchar('\n');
		r = print_build(db, ids[i]);
	}
	if (r == 0) {
		putchar('\n');
		r = print_comparisons(db, id);
	}
	free(ids);
	db_job_release(&j);
	return r;
}

int cmd_log(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	struct db *db = NULL;
	const char *what;
	char *end;
	long long id;
	int opt, r, ret = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", log_options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dbo.path = optarg;
			break;
		case 'h':
			fputs(cmd_log_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("log");
		}
	}
	if (optind + 2 != argc || (strcmp(argv[optind], "build") && strcmp(argv[optind], "job"))) {
		log_warnx("log: expected 'build ID' or 'job ID'");
		return cli_usage_error("log");
	}
	what = argv[optind];
	errno = 0;
	id = strtoll(argv[optind + 1], &end, 10);
	if (errno || end == argv[optind + 1] || *end || id < 1) {
		log_warnx("log: '%s' is not a %s's id (a whole number from 1)", argv[optind + 1],
			  what);
		return cli_usage_error("log");
	}
	db = cli_db_open_readonly(&dbo);
	if (!db)
		goto out;
	r = !strcmp(what, "build") ? print_build(db, id) : print_job(db, dbo.path, id);
	if (r < 0) {
		fflush(stdout);
		log_warnx("%s", err_last());
		goto out;
	}
	ret = EXIT_OK;
out:
	db_close(db);
	return ret;
}
