#!/bin/sh
# bench/fuzz.sh MINUTES [BUILD [OUT]]: fuzzes every target of tests/fuzz/
# for MINUTES minutes each (a fraction too: 0.5), one after the other, from
# its seed corpus, with the libFuzzer targets of BUILD (default build-fuzz,
# made with -Dfuzz=true; docs/testing.md, "Fuzzing"). The new inputs each
# target finds go to OUT/corpus/NAME (default: a fresh directory under
# TMPDIR, kept and named at the end), never to the seed corpus; a crash's
# input to OUT/crash-NAME-*, its report to OUT/NAME.log. Prints per target
# the runs, execs/s, coverage (edges, features), new inputs and crashes,
# and exits 1 when any target crashed. A target stops at its first crash;
# an input that runs over 10 s counts as one (its input: OUT/crash-NAME-timeout-*).
set -eu

. "$(dirname "$0")/lib.sh"

MINUTES=${1:?usage: bench/fuzz.sh MINUTES [BUILD [OUT]]}
BUILD=${2:-build-fuzz}
OUT=${3:-$(mktemp -d "${TMPDIR:-/tmp}/perfd-fuzz.XXXXXX")}
SRC=$(cd "$BENCH_DIR/.." && pwd)
SECONDS_EACH=$(calc "$MINUTES * 60" %.0f)
[ "$SECONDS_EACH" -ge 1 ] || bench_fail "MINUTES must be at least 1/60"
[ -d "$BUILD/tests/fuzz" ] ||
	bench_fail "no fuzz targets in '$BUILD': CC=clang meson setup $BUILD -Dfuzz=true -Dtests=false && ninja -C $BUILD fuzz"
mkdir -p "$OUT/corpus"

echo "# $(machine_line)"
echo "# $SECONDS_EACH s per target; new inputs and crashes in $OUT"
printf '%-14s %10s %9s %6s %7s %5s %7s\n' target runs execs/s edges features new crashes
crashed=0
for src in "$SRC"/tests/fuzz/fuzz-*.c; do
	name=$(basename "$src" .c)
	name=${name#fuzz-}
	exe=$BUILD/tests/fuzz/fuzz-$name
	[ -x "$exe" ] || bench_fail "'$exe' is missing: ninja -C $BUILD fuzz"
	mkdir -p "$OUT/corpus/$name"
	rc=0
	"$exe" -max_total_time="$SECONDS_EACH" -print_final_stats=1 -timeout=10 \
		-artifact_prefix="$OUT/crash-$name-" \
		"$OUT/corpus/$name" "$SRC/tests/fuzz/corpus/$name" >"$OUT/$name.log" 2>&1 || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$name.log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$OUT/$name.log" | tail -n 1)
	new=$(sed -n 's/^stat::new_units_added: *//p' "$OUT/$name.log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$OUT/$name.log" | tail -n 1)
	crashes=$(find "$OUT" -maxdepth 1 -name "crash-$name-*" -o -maxdepth 1 \
		-name "leak-$name-*" -o -maxdepth 1 -name "timeout-$name-*" | wc -l)
	if [ "$rc" != 0 ] && [ "$crashes" = 0 ]; then
		crashes="1?"
	fi
	[ "$rc" = 0 ] || crashed=1
	printf '%-14s %10s %9s %6s %7s %5s %7s\n' "$name" "${runs:--}" "${rate:--}" \
		"$(echo "$cov" | awk '{ print $2 }')" "$(echo "$cov" | awk '{ print $4 }')" \
		"${new:--}" "$crashes"
done
[ "$crashed" = 0 ] || echo "crashes: see $OUT/NAME.log and $OUT/crash-*"
exit "$crashed"
