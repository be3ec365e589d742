/*
 * The statistics every version of the rule shares, and the views that
 * show its figures (docs/rule.md): sort and median; the stages of a
 * comparison, the sign test's exact tail, the exact null distribution of
 * the rank count that compares a comparison's pair gains with its
 * calibration's, the scale gate (the same count on deviations) and the load
 * gate. A leaf: pure functions of their arguments, calling nothing else in
 * runners/; the unit tests check them against the numbers docs/rule.md
 * proves with.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runners.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void runner_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
}

double runner_median(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	runner_sort(v, n);
	if (n % 2)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

double runner_median_of(const double *v, size_t n)
{
	double *sorted = xmalloc((n + 1) * sizeof(double));
	double m;

	memcpy(sorted, v, n * sizeof(double));
	m = runner_median(sorted, n);
	free(sorted);
	return m;
}

/* The bound on false verdicts in each direction, 1/100, shared equally by
 * the stages: a stage of S may give a verdict when its p value is at most
 * 1 / (RULE2_ALPHA_INV * S). */
#define RULE2_ALPHA_INV 100
/* A computed rank p value is a sum of positive doubles with a relative
 * error far under this; a stage accepts it only when even p * (1 + slack)
 * is within the bound, so rounding can withhold a verdict, never add one. */
#define RULE2_FLOAT_SLACK 1e-9

int runner_stages(int *out, int pairs, int max_pairs)
{
	int n = 0, k = pairs;

	if (pairs < 1 || pairs > RUNNER_RULE2_MAX_PAIRS || max_pairs < pairs ||
	    max_pairs > RUNNER_RULE2_MAX_PAIRS)
		return -EINVAL;
	for (;;) {
		out[n++] = k;
		if (k >= max_pairs)
			break;
		k = k * 2 < max_pairs ? k * 2 : max_pairs;
	}
	return n;
}

double runner_stage_alpha(int nstages)
{
	return 1.0 / ((double)RULE2_ALPHA_INV * nstages);
}

/* sum_{j >= k} C(n, j), exact: n <= 64 keeps every term within 2^64. */
static unsigned __int128 binomial_tail_count(int n, int k)
{
	unsigned __int128 c = 1, tail = 0;
	int j;

	for (j = 0; j <= n; j++) {
		if (j >= k)
			tail += c;
		c = c * (unsigned)(n - j) / (unsigned)(j + 1);
	}
	return tail;
}

double runner_sign_p(int n, int k)
{
	if (k <= 0)
		return 1.0;
	if (k > n)
		return 0.0;
	return (double)binomial_tail_count(n, k) / ldexp(1.0, n);
}

/* tail / 2^n <= num / (den * RULE2_ALPHA_INV * S), in integers: the tail
 * is under 2^64, and den * RULE2_ALPHA_INV * S under 2^32. */
bool runner_sign_passes_share(int n, int k, int nstages, int num, int den)
{
	unsigned __int128 two_n = (unsigned __int128)1 << n;

	if (k <= 0 || k > n || num < 1 || den < num)
		return false;
	return binomial_tail_count(n, k) * RULE2_ALPHA_INV * (unsigned)nstages * (unsigned)den <=
	       two_n * (unsigned)num;
}

bool runner_sign_passes(int n, int k, int nstages)
{
	return runner_sign_passes_share(n, k, nstages, 1, 1);
}

bool runner_rank_passes_share(double p, int nstages, int num, int den)
{
	return p * (1 + RULE2_FLOAT_SLACK) <= runner_stage_alpha(nstages) * num / den;
}

bool runner_sign_can_decide(int pairs, int max_pairs)
{
	int stages[RUNNER_STAGES_MAX], n, i;

	n = runner_stages(stages, pairs, max_pairs);
	for (i = 0; i < n; i++)
		if (runner_sign_passes_share(stages[i], stages[i], n, RUNNER_RULE21_SIGN_SHARE,
					     RUNNER_RULE21_SHARES))
			return true;
	return false;
}

bool runner_rank_passes(double p, int nstages)
{
	return runner_rank_passes_share(p, nstages, 1, 1);
}

