/*
 * daemon/agent's configuration, between its two files: config.c reads the
 * file (its sections, the checks of the whole, load and release) and
 * config-keys.c sets each section's keys. Nothing outside daemon/agent
 * includes this.
 */
#ifndef PERFD_DAEMON_AGENT_CONFIG_INTERNAL_H
#define PERFD_DAEMON_AGENT_CONFIG_INTERNAL_H

#include "agent.h"

enum section { SEC_NONE, SEC_AGENT, SEC_REPO, SEC_GITHUB, SEC_HUB, SEC_CALIBRATION, SEC_SANDBOX, SEC_HISTORY, SEC_BUILD,
	SEC_RUNNER, SEC_CASE, SEC_OTHER };

struct parse {
	struct config_report r;    /* the file's name, the line, its errors */
	enum section sec;
	bool suite_only;           /* a suite read from the repository */
	struct agent_config *c;    /* NULL when suite_only */
	struct agent_suite *s;
	bool seen_build;
	bool seen_calibration;
	bool seen_sandbox;
	bool seen_history;
};

/* Any words, as branches or a command's. */
extern const struct config_words agent_any_words;

/* Sets key k of the section ps is in to v, or reports why not on ps's
 * line; a key outside any section is reported too. */
void agent_config_key(struct parse *ps, const char *k, const char *v);

#endif
