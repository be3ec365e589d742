/*
 * web/forge: what perfd says on the pull requests' host (GitHub, GitHub
 * Enterprise, Gitea, Forgejo; docs/github.md). A REST client on
 * web/wire's HTTP client (github.c: rate limits, retries, pagination and
 * the API's JSON; each request through wire_http_conn_send), the
 * pull-request comment rendered from
 * stored rows (comment.c, docs/comment.md), and posting: the one comment
 * per pull request, commit statuses and the trust rule (pulls.c); the
 * forecasts a pull request states, read and recorded (forecast.c); the
 * hub's alerts on the forge: an issue per alert, a comment on each
 * culprit's pull request, triage by a command on the issue (alerts.c).
 *
 * Ownership: the client copies its options; a web_pulls and a web_alerts
 * borrow all they hold. web_gh_client_free(NULL) does nothing.
 * Errors: negative errno with a detail in err_last(); nothing here logs. A
 * function that fills *out (a struct, a pointer, a list with its count)
 * zeroes it on entry, before anything can fail, so it may be freed or
 * released on every path. A strbuf passed in is appended to and is not
 * reset: on failure web_comment_render leaves it as it was.
 */
#ifndef PERFD_WEB_FORGE_H
#define PERFD_WEB_FORGE_H

#include "common.h"
#include "db.h"

/* ---- forecasts (forecast.c, docs/comment.md "Forecasts") ---- */

#define WEB_FORECASTS_MAX 16         /* perfd-expect lines taken per pull request */
#define WEB_FORECAST_LINE_MAX 200    /* bytes of one line */
#define WEB_FORECAST_BODY_MAX 65536  /* bytes of a description or message read */
/* The perfd-expect lines of a description as web_forecast_lines keeps
 * them: one more than taken, each one byte past the bound, '\n' after each. */
#define WEB_FORECAST_TEXT_MAX ((WEB_FORECASTS_MAX + 1) * (WEB_FORECAST_LINE_MAX + 2) + 1)

enum web_forecast_dir { WEB_FORECAST_BAD, WEB_FORECAST_FASTER, WEB_FORECAST_SLOWER,
			WEB_FORECAST_UNCHANGED };
/* One line "perfd-expect: CASE faster|slower LO%..HI%" or "perfd-expect:
 * CASE unchanged [B%]"; keywords in any case. A band is kept as gains are
 * stored, as fractions (5% is 0.05); "unchanged B%" is lo 0, hi B, and
 * bare "unchanged" has no band. */
struct web_forecast {
	char line[WEB_FORECAST_LINE_MAX + 1];   /* as written, from the keyword on */
	enum web_forecast_dir dir;              /* WEB_FORECAST_BAD: not understood */
	char case_name[65];
	bool has_band;
	double lo, hi;
	char why[128];                          /* for WEB_FORECAST_BAD: what was wrong */
};
/* Reads the lines of text (its first WEB_FORECAST_BODY_MAX bytes) that
 * start, after blanks, with perfd-expect, into out: at most max of them,
 * *more set when there were others. A line that does not read as a
 * forecast is one with dir WEB_FORECAST_BAD and why; so is one longer than
 * WEB_FORECAST_LINE_MAX bytes. Returns the count; it cannot fail. */
int web_forecasts_parse(struct web_forecast *out, size_t max, const char *text, size_t len,
			bool *more);
/* Copies the perfd-expect lines of text into out (cap bytes, at most
 * WEB_FORECASTS_MAX + 1 lines), such that web_forecasts_parse reads them
 * as it reads text; returns the bytes written, without the NUL. */
size_t web_forecast_lines(char *out, size_t cap, const char *text, size_t len);
/* "faster", "slower", "unchanged"; "" for WEB_FORECAST_BAD. Static. */
const char *web_forecast_dir_name(enum web_forecast_dir d);

/* ---- a pull request's comment (comment.c, docs/comment.md) ---- */

#define WEB_COMMENT_ROWS_MAX 1000    /* comparisons one comment describes */
#define WEB_COMMENT_JOBS_MAX 64      /* jobs of the commit it lists */

