#!/bin/sh
# bench/drift.sh [PERFD]: the machine slows down steadily during the run
# while new is truly 5% faster than old. PERFD defaults to
# build/daemon/perfd.
#
# The workload is bench/spin.c: old does 100 units of CPU-bound work, new
# 95, and each prints TIMING spin_ms. The load is bench/ramp.c pinned to
# CPU DRIFT_CPU (0): its duty cycle on that CPU rises linearly from 0 to
# DRIFT_MAX% (70) over the expected length of a run, then holds until the
# run ends (it exits by itself after twice that length at most). Under a
# fresh ramp each time, with the measured processes on the same CPU:
#   perfd      perfd pair --pairs P --cpus 0 --old-arg 100 --new-arg 95
#              spin spin: interleaved old,new,new,old,...; the figure is
#              the receipt's gain.median (of spin_ms) and its verdict
#   sequential taskset -c 0 hyperfine -N --runs P 'spin 100' 'spin 95':
#              all old, then all new, as hyperfine runs them; the figure
#              is (old - new) / old of hyperfine's mean wall times (and of
#              its medians)
# P is DRIFT_PAIRS (10). A control pair of runs without the ramp comes
# first, then DRIFT_REPEATS (3) repeats under the ramp.
#
# Target: perfd has the sign right and the size within 2 points of 5%;
# the sequential estimate does not. The exit status is 0 whether or not
# it is met, and 2 when something could not be measured. The whole script
# takes about a minute on the machine of docs/performance.md.
set -eu

. "$(dirname "$0")/lib.sh"

pairs=${DRIFT_PAIRS:-10}
repeats=${DRIFT_REPEATS:-3}
max=${DRIFT_MAX:-70}
cpu=${DRIFT_CPU:-0}
for v in "$pairs" "$repeats" "$max" "$cpu"; do
	case $v in
	'' | *[!0-9]*) bench_fail "DRIFT_PAIRS, DRIFT_REPEATS, DRIFT_MAX and DRIFT_CPU must be whole numbers" ;;
	esac
done
[ "$pairs" -ge 3 ] && [ "$pairs" -le 50 ] || bench_fail "DRIFT_PAIRS must be from 3 to 50"
[ "$repeats" -ge 1 ] && [ "$repeats" -le 10 ] || bench_fail "DRIFT_REPEATS must be from 1 to 10"
[ "$max" -le 95 ] || bench_fail "DRIFT_MAX must be from 0 to 95"
perfd=$(bench_perfd "${1:-build/daemon/perfd}")
bench_need hyperfine "install it (apt-get install hyperfine)"
bench_need taskset "it pins the load and the sequential run (util-linux)"
bench_need python3 "it reads the JSON receipts"
taskset -c "$cpu" true 2>/dev/null || bench_fail "cannot pin to CPU $cpu (DRIFT_CPU)"
bench_scratch
bench_cc spin
bench_cc ramp
spin=$SCRATCH/spin
ramp_pid=
trap 'if [ -n "$ramp_pid" ]; then kill "$ramp_pid" 2>/dev/null || :; fi; rm -rf "$SCRATCH"' EXIT

# Unloaded length of old, to fit the ramp to a run of 2P processes, which
# the ramp slows by about 1 + max/200 on average.
for _ in 1 2 3; do
	taskset -c "$cpu" "$spin" 100 | sed -n 's/^TIMING spin_ms=//p'
done >"$SCRATCH/calib"
t100=$(median <"$SCRATCH/calib")
rise=$(calc "2 * $pairs * $t100 / 1000 * (1 + $max / 200) + 0.2" "%.2f")

ramp_start() {
	taskset -c "$cpu" "$SCRATCH/ramp" "$rise" "$max" "$rise" &
	ramp_pid=$!
}

ramp_stop() {
	kill "$ramp_pid" 2>/dev/null || :
	wait "$ramp_pid" 2>/dev/null || :
	ramp_pid=
}

# run_perfd TAG: one interleaved comparison; receipt in $SCRATCH/TAG.json.
run_perfd() {
	rc=0
	"$perfd" pair --pairs "$pairs" --cpus "$cpu" --db "$SCRATCH/drift.db" --json --quiet \
		--old-arg 100 --new-arg 95 "$spin" "$spin" >"$SCRATCH/$1.json" 2>"$SCRATCH/$1.err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "$(basename "$0"): perfd pair exited $rc" >&2
		head -c 4000 "$SCRATCH/$1.err" "$SCRATCH/$1.json" >&2
		exit 2
	fi
}

