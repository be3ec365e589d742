/*
 * daemon/agent: the agent, perfd's long-running side on a GPU host. Its
 * configuration (config.c, config-keys.c), its loop (agent.c: watch,
 * queue, jobs), its A/A comparisons (calibration.c), its history
 * (history.c, history-span.c, history-bisect.c), its pull-request side
 * (pulls.c), its push to the hub (push.c) and its sandbox wiring
 * (sandbox.c). Included by these and by the verbs that run or read an
 * agent (cmd-agent.c, cmd-demo.c, cmd-comment.c, cmd-fetch.c), nothing
 * below daemon/.
 */
#ifndef PERFD_DAEMON_AGENT_H
#define PERFD_DAEMON_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "builder.h"
#include "common.h"
#include "runners.h"
#include "daemon.h"
#include "forge.h"

#define AGENT_NAME_MAX 63
#define AGENT_CONFIG_MAX (1024 * 1024)  /* bytes of a configuration file */
#define AGENT_ITEMS_MAX 64         /* runners, cases, patterns, env entries */
/* [build] hash_max_mb and hash_timeout_s: what hashing a build's artifacts
 * may cost, in bytes and seconds, each pass (docs/config.md). */
#define AGENT_HASH_MAX_MB (1L << 30)
#define AGENT_HASH_MAX_MB_DEFAULT 4096L
#define AGENT_HASH_TIMEOUT_S_DEFAULT 60.0
#define AGENT_FETCH_TIMEOUT_S 600.0
/* How the agent hands the fetch token to its fetch process (perfd fetch). */
#define AGENT_FETCH_TOKEN_ENV "PERFD_FETCH_TOKEN"

struct agent_case {
	char *name;
	char *program;             /* an artifact of the build, relative to its directory */
	char **args;
	size_t nargs;
	char *metric;              /* NULL: the rule's default */
	int pairs;                 /* the first stage; 0: the host's */
	int max_pairs;             /* the stages' limit; 0: the host's */
	double time_budget_s;      /* max_pairs from the time it takes; 0: the host's */
	bool higher_better, has_better; /* better = lower|higher, when said */
	int warmup;
	double timeout_s;
	/* Over the host profile's, when has_*: a case may need its own. */
	bool has_min_effect, has_noise, has_cpus, has_cooldown;
	double min_effect;
	double noise;
	struct cpus cpus;
	unsigned cooldown_ms;
};

struct agent_suite {
	char *build_command;       /* /bin/sh -c in the checkout */
	char **build_env;          /* "K=V" */
	size_t nbuild_env;
	char **artifacts;          /* glob patterns relative to the checkout */
	size_t nartifacts;
	double build_timeout_s;
	char *toolchain;           /* a command whose first line names the toolchain, or NULL */
	bool build_network;        /* the recipe may reach the network (docs/security.md) */
	struct sha256_bound hash;  /* hash_max_mb, hash_timeout_s: each pass over the artifacts */
	struct runner_contract *runners;
	size_t nrunners;
	struct agent_case *cases;
	size_t ncases;
};

/* [sandbox]: how builds, contract runners and timed processes are run
 * (docs/security.md). auto: in the sandbox; as they are only where bubblewrap
 * is absent or the kernel refuses its user namespaces (and then no pull
 * head is built), any other failure to start it stops the agent; on: an
 * agent that cannot have it does not start; off: never (no pull head is
 * built either). */
