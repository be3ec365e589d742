#!/bin/bash
# Many hosts, one hub (docs/hub.md, "Pull requests at the hub"): a hub with
# [github] and a fake forge, and four agents (m1, m1-max, arc-b60, gfx1201:
# host profiles simulated on lavapipe, each with its own database and
# token, none with a forge token). The hub lists the pull requests, trusts
# alice's and not mallory's, fixes each head's base (the merge base, not
# the base branch's head), and hands the trusted heads to the agents; every
# agent compares against that base. The one comment of the pull request
# gains a row per host as each pushes, the hosts not done shown pending
# with their state; a status per host. Meanwhile the hub is killed with
# SIGKILL twice while agents push, an agent is killed and run again, one
# agent's network is cut (a port that refuses) and comes back, a record is
# sent twice, a record with a changed gain is refused, and a host's token
# is refused for another host's record. At the end every comparison and
# build is at the hub exactly once, equal to its agent's rows; the pull
# request has one comment with four host rows linked to receipts and each
# host's contract runner lines, and the forecasts its description and head
# commit state (read by the hub before any host measured the head, the
# commit's message asked of the forge once), each judged on every host;
# and the forge's token is on no agent's disk and in no child's
# environment.
. "$(dirname "$0")/lib.sh"
need git cc curl
need_vulkan --host lavapipe
HOSTS="m1 m1-max arc-b60 gfx1201"
GHTOKEN=ghp_$(printf 'f%.0s' $(seq 36))

# ---- the repository: main moves on after alice's branch leaves it ----
new_src
work_prog "$SRC/prog.c" 2000000 7
printf '#!/bin/sh\necho "RESULT stage1 on \\"blit\\": passed=3 total=3"\n' >"$SRC/check.sh"
chmod +x "$SRC/check.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm base
C1=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q -b alice-1
work_prog "$SRC/prog.c" 1000000 7
git -C "$SRC" commit -qam "half the rounds" -m "perfd-expect: work slower 5%..10%"
C2=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q -b mallory-1 main
work_prog "$SRC/prog.c" 4000000 7
git -C "$SRC" commit -qam "twice the rounds"
C3=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q main
echo "notes" >"$SRC/NOTES"
git -C "$SRC" add NOTES && git -C "$SRC" commit -qm "notes"
C1B=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" update-ref refs/pull/5/head "$C2"
git -C "$SRC" update-ref refs/pull/6/head "$C3"

# ---- the forge ----
fake_github "$GHTOKEN" --git-dir "$SRC" --max-seconds 900
kill_at_exit hub proxy
ctl POST pulls "[{\"number\": 5, \"author\": \"alice\", \"head_sha\": \"$C2\", \"head_ref\": \"alice-1\", \"base_ref\": \"main\", \"base_sha\": \"$C1B\",
	  \"body\": \"Halves the rounds.\\n\\nperfd-expect: work faster 20%..80%\"},
	{\"number\": 6, \"author\": \"mallory\", \"head_sha\": \"$C3\", \"head_ref\": \"mallory-1\", \"base_ref\": \"main\", \"base_sha\": \"$C1B\"}]" >/dev/null
state() { ctl GET state >"$T/state.json"; js "$T/state.json" "$1"; }
comment() { # the body of perfd's comments on pull request 5, and their count
	ctl GET state >"$T/state.json"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); c = [c["body"] for c in d["comments"] if c["pr"] == 5 and c["user"]["login"] == "perfd-bot"]; open(sys.argv[2], "w").write(c[-1] if c else ""); print(len(c))' "$T/state.json" "$T/comment.md"
}
status_of() { # SHA CONTEXT: the newest status "state: description"
	state "''.join([s['state'] + ': ' + s['description'] for s in d['statuses'] if s['sha'] == '$1' and s['context'] == '$2'][-1:])"
}

