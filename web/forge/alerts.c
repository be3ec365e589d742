/*
 * Alerts on the pull requests' host (docs/github.md, "Alerts on the
 * forge"): the one issue the hub keeps for each raised alert of its
 * default branch, rendered from stored rows and edited as the alert
 * changes; one comment on each culprit's pull request; and the "/perfd
 * triage" commands maintainers comment on the issue, taken once each.
 * What was posted and read is remembered in the database (alert_issues,
 * alert_culprits, alert_commands), so nothing is sent or applied twice and
 * a restart sends nothing that is there.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runners.h"
#include "forge-internal.h"
#include "forge.h"

#define ALERT_FINDINGS_SHOWN 50      /* findings listed in an issue */
#define ALERT_NOTE_SHOWN 300         /* bytes of a finding's note shown there */
#define ALERT_COMMANDS_SHOWN 5       /* commands read shown in an issue */

static void alert_marker(struct strbuf *out, int64_t alert_id)
{
	strbuf_addf(out, "<!-- perfd:alert %lld -->", (long long)alert_id);
}

/* Appends s as a URL's query value: what is not unreserved, escaped. */
static void query_value(struct strbuf *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    strchr("-._~", c))
			strbuf_addch(out, (char)c);
		else
			strbuf_addf(out, "%%%02X", c);
	}
}

static void receipt_link(struct strbuf *out, const char *hub, int64_t id)
{
	strbuf_addf(out, "[comparison %lld](%s/static/comparison.html?id=%lld)", (long long)id,
		    hub, (long long)id);
}

/* "5.012% slower" for a gain, whatever its sign: the alert's direction
 * names it. */
static void gain_words(struct strbuf *out, double gain, bool slower)
{
	char buf[32];

	runner_format_gain(buf, sizeof(buf), isfinite(gain) ? fabs(gain) : NAN);
	strbuf_addf(out, "%s %s", buf, slower ? "slower" : "faster");
}

/* A finding's note as a table cell (the history's word on it, e.g. that a
 * bisection step was repeated), escaped and cut to ALERT_NOTE_SHOWN bytes
 * at a character's end; "-" when it has none. */
static void finding_note(struct strbuf *b, const char *note)
{
	struct strbuf cut = STRBUF_INIT;
	size_t len;

	if (!note || !*note) {
		strbuf_adds(b, "-");
		return;
	}
	len = strlen(note);
	strbuf_add(&cut, note, utf8_cut(note, len, ALERT_NOTE_SHOWN));
	web_md_text(b, cut.buf);
	if (cut.len < len)
		strbuf_adds(b, " ... (the rest at the hub)");
	strbuf_release(&cut);
}

static void render_findings(struct strbuf *b, const char *hub, const struct db_alert_finding *f,
			    size_t n, const struct db_alert_culprit *cu, size_t ncu)
{
	size_t i, k;

	strbuf_adds(b, "\n| finding | commits | gain | receipt | pull request | note |\n"
		    "|---|---:|---:|---|---|---|\n");
	for (i = 0; i < n && i < ALERT_FINDINGS_SHOWN; i++) {
		char gain[32];

		runner_format_gain(gain, sizeof(gain), f[i].has_gain ? f[i].gain : NAN);
		if (f[i].commit)
			strbuf_addf(b, "| commit %.12s | %d | %s | ", f[i].hi, f[i].commits, gain);
		else
			strbuf_addf(b, "| range %.12s..%.12s | %d | %s | ", f[i].lo, f[i].hi,
				    f[i].commits, gain);
		if (f[i].comparison_id)
			receipt_link(b, hub, f[i].comparison_id);
		else
			strbuf_adds(b, "-");
		strbuf_adds(b, " | ");
		for (k = 0; f[i].commit && k < ncu && strcmp(cu[k].commit, f[i].hi); k++)
			;
		if (f[i].commit && k < ncu && cu[k].pr > 0)
			strbuf_addf(b, "#%d", cu[k].pr);
		else
			strbuf_adds(b, "-");
		strbuf_adds(b, " | ");
		finding_note(b, f[i].note);
		strbuf_adds(b, " |\n");
	}
	if (n > ALERT_FINDINGS_SHOWN)
		strbuf_addf(b, "\n%zu findings more are at the hub.\n", n - ALERT_FINDINGS_SHOWN);
}

