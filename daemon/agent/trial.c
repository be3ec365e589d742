/*
 * perfd agent --check --trial: the default branch's head built once as a
 * job builds it (the same sandbox, limits, environment, timeout and kind
 * of directory, under the work directory's lock), in a scratch directory
 * removed afterwards; nothing is stored. What a user's first job would
 * fail on is said before it does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "agent.h"
#include "builder.h"
#include "cli.h"
#include "daemon.h"

#define TRIAL_LINES 20
#define TRIAL_WIDTH 200
#define TRIAL_TRIED_MAX 10   /* paths said that the build tried and did not see */

struct trial {
	const char *branch;
	double timeout_s;
	bool line_start;       /* the recipe's output is at the start of a line */
};

static void on_start(void *ctx, const struct db_build *b)
{
	const struct trial *t = ctx;

	log_info("trial: building %s at %.12s in %s (timeout %g s, [build] timeout_s)",
		 t->branch, b->commit, b->dir, t->timeout_s);
}

/* The recipe's output on stderr as it comes, each line after "  | ", its
 * control characters made '?': the trial's progress. */
static void on_output(void *ctx, const char *buf, size_t len)
{
	struct trial *t = ctx;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (t->line_start)
			fputs("  | ", stderr);
		fputc(c < 0x20 && c != '\n' && c != '\t' ? '?' : c, stderr);
		t->line_start = c == '\n';
	}
}

/* Says the outcome on stdout: passed or why not, the end of its log and,
 * for a failure, the paths it looked for that the sandbox does not show. */
static void say_outcome(const struct agent *a, const struct db_build *b)
{
	struct strbuf sb = STRBUF_INIT, tail = STRBUF_INIT;
	size_t total, i, line;

	if (b->state == DB_BUILD_DONE) {
		strbuf_addf(&sb, "trial build passed: exit 0, artifacts");
		for (i = 0; i < b->nartifacts; i++)
			strbuf_addf(&sb, " %s", b->artifacts[i].name);
	} else {
		strbuf_addf(&sb, "trial build failed: %s", b->detail ? b->detail : "see its log");
	}
	strbuf_addf(&sb, " (%.1f s)", b->wall_ms / 1e3);
	total = cli_tail_lines(&tail, b->log, b->log_len, TRIAL_LINES, TRIAL_WIDTH, "  | ");
	if (!total)
		strbuf_adds(&sb, "; its output is empty\n");
	else if (total <= TRIAL_LINES)
		strbuf_addf(&sb, "; its output:\n%s", tail.buf);
	else
		strbuf_addf(&sb, "; the last %d of its %zu lines:\n%s", TRIAL_LINES, total,
			    tail.buf);
	strbuf_reset(&tail);
	line = b->state != DB_BUILD_DONE && total > TRIAL_LINES ?
	       cli_first_error(&tail, b->log, b->log_len, total - TRIAL_LINES + 1, TRIAL_WIDTH,
			       "  | ") : 0;
	if (line)
		strbuf_addf(&sb, "  its first error, line %zu:\n%s", line, tail.buf);
	if (b->state != DB_BUILD_DONE && a->sandbox && b->log)
		agent_sandbox_tried(&sb, a->cfg, a->sandbox, b->log, b->log_len, b->dir, TRIAL_TRIED_MAX);
	fputs(sb.buf, stdout);
	fflush(stdout);
	strbuf_release(&sb);
	strbuf_release(&tail);
}

/* What a trial needs of an agent: the work directory's lock (an agent
 * running there is not raced), its mirror fetched (or as it is, when the
 * fetch fails), the suite and the sandbox. */
static int trial_open(struct agent *a)
{
	int r = agent_open_mirror(a);

	/* Processes a sandbox leaves for an instant are ours to reap. */
	if (r == 0 && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_warnx("cannot become a subreaper: %s", strerror(errno));
	if (r == 0)
		r = agent_sandbox_open(a);
	if (r < 0)
		return r;
	log_info("trial: fetching %s", builder_repo_url(a->repo));
	r = agent_poll_mirror(a);
	if (r == -ECANCELED)
		return r;
	if (r < 0)
		log_warnx("trial: %s; building from the mirror as it is", err_last());
	if (!a->suite)
		return err_set(-EINVAL, "trial: no suite: %s on origin/%s could not be read",
			       a->cfg->suite_file, a->cfg->default_branch);
	if (a->cfg->suite_file && a->sandbox)
		agent_sandbox_unseen(a->cfg, a->sandbox, a->suite);
	return 0;
}

int agent_trial(struct agent_config *cfg, struct host_profile *profile, int cancel_fd)
{
	struct trial t = { .branch = cfg->default_branch, .line_start = true };
	struct builder_build_opts o;
	struct builder_commit c;
	struct agent *a = NULL;
	struct db_build b = { 0 };
	char *rev = xasprintf("origin/%s", cfg->default_branch);
	int r;

	memset(&c, 0, sizeof(c));
	r = agent_new(&a, cfg, profile, NULL, cancel_fd);
	if (r == 0)
		r = trial_open(a);
	if (r == 0)
		r = builder_commit_load(a->repo, &c, rev);
	if (r < 0)
		goto out;
	agent_build_opts(a, &o);
	t.timeout_s = o.timeout_s;
	o.on_start = on_start;
	o.on_output = on_output;
	o.ctx = &t;
	r = builder_build_try(&b, a->repo, c.oid, &o);
	if (!t.line_start)
		fputc('\n', stderr);
	if (r < 0)
		goto out;
	say_outcome(a, &b);
	r = fs_rm_rf(b.dir);
	if (r == 0)
		log_info("trial: %s removed; nothing stored", b.dir);
	else
		log_warnx("trial: %s", err_last());
	r = b.state == DB_BUILD_DONE ? 0 : 1;
out:
	db_build_release(&b);
	builder_commit_release(&c);
	agent_free(a);
	free(rev);
	return r;
}
