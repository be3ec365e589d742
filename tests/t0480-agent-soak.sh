#!/bin/bash
# The soak: kill -9 of an agent that pushes to a hub, at 100 random moments
# of its run (fetch, build in the sandbox, contract runners, A/As, pairs,
# pushing), each followed by a restart to the end. Then every job, build,
# runner result and comparison is there exactly once, at the agent and at
# the hub; nothing the killed agents started is left running; the
# databases pass PRAGMA integrity_check; every comparison verifies.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { echo "git missing: skipped"; exit 77; }
command -v cc >/dev/null || { echo "cc missing: skipped"; exit 77; }
command -v curl >/dev/null || { echo "curl missing: skipped"; exit 77; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
ROUNDS=${SOAK_ROUNDS:-100}
# A word in every command the agent starts, unique to this run: what is
# left of them is found by it, inside the sandbox or not.
W=perfd_soak_$(basename "$T" | tr -c 'A-Za-z0-9\n' _)

SRC=$T/src
git init -q -b main "$SRC"
work_prog "$SRC/prog.c" 400000 7
printf '#!/bin/sh\n: %s\nsleep 0.05\necho "RESULT c on \\"cpu\\": passed=1 total=1"\n' "$W" >"$SRC/check.sh"
chmod +x "$SRC/check.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm base
work_prog "$SRC/prog.c" 300000 7
git -C "$SRC" commit -qam "fewer rounds"
git -C "$SRC" checkout -q -b feature main
work_prog "$SRC/prog.c" 500000 7
git -C "$SRC" commit -qam "more rounds"
git -C "$SRC" checkout -q main

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >hub.conf <<CONF
[hub]
database = $T/hub.db
listen = 127.0.0.1:$PORT
hosts = soak
CONF
"$PERFD" token new soak --config hub.conf >token 2>/dev/null
chmod 600 token
"$PERFD" serve --config hub.conf >hub.out 2>hub.err &
hub=$!
wait_for "the hub's line 'serving'" 10 grep -qs serving hub.err
check "the hub serves" grep -q serving hub.err

cat >soak-host.conf <<CONF
[host]
name = soak
CONF
cat >agent.conf <<CONF
[agent]
database = $DB
workdir = $T/work
host = $T/soak-host.conf
[repo]
url = $SRC
branches = main feature
[calibration]
runs = 1
idle_budget_s = 0
[hub]
url = http://127.0.0.1:$PORT
token_file = $T/token
timeout_s = 5
[build]
command = : $W; cc -O1 -o prog prog.c
artifacts = prog check.sh
[runner contract]
command = ./check.sh
[case work]
command = ./prog
pairs = 3
max_pairs = 3
CONF

# A new head commit each round, with a program of its own (a tree never
# built before). How long one job takes: the first run's.
n=0
next_commit() {
	n=$((n + 1))
	work_prog "$SRC/prog.c" $((200000 + n * 1000)) 7
	git -C "$SRC" commit -qam "round $n"
}
next_commit
check "a first run (two jobs and the case's A/As)" run 0 "$PERFD" agent --config agent.conf --once
next_commit
start=$(date +%s%N)
check "a run of one job" run 0 "$PERFD" agent --config agent.conf --once
full_ms=$(( ($(date +%s%N) - start) / 1000000 * 7 / 10 ))
echo "# seven tenths of a job's run take $full_ms ms"

# Each round: a kill -9 at a random moment of a job's run, then a restart
# to the end, and the checks of the whole history so far. A run that ends
# before its moment (a quicker spell of a loaded machine) is no kill: the
# round takes a new head and a moment half as late, up to 6 times, so every
# round has its kill whatever the machine's speed.
bad=0
kills=0
for i in $(seq 1 "$ROUNDS"); do
	at=$(awk -v s="$RANDOM" -v m="$full_ms" 'BEGIN { srand(s); printf "%.3f", rand() * m / 1000 }')
	for _ in 1 2 3 4 5 6; do
		next_commit
		"$PERFD" agent --config agent.conf --once >run.out 2>run.err &
		p=$!
		sleep "$at"
		kill -9 "$p" 2>/dev/null
		# 137: the kill ended it (a run that had ended is a zombie, which
		# kill(1) reports as killed).
		wait "$p" 2>/dev/null
		[ $? != 137 ] || { kills=$((kills + 1)); break; }
		at=$(awk -v a="$at" 'BEGIN { printf "%.3f", a / 2 }')
	done
	"$PERFD" agent --config agent.conf --once >restart.out 2>restart.err
	rc=$?
	# After the restart nothing of the killed run may be left: a sandbox
	# caught at its start is killed by the restart itself.
	for _ in $(seq 40); do pgrep -f "$W" >/dev/null || break; sleep 0.05; done
	left=$(pgrep -f "$W" | wc -l)
	got=$(sql "select (select count(*) from jobs where state != 'done'),
		(select count(*) from jobs j where coalesce(j.base_oid, '') != '' and (select count(*) from comparisons c where c.job_id = j.id and c.state = 'done') != 1),
		(select count(*) from comparisons where state = 'running') + (select count(*) from builds where state = 'running')
		+ (select count(*) from runner_results where state = 'running') + (select count(*) from processes where state = 'running'),
		(select count(*) from (select 1 from builds where state = 'done' group by tree_oid, recipe_hash having count(*) != 1)),
		(select count(*) from builds b where b.state = 'done' and b.commit_oid in (select commit_oid from jobs)
		  and (select count(*) from runner_results r where r.build_id = b.id and r.state = 'done') != 1)" | tr '|' ' ')
	integrity=$(sql "pragma integrity_check")
	"$PERFD" verify --db "$DB" >verify.out 2>&1
	vrc=$?
	if [ "$rc" != 0 ] || [ "$got" != "0 0 0 0 0" ] || [ "$left" != 0 ] || [ "$integrity" != ok ] || [ "$vrc" != 0 ]; then
		bad=$((bad + 1))
		echo "# round $i (kill at ${at}s): restart $rc, counts '$got', left $left, integrity $integrity, verify $vrc"
		head -c 1500 restart.err | sed 's/^/#   /'
	fi
done
check "$ROUNDS rounds: each restart finished every job, one comparison each, nothing running, nothing left behind, the database whole and verified ($bad bad)" eq 0 "$bad"
check "every round killed its run ($kills of $ROUNDS)" eq "$ROUNDS" "$kills"
check "nothing any agent started is left" eq "" "$(pgrep -f "$W")"
check "a job per head: the first run's two and each new commit's ($n commits)" eq $((n + 1)) "$(sql "select count(*) from jobs")"

# The hub holds every done comparison and build of the agent once, with the
# agent's own ids.
"$PERFD" agent --config agent.conf --once >/dev/null 2>&1
check "every done comparison was taken by the hub" eq 0 "$(sql "select count(*) from comparisons c where c.state = 'done' and c.id not in (select comparison_id from pushed where status between 200 and 299)")"
check "the hub's database is whole" eq ok "$(sqlite3 "$T/hub.db" "pragma integrity_check")"
check "the hub holds each comparison the agent sent once, by the agent's ids" eq "$(sql "select group_concat(comparison_id) from (select comparison_id from pushed where status between 200 and 299 order by comparison_id)")" "$(sqlite3 "$T/hub.db" "select group_concat(origin_id) from (select origin_id from comparison_origins where host = 'soak' order by origin_id)")"
check "the hub's comparisons verify" run 0 "$PERFD" verify --db "$T/hub.db"
kill "$hub"
wait "$hub" 2>/dev/null
finish
