/*
 * db: the SQLite file that holds every raw row and every derived figure.
 * The only folder that includes sqlite3.h; the rest of perfd sees the
 * structs below.
 *
 * Ownership: structs filled by db_*_load are the caller's and are released
 * with the matching _release (which accepts NULL and a zeroed struct).
 * Strings inside them belong to the struct. Structs passed in (const) are
 * borrowed for the call only.
 *
 * Errors: every function that can fail returns 0 (or a count) on success and
 * a negative errno on failure with a detail in err_last(): -ENOENT for an
 * unknown id, -EBUSY for a lock held past the lock timeout, -EPROTO for a
 * file that is not a perfd database or is corrupt, -EPROTONOSUPPORT for a
 * schema newer than this binary knows (or, opened read-only, older),
 * -EACCES for a file that cannot be opened or written, -EIO for anything
 * else SQLite says.
 * On failure no partial row is stored: every write is one transaction.
 *
 * Outputs: a function that fills a struct, a pointer, a list (**out with
 * *out_n) or a string buffer zeroes it on entry (0, NULL, ""), before
 * anything can fail, so that on every path, errors included, it holds
 * either nothing or what was loaded and its _release may be called on it.
 * An array passed in with a max is filled up to the count returned; on
 * failure none of it is the caller's to release. The one in/out struct,
 * db_process_output_load's, says so.
 */
#ifndef PERFD_DB_H
#define PERFD_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DB_SCHEMA_VERSION 23

struct db;

/* ---- the file (db/db.c, db/schema.c) ----
 * Opening and migrating, transactions, and what every table shares. */

/* Opens (creating when absent) and migrates the database at path, in WAL
 * mode. lock_timeout_ms is how long a write waits for another writer. */
int db_open(struct db **out, const char *path, int lock_timeout_ms);
/* Opens the database at path for reading alone: it never creates, migrates
 * or writes it, and every write through the handle fails with -EACCES.
 * -ENOENT when there is no file at path or the file is empty, -EPROTO for a
 * foreign or corrupt file, -EPROTONOSUPPORT for a schema newer than this
 * binary knows or older than DB_SCHEMA_VERSION (db_open migrates that one).
 * As with db_open, SQLite keeps a -wal and a -shm file beside the database
 * while it is open and removes them at the last close: the directory must
 * be writable, or those files there already. */
int db_open_readonly(struct db **out, const char *path, int lock_timeout_ms);
void db_close(struct db *db);
/* Groups the writes between them into one transaction: each write function
 * then joins it instead of committing alone. A failed write inside makes
 * the commit roll everything back and fail. */
int db_transaction_begin(struct db *db);
int db_transaction_commit(struct db *db);
void db_transaction_rollback(struct db *db);

/* The schema version stored in the file (after migration, DB_SCHEMA_VERSION). */
int db_schema_version(struct db *db);

/* A commit id in hex, with its NUL. */
#define DB_OID_HEX 41

/* The state of a comparison, a process or a runner result. */
enum db_state { DB_STATE_RUNNING = 0, DB_STATE_DONE, DB_STATE_ABANDONED };
const char *db_state_name(enum db_state s);

/* ---- artifacts (db/artifacts.c) ----
 * A file by path, size and sha256, shared by comparisons and builds. */

struct db_artifact {
	int64_t id;
	char *path;
	int64_t size;
	char sha256[65];
};

/* Finds the row with the same path, size and hash, or inserts one. */
int db_artifact_put(struct db *db, int64_t *out_id, const struct db_artifact *a);
int db_artifact_load(struct db *db, struct db_artifact *out, int64_t id);
void db_artifact_release(struct db_artifact *a);

/* ---- processes, metrics, process_lines, process_output (db/processes.c) ----
 * The raw receipt rows of a comparison, one per process run. */

struct db_metric {
	char *name;
	double value;
};

/* A RESULT or SUMMARY line, kept verbatim. */
struct db_line {
	char *kind; /* "RESULT" or "SUMMARY" */
	char *text;
};

/* One process of a comparison: the raw receipt row. The fields above
 * `valid` are what happened; `valid` and `invalid_reason` are derived by
 * the rule and stored with the summary. */
struct db_process {
	int64_t id;
	int64_t comparison_id;
	int seq;                 /* 1-based position in execution order */
	char arm[4];             /* "old" or "new" */
	int pair;                /* 1-based; 0 for a warm-up process */
	bool warmup;
	enum db_state state;
	char started_at[32];
	char ended_at[32];
	int exit_code;           /* -1 when killed by a signal or never started */
	int signal;
	bool timed_out;
	char *spawn_error;       /* NULL unless the program could not start */
	double wall_ms;
	double user_ms;
	double sys_ms;
	int64_t maxrss_kb;
	double cpu_wait_ms;      /* the machine's CPU pressure while it ran: the
				  * time some task waited for a CPU (PSI "some");
				  * NAN: not recorded (no PSI, or before schema 21) */
	char *cpus;              /* pinning as given, NULL for none */
	struct db_metric *metrics;
	size_t nmetrics;
	char *digest;            /* canonical: "hex" or "a=hex b=hex"; NULL when none */
	bool record_valid;       /* printed TIMING_RECORD_VALID */
	char **protocol_errors;  /* malformed protocol lines, with their line numbers */
	size_t nprotocol_errors;
	struct db_line *lines;
	size_t nlines;
	int64_t stdout_bytes;    /* all bytes the process wrote, kept or not */
	int64_t stderr_bytes;
	int64_t stdout_kept;     /* bytes of it stored (the capture bound cuts) */
	int64_t stderr_kept;
	char *fault;             /* kernel-log line that marked a fault, NULL for none */
	char *fault_watch;       /* "on", "off: why", or NULL when none was asked for */
	bool valid;
	char *invalid_reason;
	/* Captured output: loaded only by db_process_output_load. */
	char *out;
	size_t out_len;
	char *err;
	size_t err_len;
};

/* A process's load: the share of its wall time that some task waited for a
 * CPU (cpu_wait_ms / wall_ms), which pairs-median/2.2's load gate weighs;
 * NAN where the pressure was not recorded or the wall time is not above
 * 0. */
double db_process_load(double cpu_wait_ms, double wall_ms);

void db_process_release(struct db_process *p);
/* The value of the named metric; false when the process did not print it. */
bool db_process_metric(const struct db_process *p, const char *name, double *out);

/* Inserts a process in state running (the row exists before the program
 * starts). */
int db_process_insert(struct db *db, int64_t *out_id, const struct db_process *p);
/* Stores what happened: exit, timings, metrics, lines, captured output;
 * state becomes done. */
int db_process_finish(struct db *db, const struct db_process *p);
/* Stores a process that ran elsewhere and is done, whole and at once: its
 * row with its end and its validity (p->valid, p->invalid_reason), its
 * metrics, lines and captured output; p->id is not read. The row is the
 * one db_process_insert, db_process_finish and db_comparison_finish leave
 * between them. *out_id is the new row's id. */
int db_process_store(struct db *db, int64_t *out_id, const struct db_process *p);
/* Loads the captured stdout and stderr of the process at seq into out, a
 * process the caller loaded already: only out, out_len, err and err_len
 * are set, and only on success (the rest of *out is kept, so it is not
 * zeroed on entry). */
int db_process_output_load(struct db *db, struct db_process *out,
			   int64_t comparison_id, int seq);

/* ---- comparisons, pair_gains, comparison_notes (db/comparisons.c) ----
 * A comparison's settings and artifacts, its stored summary and the
 * derived rows, and every read of comparisons: whole, listed, filtered,
 * pooled into cells, as a timeline, by commit and by job. The hub's reads
 * are bounded by the max their caller passes, and each filter they offer is
 * served by an index (schema version 3). Arrays returned through **out are
 * the caller's, released element by element with the matching _release
 * and then freed. */

struct db_arm_stats {
	bool set;
	double median, min, max, spread;
};

/* One stage of pairs-median/2 or /2.1: the pairs judged so far and what
 * each test said of them (docs/rule.md, "Stages"). p values are NAN where a
 * test did not apply. */
struct db_stage {
	int pairs;               /* pairs judged at this stage, from pair 1 */
	char test[16];           /* "sign", "calibrated" (/2); "sign", "sign+calibrated" (/2.1) */
	int calibration_gains;   /* A/A gains the calibrated test compared with; 0 for sign */
	double alpha;            /* this stage's share of the false verdict bound */
	double p_faster, p_slower; /* one-sided p values of a change either way */
	double p_below, p_above; /* of the change being under +min_effect, over -min_effect */
	/* /2.1 alone (NAN otherwise): p_faster .. p_above above are the sign
	 * test's, these the calibrated test's (NAN where it did not run), and
	 * the scale gate's p value and the ratio of the spreads it compared
	 * (NAN without a calibration). */
	double cal_p_faster, cal_p_slower, cal_p_below, cal_p_above;
	double gate_p, spread_ratio;
	/* /2.2 alone (NAN otherwise): the load gate's p value and how many of
	 * the stage's processes ran under more CPU pressure than all but the
	 * largest of the calibration's (NAN where it did not run). */
	double load_p, load_above;
	char verdict[16];        /* this stage's verdict; "unresolved" lets the next run */
};