/*
 * The null distribution of U, the count of (gain, calibration gain) couples
 * where the gain is the larger, when the n gains and m calibration gains are
 * exchangeable: every one of the C(n + m, n) orders of the two kinds is
 * equally likely. The largest of the n + m values is a gain with
 * probability n / (n + m), and then exceeds all m calibration values, so
 *
 *   P[n, m](u) = n/(n+m) P[n-1, m](u - m) + m/(n+m) P[n, m-1](u)
 *
 * with P[0, m] and P[n, 0] all at u = 0. Rolled over m, keeping one row of
 * n + 1 distributions.
 */
static double *rank_tail_compute(int n, int m)
{
	double **prev, **cur, *tail;
	int k, j;
	long u;

	prev = xcalloc((size_t)n + 1, sizeof(double *));
	cur = xcalloc((size_t)n + 1, sizeof(double *));
	for (k = 0; k <= n; k++) {
		prev[k] = xcalloc(1, sizeof(double));
		prev[k][0] = 1.0;   /* m = 0: U is 0 */
	}
	for (j = 1; j <= m; j++) {
		for (k = 0; k <= n; k++) {
			long size = (long)k * j + 1;

			cur[k] = xcalloc((size_t)size, sizeof(double));
			if (k == 0) {
				cur[k][0] = 1.0;
				continue;
			}
			for (u = 0; u < (long)(k - 1) * j + 1; u++)
				cur[k][u + j] += (double)k / (k + j) * cur[k - 1][u];
			for (u = 0; u < (long)k * (j - 1) + 1; u++)
				cur[k][u] += (double)j / (k + j) * prev[k][u];
		}
		for (k = 0; k <= n; k++) {
			free(prev[k]);
			prev[k] = cur[k];
			cur[k] = NULL;
		}
	}
	tail = xcalloc((size_t)n * m + 2, sizeof(double));
	for (u = (long)n * m; u >= 0; u--)
		tail[u] = tail[u + 1] + prev[n][u];
	for (k = 0; k <= n; k++)
		free(prev[k]);
	free(prev);
	free(cur);
	return tail;
}

/*
 * The distributions last computed, kept: a comparison's stages ask for the
 * same few (n, m) again at every judging, and the MDE (mde.c) judges
 * thousands of simulated comparisons of one calibration. Computing one for
 * n = 24, m = 120 takes milliseconds; a copy, microseconds. At most
 * RANK_CACHE of them (n * m + 2 doubles each, 60 KiB at most), replaced in
 * turn; a lock, since the hub's server and its forge loop both judge.
 */
#define RANK_CACHE 16

static struct {
	int n, m;
	double *tail;
} rank_cache[RANK_CACHE];
static size_t rank_cache_next;
static pthread_mutex_t rank_cache_lock = PTHREAD_MUTEX_INITIALIZER;

static double *rank_cache_get(int n, int m)
{
	double *copy = NULL;
	size_t i, size = ((size_t)n * m + 2) * sizeof(double);

	pthread_mutex_lock(&rank_cache_lock);
	for (i = 0; i < RANK_CACHE && !copy; i++)
		if (rank_cache[i].tail && rank_cache[i].n == n && rank_cache[i].m == m)
			copy = memcpy(xmalloc(size), rank_cache[i].tail, size);
	pthread_mutex_unlock(&rank_cache_lock);
	return copy;
}

static void rank_cache_put(int n, int m, const double *tail)
{
	size_t size = ((size_t)n * m + 2) * sizeof(double);
	size_t i;

	pthread_mutex_lock(&rank_cache_lock);
	i = rank_cache_next++ % RANK_CACHE;
	free(rank_cache[i].tail);
	rank_cache[i].n = n;
	rank_cache[i].m = m;
	rank_cache[i].tail = memcpy(xmalloc(size), tail, size);
	pthread_mutex_unlock(&rank_cache_lock);
}

