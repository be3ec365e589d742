/*
 * demo: times the row kernel on a fixed matrix and prints what it found in
 * perfd's line protocol:
 *
 *   TIMING kernel_ms=<the median dispatch, in milliseconds>
 *   DIGEST <the first 12 hex digits of FNV-1a 64 over the output bytes>
 *   TIMING_RECORD_VALID
 *
 * shader.spv is loaded from the directory that holds this program.
 */
#include "gpu.h"

/* 2 Mi values (8 MiB): large enough that the kernel, not the dispatch,
 * sets the time; small enough for a CPU Vulkan driver. */
#define ROWS 256
#define COLS 8192
#define REPS 5
#define SEED 20261129u

/* FNV-1a, 64 bits: a portable, deterministic fingerprint of output bytes. */
static uint64_t fnv1a64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3u;
	}
	return h;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int32_t *x = xmalloc((size_t)ROWS * COLS * sizeof(*x));
	uint32_t out[ROWS];
	double ms[REPS];
	struct gpu g;

	(void)argc;
	matrix_fill(x, (size_t)ROWS * COLS, SEED);
	gpu_open(&g, argv[0]);
	gpu_run(&g, x, ROWS, COLS, out, REPS, ms);
	gpu_close(&g);
	free(x);

	/* The median: one slow dispatch (a preempted thread, a clock change)
	 * does not move it. */
	qsort(ms, REPS, sizeof(ms[0]), by_value);
	if (!g.timestamps)
		printf("SUMMARY timing by wall clock\n");
	printf("TIMING kernel_ms=%.4f\n", ms[REPS / 2]);
	printf("DIGEST %012llx\n", (unsigned long long)(fnv1a64(out, sizeof(out)) >> 16));
	printf("TIMING_RECORD_VALID\n");
	return 0;
}
