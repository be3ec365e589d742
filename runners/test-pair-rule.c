/* Unit tests of the rule pairs-median/1: hand-made process rows, the worked
 * examples of docs/rule.md, and a seeded synthetic set whose every output is
 * pinned by one hash. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runners.h"

/* Builds a comparison of n pairs from old[] and new[] metric values, in
 * the order the scheduler runs them (AB, BA, ...). */
static void build(struct db_comparison *c, const double *old, const double *new, int n)
{
	int i, k = 0;

	memset(c, 0, sizeof(*c));
	c->rule = xstrdup("pairs-median/1");
	c->metric_requested = xstrdup("run2_ms");
	c->pairs = n;
	c->min_effect = HOST_DEFAULT_MIN_EFFECT;
	c->noise = HOST_DEFAULT_NOISE;
	c->state = DB_STATE_DONE;
	c->nprocesses = (size_t)(2 * n);
	c->processes = xcalloc(c->nprocesses, sizeof(*c->processes));
	for (i = 1; i <= n; i++) {
		const char *first = i % 2 ? "old" : "new", *second = i % 2 ? "new" : "old";
		const char *arms[2] = { first, second };
		int j;

		for (j = 0; j < 2; j++) {
			struct db_process *p = &c->processes[k++];

			p->seq = k;
			p->pair = i;
			p->state = DB_STATE_DONE;
			snprintf(p->arm, sizeof(p->arm), "%s", arms[j]);
			p->metrics = xcalloc(1, sizeof(*p->metrics));
			p->metrics[0].name = xstrdup("run2_ms");
			p->metrics[0].value = !strcmp(arms[j], "old") ? old[i - 1] : new[i - 1];
			p->nmetrics = 1;
			p->wall_ms = 10;
		}
	}
}

static void apply(struct db_summary *s, const struct db_comparison *c)
{
	assert_int_equal(runner_rule_apply(s, c), 0);
}

static bool has_note(char **v, size_t n, const char *needle)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(v[i], needle))
			return true;
	return false;
}

