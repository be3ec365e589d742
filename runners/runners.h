/*
 * runners: everything between "run this program" and "this is the figure".
 *
 * - child: a fresh process per run, in its own process group, with bounded
 *   capture of stdout and stderr, a time bound (SIGTERM to the group, SIGKILL
 *   after a grace period), CPU pinning, wall time on a monotonic clock and
 *   rusage.
 * - protocol: the line protocol a measured program prints (TIMING, DIGEST,
 *   TIMING_RECORD_VALID, RESULT, SUMMARY; see docs/protocol.md).
 * - rule: the one rule that turns process records into figures
 *   (pairs-median/1; see docs/rule.md), and the check that recomputes it.
 * - pair: schedules a comparison (warm-ups, then pairs AB, BA, AB, ...),
 *   records every process before it starts and after it ends, then stores
 *   the rule's summary.
 * - fault watch: reads the kernel log while each process runs and reports
 *   the first line that matches the host profile's fault patterns.
 * - boot log: reads what the machine kept of the previous boot's kernel
 *   log, after it went down under a step, and matches it the same way.
 * - receipt: renders a stored comparison as text, JSON, CSV or Markdown.
 *
 * Ownership: strings and arrays a function fills in a struct belong to that
 * struct and are freed by its _release, which accepts NULL and a zeroed
 * struct. Borrowed inputs are const.
 * Errors: negative errno, detail in err_last(). A function that fills *out
 * zeroes it on entry, before anything can fail, so it may be released on
 * every path. In/out parameters are not zeroed: a struct child's
 * results, a report or receipt strbuf appended to, runner_fault_watch_open's
 * watch (opened, never failing).
 */
#ifndef PERFD_RUNNERS_H
#define PERFD_RUNNERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common.h"
#include "db.h"
#include "hosts.h"

struct sandbox;                  /* common/sandbox/sandbox.h */

/* ---- contract runners (contract.c) ---- */

/* A contract runner of the suite: a correctness check of a build. */
struct runner_contract {
	char *name;
	char *command;               /* run with /bin/sh -c in the build directory */
	double timeout_s;
	int chunks;                  /* 1: one process; N: N processes, PERFD_CHUNK=1..N */
};

/* Runs every chunk of rc on build b that has no finished result yet, each
 * a fresh process with a runner_results row before it starts and its exit,
 * output and RESULT/SUMMARY lines after, with the sha256 of the runner's
 * program when the command's first word names a regular file of the build
 * (none for a command on PATH or a shell builtin, nor for a link; hashed
 * within the bounds of hash, as the build's artifacts). *out_failed is
 * increased by the processes that failed (exit, signal, time-out, could not start); on_done
 * (when not NULL) sees each stored result. Returns 0, -ECANCELED when
 * cancel_fd fired (the row in hand is left running, to be abandoned and
 * run again), or a database error. */
int runner_contract_run(struct db *db, const struct db_build *b, const struct runner_contract *rc,
			const struct sandbox *sandbox, const struct sha256_bound *hash,
			int cancel_fd, int *out_failed,
			void (*on_done)(void *ctx, const struct db_runner_result *res), void *ctx);

/* ---- protocol ---- */

#define RUNNER_LINE_MAX (64 * 1024)   /* longer lines are skipped and counted */
#define RUNNER_METRICS_MAX 256
#define RUNNER_DIGESTS_MAX 64
#define RUNNER_LINES_MAX 1024         /* RESULT and SUMMARY lines kept */
#define RUNNER_ERRORS_MAX 64
#define RUNNER_KEPT_LINE_MAX 4096     /* a kept line longer than this is cut */

struct runner_digest {
	char *name;                  /* "" for an unnamed digest */
	char *hex;
};

struct runner_protocol {
	struct db_metric *metrics;
	size_t nmetrics;
	struct runner_digest *digests;
	size_t ndigests;
	bool record_valid;
	struct db_line *lines;
	size_t nlines;
	char **errors;               /* "line N: ..." */
	size_t nerrors;
	size_t lines_seen;
	size_t lines_skipped;        /* over RUNNER_LINE_MAX or holding a NUL */
	/* parser state */
	struct strbuf line;
	bool skipping;
	bool has_nul;
};

void runner_protocol_init(struct runner_protocol *p);
void runner_protocol_feed(struct runner_protocol *p, const char *buf, size_t len);
/* Parses a last line without a newline. */
void runner_protocol_finish(struct runner_protocol *p);
/* Parses one line (without its newline); lineno is for messages. */
void runner_protocol_line(struct runner_protocol *p, const char *line, size_t len,
			  size_t lineno);