# ---- the hub ----
hub_github "$HOSTS"
check "the hub's configuration with [github]" run 0 "$PERFD" serve --config hub.conf --check
chmod 644 gh-token
check "a forge token file others may read: serve --check refuses it" run 2 "$PERFD" serve --config hub.conf --check
check "  naming the file, its mode and the fix" has "$T/err" "[github] token file '$T/gh-token' is mode 0644: others than its owner can read it; refused: chmod 600 '$T/gh-token'"
check "  the token not in the message" eq 0 "$(grep -c "$GHTOKEN" "$T/err")"
chmod 600 gh-token
cat >bad-hub.conf <<CONF
[hub]
hosts = m1

[github]
repo = acme/engine
token_file = $T/gh-token
expect = m1 m1 gfx1201
comment_key = mine
CONF
check "mistakes in the hub's [github]" run 2 "$PERFD" serve --config bad-hub.conf --check
check "  an expected host twice" has "$T/err" "bad-hub.conf:7: 'expect': expected each once, not 'm1' twice"
check "  an expected host the hub does not accept" has "$T/err" "'expect': expected one of [hub] hosts, whose records the hub accepts, not 'gfx1201'"
check "  an agent's key" has "$T/err" "bad-hub.conf:8: unknown key 'comment_key' in [github]"
check "  no allow list" has "$T/err" "[github] needs 'allow'"
for h in $HOSTS; do
	"$PERFD" token new "$h" --config hub.conf >"tok-$h" 2>/dev/null
	chmod 600 "tok-$h"
done
check "a token per host" eq 4 "$(cat tok-* | tr -dc 0-9a-f | wc -c | awk '{print $1 / 64}')"

start_hub() {
	"$PERFD" serve --config hub.conf 2>>"$T/hub.err" &
	hub=$!
	for _ in $(seq 200); do
		curl -s -o /dev/null "$HUBURL/api/v1/hosts" && return 0
		sleep 0.05
	done
	return 1
}
check "the hub starts" start_hub
pulls() { curl -s -H "Authorization: Bearer $(cat "tok-$1")" "$HUBURL/api/v1/hub/pulls" >"$T/pulls.json"; }
wait_pulls() { for _ in $(seq 100); do pulls m1; [ "$(js "$T/pulls.json" 'len(d["pulls"])')" = 2 ] && return 0; sleep 0.1; done; return 1; }
check "the hub lists the open pull requests" wait_pulls
check "  alice's trusted, mallory's not" eq "5 True 6 False" "$(js "$T/pulls.json" '" ".join("%d %s" % (p["number"], p["trusted"]) for p in sorted(d["pulls"], key=lambda p: p["number"]))')"
check "  the base: the merge base, not main's head" eq "$C1 $C1" "$(js "$T/pulls.json" '" ".join(p["base"] for p in d["pulls"])')"
check "  found by the compare" eq "merge-base" "$(js "$T/pulls.json" 'd["pulls"][0]["how"]')"
check "  said in the hub's log" has "$T/hub.err" "pull request 5 at ${C2:0:12}: base ${C1:0:12} (merge-base of main)"
curl -s -o "$T/dash.json" "$HUBURL/api/v1/pulls"
check "/api/v1/pulls, for anyone: both open heads, newest first" eq "6 5" "$(js "$T/dash.json" '" ".join(str(p["number"]) for p in d["pulls"])')"
check "  alice's with its base, how it was found, trusted" eq "$C2 $C1 main merge-base alice True True" "$(js "$T/dash.json" '" ".join(str(x) for x in [(p["head"], p["base"], p["base_ref"], p["how"], p["author"], p["trusted"], p["open"]) for p in d["pulls"] if p["number"] == 5][0])')"
check "  four expected hosts each, never heard from" eq "m1:silent m1-max:silent arc-b60:silent gfx1201:silent|m1:silent m1-max:silent arc-b60:silent gfx1201:silent" "$(js "$T/dash.json" '"|".join(" ".join(h["host"] + ":" + h["state"] for h in p["hosts"]) for p in d["pulls"])')"
check "  said so, with no job" eq "never heard from None" "$(js "$T/dash.json" 'd["pulls"][0]["hosts"][0]["detail"] + " " + str(d["pulls"][0]["hosts"][0]["job"])')"
check "mallory's head: pending, waiting for a maintainer" eq "pending: waiting for a maintainer's /perfd run" "$(status_of "$C3" perfd/m1)"
# A base branch whose name the hub puts in no URL gets no compare: the base
# is the branch's head as the pull request names it, said so.
ctl POST pulls "[{\"number\": 7, \"author\": \"eve\", \"head_sha\": \"$C3\", \"head_ref\": \"eve-1\", \"base_ref\": \"release 1.0\", \"base_sha\": \"$C1B\"}]" >/dev/null
npulls() { for _ in $(seq 100); do pulls m1; [ "$(js "$T/pulls.json" 'len(d["pulls"])')" = "$1" ] && return 0; sleep 0.1; done; return 1; }
check "a third pull request, its base branch 'release 1.0'" npulls 3
check "  its base: the branch's head, not a merge base" eq "$C1B base-head" "$(js "$T/pulls.json" '[p["base"] + " " + p["how"] for p in d["pulls"] if p["number"] == 7][0]')"
check "  said in the hub's log" has "$T/hub.err" "pull request 7 at ${C3:0:12}: no merge base"
ctl DELETE pulls/7 >/dev/null
check "  closed: no longer listed" npulls 2