enum agent_sandbox_mode { AGENT_SANDBOX_AUTO, AGENT_SANDBOX_ON, AGENT_SANDBOX_OFF };
#define AGENT_SANDBOX_ENV "PATH LANG LC_* TZ VK_* MESA_*"
#define AGENT_SANDBOX_PROCESSES 4096
#define AGENT_SANDBOX_FILE_SIZE_MB 16384
#define AGENT_SANDBOX_OPEN_FILES 4096
#define AGENT_SANDBOX_TMP_MB 1024
struct agent_sandbox {
	enum agent_sandbox_mode mode;
	char **env;                /* fnmatch patterns of the names passed */
	size_t nenv;
	char **nodes;              /* device nodes; NULL: the host profile's */
	size_t nnodes;
	char **ro, **rw;           /* more paths shown, read-only and writable */
	size_t nro, nrw;
	char *user;                /* who runs it when the agent is root; NULL: nobody */
	char *bwrap;               /* bwrap's path; NULL: found in the usual places */
	struct sandbox_limits limits;
};

enum agent_pull_base { AGENT_BASE_MERGE_BASE, AGENT_BASE_HEAD };

/* [calibration]: the A/A comparisons the agent runs on its own
 * (docs/config.md). */
#define AGENT_CALIBRATION_RUNS 2
#define AGENT_CALIBRATION_RUNS_MAX 100
#define AGENT_IDLE_BUDGET_S 300.0
#define AGENT_IDLE_WINDOW_S 3600.0  /* the budget is per this many seconds */
#define AGENT_IDLE_RUNS_MAX 64      /* idle A/As in one window, at most */
enum agent_calibrate_when {
	AGENT_CALIBRATE_BEFORE,    /* before the case's comparison (default) */
	AGENT_CALIBRATE_AFTER,     /* after the job whose case had none */
};
struct agent_calibration {
	int runs;                  /* A/As for a case that has no calibration;
	                            * 0: none */
	enum agent_calibrate_when when;
	double idle_budget_s;      /* seconds of idle A/As per window; 0: none */
};


/* [history]: span comparisons, alerts and bisection on the branches named
 * (docs/history.md). Off without the section. */
#define AGENT_BISECT_COMPARISONS 24    /* one bisection's budget, by default */
#define AGENT_BISECT_HOURS 12.0
#define AGENT_SPAN_COMMITS_MAX 10000   /* a span's length, and a range bisected */
enum agent_span_ref { AGENT_SPAN_BACK, AGENT_SPAN_LAST, AGENT_SPAN_TAG };
struct agent_history {
	bool on;                   /* the section is there */
	char **branches;           /* names; NULL: [repo] default_branch */
	size_t nbranches;
	int span_commits;          /* a span when the head moved this many commits; 0: never so */
	double span_hours;         /* a span when this long passed and the head moved; 0: never so */
	enum agent_span_ref reference; /* back: span_commits back; last: the last span's head;
					* tag: the newest tag matching tag_pattern */
	char *tag_pattern;         /* reference = tag:PATTERN's fnmatch(3) pattern */
	int bisect_comparisons;    /* one bisection's budget in comparisons; 0: no bisection */
	double bisect_hours;       /* and in hours of its jobs' running time */
};

/* [hub]: where the agent pushes its done comparisons (docs/hub.md). */
#define AGENT_PUSH_TIMEOUT_S 30.0  /* one request's bound, by default */
#define AGENT_PEM_MAX (1024 * 1024) /* bytes of [hub] ca_file */
#define AGENT_PUSH_BATCH 50        /* records sent at most per loop turn */
struct agent_hub {
	bool on;                   /* the section is there */
	char *url;                 /* https://, or http:// to a loopback host; no final '/' */
	char *token_file;
	char *ca_file;             /* PEM certificates to trust, or NULL: the system's */
	double timeout_s;          /* one request's bound (AGENT_PUSH_TIMEOUT_S) */
};

struct agent_config {
	char *path;
	char *database;
	char *workdir;
	char *host;                /* a host profile (name or file), or NULL */
	double poll_s;
	char *url;
	char **branches;           /* fnmatch patterns */
	size_t nbranches;
	bool pulls;
	char *pull_base;           /* the branch pull requests merge into */
	enum agent_pull_base pull_base_mode;
	char *default_branch;
	char *suite_file;          /* the suite's file on the default branch, or NULL */
	double fetch_timeout_s;    /* [repo] timeout_s: the bound on one fetch */
	struct agent_suite suite;  /* from this file when suite_file is NULL */
	struct forge_config github;
	struct agent_hub hub;
	struct agent_calibration calibration;
	struct agent_sandbox sandbox;
	struct agent_history history;
};