static void render_commands(struct strbuf *b, const struct db_alert_command *c, size_t n)
{
	size_t i;

	if (!n)
		return;
	strbuf_adds(b, "\nCommands read:\n\n");
	for (i = 0; i < n; i++) {
		strbuf_adds(b, "- ");
		web_md_text(b, c[i].login);
		strbuf_adds(b, ": ");
		web_md_text(b, c[i].command);
		strbuf_addf(b, ": %s", db_command_outcome_name(c[i].outcome));
		if (c[i].detail) {
			strbuf_adds(b, ", ");
			web_md_text(b, c[i].detail);
		}
		strbuf_addch(b, '\n');
	}
}

/* Keeps of the *n findings f of alert a those the hub can check (a
 * comparison of a's host, case and direction it holds, from the finding's
 * lo to its hi): the others are named
 * neither on the issue nor as culprits. */
static int keep_checked(const struct web_alerts *wa, const struct db_alert *a,
			struct db_alert_finding *f, size_t *n)
{
	size_t i, kept = 0;
	int r = 0;

	for (i = 0; i < *n; i++) {
		if (r >= 0)
			r = db_alert_finding_is_checked(wa->db, a, &f[i]);
		if (r == 1) {
			f[kept++] = f[i];
			continue;
		}
		db_alert_finding_release(&f[i]);
	}
	*n = kept;
	return r < 0 ? r : 0;
}

/* alert_id's row, its findings the hub can check and its culprits' rows: what its issue and
 * its culprits' comments are made from. Each is the caller's, also on
 * failure: release a, release each finding and free the lists. */
static int alert_load(struct db_alert *a, struct db_alert_finding **f, size_t *nf,
		      struct db_alert_culprit **cu, size_t *ncu, const struct web_alerts *wa,
		      int64_t alert_id)
{
	int r;

	*f = NULL;
	*cu = NULL;
	*nf = *ncu = 0;
	r = db_alert_get(wa->db, a, alert_id);
	if (r == 0)
		r = db_alert_findings(wa->db, f, nf, alert_id);
	if (r == 0)
		r = keep_checked(wa, a, *f, nf);
	if (r == 0)
		r = db_alert_culprits(wa->db, cu, ncu, web_gh_client_repo(wa->gh), alert_id);
	return r;
}

/* Links to the alert at the hub, and how to triage it and who may. */
static void render_triage_help(struct strbuf *b, const struct web_alerts *wa,
			       const struct db_alert *a)
{
	const char *hub = wa->hub_url;
	size_t i;

	strbuf_addf(b, "\nAt the hub: [the alert](%s/api/v1/alerts/%lld), [the alerts of this "
		    "host and case](%s/static/alerts.html?host=", hub, (long long)a->id, hub);
	query_value(b, a->host);
	strbuf_adds(b, "&case=");
	query_value(b, a->case_name);
	strbuf_adds(b, ").\n\n");
	if (wa->nallow) {
		strbuf_adds(b, "To triage it, ");
		for (i = 0; i < wa->nallow; i++) {
			if (i)
				strbuf_adds(b, i + 1 == wa->nallow ? " or " : ", ");
			web_md_text(b, wa->allow[i]);
		}
		strbuf_adds(b, " comments here with a first line of `/perfd triage acknowledged`, "
			    "`/perfd triage false-alarm`, `/perfd triage new`, or `/perfd triage fixed "
			    "COMPARISON`: the hub's id of a later comparison of this host and case "
			    "that says ");
		strbuf_adds(b, a->slower ? "faster" : "slower");
		strbuf_adds(b, ". ");
	}
	strbuf_adds(b, "Marked fixed or a false alarm, the issue is closed; marked new or "
		    "acknowledged again, it is opened again.\n");
}

