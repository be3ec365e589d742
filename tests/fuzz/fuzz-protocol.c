/*
 * The line protocol (runners/protocol.c) as a measured program's output
 * reaches it: fed in reads of any size (the first byte of the input sets
 * the size, so that lines split across reads too), then a last line
 * without its newline; each kept RESULT line is taken apart as the
 * contract runners' receipts do.
 */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "runners.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct runner_protocol p;
	size_t chunk, off, i;
	char *digest;

	if (!size)
		return 0;
	chunk = (size_t)data[0] * 7 + 1;
	data++;
	size--;
	runner_protocol_init(&p);
	for (off = 0; off < size; off += chunk)
		runner_protocol_feed(&p, (const char *)data + off,
				     size - off < chunk ? size - off : chunk);
	runner_protocol_finish(&p);

	FUZZ_CHECK(p.nmetrics <= RUNNER_METRICS_MAX);
	FUZZ_CHECK(p.nlines <= RUNNER_LINES_MAX);
	FUZZ_CHECK(p.nerrors <= RUNNER_ERRORS_MAX);
	FUZZ_CHECK(p.lines_skipped <= p.lines_seen);
	for (i = 0; i < p.nmetrics; i++)
		FUZZ_CHECK(runner_metric_name_is_valid(p.metrics[i].name));
	for (i = 0; i < p.nlines; i++) {
		struct runner_result r;
		int rc;

		FUZZ_CHECK(strlen(p.lines[i].text) <= RUNNER_KEPT_LINE_MAX);
		rc = runner_result_parse(&r, p.lines[i].text);
		FUZZ_CHECK(rc == 0 || rc == -EINVAL);
		FUZZ_CHECK(rc < 0 || r.name);
		runner_result_release(&r);
	}
	digest = runner_protocol_digest(&p);
	FUZZ_CHECK(!digest == !p.ndigests);
	free(digest);
	runner_protocol_release(&p);
	return 0;
}