/* The A/A comparison whose pair gains calibrate a comparison: its metric and
 * its gains in pair order (NAN where undefined), and the load of each of its
 * counted processes in execution order (db_process_load, NAN where none;
 * pairs-median/2.2's load gate). */
struct db_calibration {
	int64_t comparison_id;
	char *metric;
	double *gains;
	size_t ngains;
	double *loads;
	size_t nloads;
};
void db_calibration_release(struct db_calibration *c);

/* The figures the rule derives; stored with the comparison, recomputed by
 * `perfd verify`. */
struct db_summary {
	char *metric;            /* the metric the figures use; NULL when none could be chosen */
	char verdict[16];        /* faster, slower, unchanged, unresolved, invalid */
	bool has_gain;
	double gain_median, gain_min, gain_max;
	struct db_arm_stats old, new;
	double *pair_gains;      /* npair_gains entries, pair order; NAN when undefined */
	size_t npair_gains;
	bool digests_equal;
	char **flags;
	size_t nflags;
	char **reasons;
	size_t nreasons;
	/* pairs-median/2: the pairs judged and each stage's judgement; more is
	 * true while the last stage is unresolved and max_pairs allows another
	 * (not stored: the scheduler's cue). */
	int pairs_run;
	struct db_stage *stages;
	size_t nstages;
	bool more;
	/* Per-process validity, parallel to the comparison's processes. */
	bool *process_valid;
	char **process_reason;
	size_t nprocesses;
};
void db_summary_release(struct db_summary *s);

struct db_comparison {
	int64_t id;
	char created_at[32];
	char finished_at[32];
	enum db_state state;
	char *rule;
	char *case_name;
	char *metric_requested;  /* NULL: chosen by the rule's default */
	char *metric;            /* the metric the stored summary used */
	char *host;
	char *fingerprint;       /* environment fingerprint, NULL until probed */
	int pairs;
	int warmup;
	double timeout_s;
	double min_effect;
	double noise;
	char *args_json;         /* argv and environment of each arm, JSON text */
	bool aa;                 /* kind 'aa': one build against itself */
	bool higher_better;      /* better = higher: a larger metric is faster */
	int max_pairs;           /* the stages' limit; pairs for a version 1 row */
	/* The A/A comparisons that calibrate it, fixed when it starts, with
	 * their gains as stored (loaded alongside). */
	struct db_calibration *calibration;
	size_t ncalibration;
	char *old_manifest;      /* sha256 of each arm's manifest; NULL when none */
	char *new_manifest;
	struct db_artifact old, new;
	int64_t job_id;          /* the agent's job, base and head builds; 0 for perfd pair */
	int64_t base_build;
	int64_t head_build;
	char *job_head;          /* the job's head, commit and base, when job_id */
	char job_commit[41];
	char job_base[41];
	bool has_summary;
	struct db_summary summary;
	struct db_process *processes; /* execution order */
	size_t nprocesses;
	char *abandoned_reason;  /* why it was abandoned, NULL when not said */
	double time_budget_s;    /* the budget that set max_pairs; 0: none did */
};
void db_comparison_release(struct db_comparison *c);

/* Inserts the comparison (state running) with its artifacts' ids already
 * in c->old.id and c->new.id. */
int db_comparison_insert(struct db *db, int64_t *out_id, const struct db_comparison *c);
/* Loads a comparison, its artifacts, its processes (without captured
 * output) and its stored summary. */
int db_comparison_load(struct db *db, struct db_comparison *out, int64_t id);
/* Fills c->summary's per-process validity and reasons (c->summary is the
 * caller's, those lists unset) from c->processes, parallel to them, as
 * db_comparison_load leaves them. */
void db_summary_validity_fill(struct db_comparison *c);
/* Stores the derived summary (with the metric it chose) and each process's
 * validity, and sets the comparison's state, in one transaction. */
int db_comparison_finish(struct db *db, int64_t id, enum db_state state,
			 const struct db_summary *s, const struct db_process *procs,
			 size_t nprocs);
/* A comparison left running by a perfd that is gone (owner_is_gone), and
 * the pid that perfd had (0 when the row names none). */
struct db_orphan {
	int64_t id;
	long pid;
};
/* The comparisons left running by a perfd that is gone, in id order; with
 * unowned also those that name no owner and were not ingested from
 * another host (written before schema version 11). *out is the caller's. */
int db_comparison_orphans(struct db *db, struct db_orphan **out, size_t *out_n, bool unowned);
/* Records that a time budget of budget_s set running comparison id's
 * max_pairs (stored with it by db_comparison_insert). */
int db_comparison_time_budget_set(struct db *db, int64_t id, double budget_s);
/* The mean wall time in seconds of the pair processes (not warm-ups) of
 * the n comparisons ids that ran to their end, into *out; 0 when none has
 * one. */
int db_comparisons_process_mean_s(struct db *db, double *out, const int64_t *ids, size_t n);
/* Records why a running comparison is being abandoned (shown by the rule
 * among its reasons); -EALREADY when it is no longer running. */
int db_comparison_abandoned_reason_set(struct db *db, int64_t id, const char *reason);
/* Stores a comparison that ran elsewhere and is done, with its summary s,
 * in one insert: the row db_comparison_insert and db_comparison_finish
 * leave between them, but with c's finished_at and job_id; with its
 * summary's stages, notes and pair gains, and no process. Artifacts' ids
 * as for db_comparison_insert. *out_id is the new row's id. */
int db_comparison_store(struct db *db, int64_t *out_id, const struct db_comparison *c,
			const struct db_summary *s);

/* The calibration a new comparison of host and case starts with: the
 * newest done A/A comparisons of that host, case, direction and fingerprint
 * (NULL matches only NULL) judged by rule whose verdict is not invalid,
 * taken whole, newest first, while their pairs add up to at most max_gains;
 * *out (the caller's, released element by element) holds them oldest first
 * with comparison_id set and nothing loaded. */
int db_calibration_select(struct db *db, struct db_calibration **out, size_t *out_n,
			  const char *rule, const char *host, const char *case_name,
			  bool higher_better, const char *fingerprint, size_t max_gains);
/* Loads the metric and the stored pair gains (in pair order, NAN where
 * undefined) of each of the n entries of cal, whose comparison_id is set,
 * as db_calibration_select leaves them: what the entries held is replaced.
 * -ENOENT when an id names no comparison. On failure the entries may be
 * partly loaded; db_calibration_release frees each either way. */
int db_calibration_load(struct db *db, struct db_calibration *cal, size_t n);

/* ---- the A/A comparisons per host and case (db/calibration.c) ---- */

/* The done A/A comparisons of one host and case, for the hub: the newest
 * max_aa of them counted by verdict, and the newest one that is not
 * invalid, by whose rule, fingerprint and direction the host and case's
 * current calibration is chosen (db_calibration_select), and whose stages
 * and min_effect say what that calibration can see (runner_mde). */
struct db_calibration_info {
	char host[64];
	char case_name[64];
	int64_t total;           /* done A/As counted, invalid ones included */
	int64_t faster, slower, unchanged, unresolved, invalid;
	char newest_at[32];      /* created_at of the newest counted */
	int64_t newest_id;       /* the newest not invalid; 0 (and the rest NULL) when none */
	char *rule;
	char *fingerprint;       /* NULL when it was stored without one */
	bool higher_better;
	int pairs, max_pairs;    /* the newest's stages and min_effect: its case's */
	double min_effect;
};
void db_calibration_info_release(struct db_calibration_info *c);
/* Per host and case (host, case_name: NULL for any) that has a done A/A
 * comparison, by host and case: at most max of them, each counting its
 * newest max_aa. *out is the caller's (release each, then free). */
int db_calibration_infos(struct db *db, struct db_calibration_info **out, size_t *out_n,
			 const char *host, const char *case_name, size_t max, size_t max_aa);

struct db_comparison_row {
	int64_t id;
	char created_at[32];
	enum db_state state;
	char host[64];
	char case_name[64];
	char metric[64];
	char verdict[16];
	bool has_gain;
	double gain_median;
	char old_sha256[65];
	char new_sha256[65];
	char old_manifest[65];   /* "" when none (a row stored before manifests) */
	char new_manifest[65];
	bool aa;                 /* kind 'aa' */
};
/* Newest first; returns the count filled (at most max). */
int db_comparison_list(struct db *db, struct db_comparison_row *out, size_t max,
		       int64_t before_id);
/* All comparison ids in ascending order; *out is the caller's. */
int db_comparison_ids(struct db *db, int64_t **out, size_t *out_n);
/* Ids of the comparisons in a state, ascending; *out is the caller's. */
int db_comparison_ids_in_state(struct db *db, int64_t **out, size_t *out_n, enum db_state state);
/* The comparison of a job's case: the newest one, its state in *out_state;
 * -ENOENT when there is none. */
