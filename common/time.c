/* Clocks; see common.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"

int64_t time_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void time_now_iso(char out[TIME_ISO_LEN])
{
	struct timespec ts;
	struct tm tm;
	char buf[96];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, (int)(ts.tv_nsec / 1000000));
	memcpy(out, buf, TIME_ISO_LEN - 1);
	out[TIME_ISO_LEN - 1] = '\0';
}

int time_parse_iso(struct timespec *out, const char *s)
{
	struct tm tm;
	int ms = 0, n = 0;

	memset(&tm, 0, sizeof(tm));
	memset(out, 0, sizeof(*out));
	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &n) != 7 || n != 24 || s[n])
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	out->tv_sec = timegm(&tm);
	out->tv_nsec = (long)ms * 1000000;
	return 0;
}
