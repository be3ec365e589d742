/*
 * Posting to pull requests: perfd's one comment per pull request, edited in
 * place; commit statuses; the trust rule for pull requests from authors off
 * the allow list; the commands maintainers comment (/perfd run, and
 * /perfd triage on an alert's issue). What was posted is remembered in the database, so a
 * restart or a second poll posts nothing that is already there.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "forge-internal.h"
#include "forge.h"

const char *web_post_name(enum web_post p)
{
	switch (p) {
	case WEB_POST_UNCHANGED:
		return "unchanged";
	case WEB_POST_CREATED:
		return "created";
	case WEB_POST_EDITED:
		return "edited";
	case WEB_POST_RECREATED:
		return "made again";
	case WEB_POST_MUTED:
		return "deleted twice: perfd stays off this pull request";
	case WEB_POST_FOUND:
		return "found: an earlier create whose answer was lost had made it";
	}
	return "?";
}

void web_comment_marker(struct strbuf *out, const char *key)
{
	if (key && *key)
		strbuf_addf(out, "<!-- perfd:comment %s -->", key);
	else
		strbuf_adds(out, "<!-- perfd:comment -->");
}

bool web_comment_key_is_valid(const char *key)
{
	size_t n = strlen(key);

	return n <= 63 && strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789._-") == n;
}

bool web_has_marker_line(const char *text, const char *marker)
{
	size_t len = strlen(marker);

	return !strncmp(text, marker, len) &&
	       (text[len] == '\n' || text[len] == '\r' || !text[len]);
}

int web_comment_find_marked(struct web_gh_client *gh, int64_t *out, int number,
			    const char *marker)
{
	struct web_gh_comment *cs = NULL;
	size_t n = 0, i;
	const char *login;
	int r;

	*out = 0;
	r = web_gh_login(gh, &login);
	if (r == 0)
		r = web_gh_comments_list(gh, &cs, &n, number);
	for (i = 0; r == 0 && i < n; i++) {
		if (!strcasecmp(cs[i].author, login) && web_has_marker_line(cs[i].body, marker))
			*out = cs[i].id;
	}
	web_gh_comments_free(cs, n);
	return r;
}

/* perfd's own comment among a pull request's: the newest one by the
 * token's login whose first line is this key's marker. 0 when none. */
static int find_own(const struct web_pulls *ps, int64_t *out, int pr)
{
	struct strbuf marker = STRBUF_INIT;
	int r;

	web_comment_marker(&marker, ps->key);
	r = web_comment_find_marked(ps->gh, out, pr, marker.buf);
	strbuf_release(&marker);
	return r;
}

/* Creates the comment; when the create's outcome is unknown, looks for it
 * before sending it again, at most retries more times. */
static int create_once(const struct web_pulls *ps, int64_t *out, int pr, const char *body)
{
	int tries = 0, r;

	for (;;) {
		r = web_gh_comment_create(ps->gh, out, pr, body);
		if (r != -EAGAIN || ++tries > 3)
			return r;
		r = web_gh_client_backoff(ps->gh, tries - 1);
		if (r == 0)
			r = find_own(ps, out, pr);
		if (r < 0)
			return r;
		if (*out)
			return 0;       /* the create was done after all */
	}
}