/* Appends to out the Markdown comment for head_commit (40 lower-case hex
 * digits): a hidden marker line, the head and base commits, one table row per
 * host and case (replications pooled) with every cell linking to its receipt
 * under hub_url, the commit's jobs that are not done, and each host's
 * contract runner lines; with pr (0: none), the forecasts recorded for
 * that pull request at head_commit, each with its outcome per host.
 * Everything comes from stored rows of jobs at head_commit and nothing is
 * computed but the pooled median and where a gain falls in a band. With max
 * (bytes; 0: no bound) the body stays under it: rows, jobs and runner lines
 * that do not fit are left to the hub, and a closing line links there.
 * Stored text that is not UTF-8 is repaired (utf8_repair), so the body
 * always is and can be sent as a JSON string.
 * -EINVAL for a malformed commit or hub_url (http:// or https://, nothing to
 * escape); a database error as db returns it. On failure out is left as it
 * was. */
struct web_comment_hosts;
int web_comment_render(struct strbuf *out, struct db *db, const char *head_commit, int pr,
		       const char *hub_url, const char *key, size_t max,
		       const struct web_comment_hosts *hosts);
/* The hidden first line by which perfd finds its comment: "<!-- perfd:comment
 * -->", or "<!-- perfd:comment KEY -->" for a key (NULL or "": none). */
void web_comment_marker(struct strbuf *out, const char *key);
/* A key is at most 63 letters, digits, '.', '_' or '-'. */
bool web_comment_key_is_valid(const char *key);

/* ---- the pull requests' host: a GitHub REST client (github.c) ----
 * GitHub, GitHub Enterprise, Gitea and Forgejo answer these calls alike
 * (docs/github.md). Errors: -EKEYREJECTED a refused token (401); -EACCES a
 * missing permission (403); -ENOENT no such pull request or comment; -EAGAIN rate limited
 * for longer than max_wait_s, or (creating a comment) an outcome that is
 * unknown; -EIO a 5xx or a transport failure after every retry; -EPROTO a
 * reply that is not the JSON expected; -EFBIG a reply over WEB_GH_REPLY_MAX;
 * -ECANCELED cancel_fd became readable during a wait; -EINVAL a comment or
 * status that cannot be encoded as JSON (text that is not UTF-8: the
 * callers repair it first), nothing sent. */

#define WEB_GH_REPLY_MAX (8 << 20)       /* bytes of one reply */
#define WEB_GH_PAGES_MAX 30              /* pages of one list, 100 items each */
#define WEB_GH_LOGIN_MAX 64             /* a longer login is read as none */
#define WEB_GH_COMMENT_MAX 65536         /* characters of a comment body kept */

struct web_gh_options {
	const char *api;             /* the API's base URL */
	const char *repo;            /* "OWNER/NAME" */
	const char *token;           /* copied into the one header that carries it */
	double timeout_s;            /* each request's bound */
	double max_wait_s;           /* the longest rate-limit wait accepted */
	int retries;                 /* tries after the first, for 5xx and lost connections */
	double backoff_s;            /* the first retry's delay, doubled for each next */
	int cancel_fd;               /* readable: waits end with -ECANCELED; -1: none */
};
#define WEB_GH_API_DEFAULT "https://api.github.com"
#define WEB_GH_OPTIONS_INIT { .api = WEB_GH_API_DEFAULT, .timeout_s = 30, .max_wait_s = 300, \
			  .retries = 3, .backoff_s = 1, .cancel_fd = -1 }

struct web_gh_client;

/* A pull head a hub hands its agents (GET /api/v1/hub/pulls, docs/hub.md):
 * built, against base, only when trusted and only at that very commit. */
struct web_hub_pull {
	int number;
	char head[41];
	char base[41];
	bool trusted;
};
/* Parses the hub's answer into *out (the caller's). -EPROTO, naming the
 * entry, for anything else. */
int web_hub_pulls_parse(struct web_hub_pull **out, size_t *out_n, const char *text, size_t len);
/* -EINVAL for a malformed API URL or repository. Sends nothing. */
int web_gh_client_new(struct web_gh_client **out, const struct web_gh_options *o);
void web_gh_client_free(struct web_gh_client *c);
const char *web_gh_client_repo(const struct web_gh_client *c);
/* Waits the retry delay for attempt (0: backoff_s, then doubling). */
int web_gh_client_backoff(struct web_gh_client *c, int attempt);

struct web_gh_pull {
	int number;
	bool open;
	bool merged;                 /* merged_at is set */
	char author[WEB_GH_LOGIN_MAX + 1];
	char head_ref[256];
	char head_sha[41];
	char base_ref[256];
	char base_sha[41];           /* "" when the reply had none */
	/* The description's perfd-expect lines (web_forecast_lines); "" for
	 * none or no description. */
	char expect[WEB_FORECAST_TEXT_MAX];
};
/* Every open pull request (at most WEB_GH_PAGES_MAX pages); *out is the caller's. */
int web_gh_pulls_open(struct web_gh_client *c, struct web_gh_pull **out, size_t *out_n);
int web_gh_pull_get(struct web_gh_client *c, struct web_gh_pull *out, int number);
/* The merge base of head_sha and branch base_ref, as the API's compare
 * answers it (merge_base_commit.sha), into out. */
