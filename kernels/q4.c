/* The canary's CPU side: inputs, the q4 format and the reference results. */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common.h"
#include "kernels-internal.h"

uint64_t canary_prng_next(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* A float in [-1, 1) with 24 random bits. */
static float unit(uint64_t *prng)
{
	return (float)((double)(canary_prng_next(prng) >> 40) / (double)(1 << 23) - 1.0);
}

uint32_t q4_pack8(const uint8_t nibbles[8])
{
	uint32_t w = 0;

	for (unsigned e = 0; e < 8; e++)
		w |= (uint32_t)(nibbles[e] & 15) << (4 * e);
	return w;
}

unsigned q4_nibble(const struct q4_matrix *m, unsigned row, unsigned col)
{
	uint32_t w = m->words[((size_t)row * m->cols + col) / 8];

	return (w >> (4 * (col % 8))) & 15;
}

void q4_matrix_init_random(struct q4_matrix *m, float *x, unsigned rows,
			   unsigned cols, uint64_t *prng)
{
	size_t nwords = (size_t)rows * cols / 8;
	size_t nblocks = (size_t)rows * cols / Q4_BLOCK;
	uint8_t nib[8];

	m->rows = rows;
	m->cols = cols;
	m->words = xmalloc(nwords * sizeof(*m->words));
	m->scales = xmalloc(nblocks * sizeof(*m->scales));
	for (size_t i = 0; i < nwords; i++) {
		uint64_t r = canary_prng_next(prng);

		for (unsigned e = 0; e < 8; e++)
			nib[e] = (r >> (4 * e)) & 15;
		m->words[i] = q4_pack8(nib);
	}
	/* Scales of the size a quantizer gives weights of magnitude ~0.1. */
	for (size_t i = 0; i < nblocks; i++)
		m->scales[i] = 0.01f + 0.02f * fabsf(unit(prng));
	for (unsigned c = 0; c < cols; c++)
		x[c] = unit(prng);
}

void q4_matrix_release(struct q4_matrix *m)
{
	free(m->words);
	free(m->scales);
	m->words = NULL;
	m->scales = NULL;
}

void q4_matvec_ref(double *y, double *l1, const struct q4_matrix *m,
		   const float *x, bool swap)
{
	for (unsigned r = 0; r < m->rows; r++) {
		double sum = 0, abs = 0;

		for (unsigned c = 0; c < m->cols; c++) {
			unsigned from = swap ? (c ^ 1) : c;
			double s = m->scales[((size_t)r * m->cols + c) / Q4_BLOCK];
			double w = ((double)q4_nibble(m, r, from) - 8) * s;

			sum += w * x[c];
			abs += fabs(w * x[c]);
		}
		y[r] = sum;
		l1[r] = abs;
	}
}

double q4_max_rel_err(const float *y, const double *ref, const double *l1,
		      unsigned rows)
{
	double worst = 0;

	for (unsigned r = 0; r < rows; r++) {
		double e = fabs((double)y[r] - ref[r]) / (l1[r] > 0 ? l1[r] : 1);

		if (!(e <= worst))      /* also catches NaN */
			worst = isnan(e) ? INFINITY : e;
	}
	return worst;
}

int q4_extra_work(unsigned *whole, unsigned *part, double pct, unsigned reps,
		  unsigned rows)
{
	double extra;
	unsigned long long n;

	assert(reps > 0 && rows > 0);
	if (!isfinite(pct) || pct < 0 || pct > KERNEL_CANARY_EXTRA_MAX)
		return err_set(-EINVAL, "extra work %g%% is outside 0..%d%%", pct,
			       KERNEL_CANARY_EXTRA_MAX);
	/* In rows: a dispatch is rows rows, the work reps dispatches. */
	extra = pct / 100.0 * reps * rows;
	n = (unsigned long long)llround(extra);
	if (fabs(extra - (double)n) > 1e-6 * fmax(1.0, extra))
		return err_set(-EINVAL, "extra work %g%% is %.4g rows of %u a dispatch, not a"
			       " whole number: at this scale it goes in steps of %g%%",
			       pct, extra, rows, 100.0 / ((double)reps * rows));
	*whole = (unsigned)(n / rows);
	*part = (unsigned)(n % rows);
	return 0;
}
