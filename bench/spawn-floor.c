/*
 * spawn-floor N PROGRAM: the least a harness can cost per process. Starts
 * PROGRAM with posix_spawn and waits for it, N times in a row, with no
 * pipes, no records and no environment of its own, and prints the time
 * per process in milliseconds (CLOCK_MONOTONIC around the whole loop).
 * Exits 1 when PROGRAM cannot start or exits non-zero.
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "clock.h"

extern char **environ;

int main(int argc, char **argv)
{
	char *child_argv[2];
	double t0, t1;
	long n, i;
	int r, status;
	pid_t pid;

	if (argc != 3 || (n = strtol(argv[1], NULL, 10)) < 1) {
		fprintf(stderr, "usage: spawn-floor N PROGRAM\n");
		return 2;
	}
	child_argv[0] = argv[2];
	child_argv[1] = NULL;
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		r = posix_spawn(&pid, argv[2], NULL, NULL, child_argv, environ);
		if (r) {
			fprintf(stderr, "spawn-floor: cannot run '%s': %s\n", argv[2], strerror(r));
			return 1;
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "spawn-floor: '%s' failed\n", argv[2]);
			return 1;
		}
	}
	t1 = now_ms();
	printf("%.6f\n", (t1 - t0) / (double)n);
	return 0;
}
