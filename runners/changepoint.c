/*
 * Change points of a series by E-divisive means with alpha = 1
 * (docs/history.md, "Change points"): the split of a segment that most
 * separates the values before it from those after it, by the energy
 * statistic; kept when a permutation test says so; segments split again
 * until none is significant or the bound is reached.
 *
 * With alpha = 1 the energy statistic needs only sums of |a - b| over pairs,
 * and the sum of |x - a| over a set is count and sum of its values below
 * and above x: two Fenwick trees over the values' ranks give each move of
 * the split in O(log n), a whole scan of a segment in O(n log n).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runners.h"

/* A segment [lo, hi) of the series and, once tested, its best split. */
struct segment {
	size_t lo, hi;
	bool tested;
	size_t tau;              /* the first index of the right part; 0: none */
	double q, p;
};

/* Counts and sums of the values present, indexed by rank (1-based). */
struct fenwick {
	size_t n;
	double *count, *sum;
};

static void fenwick_init(struct fenwick *f, size_t n)
{
	f->n = n;
	f->count = xcalloc(n + 1, sizeof(double));
	f->sum = xcalloc(n + 1, sizeof(double));
}

static void fenwick_release(struct fenwick *f)
{
	free(f->count);
	free(f->sum);
	memset(f, 0, sizeof(*f));
}

static void fenwick_add(struct fenwick *f, size_t rank, double c, double v)
{
	for (; rank <= f->n; rank += rank & -rank) {
		f->count[rank] += c;
		f->sum[rank] += c * v;
	}
}

/* The count and sum of the values of rank <= rank. */
static void fenwick_prefix(const struct fenwick *f, size_t rank, double *count, double *sum)
{
	*count = 0;
	*sum = 0;
	for (; rank > 0; rank -= rank & -rank) {
		*count += f->count[rank];
		*sum += f->sum[rank];
	}
}

/* The sum of |x - a| over the values a in f, x being of rank rank; the
 * totals are f's count and sum. Ties may sit on either side: |x - a| is 0
 * for them. */
static double fenwick_distance(const struct fenwick *f, size_t rank, double x,
			       double total_count, double total_sum)
{
	double c, s;

	fenwick_prefix(f, rank, &c, &s);
	return (x * c - s) + ((total_sum - s) - x * (total_count - c));
}

struct ranked {
	double v;
	size_t i;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The energy statistic of the split of v[0..n) at tau (left v[0..tau),
 * right v[tau..n)) from the between and within sums of |a - b|. */
static double energy(double between, double within_left, double within_right,
		     size_t tau, size_t n)
{
	double m = (double)tau, k = (double)(n - tau);
	double e = 2.0 * between / (m * k) - within_left / (m * (m - 1) / 2) -
		   within_right / (k * (k - 1) / 2);

	return m * k / (m + k) * e;
}

/* A segment's values ranked once: every permutation of them has the same
 * ranks, permuted with them, and the same sums. */
struct ranks {
	size_t *rank_of;             /* the rank (1-based) of each value */
	double total;                /* the sum of the values */
	double within;               /* the sum of |a - b| over all their pairs */
};

/* Ranks v[0..n); rank is scratch of n, out->rank_of holds n. */
static void rank_values(struct ranks *out, const double *v, size_t n, struct ranked *rank)
{
	size_t i;

	for (i = 0; i < n; i++) {
		rank[i].v = v[i];
		rank[i].i = i;
	}
	qsort(rank, n, sizeof(*rank), ranked_cmp);
	/* Each value counted against those below it, in sorted order. */
	out->total = 0;
	out->within = 0;
	for (i = 0; i < n; i++) {
		out->rank_of[rank[i].i] = i + 1;
		out->within += rank[i].v * (double)i - out->total;
		out->total += rank[i].v;
	}
}

static void fenwick_clear(struct fenwick *f, size_t n)
{
	f->n = n;
	memset(f->count, 0, (n + 1) * sizeof(double));
	memset(f->sum, 0, (n + 1) * sizeof(double));
}

/* Sweeps every split of v[0..n) that leaves min_segment values on either
 * side, the values of rank rank_of[i] and sums total and within (of
 * rank_values); left and right are scratch of n. Fills the best split and
 * its statistic, or leaves *out_tau 0 when the segment is too short. */
static void sweep(size_t *out_tau, double *out_q, const double *v, const size_t *rank_of,
		  size_t n, size_t min_segment, double total, double within,
		  struct fenwick *left, struct fenwick *right)
{
	double between = 0, within_left = 0, within_right = within, lc = 0, ls = 0;
	double best = -INFINITY;
	size_t i, tau, best_tau = 0;

