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

/* The start time of process who in clock ticks since boot, and its pid as
 * /proc numbers it; a start of 0 when it is not there. */
static unsigned long long start_ticks(const char *who, long *out_pid)
{
	struct proc_stat st;

	if (!proc_stat_read(&st, who))
		return 0;
	if (out_pid)
		*out_pid = st.pid;
	return st.start;
}

void owner_boot(char out[40])
{
	const char *path = getenv("PERFD_BOOT_ID_FILE");
	FILE *f;

	/* The tests name another file: a machine that started again is one
	 * whose boot id changed (docs/testing.md). */
	if (!path || !*path)
		path = "/proc/sys/kernel/random/boot_id";
	f = fopen(path, "re");

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
	owner_boot(boot);
	snprintf(out, OWNER_LEN, "%ld %llu %llu %s", pid, start, pid_ns(), boot);
}

long owner_pid(const char *owner)
{
	long pid = owner ? strtol(owner, NULL, 10) : 0;

	return pid > 0 ? pid : 0;
}

bool owner_is_other_boot(const char *owner, char boot_out[40])
{
	unsigned long long start, ns;
	char boot[40], here[40];
	long pid;

	if (boot_out)
		boot_out[0] = '\0';
	if (!owner || sscanf(owner, "%ld %llu %llu %39s", &pid, &start, &ns, boot) != 4)
		return false;
	if (boot_out)
		snprintf(boot_out, 40, "%s", boot);
	owner_boot(here);
	return strcmp(boot, "-") && strcmp(here, "-") && strcmp(boot, here);
}

bool owner_is_gone(const char *owner)
{
	unsigned long long start, ns;
	char boot[40], who[32];
	long pid;

	if (!owner || sscanf(owner, "%ld %llu %llu %39s", &pid, &start, &ns, boot) != 4 ||
	    pid <= 0)
		return false;
	if (owner_is_other_boot(owner, NULL))
		return true;          /* the machine started again since */
	if (ns != pid_ns() || start == 0)
		return false;         /* another pid namespace, or no /proc: unknown */
	snprintf(who, sizeof(who), "%ld", pid);
	return start_ticks(who, NULL) != start;
}