int web_alert_issue_render(struct strbuf *title, struct strbuf *body, const struct web_alerts *wa,
			   int64_t alert_id)
{
	const char *repo = web_gh_client_repo(wa->gh), *hub = wa->hub_url;
	struct db_alert_finding *f = NULL;
	struct db_alert_command *cmds = NULL;
	struct db_alert_culprit *cu = NULL;
	struct strbuf t = STRBUF_INIT, b = STRBUF_INIT;
	size_t nf = 0, ncmd = 0, ncu = 0, i;
	struct db_alert a;
	char gain[32];
	int r;

	memset(&a, 0, sizeof(a));
	if (!web_hub_url_is_valid(hub))
		return err_set(-EINVAL, "hub URL '%s': expected http:// or https:// with no blanks, "
			       "quotes, brackets or parentheses", hub);
	r = alert_load(&a, &f, &nf, &cu, &ncu, wa, alert_id);
	if (r == 0)
		r = db_alert_commands_recent(wa->db, &cmds, &ncmd, repo, alert_id,
					     ALERT_COMMANDS_SHOWN);
	if (r < 0)
		goto out;

	/* The title is plain text: the names as they are. */
	strbuf_addf(&t, "perfd alert %lld: case %s ", (long long)a.id, a.case_name);
	gain_words(&t, a.gain, a.slower);
	strbuf_addf(&t, " on %s (%s)", a.host, a.branch);

	alert_marker(&b, a.id);
	strbuf_addf(&b, "\n**perfd alert %lld**: case ", (long long)a.id);
	web_md_text(&b, a.case_name);
	strbuf_adds(&b, " on host ");
	web_md_text(&b, a.host);
	strbuf_adds(&b, " became **");
	gain_words(&b, a.gain, a.slower);
	strbuf_adds(&b, "** on branch ");
	web_md_text(&b, a.branch);
	strbuf_addf(&b, ", in the %d commit%s %.12s..%.12s (the first excluded).\n\n", a.commits,
		    a.commits == 1 ? "" : "s", a.lo, a.hi);
	runner_format_gain(gain, sizeof(gain), a.gain);
	strbuf_addf(&b, "| | |\n|---|---|\n| found by | a %s comparison, gain %s: ",
		    a.found_by_span ? "span" : "head", gain);
	receipt_link(&b, hub, a.comparison_id);
	strbuf_adds(&b, " |\n| confirmed by | ");
	if (a.confirm_id)
		receipt_link(&b, hub, a.confirm_id);
	else
		strbuf_adds(&b, "-");
	strbuf_addf(&b, " |\n| bisection | %s |\n| triage | %s", db_alert_bisect_name(a.bisect),
		    db_alert_triage_name(a.triage));
	if (a.triage_by) {
		strbuf_adds(&b, ", by ");
		web_md_text(&b, a.triage_by);
		strbuf_addf(&b, " at %s", a.triage_at);
	}
	if (a.fixed_by) {
		strbuf_adds(&b, ", fixed by ");
		receipt_link(&b, hub, a.fixed_by);
	}
	strbuf_adds(&b, " |\n");
	if (nf)
		render_findings(&b, hub, f, nf, cu, ncu);
	render_triage_help(&b, wa, &a);
	render_commands(&b, cmds, ncmd);

	strbuf_add(title, t.buf, t.len);
	strbuf_add(body, b.buf, b.len);
out:
	for (i = 0; i < nf; i++)
		db_alert_finding_release(&f[i]);
	free(f);
	for (i = 0; i < ncmd; i++)
		db_alert_command_release(&cmds[i]);
	free(cmds);
	free(cu);
	db_alert_release(&a);
	strbuf_release(&t);
	strbuf_release(&b);
	return r;
}

/* The issue the token's login opened for alert_id: its number, or 0. */
static int find_issue(const struct web_alerts *wa, int *out, int64_t alert_id)
{
	struct strbuf marker = STRBUF_INIT;
	struct web_gh_issue *is = NULL;
	size_t n = 0, i;
	int r;

	*out = 0;
	alert_marker(&marker, alert_id);
	r = web_gh_issues_mine(wa->gh, &is, &n);
	for (i = 0; r == 0 && i < n && !*out; i++) {
		if (!is[i].pull && web_has_marker_line(is[i].head, marker.buf))
			*out = is[i].number;
	}
	free(is);
	strbuf_release(&marker);
	return r;
}

static void culprit_marker(struct strbuf *out, int64_t alert_id)
{
	strbuf_addf(out, "<!-- perfd:culprit %lld -->", (long long)alert_id);
}

/* What perfd made for alert_id, looked for by its marker: the alert's
 * issue (pr 0: its number), or its comment on culprit pull request pr
 * (its id). *out is 0 when there is none. */
