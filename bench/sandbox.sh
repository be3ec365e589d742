#!/bin/sh
# bench/sandbox.sh [PERFD]: what the agent's sandbox (docs/security.md)
# costs a timed process, and whether the timings it gives are as steady.
# PERFD defaults to build/daemon/perfd.
#
# A repository of two commits with the same tree: each job is an A/A of
# bench/spin.c (CPU work of about 30 ms, timed by the program itself:
# TIMING spin_ms). The same agent configuration runs it with [sandbox]
# mode = off and mode = on, each with a fresh database, in the order off,
# on, on, off, off, on (ROUNDS pairs of runs: 3), PAIRS pairs each (20):
#   wall      median wall time of a process as perfd measures it, from
#             before the spawn to the reaping: bubblewrap's set-up is in it
#   spread    the spread of spin_ms over a run's processes, (p90 - p10) /
#             median: what the rule compares
#   gain      each A/A's median gain, which should stay near 0
# The summary line gives the added wall time per process and the two
# spreads. Exits 0 whatever the figures, 2 when something could not be
# measured.
#
# Environment: SANDBOX_PAIRS (20), SANDBOX_ROUNDS (3), SANDBOX_UNITS (20).
set -eu

. "$(dirname "$0")/lib.sh"

pairs=${SANDBOX_PAIRS:-20}
rounds=${SANDBOX_ROUNDS:-3}
units=${SANDBOX_UNITS:-20}
perfd=$(bench_perfd "${1:-build/daemon/perfd}")
bench_need git "apt-get install git"
bench_need sqlite3 "apt-get install sqlite3"
bench_need bwrap "apt-get install bubblewrap"
bench_scratch
chmod 711 "$SCRATCH"

src=$SCRATCH/src
git init -q -b main "$src"
cp "$BENCH_DIR/spin.c" "$src/spin.c"
git -C "$src" add spin.c
git -C "$src" -c user.name=b -c user.email=b@example.org commit -qm one
git -C "$src" -c user.name=b -c user.email=b@example.org commit -q --allow-empty -m two

conf() { # MODE NAME
	cat <<CONF
[agent]
database = $SCRATCH/$2.db
workdir = $SCRATCH/work-$2
[repo]
url = $src
branches = main
[calibration]
runs = 0
idle_budget_s = 0
[sandbox]
mode = $1
[build]
command = cc -O2 -o spin spin.c
artifacts = spin
[case spin]
command = ./spin $units
metric = spin_ms
pairs = $pairs
max_pairs = $pairs
warmup = 1
CONF
}

# run MODE NAME: one agent run; prints "wall spread gain" of its A/A.
run() {
	conf "$1" "$2" >"$SCRATCH/$2.conf"
	# The first commit alone, then the second: a job with a base.
	"$perfd" agent --config "$SCRATCH/$2.conf" --once >"$SCRATCH/$2.out" 2>"$SCRATCH/$2.err" ||
		bench_fail "the agent failed ($1): $(tail -n 3 "$SCRATCH/$2.err")"
	db=$SCRATCH/$2.db
	cid=$(sqlite3 "$db" "select id from comparisons where job_id is not null and state = 'done' limit 1")
	[ -n "$cid" ] || bench_fail "no comparison ($1): $(tail -n 3 "$SCRATCH/$2.err")"
	wall=$(sqlite3 "$db" "select wall_ms from processes where comparison_id = $cid and warmup = 0" | median)
	sqlite3 "$db" "select m.value from metrics m join processes p on p.id = m.process_id where p.comparison_id = $cid and p.warmup = 0 and m.name = 'spin_ms'" | sort -g >"$SCRATCH/v"
	n=$(wc -l <"$SCRATCH/v")
	p10=$(sed -n "$(( (n + 9) / 10 ))p" "$SCRATCH/v")
	p90=$(sed -n "$(( (n * 9 + 9) / 10 ))p" "$SCRATCH/v")
	med=$(median <"$SCRATCH/v")
	gain=$(sqlite3 "$db" "select gain_median from comparisons where id = $cid")
	echo "$wall $(calc "($p90 - $p10) / $med" %.4f) ${gain:-0}"
}

echo "# $(machine_line)"
echo "# $pairs pairs a run, spin $units units; wall ms, spread (p90-p10)/median of spin_ms, A/A gain"
: >"$SCRATCH/off"
: >"$SCRATCH/on"
i=0
while [ "$i" -lt "$rounds" ]; do
	for mode in $( [ $((i % 2)) = 0 ] && echo "off on" || echo "on off"); do
		r=$(run "$mode" "$mode-$i")
		echo "$r" >>"$SCRATCH/$mode"
		echo "round $((i + 1)) $mode: wall $(echo "$r" | cut -d' ' -f1) ms, spread $(echo "$r" | cut -d' ' -f2), gain $(echo "$r" | cut -d' ' -f3)"
	done
	i=$((i + 1))
done
off_wall=$(cut -d' ' -f1 "$SCRATCH/off" | median)
on_wall=$(cut -d' ' -f1 "$SCRATCH/on" | median)
off_spread=$(cut -d' ' -f2 "$SCRATCH/off" | median)
on_spread=$(cut -d' ' -f2 "$SCRATCH/on" | median)
echo "summary: a sandboxed process takes $(calc "$on_wall - $off_wall" %.2f) ms more wall time" \
	"(median $on_wall ms against $off_wall ms); spin_ms spread $on_spread in the sandbox," \
	"$off_spread without"
