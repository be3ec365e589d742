/*
 * What a pull request's head stands at on each host: the verdicts of a
 * host's done job, counted for its commit status, and the state of a host
 * that is not done with it yet, for the hub's statuses and comment
 * (docs/hub.md). Read from stored rows alone: jobs, their comparisons and
 * each host's newest heartbeat.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forge.h"
#include "runners.h"

/* Whether a done job's n comparisons (one per case) are all it has: a
 * hub's job waits for as many as its record said, or for one at least when
 * its record (an older agent's) did not say; this database's own job has
 * all of its own. When not, desc says what is missing. */
static bool counted(struct strbuf *desc, const struct db_job *job, int n)
{
	if (!*job->host || !*job->base)
		return true;
	if (job->comparisons >= 0 && n < job->comparisons) {
		strbuf_addf(desc, "built; %d of %lld comparisons in", n,
			    (long long)job->comparisons);
		return false;
	}
	if (job->comparisons < 0 && n == 0) {
		strbuf_adds(desc, "built; no comparison in yet");
		return false;
	}
	return true;
}

const char *web_job_verdicts(struct strbuf *desc, struct db *db, const struct db_job *job)
{
	struct db_job_comparison *cs = NULL;
	struct strbuf slow = STRBUF_INIT;
	int faster = 0, slower = 0, same = 0, other = 0, aa = 0;
	size_t n = 0, i, k;

	if (job->state == DB_JOB_QUEUED || job->state == DB_JOB_RUNNING) {
		strbuf_adds(desc, job->state == DB_JOB_QUEUED ? "queued" : "running");
		return "pending";
	}
	if (job->state == DB_JOB_FAILED) {
		strbuf_adds(desc, job->detail ? job->detail : "failed");
		return "failure";
	}
	if (db_job_comparisons(db, &cs, &n, job->id) < 0)
		n = 0;
	for (i = 0; i < n; i++) {
		const struct db_job_comparison *c = &cs[i];

		/* The newest comparison of each case counts. */
		for (k = i + 1; k < n && strcmp(cs[k].case_name, c->case_name); k++)
			;
		if (k < n)
			continue;
		if (c->aa) {
			aa++;   /* one build against itself: never a change */
		} else if (!strcmp(c->verdict, "faster")) {
			faster++;
		} else if (!strcmp(c->verdict, "unchanged")) {
			same++;
		} else if (!strcmp(c->verdict, "slower")) {
			if (!slower++) {
				char gain[32];

				runner_format_gain_signed(gain, sizeof(gain),
							  c->has_gain ? c->gain_median : NAN);
				strbuf_addf(&slow, "%s %s", c->case_name, gain);
			}
		} else {
			other++;
		}
	}
	free(cs);
	if (!counted(desc, job, faster + slower + same + other + aa)) {
		strbuf_release(&slow);
		return "pending";
	}
	if (slower)
		strbuf_addf(desc, "slower: %s (%d of %d cases)", slow.buf, slower,
			    faster + slower + same + other + aa);
	else if (faster + same + other)
		strbuf_addf(desc, "%d faster, %d unchanged, %d unresolved or invalid", faster,
			    same, other);
	if (aa && !slower)
		strbuf_addf(desc, "%s%d A/A (the same build: not a change)", desc->len ? ", " : "",
			    aa);
	else if (!slower && !(faster + same + other))
		strbuf_addf(desc, "built and checked%s", *job->base ? "" : "; no base to compare");
	strbuf_release(&slow);
	return slower ? "failure" : "success";
}

/* Seconds between two of perfd's times ("2026-11-04T10:00:00.123Z"). */
static double seconds_between(const char *from, const char *to)
{
	struct timespec a, b;

	if (time_parse_iso(&a, from) < 0 || time_parse_iso(&b, to) < 0)
		return 0;
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

/* Host's hold of the commit or base (held, unless its job is done or
 * failed), or another host's of the same kind of device (a warning), said
 * in out. */
static void say_holds(struct web_host_state *out, const struct db_hub_hold *v, size_t n,
		      const char *kind)
{
	const struct db_hub_hold *kin = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct db_hub_hold *h = &v[i];

		if (!strcmp(h->host, out->host)) {
			if (out->state == WEB_HOST_HELD || out->state == WEB_HOST_DONE ||
			    out->state == WEB_HOST_FAILED)
				continue;
			out->state = WEB_HOST_HELD;
			out->status = h->why == DB_HOLD_GATE ? "pending" : "error";
			/* The way out first: a status keeps 140 characters. */
			strbuf_reset(&out->desc);
			if (*h->greenlit_by)
				strbuf_addf(&out->desc, "held; released by %s's /perfd greenlight, "
					    "waiting for the host: %s", h->greenlit_by, h->text);
			else
				strbuf_addf(&out->desc, "held; a maintainer's '/perfd greenlight %s' "
					    "runs it: %s", out->host, h->text);
		} else if (!kin && kind && h->kind && !strcmp(kind, h->kind)) {
			kin = h;
		}
	}
	if (kin && out->state != WEB_HOST_HELD) {
		out->kin_held = true;
		strbuf_addf(&out->desc, "; warning: held on %s, of the same kind: %s", kin->host,
			    kin->text);
	}
}

