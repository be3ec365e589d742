/*
 * The hub's configuration (daemon/hubd/config.c, through common/ini.c):
 * any text as the file's, parsed and checked. The certificate and key it
 * names are read as the hub would, relative to where the run is.
 */
#include <errno.h>

#include "hubd.h"
#include "fuzz-errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf errors = STRBUF_INIT;
	struct hub_config *c = NULL;
	int rc;

	rc = hub_config_parse(&c, "hub.conf", (const char *)data, size, &errors);
	fuzz_check_errors(&errors, "hub.conf", rc);
	FUZZ_CHECK(!c == (rc < 0));
	hub_config_free(c);
	strbuf_release(&errors);
	return 0;
}
