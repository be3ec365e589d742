#!/bin/sh
# bench/harness-cost.sh [PERFD]: what perfd's harness costs per process,
# side by side with hyperfine and with the least a launcher can do, on a
# program that does nothing (bench/trivial.c, static where cc can link it
# so). PERFD defaults to build/daemon/perfd.
#
# Each measurement runs N processes (200) and is the wall time of the whole
# command, from CLOCK_MONOTONIC (bench/timeit.c), divided by N:
#   perfd      perfd pair --pairs N/2 --db SCRATCH/x.db --quiet TRIVIAL TRIVIAL
#   hyperfine  hyperfine -N --runs N --warmup 0 --export-json ... TRIVIAL
#   floor      bench/spawn-floor.c: posix_spawn and wait, N times, nothing else
# and, to split perfd's cost, the same perfd command with its database in
# /dev/shm (a file system that never reaches a disk), and with --pairs 1
# (what perfd costs whatever the number of processes: the receipt, the
# hashes, the schema of a new database). Every round runs all of them in
# turn, ROUNDS rounds (5); the figures are the medians over the rounds.
#
# Targets: perfd within 1.2x hyperfine and within 1.3x the floor. The last
# line is the summary; the exit status is 0 whether or not they are met,
# and 2 when something could not be measured.
#
# Environment: HARNESS_N (200, even), HARNESS_ROUNDS (5), CC (cc).
set -eu

. "$(dirname "$0")/lib.sh"

n=${HARNESS_N:-200}
rounds=${HARNESS_ROUNDS:-5}
case $n in
'' | *[!0-9]*) bench_fail "HARNESS_N must be an even number from 4 to 2000" ;;
esac
case $rounds in
'' | *[!0-9]*) bench_fail "HARNESS_ROUNDS must be a number from 1 to 50" ;;
esac
[ "$n" -ge 4 ] && [ "$n" -le 2000 ] && [ $((n % 2)) -eq 0 ] ||
	bench_fail "HARNESS_N must be an even number from 4 to 2000"
[ "$rounds" -ge 1 ] && [ "$rounds" -le 50 ] ||
	bench_fail "HARNESS_ROUNDS must be a number from 1 to 50"
perfd=$(bench_perfd "${1:-build/daemon/perfd}")
bench_need hyperfine "install it (apt-get install hyperfine)"
bench_need python3 "it reads hyperfine's JSON"
bench_scratch

if ${CC:-cc} -O2 -static -o "$SCRATCH/trivial" "$BENCH_DIR/trivial.c" 2>/dev/null &&
	"$SCRATCH/trivial"; then
	linkage=static
else
	bench_cc trivial
	linkage=dynamic
fi
bench_cc timeit
bench_cc spawn-floor
trivial=$SCRATCH/trivial
shm=
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	shm=$(mktemp -d /dev/shm/perfd-bench.XXXXXX)
	trap 'rm -rf "$SCRATCH" "$shm"' EXIT
fi

# timed NAME COMMAND...: runs COMMAND under timeit with its output in
# $SCRATCH/NAME.log and prints the wall time in ms; stops the script,
# showing the log, when COMMAND fails.
timed() {
	log=$SCRATCH/$1.log
	shift
	if ! ms=$("$SCRATCH/timeit" "$log" "$@"); then
		echo "$(basename "$0"): failed: $*" >&2
		head -c 4000 "$log" >&2
		exit 2
	fi
	echo "$ms"
}

per() {
	calc "$1 / $n" "%.4f"
}

# The receipt's median wall_ms of the old arm: the program's own time as
# perfd measured it.
receipt_median() {
	awk '$1 == "old" && $2 == "median" { print $3; exit }' "$1"
}

echo "harness-cost: $n processes of a trivial program ($linkage), $rounds rounds"
echo "perfd: $perfd"
echo "machine: $(machine_line)"
echo
if [ -n "$shm" ]; then
	printf '%-7s %10s %10s %10s %14s %16s\n' round perfd hyperfine floor "perfd(shm db)" "perfd --pairs 1"
else
	printf '%-7s %10s %10s %10s %16s\n' round perfd hyperfine floor "perfd --pairs 1"
