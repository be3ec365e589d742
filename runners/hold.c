/*
 * Holds for people: what a held commit did, in one sentence, and the hold
 * and quarantine that a fault line or a process that outlived SIGKILL
 * brings (docs/hosts.md, "When the machine goes down").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runners.h"

/* Seconds from a to b, two times time_now_iso wrote; -1 when either is not. */
static double seconds_between(const char *a, const char *b)
{
	struct timespec ta, tb;

	if (time_parse_iso(&ta, a) < 0 || time_parse_iso(&tb, b) < 0)
		return -1;
	return (double)(tb.tv_sec - ta.tv_sec) + (double)(tb.tv_nsec - ta.tv_nsec) / 1e9;
}

/* "the build", "contract runner 'x'", "case 'x'", then " of commit C". */
static void step_words(struct strbuf *sb, const struct db_hold *h)
{
	if (h->step == DB_HOLD_BUILD || h->step == DB_HOLD_JOB)
		strbuf_addf(sb, "the %s", db_hold_step_name(h->step));
	else
		strbuf_addf(sb, "%s '%s'", h->step == DB_HOLD_RUNNER ? "contract runner" : "case",
			    h->name);
	if (*h->commit)
		strbuf_addf(sb, " of commit %.12s", h->commit);
}

char *runner_hold_text(const struct db_hold *h)
{
	struct strbuf sb = STRBUF_INIT;
	double ran = seconds_between(h->started_at, h->last_at);

	if (h->why == DB_HOLD_UNKILLABLE) {
		strbuf_addf(&sb, "a process of ");
		step_words(&sb, h);
		strbuf_addf(&sb, " outlived SIGKILL: %s", h->detail ? h->detail : "?");
	} else if (h->why == DB_HOLD_GATE) {
		strbuf_addf(&sb, "commit %.12s changes '%s', one of the host profile's [gate] "
			    "paths: it runs here only once a person releases it", h->commit,
			    h->detail ? h->detail : "?");
	} else if (h->why == DB_HOLD_FAULT) {
		strbuf_addf(&sb, "a GPU fault while ");
		step_words(&sb, h);
		strbuf_addf(&sb, " ran");
		if (h->seq)
			strbuf_addf(&sb, " (its process %d, %s arm)", h->seq, h->arm);
	} else {
		strbuf_addf(&sb, "the machine went down while ");
		step_words(&sb, h);
		strbuf_addf(&sb, " ran (boot %.8s", *h->boot ? h->boot : "?");
		if (h->seq && ran >= 0)
			strbuf_addf(&sb, "; its process %d, %s arm, started %.0f s into it", h->seq,
				    *h->arm ? h->arm : "?", ran);
		else if (*h->started_at)
			strbuf_addf(&sb, "; started %s", h->started_at);
		strbuf_addf(&sb, ")");
	}
	if (h->job_id)
		strbuf_addf(&sb, ", job %lld", (long long)h->job_id);
	if (h->fault)
		strbuf_addf(&sb, "; fault line: '%s'", h->fault);
	if (h->log_read)
		strbuf_addf(&sb, "%s the previous boot's kernel log (%s)",
			    h->fault ? " in" : "; no fault line in", h->log_read);
	return strbuf_detach(&sb);
}

int runner_hold_store(struct db *db, int64_t *out_id, const struct db_hold *h,
		      char **out_text)
{
	struct db_hold stored;
	int64_t id = 0;
	char *text = NULL;
	int r;

	*out_id = 0;
	if (out_text)
		*out_text = NULL;
	r = db_transaction_begin(db);
	if (r < 0)
		return r;
	/* A step of no build (perfd pair's programs) names no commit to
	 * hold: the host alone is quarantined. */
	if (!h->build_id && !*h->commit) {
		text = runner_hold_text(h);
		r = db_host_quarantine(db, h->host, text, h->comparison_id, h->seq);
		goto out;
	}
	r = db_hold_add(db, &id, h);
	if (r == 0 && h->job_id)
		r = db_job_hold(db, h->job_id, id);
	if (r == 0)
		r = db_hold_load(db, &stored, id);
	if (r == 0) {
		text = runner_hold_text(&stored);
		r = db_host_quarantine(db, h->host, text, stored.comparison_id, stored.seq);
		db_hold_release(&stored);
	}
out:
	if (r == 0)
		r = db_transaction_commit(db);
	else
		db_transaction_rollback(db);
	if (r == 0)
		*out_id = id;
	if (r == 0 && out_text)
		*out_text = text;
	else
		free(text);
	return r;
}

int runner_hold_add(struct db *db, const char *host, const struct db_hold *step,
		    enum db_hold_why why, const char *what)
{
	struct db_hold h = *step;
	int64_t id;

	snprintf(h.host, sizeof(h.host), "%s", host);
	h.why = why;
	h.detail = why == DB_HOLD_UNKILLABLE ? (char *)what : NULL;
	h.fault = why == DB_HOLD_FAULT ? (char *)what : NULL;
	h.log_read = h.released_by = NULL;
	return runner_hold_store(db, &id, &h, NULL);
}

int runner_hold_lift(struct db *db, const struct db_hold *h, const char *by)
{
	int r = db_transaction_begin(db);

	if (r == 0)
		r = db_hold_lift(db, h->host, h->id, by);
	/* A gate quarantined nothing; what else did is not its to lift. */
	if (r >= 0 && h->why != DB_HOLD_GATE)
		r = db_host_clear(db, h->host);
	if (r >= 0)
		return db_transaction_commit(db);
	db_transaction_rollback(db);
	return r;
}
