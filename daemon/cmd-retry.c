/* perfd retry: a failed job of the agent queued again, with a fresh build;
 * with --held, a held commit released to run again. */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "daemon.h"
#include "runners.h"

/* Jobs of one branch queued again in one call, at most. */
#define RETRY_BRANCH_MAX 1000

const char cmd_retry_usage[] =
	"usage: perfd retry [--db FILE] JOB|HEAD\n"
	"       perfd retry [--db FILE] --branch NAME\n"
	"       perfd retry [--db FILE] --held [HOLD]\n"
	"\n"
	"Queues a failed job of the agent again with a fresh build: the builds of\n"
	"its head commit and the failed builds of its base are set aside (stale,\n"
	"with the reason), so that the agent's next run (its next poll, or 'perfd\n"
	"agent --once') builds them anew rather than finding the failure in its\n"
	"cache, then runs the contract runners and comparisons again. The job keeps\n"
	"its id; what failed stays readable ('perfd log job ID'). JOB is a job's id;\n"
	"HEAD a watched head's name (a branch, or pull/N): its newest job; with\n"
	"--branch, every failed job of that branch, whatever its commit. A job that\n"
	"has not failed is left as it is (exit 2).\n"
	"\n"
	"A changed [build] recipe needs no retry: the agent's next poll queues again\n"
	"each failed head whose commit was built only with other recipes\n"
	"(docs/config.md, \"When a job fails\").\n"
	"\n"
	"With --held, releases a commit held on its host (docs/hosts.md, \"When the\n"
	"machine goes down\"): the machine went down while a step of it ran, a\n"
	"process of it outlived SIGKILL, or a GPU fault came while it ran. HOLD is\n"
	"the hold's id ('perfd host list' lists them); without it, every hold in\n"
	"force. The host's quarantine is lifted with it, and the agent's next run\n"
	"runs the held step once more, with the jobs that waited on it.\n"
	"\n"
	"options:\n"
	"  --db FILE          the agent's database file (default ./perfd.db)\n"
	"  --branch NAME      every failed job of the branch NAME\n"
	"  --held             release a held commit: HOLD, or every one\n";

static const struct option retry_options[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "branch", required_argument, NULL, 'b' },
	{ "held", no_argument, NULL, 'H' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int retry_one(struct db *db, int64_t id)
{
	char *reason = xasprintf("set aside by perfd retry of job %lld", (long long)id);
	struct db_job j;
	int r = db_job_retry(db, id, true, reason);

	free(reason);
	if (r < 0)
		return r;
	if (db_job_load(db, &j, id) == 0)
		printf("job %lld (%s at %.12s): queued again, %d build%s set aside; the agent's "
		       "next run builds it\n", (long long)id, j.head, j.commit, r, r == 1 ? "" : "s");
	db_job_release(&j);
	return 0;
}

/* The job that arg names: a job's id, else a head's newest job. */
static int job_named(struct db *db, int64_t *out, const char *arg, const char *path)
{
	struct db_job j;
	char *end;
	long long v;
	int r;

	*out = 0;
	errno = 0;
	v = strtoll(arg, &end, 10);
	if (!errno && end != arg && !*end && v >= 1) {
		*out = v;
		return 0;
	}
	r = db_job_newest(db, &j, arg);
	if (r == -ENOENT)
		return err_set(r, "'%s' is neither a job's id (a whole number from 1) nor a head "
			       "with a job in '%s'", arg, path);
	if (r == 0)
		*out = j.id;
	db_job_release(&j);
	return r;
}

static int retry_branch(struct db *db, const char *branch, const char *path)
{
	int64_t *ids = NULL;
	size_t n = 0, i;
	int r;

	r = db_jobs_failed_of_head(db, &ids, &n, branch, RETRY_BRANCH_MAX);
	if (r == 0 && n == 0)
		r = err_set(-ENOENT, "branch '%s' has no failed job in '%s': nothing to retry",
			    branch, path);
	for (i = 0; r == 0 && i < n; i++)
		r = retry_one(db, ids[i]);
	free(ids);
	return r;
}

/* Releases hold h, said on stdout. */
static int release_one(struct db *db, const struct db_hold *h, const char *by)
{
	char *text = runner_hold_text(h);
	int r = runner_hold_lift(db, h, by);

	if (r == 0)
		printf("hold %lld released (%s)%s%s%s; the agent's next run runs it\n",
		       (long long)h->id, text, h->why == DB_HOLD_GATE ? "" : ": host '",
		       h->why == DB_HOLD_GATE ? "" : h->host,
		       h->why == DB_HOLD_GATE ? "" : "' cleared");
	free(text);
	return r;
}

/* perfd retry --held [HOLD]: that hold, or every one in force. */
static int retry_held(struct db *db, const char *arg, const char *path)
{
	struct passwd *pw = getpwuid(geteuid());
	char *by = xasprintf("perfd retry --held, by %s", pw ? pw->pw_name : "?");
	struct db_hold *v = NULL;
	size_t n = 0, i;
	int r;

	if (arg) {
		char *end;
		long long id;

		errno = 0;
		id = strtoll(arg, &end, 10);
		if (errno || end == arg || *end || id < 1) {
			free(by);
			return err_set(-EINVAL, "'%s' is not a hold's id (a whole number from 1)", arg);
		}
		v = xcalloc(1, sizeof(*v));
		r = db_hold_load(db, v, id);
		n = r == 0;
		if (r == 0 && *v->released_at)
			r = err_set(-EALREADY, "hold %lld was released at %s (%s)", id,
				    v->released_at, v->released_by ? v->released_by : "?");
	} else {
		r = db_hold_list(db, &v, &n, NULL, true);
		if (r == 0 && !n)
			r = err_set(-ENOENT, "no commit is held in '%s': nothing to release", path);
	}
	for (i = 0; r == 0 && i < n; i++)
		r = release_one(db, &v[i], by);
	for (i = 0; i < n; i++)
		db_hold_release(&v[i]);
	free(v);
	free(by);
	return r;
}

int cmd_retry(int argc, char **argv)
{
	struct db_opts dbo = DB_OPTS_INIT;
	const char *branch = NULL;
	struct db *db = NULL;
	bool held = false;
	int64_t id = 0;
	int opt, r, ret = EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", retry_options, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dbo.path = optarg;
			break;
		case 'b':
			branch = optarg;
			break;
		case 'H':
			held = true;
			break;
		case 'h':
			fputs(cmd_retry_usage, stdout);
			return EXIT_OK;
		default:
			return cli_usage_error("retry");
		}
	}
	if (held ? branch || optind + 1 < argc : branch ? optind != argc : optind + 1 != argc) {
		log_warnx("retry: expected a job's id or a head's name, --branch NAME alone, or "
			  "--held with a hold's id or none");
		return cli_usage_error("retry");
	}
	db = cli_db_open(&dbo);
	if (!db)
		goto out;
	if (held) {
		r = retry_held(db, optind < argc ? argv[optind] : NULL, dbo.path);
	} else if (branch) {
		r = retry_branch(db, branch, dbo.path);
	} else {
		r = job_named(db, &id, argv[optind], dbo.path);
		if (r == 0)
			r = retry_one(db, id);
	}
	if (r < 0) {
		log_warnx("retry: %s", err_last());
		goto out;
	}
	ret = EXIT_OK;
out:
	db_close(db);
	return ret;
}
