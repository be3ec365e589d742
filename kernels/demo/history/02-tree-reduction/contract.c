/*
 * contract: checks the row kernel against a CPU reference, row by row, on
 * shapes chosen for where such kernels go wrong: rows narrower than the
 * workgroup, widths that are not a multiple of it (or of a vector width),
 * and values at the ends of their range.
 *
 * One RESULT line per group of checks and a SUMMARY line on stdout; each
 * mismatch on stderr. Exit 0 when every check passes, 1 otherwise.
 */
#include "gpu.h"

struct check {
	uint32_t rows;
	uint32_t cols;
	int fill;		/* a constant value, or RANDOM */
};

#define RANDOM 1000

/* What the kernel must leave for one row. */
static uint32_t reference(const int32_t *x, uint32_t cols)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i < cols; i++)
		sum += (uint32_t)(x[i] * x[i]);
	return sum;
}

/* Runs one check; returns 1 when every row matches. */
static int run_check(struct gpu *g, const char *group, const struct check *c)
{
	size_t n = (size_t)c->rows * c->cols;
	int32_t *x = xmalloc(n * sizeof(*x));
	uint32_t *out = xmalloc(c->rows * sizeof(*out));
	int ok = 1;

	if (c->fill == RANDOM)
		matrix_fill(x, n, c->rows * 7919u + c->cols);
	else
		for (size_t i = 0; i < n; i++)
			x[i] = c->fill;
	gpu_run(g, x, c->rows, c->cols, out, 0, NULL);
	for (uint32_t r = 0; r < c->rows && ok; r++) {
		uint32_t want = reference(x + (size_t)r * c->cols, c->cols);

		if (out[r] != want) {
			fprintf(stderr, "%s %ux%u: row %u is %u, expected %u\n",
				group, c->rows, c->cols, r, out[r], want);
			ok = 0;
		}
	}
	free(x);
	free(out);
	return ok;
}

static const struct check aligned[] = {
	{ 1, 256, RANDOM }, { 4, 4096, RANDOM }, { 256, 8192, RANDOM },
};
static const struct check ragged[] = {
	{ 1, 1, RANDOM }, { 2, 3, RANDOM }, { 3, 255, RANDOM }, { 3, 257, RANDOM },
	{ 3, 260, RANDOM }, { 5, 1001, RANDOM }, { 2, 4099, RANDOM },
};
/* 65536 squares of 127 still fit in 32 bits: the largest row we promise. */
static const struct check extremes[] = {
	{ 2, 65536, 127 }, { 2, 65536, -127 }, { 3, 1024, 0 }, { 1, 8192, -1 },
};

static const struct {
	const char *name;
	const struct check *checks;
	int count;
} groups[] = {
	{ "aligned", aligned, sizeof(aligned) / sizeof(aligned[0]) },
	{ "ragged", ragged, sizeof(ragged) / sizeof(ragged[0]) },
	{ "extremes", extremes, sizeof(extremes) / sizeof(extremes[0]) },
};

int main(int argc, char **argv)
{
	int passed = 0, total = 0;
	struct gpu g;

	(void)argc;
	gpu_open(&g, argv[0]);
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		int ok = 0;

		for (int k = 0; k < groups[i].count; k++)
			ok += run_check(&g, groups[i].name, &groups[i].checks[k]);
		printf("RESULT %s on \"%s\": passed=%d failed=%d total=%d\n",
		       groups[i].name, g.name, ok, groups[i].count - ok, groups[i].count);
		passed += ok;
		total += groups[i].count;
	}
	printf("SUMMARY %d of %d checks passed\n", passed, total);
	gpu_close(&g);
	return passed == total ? 0 : 1;
}
