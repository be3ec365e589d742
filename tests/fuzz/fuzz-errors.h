/*
 * The promise every configuration reader makes (docs/config.md): a text it
 * refuses gets at least one line, each "NAME:LINE: message" or "NAME:
 * message", and one it accepts gets none.
 */
#ifndef PERFD_FUZZ_ERRORS_H
#define PERFD_FUZZ_ERRORS_H

#include <string.h>

#include "common.h"
#include "fuzz.h"

static inline void fuzz_check_errors(const struct strbuf *errors, const char *name, int rc)
{
	size_t n = strlen(name);
	const char *line;

	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	FUZZ_CHECK((rc == 0) == (errors->len == 0));
	FUZZ_CHECK(errors->len == 0 || errors->buf[errors->len - 1] == '\n');
	for (line = errors->buf; *line; line = strchr(line, '\n') + 1)
		FUZZ_CHECK(!strncmp(line, name, n) && line[n] == ':');
}

#endif