int db_job_comparison(struct db *db, int64_t *out_id, enum db_state *out_state,
		      int64_t job_id, const char *case_name);

/* The comparisons that describe commit: per job whose commit is commit and
 * per host and case, the newest done one; ordered by host, case, old and new
 * manifest (none first), old and new sha256, then id, so that the
 * replications of one cell are adjacent. Fills at most max ids of out and
 * returns the count. */
int db_commit_comparison_ids(struct db *db, int64_t *out, size_t max, const char *commit);

/* NULL or 0 fields do not filter. commit is a lower-case hex prefix of the
 * job's head commit (4 to 40 digits). */
struct db_comparison_filter {
	const char *host;
	const char *case_name;
	const char *commit;
	const char *verdict;
	int64_t before_id;
};

struct db_comparison_entry {
	struct db_comparison_row row;
	int64_t job_id;          /* 0 for perfd pair */
	char head[256];          /* the job's head and commit; "" without a job */
	char commit[DB_OID_HEX];
	/* Who made it: "job" (an agent's job), "calibration" (an agent's A/A of
	 * one build against itself, outside any job) or "pair" (perfd pair, by
	 * hand: neither job nor build). */
	char made_by[12];
};
/* Comparisons matching f, newest first; fills at most max and returns the
 * count. */
int db_comparison_find(struct db *db, struct db_comparison_entry *out, size_t max,
		       const struct db_comparison_filter *f);
/* Comparisons of host and case (NULL: any), ordered by host, case, old and
 * new manifest (none first), old and new sha256, then id: the rows of the
 * cells that pool them, a cell being the comparisons alike in all six.
 * Fills at most max and returns the count. */
int db_comparison_cells(struct db *db, struct db_comparison_entry *out, size_t max,
			const char *host, const char *case_name);

struct db_timeline_value {
	int seq;
	char arm[4];
	int pair;                /* 0 for a warm-up */
	bool has_value;          /* false when the process lacks the metric */
	double value;
	bool valid;
};

struct db_timeline_point {
	int64_t id;
	char created_at[32];
	int64_t job_id;
	char head[256];
	char commit[DB_OID_HEX];
	char metric[64];         /* "" before the summary */
	char verdict[16];
	bool has_gain;
	double gain_median;
	double old_median;       /* NAN when none */
	double new_median;
	char *fingerprint;       /* NULL when none */
	struct db_timeline_value *values;  /* execution order */
	size_t nvalues;
};
void db_timeline_point_release(struct db_timeline_point *p);
/* The newest max comparisons of host and case that are not A/As (an idle
 * host's A/As would crowd out its changes; db_calibration_infos shows them),
 * oldest first, each with every process's value of its metric. */
int db_timeline(struct db *db, struct db_timeline_point **out, size_t *out_n,
		const char *host, const char *case_name, size_t max);

/* One point of a branch's series (docs/history.md, "Change points"): a done
 * comparison of a head job of the branch, with its head arm's median. */
struct db_series_point {
	int64_t comparison_id;
	int64_t job_id;
	char commit[DB_OID_HEX];
	char metric[64];
	double value;            /* the head arm's median of the metric */
	/* The first 12 hex digits of the sha256 of the stored fingerprint, as
	 * the timeline's fingerprint_hash; "" when none. */
	char fingerprint_hash[13];
};
/* The newest max points of host, case and branch, in branch order (the
 * jobs' creation order, then the comparisons'): the done comparisons, not
 * invalid, with a head median, of the jobs of kind head whose head is
 * branch; never A/As, nor the history's span, confirm and bisect jobs.
 * Fills out (max entries) and returns the count. */
int db_series_load(struct db *db, struct db_series_point *out, size_t max, const char *host,
		   const char *case_name, const char *branch);
/* Why a series is empty: whether host has a comparison (host), one of
 * case_name (case_name), and whether branch has a head job of host's or of
 * this database's own agent (branch). Fills *out (zeroed first). */
struct db_series_known {
	bool host;
	bool case_name;
	bool branch;
};
int db_series_known(struct db *db, struct db_series_known *out, const char *host,
		    const char *case_name, const char *branch);

/* ---- hosts (db/hosts.c) ---- */

/* A host's standing: a GPU fault seen while a process ran quarantines the
 * host until someone clears it. */
struct db_host {
	char name[64];
	bool quarantined;
	char *fault;             /* the kernel-log line */
	char since[32];
	int64_t comparison_id;
	int seq;
	char cleared_at[32];
};
void db_host_release(struct db_host *h);
int db_host_quarantine(struct db *db, const char *name, const char *fault,
		       int64_t comparison_id, int seq);
/* -ENOENT when the host has no row. */
int db_host_load(struct db *db, struct db_host *out, const char *name);
/* Returns 1 when a quarantine was lifted, 0 when there was none. */
int db_host_clear(struct db *db, const char *name);
/* Every host with a row, by name; *out is the caller's (release each). */
int db_host_list(struct db *db, struct db_host **out, size_t *out_n);

/* ---- holds (db/holds.c) ----
 * A commit held on a host (docs/hosts.md, "When the machine goes down"):
 * the machine went down while a step of it ran (a row left running by an
 * earlier boot, on a host with a device), a process of it outlived
 * SIGKILL, a fault line came while it ran, or (before its first run) its
 * change touches the host profile's [gate] paths. No job, retry, bisection step or A/A runs it on that host until
 * a person releases it (db_hold_lift). */
#define DB_HOLDS_MAX 1000              /* holds listed at most */
enum db_hold_why { DB_HOLD_WENT_DOWN, DB_HOLD_UNKILLABLE, DB_HOLD_FAULT, DB_HOLD_GATE };
enum db_hold_step { DB_HOLD_BUILD, DB_HOLD_RUNNER, DB_HOLD_CASE, DB_HOLD_JOB };
struct db_hold {
	int64_t id;                    /* 0 until stored */
	char host[64];
	enum db_hold_why why;
	enum db_hold_step step;
	char name[64];                 /* the runner's or case's; "" for a build or job */
	char commit[DB_OID_HEX];       /* "" when no build names one (perfd pair) */
	char tree[DB_OID_HEX];
	char recipe[65];
	int64_t job_id, build_id, result_id, comparison_id; /* 0: none */
	int seq;                       /* the last process started; 0: none */
	char arm[4];                   /* its arm; "" */
	char boot[40];                 /* the boot it ran in; "" unknown */
	char started_at[32];           /* the step's start */
	char last_at[32];              /* the latest time its rows name */
	char *detail;                  /* the process that outlived SIGKILL, its state; the
	                                * path a gated change touches */
	char *fault;                   /* the fault line (of the previous boot's log), or NULL */
	char *log_read;                /* what was read of that log, or NULL */
	char created_at[32];
	char released_at[32];          /* "" while held */
	char *released_by;
};
void db_hold_release(struct db_hold *h);
/* "build", "runner", "case" or "job". */
const char *db_hold_step_name(enum db_hold_step step);
/* The words of each enum, in its order, NULL-terminated: "went-down",
 * "unkillable", "fault", "gate"; "build", "runner", "case", "job". */
extern const char *const db_hold_why_words[];
extern const char *const db_hold_step_words[];
/* The steps of host that a perfd of an earlier boot left running (builds,
 * runner chunks, comparisons; at most 64), as holds not yet stored: why
 * went-down, the boot, the build (of the last process's arm, for a
 * comparison) with its commit, tree and recipe, the job, the last process
 * and the times. *out is the caller's (release each). */
int db_hold_suspects(struct db *db, struct db_hold **out, size_t *out_n, const char *host);
/* Stores h (where h names no commit: its job's of the arm that ran, else
 * build_id's build's; the tree and recipe the build's); its id in *out_id, the one stored before when that step
 * (why, step, build, result, comparison, process) is held already. */
int db_hold_add(struct db *db, int64_t *out_id, const struct db_hold *h);
/* -ENOENT (detail set) when there is none. */
int db_hold_load(struct db *db, struct db_hold *out, int64_t id);
/* The holds of host (NULL: every host), newest first, those not released
 * alone when held_only; at most DB_HOLDS_MAX. */
int db_hold_list(struct db *db, struct db_hold **out, size_t *out_n, const char *host,
		 bool held_only);
/* The oldest hold in force on host of commit, or of tree with recipe:
 * 0, or -ENOENT (no detail) when that commit is not held. */
int db_hold_find(struct db *db, struct db_hold *out, const char *host, const char *commit,
		 const char *tree, const char *recipe);
/* The newest hold of host, of commit and why, whether in force or
 * released: 0, or -ENOENT (no detail) when there has been none. */
int db_hold_last(struct db *db, struct db_hold *out, const char *host, const char *commit,
		 enum db_hold_why why);
/* Releases hold id of host (0: every hold of host), by whom; returns how
 * many were released. */
