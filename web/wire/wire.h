/*
 * wire: what an agent and the hub say to each other (docs/hub.md). Each
 * record kind (a comparison, a job's update, a build with its runner
 * results, an alert's update, a heartbeat) is built here from the stored
 * rows and taken apart again here, checked field by field; the canonical
 * form and its sha256 make one record one hash. And how they are carried:
 * one small HTTP client on libcurl (http.c, the only file that includes
 * curl.h), which web/forge's GitHub client uses too, and the agent's
 * outbox (outbox.c): its records sent to the hub, one table row per kind.
 *
 * Errors: negative errno with a detail in err_last(); nothing here logs.
 */
#ifndef PERFD_WIRE_H
#define PERFD_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include "common.h"
#include "db.h"
#include "runners.h"

/* ---- the comparison record (record.c) ---- */

/* Bytes of one record the hub takes (its request body's bound, answered
 * 413 beyond it). The agent never makes a record larger: a comparison's
 * process lines and a build's runner lines are cut to fit, the first lines
 * of each list kept, and a last SUMMARY line of each cut list says how
 * many were left out (docs/hub.md, "Within the bound"). */
#define WIRE_RECORD_MAX (8 * 1024 * 1024)

#define WIRE_RECORD_FORMAT "perfd-comparison/2"
/* Bytes of one stream of a process's captured output a record may carry:
 * all that perfd keeps of it. */
#define WIRE_RECORD_OUTPUT_MAX CHILD_CAPTURE_DEFAULT

/* Appends the record of comparison c (as db_comparison_load fills it) in
 * its canonical form (docs/hub.md) with its sha256, and a newline. With
 * with_output, each process whose captured output the caller loaded
 * (db_process_output_load) carries it; its processes' lines are cut to fit
 * WIRE_RECORD_MAX. -EIO when sha256 cannot be computed; out is then as it
 * was. */
int wire_record_build(struct strbuf *out, const struct db_comparison *c, bool with_output);

/* A record taken apart: the comparison as its host stored it. */
struct wire_record {
	int64_t origin_id;           /* the comparison's id on its host */
	int64_t origin_job;          /* its job's id on its host; 0: none */
	int64_t origin_base_build;   /* its builds' ids there; 0: none */
	int64_t origin_head_build;
	char sha256[65];             /* the record's, checked against its canonical form */
	/* c.host, settings, times, artifacts and manifests, every process (with
	 * its captured output when sent, and its validity), the summary
	 * (has_summary false when the record has none) with per-process
	 * validity, and the calibration's ids as the host numbers them, nothing
	 * loaded. c.id is 0. */
	struct db_comparison c;
};
/* Parses and checks a record: -EINVAL, naming the member ("processes[3].exit:
 * expected ..."), for malformed JSON, a missing or unknown member, a wrong
 * type or a value out of its bounds; -EBADMSG when its sha256 is not that of
 * its canonical form. *out is zeroed on entry and released by the caller
 * on every path. */
int wire_record_parse(struct wire_record *out, const char *text, size_t len);
void wire_record_release(struct wire_record *r);

/* A job's update as an agent sends it to the hub (docs/hub.md, "The job
 * record"): host is the agent's; j->seq numbers the update. Canonical, with
 * its sha256, and a newline. */
#define WIRE_JOB_FORMAT "perfd-job/1"
#define WIRE_JOB_COMPARISONS_MAX 100000   /* a done job's "comparisons" */
int wire_job_record_build(struct strbuf *out, const struct db_job *j, const char *host);
struct wire_job_record {
	char sha256[65];
	struct db_job job;           /* host, origin_id (its id on the host), seq; id 0 */
};
/* As wire_record_parse, for a job record. */
int wire_job_record_parse(struct wire_job_record *out, const char *text, size_t len);
void wire_job_record_release(struct wire_job_record *r);

/* A finished build with its done runner results, as an agent sends it to
 * the hub (docs/hub.md, "The build record"); host is the agent's. The log
 * travels in base64, the runners' outputs do not (their lines do, cut to
 * fit WIRE_RECORD_MAX). */
