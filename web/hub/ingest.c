/*
 * The writes the hub accepts (docs/hub.md): who a token belongs to, and the
 * ingest of one comparison record. A record is taken apart strictly
 * (wire_record_parse), placed against what the hub holds of its host
 * (the same record again stores nothing; the same id with other content is
 * refused), its calibration's ids are mapped to the hub's own rows of that
 * host, every figure is recomputed from its process records with the rule
 * it names and compared (runner_verify), and only then is it stored, whole,
 * in one transaction.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "runners.h"
#include "wire.h"
#include "hub-internal.h"

#define TOKEN_HEX 64

static bool is_token(const char *s)
{
	size_t i;

	for (i = 0; i < TOKEN_HEX; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[TOKEN_HEX] == '\0';
}

int web_token_check(struct web_identity *out, struct db *db, const char *authorization)
{
	struct db_token *tokens = NULL;
	char hash[SHA256_HEX_SIZE];
	const char *token;
	size_t n = 0, i, match = 0;
	bool found = false;
	int r;

	memset(out, 0, sizeof(*out));
	if (!authorization)
		return err_set(-EACCES, "no token: send 'Authorization: Bearer TOKEN'");
	if (strncasecmp(authorization, "Bearer ", 7))
		return err_set(-EACCES, "the Authorization header is not 'Bearer TOKEN'");
	token = authorization + 7;
	while (*token == ' ')
		token++;
	if (!is_token(token))
		return err_set(-EACCES, "the token is not 64 lower-case hex digits");
	r = sha256_hex(hash, token, TOKEN_HEX);
	if (r < 0)
		return r;
	r = db_token_list(db, &tokens, &n, true, WEB_TOKENS_MAX);
	if (r < 0)
		return r;
	/* Every live token is compared, each in constant time: how long this
	 * takes says nothing of which one, if any, matched. */
	for (i = 0; i < n; i++) {
		bool same = sha256_hex_equal(hash, tokens[i].sha256);

		match = same ? i : match;
		found |= same;
	}
	if (found) {
		out->kind = tokens[match].kind;
		snprintf(out->name, sizeof(out->name), "%s", tokens[match].name);
	} else {
		r = err_set(-EACCES, "the token is not one this hub issued, or it was revoked");
	}
	free(tokens);
	return r;
}

static void reply(struct web_reply *out, int status, json_t *root)
{
	char *text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(12));

	out->status = status;
	out->type = "application/json";
	strbuf_reset(&out->body);
	strbuf_adds(&out->body, text ? text : "null");
	strbuf_addch(&out->body, '\n');
	free(text);
	json_decref(root);
}

static void reply_stored(struct web_reply *out, int status, const char *host, int64_t origin_id,
			 int64_t id, bool stored)
{
	reply(out, status, json_pack("{s:I,s:s,s:I,s:b}", "comparison", (json_int_t)id,
				     "host", host, "id", (json_int_t)origin_id, "stored", stored));
}

/* The figures that differ, from runner_verify's report (a line each,
 * "gain.median: stored X, recomputed Y"), as the answer names them: the
 * record's value is the one sent. */
static void reply_mismatches(struct web_reply *out, const char *report, int n, int checked)
{
	json_t *list = json_array();
	struct strbuf names = STRBUF_INIT, line = STRBUF_INIT, msg = STRBUF_INIT;
	const char *p = report, *nl, *stored;

	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		strbuf_reset(&line);
		strbuf_add(&line, p, (size_t)(nl - p));
		stored = strstr(line.buf, ": stored ");
		strbuf_addf(&names, "%s%.*s", names.len ? ", " : "",
			    (int)strcspn(line.buf, ":"), line.buf);
		if (stored) {
			struct strbuf fixed = STRBUF_INIT;

			strbuf_add(&fixed, line.buf, (size_t)(stored - line.buf));
			strbuf_addf(&fixed, ": sent %s", stored + strlen(": stored "));
			json_array_append_new(list, utf8_json(fixed.buf, fixed.len));
			strbuf_release(&fixed);
		} else {
			json_array_append_new(list, utf8_json(line.buf, line.len));
		}
		if (!*nl)
			break;
	}
	strbuf_addf(&msg, "%d of %d figures differ from the rule's: %s", n, checked, names.buf);
	reply(out, 422, json_pack("{s:o,s:o}", "error", utf8_json(msg.buf, msg.len),
				  "mismatches", list));
	strbuf_release(&names);
	strbuf_release(&line);
	strbuf_release(&msg);
}

