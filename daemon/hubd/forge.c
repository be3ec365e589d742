/*
 * The hub and the pull requests' host (docs/hub.md, "Pull requests at the
 * hub"): with [github] in its configuration the hub alone holds the forge's
 * token. It lists the open pull requests, applies the trust rule, fixes
 * each new head's base commit (the merge base), records what agents may
 * build (hub_pulls, read by them at GET /api/v1/hub/pulls), and brings each
 * open pull request's one comment and its per-host statuses up to date
 * from the rows the agents pushed. It runs on perfd serve's main thread,
 * with a database handle of its own; the server's thread hands it the head
 * commit a record changed, and that head's comment and statuses are brought
 * up to date first, before the round over every open head that each poll
 * makes: a comment follows a comparison at once however many pull requests
 * are open. With alert_issues it also keeps an issue per raised alert of
 * the default branch (docs/github.md, "Alerts on the forge"), and with
 * culprit_comments comments on its culprits' pull requests, at each poll
 * and whenever an alert changes; at each poll it reads the issues'
 * comments for a listed maintainer's "/perfd triage".
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon.h"
#include "db.h"
#include "forge.h"
#include "hubd.h"

#define HUB_DIRTY_MAX 256

/* A head commit a record changed; urgent when it brought a result (a
 * comparison, a job's end), which goes before the heads whose rows only
 * moved (queued, building). */
struct dirty {
	char commit[41];
	bool urgent;
};

/* One host's actions on the forge: those of the hour that began at
 * hour_ns, and the counts since the hub started, for /metrics. */
struct host_acts {
	char host[HOST_NAME_LEN_MAX + 1];
	int64_t hour_ns;
	int used;
	uint64_t done, refused;
};

struct hub_forge {
	const struct hub_config *cfg;
	struct db *db;                   /* this thread's own handle */
	struct web_gh_client *gh;
	struct web_pulls pulls;
	struct web_comment_hosts hosts;
	struct web_alerts alerts;
	int kick_fd;                     /* an eventfd the server's thread writes */
	int cancel_fd;                   /* readable when perfd serve must stop */
	int64_t next_poll_ns;            /* when the pull requests are listed next */
	/* The head commits records changed since the loop last looked, from
	 * the server's thread (HUB_DIRTY_MAX; past it, every head is dirty). */
	pthread_mutex_t lock;
	struct dirty dirty[HUB_DIRTY_MAX];
	size_t ndirty;
	bool all_dirty;
	bool alerts_dirty;               /* an alert changed */
	/* Each host's actions on the forge (forge_actions_per_hour), under
	 * lock: /metrics reads them from the server's thread. */
	struct host_acts acts[HUB_HOSTS_MAX];
	size_t nacts;
};

/* web_alerts' may_act: counts an action of host on the forge, or refuses
 * it when host has had forge_actions_per_hour since its hour began. */
static bool may_act(void *ctx, const char *host)
{
	struct hub_forge *f = ctx;
	int64_t now = time_monotonic_ns();
	struct host_acts *h;
	bool ok;
	size_t i;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->nacts && strcmp(f->acts[i].host, host); i++)
		;
	if (i == f->nacts && f->nacts < HUB_HOSTS_MAX) {
		snprintf(f->acts[i].host, sizeof(f->acts[i].host), "%s", host);
		f->acts[i].hour_ns = now;
		f->nacts++;
	}
	if (i == f->nacts) {
		pthread_mutex_unlock(&f->lock);
		return false;
	}
	h = &f->acts[i];
	if (now - h->hour_ns >= (int64_t)3600 * 1000000000) {
		h->hour_ns = now;
		h->used = 0;
	}
	ok = h->used < f->cfg->forge_actions_per_hour;
	if (ok) {
		h->used++;
		h->done++;
	} else {
		h->refused++;
	}
	pthread_mutex_unlock(&f->lock);
	return ok;
}

