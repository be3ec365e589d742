/*
 * burner WORKERS MEAN_MS MAX_S SEED: a background load that switches on
 * and off at random. WORKERS processes (one per CPU, say) each alternate
 * between busy-looping and sleeping, every period drawn from an
 * exponential distribution of mean MEAN_MS and each state chosen by a
 * coin, so the load at any moment is 0 to WORKERS CPUs and changes
 * without a pattern a measurement could follow. The draws come from SEED
 * (a number), each worker its own stream.
 *
 * It exits by itself after MAX_S seconds, whatever happens to the program
 * that started it, and its workers die with it (PR_SET_PDEATHSIG).
 * Exits 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* One worker: on or off by a coin, for an exponential time, until end. */
static void work(uint64_t s, double mean_ms, int64_t end)
{
	volatile uint64_t sink = 1;

	for (int64_t t = now_ns(); t < end; t = now_ns()) {
		double u = ((double)(next(&s) >> 11) + 0.5) / 9007199254740992.0;
		int64_t until = t + (int64_t)(-log(u) * mean_ms * 1e6);
		int busy = (int)(next(&s) & 1);

		if (until > end)
			until = end;
		if (busy)
			while (now_ns() < until)
				sink = sink * 6364136223846793005ULL + 1;
		else
			sleep_until(until);
	}
}

int main(int argc, char **argv)
{
	long workers;
	double mean_ms, max_s;
	uint64_t seed;
	int64_t end;
	pid_t parent = getpid();

	if (argc != 5) {
		fprintf(stderr, "usage: burner WORKERS MEAN_MS MAX_S SEED\n");
		return 2;
	}
	workers = strtol(argv[1], NULL, 10);
	mean_ms = strtod(argv[2], NULL);
	max_s = strtod(argv[3], NULL);
	seed = strtoull(argv[4], NULL, 10);
	if (workers < 1 || workers > 256 || !(mean_ms >= 1 && mean_ms <= 60000) ||
	    !(max_s > 0 && max_s <= 86400)) {
		fprintf(stderr, "burner: expected 1 <= WORKERS <= 256, 1 <= MEAN_MS <= 60000, "
			"0 < MAX_S <= 86400\n");
		return 2;
	}
	end = now_ns() + (int64_t)(max_s * 1e9);
	for (long w = 0; w < workers; w++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("burner: fork");
			return 1;
		}
		if (pid == 0) {
			/* Its own stream: the seed's and the worker's number mixed. */
			uint64_t t = seed ^ ((uint64_t)w << 48), s = next(&t);

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(0);
			work(s, mean_ms, end);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
