/*
 * The hub's ingest bodies (runners/record.c, read by runners/json-load.c):
 * any bytes as a POSTed body, taken apart by each of the four readers
 * (perfd-comparison/2, perfd-job/1, perfd-build/1, perfd-heartbeat/1).
 * Every refusal is one of the documented codes with a detail; a heartbeat
 * a reader accepts, built again as an agent sends it, is read the same.
 */
#include <errno.h>
#include <string.h>

#include "runners.h"
#include "fuzz.h"

static void check_refusal(int rc)
{
	FUZZ_CHECK(rc == -EINVAL || rc == -EBADMSG);
	FUZZ_CHECK(*err_last());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct runner_record rec;
	struct runner_job_record job;
	struct runner_build_record build;
	struct runner_heartbeat hb;
	int rc;

	rc = runner_record_parse(&rec, text, size);
	if (rc < 0)
		check_refusal(rc);
	else
		FUZZ_CHECK(strlen(rec.sha256) == 64 && rec.c.id == 0);
	runner_record_release(&rec);

	rc = runner_job_record_parse(&job, text, size);
	if (rc < 0)
		check_refusal(rc);
	else
		FUZZ_CHECK(strlen(job.sha256) == 64 && job.job.id == 0);
	runner_job_record_release(&job);

	rc = runner_build_record_parse(&build, text, size);
	if (rc < 0)
		check_refusal(rc);
	else
		FUZZ_CHECK(strlen(build.sha256) == 64 && strlen(build.build_sha256) == 64);
	runner_build_record_release(&build);

	rc = runner_heartbeat_parse(&hb, text, size);
	if (rc < 0) {
		check_refusal(rc);
	} else {
		/* What the hub keeps of a heartbeat, sent again, is read the same. */
		struct strbuf once = STRBUF_INIT, twice = STRBUF_INIT;
		struct runner_heartbeat again;

		FUZZ_CHECK(runner_heartbeat_build(&once, &hb) == 0);
		FUZZ_CHECK(runner_heartbeat_parse(&again, once.buf, once.len) == 0);
		FUZZ_CHECK(runner_heartbeat_build(&twice, &again) == 0);
		FUZZ_CHECK(once.len == twice.len && !memcmp(once.buf, twice.buf, once.len));
		runner_heartbeat_release(&again);
		strbuf_release(&once);
		strbuf_release(&twice);
	}
	runner_heartbeat_release(&hb);
	return 0;
}
