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
#include "cli.h"

enum {
	EXIT_OK = 0,
	EXIT_RESULT = 1,      /* a result to look at: invalid comparison, failed verify */
	EXIT_USAGE = 2,       /* usage or environment error */
	EXIT_NODEVICE = 3,    /* a required device is absent, or the host quarantined */
	EXIT_INTERRUPTED = 130,
};

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
int cmd_log(int argc, char **argv);
int cmd_retry(int argc, char **argv);

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
extern const char cmd_log_usage[];
extern const char cmd_retry_usage[];

#endif
