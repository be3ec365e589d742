/*
 * The process table as /proc shows it: one process's stat fields, the
 * descendants of a process, and whether a process named so is still there.
 * The launcher uses it to find what outlived its SIGKILL (a task stuck in a
 * driver), owner.c to tell a row's owner from a later process of its pid.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

bool proc_stat_read(struct proc_stat *out, const char *who)
{
	char path[64], buf[1024], *p;
	size_t n;
	FILE *f;
	int i;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%s/stat", who);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	out->pid = strtol(buf, NULL, 10);
	/* The command name (field 2) may hold spaces and parentheses: the
	 * fields after it follow the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return false;
	out->state = p[2];
	out->ppid = strtol(p + 3, NULL, 10);
	for (i = 2; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (p)
		out->start = strtoull(p + 1, NULL, 10);
	return out->pid > 0 && out->start > 0;
}

/* Every process /proc lists, at most max, into a new array. */
static size_t proc_all(struct proc_stat **out, size_t max)
{
	struct dirent *e;
	size_t n = 0, cap = 0;
	DIR *d = opendir("/proc");

	*out = NULL;
	if (!d)
		return 0;
	while (n < max && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		if (proc_stat_read(&(*out)[n], e->d_name))
			n++;
	}
	closedir(d);
	return n;
}

size_t proc_descendants(struct proc_stat **out, long root, size_t max)
{
	struct proc_stat *all, *v = NULL;
	size_t nall = proc_all(&all, PROC_SCAN_MAX), n = 0, i, k;

	*out = NULL;
	for (i = 0; i < nall && n < max; i++) {
		if (all[i].pid != root)
			continue;
		v = xrealloc(v, sizeof(*v));
		v[n++] = all[i];
	}
	/* Breadth first: each found process's children join the list, once. */
	for (k = 0; k < n && n < max; k++) {
		for (i = 0; i < nall && n < max; i++) {
			if (all[i].ppid != v[k].pid || all[i].pid == root)
				continue;
			v = xrealloc(v, (n + 1) * sizeof(*v));
			v[n++] = all[i];
		}
	}
	free(all);
	*out = v;
	return n;
}

char proc_state(const struct proc_stat *p)
{
	struct proc_stat now;
	char who[32];

	snprintf(who, sizeof(who), "%ld", p->pid);
	if (!proc_stat_read(&now, who) || now.start != p->start || now.state == 'Z' ||
	    now.state == 'X')
		return 0;
	return now.state;
}

bool proc_is_there(const struct proc_stat *p)
{
	return proc_state(p) != 0;
}

/* The value of the line "key:\tVALUE" of /proc/PID/status, or "?". */
static void status_field(char *out, size_t len, long pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	FILE *f;

	snprintf(out, len, "?");
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, len, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		break;
	}
	fclose(f);
}

char *proc_describe(long pid)
{
	char name[64], state[64], wchan[64] = "", path[64];
	FILE *f;

	status_field(name, sizeof(name), pid, "Name");
	status_field(state, sizeof(state), pid, "State");
	snprintf(path, sizeof(path), "/proc/%ld/wchan", pid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(wchan, sizeof(wchan), f))
			wchan[0] = '\0';
		fclose(f);
	}
	wchan[strcspn(wchan, "\n")] = '\0';
	/* "0" is what the kernel says for a running task, or to one not
	 * allowed to see kernel addresses. */
	if (*wchan && strcmp(wchan, "0"))
		return xasprintf("pid %ld ('%s') in state %s, waiting in %s", pid, name, state,
				 wchan);
	return xasprintf("pid %ld ('%s') in state %s", pid, name, state);
}
