#!/usr/bin/env bash
# bench/agent-polls.sh PERFD [PEER_PERFD]: the polling agent's memory over
# many polls. An agent polls a repository served over file:// every 0.05 s;
# for each of POLLS (300) rounds a commit is pushed to the watched branch,
# and the round ends when its job is done (the fetch writes a pack, the job
# builds with `cp`). At every CHECK (50) rounds the agent's VmRSS, its
# mappings (/proc/PID/maps lines), open descriptors, the mirror's packs
# and the database's size (the file and its -wal) are printed. With PEER_PERFD (another build, e.g. one before a change)
# the same run is made with it first, on a fresh repository, so that both
# are measured on the same machine in the same minutes. Everything runs on
# local files and stops by itself.
set -eu
. "$(dirname "$0")/lib.sh"
POLLS=${POLLS:-300}
CHECK=${CHECK:-50}
bench_need git "apt-get install git"
bench_need sqlite3 "apt-get install sqlite3"
bench_scratch
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.org GIT_COMMITTER_NAME=b \
	GIT_COMMITTER_EMAIL=b@example.org
agent=""
trap '[ -n "$agent" ] && kill "$agent" 2>/dev/null; rm -rf "$SCRATCH"' EXIT

# polls LABEL PERFD: one run, on a repository of its own.
polls() {
	label=$1 perfd=$2 d=$SCRATCH/$1
	mkdir "$d"
	git init -q -b main "$d/src"
	echo 0 >"$d/src/p.c"
	git -C "$d/src" add -A
	git -C "$d/src" commit -qm zero
	bench_agent_conf "$d" 0.05 "cp p.c p" >"$d/agent.conf"
	"$perfd" agent --config "$d/agent.conf" >/dev/null 2>"$d/agent.err" &
	agent=$!
	done_jobs() { sqlite3 "$d/a.db" "select count(*) from jobs where state = 'done'" 2>/dev/null || echo 0; }
	for t in $(seq 200); do [ "$(done_jobs)" -ge 1 ] && break; sleep 0.05; done
	[ "$(done_jobs)" -ge 1 ] || bench_fail "$label: the agent did no first job ($(tail -n 1 "$d/agent.err"))"
	printf '%-6s %6s %10s %6s %5s %6s %8s\n' "$label" polls "VmRSS kB" maps fds packs "db kB"
	for i in $(seq 1 "$POLLS"); do
		echo "$i" >"$d/src/p.c"
		git -C "$d/src" commit -qam "round $i"
		for t in $(seq 400); do [ "$(done_jobs)" -gt "$i" ] && break; sleep 0.02; done
		[ "$(done_jobs)" -gt "$i" ] || bench_fail "$label: round $i's job was not done ($(tail -n 1 "$d/agent.err"))"
		if [ $((i % CHECK)) = 0 ] || [ "$i" = 1 ]; then
			printf '%-6s %6d %10d %6d %5d %6d %8d\n' "$label" "$i" \
				"$(awk '/^VmRSS/ { print $2 }' "/proc/$agent/status")" \
				"$(wc -l <"/proc/$agent/maps")" "$(ls "/proc/$agent/fd" | wc -l)" \
				"$(ls "$d/w/mirror.git/objects/pack" | grep -c '\.pack$')" \
				"$(cat "$d/a.db" "$d/a.db-wal" 2>/dev/null | wc -c | awk '{ print int($1 / 1024) }')"
		fi
	done
	kill "$agent"
	wait "$agent" 2>/dev/null || true
	agent=""
}

machine_line
new=$(bench_perfd "$1")
if [ $# -ge 2 ]; then
	polls peer "$(bench_perfd "$2")"
fi
polls perfd "$new"
