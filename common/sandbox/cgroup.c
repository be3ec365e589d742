/*
 * A cgroup of its own for each sandboxed step (docs/security.md, "The
 * sandbox"): where the machine offers cgroup v1's memory and pids
 * controllers and perfd may write them (root), every step runs in a new
 * group of each, bounded by the sandbox's step_memory_mb (its private
 * tmpfs included: their pages count to the group of whoever writes them)
 * and step_processes. The group is made before the fork, joined by the
 * child last before its exec, read after it ends (did the kernel's OOM
 * killer end it? did a fork fail at the bound?) and removed, with anything
 * left in it killed. Where there is none, sandbox_cgroups says why.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox-internal.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
static const char *const controllers[CGROUP_CONTROLLERS] = { "memory", "pids" };

/* Whether this process may make groups of both controllers. */
static bool writable(void)
{
	char path[64];
	size_t i;

	if (geteuid() != 0)
		return false;
	for (i = 0; i < CGROUP_CONTROLLERS; i++) {
		snprintf(path, sizeof(path), CGROUP_ROOT "/%s/cgroup.procs", controllers[i]);
		if (access(path, W_OK) < 0)
			return false;
	}
	return true;
}

/* Removes the groups a stopped perfd left: those named for a process that
 * is gone (another agent's stay, and so does one still in use). */
static void remove_stale(void)
{
	char parent[64], path[PATH_MAX];
	struct dirent *e;
	size_t i;
	DIR *d;

	for (i = 0; i < CGROUP_CONTROLLERS; i++) {
		snprintf(parent, sizeof(parent), CGROUP_ROOT "/%s/perfd", controllers[i]);
		d = opendir(parent);
		while (d && (e = readdir(d))) {
			long pid = strtol(e->d_name + 5, NULL, 10);

			if (strncmp(e->d_name, "step-", 5) || pid <= 0 ||
			    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
			rmdir(path);
		}
		if (d)
			closedir(d);
	}
}

void sandbox_cgroups_probe(struct sandbox *s)
{
	s->cgroups = writable();
	if (s->cgroups) {
		remove_stale();
		return;
	}
	if (access(CGROUP_ROOT "/cgroup.controllers", F_OK) == 0)
		s->no_cgroups = "the machine has cgroup v2, which perfd does not use yet";
	else if (geteuid() != 0)
		s->no_cgroups = "perfd is not root, and may not make cgroups";
	else
		s->no_cgroups = "cgroup v1's memory and pids controllers are not mounted at "
				CGROUP_ROOT;
}

bool sandbox_cgroups(const struct sandbox *s, const char **why)
{
	*why = s->no_cgroups;
	return s->cgroups;
}

/* Writes text to dir/name: 0, or -errno. */
static int put(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

/* The number after key in dir/name ("oom_kill 1", "max 3"); 0 when none. */
static long long counter(const char *dir, const char *name, const char *key)
{
	char path[PATH_MAX], line[128];
	long long n = 0;
	size_t klen = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ' ')
			n = strtoll(line + klen + 1, NULL, 10);
	fclose(f);
	return n;
}

int sandbox_cgroup_make(struct step_cgroup *g, const struct sandbox *s)
{
	static unsigned serial;
	char value[32];
	size_t i;
	int r = 0;

	memset(g, 0, sizeof(*g));
	if (!s->cgroups)
		return 0;
	for (i = 0; i < CGROUP_CONTROLLERS && r == 0; i++) {
		char parent[64];

		snprintf(parent, sizeof(parent), CGROUP_ROOT "/%s/perfd", controllers[i]);
		if (mkdir(parent, 0755) < 0 && errno != EEXIST)
			r = -errno;
		snprintf(g->dir[i], sizeof(g->dir[i]), "%s/step-%ld-%u", parent, (long)getpid(),
			 __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED));
		if (r == 0 && mkdir(g->dir[i], 0755) < 0)
			r = -errno;
		if (r < 0)
			g->dir[i][0] = '\0';
	}
	snprintf(value, sizeof(value), "%lld", (long long)s->limits.step_memory_mb * 1024 * 1024);
	if (r == 0)
		r = put(g->dir[0], "memory.limit_in_bytes", value);
	/* Swap is charged too where the kernel accounts it (the file is
	 * there): otherwise a step would page out past its bound. */
	if (r == 0)
		put(g->dir[0], "memory.memsw.limit_in_bytes", value);
	snprintf(value, sizeof(value), "%ld", s->limits.step_processes);
	if (r == 0)
		r = put(g->dir[1], "pids.max", value);
	/* The child opens them itself: the launcher closes every descriptor
	 * of ours in it before its exec. */
	for (i = 0; i < CGROUP_CONTROLLERS && r == 0; i++) {
		snprintf(g->procs[i], sizeof(g->procs[i]), "%s/cgroup.procs", g->dir[i]);
		if (access(g->procs[i], W_OK) < 0)
			r = -errno;
	}
	if (r < 0) {
		r = err_set(r, "cannot make the step's cgroup under " CGROUP_ROOT ": %s",
			    strerror(-r));
		sandbox_cgroup_remove(g);
	}
	return r;
}

bool sandbox_cgroup_join(const struct step_cgroup *g)
{
	size_t i;
	int fd;

	for (i = 0; i < CGROUP_CONTROLLERS; i++) {
		if (!*g->procs[i])
			continue;
		fd = open(g->procs[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1) {
			if (fd >= 0)
				close(fd);
			return false;
		}
		close(fd);
	}
	return true;
}

char *sandbox_cgroup_passed(const struct step_cgroup *g, const struct sandbox *s)
{
	if (!*g->dir[0])
		return NULL;
	if (counter(g->dir[0], "memory.oom_control", "oom_kill") > 0)
		return xasprintf("it passed the step's memory bound of %ld MB (its private "
				 "tmpfs included; [sandbox] step_memory_mb): the kernel killed it",
				 s->limits.step_memory_mb);
	if (counter(g->dir[1], "pids.events", "max") > 0)
		return xasprintf("it reached the step's bound of %ld processes ([sandbox] "
				 "step_processes): a fork failed", s->limits.step_processes);
	return NULL;
}

/* Kills what is left in dir's group: a step's processes are all gone by
 * the time it is removed, but for one that escaped the launcher's tree. */
static void kill_left(const char *dir)
{
	char path[PATH_MAX];
	long pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fscanf(f, "%ld", &pid) == 1)
		kill((pid_t)pid, SIGKILL);
	fclose(f);
}

void sandbox_cgroup_remove(struct step_cgroup *g)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	size_t i;
	int tries;

	for (i = 0; i < CGROUP_CONTROLLERS; i++) {
		g->procs[i][0] = '\0';
		if (!*g->dir[i])
			continue;
		/* A group empties a moment after its last process is reaped. */
		for (tries = 0; rmdir(g->dir[i]) < 0 && errno == EBUSY && tries < 100; tries++) {
			kill_left(g->dir[i]);
			nanosleep(&pause, NULL);
		}
		g->dir[i][0] = '\0';
	}
}
