/* Unit tests of rule-version.c: the versions of the rule as rows, each
 * name found and every other refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runners.h"

#define ALL_FEATURES (RUNNER_RULE_F_STAGES | RUNNER_RULE_F_POSITIVE | RUNNER_RULE_F_DIRECTION | \
		      RUNNER_RULE_F_CALIBRATED | RUNNER_RULE_F_BOTH_TESTS | \
		      RUNNER_RULE_F_SCALE_GATE | RUNNER_RULE_F_LOAD_GATE)

static void test_names(void **state)
{
	const struct runner_rule_version *all, *v;
	size_t n, i;

	all = runner_rule_versions(&n);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++) {
		assert_int_equal(runner_rule_lookup(&v, all[i].name), 0);
		assert_ptr_equal(v, &all[i]);
	}
	/* Stored names never change: every database holds them. */
	assert_string_equal(all[0].name, "pairs-median/1");
	assert_string_equal(all[1].name, "pairs-median/2");
	assert_string_equal(all[2].name, "pairs-median/2.1");
	assert_string_equal(all[3].name, "pairs-median/2.2");
	assert_ptr_equal(runner_rule_newest(), &all[n - 1]);
	assert_string_equal(RUNNER_RULE, "pairs-median/2.2");
}

static void test_unknown_refused(void **state)
{
	static const char *const unknown[] = { "pairs-median/9", "pairs-median/2.3",
					       "pairs-median/2.20", "pairs-median", "", NULL };
	const struct runner_rule_version *v = runner_rule_newest();
	size_t i;

	for (i = 0; i < sizeof(unknown) / sizeof(*unknown); i++) {
		assert_int_equal(runner_rule_lookup(&v, unknown[i]), -EINVAL);
		assert_null(v);
		assert_false(runner_rule_has(unknown[i], 0));
		assert_false(runner_rule_has(unknown[i], RUNNER_RULE_F_STAGES));
	}
	assert_int_equal(runner_rule_lookup(&v, "pairs-median/9"), -EINVAL);
	assert_string_equal(err_last(), "rule 'pairs-median/9' is unknown to this perfd, which "
			    "knows pairs-median/1, pairs-median/2, pairs-median/2.1 and "
			    "pairs-median/2.2");
}

/* What each version does, as docs/rule.md's table says it. */
static void test_features(void **state)
{
	assert_false(runner_rule_has("pairs-median/1", RUNNER_RULE_F_STAGES));
	assert_false(runner_rule_has("pairs-median/1", RUNNER_RULE_F_CALIBRATED));
	assert_true(runner_rule_has("pairs-median/1", 0));
	assert_true(runner_rule_has("pairs-median/2", RUNNER_RULE_F_STAGES |
				    RUNNER_RULE_F_POSITIVE | RUNNER_RULE_F_DIRECTION |
				    RUNNER_RULE_F_CALIBRATED));
	assert_false(runner_rule_has("pairs-median/2", RUNNER_RULE_F_BOTH_TESTS));
	assert_true(runner_rule_has("pairs-median/2.1", RUNNER_RULE_F_BOTH_TESTS |
				    RUNNER_RULE_F_SCALE_GATE));
	assert_false(runner_rule_has("pairs-median/2.1", RUNNER_RULE_F_LOAD_GATE));
	assert_true(runner_rule_has("pairs-median/2.2", ALL_FEATURES));
	assert_false(runner_rule_version_has(NULL, 0));
}

/* Each feature is one bit with a name, and names no other. */
static void test_feature_names(void **state)
{
	unsigned f, g;

	for (f = 1; f <= ALL_FEATURES; f <<= 1) {
		assert_non_null(runner_rule_feature_name(f));
		for (g = 1; g < f; g <<= 1)
			assert_string_not_equal(runner_rule_feature_name(f),
						runner_rule_feature_name(g));
	}
	assert_null(runner_rule_feature_name(ALL_FEATURES + 1));
	assert_null(runner_rule_feature_name(RUNNER_RULE_F_STAGES | RUNNER_RULE_F_POSITIVE));
}

/* The cells of one table line "| a | b |", trimmed, backquotes dropped, into
 * cell[]; returns how many. The line is cut in place. */
static size_t table_cells(char **cell, size_t most, char *line)
{
	size_t n = 0;
	char *p = strchr(line, '|'), *end;

	while (p && n < most) {
		end = strchr(p + 1, '|');
		if (!end)
			break;
		*end = '\0';
		p++;
		while (*p == ' ' || *p == '`')
			p++;
		cell[n] = p;
		p = end - 1;
		while (p >= cell[n] && (*p == ' ' || *p == '`'))
			*p-- = '\0';
		n++;
		p = end;
	}
	return n;
}

/* The feature a column of the doc's table heads; 0 for none. */
static unsigned column_feature(const char *head)
{
	unsigned f;

	for (f = 1; f <= ALL_FEATURES; f <<= 1)
		if (!strcmp(runner_rule_feature_name(f), head))
			return f;
	return 0;
}

/* One version's row of docs/rule.md's table against the code's row. */
static void check_doc_row(char **cell, size_t ncells, const unsigned *feature,
			  const struct runner_rule_version *v)
{
	size_t j;

	assert_string_equal(cell[0], v->name);
	for (j = 1; j + 1 < ncells; j++) {
		bool has = strcmp(cell[j], "-") != 0;

		if (has != runner_rule_version_has(v, feature[j]))
			fail_msg("docs/rule.md: %s, '%s' says %s, rule-version.c %s", v->name,
				 runner_rule_feature_name(feature[j]), cell[j],
				 has ? "no" : "yes");
		if (has && feature[j] == RUNNER_RULE_F_CALIBRATED)
			assert_int_equal(atoi(cell[j] + strcspn(cell[j], "0123456789")),
					 v->calibration_min_gains);
	}
}

/* docs/rule.md opens with the table of versions x features: every version
 * a row in the code's order, every feature a column (the last says the
 * bound), each cell as the code has it. PERFD_RULE_DOC names the file. */
static void test_doc_table(void **state)
{
	const char *path = getenv("PERFD_RULE_DOC");
	const struct runner_rule_version *all;
	char line[1024], *cell[16];
	unsigned feature[16] = { 0 }, seen = 0;
	size_t n, ncells = 0, cols = 0, row = 0, j;
	bool in_versions = false;
	FILE *f;

	assert_non_null(path);
	f = fopen(path, "r");
	assert_non_null(f);
	all = runner_rule_versions(&n);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "## ", 3))
			in_versions = !strcmp(line, "## Versions\n");
		if (!in_versions || line[0] != '|')
			continue;
		ncells = table_cells(cell, 16, line);
		if (!cols) {
			assert_string_equal(cell[0], "version");
			for (j = 1; j + 1 < ncells; j++) {
				feature[j] = column_feature(cell[j]);
				if (!feature[j] || (seen & feature[j]))
					fail_msg("docs/rule.md: column '%s' is no feature, or twice",
						 cell[j]);
				seen |= feature[j];
			}
			cols = ncells;
		} else if (strcmp(cell[0], "---")) {
			assert_int_equal(ncells, cols);
			assert_true(row < n);
			check_doc_row(cell, ncells, feature, &all[row++]);
		}
	}
	fclose(f);
	assert_int_equal(seen, ALL_FEATURES);
	assert_int_equal(row, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_unknown_refused),
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_feature_names),
		cmocka_unit_test(test_doc_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
