/*
 * spin UNITS: CPU-bound work in UNITS equal units (a unit is about 1.5 ms
 * on the machine of docs/performance.md), then one line of the perfd
 * protocol:
 *   TIMING spin_ms=...
 * the time of the work alone, from CLOCK_MONOTONIC. The work is a chain of
 * dependent xorshift steps, so it cannot be vectorized or cut short, and
 * its time is proportional to UNITS. Exits 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STEPS_PER_UNIT 600000

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	volatile uint64_t sink;
	uint64_t x = 88172645463325252ull;
	long units, u, i;
	double t0, t1;

	if (argc != 2 || (units = strtol(argv[1], NULL, 10)) < 1 || units > 100000) {
		fprintf(stderr, "usage: spin UNITS (1 to 100000)\n");
		return 2;
	}
	t0 = now_ms();
	for (u = 0; u < units; u++) {
		for (i = 0; i < STEPS_PER_UNIT; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
	}
	t1 = now_ms();
	sink = x;
	(void)sink;
	printf("TIMING spin_ms=%.3f\n", t1 - t0);
	return 0;
}
