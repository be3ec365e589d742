/* Shared by the files of web/hub/ and their unit tests alone. */
#ifndef PERFD_WEB_HUB_INTERNAL_H
#define PERFD_WEB_HUB_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "db.h"
#include "wire.h"

/* ---- params.c: what a client sends, checked before anything reads it ---- */

#define WEB_PATH_MAX 1024            /* bytes of a request path */
#define WEB_PARAMS_MAX 16            /* query parameters per request */
#define WEB_PARAM_NAME_MAX 32
#define WEB_PARAM_VALUE_MAX 256

struct web_param {
	char *key;
	char *value;
};

/* The query parameters of one request; web_params_release frees the copies. */
struct web_params {
	struct web_param v[WEB_PARAMS_MAX];
	size_t n;
};
void web_params_release(struct web_params *p);
/* Copies one parameter (a NULL value counts as ""). -EINVAL, with a detail
 * naming the parameter, for a name or value over its bound, a name given
 * twice, or one parameter too many. */
int web_params_add(struct web_params *p, const char *key, const char *value);
/* -EINVAL naming the first parameter whose name is not in allowed
 * (NULL-terminated). */
int web_params_check(const struct web_params *p, const char *const *allowed);
/* The value, borrowed from p; NULL when absent. */
const char *web_param_get(const struct web_params *p, const char *key);
/* A whole number from min to max; dflt when absent. -EINVAL otherwise. */
int web_param_int(int64_t *out, const struct web_params *p, const char *key, int64_t dflt,
		  int64_t min, int64_t max);
/* A text filter (non-empty, no control characters); NULL when absent and
 * not required. -EINVAL otherwise, with *out NULL. */
int web_param_text(const char **out, const struct web_params *p, const char *key,
		   bool required);
/* A lower-case hexadecimal prefix of 4 to 40 digits; NULL when absent or
 * malformed (-EINVAL). */
int web_param_hex(const char **out, const struct web_params *p, const char *key);
/* "json" (the default) or "csv": sets *csv. */
int web_param_format(bool *csv, const struct web_params *p);

/*
 * Checks a request path before it is routed. raw is the target as sent
 * (percent-encoded, query included), path the decoded path. -EINVAL unless
 * the path starts with '/', is at most WEB_PATH_MAX bytes of printable ASCII
 * without a backslash, has no "." or ".." segment and no percent-encoding
 * at all in raw's path part: no perfd path needs one, so %2e%2e, %2f, %5c
 * and %00 never reach the router.
 */
int web_path_check(const char *raw, const char *path);
/* Maps a checked path to a file under the static root: "/" to "index.html",
 * "/static/REL" to REL when each segment of REL is letters, digits, '.',
 * '_' or '-' and starts with none of '.'. -ENOENT for any other path, with
 * out "". */
int web_static_name(char *out, size_t outlen, const char *path);
/* Maps "/docs/NAME.md" (NAME of letters, digits, '.', '_' or '-', not
 * starting with '.') to NAME.md, a document of the docs directory. -ENOENT
 * for any other path, with out "". */
int web_doc_name(char *out, size_t outlen, const char *path);

/* ---- api.c: the JSON API, free of HTTP plumbing ---- */

struct web_reply {
	int status;
	const char *type;            /* static: the Content-Type */
	struct strbuf body;
	/* The quoted entity tag of a 200 whose bytes do not change while what
	 * it answers stays as it is (a done comparison's receipt), "" for
	 * none. With one the answer may be kept if revalidated (Cache-Control:
	 * no-cache), and an If-None-Match naming it is answered 304. */
	char etag[SHA256_HEX_SIZE + 2];
};

/* What the connection guard (guard.c) has done since the server started,
 * and the connections it holds now, for /metrics. */
struct web_conn_stats {
	unsigned open;               /* connections held, those shut down not counted */
	uint64_t closed_header;      /* past the head's deadline (or a kept-alive one idle) */
	uint64_t closed_body;        /* past the body's and answer's deadline */
	uint64_t displaced;          /* shut down to let another address in */
	uint64_t refused_share;      /* refused: the address held its share */
	uint64_t refused_full;       /* refused: every connection busy */
};

#define WEB_CODES_MAX 16
/* Answers counted by status code, for /metrics. */
struct web_counters {
	int codes[WEB_CODES_MAX];
	uint64_t counts[WEB_CODES_MAX];
	size_t n;
	struct web_conn_stats conns;  /* copied from the guard before /metrics answers */
	void (*more)(void *ctx, struct strbuf *out);   /* web_server_opts' metrics */
	void *more_ctx;
};
void web_counters_add(struct web_counters *c, int code);