/* Replaces the calibration's ids (the host's) with the hub's rows of the
 * same host, loaded. Those not here are listed in missing; 0 then, with
 * nothing loaded. A database error is returned. */
static int map_calibration(struct db *db, struct db_comparison *c, struct strbuf *missing)
{
	struct db_origin o;
	size_t i;
	int r;

	for (i = 0; i < c->ncalibration; i++) {
		r = db_origin_get(db, &o, c->host, c->calibration[i].comparison_id);
		if (r == -ENOENT) {
			strbuf_addf(missing, "%s%lld", missing->len ? ", " : "",
				    (long long)c->calibration[i].comparison_id);
			continue;
		}
		if (r < 0)
			return r;
		if (missing->len)
			continue;
		db_calibration_release(&c->calibration[i]);
		c->calibration[i].comparison_id = o.comparison_id;
		r = db_calibration_load(db, &c->calibration[i], 1);
		if (r < 0)
			return r;
	}
	return 0;
}

/* What stops a record before its figures are checked: a 4xx answer, or 0. */
static int refuse(struct web_reply *out, const struct wire_record *rec,
		  const struct web_identity *who)
{
	const struct db_comparison *c = &rec->c;
	char msg[256];
	size_t i;

	if (strcmp(c->host, who->name)) {
		snprintf(msg, sizeof(msg), "the record is of host '%s', and the token is host "
			 "'%s''s: a token writes only its own host's records", c->host, who->name);
		web_reply_error(out, 403, msg);
		return 403;
	}
	if (c->state != DB_STATE_DONE) {
		snprintf(msg, sizeof(msg), "comparison %lld of host '%s' is %s: only a done "
			 "comparison is accepted", (long long)rec->origin_id, c->host,
			 db_state_name(c->state));
		web_reply_error(out, 422, msg);
		return 422;
	}
	if (!c->has_summary) {
		snprintf(msg, sizeof(msg), "comparison %lld of host '%s' has no summary",
			 (long long)rec->origin_id, c->host);
		web_reply_error(out, 422, msg);
		return 422;
	}
	for (i = 0; i < c->nprocesses; i++) {
		if (c->processes[i].state != DB_STATE_DONE) {
			snprintf(msg, sizeof(msg), "processes[%zu] is %s: every process of a done "
				 "comparison is done", i, db_state_name(c->processes[i].state));
			web_reply_error(out, 422, msg);
			return 422;
		}
	}
	return 0;
}

static void reply_db_error(struct web_reply *out)
{
	log_warnx("ingest: %s", err_last());
	web_reply_error(out, 500, err_last());
}

/* The commit of the host's job origin_job at the hub into commit, or "". */
static void job_commit(char commit[41], struct db *db, const char *host, int64_t origin_job)
{
	struct db_job j;
	int64_t id;

	commit[0] = '\0';
	if (origin_job <= 0 || db_job_origin(db, &id, host, origin_job) < 0)
		return;
	if (db_job_load(db, &j, id) == 0)
		snprintf(commit, 41, "%s", j.commit);
	db_job_release(&j);
}