static int find_made(const struct web_alerts *wa, int64_t *out, int64_t alert_id, int pr)
{
	struct strbuf marker = STRBUF_INIT;
	int number = 0, r;

	*out = 0;
	if (pr > 0) {
		culprit_marker(&marker, alert_id);
		r = web_comment_find_marked(wa->gh, out, pr, marker.buf);
	} else {
		r = find_issue(wa, &number, alert_id);
		*out = number;
	}
	strbuf_release(&marker);
	return r;
}

/* After a create whose answer was lost (err, its detail in err_last()):
 * waits the first retry's delay and looks for what it made (find_made).
 * 0 when found (*out set); err, said "not found since", when not; or the
 * error of the wait or the look. */
static int find_lost(const struct web_alerts *wa, int64_t *out, int64_t alert_id, int pr,
		     int err)
{
	char why[256];
	int r;

	*out = 0;
	snprintf(why, sizeof(why), "%s", err_last());
	r = web_gh_client_backoff(wa->gh, 0);
	if (r == 0)
		r = find_made(wa, out, alert_id, pr);
	if (r == 0 && !*out)
		r = err_set(err, "%s; not found since: asked again later", why);
	return r;
}

/* Opens the issue, once: the row says a create is under way before it is
 * sent, so that one whose answer was lost is looked for, never sent
 * again blindly. 1 when the issue was found so, made by the create whose
 * answer was lost. */
static int create_once(const struct web_alerts *wa, struct db_alert_issue *is, const char *repo,
		       const char *title, const char *body)
{
	int r;

	is->unsure = true;
	r = db_alert_issue_put(wa->db, repo, is);
	if (r < 0)
		return r;
	r = web_gh_issue_create(wa->gh, &is->number, title, body);
	if (r == -EAGAIN) {
		int64_t number;

		r = find_lost(wa, &number, is->alert_id, 0, r);
		is->number = (int)number;
		if (r == 0)
			r = 1;
	} else if (r < 0) {
		/* Refused, or never sent: nothing to look for. */
		int err = r;
		char why[512];

		snprintf(why, sizeof(why), "%s", err_last());
		is->unsure = false;
		r = db_alert_issue_put(wa->db, repo, is);
		return r < 0 ? r : err_set(err, "%s", why);
	}
	if (r < 0)
		return r;
	is->unsure = false;
	return r;
}

/* Whether host may act on the forge now (web_alerts' may_act): 0, or
 * -EDQUOT said. */
static int act_bound(const struct web_alerts *wa, const char *host)
{
	if (!wa->may_act || wa->may_act(wa->act_ctx, host))
		return 0;
	return err_set(-EDQUOT, "host '%s' has had its forge actions for this hour "
		       "(forge_actions_per_hour)", host);
}

/* Before a closed issue is opened again: its comments so far count as
 * read, so that a "/perfd triage" left while it was closed (when its
 * comments are not read) is never applied by the reopening. */
static int skip_closed_comments(const struct web_alerts *wa, struct db_alert_issue *is)
{
	struct web_gh_comment *cs = NULL;
	size_t n = 0, i;
	int r;

	r = web_gh_comments_since(wa->gh, &cs, &n, is->number, is->since);
	for (i = 0; r == 0 && i < n; i++) {
		if (cs[i].id <= is->comment_id)
			continue;
		is->comment_id = cs[i].id;
		if (cs[i].created)
			web_gh_time_format(is->since, cs[i].created);
	}
	web_gh_comments_free(cs, n);
	return r;
}