int web_gh_merge_base(struct web_gh_client *c, char out[41], const char *base_ref,
		      const char *head_sha);

/* The message of commit sha as the API's git database answers it
 * (GET /repos/O/N/git/commits/SHA), its first WEB_FORECAST_BODY_MAX bytes
 * appended to out. */
int web_gh_commit_message(struct web_gh_client *c, struct strbuf *out, const char *sha);

struct web_gh_comment {
	int64_t id;
	int64_t created;             /* seconds since the epoch; 0 when not given */
	char author[WEB_GH_LOGIN_MAX + 1];
	char *body;                  /* at most WEB_GH_COMMENT_MAX bytes */
};
/* A pull request's or an issue's comments, oldest first; free with
 * web_gh_comments_free. */
int web_gh_comments_list(struct web_gh_client *c, struct web_gh_comment **out, size_t *out_n,
			 int pr);
/* The same, only those updated at or after since (GitHub's time,
 * "2026-11-30T01:02:03Z"; NULL or "": all). */
int web_gh_comments_since(struct web_gh_client *c, struct web_gh_comment **out, size_t *out_n,
			  int number, const char *since);
/* seconds since the epoch as the API writes a time, into out. */
void web_gh_time_format(char out[32], int64_t t);

#define WEB_GH_ISSUE_HEAD_MAX 255        /* bytes of an issue's body kept when listed */
#define WEB_GH_TITLE_MAX 256             /* characters of an issue's title */

/* An issue (or a pull request, as the issues' list gives both). */
struct web_gh_issue {
	int number;
	bool open;
	bool pull;                   /* a pull request */
	char author[WEB_GH_LOGIN_MAX + 1];
	char head[WEB_GH_ISSUE_HEAD_MAX + 1];  /* the body's first bytes, "" for none */
};
/* Opens an issue. Sent once and never again by itself: -EAGAIN when it
 * may have been made. */
int web_gh_issue_create(struct web_gh_client *c, int *out_number, const char *title,
			const char *body);
/* Sets an issue's title and body, and its state ("open" or "closed"; NULL:
 * left as it is). */
int web_gh_issue_edit(struct web_gh_client *c, int number, const char *title, const char *body,
		      const char *state);
/* The newest issues and pull requests the token's own login opened (one
 * page of 100, newest first); *out is the caller's. */
int web_gh_issues_mine(struct web_gh_client *c, struct web_gh_issue **out, size_t *out_n);
/* The pull requests commit sha belongs to, as the API associates them
 * (GET /repos/O/N/commits/SHA/pulls); *out is the caller's. */
int web_gh_commit_pulls(struct web_gh_client *c, struct web_gh_pull **out, size_t *out_n,
			const char *sha);
void web_gh_comments_free(struct web_gh_comment *v, size_t n);
/* Sent once and never again by itself: -EAGAIN when it may have been made. */
int web_gh_comment_create(struct web_gh_client *c, int64_t *out_id, int pr, const char *body);
int web_gh_comment_edit(struct web_gh_client *c, int64_t id, const char *body);
/* state: pending, success, failure or error; description at most 140 characters. */
int web_gh_status_set(struct web_gh_client *c, const char *sha, const char *state,
		      const char *context, const char *description, const char *target_url);
/* The token's own login: the one set, or GET /user asked once (a GitHub
 * App's installation token may not ask it: set it, "NAME[bot]"). */
int web_gh_login(struct web_gh_client *c, const char **out);
void web_gh_client_set_login(struct web_gh_client *c, const char *login);

/* ---- posting to pull requests (pulls.c, docs/github.md) ---- */

#define WEB_COMMENT_BYTES_MAX 65536  /* GitHub takes 65,536 characters; bytes bound them */
#define WEB_STATUS_DESCRIPTION_MAX 140

/* What posting needs; all borrowed. */
/* ---- what a pull head stands at on each host (hosts.c) ---- */

/* Counts the verdicts of job's comparisons (the newest of each case) into
 * desc, as its commit status says them; returns the status's state:
 * "pending" (queued, running), "failure" (the job failed, or a case is
 * slower) or "success". An A/A is counted apart, never as a change. */