fi
: >"$SCRATCH/perfd"
: >"$SCRATCH/hyperfine"
: >"$SCRATCH/floor"
: >"$SCRATCH/shm"
: >"$SCRATCH/fixed"
: >"$SCRATCH/hf-mean"
: >"$SCRATCH/perfd-wall"
: >"$SCRATCH/floor-loop"
r=1
while [ "$r" -le "$rounds" ]; do
	rm -f "$SCRATCH"/x.db*
	t=$(timed perfd "$perfd" pair --pairs $((n / 2)) --db "$SCRATCH/x.db" --quiet "$trivial" "$trivial")
	p=$(per "$t")
	echo "$p" >>"$SCRATCH/perfd"
	receipt_median "$SCRATCH/perfd.log" >>"$SCRATCH/perfd-wall"

	t=$(timed hyperfine hyperfine -N --runs "$n" --warmup 0 --export-json "$SCRATCH/hf.json" "$trivial")
	h=$(per "$t")
	echo "$h" >>"$SCRATCH/hyperfine"
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["results"][0]["mean"] * 1e3)' \
		"$SCRATCH/hf.json" >>"$SCRATCH/hf-mean"

	t=$(timed floor "$SCRATCH/spawn-floor" "$n" "$trivial")
	f=$(per "$t")
	echo "$f" >>"$SCRATCH/floor"
	cat "$SCRATCH/floor.log" >>"$SCRATCH/floor-loop"

	rm -f "$SCRATCH"/x.db*
	t=$(timed fixed "$perfd" pair --pairs 1 --db "$SCRATCH/x.db" --quiet "$trivial" "$trivial")
	echo "$t" >>"$SCRATCH/fixed"
	if [ -n "$shm" ]; then
		rm -f "$shm"/x.db*
		t=$(timed shm "$perfd" pair --pairs $((n / 2)) --db "$shm/x.db" --quiet "$trivial" "$trivial")
		s=$(per "$t")
		echo "$s" >>"$SCRATCH/shm"
		printf '%-7s %10s %10s %10s %14s %16s\n' "$r" "$p" "$h" "$f" "$s" "$(calc "$(tail -n 1 "$SCRATCH/fixed")" "%.1f") ms"
	else
		printf '%-7s %10s %10s %10s %16s\n' "$r" "$p" "$h" "$f" "$(calc "$(tail -n 1 "$SCRATCH/fixed")" "%.1f") ms"
	fi
	r=$((r + 1))
done

mp=$(median <"$SCRATCH/perfd")
mh=$(median <"$SCRATCH/hyperfine")
mf=$(median <"$SCRATCH/floor")
mfixed=$(median <"$SCRATCH/fixed")
if [ -n "$shm" ]; then
	ms=$(median <"$SCRATCH/shm")
	printf '%-7s %10.4f %10.4f %10.4f %14.4f %16s\n' median "$mp" "$mh" "$mf" "$ms" "$(calc "$mfixed" "%.1f") ms"
else
	printf '%-7s %10.4f %10.4f %10.4f %16s\n' median "$mp" "$mh" "$mf" "$(calc "$mfixed" "%.1f") ms"
fi
echo "(ms per process: the whole command's wall time / $n)"
echo

r1=$(calc "$mp / $mh" "%.2f")
r2=$(calc "$mp / $mf" "%.2f")
echo "the program's own time, median over the rounds:"
echo "  hyperfine's mean                         $(calc "$(median <"$SCRATCH/hf-mean")" "%.4f") ms"
echo "  perfd's median wall_ms (old arm)         $(calc "$(median <"$SCRATCH/perfd-wall")" "%.4f") ms"
echo "  spawn-floor, its loop alone              $(calc "$(median <"$SCRATCH/floor-loop")" "%.4f") ms"
echo "perfd's cost, split:"
echo "  fixed: the whole run with --pairs 1        $(calc "$mfixed" "%.1f") ms"
echo "  per process beyond the fixed cost          $(calc "($mp * $n - $mfixed) / ($n - 2)" "%.4f") ms"
if [ -n "$shm" ]; then
	echo "  saved per process by a database in /dev/shm $(calc "$mp - $ms" "%.4f") ms"
fi
echo

met1=$(awk "BEGIN { print ($r1 <= 1.2) ? \"met\" : \"missed\" }")
met2=$(awk "BEGIN { print ($r2 <= 1.3) ? \"met\" : \"missed\" }")
echo "target perfd/hyperfine <= 1.2: $met1 ($r1)"
echo "target perfd/floor <= 1.3: $met2 ($r2)"
echo "harness-cost: perfd $(calc "$mp" "%.3f") ms/process, hyperfine $(calc "$mh" "%.3f"), floor $(calc "$mf" "%.3f"), perfd/hyperfine $r1, perfd/floor $r2"
