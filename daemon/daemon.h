/*
 * daemon: main(), the verbs and their wiring. Nothing below this folder has
 * main(), handles signals or prints to the user; modules return errors and
 * the verb that called them reports once.
 *
 * Each verb is `int cmd_NAME(int argc, char **argv)` with argv[0] the verb's
 * name; it returns the process exit status: 0 success, 1 a result the user
 * should look at (an invalid comparison, a failed verify), 2 a usage or
 * environment error (nothing was run or stored), 3 a required device absent.
 */
#ifndef PERFD_DAEMON_H
#define PERFD_DAEMON_H

#include <stdbool.h>

enum {
	EXIT_OK = 0,
	EXIT_RESULT = 1,
	EXIT_USAGE = 2,
	EXIT_NODEVICE = 3,
};

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage; /* the whole `perfd VERB --help` text */
};

int cmd_pair(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_list(int argc, char **argv);

extern const char cmd_pair_usage[];
extern const char cmd_show_usage[];
extern const char cmd_verify_usage[];
extern const char cmd_list_usage[];

/* Options every verb takes; parsed in main.c before the verb runs. */
struct global_opts {
	const char *db_path;       /* --db, default ./perfd.db */
	double lock_timeout_s;     /* --lock-timeout, default 10 */
};
extern struct global_opts global_opts;

/* Prints the verb's usage to stdout when argv holds --help or -h and
 * returns true; the verb then returns 0. */
bool cmd_wants_help(int argc, char **argv, const char *usage);

#endif
