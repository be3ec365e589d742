#!/usr/bin/env bash
# bench/agent.sh [PERFD]: the agent's own costs, beside git's in the same run.
#   1. overhead from a new head to its build starting: a commit is pushed,
#      `perfd agent --once` starts, and the build row's started_at is read;
#      the time from the agent's start to it includes the fetch, so the same
#      fetch by `git fetch` into a bare mirror is measured beside it;
#   2. the build cache: a second --once after a commit that restores a tree
#      already built counts a cache hit and makes no build;
#   3. idle memory: the agent in polling mode after its work is done, VmRSS
#      and VmHWM from /proc, beside the peak RSS of the `git fetch` above.
# Repeats ROUNDS (5) times; prints the medians. Everything runs on loopback
# files and stops by itself.
set -eu
. "$(dirname "$0")/lib.sh"
PERFD=$(realpath "${1:-build/daemon/perfd}")
ROUNDS=${ROUNDS:-5}
T=$(mktemp -d /tmp/perfd-bench-agent.XXXXXX)
agent=""
trap '[ -n "$agent" ] && kill "$agent" 2>/dev/null; rm -rf "$T"' EXIT
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.org GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.org
cd "$T"
ms_now() { date +%s%3N; }
iso_ms() { date -d "$1" +%s%3N; }

git init -q -b main src
printf 'int main(void) { return 0; }\n' >src/p.c
git -C src add -A && git -C src commit -qm one
printf 'int main(void) { return 1 - 1; }\n' >src/p.c
git -C src commit -qam two
bench_agent_conf "$T" 3600 "cc -O0 -o p p.c" >agent.conf
"$PERFD" agent --config agent.conf --once >/dev/null 2>&1

over=() fetch=() hits=0 made=0
for i in $(seq 1 "$ROUNDS"); do
	printf 'int main(void) { return %d - %d; }\n' "$((i + 10))" "$((i + 10))" >src/p.c
	git -C src commit -qam "round $i"
	t0=$(ms_now)
	"$PERFD" agent --config agent.conf --once >/dev/null 2>agent.err
	started=$(sqlite3 a.db "select started_at from builds order by id desc limit 1")
	over+=($(( $(iso_ms "$started") - t0 )))
	rm -rf peer.git && git init -q --bare peer.git
	t0=$(ms_now)
	/usr/bin/env time -f %M -o peer.rss git -C peer.git fetch -q "file://$T/src" '+refs/heads/*:refs/remotes/origin/*'
	fetch+=($(( $(ms_now) - t0 )))
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
echo "new head to build start: perfd agent ${over[*]} ms (median $(median "${over[@]}")); git fetch alone ${fetch[*]} ms (median $(median "${fetch[@]}"))"

# The cache: a commit whose tree was built before.
git -C src revert --no-edit HEAD >/dev/null
"$PERFD" agent --config agent.conf --once >cache.out 2>/dev/null
echo "cache: $(tail -n 1 cache.out)"

# Idle memory, after the first poll's work.
"$PERFD" agent --config agent.conf >/dev/null 2>idle.err &
agent=$!
sleep 2
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$agent/status")
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$agent/status")
kill "$agent"
wait "$agent" 2>/dev/null || true
agent=""
echo "idle agent: VmRSS ${rss} kB, VmHWM ${hwm} kB; git fetch peak RSS $(cat peer.rss) kB"
echo "agent: overhead median $(median "${over[@]}") ms (target < 2000), idle RSS ${rss} kB (target < 16384)"