/* The canonical digest: "hex" for one unnamed digest, else "name=hex ..."
 * sorted by name; NULL when none was printed. The caller frees it. */
char *runner_protocol_digest(const struct runner_protocol *p);
void runner_protocol_release(struct runner_protocol *p);

/* A RESULT line taken apart: `RESULT name [k=v ...] on "device": k=v ...`. */
struct runner_kv {
	char *key;
	char *value;
};
struct runner_result {
	char *name;
	char *device;                /* NULL when the line names none */
	struct runner_kv *attrs;     /* before `on` */
	size_t nattrs;
	struct runner_kv *counts;    /* after the colon */
	size_t ncounts;
};
/* -EINVAL when the line is not a RESULT line of that shape; *out is zeroed
 * then. */
int runner_result_parse(struct runner_result *out, const char *line);
void runner_result_release(struct runner_result *r);

/* ---- rule ---- */

/* What a version of the rule does beyond version 1 (docs/rule.md,
 * "Versions"); code asks a version for these, never for its number. */
enum runner_rule_feature {
	RUNNER_RULE_F_STAGES = 1u << 0,     /* stages of pairs up to max_pairs, 1% per direction */
	RUNNER_RULE_F_POSITIVE = 1u << 1,   /* a metric's value must be positive and normal */
	RUNNER_RULE_F_DIRECTION = 1u << 2,  /* better = higher turns the gain's sign */
	RUNNER_RULE_F_CALIBRATED = 1u << 3, /* the calibrated test on the A/As' pair gains */
	RUNNER_RULE_F_BOTH_TESTS = 1u << 4, /* the sign test at every stage, beside it */
	RUNNER_RULE_F_SCALE_GATE = 1u << 5, /* no calibrated test when pairs spread wider */
	RUNNER_RULE_F_LOAD_GATE = 1u << 6,  /* none when processes ran under more CPU pressure */
};
/* One version, a row of rule-version.c's table; borrowed from it, never
 * freed. */
struct runner_rule_version {
	const char *name;            /* "pairs-median/2.1", as stored with each figure */
	unsigned features;           /* RUNNER_RULE_F_* */
	int calibration_min_gains;   /* the fewest A/A gains the calibrated test uses */
};
/* The version named rule: 0, or -EINVAL with *out NULL and err_last()
 * naming rule and the versions this perfd knows, for NULL or any name the
 * table does not hold. Never the newest for a name it does not know. */
int runner_rule_lookup(const struct runner_rule_version **out, const char *rule);
/* The version new comparisons get: the table's last row. */
const struct runner_rule_version *runner_rule_newest(void);
#define RUNNER_RULE (runner_rule_newest()->name)
/* Every version, oldest first, *out_n of them. */
const struct runner_rule_version *runner_rule_versions(size_t *out_n);
/* Whether v has every feature of mask; false for NULL. */
bool runner_rule_version_has(const struct runner_rule_version *v, unsigned mask);
/* The same for a rule's name; false for a name this perfd does not know. */
bool runner_rule_has(const char *rule, unsigned mask);
/* A feature's name as docs/rule.md's table heads its column; NULL for a
 * value that is not one feature. */
const char *runner_rule_feature_name(unsigned feature);
/* A comparison under pairs-median/2 or /2.1 is calibrated by the pair gains
 * of the newest A/A comparisons of its host and case, up to this many gains
 * (db_calibration_select's max_gains), and leans on them only from
 * RUNNER_CALIBRATION_MIN_GAINS on (/2: RUNNER_CALIBRATION_MIN_GAINS_V2):
 * the fewest with which 3 pairs can pass a stage (docs/rule.md, "The
 * calibrated test"). */
#define RUNNER_CALIBRATION_MAX_GAINS 120
#define RUNNER_CALIBRATION_MIN_GAINS 13
#define RUNNER_CALIBRATION_MIN_GAINS_V2 12
/* pairs-median/2.1 shares each stage's bound between its two tests: the
 * sign test gets RUNNER_RULE21_SIGN_SHARE / RUNNER_RULE21_SHARES of it, the
 * calibrated test the rest (docs/rule.md, "The verdict at a stage"). */
#define RUNNER_RULE21_SHARES 4
#define RUNNER_RULE21_SIGN_SHARE 1
/* The scale gate of pairs-median/2.1: a stage leans on its calibration
 * only when the rank test of spread gives p above this. */