/* Parses the agent configuration at path into a fresh struct. Returns 0, or
 * -EINVAL with every problem as a "file:line: message" line in errors (or
 * -errno when the file cannot be read). *out is NULL on every failure, and
 * *out of agent_suite_parse zeroed: both may be released on every path. */
int agent_config_load(struct agent_config **out, const char *path, struct strbuf *errors);
/* agent_config_load's parse and checks of the configuration's text (len
 * bytes, not NUL-terminated); path names it in messages. */
int agent_config_parse(struct agent_config **out, const char *path, const char *text,
		       size_t len, struct strbuf *errors);
void agent_config_free(struct agent_config *c);
/* Parses a suite alone (the [build], [runner NAME] and [case NAME]
 * sections) from text; name is for messages. */
int agent_suite_parse(struct agent_suite *out, const char *text, size_t len,
		      const char *name, struct strbuf *errors);
void agent_suite_release(struct agent_suite *s);
/* The sha256 of everything that decides how a tree is built; -EIO only
 * from a libcrypto that cannot hash. */
int agent_suite_recipe_hash(char out[65], const struct agent_suite *s);

/* ---- the loop ---- */

/* One agent: shared by agent.c (the loop: watching, building, checking,
 * comparing) and pulls.c (the pull requests' host). */
struct agent {
	struct agent_config *cfg;
	struct agent_suite *suite;   /* cfg's, or repo_suite; NULL until one is read */
	struct agent_suite repo_suite;
	struct db *db;
	struct builder_repo *repo;
	struct host_profile *profile;
	struct kernel_probe *probe;
	struct runner_fault_watch watch;
	struct web_gh_client *gh;        /* NULL without [github] */
	struct web_pulls pulls;          /* gh, db and [github]'s hub_url and comment_key */
	struct strbuf waiting;           /* the last poll's pull heads left unbuilt, a line each */
	struct strbuf failures;          /* this run's failures as said (job.c), 64 KiB at most */
	char *fingerprint;
	char *mirror;                    /* WORKDIR/mirror.git */
	char *fetch_token;               /* [github] fetch_token's token, or NULL */
	char host[64];
	char recipe_hash[65];
	int cancel_fd;
	int cache_hits;
	int builds;
	/* The idle A/As of the last AGENT_IDLE_WINDOW_S: when each ended
	 * (time_monotonic_ns) and how long it took, oldest first. */
	struct { int64_t end_ns; double secs; } idle[AGENT_IDLE_RUNS_MAX];
	size_t nidle;
	int aa_runs;                     /* A/A comparisons run, for the summary */
	char *push_auth;                 /* [hub]: the header with the token, or NULL */
	bool push_down;                  /* the hub did not answer this loop turn */
	char *push_error;                /* the last failure said, logged once */
	int64_t heartbeat_seq;           /* the last heartbeat's */
	int lock_fds[2];                 /* the work directory's and the database's locks */
	struct sandbox *sandbox;         /* NULL: builds and processes run as they are */
	char *unsandboxed;               /* then why, in a sentence */
	char *poll_error;                /* why the last poll failed, or NULL */
};


/* Holds (hold.c, docs/hosts.md "When the machine goes down").
 * agent_holds_open, at the start on a host with a device: each step of
 * this host that an earlier boot left running is held (its commit, with
 * what the previous boot's kernel log kept) and the host quarantined;
 * returns how many, or an error. agent_job_held: 1 when job would
 * run a commit held here (its head's or its base's, by commit or by tree
 * with this recipe), the job then waiting on that hold (said), else 0.
 * agent_build_held: 1 when build b's commit is held here.
 * agent_refuse_quarantined: -EPERM with the reason and the ways out when
 * the host is quarantined, else 0. agent_holds_say: a line per hold in
 * force, with its release, into f (NULL: the log). */