static void test_b60_vector(void **state)
{
	const double old[] = { 4392, 4421, 4113 }, new[] = { 4362, 4081, 4218 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 3);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unresolved");
	assert_true(fabs(s.pair_gains[0] - 0.00683060) < 1e-7);
	assert_true(fabs(s.pair_gains[1] - 0.07690568) < 1e-7);
	assert_true(fabs(s.pair_gains[2] - -0.02552881) < 1e-7);
	assert_true(fabs(s.gain_median - 0.00683060) < 1e-7);
	assert_true(s.old.median == 4392 && s.old.min == 4113 && s.old.max == 4421);
	assert_true(fabs(s.old.spread - 0.0701275) < 1e-6);
	assert_true(s.new.median == 4218);
	assert_true(has_note(s.flags, s.nflags, "noisy"));
	assert_true(has_note(s.reasons, s.nreasons, "disagree in sign"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void check_faster(const double *old, const double *new, double want)
{
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 3);
	apply(&s, &c);
	assert_string_equal(s.verdict, "faster");
	assert_true(fabs(s.gain_median - want) < 5e-6);
	assert_int_equal(s.nreasons, 0);
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_m1_vectors(void **state)
{
	const double o1[] = { 2089, 2093, 2103 }, n1[] = { 1955, 1965, 1951 };
	const double o2[] = { 2090, 2110, 2089 }, n2[] = { 1962, 1938, 1965 };
	const double o3[] = { 3406, 3421, 3413 }, n3[] = { 3240, 3249, 3241 };

	check_faster(o1, n1, 0.06415);
	check_faster(o2, n2, 0.06124);
	check_faster(o3, n3, 0.05028);
}

/* The table of docs/rule.md, "Verdict". */
static void test_sign_thresholds(void **state)
{
	static const int k[] = { 0, 0, 0, 3, 4, 5, 5, 6, 7, 7, 8 };
	int n;

	for (n = 0; n < (int)(sizeof(k) / sizeof(k[0])); n++)
		assert_int_equal(runner_sign_threshold(n), k[n]);
	assert_int_equal(runner_sign_threshold(100), 57);
}

static void test_even_median(void **state)
{
	double v[] = { 4, 1, 3, 2 };
	double w[] = { 5 };

	assert_true(runner_median(v, 4) == 2.5);
	assert_true(runner_median(w, 1) == 5);
	assert_true(isnan(runner_median(w, 0)));
}

static void test_six_pairs(void **state)
{
	/* 5 of 6 faster passes the sign test; 4 of 6 does not. */
	const double old[] = { 100, 100, 100, 100, 100, 100 };
	const double five[] = { 90, 91, 92, 93, 94, 101 };
	const double four[] = { 90, 91, 92, 93, 101, 102 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, five, 6);
	apply(&s, &c);
	assert_string_equal(s.verdict, "faster");
	assert_true(fabs(s.gain_median - 0.075) < 1e-12);  /* mean of 8% and 7% */
	db_summary_release(&s);
	db_comparison_release(&c);

	build(&c, old, four, 6);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unresolved");
	assert_true(has_note(s.reasons, s.nreasons, "needs 5"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_ten_pairs_slower(void **state)
{
	const double old[] = { 100, 100, 100, 100, 100, 100, 100, 100, 100, 100 };
	const double eight[] = { 110, 110, 110, 110, 110, 110, 110, 110, 99, 99 };
	const double seven[] = { 110, 110, 110, 110, 110, 110, 110, 99, 99, 99 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, eight, 10);
	apply(&s, &c);
	assert_string_equal(s.verdict, "slower");
	db_summary_release(&s);
	db_comparison_release(&c);

	build(&c, old, seven, 10);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unresolved");
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_unchanged_and_min_effect(void **state)
{
	const double old[] = { 100, 100, 100 }, same[] = { 99.8, 100.3, 99.9 };
	const double small[] = { 99.5, 99.4, 99.6 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, same, 3);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unchanged");
	db_summary_release(&s);
	db_comparison_release(&c);

	/* All faster, but under the 1% minimum effect: unchanged too. */
	build(&c, old, small, 3);
	apply(&s, &c);
	assert_string_equal(s.verdict, "unchanged");
	db_summary_release(&s);
	db_comparison_release(&c);

	/* With a 0.1% minimum effect the same rows are faster. */
	build(&c, old, small, 3);
	c.min_effect = 0.001;
	apply(&s, &c);
	assert_string_equal(s.verdict, "faster");
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_invalid_process(void **state)
{
	const double old[] = { 100, 100, 100 }, new[] = { 90, 90, 90 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 3);
	c.processes[3].exit_code = 1;
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_false(s.has_gain);
	assert_true(isnan(s.pair_gains[0]));
	assert_false(s.process_valid[3]);
	assert_string_equal(s.process_reason[3], "exited 1");
	assert_true(has_note(s.reasons, s.nreasons, "process 4 (old, pair 2) exited 1"));
	db_summary_release(&s);
	db_comparison_release(&c);

	build(&c, old, new, 3);
	c.processes[1].signal = 11;
	c.processes[1].exit_code = -1;
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_true(has_note(s.reasons, s.nreasons, "killed by signal 11 (SIGSEGV)"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_digests_and_record_valid(void **state)
{
	const double old[] = { 100, 100, 100 }, new[] = { 90, 90, 90 };
	struct db_comparison c;
	struct db_summary s;
	size_t i;

	build(&c, old, new, 3);
	for (i = 0; i < c.nprocesses; i++)
		c.processes[i].digest = xstrdup("c4759069c154");
	free(c.processes[4].digest);
	c.processes[4].digest = xstrdup("3c7ec4e2");
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_false(s.digests_equal);
	assert_true(has_note(s.reasons, s.nreasons, "printed digest 3c7ec4e2"));
	db_summary_release(&s);
	db_comparison_release(&c);

	build(&c, old, new, 3);
	for (i = 0; i < c.nprocesses; i++)
		c.processes[i].record_valid = i != 2;
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_true(has_note(s.reasons, s.nreasons, "TIMING_RECORD_VALID"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_metric_choice(void **state)
{
	const double old[] = { 100, 100, 100 }, new[] = { 90, 90, 90 };
	struct db_comparison c;
	struct db_summary s;
	char *m = NULL;

	build(&c, old, new, 3);
	free(c.metric_requested);
	c.metric_requested = NULL;
	assert_int_equal(runner_metric_choose(&m, c.processes, c.nprocesses), 0);
	assert_string_equal(m, "run2_ms");
	free(m);
	/* A second metric in one process makes the default ambiguous. */
	c.processes[2].metrics = xrealloc(c.processes[2].metrics, 2 * sizeof(struct db_metric));
	c.processes[2].metrics[1].name = xstrdup("decode_us");
	c.processes[2].metrics[1].value = 3;
	c.processes[2].nmetrics = 2;
	memset(&m, 0xA5, sizeof(m));
	assert_int_equal(runner_metric_choose(&m, c.processes, c.nprocesses), -EDOM);
	assert_non_null(strstr(err_last(), "run2_ms, decode_us"));
	assert_null(m);
	apply(&s, &c);
	assert_string_equal(s.verdict, "invalid");
	assert_null(s.metric);
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_wall_time_fallback(void **state)
{
	const double old[] = { 1, 1, 1 }, new[] = { 1, 1, 1 };
	struct db_comparison c;
	struct db_summary s;
	size_t i;

	build(&c, old, new, 3);
	free(c.metric_requested);
	c.metric_requested = NULL;
	for (i = 0; i < c.nprocesses; i++) {
		struct db_process *p = &c.processes[i];

		free(p->metrics[0].name);
		free(p->metrics);
		p->metrics = NULL;
		p->nmetrics = 0;
		p->wall_ms = !strcmp(p->arm, "old") ? 200 : 150;
	}
	apply(&s, &c);
	assert_string_equal(s.metric, "wall_ms");
	assert_string_equal(s.verdict, "faster");
	assert_true(fabs(s.gain_median - 0.25) < 1e-12);
	assert_true(has_note(s.flags, s.nflags, "wall-time"));
	db_summary_release(&s);
	db_comparison_release(&c);
}

static void test_unknown_rule(void **state)
{
	const double old[] = { 1 }, new[] = { 1 };
	struct db_comparison c;
	struct db_summary s;

	build(&c, old, new, 1);
	free(c.rule);
	c.rule = xstrdup("pairs-median/9");
	/* The summary is zeroed however it failed: the agent releases it after
	 * an interrupted comparison of a rule it does not know. */
	memset(&s, 0xA5, sizeof(s));
	assert_int_equal(runner_rule_apply(&s, &c), -EINVAL);
	assert_non_null(strstr(err_last(), "rule 'pairs-median/9' is unknown to this perfd"));
	assert_null(s.metric);
	assert_null(s.reasons);
	assert_int_equal(s.nreasons, 0);
	assert_int_equal(s.nprocesses, 0);
	db_summary_release(&s);
	db_comparison_release(&c);
}

/*
 * A varied set of synthetic comparisons, the same on every machine: a fixed
 * seed, a fixed generator (splitmix64), and values made only with +, -, *
 * and floor, so that every double is bit-for-bit the same everywhere.
 */
#define SYNTH_SEED UINT64_C(0x7061697273313031)
#define SYNTH_COUNT 3000

static uint64_t synth_next(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* 0 .. n-1 */
static unsigned synth_pick(uint64_t *x, unsigned n)
{
	return (unsigned)(synth_next(x) % n);
}

/* [0, 1) */
static double synth_unit(uint64_t *x)
{
	return (double)(synth_next(x) >> 11) * 0x1p-53;
}

static bool synth_one_in(uint64_t *x, unsigned n)
{
	return synth_pick(x, n) == 0;
}

static void synth_metric(struct db_process *p, const char *name, double value)
{
	p->metrics = xrealloc(p->metrics, (p->nmetrics + 1) * sizeof(*p->metrics));
	p->metrics[p->nmetrics].name = xstrdup(name);
	p->metrics[p->nmetrics].value = value;
	p->nmetrics++;
}

/* Makes one process unable to count, in one of the ways docs/rule.md lists. */
static void synth_break(struct db_process *p, uint64_t *x)
{
	static const int signals[] = { 6, 9, 11, 15 };

	switch (synth_pick(x, 9)) {
	case 0:
		p->exit_code = 1 + (int)synth_pick(x, 3);
		break;
	case 1:
		p->exit_code = -1;
		p->signal = signals[synth_pick(x, 4)];
		break;
	case 2:
		p->exit_code = -1;
		p->signal = 9;
		p->timed_out = true;
		break;
	case 3:
		p->exit_code = -1;
		p->spawn_error = xstrdup("cannot execute './gone': No such file or directory");
		break;
	case 4:
		p->state = synth_one_in(x, 2) ? DB_STATE_RUNNING : DB_STATE_ABANDONED;
		break;
	case 5:
		p->fault = xstrdup("amdgpu 0000:03:00.0: ring gfx_0.0.0 timeout");
		break;
	case 6:
		p->protocol_errors = xcalloc(1, sizeof(char *));
		p->protocol_errors[0] = xstrdup("line 4: TIMING run2_ms=nan");
		p->nprotocol_errors = 1;
		break;
	case 7:
		if (p->nmetrics)
			p->metrics[0].value = synth_one_in(x, 2) ? NAN : INFINITY;
		break;
	default:
		while (p->nmetrics)
			free(p->metrics[--p->nmetrics].name);
		break;
	}
}

/* How the processes of one synthetic comparison report their metric. */
enum synth_metrics {
	SYNTH_RUN2,             /* all print run2_ms */
	SYNTH_NONE,             /* none prints a metric: wall time */
	SYNTH_WALL,             /* all print a TIMING metric named wall_ms */
	SYNTH_TWO,              /* one also prints decode_us */
	SYNTH_ABSENT,           /* --metric names one nobody prints */
	SYNTH_MODES
};

static void synth_comparison(struct db_comparison *c, uint64_t *x)
{
	static const double effects[] = { -0.2, -0.05, -0.015, -0.005, 0, 0.005, 0.015,
					  0.05, 0.2 };
	static const double noises[] = { 0, 0.002, 0.01, 0.03, 0.1 };
	static const double min_effects[] = { 0, 0.001, 0.01, 0.01, 0.01, 0.05 };
	static const double noise_limits[] = { 0, 0.02, 0.05, 0.05, 0.2 };
	static const int pair_counts[] = { 0, 1, 2, 3, 3, 3, 4, 5, 6, 6, 7, 8, 9, 10, 10, 12 };
	unsigned mode = synth_pick(x, 8);
	double effect = effects[synth_pick(x, 9)], noise = noises[synth_pick(x, 5)];
	double base = 1 + 1000 * synth_unit(x);
	bool integers = synth_one_in(x, 2), bad = synth_one_in(x, 6);
	unsigned digests = synth_pick(x, 20), valid_mark = synth_pick(x, 10);
	unsigned watch = synth_pick(x, 10);
	int npairs = pair_counts[synth_pick(x, 16)];
	int warm = synth_one_in(x, 3) ? 1 + (int)synth_pick(x, 2) : 0;
	size_t i, n;

	if (mode >= SYNTH_MODES)
		mode = SYNTH_RUN2;
	if (integers && base < 20)
		base = floor(base) + 1;
	memset(c, 0, sizeof(*c));
	c->rule = xstrdup(synth_one_in(x, 200) ? "pairs-median/9" : "pairs-median/1");
	c->pairs = npairs;
	c->warmup = warm;
	c->min_effect = min_effects[synth_pick(x, 6)];
	c->noise = noise_limits[synth_pick(x, 5)];
	c->state = synth_one_in(x, 30) ? DB_STATE_ABANDONED : DB_STATE_DONE;
	if (mode == SYNTH_ABSENT)
		c->metric_requested = xstrdup("frames_ms");
	else if (mode == SYNTH_RUN2 || mode == SYNTH_TWO)
		c->metric_requested = synth_one_in(x, 2) ? xstrdup("run2_ms") : NULL;
	n = (size_t)(2 * (warm + npairs));
	c->nprocesses = n;
	c->processes = xcalloc(n + 1, sizeof(*c->processes));
	for (i = 0; i < n; i++) {
		struct db_process *p = &c->processes[i];
		int pair = (int)(i / 2) + 1 - warm;
		bool old = (pair % 2 != 0) == (i % 2 == 0);
		double v = base * (1 + noise * (2 * synth_unit(x) - 1));

		if (!old)
			v *= 1 - effect;
		if (integers)
			v = floor(v + 0.5);
		p->seq = (int)i + 1;
		p->warmup = pair < 1;
		p->pair = p->warmup ? 0 : pair;
		p->state = DB_STATE_DONE;
		snprintf(p->arm, sizeof(p->arm), "%s", old ? "old" : "new");
		p->wall_ms = mode == SYNTH_NONE ? v : 5 + 100 * synth_unit(x);
		if (mode == SYNTH_RUN2 || mode == SYNTH_TWO || mode == SYNTH_ABSENT)
			synth_metric(p, "run2_ms", v);
		else if (mode == SYNTH_WALL)
			synth_metric(p, "wall_ms", v);
		if (mode == SYNTH_TWO && synth_one_in(x, 3))
			synth_metric(p, "decode_us", 3);
		if (p->warmup && synth_one_in(x, 4))
			synth_metric(p, "warm_only_ms", 1);
		if (!p->warmup && synth_one_in(x, 200) && p->nmetrics)
			p->metrics[0].value = 0;
		p->record_valid = valid_mark >= 6 && !synth_one_in(x, 16);
		if (digests >= 8 && (digests < 18 || !synth_one_in(x, 5)))
			p->digest = xstrdup("c4759069c154");
		else if (digests == 18)
			p->digest = xstrdup("3c7ec4e2");
		if (watch >= 6)
			p->fault_watch = xstrdup(watch < 9 || !synth_one_in(x, 3) ? "on" :
						 "off: cannot read /dev/kmsg: Permission denied");
		if (bad && synth_one_in(x, 5))
			synth_break(p, x);
	}
	/* Rows a damaged database could hold: out-of-range pairs, a lost
	 * process, two of one arm, processes out of order. */
	if (n && synth_one_in(x, 40))
		c->processes[synth_pick(x, (unsigned)n)].pair = synth_one_in(x, 2) ? npairs + 1 : -1;
	if (n && synth_one_in(x, 40))
		db_process_release(&c->processes[--c->nprocesses]);
	if (c->nprocesses && synth_one_in(x, 40))
		snprintf(c->processes[synth_pick(x, (unsigned)c->nprocesses)].arm, 4, "old");
	if (c->nprocesses > 1 && synth_one_in(x, 20)) {
		for (i = c->nprocesses - 1; i > 0; i--) {
			size_t j = synth_pick(x, (unsigned)(i + 1));
			struct db_process t = c->processes[i];

			c->processes[i] = c->processes[j];
			c->processes[j] = t;
		}
	}
	if (synth_one_in(x, 40))
		c->pairs = synth_one_in(x, 2) ? npairs + 1 : -1;
}

static void dump_list(struct strbuf *sb, const char *what, char **v, size_t n)
{
	size_t i;

	strbuf_addf(sb, "%s %zu\n", what, n);
	for (i = 0; i < n; i++)
		strbuf_addf(sb, "  %s\n", v[i]);
}

static void dump_arm(struct strbuf *sb, const char *name, const struct db_arm_stats *a)
{
	strbuf_addf(sb, "%s set=%d median=%a min=%a max=%a spread=%a\n", name, a->set,
		    a->median, a->min, a->max, a->spread);
}

/* Every field of a summary, doubles in hex: equal text, equal bits. */
static void dump_summary(struct strbuf *sb, int rc, const struct db_summary *s)
{
	size_t i;

	strbuf_addf(sb, "rc=%d metric=%s verdict=%s digests_equal=%d\n", rc,
		    s->metric ? s->metric : "(null)", s->verdict, s->digests_equal);
	strbuf_addf(sb, "gain has=%d median=%a min=%a max=%a\n", s->has_gain,
		    s->gain_median, s->gain_min, s->gain_max);
	dump_arm(sb, "old", &s->old);
	dump_arm(sb, "new", &s->new);
	strbuf_addf(sb, "pair_gains %zu:", s->npair_gains);
	for (i = 0; i < s->npair_gains; i++)
		strbuf_addf(sb, " %a", s->pair_gains[i]);
	strbuf_addf(sb, "\n");
	dump_list(sb, "flags", s->flags, s->nflags);
	dump_list(sb, "reasons", s->reasons, s->nreasons);
	strbuf_addf(sb, "processes %zu\n", s->nprocesses);
	for (i = 0; i < s->nprocesses; i++)
		strbuf_addf(sb, "  %zu valid=%d %s\n", i, s->process_valid[i],
			    s->process_reason[i] ? s->process_reason[i] : "-");
}

static uint64_t fnv1a(uint64_t h, const char *p, size_t n)
{
	while (n--) {
		h ^= (unsigned char)*p++;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/*
 * The rule's output over the synthetic set, summarized by one FNV-1a hash.
 * RULE_GOLDEN pins what pairs-median/1 derives: any change of a figure, a
 * verdict, or the text or order of a reason or flag changes it, and would
 * make `perfd verify` fail on databases already stored. A change of the
 * generator or of the dump changes it too; take the new value only from a
 * build whose rule is unchanged. To see what differs, set PERFD_RULE_DUMP
 * to a file name: the test writes every summary there, for a diff against
 * the same dump from another build.
 */
#define RULE_GOLDEN UINT64_C(0x5be47b70ca2d3d28)

static void test_synthetic_golden(void **state)
{
	const char *dump_path = getenv("PERFD_RULE_DUMP");
	FILE *dump = dump_path ? fopen(dump_path, "w") : NULL;
	uint64_t x = SYNTH_SEED, h = UINT64_C(0xcbf29ce484222325);
	struct strbuf sb = STRBUF_INIT;
	int seen[8] = { 0 }, noisy = 0, wall = 0, watch_off = 0;
	static const char *const verdicts[] = { "faster", "slower", "unchanged",
						"unresolved", "invalid", "" };
	int i, v;

	assert_true(!dump_path || dump);
	for (i = 0; i < SYNTH_COUNT; i++) {
		struct db_comparison c;
		struct db_summary s;
		int rc;

		synth_comparison(&c, &x);
		rc = runner_rule_apply(&s, &c);
		strbuf_addf(&sb, "comparison %d\n", i);
		dump_summary(&sb, rc, &s);
		h = fnv1a(h, sb.buf, sb.len);
		if (dump)
			fwrite(sb.buf, 1, sb.len, dump);
		strbuf_reset(&sb);
		for (v = 0; strcmp(verdicts[v], s.verdict) && verdicts[v][0]; v++)
			;
		seen[v]++;
		noisy += has_note(s.flags, s.nflags, "noisy");
		wall += has_note(s.flags, s.nflags, "wall-time");
		watch_off += has_note(s.flags, s.nflags, "fault-watch-off");
		db_summary_release(&s);
		db_comparison_release(&c);
	}
	strbuf_release(&sb);
	if (dump)
		fclose(dump);
	/* The set exercises every verdict and flag, so the hash covers them. */
	for (v = 0; verdicts[v][0]; v++)
		assert_true(seen[v] >= 50);
	assert_true(noisy >= 50 && wall >= 50 && watch_off >= 50);
	if (h != RULE_GOLDEN)
		fail_msg("the rule's output hashes to %#018" PRIx64 ", not %#018" PRIx64
			 " (faster %d, slower %d, unchanged %d, unresolved %d, invalid %d)",
			 h, RULE_GOLDEN, seen[0], seen[1], seen[2], seen[3], seen[4]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_b60_vector),
		cmocka_unit_test(test_m1_vectors),
		cmocka_unit_test(test_sign_thresholds),
		cmocka_unit_test(test_even_median),
		cmocka_unit_test(test_six_pairs),
		cmocka_unit_test(test_ten_pairs_slower),
		cmocka_unit_test(test_unchanged_and_min_effect),
		cmocka_unit_test(test_invalid_process),
		cmocka_unit_test(test_digests_and_record_valid),
		cmocka_unit_test(test_metric_choice),
		cmocka_unit_test(test_wall_time_fallback),
		cmocka_unit_test(test_unknown_rule),
		cmocka_unit_test(test_synthetic_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
