/*
 * The history's spans (docs/history.md, "Spans"): at a poll, a span job
 * of each history branch whose span is due, comparing its head with an
 * older reference (span_commits back, the last span's head, or a tag).
 * Its verdicts are read as any head job's are, in history.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"

/* Seconds since an ISO time stored by time_now_iso; a huge number when it
 * cannot be read. */
static double seconds_since(const char *iso)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (!strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm))
		return 1e18;
	return difftime(time(NULL), timegm(&tm));
}

/* The reference a span of branch at head starts from, in base: "" when
 * no span is due. */
static int span_base(struct agent *a, char base[BUILDER_OID_HEX], const char *name,
		     const char *branch, const char *head)
{
	const struct agent_history *h = &a->cfg->history;
	char (*chain)[BUILDER_OID_HEX] = NULL;
	struct db_job last;
	bool due, reachable = true;
	size_t moved = 0;
	int r;

	base[0] = '\0';
	r = db_job_newest(a->db, &last, name);
	if (r == -ENOENT) {
		/* The first span reaches span_commits back, when the branch is
		 * that long. */
		due = true;
		r = 0;
	} else if (r < 0 || !strcmp(last.commit, head)) {
		db_job_release(&last);
		return r;
	} else {
		if (builder_first_parents(a->repo, &chain, &moved, head, last.commit,
					  AGENT_SPAN_COMMITS_MAX) < 0) {
			/* A force-push took the last span's head away. */
			log_info("history %s: %s; the next span reaches back from the head",
				 branch, err_last());
			moved = h->span_commits ? (size_t)h->span_commits : 1;
			reachable = false;
		}
		free(chain);
		due = (h->span_commits && moved >= (size_t)h->span_commits) ||
		      (h->span_hours > 0 && seconds_since(last.created_at) >= h->span_hours * 3600);
		if (due && reachable && h->reference == AGENT_SPAN_LAST)
			snprintf(base, BUILDER_OID_HEX, "%s", last.commit);
	}
	db_job_release(&last);
	if (due && h->reference == AGENT_SPAN_TAG) {
		char tag[256];

		r = builder_tag_back(a->repo, base, tag, sizeof(tag), head, h->tag_pattern,
				     AGENT_SPAN_COMMITS_MAX);
		if (r == -ENOENT)
			log_info("history %s: a span is due, and %s: none yet", branch, err_last());
		else if (r == 0)
			log_info("history %s: the span starts at tag %s (%.12s)", branch, tag, base);
		if (r == -ENOENT)
			r = 0;
	} else if (due && !*base) {
		r = builder_first_parent_back(a->repo, base, head, (size_t)h->span_commits);
		if (r == -ENOENT)
			r = 0;  /* a branch shorter than a span: none yet */
	}
	return r;
}

/* Queues a span job of branch (at head) when one is due. */
static int span_due(struct agent *a, const char *branch, const char *head)
{
	char name[256], base[BUILDER_OID_HEX];
	struct db_job job;
	int64_t id;
	int r;

	snprintf(name, sizeof(name), "span:%s", branch);
	r = span_base(a, base, name, branch, head);
	if (r < 0 || !*base)
		return r;
	memset(&job, 0, sizeof(job));
	job.kind = DB_JOB_SPAN;
	snprintf(job.head, sizeof(job.head), "%s", name);
	snprintf(job.commit, sizeof(job.commit), "%s", head);
	snprintf(job.base, sizeof(job.base), "%s", base);
	job.subject = xasprintf("span of %s", branch);
	r = db_job_queue(a->db, &id, &job);
	if (r == 1)
		log_info("history %s: span job %lld queued: %.12s against %.12s", branch,
			 (long long)id, head, base);
	free(job.subject);
	return r < 0 ? r : 0;
}

int agent_history_spans(struct agent *a, const struct builder_head *heads, size_t n)
{
	size_t i;
	int r = 0;

	if (!a->cfg->history.on || (!a->cfg->history.span_commits && !a->cfg->history.span_hours))
		return 0;
	for (i = 0; i < n && r == 0; i++)
		if (!heads[i].is_pull && agent_history_branch(a, heads[i].name))
			r = span_due(a, heads[i].name, heads[i].oid);
	return r;
}