# ---- the agents ----
for h in $HOSTS; do
	sed "s/^name = lavapipe/name = $h/" "$TESTS_DIR/../hosts/lavapipe.conf" >"$h.conf"
done
agent_conf() { # HOST HUB-URL
	cat <<CONF
$(agent_repo database="$T/$1.db" workdir="$T/work-$1" host="$T/$1.conf" pulls=true)

$(section calibration runs=0 idle_budget_s=0)

$(section hub url="$2" token_file="$T/tok-$1")

$(work_suite build="env; cc -O1 -o prog prog.c" max_pairs=12 warmup=0)
CONF
}
for h in $HOSTS; do agent_conf "$h" "$HUBURL" >"$h-agent.conf"; done
# gfx1201 reaches the hub through a port that refuses until its network
# comes back (a forwarder started there).
PROXYPORT=$(free_port)
agent_conf gfx1201 "http://127.0.0.1:$PROXYPORT" >gfx1201-agent.conf
check "an agent with [hub] and no [github]" run 0 "$PERFD" agent --config m1-agent.conf --check

once() { "$PERFD" agent --config "$1-agent.conf" --once >"$T/$1.out" 2>>"$T/$1.err"; }
check "m1 alone: agent --once" once m1
check "  built main and alice's head, not mallory's" eq "main $C1B $C1|pull/5 $C2 $C1" "$(sqlite3 "$T/m1.db" "select group_concat(head || ' ' || commit_oid || ' ' || base_oid, '|') from (select * from jobs order by id)")"
check "  mallory's said waiting" has "$T/m1.out" "pull/6 at ${C3:0:12}: waiting for a maintainer's /perfd run (at the hub)"
wait_rows() { # N: the comment shows N host rows in its table
	for _ in $(seq 100); do
		comment >/dev/null
		[ "$(grep -cE '^\| \[(m1|m1-max|arc-b60|gfx1201)\]\(' "$T/comment.md")" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
check "the comment has m1's row" wait_rows 1
check "  one comment" eq 1 "$(comment)"
check "  linked to m1's receipt at the hub" has "$T/comment.md" "| [m1]($HUBURL/static/comparison.html?id="
check "  the hub's base named" has "$T/comment.md" "Every host compares against base \`$C1\`"
check "  m1 done" has "$T/comment.md" "| m1 | [done]($HUBURL/static/head.html?job="
check "  the others pending, never heard from" eq 3 "$(grep -cE '^\| (m1-max|arc-b60|gfx1201) \| silent \| never heard from \|' "$T/comment.md")"
check "m1's status: success" eq "success: 1 faster, 0 unchanged, 0 unresolved or invalid" "$(status_of "$C2" perfd/m1)"
check "m1-max's: pending, never heard from" eq "pending: never heard from" "$(status_of "$C2" perfd/m1-max)"

# ---- the others, with the hub killed twice under them ----
# In the background as perfd itself (exec), so that the pid killed below is
# the agent's, not a subshell's that would leave the agent running on.
for h in m1-max arc-b60 gfx1201; do
	(exec "$PERFD" agent --config "$h-agent.conf" --once >"$T/$h.out" 2>>"$T/$h.err") &
	eval "pid_$(echo "$h" | tr -d -)=\$!"
done
sleep 0.3
kill -9 "$hub"; wait "$hub" 2>/dev/null
check "the hub killed (SIGKILL) while the agents work, and restarted" start_hub
# m1-max killed in the middle of its run, then run again.
kill -9 "$pid_m1max" 2>/dev/null; wait "$pid_m1max" 2>/dev/null
sleep 0.3
kill -9 "$hub"; wait "$hub" 2>/dev/null
check "killed a second time, and restarted" start_hub
wait "$pid_arcb60"; wait "$pid_gfx1201"
check "m1-max, killed, runs again" once m1-max
check "arc-b60 runs again (its backlog drains)" once arc-b60
check "gfx1201's network is cut: it measures main" once gfx1201
check "  and has a backlog" eq 1 "$(grep -c 'push backlog [1-9]' "$T/gfx1201.out")"
check "  it does not build a pull head the hub has not handed it" eq 0 "$(sqlite3 "$T/gfx1201.db" "select count(*) from jobs where head like 'pull/%'")"
check "  the comment shows it silent or never heard from" wait_rows 3
check "  its row pending" eq 1 "$(grep -cE '^\| gfx1201 \| silent \|' "$T/comment.md")"
# The network back: a forwarder on the port that refused.
python3 -c '
import socket, sys, threading
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d: break
            b.sendall(d)
    except OSError: pass
    finally:
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", int(sys.argv[1]))); ls.listen(16)
while True:
    c, _ = ls.accept()
    u = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
' "$PROXYPORT" "$PORT" &
proxy=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PROXYPORT/api/v1/hosts" && break; sleep 0.05; done
check "the network back: gfx1201 runs again" once gfx1201
check "  now it builds alice's head against the hub's base" eq "pull/5 $C2 $C1" "$(sqlite3 "$T/gfx1201.db" "select head || ' ' || commit_oid || ' ' || base_oid from jobs where head = 'pull/5'")"
check "  and drains its backlog" has "$T/gfx1201.out" ", push backlog 0"
for h in m1 m1-max arc-b60; do once "$h"; done
check "the comment has a row per host" wait_rows 4

# ---- records sent twice, changed, or with another host's token ----
sqlite3 "$T/arc-b60.db" "delete from pushed where comparison_id = (select max(comparison_id) from pushed)"
before=$(sqlite3 "$HUB" "select count(*) from comparisons")
check "a lost answer: arc-b60 sends a record again" once arc-b60
check "  answered 200, nothing stored" eq "200 $before" "$(sqlite3 "$T/arc-b60.db" "select status from pushed order by pushed_at desc limit 1") $(sqlite3 "$HUB" "select count(*) from comparisons")"
cid=$(sqlite3 "$T/m1.db" "select id from comparisons where job_id = (select id from jobs where head = 'pull/5')")
"$PERFD" export --db "$T/m1.db" "$cid" >m1.json
python3 "$TESTS_DIR/fixtures/canon.py" edit m1.json 'd["id"] = 99; d["summary"]["gain"]["median"] += 0.01' >m1-gain.json
post() { curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $(cat "tok-$1")" --data-binary "@$2" "$HUBURL/api/v1/ingest/comparisons"; }
check "a record with a changed gain: 422" eq 422 "$(post m1 m1-gain.json)"
check "  naming the figure" has "$T/body" "gain.median: sent"
check "  nothing stored" eq 0 "$(sqlite3 "$HUB" "select count(*) from comparison_origins where origin_id = 99")"
check "m1's record with arc-b60's token: 403" eq 403 "$(post arc-b60 m1.json)"
check "  said" has "$T/body" "the record is of host 'm1', and the token is host 'arc-b60''s"

# ---- at the end ----
for h in $HOSTS; do
	mine=$(sqlite3 "$T/$h.db" "select group_concat(id, ' ') from (select id from comparisons where state = 'done' order by id)")
	there=$(sqlite3 "$HUB" "select group_concat(origin_id, ' ') from (select origin_id from comparison_origins where host = '$h' order by origin_id)")
	check "$h: every done comparison at the hub, once" eq "$mine" "$there"
	check "  none twice" eq "$(sqlite3 "$HUB" "select count(*) from comparison_origins where host = '$h'")" "$(sqlite3 "$HUB" "select count(distinct origin_id) from comparison_origins where host = '$h'")"
	for id in $mine; do
		"$PERFD" export --db "$T/$h.db" "$id" >"exp.json"
		check "  comparison $id: the record perfd export prints" eq "$(js exp.json 'd["sha256"]')" "$(sqlite3 "$HUB" "select sha256 from comparison_origins where host = '$h' and origin_id = $id")"
	done
	check "  its pull job at the hub, done, against the hub's base" eq "done $C1" "$(sqlite3 "$HUB" "select state || ' ' || base_oid from jobs where host = '$h' and head = 'pull/5'")"
	check "  its builds at the hub, once each, with their runner results" eq "$(sqlite3 "$T/$h.db" "select group_concat(b, ' ') from (select b.id || ':' || b.commit_oid || ':' || (select count(*) from runner_results r where r.build_id = b.id and r.state = 'done') as b from builds b where b.state = 'done' order by b.id)")" "$(sqlite3 "$HUB" "select group_concat(b, ' ') from (select b.origin_id || ':' || b.commit_oid || ':' || (select count(*) from runner_results r where r.build_id = b.id) as b from builds b where b.host = '$h' order by b.origin_id)")"
	man=$(sqlite3 "$HUB" "select c.new_manifest from comparisons c join comparison_origins o on o.comparison_id = c.id where o.host = '$h' and c.kind = 'compare' limit 1")
	check "  its head build's manifest served by the hub, as the agent hashed it" eq "200 $man" "$(curl -s -o "$T/man.json" -w '%{http_code}' "$HUBURL/api/v1/manifests/$man") $(js "$T/man.json" 'd["hash"]')"
	check "  its comparisons tied to their builds there" eq 0 "$(sqlite3 "$HUB" "select count(*) from comparisons c join comparison_origins o on o.comparison_id = c.id where o.host = '$h' and c.kind = 'compare' and (c.base_build is null or c.head_build is null)")"
	check "  its status of alice's head: success" eq "success: 1 faster, 0 unchanged, 0 unresolved or invalid" "$(status_of "$C2" "perfd/$h")"
	check "  the forge's token nowhere on its disk" eq 0 "$(grep -rlF "$GHTOKEN" "$T/$h.db" "$T/work-$h" "$h-agent.conf" | wc -l)"
	check "  its builds printed their environment, without it" eq "1 0" "$(sqlite3 "$T/$h.db" "select (select count(*) > 0 from builds where cast(log as text) like '%PATH=%') || ' ' || (select count(*) from builds where instr(cast(log as text), '$GHTOKEN') > 0)")"
done
curl -s -o "$T/dash.json" "$HUBURL/api/v1/pulls?commit=${C2:0:10}"
check "/api/v1/pulls?commit=PREFIX: alice's head alone" eq "5 $C2" "$(js "$T/dash.json" '" ".join(str(p["number"]) + " " + p["head"] for p in d["pulls"])')"
check "  four hosts, each done, with its status" eq "m1:done:success m1-max:done:success arc-b60:done:success gfx1201:done:success" "$(js "$T/dash.json" '" ".join(h["host"] + ":" + h["state"] + ":" + h["status"] for h in d["pulls"][0]["hosts"])')"
jobs_at_hub=$(for h in $HOSTS; do sqlite3 "$HUB" "select id from jobs where host = '$h' and head = 'pull/5'"; done | tr '\n' ' ')
check "  each linked to its job at the hub" eq "${jobs_at_hub% }" "$(js "$T/dash.json" '" ".join(str(h["job"]) for h in d["pulls"][0]["hosts"])')"
check "  the detail as the comment says it" eq "1 faster, 0 unchanged, 0 unresolved or invalid" "$(js "$T/dash.json" 'd["pulls"][0]["hosts"][0]["detail"]')"
check "  mallory's head is another commit" eq 0 "$(curl -s "$HUBURL/api/v1/pulls?commit=${C3:0:8}" | python3 -c 'import json,sys; print(len([p for p in json.load(sys.stdin)["pulls"] if p["number"] == 5]))')"
check "  a malformed commit: 400" eq 400 "$(curl -s -o /dev/null -w '%{http_code}' "$HUBURL/api/v1/pulls?commit=zz")"
curl -s -o "$T/hosts.json" "$HUBURL/api/v1/hosts"
check "/api/v1/hosts: each agent's newest heartbeat" eq "arc-b60:idle:0 gfx1201:idle:0 m1:idle:0 m1-max:idle:0" "$(js "$T/hosts.json" '" ".join("%s:%s:%s" % (h["name"], h["state"], h["backlog"]) for h in d["hosts"] if h["last_push"])')"
check "perfd verify on the hub" run 0 "$PERFD" verify --db "$HUB"
check "one comment on alice's pull request" eq 1 "$(comment)"
check "  a row per host, each linked to its receipt" eq 4 "$(grep -cE "^\| \[(m1|m1-max|arc-b60|gfx1201)\]\($HUBURL/static/comparison.html\?id=[0-9]+\)" "$T/comment.md")"
check "  every host done" eq 4 "$(grep -cE "^\| (m1|m1-max|arc-b60|gfx1201) \| \[done\]" "$T/comment.md")"
check "  each host's contract runner lines, from its build at the hub" eq 4 "$(grep -cE '^#### Contract runners on (m1|m1-max|arc-b60|gfx1201)$' "$T/comment.md")"
check "  the RESULT line verbatim" has "$T/comment.md" 'RESULT stage1 on "blit": passed=3 total=3'
check "  the runner's binary hash" has "$T/comment.md" "- contract: exited 0, binary sha256 \`$(sha256sum "$SRC/check.sh" | cut -d' ' -f1)\`"
for id in $(grep -oE "comparison.html\?id=[0-9]+" "$T/comment.md" | sort -u | cut -d= -f2); do
	check "  receipt $id answers" eq 200 "$(curl -s -o /dev/null -w '%{http_code}' "$HUBURL/api/v1/comparisons/$id")"
done
# The forecasts, read by the hub before any host measured the head: the
# description's from the pull request, the commit's from the forge's
# commit, asked once; judged per host.
check "  its forecasts, per host" has "$T/comment.md" "#### Forecasts"
forecast_rows() { grep -F "| $1 | $2 | " "$T/comment.md" | grep -cE "^\| [^|]+ \| $2 \| [^|]+ \| (m1|m1-max|arc-b60|gfx1201) \| \[[^]]+\]\($HUBURL/static/comparison.html\?id=[0-9]+\) \| $3 \|\$"; }
check "  the description's faster 20%..80%: inside on each host" eq 4 "$(forecast_rows "perfd-expect: work faster 20%..80%" description inside)"
check "  the commit's slower 5%..10%: outside on each host" eq 4 "$(forecast_rows "perfd-expect: work slower 5%..10%" commit outside)"
check "  stored at the hub, one of each" eq "commit description" "$(sqlite3 "$HUB" "select group_concat(source, ' ') from (select source from forecasts where pr = 5 and commit_oid = '$C2' and problem is null order by source)")"
check "  each first seen before the first comparison reached the hub" eq 0 "$(sqlite3 "$HUB" "select count(*) from forecasts where pr = 5 and first_seen > (select min(received_at) from comparison_origins)")"
check "  the commit's message asked of the forge once" eq 1 "$(ctl GET requests | python3 -c "import json, sys; print(len([r for r in json.load(sys.stdin) if r['path'].endswith('/git/commits/$C2')]))")"
check "none on mallory's" eq 0 "$(state "len([c for c in d['comments'] if c['pr'] == 6])")"
check "the heartbeats at the hub" eq 4 "$(sqlite3 "$HUB" "select count(*) from host_status where state = 'idle' and backlog = 0")"
check "the hub sent the forge's token to the forge alone" eq 0 "$(grep -c "$GHTOKEN" "$T/hub.err")"
kill "$hub"; wait "$hub" 2>/dev/null
finish
