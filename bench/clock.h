/*
 * clock.h: CLOCK_MONOTONIC for the bench programs that read it (burner,
 * ramp, spawn-floor, timeit), each compiled alone by bench_cc in lib.sh.
 * Not for spin.c, which bench/sandbox.sh builds away from this directory.
 */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H
#include <stdint.h>
#include <time.h>

/* now_ns: CLOCK_MONOTONIC in nanoseconds. */
static inline int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* now_ms: CLOCK_MONOTONIC in milliseconds. */
static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* sleep_until: sleeps until CLOCK_MONOTONIC reads T nanoseconds. */
static inline void sleep_until(int64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000LL), (long)(t % 1000000000LL) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}
#endif