int web_alert_issue_post(enum web_post *out, int *number, const struct web_alerts *wa,
			 int64_t alert_id)
{
	const char *repo = web_gh_client_repo(wa->gh);
	struct strbuf title = STRBUF_INIT, body = STRBUF_INIT, all = STRBUF_INIT;
	struct db_alert_issue is;
	struct db_alert a;
	char sha[65];
	bool closed;
	int r;

	*out = WEB_POST_UNCHANGED;
	*number = 0;
	memset(&a, 0, sizeof(a));
	r = db_alert_get(wa->db, &a, alert_id);
	if (r < 0)
		goto out;
	closed = a.triage == DB_TRIAGE_FIXED || a.triage == DB_TRIAGE_FALSE_ALARM;
	r = web_alert_issue_render(&title, &body, wa, alert_id);
	if (r < 0)
		goto out;
	strbuf_addf(&all, "%s\n%s\n%s", title.buf, body.buf, closed ? "closed" : "open");
	r = sha256_hex(sha, all.buf, all.len);
	if (r < 0)
		goto out;
	r = db_alert_issue_get(wa->db, &is, repo, alert_id);
	if (r == -ENOENT)
		r = 0;
	if (r < 0)
		goto out;
	*number = is.number;
	if (is.number && !strcmp(is.body_sha256, sha))
		goto out;       /* it says this already */
	if (!is.number && is.unsure) {
		r = find_issue(wa, &is.number, alert_id);
		if (r < 0)
			goto out;
		if (is.number)
			*out = WEB_POST_FOUND;
	}
	if (!is.number) {
		/* Triaged done with before it had an issue: none is opened. */
		if (closed)
			goto out;
		r = act_bound(wa, a.host);
		if (r < 0)
			goto out;
		r = create_once(wa, &is, repo, title.buf, body.buf);
		if (r < 0)
			goto out;
		*out = r == 1 ? WEB_POST_FOUND : WEB_POST_CREATED;
		r = 0;
	} else {
		r = act_bound(wa, a.host);
		if (r == 0 && is.closed && !closed)
			r = skip_closed_comments(wa, &is);
		if (r < 0)
			goto out;
		r = web_gh_issue_edit(wa->gh, is.number, title.buf, body.buf,
				      closed != is.closed || *out == WEB_POST_FOUND ?
				      (closed ? "closed" : "open") : NULL);
		/* A deleted issue is not made again: its row keeps what was
		 * meant, so it is not asked again until the alert changes. */
		if (r < 0 && r != -ENOENT)
			goto out;
		if (r == 0 && *out != WEB_POST_FOUND)
			*out = WEB_POST_EDITED;
	}
	*number = is.number;
	is.closed = closed;
	memcpy(is.body_sha256, sha, sizeof(sha));
	if (r == -ENOENT) {
		int err = r;
		char why[512];

		snprintf(why, sizeof(why), "%s", err_last());
		r = db_alert_issue_put(wa->db, repo, &is);
		if (r == 0)
			r = err_set(err, "issue %d is gone (%s): not made again", is.number, why);
		goto out;
	}
	r = db_alert_issue_put(wa->db, repo, &is);
out:
	db_alert_release(&a);
	strbuf_release(&title);
	strbuf_release(&body);
	strbuf_release(&all);
	return r;
}

/* ---- the culprits' pull requests ---- */

/* The comment on the pull request of culprit commit f of alert a; issue
 * is the alert's issue, 0 for none. */
static void culprit_body(struct strbuf *b, const struct web_alerts *wa, const struct db_alert *a,
			 const struct db_alert_finding *f, int issue)
{
	culprit_marker(b, a->id);
	strbuf_addf(b, "\nperfd finds commit %.12s of this pull request to have made case ", f->hi);
	web_md_text(b, a->case_name);
	strbuf_adds(b, " on host ");
	web_md_text(b, a->host);
	strbuf_adds(b, " **");
	gain_words(b, f->has_gain ? f->gain : a->gain, a->slower);
	strbuf_adds(b, "** on branch ");
	web_md_text(b, a->branch);
	strbuf_adds(b, ": ");
	if (f->comparison_id)
		receipt_link(b, wa->hub_url, f->comparison_id);
	else
		receipt_link(b, wa->hub_url, a->comparison_id);
	strbuf_addf(b, ". It is [perfd alert %lld](%s/api/v1/alerts/%lld) at the hub",
		    (long long)a->id, wa->hub_url, (long long)a->id);
	if (issue > 0)
		strbuf_addf(b, ", issue #%d", issue);
	strbuf_adds(b, ".\n");
}

/* The pull request a commit came from, of those the forge associates it
 * with: the merged one, else the first; 0 for none (a commit the forge
 * does not know, 404 or 422, has none). */
