/*
 * The hub's own JSON reader (web/wire/json-load.c) against jansson's, and
 * the canonical form (web/wire/canonical.c) against jansson's writer: any
 * text that record_json_read takes, json_loadb(JSON_REJECT_DUPLICATES)
 * takes as the same value; and the canonical form of that value is, byte
 * for byte, json_dumps' with sorted keys, compact, 17 digits
 * (record-internal.h promises both).
 */
#include <string.h>

#include "record-internal.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	json_t *ours, *theirs;
	json_error_t err;

	ours = record_json_read(text, size);
	theirs = json_loadb(text, size, JSON_REJECT_DUPLICATES, &err);
	if (ours) {
		FUZZ_CHECK(theirs);
		FUZZ_CHECK(json_equal(ours, theirs));
	}
	if (theirs) {
		struct strbuf canon = STRBUF_INIT;
		char *dump = json_dumps(theirs, JSON_SORT_KEYS | JSON_COMPACT |
					JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY);

		canonical_write(&canon, theirs, NULL);
		FUZZ_CHECK(dump);
		FUZZ_CHECK(!strcmp(canon.buf, dump));
		free(dump);
		strbuf_release(&canon);
	}
	json_decref(ours);
	json_decref(theirs);
	return 0;
}