#define WIRE_BUILD_FORMAT "perfd-build/1"
int wire_build_record_build(struct strbuf *out, const struct db_build *b, const char *host,
			      const struct db_runner_result *rs, size_t n);
struct wire_build_record {
	char sha256[65];             /* the record's */
	char build_sha256[65];       /* of its canonical form without runner_results */
	int64_t origin_id;           /* the build's id on its host */
	struct db_build build;       /* host, fields, artifacts; id 0 */
	struct db_runner_result *results;  /* each done, with its lines; ids 0 */
	int64_t *results_origin;     /* their ids on the host */
	size_t nresults;
};
int wire_build_record_parse(struct wire_build_record *out, const char *text, size_t len);
void wire_build_record_release(struct wire_build_record *r);

/* An alert's update as an agent sends it to the hub (docs/hub.md, "The
 * alert record"), with its findings: host is the agent's; a->seq numbers
 * the update. Canonical, with its sha256, and a newline. */
#define WIRE_ALERT_FORMAT "perfd-alert/1"
#define WIRE_ALERT_FINDINGS_MAX DB_BISECT_STEPS_MAX
#define WIRE_ALERT_COMMITS_MAX 1000000000
int wire_alert_record_build(struct strbuf *out, const struct db_alert *a, const char *host,
			      const struct db_alert_finding *f, size_t n);
struct wire_alert_record {
	char sha256[65];
	struct db_alert alert;       /* host, origin_id (its id on the host), seq; id 0 */
	struct db_alert_finding *findings;
	size_t nfindings;
};
/* As wire_record_parse, for an alert record: every member required, no
 * other allowed; comparison ids are the host's. */
int wire_alert_record_parse(struct wire_alert_record *out, const char *text, size_t len);
void wire_alert_record_release(struct wire_alert_record *r);

/* A host's heartbeat (docs/hub.md, "The heartbeat"): what the agent is
 * doing, its backlog, fingerprint, quarantine and sandbox; the newest seq
 * wins. */
#define WIRE_HEARTBEAT_FORMAT "perfd-heartbeat/1"
#define WIRE_SANDBOX_NAME_MAX 32     /* bytes of a sandbox's name */
#define WIRE_SANDBOX_MAX 1024        /* bytes of the sandbox member */
#define WIRE_KIND_MAX 255            /* bytes of the kind member */
#define WIRE_HOLDS_MAX 32            /* holds a heartbeat lists, the newest */
#define WIRE_HOLD_TEXT_MAX 4096      /* bytes of a hold's text */
struct wire_heartbeat {
	char host[64];
	int64_t seq;
	char sent_at[32];
	char state[16];              /* idle, polling, building, measuring, calibrating */
	int64_t job;                 /* the job it works on, its id on the host; 0: none */
	int64_t backlog;             /* records not yet acknowledged by the hub */
	char *fingerprint;           /* NULL when not known yet */
	bool quarantined;
	char *fault;                 /* when quarantined */
	char since[32];
	/* The sandbox its builds run in ("bubblewrap"), or "none: " and why
	 * not; NULL: not said (an older agent), omitted when built. */
	char *sandbox;
	/* The kind of device the host is for (its profile's [device]
	 * device_match); NULL: not said (a CPU host, an older agent). */
	char *kind;
	/* The commits held on the host, newest first (docs/hosts.md, "When
	 * the machine goes down"); none: omitted when built. */
	struct wire_hold *holds;
	size_t nholds;
};
/* A hold as a heartbeat lists it. */
struct wire_hold {
	int64_t id;                  /* its id on the host */
	enum db_hold_why why;
	enum db_hold_step step;
	char commit[41];             /* "" when none */
	char tree[41];               /* "" when none */
	char since[32];              /* when it was held */
	char *text;                  /* what the commit did, for people (runner_hold_text) */
};
int wire_heartbeat_build(struct strbuf *out, const struct wire_heartbeat *h);
/* Parses and checks a heartbeat (no sha256: it is state, not a record).
 * sandbox is a name of letters, digits and '-', "none", or "none: " and a
 * reason, at most WIRE_SANDBOX_MAX bytes in all. */
