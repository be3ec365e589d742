/*
 * A suite read from a repository's default branch ([repo] suite,
 * daemon/agent/config.c): any text as the file's, parsed and checked, and
 * the recipe hash of what it accepts.
 */
#include <errno.h>

#include "agent.h"
#include "fuzz-errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf errors = STRBUF_INIT;
	struct agent_suite s;
	char hash[65];
	int rc;

	rc = agent_suite_parse(&s, (const char *)data, size, "perfd.suite", &errors);
	fuzz_check_errors(&errors, "perfd.suite", rc);
	if (rc == 0) {
		FUZZ_CHECK(s.build_command && s.nartifacts);
		FUZZ_CHECK(agent_suite_recipe_hash(hash, &s) == 0);
		FUZZ_CHECK(strlen(hash) == 64);
	}
	agent_suite_release(&s);
	strbuf_release(&errors);
	return 0;
}
