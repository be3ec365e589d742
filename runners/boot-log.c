/*
 * The previous boot's kernel log: what the machine kept of it (the journal,
 * pstore's records) after a GPU hang reset it in the middle of a step, when
 * the fault watch's line went down with the boot. Each source is read
 * whole, within bounds, and its lines matched against the host profile's
 * fault patterns; what each source gave, or why it gave nothing, is said
 * in the result's source.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runners.h"

/* What a scan gathers on its way: the first fault line, a part of source
 * per path or command tried, and the lines read from all of them. */
struct scan {
	const struct host_profile *profile;
	char *fault;
	struct strbuf said;
	size_t lines;
};

static void say(struct scan *s, const char *fmt, ...) PRINTF_LIKE(2, 3);

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

static void say(struct scan *s, const char *fmt, ...)
{
	va_list ap;

	if (s->said.len)
		strbuf_adds(&s->said, "; ");
	va_start(ap, fmt);
	strbuf_vaddf(&s->said, fmt, ap);
	va_end(ap);
}

/* line (len bytes) as kept: cut to max without splitting a character,
 * repaired where it is not UTF-8 (a pstore record may be binary). The
 * caller's. */
static char *kept_line(const char *line, size_t len, size_t max)
{
	struct strbuf sb = STRBUF_INIT;

	utf8_repair(&sb, line, utf8_cut(line, len, max));
	return strbuf_detach(&sb);
}

/* Matches each line of text (len bytes, its ends "\n" or "\r\n") until one
 * is a fault, which s keeps; returns how many lines text holds. */
static size_t scan_text(struct scan *s, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl;
	size_t n = 0, l;
	char *line;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		l = (size_t)((nl ? nl : end) - p);
		if (l && p[l - 1] == '\r')
			l--;
		n++;
		if (!s->fault && l) {
			line = xstrndup(p, l);
			if (host_profile_fault_match(s->profile, line, NULL))
				s->fault = kept_line(p, l, RUNNER_BOOT_LOG_LINE_MAX);
			free(line);
		}
		p = nl ? nl + 1 : end;
	}
	s->lines += n;
	return n;
}

/* Runs the command and scans what it printed. A command that does not
 * exit 0 is said with why and the first line it printed, and its output
 * is not scanned: its stderr is joined to it, and the words of an error
 * ("timeout", "not found") are not the log. Negative only when the
 * launcher could not start it at all. */
static int read_command(struct scan *s, const char *command)
{
	char *what = xasprintf("%s:", command), *failure;
	struct child ch;
	size_t n;
	int r;

	child_init(&ch);
	ch.timeout_s = RUNNER_BOOT_LOG_TIMEOUT_S;
	ch.capture_max = RUNNER_BOOT_LOG_READ_MAX;
	r = child_run_shell(&ch, command);
	if (r < 0)
		goto out;
	failure = child_failure(&ch, what);
	if (failure) {
		n = strcspn(ch.out.buf, "\r\n");
		if (n) {
			char *first = kept_line(ch.out.buf, n, RUNNER_BOOT_LOG_SAID_MAX);

			say(s, "%s ('%s')", failure, first);
			free(first);
		} else {
			say(s, "%s", failure);
		}
		free(failure);
		goto out;
	}
	n = scan_text(s, ch.out.buf, ch.out.len);
	say(s, "%s %zu line%s", what, n, plural(n));
	if (ch.out_total > (int64_t)ch.out.len)
		strbuf_addf(&s->said, " (its first %d MiB)", RUNNER_BOOT_LOG_READ_MAX >> 20);
out:
	child_release(&ch);
	free(what);
	return r;
}

/* Scans the regular file at path into *lines. Returns 0, or the negative
 * errno of fs_read_file with its sentence in err_last(): a file that
 * cannot be read is said, not an error of the scan. */