int web_ingest_comparison(struct web_reply *out, struct db *db,
			  const struct web_identity *who, const char *body, size_t len,
			  char commit[41])
{
	struct strbuf missing = STRBUF_INIT, report = STRBUF_INIT;
	struct wire_record rec;
	struct db_summary again;
	struct db_origin had, o;
	struct db_comparison *c = &rec.c;
	int64_t id;
	int checked = 0, n, r, changed = 0;

	commit[0] = '\0';
	memset(&again, 0, sizeof(again));
	r = wire_record_parse(&rec, body, len);
	if (r < 0) {
		web_reply_error(out, 400, err_last());
		goto out;
	}
	if (refuse(out, &rec, who))
		goto out;
	r = db_origin_get(db, &had, c->host, rec.origin_id);
	if (r == 0 && !strcmp(had.sha256, rec.sha256)) {
		reply_stored(out, 200, c->host, rec.origin_id, had.comparison_id, false);
		goto out;
	}
	if (r == 0) {
		char msg[512];

		snprintf(msg, sizeof(msg), "comparison %lld of host '%s' is here already (as %lld, "
			 "received %s) with other content: sha256 %s, this one %s; a finished "
			 "record never changes", (long long)rec.origin_id, c->host,
			 (long long)had.comparison_id, had.received_at, had.sha256, rec.sha256);
		log_warnx("ingest: %s", msg);
		web_reply_error(out, 409, msg);
		goto out;
	}
	if (r != -ENOENT) {
		reply_db_error(out);
		goto out;
	}
	r = map_calibration(db, c, &missing);
	if (r < 0) {
		reply_db_error(out);
		goto out;
	}
	if (missing.len) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg, "calibration: comparison%s %s of host '%s' %s not at this hub: "
			    "send %s first", strchr(missing.buf, ',') ? "s" : "", missing.buf,
			    c->host, strchr(missing.buf, ',') ? "are" : "is",
			    strchr(missing.buf, ',') ? "them" : "it");
		web_reply_error(out, 422, msg.buf);
		strbuf_release(&msg);
		goto out;
	}
	/* The rule's messages name the comparison by the id its host gave it. */
	c->id = rec.origin_id;
	n = runner_verify_summary(&again, &report, c, &checked);
	if (n < 0) {
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg, "host '%s': %s", c->host, err_last());
		web_reply_error(out, 422, msg.buf);
		strbuf_release(&msg);
		goto out;
	}
	if (n > 0) {
		reply_mismatches(out, report.buf, n, checked);
		goto out;
	}
	/* What the hub stores is its own computation, which the record's
	 * figures were just found equal to. */
	memset(&o, 0, sizeof(o));
	snprintf(o.host, sizeof(o.host), "%s", c->host);
	o.origin_id = rec.origin_id;
	o.origin_job = rec.origin_job;
	o.origin_base_build = rec.origin_base_build;
	o.origin_head_build = rec.origin_head_build;
	memcpy(o.sha256, rec.sha256, sizeof(o.sha256));
	r = db_comparison_ingest(db, &id, c, &again, &o);
	if (r < 0) {
		reply_db_error(out);
		goto out;
	}
	log_info("ingest: comparison %lld of host '%s' stored as %lld", (long long)rec.origin_id,
		 c->host, (long long)id);
	reply_stored(out, 201, c->host, rec.origin_id, id, true);
	job_commit(commit, db, c->host, rec.origin_job);
	changed = 2;
out:
	db_summary_release(&again);
	strbuf_release(&missing);
	strbuf_release(&report);
	wire_record_release(&rec);
	return changed;
}

/* ---- job updates and heartbeats ---- */

static int refuse_host(struct web_reply *out, const char *host, const struct web_identity *who)
{
	char msg[256];

	if (!strcmp(host, who->name))
		return 0;
	snprintf(msg, sizeof(msg), "the record is of host '%s', and the token is host '%s''s: "
		 "a token writes only its own host's records", host, who->name);
	web_reply_error(out, 403, msg);
	return 403;
}

/* Answers a write's failure: 409 (logged) for a record the hub holds with
 * other content (-EEXIST), 500 for a database error; false when r is 0. */
static bool refused_write(struct web_reply *out, int r)
{
	if (r == -EEXIST) {
		log_warnx("ingest: %s", err_last());
		web_reply_error(out, 409, err_last());
	} else if (r < 0) {
		reply_db_error(out);
	}
	return r < 0;
}