int web_pull_comment_post(enum web_post *out, const struct web_pulls *ps, int pr,
			  const char *commit)
{
	const char *repo = web_gh_client_repo(ps->gh), *key = ps->key ? ps->key : "";
	struct web_gh_client *gh = ps->gh;
	struct db *db = ps->db;
	struct strbuf md = STRBUF_INIT;
	struct db_pull_comment pc;
	char sha[65];
	int r;

	*out = WEB_POST_UNCHANGED;
	r = web_comment_render(&md, db, commit, pr, ps->hub_url, key, WEB_COMMENT_BYTES_MAX,
			       ps->hosts);
	if (r < 0)
		goto out;
	r = sha256_hex(sha, md.buf, md.len);
	if (r < 0)
		goto out;
	r = db_pull_comment_get(db, &pc, repo, pr, key);
	if (r == -ENOENT)
		r = 0;
	if (r < 0)
		goto out;
	if (pc.muted || (pc.comment_id && !strcmp(pc.body_sha256, sha)))
		goto out;       /* nothing new to say, or told to stay off */
	if (!pc.comment_id) {
		r = find_own(ps, &pc.comment_id, pr);
		if (r < 0)
			goto out;
	}
	if (pc.comment_id) {
		r = web_gh_comment_edit(gh, pc.comment_id, md.buf);
		if (r == 0) {
			*out = WEB_POST_EDITED;
		} else if (r == -ENOENT) {
			/* Deleted by someone: made again once, never after that. */
			pc.comment_id = 0;
			if (pc.recreated >= 1) {
				pc.muted = true;
				*out = WEB_POST_MUTED;
				r = db_pull_comment_put(db, repo, pr, key, &pc);
				goto out;
			}
			pc.recreated++;
			*out = WEB_POST_RECREATED;
		} else {
			goto out;
		}
	}
	if (!pc.comment_id) {
		r = create_once(ps, &pc.comment_id, pr, md.buf);
		if (r < 0)
			goto out;
		if (*out != WEB_POST_RECREATED)
			*out = WEB_POST_CREATED;
	}
	snprintf(pc.commit, sizeof(pc.commit), "%s", commit);
	memcpy(pc.body_sha256, sha, sizeof(sha));
	r = db_pull_comment_put(db, repo, pr, key, &pc);
out:
	strbuf_release(&md);
	return r;
}

int web_head_status_post(bool *posted, const struct web_pulls *ps, const char *commit,
			 const struct web_head_status *s)
{
	const char *repo = web_gh_client_repo(ps->gh);
	struct web_gh_client *gh = ps->gh;
	struct db *db = ps->db;
	char was[16], *was_desc = NULL, *desc, *context, *url;
	int r;

	if (posted)
		*posted = false;
	context = xasprintf("perfd/%s", s->host);
	url = s->job > 0 ? xasprintf("%s/static/head.html?job=%lld", ps->hub_url,
				     (long long)s->job) :
		xasprintf("%s/static/head.html?commit=%s", ps->hub_url, commit);
	/* Sent as a JSON string, so repaired; GitHub refuses a description
	 * longer than 140 characters, so cut (bytes bound them). */
	desc = utf8_repair_dup(s->desc);
	desc[utf8_cut(desc, strlen(desc), WEB_STATUS_DESCRIPTION_MAX)] = '\0';
	r = db_commit_status_get(db, was, &was_desc, repo, commit, context);
	if (r == 0 && !strcmp(was, s->state) && !strcmp(was_desc ? was_desc : "", desc))
		goto out;
	if (r < 0 && r != -ENOENT)
		goto out;
	r = web_gh_status_set(gh, commit, s->state, context, desc, url);
	if (r == 0)
		r = db_commit_status_put(db, repo, commit, context, s->state, desc, url);
	if (r == 0 && posted)
		*posted = true;
out:
	free(was_desc);
	free(desc);
	free(context);
	free(url);
	return r;
}

int web_pull_head_comment(enum web_post *out, const struct web_pulls *ps, int pr,
			  const char *commit, bool started)
{
	*out = WEB_POST_UNCHANGED;
	if (!started) {
		struct db_pull_comment pc;

		/* A row that cannot be read counts as no comment: none is
		 * started for a head that has nothing yet. */
		if (db_pull_comment_get(ps->db, &pc, web_gh_client_repo(ps->gh), pr,
					ps->key ? ps->key : "") < 0 ||
		    !pc.comment_id || !strcmp(pc.commit, commit))
			return 0;
	}
	return web_pull_comment_post(out, ps, pr, commit);
}

bool web_login_allowed(const char *login, const char *const *allow, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcasecmp(login, allow[i]))
			return true;
	}
	return false;
}

bool web_run_command(char sha[41], const char *body)
{
	const char *p = body, *q;
	size_t n;

	*sha = '\0';
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (strncmp(p, "/perfd run", 10))
		return false;
	p += 10;
	if (!*p || *p == '\n' || *p == '\r')
		return true;
	if (*p != ' ' && *p != '\t')
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || *p == '\n' || *p == '\r')
		return true;
	n = strspn(p, "0123456789abcdefABCDEF");
	q = p + n;
	if (n < 7 || n > 40 || (*q && !isspace((unsigned char)*q)))
		return false;
	for (n = 0; p < q; p++, n++)
		sha[n] = (char)tolower((unsigned char)*p);
	sha[n] = '\0';
	return true;
}