/* What the API knows of a hub's pull requests ([github], docs/hub.md), for
 * GET /api/v1/pulls: the repository (NULL: none, and the list is empty),
 * the hosts each head is measured on, and how long a host goes unheard
 * before it is silent. All borrowed. */
struct web_api_pulls {
	const char *repo;
	const char *const *expect;
	size_t nexpect;
	double silent_after_s;
};

/* Answers path (under /api/v1/, or /metrics) into out, whose body the
 * caller releases; default_branch is the change points' branch when the
 * request names none. Never fails: a database error is a 500 with its detail,
 * which is also logged. */
void web_api_answer(struct web_reply *out, struct db *db, const struct web_counters *counters,
		    const struct web_api_pulls *pulls, const char *default_branch,
		    const char *path, const struct web_params *params);
/* A JSON error answer: {"error": msg}. */
void web_reply_error(struct web_reply *out, int status, const char *msg);

/* ---- ingest.c: the writes the hub accepts (docs/hub.md) ---- */

#define WEB_INGEST_COMPARISONS "/api/v1/ingest/comparisons"
#define WEB_INGEST_BODY_MAX WIRE_RECORD_MAX      /* bytes of one record */
#define WEB_TOKENS_MAX 100000                  /* live tokens compared per request */

/* Who a request's token belongs to. */
struct web_identity {
	enum db_token_kind kind;
	char name[64];
};
/* The identity of the bearer token in an Authorization header (NULL: none
 * sent): 0; -EACCES, with what is wrong in err_last(), for no header,
 * another scheme, a malformed token or one that is unknown or revoked; or a
 * database error. The token's sha256 is compared with every live one, each
 * in constant time. *out is zeroed on entry. */
int web_token_check(struct web_identity *out, struct db *db, const char *authorization);
/* An ingest: the record in body (len bytes) sent by who, a host's token
 * already accepted, answered in out. Each returns 0 when it changed
 * nothing, 1 when it changed what the hub holds, 2 when that change is a
 * result (a comparison, a job's end), and puts in commit the head commit
 * whose comment and statuses it may change (the commit of the comparison's
 * or heartbeat's job, or of the job updated), or "". */
typedef int web_ingest_fn(struct web_reply *out, struct db *db, const struct web_identity *who,
			  const char *body, size_t len, char commit[41]);
/* POST /api/v1/ingest/comparisons: one comparison record
 * (wire_record_parse); 2 when the comparison was stored. 201 when stored,
 * 200 when the same record was stored before (nothing is stored), 400 for a
 * malformed record or a wrong sha256, 403 for another host's record, 409
 * for the same host and id with other content (logged), 422 for a record
 * that is not done, names calibration comparisons not here yet, or whose
 * figures differ from the rule's (each named), 500 for a database error
 * (logged). Nothing is stored unless the answer is 201. */
web_ingest_fn web_ingest_comparison;
/* POST /api/v1/ingest/jobs: one job's update (docs/hub.md); 2 for a job's
 * end. */
#define WEB_INGEST_JOBS "/api/v1/ingest/jobs"
web_ingest_fn web_ingest_job;
/* POST /api/v1/ingest/builds: a finished build with its runner results
 * (docs/hub.md); 2 when it stored the build or a result it lacked. */
#define WEB_INGEST_BUILDS "/api/v1/ingest/builds"
web_ingest_fn web_ingest_build;
/* POST /api/v1/ingest/heartbeat: a host's state; 1 when kept. */
#define WEB_INGEST_HEARTBEAT "/api/v1/ingest/heartbeat"
#define WEB_INGEST_SMALL_MAX (512 * 1024)      /* bytes of a job record or heartbeat */
web_ingest_fn web_ingest_heartbeat;
/* POST /api/v1/ingest/alerts: one alert's update with its findings
 * (docs/hub.md, "The alert record"); 422 when the comparison that found it
 * is not here, the others linked where they are; 1 when stored. */
#define WEB_INGEST_ALERTS "/api/v1/ingest/alerts"
web_ingest_fn web_ingest_alert;
/* GET /api/v1/hub/pulls (docs/hub.md): for a token's holder, the open pull
 * heads as GET /api/v1/pulls lists them, every one (500 at most). */