const char *web_job_verdicts(struct strbuf *desc, struct db *db, const struct db_job *job);

enum web_host_at { WEB_HOST_DONE, WEB_HOST_FAILED, WEB_HOST_QUEUED, WEB_HOST_BUILDING,
		   WEB_HOST_MEASURING, WEB_HOST_QUARANTINED, WEB_HOST_SILENT, WEB_HOST_WAITING,
		   WEB_HOST_HELD };
struct web_host_state {
	char host[64];
	enum web_host_at state;
	const char *status;          /* the commit status's state: pending, success, failure */
	struct strbuf desc;          /* its description */
	bool has_job;
	struct db_job job;           /* the host's newest job of the commit, when has_job */
	bool base_differs;           /* that job's base is not the hub's */
	/* Another host of the same kind of device holds the commit or base:
	 * said in desc as a warning, whatever the state. */
	bool kin_held;
};
/* Where host stands with commit: done or failed (its job's verdicts),
 * held (the host holds the commit or base: what it did and how a
 * maintainer releases it; status error, pending for a gate's hold),
 * quarantined, silent (no heartbeat for silent_after_s, or none ever),
 * queued, building or measuring (its heartbeat names the job), or
 * waiting (heard from, no job yet). base is the hub's fixed base (NULL or
 * "": none), against which the job's is checked. Release out on every
 * path. */
int web_host_state(struct web_host_state *out, struct db *db, const char *host,
		   const char *commit, const char *base, double silent_after_s);
void web_host_state_release(struct web_host_state *s);
/* The word a state is said with: done, failed, queued, building, measuring,
 * quarantined, silent or pending (WEB_HOST_WAITING). Static. */
const char *web_host_at_name(enum web_host_at at);

/* The hosts a hub expects a pull head on, for its comment: a row each for
 * those not done (their state), and the base every host is to use. */
struct web_comment_hosts {
	const char *const *expect;
	size_t nexpect;
	const char *base;            /* the hub's fixed base commit of the head */
	double silent_after_s;
};

struct web_pulls {
	struct web_gh_client *gh;
	struct db *db;
	const char *hub_url;         /* where the comment's and statuses' links point */
	const char *key;             /* the comment's key: NULL or "" for none */
	const struct web_comment_hosts *hosts;  /* a hub's; NULL for an agent */
};

enum web_post { WEB_POST_UNCHANGED, WEB_POST_CREATED, WEB_POST_EDITED, WEB_POST_RECREATED,
		WEB_POST_MUTED, WEB_POST_FOUND };
const char *web_post_name(enum web_post p);

/* Renders the comment for commit (web_comment_render) and makes pull
 * request pr's perfd comment say it: nothing when the body posted last is
 * the same; an edit of the comment perfd made (remembered in db, or found
 * by its key's marker among the token's own comments); a new comment
 * otherwise. Agents that do not share a database need keys of their own,
 * or each edits the others' comment.
 * A create whose outcome is unknown is followed by a look for the marker
 * before it is sent again, so a retry never makes a second comment. A
 * comment found deleted is made again once; deleted after that, perfd
 * stays off the pull request (WEB_POST_MUTED). */
int web_pull_comment_post(enum web_post *out, const struct web_pulls *ps, int pr,
			  const char *commit);

/* Brings pull request pr's comment up to date for its head commit
 * (web_pull_comment_post). started says whether anything of the head is
 * stored (a job, a trusted head): a head that has nothing yet (it waits
 * for approval, or for a fetch) starts no comment, and only one perfd made
 * about an older head is made to name this one. */
int web_pull_head_comment(enum web_post *out, const struct web_pulls *ps, int pr,
			  const char *commit, bool started);

/* One host's commit status of a pull head, as perfd sets it: context
 * "perfd/HOST", linking to the hub's page of the host's job, or of the
 * head commit when job is 0. All borrowed. */
struct web_head_status {
	const char *host;
	const char *state;           /* pending, success or failure */
	const char *desc;
	int64_t job;
};
/* The description of the status of a head that waits for approval. */
#define WEB_STATUS_WAITING "waiting for a maintainer's /perfd run"

/* Sets s as commit's status unless db says it is set so already (the
 * same state and description); *posted (may be NULL) says whether it was
 * sent. The description is repaired (utf8_repair) and cut to
 * WEB_STATUS_DESCRIPTION_MAX bytes on a character boundary. */