static int read_file(struct scan *s, const char *path, size_t *lines)
{
	char *text = NULL;
	size_t len;
	int r;

	r = fs_read_file(&text, &len, path, RUNNER_BOOT_LOG_READ_MAX);
	if (r == 0)
		*lines += scan_text(s, text, len);
	free(text);
	return r;
}

static int compare_names(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the regular files directly in d (at most
 * RUNNER_BOOT_LOG_FILES_MAX, in version order: dmesg-ramoops-2 before
 * dmesg-ramoops-10) into *out, the caller's; *more when there were more. */
static size_t dir_files(char ***out, DIR *d, bool *more)
{
	struct dirent *e;
	struct stat st;
	size_t n = 0;

	*out = NULL;
	*more = false;
	while ((e = readdir(d))) {
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == RUNNER_BOOT_LOG_FILES_MAX) {
			*more = true;
			break;
		}
		*out = xrealloc(*out, (n + 1) * sizeof(**out));
		(*out)[n++] = xstrdup(e->d_name);
	}
	if (n > 1)      /* qsort takes no NULL, even for nothing */
		qsort(*out, n, sizeof(**out), compare_names);
	return n;
}

/* Scans each regular file directly in the directory at path, as pstore
 * keeps one record of a crash's messages per file. */
static void read_dir(struct scan *s, const char *path)
{
	struct strbuf failed = STRBUF_INIT;
	size_t n, i, nread = 0, lines = 0;
	char **names, *file;
	bool more;
	DIR *d;

	d = opendir(path);
	if (!d) {
		say(s, "%s: %s", path, strerror(errno));
		return;
	}
	n = dir_files(&names, d, &more);
	closedir(d);
	for (i = 0; i < n; i++) {
		file = xasprintf("%s/%s", path, names[i]);
		if (read_file(s, file, &lines) == 0)
			nread++;
		else
			strbuf_addf(&failed, "; %s", err_last());
		free(file);
		free(names[i]);
	}
	free(names);
	if (n == 0)
		say(s, "%s: empty", path);
	else
		say(s, "%s: %zu file%s, %zu line%s", path, nread, plural(nread), lines,
		    plural(lines));
	if (more)
		strbuf_addf(&s->said, " (the first %d files)", RUNNER_BOOT_LOG_FILES_MAX);
	strbuf_adds(&s->said, failed.buf);
	strbuf_release(&failed);
}

/* Scans a file or a directory of the profile's boot_log. */
static void read_path(struct scan *s, const char *path)
{
	struct stat st;
	size_t lines = 0;

	if (stat(path, &st) < 0)
		say(s, "%s: %s", path, errno == ENOENT ? "none" : strerror(errno));
	else if (S_ISDIR(st.st_mode))
		read_dir(s, path);
	else if (read_file(s, path, &lines) == 0)
		say(s, "%s: %zu line%s", path, lines, plural(lines));
	else
		say(s, "%s", err_last());
}

int runner_boot_log_scan(struct runner_boot_log *out, const struct host_profile *profile)
{
	struct scan s = { .profile = profile, .said = STRBUF_INIT };
	const char *command = profile->boot_log_command;
	char *paths = xstrdup(profile->boot_log ? profile->boot_log : ""), *save = NULL, *w;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (command && *command)
		r = read_command(&s, command);
	for (w = strtok_r(paths, " \t", &save); w && r == 0; w = strtok_r(NULL, " \t", &save))
		read_path(&s, w);
	if (r < 0)
		goto out;
	if (!s.said.len)
		strbuf_adds(&s.said, "the profile names no boot_log_command and no boot_log");
	out->fault = s.fault;
	s.fault = NULL;
	out->source = s.lines ? strbuf_detach(&s.said) : xasprintf("none found: %s", s.said.buf);
out:
	free(paths);
	free(s.fault);
	strbuf_release(&s.said);
	return r;
}

void runner_boot_log_release(struct runner_boot_log *b)
{
	if (!b)
		return;
	free(b->fault);
	free(b->source);
	memset(b, 0, sizeof(*b));
}
