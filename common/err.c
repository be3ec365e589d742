/* Per-thread error detail; see common.h. */
#include <stdio.h>

#include "common.h"

static _Thread_local char err_detail[1024];

int err_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err_detail, sizeof(err_detail), fmt, ap);
	va_end(ap);
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
