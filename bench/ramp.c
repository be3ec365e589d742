/*
 * ramp RISE_S MAX_PCT HOLD_S: a background load that grows steadily. Time
 * is cut into 10 ms slots; in each slot the program busy-loops for d% of
 * the slot and sleeps for the rest, where d rises linearly from 0 to
 * MAX_PCT over RISE_S seconds and then stays at MAX_PCT for HOLD_S
 * seconds. Then it exits by itself: it never runs longer than
 * RISE_S + HOLD_S seconds, whatever happens to the program that started
 * it. Pin it with taskset to share a CPU with what is measured.
 * Exits 2 on a bad argument.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"

#define SLOT_NS 10000000LL

int main(int argc, char **argv)
{
	double rise_s, max_pct, hold_s;
	int64_t t0, end, slot, rise_ns;

	if (argc != 4) {
		fprintf(stderr, "usage: ramp RISE_S MAX_PCT HOLD_S\n");
		return 2;
	}
	rise_s = strtod(argv[1], NULL);
	max_pct = strtod(argv[2], NULL);
	hold_s = strtod(argv[3], NULL);
	if (!(rise_s > 0 && rise_s <= 3600) || !(max_pct >= 0 && max_pct <= 100) ||
	    !(hold_s >= 0 && hold_s <= 3600)) {
		fprintf(stderr, "ramp: expected 0 < RISE_S <= 3600, 0 <= MAX_PCT <= 100, "
			"0 <= HOLD_S <= 3600\n");
		return 2;
	}
	rise_ns = (int64_t)(rise_s * 1e9);
	t0 = now_ns();
	end = t0 + rise_ns + (int64_t)(hold_s * 1e9);
	for (slot = t0; slot < end; slot += SLOT_NS) {
		int64_t now = now_ns(), into, busy_until;
		double frac;

		/* Behind by a whole slot (the CPU was taken from us): go on
		 * with the slot we are in rather than catch up. */
		if (now >= slot + SLOT_NS)
			slot += (now - slot) / SLOT_NS * SLOT_NS;
		into = slot - t0;
		frac = into >= rise_ns ? 1.0 : (double)into / (double)rise_ns;
		busy_until = slot + (int64_t)(frac * max_pct / 100.0 * (double)SLOT_NS);
		while (now_ns() < busy_until)
			;
		sleep_until(slot + SLOT_NS);
	}
	return 0;
}