static int culprit_pull(const struct web_alerts *wa, int *out, const char *commit)
{
	struct web_gh_pull *ps = NULL;
	size_t n = 0, i;
	int r;

	*out = 0;
	r = web_gh_commit_pulls(wa->gh, &ps, &n, commit);
	if (r == -ENOENT || r == -EINVAL)
		return 0;
	for (i = 0; r == 0 && i < n && !*out; i++)
		if (ps[i].merged)
			*out = ps[i].number;
	if (r == 0 && !*out && n)
		*out = ps[0].number;
	free(ps);
	return r;
}

/* Comments on culprit c's pull request, once: as the issue's create, under
 * way before it is sent and looked for when its answer is lost. */
static int culprit_comment(const struct web_alerts *wa, struct db_alert_culprit *c,
			   const char *repo, const char *host, const char *body,
			   enum web_culprit_what *what)
{
	bool settled = false;
	int r;

	if (c->unsure) {
		r = find_made(wa, &c->comment_id, c->alert_id, c->pr);
		if (r < 0 || c->comment_id) {
			*what = WEB_CULPRIT_FOUND;
			goto out;
		}
	}
	r = act_bound(wa, host);
	if (r < 0)
		return r;
	c->unsure = true;
	r = db_alert_culprit_put(wa->db, repo, c);
	if (r < 0)
		goto out;
	*what = WEB_CULPRIT_COMMENTED;
	r = web_gh_comment_create(wa->gh, &c->comment_id, c->pr, body);
	if (r == -EAGAIN) {
		r = find_lost(wa, &c->comment_id, c->alert_id, c->pr, r);
		if (r == 0)
			*what = WEB_CULPRIT_FOUND;
	} else if (r == -ENOENT) {
		/* The pull request is gone: nothing is asked again. */
		c->comment_id = -1;
		*what = WEB_CULPRIT_GONE;
		r = 0;
	} else if (r < 0) {
		/* Refused, or never sent: nothing to look for. */
		settled = true;
	}
out:
	if (r == 0 || settled) {
		int err = r;
		char why[512];

		snprintf(why, sizeof(why), "%s", err < 0 ? err_last() : "");
		c->unsure = false;
		r = db_alert_culprit_put(wa->db, repo, c);
		if (r == 0 && err < 0)
			r = err_set(err, "%s", why);
	}
	return r;
}

int web_alert_culprits_post(struct web_culprit **out, size_t *out_n, const struct web_alerts *wa,
			    int64_t alert_id)
{
	const char *repo = web_gh_client_repo(wa->gh);
	struct db_alert_finding *f = NULL;
	struct db_alert_culprit *cu = NULL;
	struct web_culprit *done = NULL;
	struct strbuf body = STRBUF_INIT;
	struct db_alert_issue is;
	size_t nf = 0, ncu = 0, ndone = 0, asked = 0, i, k;
	struct db_alert a;
	int r;

	*out = NULL;
	*out_n = 0;
	memset(&a, 0, sizeof(a));
	r = alert_load(&a, &f, &nf, &cu, &ncu, wa, alert_id);
	if (r == 0)
		r = db_alert_issue_get(wa->db, &is, repo, alert_id);
	if (r == -ENOENT)
		r = 0;
	/* A false alarm has no culprit to tell. */
	if (r < 0 || a.triage == DB_TRIAGE_FALSE_ALARM)
		goto out;
	/* Room for every culprit asked now, besides those known. */
	cu = xrealloc(cu, (ncu + WEB_ALERT_CULPRITS_MAX + 1) * sizeof(*cu));
	done = xcalloc(WEB_ALERT_CULPRITS_MAX + 1, sizeof(*done));
	for (i = 0; i < nf && asked < WEB_ALERT_CULPRITS_MAX; i++) {
		struct db_alert_culprit *c;
		enum web_culprit_what what = WEB_CULPRIT_NO_PULL;
		bool changed = false;

		if (!f[i].commit)
			continue;
		asked++;
		for (k = 0; k < ncu && strcmp(cu[k].commit, f[i].hi); k++)
			;
		c = &cu[k];
		if (k == ncu) {
			memset(c, 0, sizeof(*c));
			c->alert_id = alert_id;
			snprintf(c->commit, sizeof(c->commit), "%s", f[i].hi);
			r = culprit_pull(wa, &c->pr, c->commit);
			if (r == 0)
				r = db_alert_culprit_put(wa->db, repo, c);
			if (r < 0)
				break;
			ncu++;
			changed = true;
		}
		if (c->pr > 0 && !c->comment_id) {
			/* One comment per pull request: another culprit of the
			 * same one may have made it. */
			for (k = 0; k < ncu && !(cu[k].pr == c->pr && cu[k].comment_id > 0); k++)
				;
			if (k < ncu) {
				c->comment_id = cu[k].comment_id;
				what = WEB_CULPRIT_SAME_PULL;
				r = db_alert_culprit_put(wa->db, repo, c);
			} else {
				strbuf_reset(&body);
				culprit_body(&body, wa, &a, &f[i], is.number);
				r = culprit_comment(wa, c, repo, a.host, body.buf, &what);
			}
			if (r < 0)
				break;
			changed = true;
		}
		if (changed) {
			snprintf(done[ndone].commit, sizeof(done[ndone].commit), "%s", c->commit);
			done[ndone].pr = c->pr;
			done[ndone++].what = c->pr > 0 ? what : WEB_CULPRIT_NO_PULL;
		}
	}
	/* What was done is the caller's to say, even when a later one failed. */
	*out = done;
	*out_n = ndone;
	done = NULL;
out:
	for (i = 0; i < nf; i++)
		db_alert_finding_release(&f[i]);
	free(f);
	free(cu);
	free(done);
	strbuf_release(&body);
	db_alert_release(&a);
	return r;
}