int db_hold_lift(struct db *db, const char *host, int64_t id, const char *by);
/* Marks job as waiting on hold_id (0: on none). db_job_next passes a job
 * whose hold is in force. */
int db_job_hold(struct db *db, int64_t job_id, int64_t hold_id);

/* ---- the holds hosts said, at the hub (db/hub-holds.c) ---- */
struct db_hub_hold {
	char host[64];
	int64_t origin_id;             /* the hold's id on its host */
	enum db_hold_why why;
	enum db_hold_step step;
	char commit[DB_OID_HEX];       /* "" when none */
	char tree[DB_OID_HEX];
	char since[32];                /* when the host held it, by its clock */
	char *text;                    /* what the commit did, as the host says it */
	char first_seen[32];           /* when the hub first heard of it */
	bool in_force;                 /* the host's newest heartbeat lists it */
	char greenlit_by[65];          /* the maintainer who released it here; "" */
	char greenlit_at[32];
	int greenlit_pr;
	char *kind;                    /* its host's kind of device; NULL: not said */
};
void db_hub_hold_release(struct db_hub_hold *h);
/* The holds host's newest heartbeat lists (origin_id, why, step, commit,
 * tree, since and text of each): those not listed any more are kept, not
 * in force. *out_changed: the set in force is not what it was. */
int db_hub_holds_set(struct db *db, const char *host, const struct db_hub_hold *hs, size_t n,
		     bool *out_changed);
/* The holds in force, of host (NULL: any) and of commit or base (commit
 * NULL: any), newest first, at most DB_HOLDS_MAX; *out is the caller's
 * (release each). */
int db_hub_holds_list(struct db *db, struct db_hub_hold **out, size_t *out_n, const char *host,
		      const char *commit, const char *base);
/* A maintainer's green light for host's hold origin_id, from comment_id on
 * pull request pr: 1 recorded, 0 when the hold is not in force or has one
 * already. */
int db_hub_hold_greenlight(struct db *db, const char *host, int64_t origin_id, const char *by,
			   int pr, int64_t comment_id);

/* A host as the hub shows it: every name seen in comparisons, builds, jobs
 * of a host (jobs.host), heartbeats (host_status) or the hosts table. */
struct db_host_info {
	char name[64];
	/* The newest one stored for the host, by the host's clock: of its
	 * comparisons, builds and newest heartbeat; NULL when none. */
	char *fingerprint;
	char heartbeat[32];      /* time of its newest comparison or build; "" when none */
	/* Its quarantine row's, or, with none in force, its newest
	 * heartbeat's (fault alone: since is then ""). */
	bool quarantined;
	char *fault;
	char since[32];
	/* Its newest heartbeat at a hub (host_status), when has_status. */
	bool has_status;
	char last_push[32];      /* when the hub received it */
	char state[16];          /* idle, polling, building, measuring, calibrating */
	int64_t backlog;         /* the records the hub had not answered for */
	char *sandbox;           /* its sandbox, or "none: why"; NULL: not said */
};
void db_host_info_release(struct db_host_info *h);
/* At most max hosts, by name; *out is the caller's (release each, then
 * free). */
int db_host_infos(struct db *db, struct db_host_info **out, size_t *out_n, size_t max);

/* A host's newest heartbeat at the hub (table host_status): what its agent
 * said it was doing, and when the hub heard it. */
struct db_host_status {
	char host[64];
	int64_t seq;
	char sent_at[32];        /* the agent's clock */
	char received_at[32];    /* the hub's */
	char state[16];          /* idle, polling, building, measuring, calibrating */
	int64_t job_origin;      /* the job it works on, its id on the host; 0: none */
	int64_t backlog;
	char *fingerprint;
	bool quarantined;
	char *fault;
	char *sandbox;           /* as the heartbeat says it (wire.h); NULL: not said */
	char *kind;              /* the kind of device it is for; NULL: not said */
};
void db_host_status_release(struct db_host_status *h);
/* Keeps h unless the host's stored heartbeat has a seq as new or newer;
 * *out_stored says which. received_at is set to now. */
int db_host_status_put(struct db *db, const struct db_host_status *h, bool *out_stored);
/* -ENOENT when the host never sent one. */
int db_host_status_get(struct db *db, struct db_host_status *out, const char *host);

/* ---- heads (db/heads.c) ----
 * The branches and pull heads the agent watches. */

/* The commit a head was last seen at. -ENOENT for a head never seen. */
int db_head_get(struct db *db, char out_oid[DB_OID_HEX], const char *name);
int db_head_set(struct db *db, const char *name, const char *oid, bool is_pull);
/* Forgets every head not among names (deleted upstream); their jobs stay. */
int db_heads_keep_only(struct db *db, const char *const *names, size_t n);

/* A watched head as the agent last saw it, with its newest job. */
struct db_head_info {
	char name[256];
	char oid[DB_OID_HEX];
	bool is_pull;
	char seen_at[32];
	int64_t job_id;          /* 0 when no job has its commit */
	char job_state[12];
	char *job_detail;
	char *subject;
};
void db_head_info_release(struct db_head_info *h);
/* The heads the agent watches now, by name; at most max; *out is the
 * caller's (release each, then free). */
int db_head_infos(struct db *db, struct db_head_info **out, size_t *out_n, size_t max);

/* ---- jobs (db/jobs.c) ----
 * One per head commit the agent has seen, with its base. */

enum db_job_state { DB_JOB_QUEUED, DB_JOB_RUNNING, DB_JOB_DONE, DB_JOB_FAILED };
const char *db_job_state_name(enum db_job_state s);

/* What a job compares (docs/history.md): a watched head at a new commit
 * against its base; a branch's head against an older reference (a span);
 * an alert's comparison again (confirm); one end of a bisection step. */
enum db_job_kind { DB_JOB_HEAD, DB_JOB_SPAN, DB_JOB_CONFIRM, DB_JOB_BISECT };
const char *db_job_kind_name(enum db_job_kind k);
/* The kind named s; -EINVAL for no kind. */
int db_job_kind_parse(enum db_job_kind *out, const char *s);

struct db_job {
	int64_t id;
	char host[64];           /* "" for this database's own agent's */
	enum db_job_kind kind;
	char case_name[64];      /* a history job's one case; "": every case */
	int64_t alert_id;        /* the alert a confirm or bisect job serves; 0: none */
	char head[256];
	char commit[DB_OID_HEX];
	char base[DB_OID_HEX];   /* "" when the commit has no base */
	char *subject;
	enum db_job_state state;
	char *detail;
	char created_at[32];
	char started_at[32];     /* "" when not yet */
	char finished_at[32];
	int64_t seq;             /* the number of its latest change, on its host */
	int64_t origin_id;       /* its id on its host, for a hub's; else 0 */
	/* A hub's done job: the comparisons its host made of it, one per
	 * case, as its record said; -1 when it did not say (and always for
	 * this database's own jobs, whose comparisons are all here). */
	int64_t comparisons;
};
void db_job_release(struct db_job *j);
/* Queues a head's job for head at commit unless one exists; returns 1 when
 * queued, 0 when it was there already, with its id in *out_id either way. */
int db_job_add(struct db *db, int64_t *out_id, const char *head, const char *commit,
	       const char *base, const char *subject);
/* Queues job j (its kind, head, commit, base, subject, case_name and
 * alert_id) unless this agent has a job of that head at that commit;
 * returns 1 when queued, 0 when it was there, with its id in *out_id
 * either way. */
int db_job_queue(struct db *db, int64_t *out_id, const struct db_job *j);
/* This agent's head and span jobs whose verdicts the history has not read
 * (judged = 0), oldest first; *out is the caller's (release each, free). */
int db_jobs_unjudged(struct db *db, struct db_job **out, size_t *out_n, size_t max);
int db_job_judged(struct db *db, int64_t id);
/* This agent's newest job of head (any state); -ENOENT when none. */
int db_job_newest(struct db *db, struct db_job *out, const char *head);
/* The oldest job that is queued or was running when the agent stopped;
 * -ENOENT when there is none. */
int db_job_next(struct db *db, struct db_job *out);
int db_job_set_state(struct db *db, int64_t id, enum db_job_state state, const char *detail);
/* Jobs by state, newest first, at most max; returns the count (release
 * each). On failure none is left filled. */
int db_job_list(struct db *db, struct db_job *out, size_t max);
/* The jobs whose head is at commit, oldest first; fills at most max and
 * returns the count (release each). */
int db_commit_jobs(struct db *db, struct db_job *out, size_t max, const char *commit);
/* This agent's job of head at commit; -ENOENT when none. */
int db_job_get(struct db *db, struct db_job *out, const char *head, const char *commit);
/* One job by id, of any host; -ENOENT when none. */
int db_job_load(struct db *db, struct db_job *out, int64_t id);

/* The agent's push of its jobs (docs/hub.md): every change of one of its
 * jobs takes the next sequence number (seq); a job whose newest seq the hub
 * has not answered for is pending. Fills *out (the caller's: release each,
 * then free) with at most max, in seq order. */