int web_ingest_job(struct web_reply *out, struct db *db, const struct web_identity *who,
		   const char *body, size_t len, char commit[41])
{
	struct wire_job_record rec;
	struct db_job *j = &rec.job;
	bool stored = false;
	int64_t id = 0;
	int r, changed = 0;

	commit[0] = '\0';
	r = wire_job_record_parse(&rec, body, len);
	if (r < 0) {
		web_reply_error(out, 400, err_last());
		goto out;
	}
	if (refuse_host(out, j->host, who))
		goto out;
	r = db_job_ingest(db, j, rec.sha256, &id, &stored);
	if (refused_write(out, r))
		goto out;
	if (stored) {
		log_info("ingest: job %lld of host '%s' (%s at %.12s): %s, update %lld, as %lld",
			 (long long)j->origin_id, j->host, j->head, j->commit,
			 db_job_state_name(j->state), (long long)j->seq, (long long)id);
		snprintf(commit, 41, "%s", j->commit);
		changed = j->state == DB_JOB_DONE || j->state == DB_JOB_FAILED ? 2 : 1;
	}
	reply(out, stored ? 201 : 200, json_pack("{s:I,s:s,s:I,s:I,s:b}", "job", (json_int_t)id,
						 "host", j->host, "id", (json_int_t)j->origin_id,
						 "seq", (json_int_t)j->seq, "stored", stored));
out:
	wire_job_record_release(&rec);
	return changed;
}

/* The holds heartbeat h lists, as its host's in force. When they changed,
 * commit is the newest's, whose pull requests' rows say it first. */
static int holds_put(char commit[41], struct db *db, const struct wire_heartbeat *h)
{
	struct db_hub_hold *hs = xcalloc(h->nholds + 1, sizeof(*hs));
	bool changed = false;
	size_t i;
	int r;

	for (i = 0; i < h->nholds; i++) {
		const struct wire_hold *w = &h->holds[i];

		hs[i] = (struct db_hub_hold){ .origin_id = w->id, .why = w->why, .step = w->step,
					      .text = w->text };
		memcpy(hs[i].commit, w->commit, sizeof(w->commit));
		memcpy(hs[i].tree, w->tree, sizeof(w->tree));
		memcpy(hs[i].since, w->since, sizeof(w->since));
	}
	r = db_hub_holds_set(db, h->host, hs, h->nholds, &changed);
	if (r == 0 && changed && h->nholds)
		memcpy(commit, h->holds[0].commit, 41);
	free(hs);
	return r;
}

/* The holds of host a maintainer released here, for its heartbeat's answer
 * (its greenlit the caller's to release). */
static int greenlit(struct wire_heartbeat_reply *rep, struct db *db, const char *host)
{
	struct db_hub_hold *hs = NULL;
	size_t n = 0, i;
	int r = db_hub_holds_list(db, &hs, &n, host, NULL, NULL);

	memset(rep, 0, sizeof(*rep));
	rep->greenlit = xcalloc(WIRE_GREENLIT_MAX, sizeof(*rep->greenlit));
	for (i = 0; i < n; i++) {
		if (*hs[i].greenlit_by && rep->ngreenlit < WIRE_GREENLIT_MAX) {
			struct wire_greenlight *g = &rep->greenlit[rep->ngreenlit++];

			g->hold = hs[i].origin_id;
			g->pr = hs[i].greenlit_pr;
			snprintf(g->by, sizeof(g->by), "%s", hs[i].greenlit_by);
		}
		db_hub_hold_release(&hs[i]);
	}
	free(hs);
	return r;
}

