#!/bin/sh
# bench/comment-latency.sh [PERFD [N]]: how long from an agent's comparison
# done to the pull request's comment updated with it (issue 12: under 2 s
# plus the forge's latency), through the whole path: the agent pushes its
# job's update and the comparison to the hub, the hub stores them and wakes
# its loop, which renders the comment and edits it on the forge.
#
# A repository with N (default 10) pull requests, each a head of its own; a
# forge (tests/fake-github.py on loopback, which logs when each request
# arrived); a hub with [github] expecting one host, started and left to post
# its first comment on each pull request; then one agent with [hub] and no
# forge token, run once: it builds main and the N heads and compares each
# against its base, 6 processes of 0.1 s each, so one comparison ends about
# every second as on a host whose cases are short. For every comparison of a pull head the latency is
# the time the forge received the first edit of that pull request's comment
# that links the comparison's receipt at the hub, less the time the agent
# stored the comparison as done (comparisons.finished_at). Both clocks are
# this machine's. Prints each latency and their median, 90th percentile and
# maximum. Needs python3, sqlite3, git, cc and curl.
set -eu

. "$(dirname "$0")/lib.sh"

PERFD=$(bench_perfd "${1:-build/daemon/perfd}")
N=${2:-10}
bench_need python3 "apt-get install python3"
bench_need sqlite3 "apt-get install sqlite3"
bench_need git "apt-get install git"
bench_need curl "apt-get install curl"
bench_scratch
cd "$SCRATCH"
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.org GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.org

prog() { # ROUNDS: a program that takes 0.1 s and prints a planted time of
	# ROUNDS/1e6 ms, so that comparisons end about a second apart
	cat >src/prog.c <<C
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
int main(void)
{
	struct timespec t = { 0, 100000000 };
	nanosleep(&t, NULL);
	printf("TIMING work_ms=%.3f\n", $1UL / 1e6);
	return 0;
}
C
}
git init -q -b main src
prog 2000000
git -C src add -A && git -C src commit -qm base
PULLS=""
for k in $(seq "$N"); do
	git -C src checkout -q -b "p$k" main
	prog $((2000000 - k * 100000))
	git -C src commit -qam "pull $k"
	git -C src update-ref "refs/pull/$k/head" HEAD
	PULLS="$PULLS{\"number\": $k, \"author\": \"alice\", \"head_sha\": \"$(git -C src rev-parse HEAD)\", \"head_ref\": \"p$k\", \"base_ref\": \"main\", \"base_sha\": \"$(git -C src rev-parse main)\"},"
done
git -C src checkout -q main

GHTOKEN=ghp_benchbenchbenchbenchbenchbenchbench
python3 "$BENCH_DIR/../tests/fake-github.py" --repo acme/engine --token "$GHTOKEN" \
	--log gh.log --git-dir "$SCRATCH/src" --max-seconds 3600 >fake.out 2>fake.err &
FAKE=$!
HUB=
bench_kill_at_exit FAKE HUB
for _ in $(seq 100); do [ -s fake.out ] && break; sleep 0.1; done
API=http://127.0.0.1:$(head -n 1 fake.out)
curl -sf -X POST -H 'Content-Type: application/json' --data "[${PULLS%,}]" "$API/_fake/pulls" >/dev/null ||
	bench_fail "the fake forge did not take the pull requests"

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf '%s\n' "$GHTOKEN" >gh-token
chmod 600 gh-token
{
	bench_section hub database="$SCRATCH/hub.db" listen="127.0.0.1:$PORT" hosts=bench
	bench_section github api="$API" repo=acme/engine token_file="$SCRATCH/gh-token" allow=alice \
		expect=bench hub_url="http://127.0.0.1:$PORT" poll_s=1
} >hub.conf
"$PERFD" token new bench --config hub.conf >token 2>/dev/null || bench_fail "perfd token new failed"
chmod 600 token
"$PERFD" serve --config hub.conf 2>hub.err &
HUB=$!
for _ in $(seq 200); do
	curl -s -H "Authorization: Bearer $(cat token)" "http://127.0.0.1:$PORT/api/v1/hub/pulls" >pulls.json 2>/dev/null &&
		[ "$(python3 -c 'import json; print(len(json.load(open("pulls.json"))["pulls"]))' 2>/dev/null)" = "$N" ] && break
	sleep 0.1
done

# The hub's first round (a merge base per head, a comment and a status per
# pull request) is over before the agent starts.
for _ in $(seq 600); do
	[ "$(curl -sf "$API/_fake/state" | python3 -c 'import json, sys; print(sum(c["user"]["login"] == "perfd-bot" for c in json.load(sys.stdin)["comments"]))')" = "$N" ] && break
	sleep 0.1
done
printf '[host]\nname = bench\n' >bench-host.conf
{
	bench_section agent database="$SCRATCH/agent.db" workdir="$SCRATCH/work" host="$SCRATCH/bench-host.conf"
	bench_section repo url="file://$SCRATCH/src" branches=main pulls=true
	bench_section calibration runs=0 idle_budget_s=0
	bench_section hub url="http://127.0.0.1:$PORT" token_file="$SCRATCH/token"
	bench_section build command="${CC:-cc} -O1 -o prog prog.c" artifacts=prog timeout_s=60
	bench_section "case work" command=./prog pairs=3 max_pairs=3 warmup=0
} >agent.conf
"$PERFD" agent --config agent.conf --once >agent.out 2>agent.err || bench_fail "perfd agent --once failed (agent.err)"
sleep 3    # the last edit's request reaches the forge's log

echo "perfd comment latency: $N pull requests, one host; $(machine_line)"
python3 - "$SCRATCH" <<'PY'
import calendar, json, sqlite3, sys, time
d = sys.argv[1]
def epoch(t):   # perfd's "2026-12-01T03:54:10.123Z"
    return calendar.timegm(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")) + int(t[20:23]) / 1000
agent = sqlite3.connect(d + "/agent.db")
rows = agent.execute("select c.id, c.finished_at, p.hub_id, j.head from comparisons c"
                     " join jobs j on j.id = c.job_id join pushed p on p.comparison_id = c.id"
                     " where j.head like 'pull/%' and c.state = 'done'").fetchall()
edits = []
for line in open(d + "/gh.log"):
    r = json.loads(line)
    if r["method"] in ("POST", "PATCH") and "/comments" in r["path"] and isinstance(r["body"], dict):
        edits.append((r["t"], r["body"].get("body", "")))
lat = []
for cid, done, hub_id, head in rows:
    link = "comparison.html?id=%d)" % hub_id
    seen = [t for t, body in edits if link in body]
    if not seen:
        print("comparison %d (%s): no comment links it" % (cid, head))
        continue
    lat.append(min(seen) - epoch(done))
    print("comparison %d (%s): %.3f s" % (cid, head, lat[-1]))
if not lat:
    sys.exit("no latency measured")
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * (len(lat) - 1) + 0.5))]
print("latency: median %.3f s, p90 %.3f s, max %.3f s over %d comparisons; target under 2 s: %s"
      % (q(0.5), q(0.9), lat[-1], len(lat), "met" if lat[-1] < 2 else "missed"))
PY