int db_jobs_unpushed(struct db *db, struct db_job **out, size_t *out_n, size_t max);
/* Records the hub's answer to job id's update seq. */
int db_job_pushed(struct db *db, int64_t id, int64_t seq, int status, const char *message);

/* The hub's ingest of a host's job update j (j->host, origin_id, seq and
 * the record's sha256): stored (*out_stored) when newer than the one held,
 * or when new; an update not newer is not applied (a replay, or one
 * overtaken). -EEXIST, with the reason, when the same host, id and seq came
 * with another sha256, or when the head, commit or base differs from the
 * stored job's (a job's identity never changes). A new job links the host's
 * comparisons ingested before it. *out_id is the hub's id of the job. */
int db_job_ingest(struct db *db, const struct db_job *j, const char *sha256, int64_t *out_id,
		  bool *out_stored);
/* The hub's id of a host's job, or -ENOENT. */
int db_job_origin(struct db *db, int64_t *out_id, const char *host, int64_t origin_id);

struct db_job_comparison {
	int64_t id;
	char case_name[64];
	char verdict[16];        /* "" before the summary */
	bool has_gain;
	double gain_median;
	bool aa;                 /* kind 'aa': the job's builds made the same artifacts */
};

struct db_job_info {
	int64_t id;
	char head[256];
	char commit[DB_OID_HEX];
	char base[DB_OID_HEX];
	char *subject;
	char state[16];
	char *detail;
	char created_at[32];
	char started_at[32];     /* "" when not yet */
	char finished_at[32];
	struct db_job_comparison *comparisons;  /* by id */
	size_t ncomparisons;
};
void db_job_info_release(struct db_job_info *j);
/* The comparisons of job job_id, by id; *out is the caller's to free. */
int db_job_comparisons(struct db *db, struct db_job_comparison **out, size_t *out_n,
		       int64_t job_id);
/* Jobs with ids below before_id (0: no bound), newest first, each with its
 * comparisons; fills at most max of out and returns the count. */
int db_job_infos(struct db *db, struct db_job_info *out, size_t max, int64_t before_id);

/* ---- alerts, bisect_steps, alert_findings (db/alerts.c) ----
 * A range of a branch found slower or faster on one host and case
 * (docs/history.md): confirmed by a comparison repeated, then bisected. */

enum db_alert_state { DB_ALERT_CONFIRMING, DB_ALERT_RAISED, DB_ALERT_DISMISSED };
enum db_alert_bisect { DB_BISECT_NONE, DB_BISECT_RUNNING, DB_BISECT_DONE, DB_BISECT_BUDGET };
enum db_alert_triage { DB_TRIAGE_NEW, DB_TRIAGE_ACKNOWLEDGED, DB_TRIAGE_FIXED,
		       DB_TRIAGE_FALSE_ALARM };
const char *db_alert_state_name(enum db_alert_state s);
const char *db_alert_bisect_name(enum db_alert_bisect b);
const char *db_alert_triage_name(enum db_alert_triage t);
int db_alert_triage_parse(enum db_alert_triage *out, const char *s);

#define DB_BISECT_STEPS_MAX 1000     /* steps and findings of one alert, at most */

struct db_alert {
	int64_t id;
	char host[64];               /* "" for this database's own agent's */
	char branch[256];
	char case_name[64];
	bool found_by_span;          /* a span comparison found it; else a head's */
	char lo[DB_OID_HEX];         /* the range (lo, hi] of the branch */
	char hi[DB_OID_HEX];
	int commits;                 /* first-parent commits in the range */
	bool slower;                 /* else faster */
	double gain;                 /* the finding comparison's */
	int64_t comparison_id;       /* the finding comparison */
	int64_t confirm_id;          /* the repeated one; 0 until done */
	enum db_alert_state state;
	enum db_alert_bisect bisect;
	char *detail;                /* what the history says of it, or NULL */
	enum db_alert_triage triage;
	char *triage_by;
	char triage_at[32];
	int64_t fixed_by;
	char created_at[32];
	char updated_at[32];
	int64_t seq;                 /* the update that set it: this agent's number of
				      * its newest change, or the host's at the hub */
	int64_t origin_id;           /* at the hub, its id on its host; else 0 */
};
void db_alert_release(struct db_alert *a);
/* Stores alert a (state confirming) unless the same range of the same
 * host, branch and case was found the same way before: 1 when stored, 0
 * when there, with its id in *out_id either way. */
int db_alert_add(struct db *db, int64_t *out_id, const struct db_alert *a);
int db_alert_load(struct db *db, struct db_alert *out, int64_t id);
/* The alert of key's host, branch, case, way found and range, into *out
 * (the caller's to release); -ENOENT when there is none. */
int db_alert_lookup(struct db *db, struct db_alert *out, const struct db_alert *key);
/* Alerts by id, at most max; with open_only, this agent's that are being
 * confirmed or bisected. *out is the caller's (release each, free). */
int db_alerts_list(struct db *db, struct db_alert **out, size_t *out_n, bool open_only,
		   size_t max);
/* Ends a confirming alert: raised when the repeated comparison confirm_id
 * agrees, else dismissed; with the bisection state that follows and why. */
int db_alert_confirmed(struct db *db, int64_t id, bool agrees, int64_t confirm_id,
		       enum db_alert_bisect bisect, const char *detail);

/* One step of a bisection: the midpoint of (lo, hi] compared against both
 * ends, by two jobs (lo against mid, mid against hi). outcome: "" while
 * they run, then which half carries the change (lower, upper, both,
 * neither), or skipped (the midpoint did not build or run). */
struct db_bisect_step {
	int64_t alert_id;
	int step;                    /* 1, 2, ... in the order queued */
	char lo[DB_OID_HEX], hi[DB_OID_HEX], mid[DB_OID_HEX];
	int64_t lo_job, hi_job;
	char outcome[12];
	char *detail;
};
void db_bisect_step_release(struct db_bisect_step *s);
int db_bisect_steps(struct db *db, struct db_bisect_step **out, size_t *out_n, int64_t alert_id);
int db_bisect_step_add(struct db *db, const struct db_bisect_step *s);
int db_bisect_step_set(struct db *db, int64_t alert_id, int step, const char *outcome,
		       const char *detail);
/* Seconds the bisection's jobs of alert_id have run (a running one until now). */
int db_bisect_seconds(struct db *db, double *out, int64_t alert_id);

/* What carries an alert's change: one commit (lo its first parent, or the
 * base it was compared against) or a range none of whose commits alone was
 * found to, with the share of the change the comparison that found it
 * measured. */
struct db_alert_finding {
	bool commit;
	char lo[DB_OID_HEX], hi[DB_OID_HEX];
	int commits;
	bool has_gain;
	double gain;
	int64_t comparison_id;       /* 0: none */
	char *note;
};
void db_alert_finding_release(struct db_alert_finding *f);
/* Replaces alert_id's findings with f and sets its bisection state (and
 * detail, when not NULL), in one transaction. */
int db_alert_finish(struct db *db, int64_t alert_id, enum db_alert_bisect bisect,
		    const struct db_alert_finding *f, size_t n, const char *detail);
int db_alert_findings(struct db *db, struct db_alert_finding **out, size_t *out_n,
		      int64_t alert_id);

/* This agent's alerts whose newest change the hub has not answered for,
 * in seq order, at most max; *out is the caller's (release each, free). */
int db_alerts_unpushed(struct db *db, struct db_alert **out, size_t *out_n, size_t max);
/* The hub answered status for update seq of alert id (message: a refusal's). */
int db_alert_pushed(struct db *db, int64_t id, int64_t seq, int status, const char *message);
/* Stores a host's alert a (host, origin_id, seq; comparison ids the hub's,
 * 0 where the hub has none) with its findings, in one transaction: a new
 * one (*out_stored true), or a newer seq than held, which replaces all but
 * its triage (true); the seq held with the same sha256, or an older one,
 * stores nothing (false). -EEXIST, said in err_last(), for the seq held
 * with another sha256, or another branch, case, range or way found than
 * the held alert's. *out_id is the hub's id. */
int db_alert_ingest(struct db *db, const struct db_alert *a, const struct db_alert_finding *f,
		    size_t n, const char *sha256, int64_t *out_id, bool *out_stored);
/* Sets a raised alert's triage, by whom and now; fixed needs fixed_by, a
 * done comparison of the alert's host and case made after the alert's own,
 * whose verdict is the opposite direction (0 clears it for other states).
 * -ENOENT for no alert id; -EINVAL, naming what is wrong, for an alert
 * not raised or a fixed_by that is not such a comparison; nothing changes
 * then. */
int db_alert_triage_set(struct db *db, int64_t id, enum db_alert_triage t, const char *by,
			int64_t fixed_by);

/* What GET /api/v1/alerts selects; NULL or "" matches any. */
struct db_alert_filter {
	const char *host;
	const char *case_name;
	const char *state;
	const char *triage;
};
/* Alerts matching f, newest first, at most max, each with host named (an
 * agent's own by its comparison's host). */