#define RUNNER_RULE21_GATE_P 0.01
/* The load gate of pairs-median/2.2: a stage leans on its calibration only
 * when its processes did not run under more CPU pressure than the
 * calibration's, p above this; a process counts when above the
 * calibration's RUNNER_RULE22_LOAD_RANK-th largest (docs/rule.md,
 * "pairs-median/2.2"). */
#define RUNNER_RULE22_LOAD_P 0.01
#define RUNNER_RULE22_LOAD_RANK 2
#define RUNNER_WALL_METRIC "wall_ms"

/* ---- the arithmetic of pairs-median/2 (rule-stats.c; docs/rule.md) ---- */

/* Pairs and max_pairs are at most this under version 2, so that the sign
 * test's tail is summed exactly in integers. */
#define RUNNER_RULE2_MAX_PAIRS 64
#define RUNNER_STAGES_MAX 8
_Static_assert(RUNNER_RULE2_MAX_PAIRS == HOST_MAX_PAIRS, "one bound on pairs");

/* The stages' pair counts for pairs and max_pairs: pairs, then doubling,
 * the last one max_pairs (3, 6, 12, 24). out has room for RUNNER_STAGES_MAX. Returns the
 * count, or -EINVAL when 1 <= pairs <= max_pairs <= RUNNER_RULE2_MAX_PAIRS
 * does not hold. */
int runner_stages(int *out, int pairs, int max_pairs);
/* A stage's share of the 1% bound when there are nstages. */
double runner_stage_alpha(int nstages);
/* P(X >= k) for X ~ Binomial(n, 1/2), as a double. */
double runner_sign_p(int n, int k);
/* Whether k of n agreeing pairs pass the sign test at a stage's share of
 * the bound, decided exactly in integers. */
bool runner_sign_passes(int n, int k, int nstages);
/* Whether the sign test alone, at its share under the rule new comparisons
 * get (RUNNER_RULE), can give a verdict within the stages of pairs and
 * max_pairs: some stage passes when all of its pairs agree (with the
 * defaults, 12 of 12; never within 6 pairs). */
bool runner_sign_can_decide(int pairs, int max_pairs);
/* The same at num / den of the stage's share (pairs-median/2.1's split). */
bool runner_sign_passes_share(int n, int k, int nstages, int num, int den);
/* The exact null distribution of the rank count of n gains against m
 * calibration gains (docs/rule.md, "The calibrated test"). */
struct runner_rank {
	int n, m;
	double *tail;                /* tail[u] = P(U >= u), u = 0..n*m+1 */
};
/* -EINVAL unless 1 <= n <= RUNNER_RULE2_MAX_PAIRS and 1 <= m <=
 * RUNNER_CALIBRATION_MAX_GAINS. */
int runner_rank_init(struct runner_rank *out, int n, int m);
double runner_rank_p(const struct runner_rank *r, long u);
void runner_rank_release(struct runner_rank *r);
/* The couples (i, j) with x[i] + shift > c[j] (below: <). Ties count for
 * neither, which can only make a p value larger. */
long runner_rank_count(const double *x, size_t n, const double *c, size_t m, double shift,
		       bool below);
/* Whether a rank p value passes at a stage's share of the bound, or at num
 * / den of it. */
bool runner_rank_passes(double p, int nstages);
bool runner_rank_passes_share(double p, int nstages, int num, int den);
/* pairs-median/2.1's scale gate: the rank count of the n x's deviations
 * |x_i - median(x)| against the m c's |c_j - median(c)| (for an odd count,
 * less the median's own 0), with its exact distribution when they are
 * exchangeable; p its upper tail, ratio the median deviations' ratio (NAN
 * when the calibration's is 0). It passes when p > RUNNER_RULE21_GATE_P.
 * -EINVAL when there are too few deviations to count (n < 2, m < 2) or too
 * many; the gate passes then, with p 1. */
struct runner_gate {
	double p, ratio;
	bool passes;
};
int runner_scale_gate(struct runner_gate *out, const double *x, size_t n, const double *c,
		      size_t m);

/* pairs-median/2.2's load gate: of the n x's (a stage's processes' CPU
 * pressure, each a share of its wall time), how many, k, lie above the
 * r-th largest of the m c's (the calibration's processes'), and p, the
 * chance of so many when all n + m are exchangeable: that k or more x's
 * are among the k + r - 1 largest of them all, a hypergeometric tail (for
 * r = 1, C(n, k) / C(n + m, k)). Ties count for neither, which can only
 * make p larger. It passes when p > RUNNER_RULE22_LOAD_P. -EINVAL when n
 * is 0 or m under r: there is nothing to compare, and the gate passes with
 * p NAN. */
