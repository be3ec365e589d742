/*
 * timeit LOG PROGRAM [ARGS...]: runs PROGRAM with its stdout and stderr in
 * LOG and prints its wall time in milliseconds, read from CLOCK_MONOTONIC
 * just before the spawn and just after the reap. Exits with PROGRAM's exit
 * status (128 + N when killed by signal N), or 127 when it cannot start.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "clock.h"

extern char **environ;

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	double t0, t1;
	pid_t pid;
	int r, status;

	if (argc < 3) {
		fprintf(stderr, "usage: timeit LOG PROGRAM [ARGS...]\n");
		return 2;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	t0 = now_ms();
	r = posix_spawnp(&pid, argv[2], &fa, NULL, argv + 2, environ);
	if (r) {
		fprintf(stderr, "timeit: cannot run '%s': %s\n", argv[2], strerror(r));
		return 127;
	}
	while (waitpid(pid, &status, 0) < 0)
		;
	t1 = now_ms();
	printf("%.3f\n", t1 - t0);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