void hub_forge_metrics(void *ctx, struct strbuf *out)
{
	struct hub_forge *f = ctx;
	size_t i;

	strbuf_adds(out, "# HELP perfd_forge_actions_total actions on the forge for a host's "
		    "alerts (issues made or edited, culprits' comments) since the hub started\n"
		    "# TYPE perfd_forge_actions_total counter\n");
	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->nacts; i++)
		strbuf_addf(out, "perfd_forge_actions_total{host=\"%s\"} %llu\n", f->acts[i].host,
			    (unsigned long long)f->acts[i].done);
	strbuf_adds(out, "# HELP perfd_forge_actions_refused_total actions on the forge for a "
		    "host's alerts held back by forge_actions_per_hour since the hub started\n"
		    "# TYPE perfd_forge_actions_refused_total counter\n");
	for (i = 0; i < f->nacts; i++)
		strbuf_addf(out, "perfd_forge_actions_refused_total{host=\"%s\"} %llu\n",
			    f->acts[i].host, (unsigned long long)f->acts[i].refused);
	pthread_mutex_unlock(&f->lock);
}

int hub_forge_open(struct hub_forge **out, const struct hub_config *cfg, int cancel_fd)
{
	struct hub_forge *f = xcalloc(1, sizeof(*f));
	struct db_opts dbo = { cfg->database, DEFAULT_LOCK_TIMEOUT_S };
	int r;

	*out = NULL;
	f->cfg = cfg;
	f->cancel_fd = cancel_fd;
	pthread_mutex_init(&f->lock, NULL);
	f->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f->kick_fd < 0) {
		r = err_set(-errno, "eventfd: %s", strerror(errno));
		goto fail;
	}
	f->db = cli_db_open(&dbo);
	if (!f->db) {
		r = err_set(-EIO, "the hub's database: see above");
		goto fail;
	}
	r = forge_client(&f->gh, &cfg->github, cancel_fd, NULL);
	if (r < 0)
		goto fail;
	f->hosts.expect = (const char *const *)cfg->expect;
	f->hosts.nexpect = cfg->nexpect;
	f->hosts.silent_after_s = cfg->silent_after_s;
	f->pulls.gh = f->gh;
	f->pulls.db = f->db;
	f->pulls.hub_url = cfg->github.hub_url;
	f->pulls.hosts = &f->hosts;
	f->alerts.gh = f->gh;
	f->alerts.db = f->db;
	f->alerts.hub_url = cfg->github.hub_url;
	f->alerts.may_act = may_act;
	f->alerts.act_ctx = f;
	/* The issue says who may triage by a command only when it is read. */
	if (cfg->alert_issues && cfg->ntriage_allow) {
		f->alerts.allow = (const char *const *)cfg->triage_allow;
		f->alerts.nallow = cfg->ntriage_allow;
	} else if (cfg->alert_issues) {
		f->alerts.allow = (const char *const *)cfg->github.allow;
		f->alerts.nallow = cfg->github.nallow;
	}
	r = forge_login_check(f->gh, &cfg->github);
	if (r < 0)
		goto fail;
	*out = f;
	return 0;
fail:
	hub_forge_free(f);
	return r;
}