struct runner_load_gate {
	double p;
	int above;
	bool passes;
};
int runner_load_gate(struct runner_load_gate *out, const double *x, size_t n, const double *c,
		     size_t m, int r);

/* Applies the comparison's rule to its process records (c->processes, with
 * c->metric_requested, c->min_effect, c->noise, c->pairs, c->state) and
 * fills *out, which the caller releases with db_summary_release, on every
 * path: -EINVAL for a rule this perfd does not know (runner_rule_lookup)
 * leaves it zeroed. */
int runner_rule_apply(struct db_summary *out, const struct db_comparison *c);
/* The smallest count of agreeing pairs out of n that the one-sided sign test
 * at alpha 1/8 accepts; 0 when no count does (n < 3). */
int runner_sign_threshold(int n);
/* Sorts v in place, ascending. */
void runner_sort(double *v, size_t n);
/* Median of v (sorted in place); the mean of the two middle values for an
 * even count. */
double runner_median(double *v, size_t n);
/* The median of the first n of v, which is left as it was. */
double runner_median_of(const double *v, size_t n);
/* The value of metric for one process as the rule reads it: the printed
 * TIMING metric, or for wall_ms the launcher's wall time when the program
 * printed no such metric and ran to its end. False when there is none. */
bool runner_metric_value(const struct db_process *p, const char *metric, double *out);
/* What a metric's name says of its unit, by its suffix (docs/protocol.md,
 * "Units"). */
enum runner_metric_kind {
	RUNNER_METRIC_UNKNOWN,  /* no unit perfd knows ("speed", "score") */
	RUNNER_METRIC_TIME,     /* _ns, _us, _ms, _s: lower is better */
	RUNNER_METRIC_RATE,     /* _mb_s, _it_s, _per_s, _mbps, _ops, _hz, ...: higher */
};
struct runner_metric_unit {
	enum runner_metric_kind kind;
	char text[24];          /* shown after a value: "ms", "MB/s", "tokens/s"; "" */
};
/* Fills *out (zeroed first: kind unknown, no text) from name's suffix, the
 * longest that ends it on a word boundary ('_', '.', ':', '-'), in any
 * case: "read_mb_s" is a rate in MB/s, "wall_ms" a time in ms. NULL is a
 * name with no unit. The one table every shown unit and judged direction
 * reads. */
void runner_metric_unit(struct runner_metric_unit *out, const char *name);
/* True unless name is a time: a rate or a unit perfd does not know needs
 * its direction said (--better; a case's better), never lower by default. */
bool runner_metric_needs_better(const char *name);
/* True when name can be a metric's (docs/protocol.md): a letter or '_'
 * first, then letters, digits, '_', '.', ':' or '-', at most 64. */
bool runner_metric_name_is_valid(const char *name);
/* True when the len bytes of name are one of the figures perfd measures
 * of each process itself (wall_ms, user_ms, sys_ms, maxrss_kb,
 * cpu_wait_ms): a program's TIMING line naming one is an error, the
 * process invalid. */
bool runner_metric_name_is_reserved(const char *name, size_t len);
/* "lower" or "higher" into *higher; -EINVAL, with the detail, for another
 * word. */
int runner_better_parse(bool *higher, const char *word);
/* Chooses the metric as the rule's default does: the one TIMING metric the
 * pair processes printed, else wall_ms when they printed none. Returns 0
 * with *out set (caller frees), or -EDOM when several were printed, with
 * their names in err_last(). */
int runner_metric_choose(char **out, const struct db_process *procs, size_t n);
/* Recomputes every stored figure of c and writes one line per mismatch to
 * report. Returns the count of mismatches, or a negative errno. */
int runner_verify(struct strbuf *report, const struct db_comparison *c, int *out_checked);
/* runner_verify, and *out is the summary the rule recomputed (zeroed when
 * there is none), which the caller releases with db_summary_release on
 * every path. */
int runner_verify_summary(struct db_summary *out, struct strbuf *report,
			  const struct db_comparison *c, int *out_checked);

/* ---- fault watch ---- */

#define RUNNER_FAULT_READ_MAX (4 * 1024 * 1024)  /* log bytes read per process */

