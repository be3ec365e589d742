/*
 * daemon/cli: what the verbs share (daemon.h includes it): option values,
 * usage errors, --help, the database opened for a verb, signals as a
 * descriptor, the progress line of a running comparison (cli.c); and what
 * the device verbs (probe, canary, pair, agent, demo) share: loading a
 * --host profile, probing Vulkan and finding the profile's device, each
 * reporting its own failure once and answering with the verb's exit status
 * (host-check.c).
 */
#ifndef PERFD_DAEMON_CLI_H
#define PERFD_DAEMON_CLI_H

#include <stdbool.h>

#include "db.h"
#include "hosts.h"
#include "kernels.h"

#define DEFAULT_DB "perfd.db"
#define DEFAULT_LOCK_TIMEOUT_S 10.0

/* Options shared by verbs that open the database. */
struct db_opts {
	const char *path;
	double lock_timeout_s;
};
#define DB_OPTS_INIT { DEFAULT_DB, DEFAULT_LOCK_TIMEOUT_S }
/* Opens the database, or logs why not and returns NULL. */
struct db *cli_db_open(const struct db_opts *o);
/* The same for a verb that only reads: never creates or migrates the file
 * (db_open_readonly). */
struct db *cli_db_open_readonly(const struct db_opts *o);

/* Parsers for option values: each logs a message naming the option and
 * returns -1 on a bad value. */
int cli_parse_int(int *out, const char *opt, const char *s, int min, int max);
int cli_parse_double(double *out, const char *opt, const char *s, double min, double max);
/* A fraction, also written as a percentage ("1%" is 0.01). */
int cli_parse_fraction(double *out, const char *opt, const char *s);
int cli_parse_id(long long *out, const char *s);

/* Prints the verb's usage to stdout and returns true when argv holds
 * --help or -h; the verb then returns EXIT_OK. */
bool cmd_wants_help(int argc, char **argv, const char *usage);

/* Logs "WHAT SCHEME://HOST:PORT/" for a listen address and the bound port. */
void cli_log_url(const char *what, const char *scheme, const char *listen, int port);

/* A line on stderr per process of a comparison, while it runs: its place
 * in the schedule and stage, arm and pair, wall time and metric, how it
 * failed, and at the end of each pair that pair's gain (the metric asked
 * for, else the first printed); and a line per stage judged, with what its
 * test said and whether another stage runs. runner_pair_opts' progress,
 * with a struct cli_progress as its context; nothing is printed unless on
 * is true. */
struct cli_progress {
	bool on;
	const char *label;           /* before each line's arm ("A/A"), or NULL */
	int pair;                    /* the pair of the values below */
	bool has_old, has_new;
	double old_v, new_v;
};
struct runner_progress;
void cli_progress_line(void *ctx, const struct runner_progress *rp);

/* Blocks the signals of a 0-terminated list in this thread, and so in the
 * threads it starts later (the hub's): they reach a signalfd alone. */
void cli_signals_block(const int *signals);
/* Blocks them and returns a signalfd that reads them (close-on-exec,
 * non-blocking), or -1 after saying why. */
int cli_signal_fd(const int *signals);

/* Prints "perfd VERB: see 'perfd VERB --help'" and returns EXIT_USAGE. */
int cli_usage_error(const char *verb);
/* Says "VERB: unexpected argument 'ARG'", then as cli_usage_error. */
int cli_extra_argument(const char *verb, const char *arg);

/* ---- the end of a log (tail.c) ---- */

/* Appends to out the last n lines of text (len bytes, NULL for none), each
 * after prefix, cut to width bytes on a character's boundary (" ..." then
 * says so), repaired to UTF-8, its control characters made '?', and ended
 * with a line feed. Returns how many lines text holds in all. */
size_t cli_tail_lines(struct strbuf *out, const char *text, size_t len, size_t n,
		      size_t width, const char *prefix);
/* Appends to out, as cli_tail_lines would, the first line of text before
 * line before (counted from 1) that reads as an error ("error:", "Error 1",
 * "undefined reference"), and returns its number; 0 when there is none: a
 * failure's last lines often hold only the warnings after it. */
size_t cli_first_error(struct strbuf *out, const char *text, size_t len, size_t before,
		       size_t width, const char *prefix);
/* Appends s as one word of the shell: as it is when it needs no quoting,
 * else in single quotes. */
void cli_shell_word(struct strbuf *out, const char *s);

/* ---- the device verbs' host check (host-check.c) ---- */

/*
 * Resolves and loads a --host argument. Returns EXIT_OK and the profile in
 * *out (the caller's), or EXIT_USAGE after printing every error. Like the
 * two below, it sets its outputs to NULL on entry: NULL on every failure.
 */
int host_check_load(struct host_profile **out, const char *arg);

/*
 * Probes Vulkan. Returns EXIT_OK and the probe in *out (the caller's), or,
 * after saying why, EXIT_NODEVICE when there is no loader, driver or device
 * and EXIT_USAGE when Vulkan fails otherwise.
 */
int host_check_probe(struct kernel_probe **out);

/*
 * The index of the profile's device in the probe, or -1 after printing what
 * the profile expected and every device and driver that was found.
 */
int host_check_find(const struct kernel_probe *probe,
		    const struct host_profile *profile);

/*
 * All three for a verb that needs the profile's device: loads the profile
 * arg names, probes Vulkan and finds the device; for a CPU host (a profile
 * without [device]) the probe holds the machine alone and Vulkan is not
 * asked. Returns EXIT_OK with the
 * profile and the probe in *out_profile and *out_probe (the caller's), or
 * the verb's exit status after saying why (both are NULL then).
 */
int host_check_device(struct host_profile **out_profile, struct kernel_probe **out_probe,
		      const char *arg);

/* The probe of a host without a profile, as an agent takes it: every
 * Vulkan device the loader lists (programs run on the first), or, said so,
 * the host alone with a note (docs/hosts.md, "Without a profile"). The
 * caller's. */
struct kernel_probe *host_check_unprofiled(void);

/* True when device index of the probe is the one the profile describes. */
bool host_check_matches(const struct kernel_probe *probe, unsigned index,
			const struct host_profile *profile);

#endif