void hub_forge_free(struct hub_forge *f)
{
	if (!f)
		return;
	web_gh_client_free(f->gh);
	db_close(f->db);
	if (f->kick_fd >= 0)
		close(f->kick_fd);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

int hub_forge_fd(const struct hub_forge *f)
{
	return f->kick_fd;
}

void hub_forge_kick(void *ctx, const char *commit, bool urgent)
{
	struct hub_forge *f = ctx;
	uint64_t one = 1;
	size_t i;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < f->ndirty && strcmp(f->dirty[i].commit, commit); i++)
		;
	if (!*commit) {
		f->alerts_dirty = true;
	} else if (i < f->ndirty) {
		f->dirty[i].urgent |= urgent;
	} else if (f->ndirty < HUB_DIRTY_MAX) {
		snprintf(f->dirty[f->ndirty].commit, 41, "%s", commit);
		f->dirty[f->ndirty++].urgent = urgent;
	} else {
		f->all_dirty = true;
	}
	pthread_mutex_unlock(&f->lock);
	if (write(f->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("waking the hub's forge loop");
}

int hub_forge_timeout_ms(const struct hub_forge *f)
{
	int64_t left = f->next_poll_ns - time_monotonic_ns();

	return left <= 0 ? 0 : (int)(left / 1000000 + 1);
}

/* The base every host compares pull request p's head against: the merge
 * base of the head and the base branch, as the forge's compare answers it;
 * the base branch's head the forge reported when it has no compare (404,
 * or a branch name the hub does not put in a URL, 422 for a compare it
 * refuses). Any other failure (a 5xx, no answer) is asked again at the next
 * poll: a base once fixed is never moved. */
static int fix_base(struct hub_forge *f, struct db_hub_pull *h, const struct web_gh_pull *p)
{
	int r = web_gh_merge_base(f->gh, h->base, p->base_ref, p->head_sha);

	if (r == 0) {
		snprintf(h->how, sizeof(h->how), "merge-base");
		return 0;
	}
	if (r != -ENOENT && r != -EINVAL)
		return r;
	if (!*p->base_sha)
		return err_set(-EPROTO, "no merge base (%s), and the pull request names no base "
			       "commit", err_last());
	log_warnx("pull request %d at %.12s: no merge base (%s); its base branch's head %.12s is "
		  "its base", p->number, p->head_sha, err_last(), p->base_sha);
	snprintf(h->base, sizeof(h->base), "%s", p->base_sha);
	snprintf(h->how, sizeof(h->how), "base-head");
	return 0;
}

/* The green lights listed maintainers gave the holds of p's head or base
 * ("/perfd greenlight HOST"), recorded for the hosts' next heartbeats. */
static void greenlights(struct hub_forge *f, const struct web_gh_pull *p, const char *base)
{
	const struct forge_config *g = &f->cfg->github;
	int n = 0;

	if (web_pull_greenlights(&n, &f->pulls, p, base, (const char *const *)g->allow,
				 g->nallow) < 0)
		log_warnx("pull request %d at %.12s: green lights: %s; read again at the next "
			  "poll", p->number, p->head_sha, err_last());
	else if (n)
		log_info("pull request %d at %.12s: %d held step%s released by /perfd greenlight; "
			 "each host runs it again at its next heartbeat", p->number, p->head_sha, n,
			 n == 1 ? "" : "s");
}

/* Lists the open pull requests and records what agents may build. */
static void sync_pulls(struct hub_forge *f)
{
	const struct forge_config *g = &f->cfg->github;
	struct web_gh_pull *open = NULL;
	struct db_hub_pull *heads;
	size_t nopen = 0, n = 0, i;

	if (web_gh_pulls_open(f->gh, &open, &nopen) < 0) {
		log_warnx("pull requests: %s; listed again at the next poll", err_last());
		return;
	}
	heads = xcalloc(nopen + 1, sizeof(*heads));
	for (i = 0; i < nopen; i++) {
		const struct web_gh_pull *p = &open[i];
		struct db_hub_pull *h = &heads[n];
		enum web_trust trust;
		char *approver = NULL;
		int r;

		r = db_hub_pull_get(f->db, h, g->repo, p->number, p->head_sha);
		if (r == -ENOENT) {
			r = fix_base(f, h, p);
			if (r == 0)
				log_info("pull request %d at %.12s: base %.12s (%s of %s)", p->number,
					 p->head_sha, h->base, h->how, p->base_ref);
		}
		if (r < 0) {
			log_warnx("pull request %d at %.12s: %s; asked again at the next poll",
				  p->number, p->head_sha, err_last());
			continue;
		}
		h->pr = p->number;
		snprintf(h->commit, sizeof(h->commit), "%s", p->head_sha);
		snprintf(h->base_ref, sizeof(h->base_ref), "%s", p->base_ref);
		snprintf(h->author, sizeof(h->author), "%s", p->author);
		if (web_pull_trust(&trust, &approver, &f->pulls, p, (const char *const *)g->allow,
				   g->nallow) < 0) {
			log_warnx("pull request %d: %s; not built until its author can be checked",
				  p->number, err_last());
			trust = WEB_TRUST_WAITING;
		} else if (trust == WEB_TRUST_APPROVED) {
			log_info("pull request %d at %.12s: approved by %s", p->number, p->head_sha,
				 approver);
		}
		free(approver);
		h->trusted = trust != WEB_TRUST_WAITING;
		greenlights(f, p, h->base);
		if (web_pull_forecasts_record(&f->pulls, p, NULL) < 0)
			log_warnx("pull request %d at %.12s: forecasts: %s; read again at the next "
				  "poll", p->number, p->head_sha, err_last());
		n++;
	}
	if (db_hub_pulls_set(f->db, g->repo, heads, n) < 0)
		log_warnx("pull requests: %s", err_last());
	free(heads);
	free(open);
}

/* host's status of head p: waiting for a maintainer while p is not
 * trusted, else where the host stands with it (web_host_state). */
static void host_status(struct hub_forge *f, const struct db_hub_pull *p, const char *host)
{
	struct web_head_status s = { .host = host, .state = "pending",
				     .desc = WEB_STATUS_WAITING };
	struct web_host_state hs;
	bool posted = false;
	int r = 0;

	memset(&hs, 0, sizeof(hs));
	strbuf_init(&hs.desc);
	if (p->trusted) {
		r = web_host_state(&hs, f->db, host, p->commit, p->base, f->cfg->silent_after_s);
		s.state = hs.status;
		s.desc = hs.desc.buf;
		s.job = hs.has_job ? hs.job.id : 0;
	}
	if (r == 0)
		r = web_head_status_post(&posted, &f->pulls, p->commit, &s);
	if (r < 0)
		log_warnx("status perfd/%s of %.12s: %s", host, p->commit, err_last());
	else if (posted)
		log_info("status perfd/%s of %.12s: %s, '%s'", host, p->commit, s.state, s.desc);
	web_host_state_release(&hs);
}

/* Each expected host's status of a head, and the head's comment. */
static void publish(struct hub_forge *f, const struct db_hub_pull *p)
{
	const struct forge_config *g = &f->cfg->github;
	enum web_post what;
	size_t i;

	f->hosts.base = p->base;
	for (i = 0; g->statuses && i < f->cfg->nexpect; i++)
		host_status(f, p, f->cfg->expect[i]);
	if (!g->comment)
		return;
	/* A head that waits has nothing of it measured. */
	if (web_pull_head_comment(&what, &f->pulls, p->pr, p->commit, p->trusted) < 0)
		log_warnx("comment on pull request %d: %s", p->pr, err_last());
	else if (what != WEB_POST_UNCHANGED)
		log_info("comment on pull request %d for %.12s: %s", p->pr, p->commit,
			 web_post_name(what));
}

enum { CLEAN, DIRTY, URGENT };

/* Marks in pend (parallel to the open heads ps) the heads changed since
 * the last call: URGENT before DIRTY; every head with the all flag. */
static void take_dirty(struct hub_forge *f, const struct db_hub_pull *ps, size_t n, int *pend)
{
	size_t i, k;

	pthread_mutex_lock(&f->lock);
	for (i = 0; i < n; i++) {
		if (f->all_dirty && pend[i] == CLEAN)
			pend[i] = DIRTY;
		for (k = 0; k < f->ndirty; k++) {
			if (strcmp(f->dirty[k].commit, ps[i].commit))
				continue;
			if (f->dirty[k].urgent)
				pend[i] = URGENT;
			else if (pend[i] == CLEAN)
				pend[i] = DIRTY;
		}
	}
	f->ndirty = 0;
	f->all_dirty = false;
	pthread_mutex_unlock(&f->lock);
}

/* Whether a failure says the forge is out of reach or refuses more for now:
 * the round stops there, and the next poll tries again. */
static bool forge_away(int r)
{
	return r == -EIO || r == -EAGAIN || r == -ECANCELED || r == -EKEYREJECTED;
}

/* Brings alert id's issue up to date: 0, or the error (said). */
static int alert_issue(struct hub_forge *f, int64_t id)
{
	enum web_post what;
	int number, r;

	r = web_alert_issue_post(&what, &number, &f->alerts, id);
	if (r < 0)
		log_warnx("alert %lld: issue: %s; tried again at the next poll", (long long)id,
			  err_last());
	else if (what != WEB_POST_UNCHANGED)
		log_info("alert %lld: issue #%d %s", (long long)id, number, web_post_name(what));
	return r;
}

/* Tells alert id's culprits' pull requests: the count of culprits settled
 * now, or the error (said). */
static int alert_culprits(struct hub_forge *f, int64_t id)
{
	struct web_culprit *cs = NULL;
	size_t n = 0, i;
	int r;

	r = web_alert_culprits_post(&cs, &n, &f->alerts, id);
	for (i = 0; i < n; i++) {
		const struct web_culprit *c = &cs[i];

		if (c->what == WEB_CULPRIT_NO_PULL)
			log_info("alert %lld: culprit %.12s is of no pull request", (long long)id,
				 c->commit);
		else if (c->what == WEB_CULPRIT_GONE)
			log_info("alert %lld: culprit %.12s: pull request #%d is gone; not commented",
				 (long long)id, c->commit, c->pr);
		else
			log_info("alert %lld: culprit %.12s: pull request #%d %s", (long long)id,
				 c->commit, c->pr, c->what == WEB_CULPRIT_SAME_PULL ?
				 "commented on for another culprit" : c->what == WEB_CULPRIT_FOUND ?
				 "commented on (found: a create whose answer was lost had made it)" :
				 "commented on");
	}
	free(cs);
	if (r < 0)
		log_warnx("alert %lld: culprits: %s; tried again at the next poll", (long long)id,
			  err_last());
	return r < 0 ? r : (int)n;
}

/* Says what came of each command taken. */
static void log_commands(const struct db_alert_command *c, size_t n, int issue)
{
	size_t i;

	for (i = 0; i < n; i++) {
		long long id = (long long)c[i].alert_id;

		if (c[i].outcome == DB_COMMAND_APPLIED)
			log_info("alert %lld: '%s' by '%s' (issue #%d): applied", id, c[i].command,
				 c[i].login, issue);
		else if (c[i].outcome == DB_COMMAND_REFUSED)
			log_warnx("alert %lld: '%s' by '%s' (issue #%d) refused: %s", id,
				  c[i].command, c[i].login, issue, c[i].detail);
		else if (c[i].outcome == DB_COMMAND_MALFORMED)
			log_warnx("alert %lld: '%s' by '%s' (issue #%d) not understood, ignored: %s",
				  id, c[i].command, c[i].login, issue, c[i].detail);
		else
			log_warnx("alert %lld: '%s' by '%s' (issue #%d) ignored: '%s' may not "
				  "triage (triage_allow)", id, c[i].command, c[i].login, issue,
				  c[i].login);
	}
}

/* Reads the comments of the issues read longest ago (HUB_ALERT_READS_MAX)
 * for "/perfd triage" and takes them; an issue whose alert changed so is
 * edited at once. */
static void commands_round(struct hub_forge *f)
{
	struct db_alert_issue *is = NULL;
	size_t n = 0, i, k;

	if (db_alert_issues_to_read(f->db, &is, &n, f->cfg->github.repo,
				    HUB_ALERT_READS_MAX) < 0) {
		log_warnx("alerts' issues: %s", err_last());
		return;
	}
	for (i = 0; i < n && !child_cancel_wait(f->cancel_fd, 0); i++) {
		struct db_alert_command *cs = NULL;
		size_t nc = 0;
		int r;

		r = web_alert_commands_read(&cs, &nc, &f->alerts, &is[i]);
		log_commands(cs, nc, is[i].number);
		for (k = 0; k < nc; k++)
			db_alert_command_release(&cs[k]);
		free(cs);
		if (r < 0)
			log_warnx("alert %lld: issue #%d's comments: %s; read again at the next poll",
				  (long long)is[i].alert_id, is[i].number, err_last());
		else if (nc)
			r = alert_issue(f, is[i].alert_id);
		if (r < 0 && forge_away(r))
			break;
	}
	free(is);
}

/* Each raised alert of the default branch (the newest
 * HUB_ALERT_ISSUES_MAX): its issue brought up to date, its culprits'
 * pull requests told (then its issue again, which names them). An alert
 * stays in the database whatever the forge answers: a failure is tried
 * again at the next poll. */
static void alerts_round(struct hub_forge *f, bool poll)
{
	int64_t *ids = NULL;
	size_t n = 0, i;

	if (db_alert_issue_candidates(f->db, &ids, &n, f->cfg->default_branch,
				      HUB_ALERT_ISSUES_MAX) < 0) {
		log_warnx("alerts: %s", err_last());
		return;
	}
	for (i = 0; i < n && !child_cancel_wait(f->cancel_fd, 0); i++) {
		int r = 0;

		if (f->cfg->alert_issues)
			r = alert_issue(f, ids[i]);
		if (!(r < 0 && forge_away(r)) && f->cfg->culprit_comments) {
			r = alert_culprits(f, ids[i]);
			if (r > 0 && f->cfg->alert_issues)
				r = alert_issue(f, ids[i]);
		}
		if (r < 0 && forge_away(r))
			break;
	}
	/* A forge out of reach is asked nothing more until the next poll. */
	if (poll && f->cfg->alert_issues && i == n && !child_cancel_wait(f->cancel_fd, 0))
		commands_round(f);
	free(ids);
}

/* The open pull heads' statuses and comments: those changed, and with
 * poll every one. */
static void pulls_round(struct hub_forge *f, bool poll)
{
	struct db_hub_pull *ps = NULL;
	size_t n = 0, i;
	int *pend;

	if (db_hub_pulls_open(f->db, &ps, &n, f->cfg->github.repo) < 0) {
		log_warnx("pull requests: %s", err_last());
		return;
	}
	pend = xcalloc(n + 1, sizeof(*pend));
	for (i = 0; poll && i < n; i++)
		pend[i] = DIRTY;
	/* One head at a time, the urgent ones first, taking in what changed
	 * meanwhile before each: a result waits for no round over the others. */
	for (;;) {
		size_t pick = n;

		/* A stop asked ends the round: what is left waits for no one. */
		if (child_cancel_wait(f->cancel_fd, 0))
			break;
		take_dirty(f, ps, n, pend);
		for (i = 0; i < n && pick == n; i++)
			if (pend[i] == URGENT)
				pick = i;
		for (i = 0; i < n && pick == n; i++)
			if (pend[i] == DIRTY)
				pick = i;
		if (pick == n)
			break;
		pend[pick] = CLEAN;
		publish(f, &ps[pick]);
	}
	free(pend);
	free(ps);
}

void hub_forge_run(struct hub_forge *f)
{
	bool poll = false, alerts;
	uint64_t kicks;

	while (read(f->kick_fd, &kicks, sizeof(kicks)) == (ssize_t)sizeof(kicks))
		;
	pthread_mutex_lock(&f->lock);
	alerts = f->alerts_dirty;
	f->alerts_dirty = false;
	pthread_mutex_unlock(&f->lock);
	if (time_monotonic_ns() >= f->next_poll_ns) {
		sync_pulls(f);
		f->next_poll_ns = time_monotonic_ns() + (int64_t)(f->cfg->poll_s * 1e9);
		poll = true;
	}
	pulls_round(f, poll);
	if ((f->cfg->alert_issues || f->cfg->culprit_comments) && (poll || alerts) &&
	    !child_cancel_wait(f->cancel_fd, 0))
		alerts_round(f, poll);
}
