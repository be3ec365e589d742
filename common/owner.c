/*
 * Who owns a row left running: a process named so that its death can be
 * told from another process that later reuses its pid, and from a reboot.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

/* Fields 1 and 22 of /proc/WHO/stat: the pid as /proc numbers it and the
 * start time in clock ticks since boot; a start of 0 when the process is
 * not there (or /proc cannot be read). */
static unsigned long long start_ticks(const char *who, long *out_pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	size_t n;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%s/stat", who);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (out_pid)
		*out_pid = strtol(buf, NULL, 10);
	/* The command name (field 2) may hold spaces and parentheses: the
	 * fields after it follow the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (i = 2; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

static void boot_id(char out[40])
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");

	out[0] = '\0';
	if (f) {
		if (!fgets(out, 40, f))
			out[0] = '\0';
		fclose(f);
	}
	out[strcspn(out, "\n")] = '\0';
	if (!out[0])
		snprintf(out, 40, "-");
}

static unsigned long long pid_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

void owner_self(char out[OWNER_LEN])
{
	long pid = (long)getpid();
	unsigned long long start;
	char boot[40];

	/* /proc/self, not getpid(): in a pid namespace that sees another
	 * namespace's /proc, the pid that /proc knows this process by is
	 * what a later look at /proc/PID finds. Without /proc the start is 0,
	 * and owner_is_gone never judges such an owner gone. */
	start = start_ticks("self", &pid);
	boot_id(boot);
	snprintf(out, OWNER_LEN, "%ld %llu %llu %s", pid, start, pid_ns(), boot);
}

long owner_pid(const char *owner)
{
	long pid = owner ? strtol(owner, NULL, 10) : 0;

	return pid > 0 ? pid : 0;
}

bool owner_is_gone(const char *owner)
{
	unsigned long long start, ns;
	char boot[40], here[40], who[32];
	long pid;

	if (!owner || sscanf(owner, "%ld %llu %llu %39s", &pid, &start, &ns, boot) != 4 ||
	    pid <= 0)
		return false;
	boot_id(here);
	if (strcmp(boot, "-") && strcmp(here, "-") && strcmp(boot, here))
		return true;          /* the machine started again since */
	if (ns != pid_ns() || start == 0)
		return false;         /* another pid namespace, or no /proc: unknown */
	snprintf(who, sizeof(who), "%ld", pid);
	return start_ticks(who, NULL) != start;
}