int web_host_state(struct web_host_state *out, struct db *db, const char *host,
		   const char *commit, const char *base, double silent_after_s)
{
	struct db_job jobs[WEB_COMMENT_JOBS_MAX];
	struct db_hub_hold *holds = NULL;
	struct db_host_status hs;
	char now[TIME_ISO_LEN];
	size_t nholds = 0;
	bool heard;
	int n, i, r;

	memset(out, 0, sizeof(*out));
	snprintf(out->host, sizeof(out->host), "%s", host);
	strbuf_init(&out->desc);
	time_now_iso(now);
	r = db_host_status_get(db, &hs, host);
	if (r < 0 && r != -ENOENT)
		return r;
	heard = r == 0;
	n = db_commit_jobs(db, jobs, ARRAY_SIZE(jobs), commit);
	if (n < 0) {
		db_host_status_release(&hs);
		return n;
	}
	/* The host's newest job of the commit. */
	for (i = 0; i < n; i++) {
		if (!strcmp(jobs[i].host, host)) {
			db_job_release(&out->job);
			out->job = jobs[i];
			out->has_job = true;
			memset(&jobs[i], 0, sizeof(jobs[i]));
		}
		db_job_release(&jobs[i]);
	}
	if (out->has_job && base && *base && strcmp(out->job.base, base))
		out->base_differs = true;
	if (out->has_job && (out->job.state == DB_JOB_DONE || out->job.state == DB_JOB_FAILED)) {
		out->state = out->job.state == DB_JOB_DONE ? WEB_HOST_DONE : WEB_HOST_FAILED;
		out->status = web_job_verdicts(&out->desc, db, &out->job);
	} else if (heard && hs.quarantined) {
		out->state = WEB_HOST_QUARANTINED;
		strbuf_addf(&out->desc, "quarantined since %s: %s", hs.sent_at,
			    hs.fault ? hs.fault : "a fault");
	} else if (!heard || seconds_between(hs.received_at, now) > silent_after_s) {
		out->state = WEB_HOST_SILENT;
		if (heard)
			strbuf_addf(&out->desc, "silent since %s", hs.received_at);
		else
			strbuf_adds(&out->desc, "never heard from");
	} else if (!out->has_job) {
		out->state = WEB_HOST_WAITING;
		strbuf_adds(&out->desc, "not queued yet");
	} else if (out->job.state == DB_JOB_QUEUED) {
		out->state = WEB_HOST_QUEUED;
		strbuf_adds(&out->desc, "queued");
	} else if (hs.job_origin == out->job.origin_id && !strcmp(hs.state, "measuring")) {
		out->state = WEB_HOST_MEASURING;
		strbuf_adds(&out->desc, "measuring");
	} else {
		out->state = WEB_HOST_BUILDING;
		strbuf_adds(&out->desc, "building");
	}
	if (!out->status)
		out->status = "pending";
	if (out->base_differs)
		strbuf_addf(&out->desc, "; compared against base %.12s, not %.12s", out->job.base,
			    base);
	r = db_hub_holds_list(db, &holds, &nholds, NULL, commit, base && *base ? base : NULL);
	if (r == 0)
		say_holds(out, holds, nholds, heard ? hs.kind : NULL);
	for (i = 0; i < (int)nholds; i++)
		db_hub_hold_release(&holds[i]);
	free(holds);
	db_host_status_release(&hs);
	return r;
}

const char *web_host_at_name(enum web_host_at at)
{
	static const char *const words[] = {
		[WEB_HOST_DONE] = "done", [WEB_HOST_FAILED] = "failed",
		[WEB_HOST_QUEUED] = "queued", [WEB_HOST_BUILDING] = "building",
		[WEB_HOST_MEASURING] = "measuring", [WEB_HOST_QUARANTINED] = "quarantined",
		[WEB_HOST_SILENT] = "silent", [WEB_HOST_WAITING] = "pending",
		[WEB_HOST_HELD] = "held",
	};

	assert((size_t)at < ARRAY_SIZE(words));
	return words[at];
}

void web_host_state_release(struct web_host_state *s)
{
	if (!s)
		return;
	db_job_release(&s->job);
	strbuf_release(&s->desc);
}
