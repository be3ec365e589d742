/*
 * A host profile (hosts/profile.c, through common/ini.c): any text as the
 * file's, parsed and checked; a profile it accepts holds what perfd pair
 * and the agent rely on, and its fault patterns match a kernel-log line.
 */
#include <errno.h>
#include <math.h>

#include "hosts.h"
#include "fuzz-errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strbuf errors = STRBUF_INIT;
	struct host_profile *p = NULL;
	int rc;

	rc = host_profile_parse(&p, "fuzz.conf", (const char *)data, size, &errors);
	fuzz_check_errors(&errors, "fuzz.conf", rc);
	FUZZ_CHECK(!p == (rc < 0));
	if (p) {
		FUZZ_CHECK(p->name && *p->name);
		FUZZ_CHECK(isfinite(p->process_timeout_s) && p->process_timeout_s > 0);
		FUZZ_CHECK(isfinite(p->noise) && isfinite(p->min_effect));
		FUZZ_CHECK(p->pairs >= 1 && p->pairs <= p->max_pairs &&
			   p->max_pairs <= HOST_MAX_PAIRS);
		host_profile_fault_match(p, "amdgpu: ring gfx timeout, GPU reset", NULL);
	}
	host_profile_free(p);
	strbuf_release(&errors);
	return 0;
}