int db_alerts_find(struct db *db, struct db_alert **out, size_t *out_n,
		   const struct db_alert_filter *f, size_t max);
/* One alert as db_alerts_find names it. */
int db_alert_get(struct db *db, struct db_alert *out, int64_t id);
/* Per host, of its raised alerts: how many, how many a person triaged
 * (any state but new), and how many of those were false alarms. */
struct db_alert_triage_count {
	char host[64];
	int64_t raised, triaged, false_alarms;
};
int db_alert_triage_counts(struct db *db, struct db_alert_triage_count **out, size_t *out_n,
			   size_t max);

/* ---- alert_issues, alert_culprits, alert_commands (db/alert-issues.c) ----
 * What the hub said of its alerts on the pull requests' host and read
 * there (docs/github.md, "Alerts on the forge"), per repository ("owner/
 * name"): each alert's one issue, one comment per culprit's pull request,
 * and the "/perfd triage" commands read from the issue. A row is written
 * after the host accepted what it records. */

#define DB_ALERT_COMMAND_TEXT_MAX 96  /* bytes of a command kept */

/* The issue of one alert. */
struct db_alert_issue {
	int64_t alert_id;
	int number;                  /* the issue's number; 0 until made */
	bool unsure;                 /* a create was sent whose outcome is unknown */
	char body_sha256[65];        /* of the title, body and state sent last; "" none */
	bool closed;                 /* the state sent last */
	int64_t comment_id;          /* the newest of its comments read; 0: none */
	char since[32];              /* that comment's time, for the next read; "" none */
	char read_at[32];            /* when its comments were last read; "" never */
};
/* alert_id's issue in repo; -ENOENT, with *out zeroed but for alert_id,
 * when there is none. */
int db_alert_issue_get(struct db *db, struct db_alert_issue *out, const char *repo,
		       int64_t alert_id);
int db_alert_issue_put(struct db *db, const char *repo, const struct db_alert_issue *is);
/* The ids of the raised alerts of branch that an issue is kept for: the
 * newest max, oldest first, of those the hub can check (each alert's
 * comparison stored, done, of its host, case and direction, with its job
 * and builds held, made from the alert's lo and hi: docs/hub.md, "What the hub speaks for").
 * *out is the caller's. */
int db_alert_issue_candidates(struct db *db, int64_t **out, size_t *out_n, const char *branch,
			      size_t max);
/* Whether finding f of alert a names what the hub can check: its
 * comparison (the hub's id) as the alerts' (above: of a's host, case and
 * direction), from f's lo to f's hi. 1 or 0, or the error. */
int db_alert_finding_is_checked(struct db *db, const struct db_alert *a,
				const struct db_alert_finding *f);
/* The issues of repo made whose comments are read: those whose alert's
 * triage is new or acknowledged, the ones read longest ago first, at most
 * max. *out is the caller's. */
int db_alert_issues_to_read(struct db *db, struct db_alert_issue **out, size_t *out_n,
			    const char *repo, size_t max);

/* A culprit commit of an alert and its pull request. */
struct db_alert_culprit {
	int64_t alert_id;
	char commit[DB_OID_HEX];
	int pr;                      /* the pull request it came from; 0: none */
	int64_t comment_id;          /* the hub's comment there; 0: not made; -1: the
				      * pull request was gone */
	bool unsure;                 /* a create was sent whose outcome is unknown */
};
/* alert_id's culprits asked about in repo, by commit; *out is the caller's. */
int db_alert_culprits(struct db *db, struct db_alert_culprit **out, size_t *out_n,
		      const char *repo, int64_t alert_id);
int db_alert_culprit_put(struct db *db, const char *repo, const struct db_alert_culprit *c);

enum db_command_outcome { DB_COMMAND_APPLIED, DB_COMMAND_REFUSED, DB_COMMAND_IGNORED,
			  DB_COMMAND_MALFORMED };
const char *db_command_outcome_name(enum db_command_outcome o);
/* A "/perfd triage" command read from an alert's issue. */
struct db_alert_command {
	int64_t alert_id;
	int64_t comment_id;
	char login[65];
	char command[DB_ALERT_COMMAND_TEXT_MAX + 1];  /* as understood, or as read (cut) */
	enum db_command_outcome outcome;
	char *detail;                /* why refused or not understood; NULL */
	char read_at[32];
};
void db_alert_command_release(struct db_alert_command *c);
/* Takes command c (its alert, comment, login, command, outcome) from
 * repo's issue of c->alert_id, in one transaction: with apply, triage t
 * (with fixed_by) is set as db_alert_triage_set sets it, by c->login, and
 * c->outcome becomes DB_COMMAND_APPLIED, or DB_COMMAND_REFUSED with why in
 * c->detail (replaced; release c) when db_alert_triage_set refuses it; the
 * command is recorded; and the issue's comments count as read up to
 * c->comment_id, whose time is since. A comment taken before changes
 * nothing (0, c->outcome left as given). A database error rolls all of it
 * back. */
int db_alert_command_take(struct db *db, const char *repo, struct db_alert_command *c,
			  bool apply, enum db_alert_triage t, int64_t fixed_by, const char *since);
/* The newest max commands of alert_id read in repo that were not ignored,
 * oldest first; *out is the caller's (release each, free). */
int db_alert_commands_recent(struct db *db, struct db_alert_command **out, size_t *out_n,
			     const char *repo, int64_t alert_id, size_t max);

/* ---- a failed job queued again (db/retry.c, docs/config.md) ---- */

/* Queues this agent's failed job id again: queued, its failure cleared, its
 * verdicts to be read again by the history, its next change pushed. With
 * fresh, the done and failed builds of the trees of its head commit and the
 * failed ones of its base are first set aside as stale (reason says why),
 * so that none is found in the cache. Returns how many builds were set
 * aside, -ENOENT for no such job of this agent, -EALREADY for a job that
 * has not failed (both with the detail), or the database's error. One
 * transaction. */
int db_job_retry(struct db *db, int64_t id, bool fresh, const char *reason);
/* This agent's failed head jobs of head (any commit), oldest first, at most
 * max; *out is the caller's. */
int db_jobs_failed_of_head(struct db *db, int64_t **out, size_t *out_n, const char *head,
			   size_t max);
/* This agent's failed head jobs at the commit their head is at now, whose
 * commit host built only with recipes other than recipe_hash (a build of it
 * with recipe_hash that is not abandoned or stale: none), oldest first, at
 * most max; *out is the caller's. */
int db_jobs_failed_recipe(struct db *db, int64_t **out, size_t *out_n, const char *host,
			  const char *recipe_hash, size_t max);

/* ---- builds, build_artifacts (db/builds.c) ---- */

enum db_build_state { DB_BUILD_RUNNING, DB_BUILD_DONE, DB_BUILD_FAILED, DB_BUILD_ABANDONED };
const char *db_build_state_name(enum db_build_state s);

struct db_build_artifact {
	char *name;              /* relative to the build directory */
	struct db_artifact artifact;
};

struct db_build {
	int64_t id;
	char host[64];
	char commit[DB_OID_HEX];
	char tree[DB_OID_HEX];
	char recipe_hash[65];
	enum db_build_state state;
	char *dir;
	char started_at[32];
	char finished_at[32];
	int exit_code;
	int signal;
	bool timed_out;
	double wall_ms;
	char *log;               /* bounded; log_bytes counts all of it */
	size_t log_len;
	int64_t log_bytes;
	char *toolchain;
	char *fingerprint;
	char *detail;            /* why it failed, in a sentence */
	struct db_build_artifact *artifacts;
	size_t nartifacts;
};
void db_build_release(struct db_build *b);
/* The newest build of this tree with this recipe on this host that is not
 * abandoned or stale (done, failed or running), with its artifacts; -ENOENT
 * when none. */
int db_build_find(struct db *db, struct db_build *out, const char *host, const char *tree,
		  const char *recipe_hash);
/* The newest done build on this host with this recipe that is not stale,
 * with its artifacts: what an idle agent calibrates with. -ENOENT when none. */
int db_build_latest(struct db *db, struct db_build *out, const char *host,
		    const char *recipe_hash);
int db_build_load(struct db *db, struct db_build *out, int64_t id);
/* The ids of this database's own builds (not a hub's copy of a host's) of
 * commit or base ("": none), oldest first, at most max; *out is the
 * caller's. */
int db_build_ids_of_commits(struct db *db, int64_t **out, size_t *out_n, const char *commit,
			    const char *base, size_t max);
/* Inserts the build in state running: before its checkout starts. */
int db_build_insert(struct db *db, int64_t *out_id, const struct db_build *b);
/* Stores the outcome: state, exit, log, toolchain and artifacts (whose
 * artifact.id must be set by db_artifact_put). */
