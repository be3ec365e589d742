#!/usr/bin/env bash
# bench/first-verdict.sh [PERFD [PROFILE]]: how long a new host waits for
# its first verdict, with [calibration] when = before (the A/As of each
# case first) and when = after (the comparisons first, judged by the sign
# test, the A/As after the job), side by side in one run.
#
# A git repository of two commits whose program is perfd's own canary
# (`perfd canary --scale SCALE`, a real Vulkan program timed with GPU
# timestamps), the second doing EXTRA% more q4 work; CASES cases, each
# the canary's q4_matvec_ms. For each mode, ROUNDS times, a fresh agent
# (`perfd agent --once`, host profile PROFILE, default lavapipe) on a
# fresh database: the seconds from its start to its first case's verdict,
# to the job's last verdict (the pull request's table complete) and to its
# end (the A/As of when = after included), and the base build's time,
# which both pay. Prints a Markdown table and writes OUTDIR (default a
# scratch directory) with each run's log.
#   SCALE (16), EXTRA (1), CASES (4), ROUNDS (1), OUTDIR; KEEP=1 keeps the
#   scratch directory (the databases) after the run
set -eu
. "$(dirname "$0")/lib.sh"
PERFD=$(bench_perfd "${1:-build/daemon/perfd}")
PROFILE=${2:-lavapipe}
SCALE=$(bench_number SCALE 16 1 64)
EXTRA=${EXTRA:-1}
CASES=$(bench_number CASES 4 1 16)
ROUNDS=$(bench_number ROUNDS 1 1 20)
bench_need git "apt-get install git"
bench_need python3 "apt-get install python3"
bench_scratch
[ -z "${KEEP:-}" ] || trap - EXIT
OUT=${OUTDIR:-$SCRATCH/out}
mkdir -p "$OUT"
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.org GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.org
# The sandbox shows a step only what [sandbox] ro names: perfd's folder,
# and the libraries LD_LIBRARY_PATH names where perfd was copied without
# installing them (bench/first-verdict.sh on a machine of another system).
PERFD_DIR=$(dirname "$PERFD")
SRC=$SCRATCH/src
git init -q -b main "$SRC"
cat >"$SRC/canary.sh" <<SH
#!/bin/sh
LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}; export LD_LIBRARY_PATH
exec "$PERFD" canary --scale $SCALE --extra-work "\$(cat "\$(dirname "\$0")/extra")"
SH
chmod +x "$SRC/canary.sh"
echo 0 >"$SRC/extra"
git -C "$SRC" add -A && git -C "$SRC" commit -qm base
echo "$EXTRA" >"$SRC/extra"
git -C "$SRC" commit -qam "$EXTRA% more q4 work"

conf() { # MODE DIR
	bench_section agent database="$2/a.db" workdir="$2/w" host="$PROFILE" poll_s=60
	bench_section repo url="file://$SRC" branches=main
	bench_section calibration runs=2 idle_budget_s=0 when="$1"
	ro=$PERFD_DIR
	[ -z "${LD_LIBRARY_PATH:-}" ] || ro="$ro ${LD_LIBRARY_PATH//:/ }"
	bench_section sandbox ro="$ro"
	bench_section build command="true" artifacts="canary.sh extra" timeout_s=60
	for i in $(seq "$CASES"); do
		bench_section "case q4-$i" command=./canary.sh metric=q4_matvec_ms
	done
}

# q DB SQL: the first column of SQL's rows, a line each (python3's sqlite3:
# the GPU machine may have no sqlite3 program).
q() {
	python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print(r[0])' "$1" "$2"
}

# stamp: each line of stdin after the seconds since $start.
stamp() {
	while IFS= read -r l; do
		printf '%s %s\n' "$(calc "$(date +%s.%N) - $start" %.1f)" "$l"
	done
}

echo "# first verdict: $CASES cases of the canary (--scale $SCALE, +$EXTRA% planted), host $PROFILE"
machine_line
echo
echo "| when | round | first verdict, s | last verdict, s | agent done, s | pairs of the job's comparisons | verdicts | A/As |"
echo "| --- | ---: | ---: | ---: | ---: | --- | --- | --- |"
for round in $(seq "$ROUNDS"); do
	for mode in before after; do
		d=$SCRATCH/$mode-$round
		mkdir -p "$d"
		conf "$mode" "$d" >"$d/agent.conf"
		start=$(date +%s.%N)
		"$PERFD" agent --config "$d/agent.conf" --once 2>&1 >"$d/once.out" | stamp >"$d/once.log" ||
			bench_fail "the agent failed: $d/once.log"
		first=$(grep -m1 ' of job 1: comparison' "$d/once.log" | cut -d' ' -f1)
		last=$(grep ' of job 1: comparison' "$d/once.log" | tail -n 1 | cut -d' ' -f1)
		end=$(tail -n 1 "$d/once.log" | cut -d' ' -f1)
		pairs=$(q "$d/a.db" "select group_concat(pairs_run, ' ') from comparisons where job_id = 1")
		verdicts=$(q "$d/a.db" "select group_concat(verdict, ' ') from comparisons where job_id = 1")
		aas=$(q "$d/a.db" "select count(*) || ' of ' || sum(pairs_run) || ' pairs' from comparisons where kind = 'aa'")
		echo "| $mode | $round | $first | $last | $end | $pairs | $verdicts | $aas |"
		cp "$d/once.log" "$OUT/$mode-$round.log"
	done
done
