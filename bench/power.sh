#!/bin/sh
# bench/power.sh [--cpu] [--gpu PROFILE] [PERFD [OUTDIR]]: how often
# perfd's verdicts are wrong, and how often it finds a planted change,
# with perfd's default settings, side by side with Welch's t-test and
# Mann-Whitney U on the very same processes (issue 11).
#
# CPU part (run unless --gpu is given alone; meant for the 2-CPU Debian
# machine of docs/performance.md):
#   program   bench/noisy.c: a fixed amount of CPU work times a seeded
#             log-normal factor of about 3% per process (seeded from
#             NOISY_SEED, given to both arms by --env, and PERFD_SEQ: the
#             arms of an A/A are exchangeable), --slow P doing P% more;
#             it prints TIMING work_ms=, timed on CLOCK_MONOTONIC
#   load      bench/burner.c: POWER_LOAD_WORKERS workers (one per CPU),
#             each busy or idle at random (a coin for each period, periods
#             exponential, mean POWER_LOAD_MS), seeded, on for the whole
#             CPU part and stopped with it
#   runs      POWER_CAL A/A comparisons first (calibration, as the agent
#             would make them), then POWER_AA A/A comparisons, then
#             POWER_PLANTED comparisons with new doing POWER_SLOW% more
#             work; all `perfd pair` with its default settings, one
#             --case and one --host-name
#   shift     (POWER_SHIFT above 0, and the load on) before all that, a
#             load that changes between a calibration and its comparisons:
#             POWER_CAL A/As of case cpu-shift with the load off, then the
#             load on and POWER_SHIFT comparisons of the same program
#             against itself, told apart by an environment variable only
#             (--new-env POWER_ARM=new), so that none of them calibrates
#             the next: every verdict there is false, and the calibration
#             is the quiet one throughout
# GPU part (--gpu PROFILE; a GPU host where Vulkan works, as
# bench/gpu-canary.sh: hosts/h200.conf, hosts/h100.conf): the canary
# (`perfd canary --scale POWER_GPU_SCALE`) through `perfd pair --host
# PROFILE --metric q4_matvec_ms`: POWER_GPU_CAL calibration A/As, POWER_GPU_AA A/As,
# POWER_GPU_1PCT with new doing 1% more (`--extra-work 1`),
# POWER_GPU_HALF with 0.5% more judged with --min-effect 0.25%, all of one
# case; and POWER_GPU_UNCAL of the same 0.5% under a case no A/A
# calibrated; and POWER_GPU_CONTROL comparisons of the canary against
# itself doing POWER_GPU_BIG% more q4 work, judged on the copy kernel
# (--metric copy_ms, case canary-copy, calibrated by POWER_GPU_CAL A/As
# of its own): an unchanged kernel in a changed program, the control a
# job runs beside the case its change is about, which should come out
# unchanged, not run every pair unresolved. At the defaults that is 80
# comparisons; on the H200 at scale 8 a comparison of 3 pairs took about
# 4.8 s (0.8 s a canary process), so about 6.5 minutes at 3 pairs each,
# the rest of 10 minutes left for the stages pairs-median/2 adds.
#
# Every comparison's receipt (`perfd pair --json`) is kept in
# OUTDIR/receipts.jsonl; bench/power-stats.py reads back each one's
# counted processes (warm-ups left out) and judges them by Welch's t-test
# and exact Mann-Whitney U, at 0.05 two-sided and at 1% one-sided each
# way. It writes OUTDIR/results.md (the tables, printed too),
# OUTDIR/results.json (every figure and every comparison) and leaves
# OUTDIR/power.db for `perfd verify` and `perfd show` (OUTDIR defaults
# to /tmp/perfd-power; what a previous run left there is removed). The
# report is rewritten as parts end, so a run cut short keeps what it
# finished.
#
# Environment (defaults in brackets):
#   POWER_CAL [5] POWER_AA [400] POWER_PLANTED [50] POWER_SLOW [5] POWER_SHIFT [0]
#   POWER_NOISE [3] POWER_UNITS [20] POWER_LOAD [1] POWER_LOAD_MS [500]
#   POWER_LOAD_WORKERS [nproc]
#   POWER_SEED [1] POWER_GPU_SCALE [8] POWER_GPU_CAL [5] POWER_GPU_AA [50]
#   POWER_GPU_1PCT [10] POWER_GPU_HALF [10] POWER_GPU_UNCAL [5]
#   POWER_GPU_CONTROL [0]
#   POWER_GPU_MAX_PAIRS [perfd's default; needs pairs-median/2's --max-pairs]
#   POWER_GPU_BIG [1] POWER_GPU_BIG_MIN [the profile's] POWER_GPU_BIG_PAIRS [3]
#   POWER_GPU_SMALL [0.5] POWER_GPU_SMALL_MIN [0.25]: the two planted sizes
#   in percent (POWER_GPU_1PCT and POWER_GPU_HALF comparisons of each), the
#   min_effect each is judged with, and the pairs within which each big one
#   must be found
#   CC [cc]
set -eu