int web_head_status_post(bool *posted, const struct web_pulls *ps, const char *commit,
			 const struct web_head_status *s);

/* Records the forecasts of pull request p at its head (forecast.c): the
 * description's lines (p->expect) and the head commit's message, message
 * when the caller has it (the agent's mirror; NULL: asked of the API, once
 * per head). Taken only until the head's first comparison: from then on
 * nothing is recorded, and a description whose lines changed is marked so
 * (once). At most WEB_FORECASTS_MAX lines, the description's first. */
int web_pull_forecasts_record(const struct web_pulls *ps, const struct web_gh_pull *p,
			      const char *message);

enum web_trust { WEB_TRUST_AUTHOR, WEB_TRUST_APPROVED, WEB_TRUST_WAITING };
/* Whether pull request p's head may be built: its author is on the allow
 * list (logins, any case), or a listed maintainer approved this head with
 * a comment "/perfd run SHA" (SHA a prefix of the head, 7 to 40 hex
 * digits), or "/perfd run" made no earlier than perfd first saw this head;
 * in both cases newer than the last approval used. An approval binds the
 * head and is stored in db. *approver (the
 * caller's to free) is set for WEB_TRUST_APPROVED. */
int web_pull_trust(enum web_trust *out, char **approver, const struct web_pulls *ps,
		   const struct web_gh_pull *p, const char *const *allow, size_t nallow);

/* A comment's "/perfd greenlight HOST" (at the body's start, alone on its
 * line): true with the host's name in host. */
bool web_greenlight_command(char host[64], const char *body);
/* The holds in force of pull request p's head or of base (the hub's,
 * NULL: none) that a listed maintainer released with "/perfd greenlight
 * HOST", a comment no older than the hub's first word of the hold: each
 * recorded in db (db_hub_hold_greenlight), for its host's next heartbeat.
 * The comments are read only while such a hold waits. *out: how many
 * were released. */
int web_pull_greenlights(int *out, const struct web_pulls *ps, const struct web_gh_pull *p,
			 const char *base, const char *const *allow, size_t nallow);

/* ---- alerts on the forge (alerts.c, docs/github.md "Alerts on the forge") ---- */

/* What the hub's alerts on the forge need; all borrowed. */
struct web_alerts {
	struct web_gh_client *gh;
	struct db *db;
	const char *hub_url;         /* where the issue's links point */
	const char *const *allow;    /* the logins who may triage by a command */
	size_t nallow;
	/* Asked before each action on the forge for an alert of host (an
	 * issue made or edited, a culprit's comment): true counts the action
	 * and lets it go, false refuses it (-EDQUOT, tried again later). NULL:
	 * every action goes. */
	bool (*may_act)(void *ctx, const char *host);
	void *act_ctx;
};

/* Appends to title and body alert_id's issue: a title, and a Markdown body
 * whose first line is the hidden marker "<!-- perfd:alert ID -->", then
 * the alert's host, case, branch, range and gain, the comparisons that
 * found and confirmed it (links to their receipts under hub_url), its
 * bisection, its triage, its findings with their pull requests, links to
 * the alert at the hub, how to triage it and who may, and the newest
 * commands read. From stored rows only; names are escaped. -EINVAL for a
 * malformed hub_url, -ENOENT for no such alert; on failure title and body
 * are left as they were. */
int web_alert_issue_render(struct strbuf *title, struct strbuf *body, const struct web_alerts *wa,
			   int64_t alert_id);
/* Makes alert_id's one issue say what web_alert_issue_render renders:
 * nothing when the title, body and state sent last are the same; an edit
 * of the issue made (closed when the alert is triaged fixed or a false
 * alarm, open again when it is not); otherwise a new issue, unless the
 * alert is triaged fixed or a false alarm already. A create is sent once:
 * when its outcome is unknown the issue is looked for among the token's
 * newest issues (WEB_POST_FOUND), never made twice. *number is the issue's,
 * 0 when there is none. A deleted issue is not made again (-ENOENT, said). */
int web_alert_issue_post(enum web_post *out, int *number, const struct web_alerts *wa,
			 int64_t alert_id);

#define WEB_ALERT_CULPRITS_MAX 8     /* culprit commits of one alert asked about */

enum web_culprit_what { WEB_CULPRIT_NO_PULL, WEB_CULPRIT_COMMENTED, WEB_CULPRIT_FOUND,
			WEB_CULPRIT_SAME_PULL, WEB_CULPRIT_GONE };