int db_build_finish(struct db *db, const struct db_build *b);
int db_build_abandon(struct db *db, int64_t id);
/* Marks a build stale: its artifacts are no longer the files it hashed
 * (reason says which), so no comparison uses it again and its tree is built
 * anew. The build's own row, the evidence of what it made, is unchanged. */
int db_build_mark_stale(struct db *db, int64_t id, const char *reason);
/* Why a build is stale, into *out (the caller's); -ENOENT when it is not. */
int db_build_stale_reason(struct db *db, char **out, int64_t id);
/* The directories of builds no comparison will use again (abandoned or
 * stale), at most max, into *out (each and the array the caller's). */
int db_build_dead_dirs(struct db *db, char ***out, size_t *out_n, size_t max);
/* Counts of builds by state, for a summary. */
int db_build_count(struct db *db, enum db_build_state state);

/* Marks abandoned the builds and runner results left running by a perfd
 * that is gone (owner_is_gone), and with unowned those that name no owner
 * too (written before schema version 11: what the one agent of the
 * database left); returns how many rows. A build keeps why in its detail.
 * (Comparisons left so are finished by runner_orphans_abandon, which
 * abandons their running processes.) */
int db_abandon_running(struct db *db, bool unowned);

/* ---- manifests, manifest_files (db/manifests.c) ----
 * What one arm of a comparison ran, as a hash: an agent's build (commit,
 * tree, recipe hash and every artifact) or a perfd pair's program and the
 * files named for it. The hash is the sha256 of a canonical text
 * (docs/protocol.md, "Manifests"): the line "perfd-manifest/1", then the
 * lines "commit OID", "tree OID", "recipe HASH" (those set) and
 * "file NAME SIZE SHA256" (one per file; in NAME a backslash is written \\
 * and a line feed \n), sorted bytewise, each ending in a line feed. The
 * build id is not in it: the same bytes built twice are one manifest. */

struct db_manifest_file {
	char *name;              /* an artifact's name in its build; a file's base name */
	int64_t size;
	char sha256[65];
};

struct db_manifest {
	char hash[65];
	int64_t build_id;        /* the build it was first stored for; 0: none */
	char commit[DB_OID_HEX]; /* "" when not a build's */
	char tree[DB_OID_HEX];
	char recipe_hash[65];
	char created_at[32];     /* set when loaded */
	struct db_manifest_file *files;  /* by name when loaded */
	size_t nfiles;
};
void db_manifest_release(struct db_manifest *m);
/* Appends a file (name copied) to m; its hash is then out of date. */
void db_manifest_add(struct db_manifest *m, const char *name, int64_t size, const char *sha256);
/* The hash of m's canonical text into out ("" on failure): -EINVAL, with
 * the field named, for two files of one name, a file without a name or
 * whose sha256 is not 64 lower-case hex digits, a commit, tree or recipe
 * hash that is not hex of its length, or a manifest with nothing in it;
 * -EIO when sha256 cannot be computed. */
int db_manifest_hash(char out[65], const struct db_manifest *m);
/* The manifest of build b, hash computed: its commit, tree, recipe hash and
 * artifacts (by their names in the build). *out is the caller's. */
int db_manifest_of_build(struct db_manifest *out, const struct db_build *b);
/* Stores m, whose hash must be db_manifest_hash's (-EINVAL otherwise);
 * storing a manifest stored before changes nothing. */
int db_manifest_put(struct db *db, const struct db_manifest *m);
/* -ENOENT for a hash not stored. */
int db_manifest_load(struct db *db, struct db_manifest *out, const char *hash);

/* ---- runner_results, runner_lines (db/runner-results.c) ----
 * One process of a contract runner over a build. */

struct db_runner_result {
	int64_t id;
	int64_t build_id;
	char runner[64];
	int chunk;
	int chunks;
	enum db_state state;
	char *binary_sha256;
	char started_at[32];
	char ended_at[32];
	int exit_code;
	int signal;
	bool timed_out;
	double elapsed_ms;
	char *spawn_error;
	char *output;            /* bounded */
	size_t output_len;
	struct db_line *lines;
	size_t nlines;
};
void db_runner_result_release(struct db_runner_result *r);
/* True (1) when a finished result of this runner and chunk exists. */
int db_runner_result_done(struct db *db, int64_t build_id, const char *runner, int chunk);
int db_runner_result_insert(struct db *db, int64_t *out_id, const struct db_runner_result *r);
int db_runner_result_finish(struct db *db, const struct db_runner_result *r);

/* The agent's push of its builds (docs/hub.md, "The build record"): a
 * finished build of its own whose done runner results outnumber those the
 * hub acknowledged (none: -1) is pending. Ids in id order, at most max;
 * *out is the caller's. */
int db_builds_unpushed(struct db *db, int64_t **out, size_t *out_n, size_t max);
/* Records the hub's answer to build id's record with results runner results. */
int db_build_pushed(struct db *db, int64_t id, size_t results, int status, const char *message);
/* The hub's id of a host's build, or -ENOENT. */
int db_build_origin(struct db *db, int64_t *out_id, const char *host, int64_t origin_id);
/* The hub's ingest of a host's build b (b->host, its artifacts) with its
 * id there, the sha256 of its record without runner results, and n runner
 * results (each done, with its lines) with their ids there. A build not
 * here is stored and the host's comparisons ingested before it are tied to
 * it; one here with the same sha256 gets the results it lacks; another
 * sha256 is -EEXIST with the reason. *out_stored says whether anything was
 * stored; *out_id is the hub's id. One transaction. */
int db_build_ingest(struct db *db, const struct db_build *b, int64_t origin_id,
		    const char *build_sha256, const struct db_runner_result *rs,
		    const int64_t *rs_origin, size_t n, int64_t *out_id, bool *out_stored);
/* Every finished result of a build, by runner and chunk, without their
 * output; *out is the caller's. */
int db_runner_results_load(struct db *db, struct db_runner_result **out, size_t *out_n,
			   int64_t build_id);
/* Loads x->output (and output_len) of result x->id, replacing what it held;
 * -ENOENT when there is no such result. */
int db_runner_result_output(struct db *db, struct db_runner_result *x);

/* ---- hub_pulls (db/hub-pulls.c) ----
 * The hub's pull request heads: per head it saw, the base commit it fixed
 * the first time (every host compares against it), whether it is trusted
 * (its author allowed, or a maintainer's /perfd run), and whether it is
 * still its open pull request's head. */
struct db_hub_pull {
	int pr;
	char commit[DB_OID_HEX];
	char base[DB_OID_HEX];
	char base_ref[256];
	char how[16];            /* "merge-base" or "base-head": how base was found */
	char author[128];
	bool trusted;
	bool open;
	char fixed_at[32];
};
/* -ENOENT when the hub never saw that head of pr. */
int db_hub_pull_get(struct db *db, struct db_hub_pull *out, const char *repo, int pr,
		    const char *commit);
/* Records what the forge says now of the open pull requests of repo: each
 * of heads (n of them) is open, with its trust; a head seen before keeps
 * the base fixed for it; every other head of repo is no longer open. One
 * transaction. */
int db_hub_pulls_set(struct db *db, const char *repo, const struct db_hub_pull *heads,
		     size_t n);
/* The open heads of repo, by pull request; *out is the caller's. */
int db_hub_pulls_open(struct db *db, struct db_hub_pull **out, size_t *out_n, const char *repo);
/* At most max heads of repo, newest pull request first: the open ones when
 * commit is NULL, else every head whose commit starts with commit (a
 * lower-case hex prefix), open or not. *out is the caller's. */
int db_hub_pulls_find(struct db *db, struct db_hub_pull **out, size_t *out_n, const char *repo,
		      const char *commit, size_t max);

/* ---- pull_comments, commit_statuses, pull_approvals, pull_heads_seen (db/pulls.c) ----
 * What perfd said on a pull request's host. repo is "owner/name". These rows only remember what was posted, so that
 * nothing is posted twice and a restart does not post again. */

/* perfd's comment on one pull request. */
struct db_pull_comment {
	int64_t comment_id;      /* 0: none known */
	char commit[DB_OID_HEX]; /* the head commit the posted body describes */
	char body_sha256[65];    /* of the body posted; "" when none */
	int recreated;           /* times it was found deleted and posted again */
	bool muted;              /* deleted again after a recreation: perfd stays off */
};
/* key tells apart the comments of agents that do not share a database
 * ("" for the one comment of a shared one). -ENOENT when perfd never
 * commented there. */
int db_pull_comment_get(struct db *db, struct db_pull_comment *out, const char *repo, int pr,
			const char *key);
int db_pull_comment_put(struct db *db, const char *repo, int pr, const char *key,
			const struct db_pull_comment *c);

/* The last state and description perfd set for commit and context: 0, or
 * -ENOENT when none. state holds at most 15 characters. */
int db_commit_status_get(struct db *db, char state[16], char **description, const char *repo,
			 const char *commit, const char *context);
int db_commit_status_put(struct db *db, const char *repo, const char *commit, const char *context,
			 const char *state, const char *description, const char *target_url);