int wire_heartbeat_parse(struct wire_heartbeat *out, const char *text, size_t len);
void wire_heartbeat_release(struct wire_heartbeat *h);

/* The hub's answer to a heartbeat: whether it was kept, and the holds of
 * the host a maintainer released at the hub ("/perfd greenlight HOST"),
 * each by whom. */
#define WIRE_GREENLIT_MAX 6      /* per answer, to fit WIRE_OUTBOX_MESSAGE_MAX; more at the next */
struct wire_greenlight {
	int64_t hold;                /* the hold's id on the host */
	char by[65];                 /* the maintainer's login */
	int pr;                      /* the pull request commented on */
};
struct wire_heartbeat_reply {
	char host[64];               /* "" where an answer left it out */
	int64_t seq;
	bool stored;
	struct wire_greenlight *greenlit;  /* ngreenlit of them, at most WIRE_GREENLIT_MAX */
	size_t ngreenlit;
};
int wire_heartbeat_reply_build(struct strbuf *out, const struct wire_heartbeat_reply *r);
/* -EPROTO, naming the member, for an answer of another shape; *out is
 * zeroed on entry and released by the caller on every path. */
int wire_heartbeat_reply_parse(struct wire_heartbeat_reply *out, const char *text, size_t len);
void wire_heartbeat_reply_release(struct wire_heartbeat_reply *r);

/* ---- one small HTTP client (http.c) ----
 * libcurl is opened at run time through web/dl, at the first connection. */

#define WIRE_HTTP_TOKEN_MAX 1024

/* Reads a token alone on the first line of the file at path; *out is the
 * caller's. A file that others than its owner may read (any of mode 077)
 * is refused with -EPERM, its detail naming the file, its mode and the fix
 * (chmod 600): a token others can read is a token others hold. The detail
 * of an error never holds the token. */
int wire_http_token_read(char **out, const char *path);

/* One libcurl handle: a connection it made is kept for the next request. */
struct wire_http_conn;
/* -ENOENT when libcurl cannot be opened (the detail says what to
 * install), -ENOMEM when it cannot be set up. *out is the caller's. */
int wire_http_conn_new(struct wire_http_conn **out);
void wire_http_conn_free(struct wire_http_conn *c);

/* One request; all borrowed. The token goes in one of headers to url
 * alone: no redirect is followed. */
struct wire_http_request {
	const char *method;          /* GET, POST, PATCH, ... */
	const char *url;
	const char *const *headers;  /* lines sent besides User-Agent and Content-Type;
	                              * NULL-terminated, or NULL for none */
	const char *body;            /* len bytes sent as application/json; NULL: none */
	size_t len;
	const char *ca_file;         /* PEM certificates to trust, or NULL: the system's */
	double timeout_s;            /* the whole exchange's bound */
	int cancel_fd;               /* stops it when readable; -1: none */
	size_t max;                  /* bytes of the reply's body */
	bool cut;                    /* a longer body: its first max bytes kept (true),
	                              * or the request fails with -EFBIG (false) */
	bool fresh;                  /* on a connection of its own, so that libcurl
	                              * never sends it twice by itself */
	bool decode;                 /* asks for any encoding libcurl decodes */
	/* Called with each header line of the reply as it comes (not
	 * terminated, with its line end), the status line of each reply
	 * among them; NULL: none. */
	void (*on_header)(void *ctx, const char *line, size_t len);
	void *ctx;
};
/* Sends rq on c, with up to rq->max bytes of the reply's body in *body
 * (reset first). Returns the HTTP status (any, 1xx to 5xx), or: -ECANCELED
 * stopped by cancel_fd; -EFBIG a reply over max (not cut); -EINVAL a URL
 * or protocol libcurl cannot use; -ENOTCONN no connection was made, so
 * nothing was sent; -EIO no answer (a timeout, a lost connection, a
 * certificate not trusted); -EPROTO an answer with no HTTP status. The
 * detail says what failed without the method and URL, which the caller
 * adds. */