/* The line at p, up to its end, as a command's text is kept: repaired,
 * control characters as blanks, cut on a character boundary. */
static void command_line(char *out, size_t cap, const char *p)
{
	struct strbuf fixed = STRBUF_INIT;
	size_t n = strcspn(p, "\r\n"), i;

	utf8_repair(&fixed, p, n);
	n = utf8_cut(fixed.buf, fixed.len, cap - 1);
	for (i = 0; i < n; i++)
		out[i] = (unsigned char)fixed.buf[i] < ' ' || fixed.buf[i] == 0x7f ? ' ' :
			fixed.buf[i];
	out[n] = '\0';
	strbuf_release(&fixed);
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_line_end(char c)
{
	return !c || c == '\n' || c == '\r';
}

enum web_command web_triage_command(struct web_triage_command *out, const char *body)
{
	static const struct { const char *word; enum db_alert_triage t; } states[] = {
		{ "acknowledged", DB_TRIAGE_ACKNOWLEDGED }, { "false-alarm", DB_TRIAGE_FALSE_ALARM },
		{ "false_alarm", DB_TRIAGE_FALSE_ALARM }, { "new", DB_TRIAGE_NEW },
		{ "fixed", DB_TRIAGE_FIXED },
	};
	const char *p = body, *line, *w;
	size_t n, i, digits;

	memset(out, 0, sizeof(*out));
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	line = p;
	if (strncmp(p, "/perfd triage", 13) || !(is_blank(p[13]) || is_line_end(p[13])))
		return WEB_COMMAND_NONE;
	command_line(out->text, sizeof(out->text), line);
	for (p += 13; is_blank(*p); p++)
		;
	w = p;
	n = strcspn(w, " \t\r\n");
	for (i = 0; i < ARRAY_SIZE(states); i++)
		if (n == strlen(states[i].word) && !strncmp(w, states[i].word, n))
			break;
	if (i == ARRAY_SIZE(states)) {
		snprintf(out->why, sizeof(out->why), "expected a state after /perfd triage: "
			 "acknowledged, false-alarm, new, or fixed COMPARISON");
		return WEB_COMMAND_BAD;
	}
	out->triage = states[i].t;
	for (p = w + n; is_blank(*p); p++)
		;
	if (out->triage == DB_TRIAGE_FIXED) {
		digits = strspn(p, "0123456789");
		if (!digits || digits > 15 || *p == '0' || !(is_blank(p[digits]) ||
							     is_line_end(p[digits]))) {
			snprintf(out->why, sizeof(out->why), "fixed takes the hub's id of the later "
				 "comparison that undid the change (a whole number from 1)");
			return WEB_COMMAND_BAD;
		}
		out->fixed_by = strtoll(p, NULL, 10);
		for (p += digits; is_blank(*p); p++)
			;
	}
	if (!is_line_end(*p)) {
		snprintf(out->why, sizeof(out->why), "unexpected text after the command%s",
			 out->triage != DB_TRIAGE_FIXED && *p >= '0' && *p <= '9' ?
			 " (only fixed takes a comparison)" : "");
		out->fixed_by = 0;
		return WEB_COMMAND_BAD;
	}
	if (out->fixed_by)
		snprintf(out->text, sizeof(out->text), "/perfd triage fixed %lld",
			 (long long)out->fixed_by);
	else
		snprintf(out->text, sizeof(out->text), "/perfd triage %s",
			 out->triage == DB_TRIAGE_FALSE_ALARM ? "false-alarm" :
			 db_alert_triage_name(out->triage));
	return WEB_COMMAND_OK;
}

bool web_greenlight_command(char host[64], const char *body)
{
	static const char cmd[] = "/perfd greenlight";
	const char *p = body;
	size_t n;

	*host = '\0';
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	if (strncmp(p, cmd, sizeof(cmd) - 1) || !is_blank(p[sizeof(cmd) - 1]))
		return false;
	for (p += sizeof(cmd) - 1; is_blank(*p); p++)
		;
	n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");
	if (n == 0 || n > 63)
		return false;
	memcpy(host, p, n);
	host[n] = '\0';
	for (p += n; is_blank(*p); p++)
		;
	if (!is_line_end(*p))
		*host = '\0';
	return *host != '\0';
}

/* Seconds since the epoch of one of perfd's times, whole; 0 when it is not one. */
static int64_t epoch_of(const char *iso)
{
	struct timespec t;

	return time_parse_iso(&t, iso) < 0 ? 0 : (int64_t)t.tv_sec;
}

/* Records comment c's green light for each hold of v it names, waiting. */
static int greenlight_from(int *out, const struct web_pulls *ps, const struct web_gh_comment *c,
			   struct db_hub_hold *v, size_t n, int pr)
{
	char host[64];
	size_t i;
	int r = 0;

	if (!web_greenlight_command(host, c->body))
		return 0;
	for (i = 0; i < n && r >= 0; i++) {
		if (strcmp(v[i].host, host) || *v[i].greenlit_by ||
		    c->created < epoch_of(v[i].first_seen))
			continue;
		r = db_hub_hold_greenlight(ps->db, host, v[i].origin_id, c->author, pr, c->id);
		if (r > 0) {
			snprintf(v[i].greenlit_by, sizeof(v[i].greenlit_by), "%.64s", c->author);
			++*out;
		}
	}
	return r < 0 ? r : 0;
}

int web_pull_greenlights(int *out, const struct web_pulls *ps, const struct web_gh_pull *p,
			 const char *base, const char *const *allow, size_t nallow)
{
	struct web_gh_comment *cs = NULL;
	struct db_hub_hold *v = NULL;
	size_t n = 0, nc = 0, i, waiting = 0;
	int r;

	*out = 0;
	r = db_hub_holds_list(ps->db, &v, &n, NULL, p->head_sha, base && *base ? base : NULL);
	for (i = 0; i < n; i++)
		waiting += !*v[i].greenlit_by;
	if (r == 0 && waiting)
		r = web_gh_comments_list(ps->gh, &cs, &nc, p->number);
	for (i = 0; r == 0 && i < nc; i++) {
		if (web_login_allowed(cs[i].author, allow, nallow))
			r = greenlight_from(out, ps, &cs[i], v, n, p->number);
	}
	web_gh_comments_free(cs, nc);
	for (i = 0; i < n; i++)
		db_hub_hold_release(&v[i]);
	free(v);
	return r;
}

int web_pull_trust(enum web_trust *out, char **approver, const struct web_pulls *ps,
		   const struct web_gh_pull *p, const char *const *allow, size_t nallow)
{
	const char *repo = web_gh_client_repo(ps->gh);
	struct web_gh_client *gh = ps->gh;
	struct db *db = ps->db;
	struct web_gh_comment *cs = NULL;
	int64_t last = 0, seen = 0;
	size_t n = 0, i;
	int r;

	*approver = NULL;
	*out = WEB_TRUST_WAITING;
	if (web_login_allowed(p->author, allow, nallow)) {
		*out = WEB_TRUST_AUTHOR;
		return 0;
	}
	r = db_pull_approval_get(db, approver, repo, p->number, p->head_sha);
	if (r == 0) {
		*out = WEB_TRUST_APPROVED;
		return 0;
	}
	if (r != -ENOENT)
		return r;
	r = db_pull_approval_last(db, &last, repo, p->number);
	if (r == 0)
		r = db_pull_head_first_seen(db, &seen, repo, p->number, p->head_sha);
	if (r == 0)
		r = web_gh_comments_list(gh, &cs, &n, p->number);
	for (i = 0; r == 0 && i < n; i++) {
		char sha[41];

		/* Each command approves one head: the ones used before are spent. */
		if (cs[i].id <= last || !web_login_allowed(cs[i].author, allow, nallow) ||
		    !web_run_command(sha, cs[i].body))
			continue;
		if (*sha && strncmp(p->head_sha, sha, strlen(sha)))
			continue;   /* approves another head, not this one */
		/* A bare command older than this head (as perfd first saw it)
		 * may have been meant for the head before: a push between a
		 * review and perfd's poll is not approved with it. */
		if (!*sha && cs[i].created < seen)
			continue;
		r = db_pull_approval_add(db, repo, p->number, p->head_sha, cs[i].author, cs[i].id);
		if (r == 0) {
			*approver = xstrdup(cs[i].author);
			*out = WEB_TRUST_APPROVED;
		}
		break;
	}
	web_gh_comments_free(cs, n);
	return r;
}