struct runner_fault_watch {
	const struct host_profile *profile;  /* borrowed: the patterns */
	char *path;
	int fd;                      /* -1 when the watch is off */
	bool is_kmsg;                /* record-per-read /dev/kmsg semantics */
	char *off_reason;            /* why the log cannot be read, or NULL */
};

/* Opens the kernel log at path (/dev/kmsg, or a plain file for tests).
 * Never fails: an unreadable log leaves the watch off with the reason in
 * off_reason, which every process record then carries. */
void runner_fault_watch_open(struct runner_fault_watch *w, const char *path,
			     const struct host_profile *profile);
/* Skips what the log holds now: called just before a process starts. */
void runner_fault_watch_mark(struct runner_fault_watch *w);
/* Reads what was logged since the mark and returns the first line that
 * matches a fault pattern (the caller frees it), or NULL. */
char *runner_fault_watch_check(struct runner_fault_watch *w);
/* "on" or "off: reason", for the process record; the caller frees it. */
char *runner_fault_watch_state(const struct runner_fault_watch *w);
void runner_fault_watch_close(struct runner_fault_watch *w);

/* ---- the previous boot's kernel log (boot-log.c) ---- */

#define RUNNER_BOOT_LOG_TIMEOUT_S 10.0            /* boot_log_command's bound */
#define RUNNER_BOOT_LOG_READ_MAX (16 * 1024 * 1024) /* bytes of its output, or of a file */
#define RUNNER_BOOT_LOG_FILES_MAX 64              /* files read from one directory */
#define RUNNER_BOOT_LOG_LINE_MAX 512              /* bytes of the fault line kept */
#define RUNNER_BOOT_LOG_SAID_MAX 200              /* bytes of a failed command's words */

/* What the previous boot's kernel log said (docs/hosts.md, "When the machine goes down"). */
struct runner_boot_log {
	char *fault;   /* the first line of it matching a fault pattern, or NULL: none matched */
	char *source;  /* what was read, for people: e.g. "journalctl -k -b -1 -q
	                * --no-pager: 1234 lines; /sys/fs/pstore: 2 files, 80 lines",
	                * or why nothing: "none found: ..." */
};
/* Reads the previous boot's kernel log as the profile says (its
 * boot_log_command, then its boot_log files and directories) and matches
 * each line against its fault patterns. Returns 0 with *out filled (its
 * strings the caller's, released with runner_boot_log_release) whether or
 * not anything was found; a negative errno only for a failure of perfd
 * itself. A command that fails or is missing, a path that is absent or
 * unreadable, is said in source and is no failure; so is a profile that
 * names neither. The fault keeps the line as read, without its line end,
 * at most RUNNER_BOOT_LOG_LINE_MAX bytes, repaired to UTF-8. */
int runner_boot_log_scan(struct runner_boot_log *out, const struct host_profile *profile);
void runner_boot_log_release(struct runner_boot_log *b);

/* ---- holds (hold.c) ---- */

/* What held commit h did, in one sentence for people ("the machine went
 * down while case 'mm' of commit 1a2b3c4d5e6f ran (boot 8c1f2a3b; its
 * process 5, new arm, started 12 s into it), job 3; fault line: ..."); the
 * caller's to free. */
char *runner_hold_text(const struct db_hold *h);
/* Something while step ran (a hold not yet stored: its step, name,
 * build, job, comparison or result, process) that makes its commit
 * suspect: why is DB_HOLD_FAULT with the fault line in what, or
 * DB_HOLD_UNKILLABLE with the process that outlived SIGKILL and its state.
 * The commit is held on host and the host quarantined with the hold's
 * text, in one transaction. */
int runner_hold_add(struct db *db, const char *host, const struct db_hold *step,
		    enum db_hold_why why, const char *what);
/* Stores hold h (host and why set), marks its job as waiting on it and
 * quarantines its host with its text, in one transaction; its id goes to
 * *out_id, the text to *out_text (the caller's) when out_text is not
 * NULL. A step held already keeps its hold (db_hold_add). A step of no
 * build and no commit (perfd pair's) quarantines the host alone, *out_id
 * 0. */
int runner_hold_store(struct db *db, int64_t *out_id, const struct db_hold *h,
		      char **out_text);
/* Releases hold h (loaded) by whom, and but for a gate's lifts its host's
 * quarantine, in one transaction: the commit runs again at the agent's
 * next turn (perfd retry --held, a maintainer's /perfd greenlight). */
int runner_hold_lift(struct db *db, const struct db_hold *h, const char *by);