/* What was done for one culprit commit. */
struct web_culprit {
	char commit[41];
	int pr;                      /* its pull request; 0: none */
	enum web_culprit_what what;  /* none; commented; a comment whose answer was lost,
				      * found; another culprit's comment there; the pull
				      * request gone */
};
/* Comments once on the pull request of each culprit of alert_id (its
 * findings of one commit, the first WEB_ALERT_CULPRITS_MAX), naming the
 * alert and linking it at the hub, and its issue: the pull request the
 * forge associates the commit with (the merged one, else the first),
 * asked once per commit and stored (alert_culprits), one comment per pull
 * request. A false alarm's culprits are not told. A create whose outcome
 * is unknown is looked for by its marker "<!-- perfd:culprit ID -->" before
 * it is sent again. *out (the caller's, also on failure) lists what was
 * done now. */
int web_alert_culprits_post(struct web_culprit **out, size_t *out_n, const struct web_alerts *wa,
			    int64_t alert_id);

/* Reads the comments of alert issue is made since its last read and takes
 * each "/perfd triage" command among them once, in order
 * (db_alert_command_take): by a login on wa's allow list, applied with
 * the checks of a triage at the hub, by the login, or refused with why; a
 * malformed one and one by a login off the list recorded and not applied.
 * The issue counts as read up to its newest comment. *out (the caller's,
 * also on failure: release each, free) lists the commands taken. */
int web_alert_commands_read(struct db_alert_command **out, size_t *out_n,
			    const struct web_alerts *wa, const struct db_alert_issue *is);

/* ---- [github], as a configuration says it (config.c) ---- */

/* [github]: the pull requests' host, as an agent (docs/github.md) and the
 * hub (docs/hub.md) take it; config.c. */
#define FORGE_ALLOW_MAX 64
#define FORGE_COMMENT_KEY_MAX 63   /* as web_comment_key_is_valid takes it */
struct forge_config {
	bool on;                   /* the section is there */
	char *api;                 /* the API's base URL */
	char *repo;                /* OWNER/NAME */
	char *token_file;
	char *login;               /* the token's login, or NULL: asked of the API */
	char **allow;              /* logins whose pull requests are built at once */
	size_t nallow;
	char *hub_url;             /* where links in comments and statuses point */
	char *comment_key;         /* an agent's: tells its comment from others', or NULL */
	bool comment;              /* post the comment */
	bool statuses;             /* set commit statuses */
	bool fetch_token;          /* an agent's: fetch [repo] url over http(s) with the token */
	double timeout_s;
	double max_wait_s;
	int retries;
	double backoff_s;
};
void forge_config_defaults(struct forge_config *g);
/* True when url is http:// or https:// and more. */
bool forge_url_is_http(const char *url);
/* True when url's host is a loopback name or address (127.0.0.0/8 as an
 * address, localhost, [::1]): plain HTTP goes nowhere else with a token. */
bool forge_url_is_loopback(const char *url);
/* The keys every [github] takes (api, repo, token_file, login, allow,
 * hub_url, comment, statuses, timeout_s, max_wait_s, retries, backoff_s),
 * over a struct forge_config: each caller's [github] table lists them as
 * CONFIG_SUB rows among its own, in the order its message says them. */
extern const struct config_key forge_config_keys[];
/* The defaults of what was not given: the public API, a loopback hub URL;
 * a final '/' taken off hub_url. */
void forge_config_finish(struct forge_config *g);
void forge_config_release(struct forge_config *g);
struct web_gh_client;
/* The client of g, with its token read from its file and kept nowhere but
 * in the client; with token_out, a copy of the token too (the caller's, to
 * zero and free). Returns 0, or the error with its detail ("[github] ...")
 * with *out and *token_out NULL; a token file its group or others may read
 * is refused (-EPERM). */
int forge_client(struct web_gh_client **out, const struct forge_config *g, int cancel_fd,
		 char **token_out);
/* What --check asks of g (the agent's and the hub's): its client made as
 * forge_client makes it, token file read, and let go; nothing is sent.
 * Returns 0 or forge_client's error. */
int forge_check(const struct forge_config *g);
/* Asks the token's login of gh, g's client, and says it (a log line). A
 * refused token is -EKEYREJECTED, with its detail ("[github] ..."); an API
 * out of reach, or a token that may not ask its own login (a GitHub App's:
 * set [github] login), is said (a warning) and 0 returned: the API is asked
 * again at each poll. */
int forge_login_check(struct web_gh_client *gh, const struct forge_config *g);

#endif
