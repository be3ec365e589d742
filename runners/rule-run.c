/*
 * One application of the rule, the bookkeeping its steps share
 * (rule-internal.h): a reason or a flag appended to the summary, and the
 * comparison made invalid. pair-rule.c's steps and pair-rule2.c's stages
 * both note through these, so neither needs the other for them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rule-internal.h"

/* Appends a reason or a flag to a summary's list. */
void rule_note_v(char ***list, size_t *n, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	*list = xrealloc(*list, (*n + 1) * sizeof(char *));
	(*list)[(*n)++] = strbuf_detach(&sb);
}

void rule_note(char ***list, size_t *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rule_note_v(list, n, fmt, ap);
	va_end(ap);
}

void rule_reject(struct rule_run *run, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rule_note_v(&run->s.reasons, &run->s.nreasons, fmt, ap);
	va_end(ap);
	run->invalid = true;
}

/* An invalid comparison has a verdict and reasons, and no figure at all. */
void rule_set_invalid(struct rule_run *run)
{
	size_t i;

	snprintf(run->s.verdict, sizeof(run->s.verdict), "invalid");
	for (i = 0; i < run->npairs; i++)
		run->s.pair_gains[i] = NAN;
	run->s.has_gain = false;
	run->s.gain_median = run->s.gain_min = run->s.gain_max = 0;
	memset(&run->s.old, 0, sizeof(run->s.old));
	memset(&run->s.new, 0, sizeof(run->s.new));
}