# run_sequential TAG: all old then all new; hyperfine's JSON in
# $SCRATCH/TAG.json.
run_sequential() {
	taskset -c "$cpu" hyperfine -N --runs "$pairs" --warmup 0 --style basic \
		--export-json "$SCRATCH/$1.json" "$spin 100" "$spin 95" >"$SCRATCH/$1.log" 2>&1 || {
		echo "$(basename "$0"): hyperfine failed" >&2
		head -c 4000 "$SCRATCH/$1.log" >&2
		exit 2
	}
}

# perfd_figures TAG: "gain_pct verdict old_median new_median" (spin_ms).
perfd_figures() {
	python3 - "$SCRATCH/$1.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print("%.3f %s %.1f %.1f" % (r["gain"]["median"] * 100, r["verdict"],
      r["old"]["median"], r["new"]["median"]))
EOF
}

# sequential_figures TAG: "gain_of_means_pct gain_of_medians_pct old_mean
# new_mean", from hyperfine's wall times in ms.
sequential_figures() {
	python3 - "$SCRATCH/$1.json" <<'EOF'
import json, statistics, sys
old, new = json.load(open(sys.argv[1]))["results"][:2]
om, nm = old["mean"] * 1e3, new["mean"] * 1e3
omed, nmed = statistics.median(old["times"]) * 1e3, statistics.median(new["times"]) * 1e3
print("%.3f %.3f %.1f %.1f" % ((om - nm) / om * 100, (omed - nmed) / omed * 100, om, nm))
EOF
}

# ok GAIN_PCT: "yes" when the sign is right and GAIN_PCT is within 2
# points of 5.
ok() {
	awk "BEGIN { g = $1; print (g >= 3 && g <= 7) ? \"yes\" : \"no\" }"
}

echo "drift: old = spin 100, new = spin 95 (new truly 5% faster), $pairs pairs, CPU $cpu"
echo "perfd: $perfd"
echo "machine: $(machine_line)"
echo "spin 100 unloaded: $(calc "$t100" "%.1f") ms; ramp: duty 0 to $max% over $rise s, then held"
echo
printf '%-9s %9s %-12s %15s %12s %16s %14s\n' run "perfd" verdict "perfd within 2" "sequential" "(of medians)" "seq within 2"

t0=$(date +%s)
perfd_ok=0
seq_ok=0
run=0
while [ "$run" -le "$repeats" ]; do
	if [ "$run" -eq 0 ]; then
		label="no load"
	else
		label="ramp $run"
		ramp_start
	fi
	run_perfd "perfd-$run"
	[ "$run" -eq 0 ] || ramp_stop
	sleep 1
	[ "$run" -eq 0 ] || ramp_start
	run_sequential "seq-$run"
	[ "$run" -eq 0 ] || ramp_stop
	perfd_figures "perfd-$run" >"$SCRATCH/figures"
	read -r pg verdict _ <"$SCRATCH/figures"
	sequential_figures "seq-$run" >"$SCRATCH/figures"
	read -r sg sgmed _ <"$SCRATCH/figures"
	po=$(ok "$pg")
	so=$(ok "$sg")
	printf '%-9s %8.3f%% %-12s %15s %11.3f%% %15.3f%% %14s\n' "$label" "$pg" "$verdict" "$po" "$sg" "$sgmed" "$so"
	if [ "$run" -gt 0 ]; then
		[ "$po" = no ] || perfd_ok=$((perfd_ok + 1))
		[ "$so" = no ] || seq_ok=$((seq_ok + 1))
		echo "$pg" >>"$SCRATCH/perfd-gains"
		echo "$sg" >>"$SCRATCH/seq-gains"
	fi
	run=$((run + 1))
	sleep 1
done
echo "(gains of new over old in %; perfd: median of pair gains of spin_ms; sequential:"
echo " hyperfine's mean wall times, and its medians in parentheses; within 2: sign right"
echo " and within 2 points of 5%; $(($(date +%s) - t0)) s in all)"
echo
if [ "$perfd_ok" -eq "$repeats" ] && [ "$seq_ok" -eq 0 ]; then
	met=met
else
	met=missed
fi
echo "target (perfd right in every ramp run, the sequential estimate in none): $met"
echo "drift: perfd gain $(median <"$SCRATCH/perfd-gains" | xargs printf '%.2f')% (right $perfd_ok of $repeats), sequential $(median <"$SCRATCH/seq-gains" | xargs printf '%.2f')% (right $seq_ok of $repeats), true 5%"
