#!/bin/bash
# kill -9 of the agent at 20 points of a run, chosen by the rows it has made,
# each followed by a restart to the end: every job, build, runner result and comparison
# (the A/As that calibrate the case too) is
# there exactly once, what was cut short is kept as abandoned, and every
# comparison verifies.
. "$(dirname "$0")/lib.sh"
need git cc

new_src
prog() {
	cat >"$SRC/prog.c" <<C
#include <stdio.h>
#include <time.h>
int main(void)
{
	struct timespec ts = { 0, $1 * 1000000L };
	nanosleep(&ts, NULL);
	printf("TIMING work_ms=%d\nDIGEST 0a\n", $1);
	return 0;
}
C
}
printf '#!/bin/sh\nsleep 0.1\necho "RESULT c on \\"cpu\\": passed=1 total=1"\n' >"$SRC/check.sh"
chmod +x "$SRC/check.sh"
prog 40 && git -C "$SRC" add -A && git -C "$SRC" commit -qm one
prog 30 && git -C "$SRC" commit -qam two
for b in a b; do
	git -C "$SRC" checkout -q -b "feature/$b" main
	prog $((20 + ${#b})) && git -C "$SRC" commit -qam "feature $b"
	echo "$b" >"$SRC/$b.txt" && git -C "$SRC" add "$b.txt" && git -C "$SRC" commit -qm "feature $b notes"
done
git -C "$SRC" checkout -q main

cat >agent.conf <<CONF
$(agent_repo url="$SRC" branches="main feature/*")
[build]
command = cc -O1 -o prog prog.c
artifacts = prog check.sh
[runner contract]
command = ./check.sh
chunks = 2
[case work]
command = ./prog
pairs = 3
CONF

# Where a run is: the rows it has made (builds, runner chunks, comparisons,
# timed processes). The kill points are chosen by it, not by wall time, so
# that they fall inside a run however busy the machine is.
progress() {
	sqlite3 "$DB" "select (select count(*) from builds) + (select count(*) from runner_results) + (select count(*) from comparisons) + (select count(*) from processes)" 2>/dev/null || echo 0
}
rm -rf "$T/work" "$DB" "$DB"-wal "$DB"-shm
"$PERFD" agent --config agent.conf --once >clean.out 2>clean.err || true
rows=$(progress)
echo "# a whole run makes $rows rows"

# The processes a killed agent started that still run: its sandboxes
# (bubblewrap, whose command line names $T/work) and any process working
# in $T/work, each printed. Only this test's processes can name $T.
no_leftovers() {
	local d
	pgrep -af -- "$T/work" && return 1
	for d in /proc/[0-9]*/cwd; do
		case $(readlink "$d" 2>/dev/null) in "$T/work"*) echo "${d%/cwd} works in $T/work"; return 1 ;; esac
	done
	return 0
}

# kill_at AT: a fresh database, an agent's run, and a kill -9 once the run
# has made AT rows; fails when the run ended first.
kill_at() {
	rm -rf "$T/work" "$DB" "$DB"-wal "$DB"-shm
	"$PERFD" agent --config agent.conf --once >run.out 2>run.err &
	p=$!
	while kill -0 "$p" 2>/dev/null && [ "$(progress)" -lt "$1" ]; do sleep 0.02; done
	kill -9 "$p" 2>/dev/null
	local killed=$?
	wait "$p" 2>/dev/null
	return $killed
}

# Each round: a fresh database, a kill -9 at a point of the run (after a
# share of its rows, spread over the whole run), a restart to the end, and
# the checks. A run whose last rows came before the test saw the share
# (a busy machine's poll is slow) is run again, killed at three quarters
# of that point, so that every round has its kill however fast the
# machine is.
kills=0
for i in $(seq 1 20); do
	at=$(awk -v i="$i" -v s="$RANDOM" -v m="$rows" 'BEGIN { srand(s); printf "%d", (i - 1 + rand()) / 20 * m * 0.9 }')
	for _ in 1 2 3 4 5; do
		kill_at "$at" && { kills=$((kills + 1)); break; }
		echo "# round $i: the run ended before its kill at $at rows; again, earlier"
		at=$((at * 3 / 4))
	done
	# What the killed agent started runs in its own session: let it end.
	# A sandbox caught at its start (before bubblewrap's own parent-death
	# signal) runs on until the restart kills it: said, not waited for.
	wait_for "no process of the killed agent" 5 no_leftovers 2>/dev/null ||
		echo "# round $i: a process of the killed agent runs on; the restart must end it"
	check "round $i (kill after ${at} rows): the restart finishes" run 0 "$PERFD" agent --config agent.conf --once
	check "round $i: nothing of the killed run left after the restart" \
		wait_for "no process of the killed agent" 30 no_leftovers
	check "round $i: every job done once" eq "3 3" "$(sql "select count(*), sum(state = 'done') from jobs" | tr '|' ' ')"
	check "round $i: one done comparison per job and case" eq "3 3" "$(sql "select count(*), count(distinct job_id || case_name) from comparisons where state = 'done' and job_id is not null" | tr '|' ' ')"
	# The A/As before the first comparison: a cut one is run again until
	# the case has the 12 gains of its calibration (docs/config.md).
	check "round $i: the case's A/As, whole" eq 1 "$(sql "select total(pairs_run) >= 12 from comparisons where state = 'done' and kind = 'aa' and job_id is null")"
	check "round $i: nothing left running" eq "0 0 0 0" "$(sql "select (select count(*) from comparisons where state = 'running'), (select count(*) from builds where state = 'running'), (select count(*) from runner_results where state = 'running'), (select count(*) from processes where state = 'running')" | tr '|' ' ')"
	check "round $i: one done build per tree" eq "" "$(sql "select tree_oid from builds where state = 'done' group by tree_oid, recipe_hash having count(*) != 1")"
	check "round $i: two done runner chunks per job's build, once each" eq "" "$(sql "select b.id from builds b where b.state = 'done' and b.commit_oid in (select commit_oid from jobs) and (select count(*) from runner_results r where r.build_id = b.id and r.state = 'done') != 2")"
	check "round $i: cut comparisons kept as invalid" eq "" "$(sql "select id from comparisons where state = 'abandoned' and verdict != 'invalid'")"
	check "round $i: every comparison verifies" run 0 "$PERFD" verify --db "$DB"
	echo "# round $i: abandoned $(sql "select count(*) from comparisons where state = 'abandoned'") comparisons, $(sql "select count(*) from builds where state = 'abandoned'") builds, $(sql "select count(*) from runner_results where state = 'abandoned'") runner results"
done
check "killed in every round ($kills of 20)" test "$kills" = 20
finish