int agent_holds_open(struct agent *a);
int agent_job_held(struct agent *a, const struct db_job *job);
int agent_build_held(struct agent *a, const struct db_build *b);
int agent_refuse_quarantined(struct agent *a);
void agent_holds_say(struct agent *a, FILE *f);
/* The holds in force, for a heartbeat: h->holds (the caller's to release
 * with the heartbeat) holds the newest WIRE_HOLDS_MAX. */
struct wire_heartbeat;
struct wire_heartbeat_reply;
int agent_holds_heartbeat(struct agent *a, struct wire_heartbeat *h);
/* Releases each hold of this host that the hub's answer says a maintainer
 * released there ("/perfd greenlight HOST"), and but for a gate's lifts the
 * quarantine, as perfd retry --held does; said in the log. */
void agent_holds_greenlit(struct agent *a, const struct wire_heartbeat_reply *rep);

/* [history] (docs/history.md): spans (history-span.c), alerts
 * (history.c) and bisection (history-bisect.c). At a poll: queues a span
 * job for each history branch among heads whose span is due. */
int agent_history_spans(struct agent *a, const struct builder_head *heads, size_t n);
/* Reads the verdicts of head and span jobs done since the last call (and,
 * without [history], only marks them read), raises or dismisses the alerts
 * whose confirmation ended and takes each bisection as far as its done
 * jobs allow. Returns how many things it started or ended (then the queue
 * has work, or another call may), 0 when nothing moved, or a negative
 * errno. */
int agent_history(struct agent *a);
/* What the history reads of a job's comparison of one case. */
struct agent_verdict {
	int64_t id;              /* 0: no done comparison */
	char verdict[16];        /* an A/A's is "unchanged" */
	bool has_gain;
	double gain;
	double min_effect;       /* the comparison's */
};
/* Whether name is one of [history]'s branches. */
bool agent_history_branch(const struct agent *a, const char *name);
/* The newest done comparison of job_id's case, into *out (zeroed, id 0,
 * when the job has none done). Returns 0 or a negative errno. */
int agent_job_verdict(struct agent *a, struct agent_verdict *out, int64_t job_id,
		      const char *case_name);
/* Takes confirmed alert al's bisection as far as its done jobs allow:
 * queues the steps due, and when no step waits on a job stores its
 * findings and ends it. Returns the jobs queued, plus 1 when it ended, or
 * a negative errno. */
int agent_history_bisect(struct agent *a, struct db_alert *al);

/* Opens the database, the mirror of the repository and [github]'s client,
 * and marks what a killed agent left running as abandoned. profile and
 * probe (NULL: none, the Vulkan devices the machine has are probed here)
 * become the agent's, also on failure. cancel_fd becomes readable when the
 * agent must stop. Returns 0, or a negative errno with the detail in
 * err_last(); it logs no error (a probe that finds no device is a warning). */
/* Sets up a->sandbox as [sandbox] says; where it cannot run and mode is
 * auto, or mode is off, a->unsandboxed says why and 0 is returned
 * (sandbox.c). */
int agent_sandbox_open(struct agent *a);
/* perfd agent --check: prints what a sandboxed step would see here, or
 * why there is no sandbox; an error where it could not be set up. */
int agent_sandbox_view(const struct agent_config *c, const struct host_profile *hp);
/* Warns of each absolute path the suite names (its commands, env,
 * toolchain, artifacts, runners' and cases' commands) that a step in s
 * will not see, once per path, naming the key and what shows it (none
 * for c's own files). */
void agent_sandbox_unseen(const struct agent_config *c, const struct sandbox *s,
			  const struct agent_suite *su);
/* Appends to out a line for each absolute path, up to max, that the lines
 * of a step's log (len bytes) saying something is missing or refused name
 * and that s does not show, outside dir (the step's own directory): what
 * shows it. Returns how many. */
