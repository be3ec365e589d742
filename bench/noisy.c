/*
 * noisy [--units N] [--noise PCT] [--slow PCT] [--clock wall|cpu]
 * [--chunks K]: CPU-bound work whose amount varies from process to
 * process, then one line of the perfd protocol:
 *   TIMING work_ms=...
 * the time of the work alone, from CLOCK_MONOTONIC (--clock wall, the
 * default) or CLOCK_THREAD_CPUTIME_ID (--clock cpu: the CPU time the
 * work's thread was given, which leaves out the time it waited while
 * other work held its CPU). With --chunks K (default 1) the work is timed
 * in K equal chunks and the figure is the whole work's time at the
 * fastest chunk's rate: a chunk that a busy machine slowed (a preemption,
 * a neighbour's burst) does not count, and a change of the work changes
 * every chunk alike.
 *
 * The work is N units (default 20, a unit about 1 ms on the machine of
 * docs/performance.md) of dependent xorshift steps, as bench/spin.c does,
 * times exp(PCT/100 * z) with z a standard normal draw (--noise, default
 * 3: a log-normal factor whose spread is about 3% of the work), times
 * 1 + PCT/100 for --slow (default 0: a planted slow-down of that much
 * more work).
 *
 * z comes from a seed made of NOISY_SEED (any text; perfd pair --env gives
 * it to both arms) and PERFD_SEQ (the process's place in the run). Each
 * process of a run thus draws its own z, independent of the others and of
 * its arm, so the two arms of an A/A comparison (one file, one argument
 * list, one environment) are exchangeable, and a run can be repeated with
 * the same draws. Without NOISY_SEED the seed comes from /dev/urandom.
 * Exits 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STEPS_PER_UNIT 400000

static double now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* splitmix64, as kernels/q4.c draws the canary's inputs. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* FNV-1a over text: the seed's text as a number. */
static uint64_t hash_text(const char *t)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; *t; t++)
		h = (h ^ (unsigned char)*t) * UINT64_C(0x100000001b3);
	return h;
}

static uint64_t seed(void)
{
	const char *text = getenv("NOISY_SEED"), *seq = getenv("PERFD_SEQ");
	uint64_t s = 0;
	FILE *f;

	if (text) {
		s = hash_text(text);
		s ^= next(&(uint64_t){ hash_text(seq ? seq : "") });
		return s;
	}
	f = fopen("/dev/urandom", "rb");
	if (!f || fread(&s, sizeof(s), 1, f) != 1) {
		fprintf(stderr, "noisy: cannot read /dev/urandom\n");
		exit(2);
	}
	fclose(f);
	return s;
}

/* A standard normal draw (Box-Muller), from two uniforms in (0, 1). */
static double normal(uint64_t *s)
{
	double u1 = ((double)(next(s) >> 11) + 0.5) / 9007199254740992.0;
	double u2 = ((double)(next(s) >> 11) + 0.5) / 9007199254740992.0;

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static int number(double *out, const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo && v <= hi)) {
		fprintf(stderr, "noisy: %s: '%s' is not a number from %g to %g\n", opt, s, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	double units = 20, noise = 3, slow = 0, chunks = 1, factor, t0, t1, best = -1;
	clockid_t clock = CLOCK_MONOTONIC;
	volatile uint64_t sink;
	uint64_t x = 88172645463325252ull, s, steps, per, i, c;

	for (int a = 1; a < argc; a++) {
		double *v = !strcmp(argv[a], "--units") ? &units :
			    !strcmp(argv[a], "--noise") ? &noise :
			    !strcmp(argv[a], "--slow") ? &slow :
			    !strcmp(argv[a], "--chunks") ? &chunks : NULL;

		if (a + 1 < argc && !strcmp(argv[a], "--clock")) {
			a++;
			if (!strcmp(argv[a], "wall")) {
				clock = CLOCK_MONOTONIC;
			} else if (!strcmp(argv[a], "cpu")) {
				clock = CLOCK_THREAD_CPUTIME_ID;
			} else {
				fprintf(stderr, "noisy: --clock: '%s' is not wall or cpu\n", argv[a]);
				return 2;
			}
			continue;
		}
		if (!v || a + 1 == argc) {
			fprintf(stderr, "usage: noisy [--units N] [--noise PCT] [--slow PCT] "
					"[--clock wall|cpu] [--chunks K]\n");
			return 2;
		}
		if (number(v, argv[a], argv[a + 1], v == &units || v == &chunks ? 1 : 0,
			   v == &units ? 100000 : v == &chunks ? 1000 : 100) < 0)
			return 2;
		if (v == &chunks && chunks != floor(chunks)) {
			fprintf(stderr, "noisy: --chunks: '%s' is not a whole number\n", argv[a + 1]);
			return 2;
		}
		a++;
	}
	s = seed();
	factor = exp(noise / 100.0 * normal(&s)) * (1.0 + slow / 100.0);
	steps = (uint64_t)llround(units * STEPS_PER_UNIT * factor);
	per = steps / (uint64_t)chunks;
	/* What does not divide into equal chunks runs first, untimed. */
	for (i = 0; i < steps - per * (uint64_t)chunks; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	for (c = 0; c < (uint64_t)chunks; c++) {
		t0 = now_ms(clock);
		for (i = 0; i < per; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		t1 = now_ms(clock);
		if (best < 0 || t1 - t0 < best)
			best = t1 - t0;
	}
	sink = x;
	(void)sink;
	printf("TIMING work_ms=%.4f\n", per ? best * (double)steps / (double)per : 0.0);
	return 0;
}
