/*
 * The fault watch: the kernel log between a process's start and its end,
 * matched against the host profile's fault patterns. /dev/kmsg gives one
 * record per read ("pri,seq,usec,flags;text"), returns EAGAIN at the end
 * and EPIPE when records were overwritten; a plain file (for tests) is read
 * from the marked offset to its end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runners.h"

void runner_fault_watch_open(struct runner_fault_watch *w, const char *path,
			     const struct host_profile *profile)
{
	memset(w, 0, sizeof(*w));
	w->profile = profile;
	w->path = xstrdup(path);
	w->is_kmsg = !strcmp(path, "/dev/kmsg");
	w->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (w->fd < 0)
		w->off_reason = xasprintf("%s: %s", path, strerror(errno));
	else
		runner_fault_watch_mark(w);
}

void runner_fault_watch_mark(struct runner_fault_watch *w)
{
	if (w->fd >= 0)
		lseek(w->fd, 0, SEEK_END);
}

static char *match(struct runner_fault_watch *w, const char *text, size_t len)
{
	char *line = xstrndup(text, len);

	if (host_profile_fault_match(w->profile, line, NULL))
		return line;
	free(line);
	return NULL;
}

static char *check_kmsg(struct runner_fault_watch *w)
{
	char rec[8192], *found = NULL;
	size_t total = 0;
	ssize_t n;

	while (total < RUNNER_FAULT_READ_MAX) {
		const char *text, *end;

		n = read(w->fd, rec, sizeof(rec) - 1);
		if (n < 0) {
			if (errno == EINTR || errno == EPIPE)
				continue;
			break;
		}
		if (n == 0)
			break;
		total += (size_t)n;
		rec[n] = '\0';
		text = strchr(rec, ';');
		text = text ? text + 1 : rec;
		end = strchr(text, '\n');
		if (!found)
			found = match(w, text, end ? (size_t)(end - text) : strlen(text));
	}
	return found;
}

static char *check_file(struct runner_fault_watch *w)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[65536], *found = NULL;
	size_t start = 0, i;
	ssize_t n;

	while (sb.len < RUNNER_FAULT_READ_MAX && (n = read(w->fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		strbuf_add(&sb, buf, (size_t)n);
	}
	for (i = 0; i <= sb.len && !found; i++) {
		if (i == sb.len || sb.buf[i] == '\n') {
			if (i > start)
				found = match(w, sb.buf + start, i - start);
			start = i + 1;
		}
	}
	strbuf_release(&sb);
	return found;
}

char *runner_fault_watch_check(struct runner_fault_watch *w)
{
	if (w->fd < 0 || !w->profile || !w->profile->nfaults)
		return NULL;
	return w->is_kmsg ? check_kmsg(w) : check_file(w);
}

char *runner_fault_watch_state(const struct runner_fault_watch *w)
{
	if (w->off_reason)
		return xasprintf("off: %s", w->off_reason);
	return xstrdup("on");
}

void runner_fault_watch_close(struct runner_fault_watch *w)
{
	if (!w)
		return;
	/* A zeroed watch, never opened, has fd 0 and no path: it holds no
	 * descriptor, and closing 0 would close our stdin. */
	if (w->path && w->fd >= 0)
		close(w->fd);
	free(w->path);
	free(w->off_reason);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}