int runner_rank_init(struct runner_rank *out, int n, int m)
{
	memset(out, 0, sizeof(*out));
	if (n < 1 || m < 1 || n > RUNNER_RULE2_MAX_PAIRS || m > RUNNER_CALIBRATION_MAX_GAINS)
		return -EINVAL;
	out->n = n;
	out->m = m;
	out->tail = rank_cache_get(n, m);
	if (!out->tail) {
		out->tail = rank_tail_compute(n, m);
		rank_cache_put(n, m, out->tail);
	}
	return 0;
}

double runner_rank_p(const struct runner_rank *r, long u)
{
	if (u <= 0)
		return 1.0;
	if (u > (long)r->n * r->m)
		return 0.0;
	return fmin(1.0, r->tail[u]);
}

void runner_rank_release(struct runner_rank *r)
{
	if (!r)
		return;
	free(r->tail);
	memset(r, 0, sizeof(*r));
}

long runner_rank_count(const double *x, size_t n, const double *c, size_t m, double shift,
		       bool below)
{
	long u = 0;
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < m; j++)
			if (below ? x[i] + shift < c[j] : x[i] + shift > c[j])
				u++;
	return u;
}

/* |v_i - median(v)| for the n values of v, into out, less the one that is
 * the median itself when n is odd (its deviation is 0 by construction, not
 * by the noise); returns how many, and the median deviation in *mid. */
static size_t deviations(double *out, const double *v, size_t n, double *mid)
{
	double *sorted = xcalloc(n + 1, sizeof(double)), med;
	size_t i, k = 0;
	bool dropped = n % 2 == 0;

	memcpy(sorted, v, n * sizeof(*v));
	med = runner_median(sorted, n);
	for (i = 0; i < n; i++) {
		if (!dropped && v[i] == med) {
			dropped = true;
			continue;
		}
		out[k++] = fabs(v[i] - med);
	}
	memcpy(sorted, out, k * sizeof(*out));
	*mid = runner_median(sorted, k);
	free(sorted);
	return k;
}

int runner_scale_gate(struct runner_gate *out, const double *x, size_t n, const double *c,
		      size_t m)
{
	double *dx = xcalloc(n + 1, sizeof(double)), *dc = xcalloc(m + 1, sizeof(double));
	double mx, mc;
	size_t nx = deviations(dx, x, n, &mx), nc = deviations(dc, c, m, &mc);
	struct runner_rank r;
	int ret = runner_rank_init(&r, (int)nx, (int)nc);

	out->p = 1;
	out->ratio = mc > 0 ? mx / mc : NAN;
	if (ret == 0)
		out->p = runner_rank_p(&r, runner_rank_count(dx, nx, dc, nc, 0, false));
	out->passes = out->p > RUNNER_RULE21_GATE_P;
	runner_rank_release(&r);
	free(dx);
	free(dc);
	return ret;
}

/* C(n, k) as a double, by its product (exact while it fits 53 bits). */
static double choose(size_t n, size_t k)
{
	double v = 1;
	size_t i;

	if (k > n)
		return 0;
	for (i = 1; i <= k; i++)
		v = v * (double)(n - k + i) / (double)i;
	return v;
}

int runner_load_gate(struct runner_load_gate *out, const double *x, size_t n, const double *c,
		     size_t m, int r)
{
	double *sorted, bar, p = 0;
	size_t i, j, k = 0, t;

	out->p = NAN;
	out->above = 0;
	out->passes = true;
	if (!n || r < 1 || m < (size_t)r)
		return -EINVAL;
	sorted = xcalloc(m, sizeof(double));
	memcpy(sorted, c, m * sizeof(double));
	runner_sort(sorted, m);
	bar = sorted[m - (size_t)r];           /* the r-th largest */
	free(sorted);
	for (i = 0; i < n; i++)
		k += x[i] > bar;
	/* k or more x's among the t = k + r - 1 largest of all n + m. */
	t = k + (size_t)r - 1;
	for (j = k; j <= t && j <= n; j++)
		p += choose(n, j) * choose(m, t - j);
	out->p = k ? p / choose(n + m, t) : 1;
	out->above = (int)k;
	out->passes = out->p > RUNNER_RULE22_LOAD_P;
	return 0;
}