. "$(dirname "$0")/lib.sh"

usage="usage: bench/power.sh [--cpu] [--gpu PROFILE] [PERFD [OUTDIR]]"
cpu=
gpu=
while [ $# -gt 0 ]; do
	case $1 in
	--cpu) cpu=1 ;;
	--gpu)
		[ $# -ge 2 ] || bench_fail "$usage"
		gpu=$2
		shift
		;;
	-h | --help)
		echo "$usage"
		exit 0
		;;
	--*) bench_fail "$usage" ;;
	*) break ;;
	esac
	shift
done
[ -n "$gpu" ] || cpu=1
[ $# -le 2 ] || bench_fail "$usage"

# number NAME DEFAULT MIN MAX: the variable's value, or its default,
# checked to be a whole number in range (bench_number in lib.sh).
number() { bench_number "$@"; }
n_cal=$(number POWER_CAL 5 0 1000)
n_aa=$(number POWER_AA 400 0 10000)
n_planted=$(number POWER_PLANTED 50 0 10000)
n_shift=$(number POWER_SHIFT 0 0 10000)
slow=$(number POWER_SLOW 5 0 100)
noise=$(number POWER_NOISE 3 0 100)
units=$(number POWER_UNITS 20 1 100000)
load=$(number POWER_LOAD 1 0 1)
load_ms=$(number POWER_LOAD_MS 500 1 60000)
workers=$(number POWER_LOAD_WORKERS "$(nproc)" 1 256)
seed=$(number POWER_SEED 1 0 999999999)
g_scale=$(number POWER_GPU_SCALE 8 1 64)
g_cal=$(number POWER_GPU_CAL 5 0 1000)
g_aa=$(number POWER_GPU_AA 50 0 10000)
g_1pct=$(number POWER_GPU_1PCT 10 0 10000)
g_half=$(number POWER_GPU_HALF 10 0 10000)
g_uncal=$(number POWER_GPU_UNCAL 5 0 10000)
g_control=$(number POWER_GPU_CONTROL 0 0 10000)
g_max=
[ -z "${POWER_GPU_MAX_PAIRS:-}" ] || g_max=$(number POWER_GPU_MAX_PAIRS 0 1 1000)
g_big=${POWER_GPU_BIG:-1}
g_big_min=${POWER_GPU_BIG_MIN:-}
g_small=${POWER_GPU_SMALL:-0.5}
g_small_min=${POWER_GPU_SMALL_MIN:-0.25}
export POWER_GPU_BIG=$g_big POWER_GPU_SMALL=$g_small
export POWER_GPU_BIG_PAIRS=$(number POWER_GPU_BIG_PAIRS 3 1 64)
for v in "$g_big" "$g_small" "$g_small_min" ${g_big_min:+"$g_big_min"}; do
	case $v in '' | *[!0-9.]* | *.*.*) bench_fail "a planted size or min_effect must be a number of percent, not '$v'" ;; esac
done

perfd=$(bench_perfd "${1:-build/daemon/perfd}")
out=${2:-/tmp/perfd-power}
bench_need python3 "install it (apt-get install python3)"
mkdir -p "$out" || bench_fail "cannot create '$out'"
out=$(cd "$out" && pwd)
db=$out/power.db
receipts=$out/receipts.jsonl
rm -f "$db" "$db-wal" "$db-shm" "$receipts" "$out/results.md" "$out/results.json" \
	"$out/verify.txt" "$out/settings.json" "$out/probe.txt"
: >"$receipts"
stats=$BENCH_DIR/power-stats.py
python3 "$stats" self-test >&2 || bench_fail "bench/power-stats.py failed its self-test"

bench_scratch
load_pid=
# start_load: the burner, bounded by itself at 6 hours and stopped by
# stop_load (or when the script ends).
start_load() {
	"$SCRATCH/burner" "$workers" "$load_ms" 21600 "$seed" &
	load_pid=$!
}
stop_load() {
	if [ -n "$load_pid" ]; then
		kill "$load_pid" 2>/dev/null || true
		wait "$load_pid" 2>/dev/null || true
		load_pid=
	fi
}

# The CPU part's helpers.
if [ -n "$cpu" ]; then
	bench_cc noisy -lm
	bench_cc burner -lm
fi

