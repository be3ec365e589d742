#!/usr/bin/env bash
# bench/first-hour.sh [REPO]: the tutorial's figure (docs/tutorial.md,
# "How long"): a fresh clone of REPO (default this checkout) built by
# `./dev.sh build` (npm ci included; the Debian packages must be there),
# then the tutorial followed word for word by its own test, t0060, on
# that clone's binary. Prints the clone and build's wall time, the
# tutorial's time to the first verdict and its whole time, and the sum.
set -eu
. "$(dirname "$0")/lib.sh"
REPO=${1:-$(cd "$BENCH_DIR/.." && pwd)}
bench_need git "apt-get install git"
bench_scratch
machine_line
start=$(date +%s.%N)
git clone -q "$REPO" "$SCRATCH/perfd"
(cd "$SCRATCH/perfd" && ./dev.sh build >/dev/null)
built=$(calc "$(date +%s.%N) - $start" %.1f)
b=$SCRATCH/perfd/build
PERFD=$b/daemon/perfd PLANT=$b/tests/plant WORK_OLD=$b/tests/work-old WORK_NEW=$b/tests/work-new \
	TEST_GIT=$b/builder/test-git bash "$SCRATCH/perfd/tests/t0060-tutorial.sh" >"$SCRATCH/t0060.out" 2>&1 ||
	bench_fail "the tutorial's test failed: $(grep -m1 '^not ok' "$SCRATCH/t0060.out")"
first=$(sed -n 's/.*time to the first verdict[^0-9]*\([0-9.]*\) s.*/\1/p' "$SCRATCH/t0060.out" | head -n 1)
whole=$(sed -n 's/.*the whole tutorial[^0-9]*\([0-9.]*\) s.*/\1/p' "$SCRATCH/t0060.out" | head -n 1)
[ -n "$first" ] && [ -n "$whole" ] || bench_fail "t0060 printed no timing lines"
echo "clone and ./dev.sh build: $built s"
echo "the tutorial to its first verdict: $first s (all of it: $whole s)"
echo "from git clone to the first verdict: $(calc "$built + $first" %.1f) s"