/* ---- triage by a command on the issue ---- */

int web_alert_commands_read(struct db_alert_command **out, size_t *out_n,
			    const struct web_alerts *wa, const struct db_alert_issue *is)
{
	const char *repo = web_gh_client_repo(wa->gh);
	struct web_gh_comment *cs = NULL;
	struct db_alert_command *taken = NULL;
	struct db_alert_issue now;
	size_t n = 0, ntaken = 0, i;
	int64_t newest = is->comment_id, newest_at = 0;
	char since[32];
	int r;

	*out = NULL;
	*out_n = 0;
	r = web_gh_comments_since(wa->gh, &cs, &n, is->number, is->since);
	if (r < 0)
		return r;
	taken = xcalloc(n + 1, sizeof(*taken));
	for (i = 0; i < n; i++) {
		struct web_triage_command tc;
		struct db_alert_command *c = &taken[ntaken];
		enum web_command k;
		bool apply = false;

		/* Each comment is read once: an edit of one read before is not. */
		if (cs[i].id <= is->comment_id)
			continue;
		if (cs[i].id > newest) {
			newest = cs[i].id;
			newest_at = cs[i].created;
		}
		k = web_triage_command(&tc, cs[i].body);
		if (k == WEB_COMMAND_NONE)
			continue;
		memset(c, 0, sizeof(*c));
		c->alert_id = is->alert_id;
		c->comment_id = cs[i].id;
		snprintf(c->login, sizeof(c->login), "%s", cs[i].author);
		snprintf(c->command, sizeof(c->command), "%s", tc.text);
		if (!*cs[i].author || !web_login_allowed(cs[i].author, wa->allow, wa->nallow)) {
			c->outcome = DB_COMMAND_IGNORED;
		} else if (k == WEB_COMMAND_BAD) {
			c->outcome = DB_COMMAND_MALFORMED;
			c->detail = xstrdup(tc.why);
		} else {
			apply = true;
		}
		web_gh_time_format(since, cs[i].created);
		r = db_alert_command_take(wa->db, repo, c, apply, tc.triage, tc.fixed_by,
					  cs[i].created ? since : NULL);
		if (r < 0) {
			db_alert_command_release(c);
			break;
		}
		ntaken++;
	}
	/* The comments that were no command count as read too. */
	if (r == 0)
		r = db_alert_issue_get(wa->db, &now, repo, is->alert_id);
	if (r == 0) {
		if (newest > now.comment_id) {
			now.comment_id = newest;
			if (newest_at)
				web_gh_time_format(now.since, newest_at);
		}
		time_now_iso(now.read_at);
		r = db_alert_issue_put(wa->db, repo, &now);
	}
	web_gh_comments_free(cs, n);
	/* What was taken is the caller's to say, even when a later write failed. */
	*out = taken;
	*out_n = ntaken;
	return r;
}
