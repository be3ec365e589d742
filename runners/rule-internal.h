/*
 * Shared by the files of the rule (pair-rule.c, pair-rule2.c, rule-run.c),
 * and by mde.c, which judges simulated comparisons through rule2_decide:
 * one application of the rule, the summary being filled and what each step
 * hands the next. The steps run in a fixed order, and that order is the
 * order of the reasons and flags a stored summary holds.
 */
#ifndef PERFD_RULE_INTERNAL_H
#define PERFD_RULE_INTERNAL_H

#include <stdarg.h>

#include "runners.h"

struct rule_run {
	const struct db_comparison *c;
	const struct runner_rule_version *v;  /* c->rule's row, asked by feature */
	struct db_summary s;
	size_t npairs;                 /* c->pairs; with stages, the pairs that ran */
	const struct db_process **old_of, **new_of; /* by pair number 1..npairs */
	double *gains, *olds, *news;   /* the pairs that have a gain, in pair order */
	size_t ngains;
	bool invalid;
	int pos, neg;                  /* gains above and below 0 */
	int need;                      /* the sign test's count; 0: none passes */
};

/* Appends a reason or a flag to a summary's list (rule-run.c, as are
 * rule_reject and rule_set_invalid). */
void rule_note_v(char ***list, size_t *n, const char *fmt, va_list ap);
void rule_note(char ***list, size_t *n, const char *fmt, ...) PRINTF_LIKE(3, 4);
/* The comparison is invalid, for this reason among others. */
void rule_reject(struct rule_run *run, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* Marks the comparison invalid and drops every figure. */
void rule_set_invalid(struct rule_run *run);

/* The stages and verdict of a version with RUNNER_RULE_F_STAGES
 * (pair-rule2.c), on a valid comparison whose gains and figures are
 * computed. */
void rule2_decide(struct rule_run *run);
/* The pair count of a version with stages: the highest pair number a pair
 * process has. */
size_t rule2_pairs_run(const struct db_comparison *c);

#endif
