/*
 * The agent's configuration (daemon/agent/config.c, through common/ini.c):
 * any text as the file's, parsed and checked. The files it names (a hub's
 * CA) are read as the agent would, relative to where the run is.
 */
#include <errno.h>

#include "agent.h"
#include "fuzz-errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf errors = STRBUF_INIT;
	struct agent_config *c = NULL;
	int rc;

	rc = agent_config_parse(&c, "agent.conf", (const char *)data, size, &errors);
	fuzz_check_errors(&errors, "agent.conf", rc);
	FUZZ_CHECK(!c == (rc < 0));
	if (c) {
		char hash[65];

		FUZZ_CHECK(c->url && c->database && c->workdir && c->default_branch);
		if (!c->suite_file)
			FUZZ_CHECK(agent_suite_recipe_hash(hash, &c->suite) == 0);
	}
	agent_config_free(c);
	strbuf_release(&errors);
	return 0;
}