/* ---- pair ---- */

struct runner_arm {
	const char *path;            /* resolved program path */
	const char *const *args;     /* after the shared args */
	size_t nargs;
	const char *const *env;      /* "K=V" added to this arm's environment */
	size_t nenv;
};

/* Where a running comparison stands, for a progress line. */
struct runner_progress {
	const struct db_process *p;  /* the process that just ended; NULL after a stage */
	int total;                   /* processes through the stage that runs */
	int stage, nstages;          /* 1-based stage that runs (or was judged), of at most */
	const struct db_stage *judged; /* the stage just judged, when p is NULL */
	bool more;                   /* after a stage: another one runs */
	const char *metric;          /* --metric, or NULL */
	bool higher_better;
};

struct runner_pair_opts {
	struct runner_arm old, new;
	const char *const *args;     /* shared args, after the program */
	size_t nargs;
	const char *const *env;      /* "K=V" added to both arms */
	size_t nenv;
	const char *old_sha256;      /* recorded artifacts */
	const char *new_sha256;
	int64_t old_artifact, new_artifact;
	int64_t job_id, base_build, head_build;  /* the agent's; 0 for perfd pair */
	int pairs;                   /* the first stage */
	int max_pairs;               /* the stages' limit (pairs-median/2); 0: pairs */
	/* > 0: max_pairs is instead what fits this many seconds, from the
	 * calibration's process times (runner_budget_max_pairs); stored with
	 * the comparison. */
	double time_budget_s;
	int warmup;
	bool aa;                     /* an A/A: one build or program against itself */
	bool higher_better;          /* better = higher */
	bool better_given;           /* said, not the default: a rate metric needs it */
	/* The A/A comparisons that calibrate it (db_calibration_select): only
	 * their ids are read. */
	const struct db_calibration *calibration;
	size_t ncalibration;
	const char *old_manifest;    /* each arm's manifest hash; NULL: none */
	const char *new_manifest;
	double timeout_s;
	const struct cpus *cpus;     /* pin each process; NULL or empty: none */
	size_t capture_max;
	const char *metric;          /* NULL: the rule's default */
	const char *case_name;
	const char *host;
	const char *fingerprint;
	double min_effect;
	double noise;
	unsigned cooldown_ms;        /* pause between processes */
	struct runner_fault_watch *watch; /* NULL: no fault watch */
	/* Each process runs in it, shown sandbox_ro (the arms' build
	 * directories) read-only; NULL: as it is. */
	const struct sandbox *sandbox;
	const char *const *sandbox_ro;
	int cancel_fd;
	/* Called after each process ends, with its stored record, and after
	 * each stage is judged (p NULL, stage set). */
	void (*progress)(void *ctx, const struct runner_progress *pr);
	void *progress_ctx;
};

/* The max_pairs a comparison of o starts with (budget.c): o->max_pairs
 * (else o->pairs), or with o->time_budget_s the largest stage end (pairs,
 * doubling, at most RUNNER_RULE2_MAX_PAIRS; at least pairs) whose pairs,
 * warm-ups first, fit the budget at the mean wall time of the pair
 * processes of o's calibration plus the cool-downs. Returns 1 when the
 * budget set it, 0 when not (no budget, or no process time measured yet:
 * the configured one), or a database error. */
int runner_budget_max_pairs(int *out, struct db *db, const struct runner_pair_opts *o);
/* Runs a whole comparison and stores it. *out_id is 0 until the
 * comparison row exists and set as soon as it does, so the caller can name
 * it even when a later step fails. Returns 0 when the comparison was run
 * to its end and summarized (whatever the verdict), -ECANCELED when
 * cancel_fd fired (the comparison is stored as abandoned with its
 * summary), or a negative errno. A GPU fault seen by the watch
 * quarantines o->host in the database and ends the comparison after that
 * process. */
int runner_pair_run(struct db *db, int64_t *out_id, const struct runner_pair_opts *o);
/* Marks running comparison cid abandoned with reason, which its reasons
 * then name, and its summary (invalid), in one transaction; -EALREADY when
 * it is no longer running. A failure of the pair run itself (a full disk,
 * a lock held past the timeout, a child that could not start) ends in
 * this, tried a few times before runner_pair_run gives up: what it started
 * is never left running while perfd can still write. */
int runner_comparison_abandon(struct db *db, int64_t cid, const char *reason);
/* Marks abandoned, with the reason, every comparison a perfd that is gone
 * left running (db_comparison_orphans; with unowned, those naming no owner
 * too), and leaves those of a perfd that runs. Returns how many. */