/* A maintainer's "/perfd run" for one head commit of a pull request. */
int db_pull_approval_get(struct db *db, char **approver, const char *repo, int pr,
			 const char *commit);
int db_pull_approval_add(struct db *db, const char *repo, int pr, const char *commit,
			 const char *approver, int64_t comment_id);
/* The newest comment id that approved a head of the pull request; 0 when none. */
int db_pull_approval_last(struct db *db, int64_t *out, const char *repo, int pr);
/* When perfd first saw commit as the head of the pull request (seconds
 * since the epoch): now, the first time it is asked. */
int db_pull_head_first_seen(struct db *db, int64_t *out, const char *repo, int pr,
			    const char *commit);

/* ---- forecasts, forecast_reads (db/forecasts.c) ----
 * The forecasts pull requests stated (docs/comment.md, "Forecasts"): per
 * pull request, head commit and source ("description" or "commit"), each
 * perfd-expect line as written. Never changed once the head has a
 * comparison: the callers check db_commit_is_measured first. */
struct db_forecast {
	int pr;
	char source[16];
	int idx;                 /* its order within the source */
	char *line;              /* as written */
	char *case_name;         /* NULL for a line not understood */
	char direction[16];      /* faster, slower, unchanged; "" when not understood */
	bool has_band;
	double lo, hi;           /* fractions; set with has_band */
	char *problem;           /* why the line was not understood; NULL when it was */
	char first_seen[32];
};
void db_forecast_release(struct db_forecast *f);
/* Replaces the forecasts of one source of pull request pr at commit with
 * v (n of them), and records that source as read with lines_sha256. A
 * line stored before with the same text and place keeps its first_seen.
 * One transaction. */
int db_forecasts_set(struct db *db, const char *repo, int pr, const char *commit,
		     const char *source, const char *lines_sha256, const struct db_forecast *v,
		     size_t n);
/* How one source of pr at commit was read: the sha256 of its lines into
 * sha, and whether it was seen changed after measurement (*changed, may
 * be NULL). -ENOENT when it never was. */
int db_forecast_read_get(struct db *db, char sha[65], bool *changed, const char *repo, int pr,
			 const char *commit, const char *source);
/* Marks a source as changed after the head was measured, once: the first
 * time is kept. */
int db_forecast_changed(struct db *db, const char *repo, int pr, const char *commit,
			const char *source);
/* The forecasts of pr at commit, description's first, in order, at most
 * max; *out is the caller's (release each, free the array). *changed_at
 * (may be NULL) gets when the description was seen changed after
 * measurement, "" when it was not. */
int db_forecasts_load(struct db *db, struct db_forecast **out, size_t *out_n, int pr,
		      const char *commit, size_t max, char changed_at[32]);
/* Whether any comparison of a job at commit exists, in whatever state. */
int db_commit_is_measured(struct db *db, bool *out, const char *commit);

/* ---- tokens (db/tokens.c) ----
 * The tokens the hub issued (docs/hub.md), each kept as the sha256 of its
 * text alone: a host's, with which that host's agent pushes its records, or
 * a maintainer's. Revoked tokens keep their row. */

enum db_token_kind { DB_TOKEN_HOST, DB_TOKEN_MAINTAINER };
/* "host" or "maintainer". */
const char *db_token_kind_name(enum db_token_kind k);

struct db_token {
	int64_t id;
	enum db_token_kind kind;
	char name[64];           /* the host's or the maintainer's */
	char sha256[65];         /* of the token's text */
	char created_at[32];
	char revoked_at[32];     /* "" while the token is live */
};
int db_token_add(struct db *db, int64_t *out_id, enum db_token_kind kind, const char *name,
		 const char *sha256);
/* Revokes every live token of kind and name; returns how many. */
int db_token_revoke(struct db *db, enum db_token_kind kind, const char *name);
/* Tokens by kind, name and id (only the live ones when live_only), at most
 * max; *out is the caller's to free. */
int db_token_list(struct db *db, struct db_token **out, size_t *out_n, bool live_only,
		  size_t max);

/* ---- comparison_origins (db/origins.c) ----
 * Where each comparison the hub ingested came from: its host, its id on
 * that host and the sha256 of the record it came in (docs/hub.md). */

struct db_origin {
	char host[64];
	int64_t origin_id;       /* the comparison's id on its host */
	int64_t comparison_id;   /* its id here */
	int64_t origin_job;      /* its job's id on its host; 0: none */
	int64_t origin_base_build;   /* its builds' ids there; 0: none */
	int64_t origin_head_build;
	char sha256[65];         /* of the record's canonical form */
	char received_at[32];
};
/* -ENOENT when no comparison of host came with that id. */
int db_origin_get(struct db *db, struct db_origin *out, const char *host, int64_t origin_id);
/*
 * Stores an ingested comparison whole, in one transaction: its artifacts,
 * the comparison with its settings, times and calibration (c->calibration's
 * ids are this database's), every process (each done, with its metrics,
 * lines and captured output), the summary s and the origin o (whose
 * comparison_id and received_at are set here). c->state must be done.
 * *out_id is the new comparison's id. -EEXIST when o's host and id are
 * stored already; nothing is stored on any error.
 */
int db_comparison_ingest(struct db *db, int64_t *out_id, const struct db_comparison *c,
			 const struct db_summary *s, const struct db_origin *o);

/* ---- pushed (db/pushed.c) ----
 * The agent's push to the hub: its database is the spool. The backlog is
 * every done comparison of this database's own (not ingested from another
 * host) the hub has not answered for with a 2xx or a permanent refusal. */

/* The oldest max of the backlog, ids ascending; *out is the caller's. */
int db_push_pending(struct db *db, int64_t **out, size_t *out_n, size_t max);
/* How many records the backlog holds: comparisons, jobs whose newest
 * update and builds whose runner results the hub has not answered for. */
int db_push_backlog(struct db *db, int64_t *out);
/* Records the hub's answer for a comparison: status (200, 201, 409, 422),
 * the hub's id for it (0: none said) and its message (NULL: none). */
int db_push_mark(struct db *db, int64_t comparison_id, int status, int64_t hub_id,
		 const char *message);

/* ---- receipts (db/receipts.c) ----
 * A done or abandoned comparison's receipt as the bytes the hub answered,
 * stored once (docs/api.md, "Receipts"). db/ neither renders nor reads
 * them: format and renderer are the caller's names. A stored receipt is
 * derived from the comparison's rows, and every write in db/ that changes
 * what a receipt shows drops it with db_receipt_forget. */

struct db_receipt {
	char *body;              /* len bytes and a NUL after them */
	size_t len;
	char sha256[65];         /* of the bytes, as stored with them */
};
void db_receipt_release(struct db_receipt *r);
/* The receipt of comparison_id stored in format by renderer: 0 with *out
 * the caller's, or -ENOENT when none is stored, or only one by another
 * renderer. */
int db_receipt_get(struct db *db, struct db_receipt *out, int64_t comparison_id,
		   const char *format, const char *renderer);
/* A mark of what this handle can see: it changes whenever another
 * connection commits a write. Read before a comparison is loaded to render
 * the receipt that db_receipt_put then stores. */
int db_receipt_mark(struct db *db, int64_t *out);
/* Stores body (len bytes, sha256 its hash) as the receipt of comparison_id
 * in format by renderer, replacing any. Only if nothing was committed by
 * another connection since mark was read (db_receipt_mark): -EAGAIN
 * otherwise, for what was rendered may be stale. It never waits for the
 * write lock: -EBUSY when another writer holds it; -EACCES on a handle
 * opened read-only. Nothing is stored on any error. */
int db_receipt_put(struct db *db, int64_t comparison_id, const char *format,
		   const char *renderer, const char *sha256, const char *body, size_t len,
		   int64_t mark);
/* Drops every stored receipt of comparison_id (all formats): called by
 * each write that changes what the comparison's receipt shows (its row,
 * summary, stages, notes, pair gains, processes, or the job it is linked
 * to), inside that write's transaction. 0 when there was none. */
int db_receipt_forget(struct db *db, int64_t comparison_id);

/* ---- counts across tables (db/db.c) ----
 * For /metrics. */

struct db_count {
	char key[32];
	int64_t n;
};
enum db_count_kind { DB_COUNT_VERDICTS, DB_COUNT_JOBS, DB_COUNT_BUILDS, DB_COUNT_QUARANTINED,
		      DB_COUNT_ALERT_COMMANDS, DB_COUNT_UNSANDBOXED, DB_COUNT_HELD };
/* Rows per verdict ("none" before a summary), job state, build state,
 * outcome of the alert commands read, or why of the holds in force (this
 * database's own and, at a hub, those its hosts said); for DB_COUNT_QUARANTINED one row
 * "quarantined"; for DB_COUNT_UNSANDBOXED one row "unsandboxed", the hosts
 * whose newest heartbeat says none. Fills at most max and
 * returns the count. */
int db_count(struct db *db, struct db_count *out, size_t max, enum db_count_kind kind);

#endif