size_t agent_sandbox_tried(struct strbuf *out, const struct agent_config *c,
			   const struct sandbox *s, const char *log, size_t len, const char *dir,
			   size_t max);
int agent_open(struct agent **out, struct agent_config *cfg, struct host_profile *profile,
	       struct kernel_probe *probe, int cancel_fd);
/* agent_open's first steps, for what needs less than an agent (a trial):
 * agent_new fills the agent from cfg (profile and probe become its own,
 * also on failure), opening nothing; agent_open_mirror then takes the
 * work directory's lock and opens the mirror. agent_free frees either. */
int agent_new(struct agent **out, struct agent_config *cfg, struct host_profile *profile,
	      struct kernel_probe *probe, int cancel_fd);
int agent_open_mirror(struct agent *a);
/* A poll's fetch (in a child, perfd fetch), then the suite of the default
 * branch read again when it comes from the repository. Returns 0,
 * -ECANCELED when stopped, or the fetch's error (detail in err_last()). */
int agent_poll_mirror(struct agent *a);
/* perfd agent --check --trial (trial.c): the default branch's head built
 * once as a job would build it, in a scratch directory removed after,
 * nothing stored; progress and the outcome are said. profile (or NULL)
 * becomes the trial's. Returns 0 when the build passed, 1 when it failed,
 * or a negative errno (detail in err_last(), not logged) when it could
 * not be tried. */
int agent_trial(struct agent_config *cfg, struct host_profile *profile, int cancel_fd);
void agent_free(struct agent *a);
/* The host name its rows carry: the profile's, else this machine's. */
const char *agent_host(const struct agent *a);
/* The name an agent's rows carry for its host: the profile's [host] name,
 * else this machine's host name, else "local". */
void agent_host_name(char *out, size_t len, const struct host_profile *profile);
/* Fetches, and queues a job for every watched head at a new commit.
 * Returns 0, -ECANCELED when stopped, or the fetch's or the database's
 * error (detail in err_last(), not logged). */
int agent_poll(struct agent *a);
/* Does every queued job: builds, contract runners, comparisons. Returns 0,
 * -ECANCELED when stopped (err_last() says where), -EPERM when the host is
 * quarantined, -EINVAL when there is no suite, or a database error; none
 * is logged here. */
int agent_work(struct agent *a);
/* The settings of case k's comparisons: the case's own, else the host
 * profile's, else the defaults (*o is zeroed first). The arms, artifacts,
 * builds and kind are the caller's to fill; progress is the line printer's
 * context. */
void agent_case_opts(struct agent *a, const struct agent_case *k, struct runner_pair_opts *o,
		     struct cli_progress *progress);
/* How the agent builds with its suite and sandbox (no progress hooks). */
void agent_build_opts(struct agent *a, struct builder_build_opts *out);
/* Stores the manifest of build b (its commit, tree, recipe and every
 * artifact) and puts its hash in out. */
int agent_build_manifest(struct agent *a, char out[65], const struct db_build *b);
/* The artifact of build b named name (a "./" before it is ignored), or
 * NULL; borrowed from b. */
const struct db_build_artifact *agent_artifact_named(const struct db_build *b,
						      const char *name);
/* Logs "PREFIX: comparison N, VERDICT" once it is stored; an A/A's verdict
 * in the words that say it is a calibration sample (runner_aa_verdict). */
void agent_log_verdict(struct agent *a, const char *prefix, int64_t cid);

/* ---- the A/A comparisons (calibration.c) ---- */

/* For case k, before its comparison or after its job ([calibration]
 * when): when the case has no calibration on
 * this host as it is now, up to [calibration] runs A/As of the base build
 * (whose program k names). Returns 0, -ECANCELED when stopped (the A/A in
 * hand is kept as abandoned), or a database error. */
