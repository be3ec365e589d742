/*
 * What the canary computes on the CPU: its inputs, the q4 format, the
 * reference results and the digest. No Vulkan here, so the unit tests
 * can check all of it without a device.
 */
#ifndef PERFD_KERNELS_INTERNAL_H
#define PERFD_KERNELS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

/* Every canary input comes from this seed, so every run sees the same data. */
#define CANARY_SEED UINT64_C(0x7065726664303031)

/* splitmix64: small, fast, and the same sequence everywhere. */
uint64_t canary_prng_next(uint64_t *state);

/*
 * The q4 format: blocks of Q4_BLOCK weights share one float scale; a weight
 * is (nibble - 8) * scale. Two nibbles per byte, element 2i in the low
 * nibble of byte i, bytes little-endian in uint32 words: element e of a
 * word is at bits 4e..4e+3. cols is a multiple of Q4_BLOCK.
 */
#define Q4_BLOCK 32

struct q4_matrix {
	unsigned rows;
	unsigned cols;
	uint32_t *words;        /* rows * cols / 8 */
	float *scales;          /* rows * cols / Q4_BLOCK */
};

/* Fills m (allocating its arrays, freed by q4_matrix_release) and x[cols]. */
void q4_matrix_init_random(struct q4_matrix *m, float *x, unsigned rows,
			   unsigned cols, uint64_t *prng);
void q4_matrix_release(struct q4_matrix *m);

/* Packs 8 nibbles (0..15), element 0 first, into one word; and back. */
uint32_t q4_pack8(const uint8_t nibbles[8]);
unsigned q4_nibble(const struct q4_matrix *m, unsigned row, unsigned col);

/*
 * y = W x in double, and l1[r] = sum |w x| over the row, the scale against
 * which an error is judged. swap reads each byte's nibbles in the wrong
 * order, as the planted control does.
 */
void q4_matvec_ref(double *y, double *l1, const struct q4_matrix *m,
		   const float *x, bool swap);

/* The largest |y[r] - ref[r]| / l1[r] over the rows (l1 of 0 counts as 1). */
double q4_max_rel_err(const float *y, const double *ref, const double *l1,
		      unsigned rows);

/*
 * The planted work of --extra-work: pct percent more than reps dispatches
 * over rows rows, as *whole more dispatches and then one over the first
 * *part rows (0: none). The extra work is exact or refused, never rounded:
 * -EINVAL with a detail when pct of the work is not a whole number of rows,
 * or pct is outside 0..KERNEL_CANARY_EXTRA_MAX; *whole and *part are then
 * untouched.
 */
int q4_extra_work(unsigned *whole, unsigned *part, double pct, unsigned reps,
		  unsigned rows);

/* The first 12 hex digits of the sha256 of the parts, concatenated; out ""
 * and sha256_hex_parts's error when libcrypto cannot hash. */
int kernel_hash_parts(char out[KERNEL_HASH_LEN], const void *const parts[],
		      const size_t lens[], size_t n);

#endif