# The GPU part's device, before anything runs. The canary's command line
# below is split on blanks, so perfd's path and the profile's hold none.
device_line=
if [ -n "$gpu" ]; then
	case "$perfd$gpu" in
	*[[:space:]]*) bench_fail "the perfd path and PROFILE must hold no blanks" ;;
	esac
	"$perfd" probe --host "$gpu" >"$out/probe.txt" 2>&1 ||
		bench_fail "no device for '$gpu' (see $out/probe.txt)"
	device_line=$(tail -n 1 "$out/probe.txt")
fi

started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
version=$("$perfd" --version)
machine=$(machine_line)
[ "$load" = 1 ] && load_text="bench/burner.c: $workers workers on $(nproc) CPUs, each busy or idle at random for exponential periods of mean $load_ms ms (seed $seed), during the CPU part" ||
	load_text="none (POWER_LOAD=0)"
cpu_text="bench/noisy.c --units $units --noise $noise, planted --slow $slow; calibration $n_cal A/A, $n_aa A/A, $n_planted planted; perfd pair defaults, --case cpu-noisy --host-name power-cpu"
[ "$n_shift" = 0 ] || cpu_text="$cpu_text; first $n_cal A/As of case cpu-shift with no load, then $n_shift of the same program against itself under the load (--new-env POWER_ARM=new: none calibrates another)"
gpu_text="perfd canary --host $gpu --scale $g_scale, --metric q4_matvec_ms; calibration $g_cal A/A, $g_aa A/A, $g_1pct with --extra-work $g_big${g_big_min:+ --min-effect $g_big_min%}, $g_half with --extra-work $g_small --min-effect $g_small_min%, $g_uncal of the same uncalibrated (case canary-uncalibrated), $g_control with --extra-work $g_big judged on copy_ms (case canary-copy, its own $g_cal calibration A/A)${g_max:+, --max-pairs $g_max}; $device_line"
[ -n "$cpu" ] || cpu_text=
[ -n "$gpu" ] || gpu_text=

POWER_COMMAND="bench/power.sh${cpu:+ --cpu}${gpu:+ --gpu $gpu}" POWER_DATE=$started \
	POWER_PERFD="$perfd ($version)" POWER_MACHINE=$machine POWER_LOAD_TEXT=$load_text \
	POWER_CPU_TEXT=$cpu_text POWER_GPU_TEXT=$gpu_text python3 -c '
import json, os, sys
e = os.environ
json.dump({"command": e["POWER_COMMAND"], "date": e["POWER_DATE"], "perfd": e["POWER_PERFD"],
           "machine": e["POWER_MACHINE"], "load": e["POWER_LOAD_TEXT"] if e["POWER_CPU_TEXT"] else "",
           "cpu": e["POWER_CPU_TEXT"], "gpu": e["POWER_GPU_TEXT"]}, open(sys.argv[1], "w"))
' "$out/settings.json"

# report: the tables from the receipts so far, in results.md and .json;
# non-zero when they could not be made.
report() {
	python3 "$stats" report "$receipts" "$out/settings.json" "$out/results.md" \
		"$out/results.json" >"$SCRATCH/report.txt"
}
# A run cut short still gets its tables, from what it finished.
finished=
trap 'stop_load; [ -n "$finished" ] || ! [ -s "$receipts" ] || report || true; rm -rf "$SCRATCH"' EXIT

# compare PART I N PAIR-ARGS...: one `perfd pair` (the I-th of N), its
# receipt appended to receipts.jsonl with the part, the number and the
# seconds it took, and a line on stderr.
compare() {
	part=$1
	i=$2
	of=$3
	shift 3
	t0=$(date +%s.%N)
	rc=0
	"$perfd" pair --db "$db" --json --quiet "$@" >"$SCRATCH/receipt.json" \
		2>"$SCRATCH/pair.err" || rc=$?
	t1=$(date +%s.%N)
	case $rc in
	0 | 1) ;;
	*)
		cat "$SCRATCH/pair.err" >&2
		bench_fail "perfd pair exited $rc ($part $i)"
		;;
	esac
	[ -s "$SCRATCH/receipt.json" ] || {
		cat "$SCRATCH/pair.err" >&2
		bench_fail "perfd pair printed no receipt ($part $i)"
	}
	# A JSON text holds no raw newline inside a string: joining its lines
	# keeps it whole.
	{
		printf '{"part": "%s", "i": %d, "seconds": %s, "receipt": ' "$part" "$i" \
			"$(calc "$t1 - $t0" "%.3f")"
		tr -d '\n' <"$SCRATCH/receipt.json"
		printf '}\n'
	} >>"$receipts"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