int agent_calibrate_case(struct agent *a, const struct agent_case *k, const struct db_build *base);
/* When the queue is empty: one A/A comparison for the case whose
 * calibration is oldest (none is oldest of all), of the newest build made
 * with this suite's recipe, while the idle A/As of the last hour took less
 * than [calibration] idle_budget_s. Returns 1 when it ran one (the caller
 * polls again at once), 0 when there was nothing to do, -ECANCELED when
 * stopped (the A/A is kept as abandoned), or a database error. */
int agent_idle(struct agent *a);
/* perfd agent --check: per case of the configuration's suite, what the
 * host can see with the calibration it has now in the agent's database
 * (runner_mde; read only, never created), a line each. Without a database
 * it can read, or an A/A, it says so; with the suite in the repository, that the cases
 * are read there. Returns 0, or a database error. */
int agent_check_visibility(FILE *f, const struct agent_config *cfg,
			   const struct host_profile *profile);
/* Prints what the agent has done, a line per job. */
void agent_summary(struct agent *a, FILE *f);

/* ---- the push to the hub (push.c, docs/hub.md) ---- */

/* Reads [hub]'s token file into *out, the caller's: the whole header line
 * that carries it ("Authorization: Bearer ..."). -EPERM for a file that
 * others than its owner may read; the detail never holds the token. */
int agent_push_token(char **out, const struct agent_hub *h);
/* Sends the oldest of the backlog through web/wire's outbox
 * (wire_outbox_push), at most AGENT_PUSH_BATCH of each kind, each after the
 * one before it was answered for; stops at the first that gets no answer
 * (said once, not as an error), and sends nothing more until
 * agent_push_turn. Returns how many comparisons were answered for, or a
 * negative errno: the database's, or -ECANCELED. */
int agent_push(struct agent *a);
/* The same at a loop turn: the hub is tried again. */
int agent_push_turn(struct agent *a);
/* Tells the hub what the agent does now (state: idle, polling, building,
 * measuring, calibrating; job: the job, 0 for none), with its backlog,
 * fingerprint and quarantine. Not spooled: a heartbeat the hub does not
 * get is overtaken by the next. */
void agent_heartbeat(struct agent *a, const char *state, int64_t job);
/* The hub's list of open pull heads (GET /api/v1/hub/pulls); *out is the
 * caller's. -EIO or -EPROTO when the hub did not give it (the pull heads
 * then wait for a poll that gets it), -ECANCELED when stopped. */
int agent_hub_pulls(struct agent *a, struct web_hub_pull **out, size_t *out_n);

/* ---- the pull requests' host (pulls.c) ---- */

/* Opens [github]'s client, keeps the fetch token, asks the token's login. A
 * refused token (-EKEYREJECTED) or an unreadable token file is an error,
 * returned with its detail; an API out of reach is said (a warning) and
 * asked again at each poll. */
int agent_pulls_open(struct agent *a);
/* This host's status of commit (once per state and description), linking
 * to the hub's page of job, or of the commit when job is 0. */
void agent_status_set(struct agent *a, const char *commit, int64_t job, const char *state,
		      const char *desc);
/* A job's status: pending until it ends; failure when it failed or a case
 * is slower; success otherwise. */
void agent_job_status(struct agent *a, const struct db_job *job);
/* Brings pull request p's statuses and comment up to date. */
void agent_pull_publish(struct agent *a, const struct web_gh_pull *p);
/* Records pull request p's forecasts at its head (web_pull_forecasts_record),
 * the head commit's message read from the mirror when it has it. */
void agent_pull_forecasts(struct agent *a, const struct web_gh_pull *p);
/* Whether pull head h may be queued now (open at that commit, trusted). */
bool agent_pull_allowed(struct agent *a, const struct builder_head *h,
			const struct web_gh_pull *open, size_t nopen);
/* After a job: its commit's status, and the comment of its pull request. */
void agent_job_done(struct agent *a, const char *head, const char *commit);

#endif
