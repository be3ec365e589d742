/*
 * daemon: main(), the verbs and their wiring. Nothing below this folder has
 * main(), handles signals or prints to the user; modules return errors and
 * the verb that called them reports once, with err_last().
 *
 * Each verb is `int cmd_NAME(int argc, char **argv)` with argv[0] the verb's
 * name; it returns the process's exit status (the EXIT_ values below).
 */
#ifndef PERFD_DAEMON_H
#define PERFD_DAEMON_H

#include <stdarg.h>
#include <stdbool.h>

#include "common.h"
#include "db.h"

enum {
	EXIT_OK = 0,
	EXIT_RESULT = 1,      /* a result to look at: invalid comparison, failed verify */
	EXIT_USAGE = 2,       /* usage or environment error */
	EXIT_NODEVICE = 3,    /* a required device is absent, or the host quarantined */
	EXIT_INTERRUPTED = 130,
};

#define DEFAULT_DB "perfd.db"
#define DEFAULT_LOCK_TIMEOUT_S 10.0

int cmd_pair(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_canary(int argc, char **argv);
int cmd_host(int argc, char **argv);
int cmd_alerts(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_comment(int argc, char **argv);
int cmd_fetch(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_token(int argc, char **argv);

extern const char cmd_pair_usage[];
extern const char cmd_show_usage[];
extern const char cmd_verify_usage[];
extern const char cmd_list_usage[];
extern const char cmd_probe_usage[];
extern const char cmd_canary_usage[];
extern const char cmd_host_usage[];
extern const char cmd_alerts_usage[];
extern const char cmd_agent_usage[];
extern const char cmd_demo_usage[];
extern const char cmd_serve_usage[];
extern const char cmd_comment_usage[];
extern const char cmd_fetch_usage[];
extern const char cmd_export_usage[];
extern const char cmd_token_usage[];

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

#endif
