/* Per-thread error detail; see common.h. */
#include <stdio.h>
#include <string.h>

#include "common.h"

static _Thread_local char err_detail[1024];

/* Formatted aside first, so that err_last() may be one of the arguments:
 * err_set(r, "reading X: %s", err_last()) adds context to a detail. */
int err_set(int code, const char *fmt, ...)
{
	char buf[sizeof(err_detail)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memcpy(err_detail, buf, sizeof(buf));
	return code;
}

const char *err_last(void)
{
	return err_detail;
}

void err_clear(void)
{
	err_detail[0] = '\0';
}