int web_ingest_heartbeat(struct web_reply *out, struct db *db, const struct web_identity *who,
			 const char *body, size_t len, char commit[41])
{
	struct wire_heartbeat_reply rep;
	struct wire_heartbeat h;
	struct db_host_status s;
	bool stored = false;
	int r;

	commit[0] = '\0';
	memset(&rep, 0, sizeof(rep));
	r = wire_heartbeat_parse(&h, body, len);
	if (r < 0) {
		web_reply_error(out, 400, err_last());
		goto out;
	}
	if (refuse_host(out, h.host, who))
		goto out;
	memset(&s, 0, sizeof(s));
	snprintf(s.host, sizeof(s.host), "%s", h.host);
	s.seq = h.seq;
	memcpy(s.sent_at, h.sent_at, sizeof(s.sent_at));
	snprintf(s.state, sizeof(s.state), "%s", h.state);
	s.job_origin = h.job;
	s.backlog = h.backlog;
	s.fingerprint = h.fingerprint;
	s.quarantined = h.quarantined;
	s.fault = h.fault;
	s.sandbox = h.sandbox;
	s.kind = h.kind;
	r = db_host_status_put(db, &s, &stored);
	if (r == 0 && stored)
		r = holds_put(commit, db, &h);
	if (r == 0)
		r = greenlit(&rep, db, h.host);
	if (r < 0) {
		reply_db_error(out);
		goto out;
	}
	rep.stored = stored;
	snprintf(rep.host, sizeof(rep.host), "%s", h.host);
	rep.seq = h.seq;
	out->status = 200;
	out->type = "application/json";
	strbuf_reset(&out->body);
	wire_heartbeat_reply_build(&out->body, &rep);
	strbuf_addch(&out->body, '\n');
	if (stored && !*commit)
		job_commit(commit, db, h.host, h.job);
out:
	wire_heartbeat_reply_release(&rep);
	wire_heartbeat_release(&h);
	return stored;
}


int web_ingest_build(struct web_reply *out, struct db *db, const struct web_identity *who,
		     const char *body, size_t len, char commit[41])
{
	struct wire_build_record rec;
	struct db_build *b = &rec.build;
	bool stored = false;
	int64_t id = 0;
	int r, changed = 0;

	commit[0] = '\0';
	r = wire_build_record_parse(&rec, body, len);
	if (r < 0) {
		web_reply_error(out, 400, err_last());
		goto out;
	}
	if (refuse_host(out, b->host, who))
		goto out;
	r = db_build_ingest(db, b, rec.origin_id, rec.build_sha256, rec.results,
			    rec.results_origin, rec.nresults, &id, &stored);
	if (refused_write(out, r))
		goto out;
	if (stored) {
		log_info("ingest: build %lld of host '%s' (%.12s, %zu runner result%s) stored as %lld",
			 (long long)rec.origin_id, b->host, b->commit, rec.nresults,
			 rec.nresults == 1 ? "" : "s", (long long)id);
		snprintf(commit, 41, "%s", b->commit);
		changed = 2;
	}
	reply(out, stored ? 201 : 200, json_pack("{s:I,s:s,s:I,s:b}", "build", (json_int_t)id,
						 "host", b->host, "id", (json_int_t)rec.origin_id,
						 "stored", stored));
out:
	wire_build_record_release(&rec);
	return changed;
}

/* ---- alerts: their updates, and a maintainer's triage ---- */

/* The hub's id of the host's comparison origin_id into *out; 0 when it is
 * not here. A database error is returned. */
static int map_comparison(int64_t *out, struct db *db, const char *host, int64_t origin_id)
{
	struct db_origin o;
	int r;

	*out = 0;
	if (origin_id <= 0)
		return 0;
	r = db_origin_get(db, &o, host, origin_id);
	if (r == -ENOENT)
		return 0;
	if (r == 0)
		*out = o.comparison_id;
	return r;
}