g = (r.get("gain") or {}).get("median")
print("%s %s: %s, %s pairs, gain %s, %s s" % (sys.argv[2], sys.argv[3], r.get("verdict"),
      r.get("pairs_run", len(r.get("pairs") or [])),
      "-" if g is None else "%.3f%%" % (g * 100), sys.argv[4]))
' "$SCRATCH/receipt.json" "$part" "$i/$of" "$(calc "$t1 - $t0" "%.1f")" >&2
}

# many PART N PAIR-ARGS...: compare N times; in the CPU part ($seeded set)
# each comparison with its own NOISY_SEED, given to both arms.
seeded=
many() {
	part=$1
	n=$2
	shift 2
	k=1
	while [ "$k" -le "$n" ]; do
		if [ -n "$seeded" ]; then
			compare "$part" "$k" "$n" --env "NOISY_SEED=$seed-$part-$k" "$@"
		else
			compare "$part" "$k" "$n" "$@"
		fi
		k=$((k + 1))
	done
}

echo "power: $version; $machine" >&2
if [ -n "$cpu" ]; then
	noisy=$SCRATCH/noisy
	seeded=1
	if [ "$n_shift" -gt 0 ] && [ "$load" = 1 ]; then
		set -- --case cpu-shift --host-name power-cpu
		many cpu-shift-cal "$n_cal" "$@" "$noisy" "$noisy" -- --units "$units" --noise "$noise"
		start_load
		many cpu-shift "$n_shift" "$@" --new-env POWER_ARM=new "$noisy" "$noisy" -- \
			--units "$units" --noise "$noise"
		stop_load
		report || bench_fail "bench/power-stats.py could not make the report"
	fi
	[ "$load" = 0 ] || start_load
	set -- --case cpu-noisy --host-name power-cpu
	many cpu-cal "$n_cal" "$@" "$noisy" "$noisy" -- --units "$units" --noise "$noise"
	many cpu-aa "$n_aa" "$@" "$noisy" "$noisy" -- --units "$units" --noise "$noise"
	report || bench_fail "bench/power-stats.py could not make the report"
	many cpu-slow "$n_planted" "$@" --new-arg --slow --new-arg "$slow" \
		"$noisy" "$noisy" -- --units "$units" --noise "$noise"
	stop_load
	seeded=
	report || bench_fail "bench/power-stats.py could not make the report"
fi

if [ -n "$gpu" ]; then
	if [ -n "$g_max" ]; then
		"$perfd" pair --help | grep -q -- --max-pairs ||
			bench_fail "POWER_GPU_MAX_PAIRS needs a perfd with --max-pairs (pairs-median/2)"
		set -- --max-pairs "$g_max"
	else
		set --
	fi
	set -- "$@" --host "$gpu" --host-name power-gpu
	# Split on purpose: the paths hold no blanks (checked above).
	canary="$perfd $perfd -- canary --host $gpu --scale $g_scale"
	q4="--metric q4_matvec_ms"
	# The control: the copy kernel, which the planted q4 work leaves as
	# it is.
	copy="--metric copy_ms --case canary-copy"
	# shellcheck disable=SC2086
	{
		many gpu-cal "$g_cal" "$@" $q4 --case canary $canary
		many gpu-aa "$g_aa" "$@" $q4 --case canary $canary
		report || bench_fail "bench/power-stats.py could not make the report"
		many gpu-1pct "$g_1pct" "$@" $q4 --case canary ${g_big_min:+--min-effect $g_big_min%} \
			--new-arg --extra-work --new-arg "$g_big" $canary
		many gpu-half "$g_half" "$@" $q4 --case canary --min-effect "$g_small_min%" \
			--new-arg --extra-work --new-arg "$g_small" $canary
		report || bench_fail "bench/power-stats.py could not make the report"
		many gpu-half-uncal "$g_uncal" "$@" $q4 --case canary-uncalibrated \
			--min-effect "$g_small_min%" --new-arg --extra-work --new-arg "$g_small" $canary
		if [ "$g_control" -gt 0 ]; then
			many gpu-control-cal "$g_cal" "$@" $copy $canary
			many gpu-control "$g_control" "$@" $copy \
				--new-arg --extra-work --new-arg "$g_big" $canary
		fi
	}
fi

"$perfd" verify --db "$db" >"$out/verify.txt" 2>&1 && verified="every stored figure matches" ||
	verified="FIGURES DIFFER (see $out/verify.txt)"
report || bench_fail "bench/power-stats.py could not make the report"
finished=1
cat "$SCRATCH/report.txt"
echo
echo "perfd verify: $verified"
echo "files: $out/results.md, $out/results.json, $out/receipts.jsonl, $out/power.db"