#define WEB_HUB_PULLS "/api/v1/hub/pulls"
/* POST /api/v1/alerts/ID/triage, by who, a maintainer (docs/api.md): 200
 * when set, 400 for a body that is not {"triage": STATE, "fixed_by": N},
 * 404 for no such alert, 422 for an alert not raised or a fixed_by that
 * does not undo it; nothing changes but on 200. 1 when it changed. */
#define WEB_TRIAGE_BODY_MAX 4096
int web_alert_triage(struct web_reply *out, struct db *db, const struct web_identity *who,
		     int64_t id, const char *body, size_t len);

/* ---- guard.c: deadlines and a fair share of connections (docs/hub.md) ---- */

/* What a connection waits for. */
enum {
	WEB_PHASE_HEAD,              /* its request head: whole by header_timeout_s */
	WEB_PHASE_BODY,              /* its body read and answer sent, by body_timeout_s */
	WEB_PHASE_IDLE,              /* kept alive: the next head whole by header_timeout_s */
};
/* Why the guard shut a connection down. */
enum { WEB_CLOSE_NONE, WEB_CLOSE_HEADER, WEB_CLOSE_BODY, WEB_CLOSE_DISPLACED };

/* The connections the server takes at most: the bound, and room for a
 * whole bound of those shut down whose close the server's thread has not
 * yet seen. The server's library refuses a connection beyond its limit
 * before the guard is asked, so the limit must not be met while the guard
 * would admit: it is, when the hundred bodies of slow sockets opened
 * together pass their deadline together and a hundred newcomers take
 * their places before the server's thread closes them. */
#define WEB_GUARD_SLOTS(max) (2 * (max) + 16)

struct web_guard_opts {
	unsigned max_connections;
	double header_timeout_s;
	double body_timeout_s;
	const char *const *trusted;  /* numeric addresses, no share for them */
	size_t ntrusted;
};

struct sockaddr;
struct web_conn;
struct web_peer;

/* Embedded in the server; every member is the guard's. */
struct web_guard {
	pthread_mutex_t lock;        /* guards all below; the sweeper waits on wake */
	pthread_cond_t wake;
	pthread_t sweeper;
	bool ready, running, stop;
	unsigned max, crowd;         /* the bound, and 3/4 of it: shares apply above */
	double header_s, body_s;
	double next_wake;            /* the sweeper's next look (monotonic s) */
	struct web_conn *conns;      /* every connection started and not yet closed */
	unsigned nlive;              /* of those, the ones not shut down */
	struct web_peer **peers;     /* live connections per address */
	size_t npeers;
	unsigned char (*trusted)[16];
	size_t ntrusted;
	struct web_conn_stats stats;
};

/* Starts the sweeper thread. -EINVAL naming a trusted address that is not a
 * numeric IPv4 or IPv6 one; g is then released. */
int web_guard_init(struct web_guard *g, const struct web_guard_opts *o);
/* Stops the sweeper and frees every entry; after the server has stopped. */
void web_guard_release(struct web_guard *g);
/* 16 bytes for a numeric address (IPv4 as ::ffff:a.b.c.d); -EINVAL. */
int web_guard_address(unsigned char out[16], const char *addr);
/* Whether a connection from sa may start: always below 3/4 of the bound;
 * above, not for an address (other than a trusted proxy) that holds its
 * share, the bound over the addresses holding connections; at the bound,
 * only by shutting down the oldest connection waiting on its client (the
 * server read the start of its head, or nothing it sent waits unread),
 * first of an address over its share; only when none waits on its client,
 * the oldest waiting on the server. Called before web_guard_add. */
bool web_guard_admit(struct web_guard *g, const struct sockaddr *sa);
/* A connection started on fd: its head is due within header_timeout_s.
 * The entry is the guard's until web_guard_remove. */
struct web_conn *web_guard_add(struct web_guard *g, int fd, const struct sockaddr *sa);
/* The connection's head is whole (WEB_PHASE_BODY) or its answer sent
 * (WEB_PHASE_IDLE): its next deadline counts from now. c NULL: nothing. */
void web_guard_phase(struct web_guard *g, struct web_conn *c, int phase);
/* The server has read the start of the connection's head (its request
 * line): what is missing is the client's to send. c NULL: nothing. */
void web_guard_heard(struct web_guard *g, struct web_conn *c);
/* The connection is closing: called before its descriptor is closed. */
void web_guard_remove(struct web_guard *g, struct web_conn *c);
void web_guard_stats(struct web_guard *g, struct web_conn_stats *out);

#endif