int web_ingest_alert(struct web_reply *out, struct db *db, const struct web_identity *who,
		     const char *body, size_t len, char commit[41])
{
	struct wire_alert_record rec;
	struct db_alert *a = &rec.alert;
	bool stored = false;
	int64_t id = 0, origin;
	size_t i;
	int r;

	commit[0] = '\0';
	r = wire_alert_record_parse(&rec, body, len);
	if (r < 0) {
		web_reply_error(out, 400, err_last());
		goto out;
	}
	if (refuse_host(out, a->host, who))
		goto out;
	/* The comparison that found it must be here; the others are linked
	 * where the hub has them. */
	origin = a->comparison_id;
	r = map_comparison(&a->comparison_id, db, a->host, origin);
	for (i = 0; r == 0 && i < rec.nfindings; i++)
		r = map_comparison(&rec.findings[i].comparison_id, db, a->host,
				   rec.findings[i].comparison_id);
	if (r == 0)
		r = map_comparison(&a->confirm_id, db, a->host, a->confirm_id);
	if (r < 0) {
		reply_db_error(out);
		goto out;
	}
	if (!a->comparison_id) {
		char msg[256];

		snprintf(msg, sizeof(msg), "comparison: comparison %lld of host '%s' is not at this "
			 "hub: send it first", (long long)origin, a->host);
		web_reply_error(out, 422, msg);
		goto out;
	}
	r = db_alert_ingest(db, a, rec.findings, rec.nfindings, rec.sha256, &id, &stored);
	if (refused_write(out, r))
		goto out;
	if (stored)
		log_info("ingest: alert %lld of host '%s' (%s, case '%s', %.12s..%.12s): %s, "
			 "update %lld, as %lld", (long long)a->origin_id, a->host, a->branch,
			 a->case_name, a->lo, a->hi, db_alert_state_name(a->state),
			 (long long)a->seq, (long long)id);
	reply(out, stored ? 201 : 200, json_pack("{s:I,s:s,s:I,s:I,s:b}", "alert", (json_int_t)id,
						 "host", a->host, "id", (json_int_t)a->origin_id,
						 "seq", (json_int_t)a->seq, "stored", stored));
out:
	wire_alert_record_release(&rec);
	return stored;
}

int web_alert_triage(struct web_reply *out, struct db *db, const struct web_identity *who,
		     int64_t id, const char *body, size_t len)
{
	enum db_alert_triage t;
	json_error_t jerr;
	json_t *root, *v, *fix = NULL;
	const char *key;
	int64_t fixed_by = 0;
	char msg[512];
	int r, changed = 0;

	root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(msg, sizeof(msg), "malformed JSON: line %d, column %d: %s", jerr.line,
			 jerr.column, jerr.text);
		web_reply_error(out, 400, msg);
		return 0;
	}
	if (!json_is_object(root)) {
		web_reply_error(out, 400, "the body: expected an object, {\"triage\": STATE}");
		goto out;
	}
	json_object_foreach(root, key, v) {
		if (strcmp(key, "triage") && strcmp(key, "fixed_by")) {
			snprintf(msg, sizeof(msg), "unknown member '%.40s'%s: a triage takes "
				 "'triage' and 'fixed_by'", key, strlen(key) > 40 ? "..." : "");
			web_reply_error(out, 400, msg);
			goto out;
		}
	}
	v = json_object_get(root, "triage");
	if (!v) {
		web_reply_error(out, 400, "triage: missing");
		goto out;
	}
	if (!json_is_string(v) || db_alert_triage_parse(&t, json_string_value(v)) < 0) {
		web_reply_error(out, 400, "triage: expected new, acknowledged, fixed or "
				"false_alarm");
		goto out;
	}
	fix = json_object_get(root, "fixed_by");
	if (fix && !json_is_null(fix)) {
		if (!json_is_integer(fix) || json_integer_value(fix) < 1) {
			web_reply_error(out, 400, "fixed_by: expected a comparison's id (a whole "
					"number from 1) or null");
			goto out;
		}
		fixed_by = json_integer_value(fix);
	}
	r = db_alert_triage_set(db, id, t, who->name, fixed_by);
	if (r == -ENOENT) {
		web_reply_error(out, 404, err_last());
		goto out;
	}
	if (r == -EINVAL) {
		web_reply_error(out, 422, err_last());
		goto out;
	}
	if (r < 0) {
		reply_db_error(out);
		goto out;
	}
	log_info("triage: alert %lld marked %s by '%s'", (long long)id, db_alert_triage_name(t),
		 who->name);
	reply(out, 200, json_pack("{s:I,s:s,s:s,s:o}", "alert", (json_int_t)id,
				  "triage", db_alert_triage_name(t), "triage_by", who->name,
				  "fixed_by", fixed_by ? json_integer(fixed_by) : json_null()));
	changed = 1;
out:
	json_decref(root);
	return changed;
}