int runner_orphans_abandon(struct db *db, bool unowned);

/* ---- calibration (calibration.c) ---- */

/* A comparison's calibration, chosen and owned: the A/A comparisons of
 * db_calibration_select with their gains loaded. */
struct runner_calibration {
	struct db_calibration *v;
	size_t n;
	size_t gains;                /* finite pair gains among them */
};
/* Chooses the calibration a comparison of o->host, o->case_name,
 * o->higher_better and o->fingerprint starts with under RUNNER_RULE (the
 * newest A/As, at most RUNNER_CALIBRATION_MAX_GAINS gains), into *out, and
 * points o->calibration and o->ncalibration at it: every comparison that
 * perfd pair or the agent starts is given its calibration here, A/As too
 * (an A/A is judged as a comparison would be, which is what makes its
 * verdict a sample of the false verdict rate). The caller releases *out
 * after runner_pair_run; on failure o's calibration is none. */
int runner_calibration_choose(struct runner_calibration *out, struct db *db,
			      struct runner_pair_opts *o);
void runner_calibration_release(struct runner_calibration *c);
/* The calibration a comparison of info's host and case would start with now
 * (db_calibration_infos): that of its newest A/A's rule, fingerprint and
 * direction, loaded, into *out; none (zeroed) when info has no A/A that is
 * not invalid. Where no device is probed (the hub, perfd agent --check),
 * this is what the host can see. */
int runner_calibration_current(struct runner_calibration *out, struct db *db,
			       const struct db_calibration_info *info);

/* The noise A/A comparisons measured: over their finite pair gains, the
 * median and the 90th percentile (nearest rank) of |gain|; NAN when none. */
struct runner_noise {
	size_t gains;
	double median, p90;
};
void runner_calibration_noise(struct runner_noise *out, const struct db_calibration *v,
			      size_t n);
/* How a comment or a list says an A/A's verdict: never faster or slower,
 * which on one build against itself is a false verdict, not a change.
 * Static text. */
const char *runner_aa_verdict(const char *verdict);

/* ---- what a host can see (mde.c; docs/rule.md, "What a host can see") ---- */

#define RUNNER_MDE_POWER 0.9        /* found in at least this share of comparisons */
#define RUNNER_MDE_SIMULATIONS 200  /* simulated comparisons per slowdown tried */

/* The minimum detectable effect: the smallest slowdown (a fraction, found
 * to within 5% between 0.01% and 100%) that the rule judges "slower" in at
 * least RUNNER_MDE_POWER of RUNNER_MDE_SIMULATIONS simulated comparisons of
 * pairs .. max_pairs pairs under min_effect, each pair's gain drawn (with
 * replacement, a fixed seed) from the calibration gains less the slowdown,
 * and judged with those gains as its calibration; the first
 * RUNNER_CALIBRATION_MAX_GAINS are used, as the rule does. INFINITY when
 * even 100% is not found; NAN when there is no gain or pairs and max_pairs
 * are no schedule. The same inputs give the same answer everywhere; the
 * last ones asked are kept, so asking again costs nothing. */
double runner_mde(const double *gains, size_t n, int pairs, int max_pairs, double min_effect);
/* runner_mde of a calibration's finite gains of metric (NULL: any), in the
 * order stored. */
double runner_calibration_mde(const struct db_calibration *v, size_t n, const char *metric,
			      int pairs, int max_pairs, double min_effect);
/* An MDE as a percentage to two digits ("4.1%", "12%"), as far as its
 * bisection can say; for a finite MDE only. */
void runner_format_mde(char *buf, size_t len, double mde);
/* The sentence every view says it with: "changes under 4.1% are not
 * visible on this host within 24 pairs"; for INFINITY "no change is
 * visible on this host within 24 pairs"; for NAN "no calibration yet says
 * what this host can see". */
void runner_mde_format(char *buf, size_t len, double mde, int max_pairs);
/* The MDE of a loaded comparison's calibration (c->calibration's gains of
 * c->metric) under its stages and min_effect; NAN for a rule without the
 * calibrated test (pairs-median/1, or one this perfd does not know) or no
 * calibration. */
double runner_comparison_mde(const struct db_comparison *c);
/* Why an unresolved comparison is: true, with "this host sees changes of
 * 4.1% or more; min_effect is 1%" in buf, when the MDE is over min_effect;
 * false (buf "") otherwise. */