	*out_tau = 0;
	*out_q = 0;
	if (min_segment < 2 || n < 2 * min_segment)
		return;
	/* Every value on the right to begin with. */
	fenwick_clear(left, n);
	fenwick_clear(right, n);
	for (i = 0; i < n; i++)
		fenwick_add(right, rank_of[i], 1, v[i]);
	/* Move v[tau - 1] from the right to the left, for tau = 1 .. n - min. */
	for (tau = 1; tau + min_segment <= n; tau++) {
		double x = v[tau - 1];
		size_t r = rank_of[tau - 1];
		double to_left, to_right;

		fenwick_add(right, r, -1, x);
		to_right = fenwick_distance(right, r, x, (double)(n - tau), total - ls - x);
		to_left = fenwick_distance(left, r, x, lc, ls);
		within_right -= to_right;
		within_left += to_left;
		between += to_right - to_left;
		fenwick_add(left, r, 1, x);
		lc += 1;
		ls += x;
		if (tau >= min_segment) {
			double q = energy(between, within_left, within_right, tau, n);

			if (q > best) {
				best = q;
				best_tau = tau;
			}
		}
	}
	*out_tau = best_tau;
	*out_q = best_tau ? best : 0;
}

/* Scratch for the scans of a series of at most n points. */
struct scratch {
	struct ranked *rank;
	struct ranks ranks;
	struct fenwick left, right;
	size_t *perm_rank;           /* a permutation's ranks */
	double *perm;                /* a permutation's values */
	size_t *index;               /* a permutation of 0 .. n - 1 */
};

static void scratch_init(struct scratch *x, size_t n)
{
	if (!n)
		n = 1;
	x->rank = xcalloc(n, sizeof(*x->rank));
	x->ranks.rank_of = xcalloc(n, sizeof(size_t));
	fenwick_init(&x->left, n);
	fenwick_init(&x->right, n);
	x->perm_rank = xcalloc(n, sizeof(size_t));
	x->perm = xcalloc(n, sizeof(double));
	x->index = xcalloc(n, sizeof(size_t));
}

static void scratch_release(struct scratch *x)
{
	free(x->rank);
	free(x->ranks.rank_of);
	fenwick_release(&x->left);
	fenwick_release(&x->right);
	free(x->perm_rank);
	free(x->perm);
	free(x->index);
}

/* The best split of v[0..n) and its statistic (0 and 0 when too short);
 * leaves v's ranks and sums in x->ranks. */
static void scan(size_t *out_tau, double *out_q, const double *v, size_t n, size_t min_segment,
		 struct scratch *x)
{
	rank_values(&x->ranks, v, n, x->rank);
	sweep(out_tau, out_q, v, x->ranks.rank_of, n, min_segment, x->ranks.total,
	      x->ranks.within, &x->left, &x->right);
}

int runner_changepoint_scan(size_t *out_tau, double *out_q, const double *v, size_t n,
			    size_t min_segment)
{
	struct scratch x;

	*out_tau = 0;
	*out_q = 0;
	if (n > RUNNER_CHANGEPOINT_POINTS_MAX)
		return err_set(-EINVAL, "a series of %zu points (at most %d)", n,
			       RUNNER_CHANGEPOINT_POINTS_MAX);
	scratch_init(&x, n);
	scan(out_tau, out_q, v, n, min_segment, &x);
	scratch_release(&x);
	return 0;
}

uint64_t runner_random_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

size_t runner_random_below(uint64_t *state, size_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;

	do
		x = runner_random_next(state);
	while (x >= limit);
	return (size_t)(x % n);
}

/* Tests s: its best split, and the share of permutations of its values
 * whose best split is at least as strong. The permutations' seed is the
 * method's seed and the segment's bounds, so a segment's answer is the
 * same whatever was split before it. The permutations stop once their
 * share can no longer fall under RUNNER_CHANGEPOINT_P: s->p is then a
 * lower bound, at or above it, and the split is not kept either way. */
static void segment_test(struct segment *s, const double *v, struct scratch *x)
{
	size_t n = s->hi - s->lo, i, k, tau;
	uint64_t state = RUNNER_CHANGEPOINT_SEED ^ ((uint64_t)s->lo << 32) ^ (uint64_t)s->hi;
	const double *w = v + s->lo;
	double q;
	int at_least = 0;

	s->tested = true;
	scan(&s->tau, &s->q, w, n, RUNNER_CHANGEPOINT_MIN_SEGMENT, x);
	s->p = 1;
	if (!s->tau)
		return;
	for (i = 0; i < n; i++)
		x->index[i] = i;
	for (k = 0; k < RUNNER_CHANGEPOINT_PERMUTATIONS; k++) {
		/* Each permutation shuffles the one before, as one array of the
		 * values would be: the same draws give the same permutations. */
		for (i = n - 1; i > 0; i--) {
			size_t j = runner_random_below(&state, i + 1), t = x->index[i];

			x->index[i] = x->index[j];
			x->index[j] = t;
		}
		for (i = 0; i < n; i++) {
			x->perm[i] = w[x->index[i]];
			x->perm_rank[i] = x->ranks.rank_of[x->index[i]];
		}
		sweep(&tau, &q, x->perm, x->perm_rank, n, RUNNER_CHANGEPOINT_MIN_SEGMENT,
		      x->ranks.total, x->ranks.within, &x->left, &x->right);
		if (q >= s->q)
			at_least++;
		if ((1.0 + at_least) / (RUNNER_CHANGEPOINT_PERMUTATIONS + 1.0) >=
		    RUNNER_CHANGEPOINT_P) {
			s->p = (1.0 + at_least) / (RUNNER_CHANGEPOINT_PERMUTATIONS + 1.0);
			return;
		}
	}
	s->p = (1.0 + at_least) / (RUNNER_CHANGEPOINT_PERMUTATIONS + 1.0);
}

static double mean(const double *v, size_t lo, size_t hi)
{
	double s = 0;
	size_t i;

	for (i = lo; i < hi; i++)
		s += v[i];
	return s / (double)(hi - lo);
}

static int changepoint_cmp(const void *a, const void *b)
{
	const struct runner_changepoint *x = a, *y = b;

	return x->index < y->index ? -1 : x->index > y->index;
}

int runner_changepoints_find(struct runner_changepoint *out, size_t max, const double *v,
			     size_t n)
{
	struct segment seg[RUNNER_CHANGEPOINT_MAX + 1];
	struct scratch x;
	size_t nseg = 1, found = 0, i;

	if (max > RUNNER_CHANGEPOINT_MAX)
		max = RUNNER_CHANGEPOINT_MAX;
	memset(out, 0, max * sizeof(*out));
	if (n > RUNNER_CHANGEPOINT_POINTS_MAX)
		return err_set(-EINVAL, "a series of %zu points (at most %d)", n,
			       RUNNER_CHANGEPOINT_POINTS_MAX);
	for (i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return err_set(-EINVAL, "point %zu of the series is not a finite number", i);
	if (n < 2 * RUNNER_CHANGEPOINT_MIN_SEGMENT || !max)
		return 0;
	scratch_init(&x, n);
	memset(seg, 0, sizeof(seg));
	seg[0].hi = n;
	/* Each round splits, of the segments whose best split is significant,
	 * the one whose statistic is largest. */
	while (found < max) {
		struct segment *best = NULL;

		for (i = 0; i < nseg; i++) {
			if (!seg[i].tested)
				segment_test(&seg[i], v, &x);
			if (seg[i].tau && seg[i].p < RUNNER_CHANGEPOINT_P &&
			    (!best || seg[i].q > best->q))
				best = &seg[i];
		}
		if (!best)
			break;
		out[found].index = best->lo + best->tau;
		out[found].q = best->q;
		out[found].p = best->p;
		found++;
		seg[nseg].lo = best->lo + best->tau;
		seg[nseg].hi = best->hi;
		best->hi = best->lo + best->tau;
		best->tested = false;
		nseg++;
	}
	qsort(out, found, sizeof(*out), changepoint_cmp);
	/* The regimes either side: from the change point before to the one
	 * after. */
	for (i = 0; i < found; i++) {
		size_t lo = i ? out[i - 1].index : 0;
		size_t hi = i + 1 < found ? out[i + 1].index : n;

		out[i].mean_before = mean(v, lo, out[i].index);
		out[i].mean_after = mean(v, out[i].index, hi);
	}
	scratch_release(&x);
	return (int)found;
}
