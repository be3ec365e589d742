/* The one place that writes diagnostics; see common.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char *log_progname = "perfd";
static enum log_level log_level = LOG_LEVEL_INFO;

void log_init(const char *progname, enum log_level level)
{
	log_progname = progname;
	log_level = level;
}

static void vlog(const char *fmt, va_list ap, const char *suffix)
{
	fprintf(stderr, "%s: ", log_progname);
	vfprintf(stderr, fmt, ap);
	if (suffix)
		fprintf(stderr, ": %s", suffix);
	fputc('\n', stderr);
}

void log_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap, NULL);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_LEVEL_INFO)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap, NULL);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_LEVEL_DEBUG)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap, NULL);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap, strerror(saved));
	va_end(ap);
	exit(2);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap, NULL);
	va_end(ap);
	exit(2);
}
