/*
 * The hub's ingest bodies (web/wire/record.c, read by jansson's json_loadb):
 * any bytes as a POSTed body, taken apart by each of the four readers
 * (perfd-comparison/2, perfd-job/1, perfd-build/1, perfd-heartbeat/1),
 * and as the hub's answer to a heartbeat, as an agent reads it. Every
 * refusal is one of the documented codes with a detail; a heartbeat a
 * reader accepts, built again as an agent sends it, is read the same.
 */
#include <errno.h>
#include <string.h>

#include "runners.h"
#include "wire.h"
#include "fuzz.h"

static void check_refusal(int rc)
{
	FUZZ_CHECK(rc == -EINVAL || rc == -EBADMSG);
	FUZZ_CHECK(*err_last());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct wire_record rec;
	struct wire_job_record job;
	struct wire_build_record build;
	struct wire_heartbeat hb;
	struct wire_heartbeat_reply reply;
	int rc;

	rc = wire_record_parse(&rec, text, size);
	if (rc < 0)
		check_refusal(rc);
	else
		FUZZ_CHECK(strlen(rec.sha256) == 64 && rec.c.id == 0);
	wire_record_release(&rec);

	rc = wire_job_record_parse(&job, text, size);
	if (rc < 0)
		check_refusal(rc);
	else
		FUZZ_CHECK(strlen(job.sha256) == 64 && job.job.id == 0);
	wire_job_record_release(&job);

	rc = wire_build_record_parse(&build, text, size);
	if (rc < 0)
		check_refusal(rc);
	else
		FUZZ_CHECK(strlen(build.sha256) == 64 && strlen(build.build_sha256) == 64);
	wire_build_record_release(&build);

	rc = wire_heartbeat_parse(&hb, text, size);
	if (rc < 0) {
		check_refusal(rc);
	} else {
		/* What the hub keeps of a heartbeat, sent again, is read the same. */
		struct strbuf once = STRBUF_INIT, twice = STRBUF_INIT;
		struct wire_heartbeat again;

		FUZZ_CHECK(wire_heartbeat_build(&once, &hb) == 0);
		FUZZ_CHECK(wire_heartbeat_parse(&again, once.buf, once.len) == 0);
		FUZZ_CHECK(wire_heartbeat_build(&twice, &again) == 0);
		FUZZ_CHECK(once.len == twice.len && !memcmp(once.buf, twice.buf, once.len));
		wire_heartbeat_release(&again);
		strbuf_release(&once);
		strbuf_release(&twice);
	}
	wire_heartbeat_release(&hb);

	rc = wire_heartbeat_reply_parse(&reply, text, size);
	FUZZ_CHECK(rc == 0 || rc == -EPROTO);
	FUZZ_CHECK(reply.ngreenlit <= WIRE_GREENLIT_MAX);
	wire_heartbeat_reply_release(&reply);
	return 0;
}