int wire_http_conn_send(struct wire_http_conn *c, struct strbuf *body,
			const struct wire_http_request *rq);
/* An HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT") in seconds since the
 * epoch, or -1. */
int64_t wire_http_date(const char *s);

/* How the agent speaks to its hub (docs/hub.md); all borrowed. */
struct wire_http {
	const char *auth;            /* the header line with the token
	                              * ("Authorization: Bearer ...") */
	const char *ca_file;         /* PEM certificates to trust, or NULL: the system's */
	double timeout_s;            /* one exchange's bound */
	int cancel_fd;               /* stops it when readable; -1: none */
	size_t max;                  /* bytes of a reply kept; the rest is read and dropped */
};
/* One POST of a JSON body to url, on a connection of its own. Returns the
 * HTTP status (any, 2xx to 5xx) with up to h->max bytes of the reply's
 * body in *reply (reset first), or -ECANCELED, or -EIO for an exchange that
 * got no answer (a refused connection, a timeout, a certificate not
 * trusted), or -EPROTO for one with no HTTP status, naming url but never
 * the token. */
int wire_http_post_json(struct strbuf *reply, const struct wire_http *h, const char *url,
			const char *body, size_t len);
/* The same exchange as a GET, for what the hub hands its agents. */
int wire_http_get(struct strbuf *reply, const struct wire_http *h, const char *url);

/* ---- the agent's outbox (outbox.c, docs/hub.md "Agents push") ----
 * The agent's database is the spool. A turn sends the kinds in this
 * order, the oldest of each first, each record after the one before it
 * was answered for: a 2xx is sent, a 409, 413 or 422 a refusal for good (kept
 * with the hub's message), anything else leaves the record in the
 * backlog and ends the turn. */
enum wire_outbox_kind {
	WIRE_OUTBOX_BUILDS,          /* a build is at the hub before the comparisons naming it */
	WIRE_OUTBOX_JOBS,            /* a job before its comparisons, which then find it */
	WIRE_OUTBOX_COMPARISONS,
	WIRE_OUTBOX_ALERTS,          /* only in a turn that left no comparison to send:
	                              * an alert names comparisons */
	WIRE_OUTBOX_KINDS
};
#define WIRE_OUTBOX_REPLY_MAX 4096     /* bytes of the hub's answer kept */
#define WIRE_OUTBOX_MESSAGE_MAX 1000   /* bytes of a refusal's message stored */

/* One turn's outbox; what it is given is borrowed. */
struct wire_outbox {
	struct db *db;
	const char *host;            /* the agent's, in its records */
	const char *url;             /* the hub's base URL */
	struct wire_http http;       /* the token's header, ca_file, timeout_s, cancel_fd;
	                              * max WIRE_OUTBOX_REPLY_MAX */
	size_t batch;                /* records of each kind sent in a turn, at most */
	/* What the owner says of it: a record the hub refused for good (once:
	 * it is not sent again), what naming it ("comparison 3", "update 2 of
	 * job 5"), message the hub's (cut); and why the hub gave no answer. */
	void (*refused)(void *ctx, const char *what, int status, const char *message);
	void (*unanswered)(void *ctx, const char *why);
	void *ctx;
	/* What the turn did. */
	bool down;                   /* the hub gave no answer: nothing more is sent */
	size_t answered[WIRE_OUTBOX_KINDS];  /* records answered for (2xx, 409, 413, 422) */
};
/* Sends each kind's backlog, at most batch records of it, and stops where
 * the hub gives no answer (ob->down). Returns 0, or a negative errno: the
 * database's, or -ECANCELED. */
int wire_outbox_push(struct wire_outbox *ob);
/* POSTs one record rec to the hub's path. Returns the hub's status when
 * it answered for it for good (2xx, 409, 413, 422; *reply holds its answer
 * without its final newline, cut to WIRE_OUTBOX_MESSAGE_MAX bytes), 0 when
 * it stays in the backlog (ob->down set, why said through unanswered), or
 * -ECANCELED. */
int wire_outbox_send(struct wire_outbox *ob, struct strbuf *reply, const char *path,
		     const struct strbuf *rec);

#endif
