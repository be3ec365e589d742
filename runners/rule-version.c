/*
 * The versions of the rule as rows (docs/rule.md, "Versions"): the one
 * place that names them, maps a name to its version and says what each
 * version does. Code that judges or shows a comparison asks its version
 * for a feature (runner_rule_has), never for a number, so that a version is
 * a row here plus the stage function and words its new feature needs.
 *
 * A stored name this table does not hold is refused, never taken for the
 * newest: figures are only ever recomputed with the rule they were made
 * with.
 */
#include <errno.h>
#include <string.h>

#include "runners.h"

#define STAGED (RUNNER_RULE_F_STAGES | RUNNER_RULE_F_POSITIVE | RUNNER_RULE_F_DIRECTION | \
		RUNNER_RULE_F_CALIBRATED)
#define GATED (STAGED | RUNNER_RULE_F_BOTH_TESTS | RUNNER_RULE_F_SCALE_GATE)

/* Oldest first; the last row is the version new comparisons get. */
static const struct runner_rule_version versions[] = {
	{ "pairs-median/1", 0, 0 },
	{ "pairs-median/2", STAGED, RUNNER_CALIBRATION_MIN_GAINS_V2 },
	{ "pairs-median/2.1", GATED, RUNNER_CALIBRATION_MIN_GAINS },
	{ "pairs-median/2.2", GATED | RUNNER_RULE_F_LOAD_GATE, RUNNER_CALIBRATION_MIN_GAINS },
};

/* The features' names, as docs/rule.md's table heads its columns. */
static const struct {
	unsigned feature;
	const char *name;
} feature_names[] = {
	{ RUNNER_RULE_F_STAGES, "stages" },
	{ RUNNER_RULE_F_POSITIVE, "positive values" },
	{ RUNNER_RULE_F_DIRECTION, "direction" },
	{ RUNNER_RULE_F_CALIBRATED, "calibrated test" },
	{ RUNNER_RULE_F_BOTH_TESTS, "both tests" },
	{ RUNNER_RULE_F_SCALE_GATE, "scale gate" },
	{ RUNNER_RULE_F_LOAD_GATE, "load gate" },
};

static const struct runner_rule_version *find(const char *rule)
{
	size_t i;

	for (i = 0; rule && i < ARRAY_SIZE(versions); i++)
		if (!strcmp(versions[i].name, rule))
			return &versions[i];
	return NULL;
}

int runner_rule_lookup(const struct runner_rule_version **out, const char *rule)
{
	struct strbuf known = STRBUF_INIT;
	size_t i;
	int r;

	*out = find(rule);
	if (*out)
		return 0;
	for (i = 0; i < ARRAY_SIZE(versions); i++)
		strbuf_addf(&known, "%s%s", i == 0 ? "" : i + 1 < ARRAY_SIZE(versions) ? ", " :
			    " and ", versions[i].name);
	r = err_set(-EINVAL, "rule '%s' is unknown to this perfd, which knows %s",
		    rule ? rule : "", known.buf);
	strbuf_release(&known);
	return r;
}

const struct runner_rule_version *runner_rule_newest(void)
{
	return &versions[ARRAY_SIZE(versions) - 1];
}

const struct runner_rule_version *runner_rule_versions(size_t *out_n)
{
	*out_n = ARRAY_SIZE(versions);
	return versions;
}

bool runner_rule_version_has(const struct runner_rule_version *v, unsigned mask)
{
	return v && (v->features & mask) == mask;
}

bool runner_rule_has(const char *rule, unsigned mask)
{
	return runner_rule_version_has(find(rule), mask);
}

const char *runner_rule_feature_name(unsigned feature)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(feature_names); i++)
		if (feature_names[i].feature == feature)
			return feature_names[i].name;
	return NULL;
}