bool runner_mde_unresolved(char *buf, size_t len, double mde, double min_effect);

/* ---- seeded draws (changepoint.c) ----
 * splitmix64: small, fast and the same everywhere, so a seed gives the same
 * draws on every machine (the change points' permutations, the MDE's
 * resampling). */
uint64_t runner_random_next(uint64_t *state);
/* A uniform index below n (n > 0), without modulo bias. */
size_t runner_random_below(uint64_t *state, size_t n);

/* ---- change points (changepoint.c; docs/history.md, "Change points") ----
 * E-divisive means with alpha = 1 over a series of values in branch order:
 * the energy statistic of each split, its significance by a permutation
 * test with a fixed seed (the same answer on every machine and every run),
 * segments split again while a split is significant. */

#define RUNNER_CHANGEPOINT_METHOD "e-divisive-means"
#define RUNNER_CHANGEPOINT_VERSION 1
#define RUNNER_CHANGEPOINT_ALPHA 1.0
#define RUNNER_CHANGEPOINT_MIN_SEGMENT 4       /* points on either side of a split */
#define RUNNER_CHANGEPOINT_PERMUTATIONS 199
#define RUNNER_CHANGEPOINT_SEED 0x70657266644350ULL  /* "perfdCP" */
#define RUNNER_CHANGEPOINT_P 0.01              /* a split is kept when p < this */
#define RUNNER_CHANGEPOINT_POINTS_MAX 1000     /* points of a series */
#define RUNNER_CHANGEPOINT_MAX 16              /* change points of a series */

struct runner_changepoint {
	size_t index;            /* the first point of the new regime */
	double q;                /* the energy statistic of the split */
	double p;                /* the permutation test's p value */
	double mean_before;      /* the regime before: from the change point before */
	double mean_after;       /* the regime after: to the change point after */
};

/* The change points of v[0..n), at most max (and RUNNER_CHANGEPOINT_MAX),
 * in index order; returns their count. A series shorter than two minimum
 * segments has none. -EINVAL for more than RUNNER_CHANGEPOINT_POINTS_MAX
 * points or a value that is not finite. out must hold max entries. */
int runner_changepoints_find(struct runner_changepoint *out, size_t max, const double *v,
			     size_t n);
/* The best split of v[0..n) alone, no test: *out_tau the first index of its
 * right part (0 when n < 2 * min_segment) and *out_q its energy statistic.
 * -EINVAL for more than RUNNER_CHANGEPOINT_POINTS_MAX points. */
int runner_changepoint_scan(size_t *out_tau, double *out_q, const double *v, size_t n,
			    size_t min_segment);

/* ---- receipt ---- */

enum runner_format {
	RUNNER_FORMAT_TEXT,
	RUNNER_FORMAT_JSON,
	RUNNER_FORMAT_CSV,
	RUNNER_FORMAT_MD,
};
/* -EINVAL for an unknown name. */
int runner_format_parse(enum runner_format *out, const char *name);
/* How every receipt, comment, alert, table and log line shows a figure: a
 * metric's value whole when it is whole or at least 1e6, else to 6
 * significant digits; a gain or spread (a fraction, 0.006831) as a
 * percentage with three decimals ("0.683%"; JSON keeps the fraction,
 * common.h); "-" for NAN. The signed form puts "+" before a positive gain
 * ("+0.683%"), for lines that do not say the direction in words. These
 * are the only places a gain becomes a percentage. */
void runner_format_value(char *buf, size_t len, double v);
void runner_format_gain(char *buf, size_t len, double frac);
void runner_format_gain_signed(char *buf, size_t len, double frac);
/* A RESULT or SUMMARY line l as every JSON output writes it (a receipt's
 * process, the API's runner result): its kind and text, and for a RESULT
 * line of the protocol's shape its name, device, attrs and counts. A new
 * value, the caller's. */
struct json_t *runner_line_json(const struct db_line *l);
/* Renders a loaded comparison; every format derives from the same fields. */
void runner_receipt_render(struct strbuf *out, const struct db_comparison *c,
			   enum runner_format f);
/* Names the renderer whose bytes a stored receipt holds (db_receipt_get):
 * perfd's version, and a number raised with every change to receipt.c (or
 * to what it reads) that changes the bytes of a receipt already stored. A
 * receipt stored under another name is never answered: it is rendered
 * anew. */
#define RUNNER_RECEIPT_RENDERER "perfd " PERFD_VERSION ", receipt 5"

#endif
