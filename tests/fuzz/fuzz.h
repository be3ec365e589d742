/*
 * What the fuzz targets share (docs/testing.md, "Fuzzing"): libFuzzer's
 * entry point and a check that ends the run as a crash, whatever NDEBUG
 * says, so that a broken promise of a reader is found like a bad access.
 */
#ifndef PERFD_FUZZ_H
#define PERFD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                               \
			abort();                                                      \
		}                                                                     \
	} while (0)

#endif
