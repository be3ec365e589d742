#!/bin/bash
# The dashboard in Debian's chromium (playwright-core, tests/browser/):
# the demo's database plus a comparison whose host and case names are
# markup, served on loopback by a hub (perfd serve --config) with [github]
# and a fake forge whose one pull request's head is a demo job's commit;
# hosts push heartbeats and jobs to it. Every page opened and checked
# against the API, a receipt recomputed before and after a stored gain is
# tampered with, the hosts' heartbeats on the overview, the pull head's
# hosts on the head page, two hosts overlaid on a timeline, the change
# point of a planted step in a series of main marked and listed, and none
# in a flat one; among comparisons by hand, one with a gain of -2055% drawn
# at the chart's edge while the rest keep the chart's height, and the whole
# range on demand; who made each A/A. Screenshots go to
# build/meson-logs/screenshots/.
. "$(dirname "$0")/lib.sh"
# The demo's processes keep the machine's CPU pressure, which the receipt
# page shows (lib.sh turns it off for tests that plant timings).
export PERFD_CPU_PRESSURE=/proc/pressure/cpu
SRC=$(cd "$TESTS_DIR/.." && pwd)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
need_vulkan
command -v glslc >/dev/null && command -v cc >/dev/null || { echo "glslc or cc missing: skipped"; exit 77; }
command -v node >/dev/null || { echo "node missing: skipped"; exit 77; }
[ -x "$CHROMIUM" ] || { echo "chromium missing: skipped"; exit 77; }
: "${PLANT:?PLANT must name the plant fixture}"
DB=$T/d/perfd.db
HOSTILE='<script>alert(1)</script>'
HOSTILE_CASE='<img src=x onerror=alert(2)>'
HOSTILE_HEAD='<script>alert(3)</script>'
# The screenshots outlive $T: beside meson's logs, in the build directory
# that holds $PERFD (BUILD/daemon/perfd).
SHOTS=$(cd "$(dirname "$PERFD")/.." && pwd)/meson-logs/screenshots

check "npm packages installed (./dev.sh build)" test -f "$SRC/node_modules/playwright-core/package.json"
check "Chart.js in web/static/vendor (./dev.sh build)" test -s "$SRC/web/static/vendor/chart.umd.js"

check "perfd demo --once" run 0 "$PERFD" demo --once --dir "$T/d"
check "a comparison with a hostile host and case name" run 0 "$PERFD" pair --db "$DB" \
	--host-name "$HOSTILE" --case "$HOSTILE_CASE" "$PLANT" "$PLANT" -- \
	--old 4392,4421,4113 --new 4362,4081,4218 --valid --digest c4759069c154
check "stored as given" eq 1 "$(sql "select count(*) from comparisons where host = '$HOSTILE'")"
# An alert of the hostile comparison, on a branch named like markup.
sql "insert into alerts (host, branch, case_name, found_by, lo_oid, hi_oid, commits, direction,
	gain, comparison_id, state, created_at, updated_at, seq) select '', '$HOSTILE_HEAD', case_name,
	'head', printf('%040d', 0), printf('%040d', 1), 1, 'slower', -0.05, id, 'raised',
	created_at, created_at, 1 from comparisons where host = '$HOSTILE'"
check "an alert planted" eq 1 "$(sql "select count(*) from alerts where branch = '$HOSTILE_HEAD'")"
# A branch named like markup, as a pull request could name one: the base
# step's job (it has no comparison, so nothing else changes).
sql "update jobs set head = '$HOSTILE_HEAD', subject = '$HOSTILE_CASE' where id = 1"

# A changed kernel from the third comparison on, as an upgrade between two
# heads would store it; the timeline must mark it.
cid=$(sql "select max(id) from comparisons where job_id is not null")
sql "update comparisons set fingerprint = replace(fingerprint, '\"kernel_release\":\"', '\"kernel_release\":\"9.9.9-upgraded-') where job_id is not null and id >= $cid - 1"
check "two fingerprints in the demo's comparisons" eq 2 "$(sql "select count(distinct fingerprint) from comparisons where job_id is not null")"
# The demo's builds are quiet; give the failed head's build a log with
# markup in it, as a compiler quoting source would print.
bid=$(sql "select c.head_build from comparisons c join jobs j on j.id = c.job_id where j.state = 'failed' limit 1")
sql "update builds set log = cast('cc -O2 -o demo demo.c' || char(10) || 'demo.c:3: warning: <script>alert(2)</script> & \"quotes\"' || char(10) as blob), log_bytes = 76 where id = $bid"
check "a log planted" eq 1 "$(sql "select count(*) from builds where id = $bid and length(log) > 0")"

# Another host measured the demo's case: two comparisons to overlay.
DEMOHOST=$(sql "select host from comparisons where job_id is not null limit 1")
KASE=$(sql "select case_name from comparisons where job_id is not null limit 1")
for v in 4362,4081,4218 4300,4290,4310; do
	check "a comparison (not an A/A) of $KASE on m1" run 0 "$PERFD" pair --db "$DB" --host-name m1 --case "$KASE" \
		--old-arg --old --old-arg 4392,4421,4113 --new-arg --new --new-arg "$v" \
		"$PLANT" "$PLANT" -- --valid --digest c4759069c154
done

# A series of the default branch with a planted step, and one without:
# 16 head jobs of main on host cp-host, each with a comparison of a case
# named like markup whose new arm takes 10 ms, 11 ms from the 9th job on,
# and one of case flat at 10 ms, every value with a fixed noise of +-0.4%
# (noise_next). The 9th job's commit is markup too, and a comparison by
# hand joins the step's timeline as another head's would.
CPHOST=cp-host
STEPCASE='step<img src=x onerror=alert(5)>'
CPCOMMIT='<script>alert(6)</script>'
hpair() { # HOST CASE OLD NEW: a comparison's id
	"$PERFD" pair --db "$DB" --json --host-name "$1" --case "$2" --pairs 3 \
		--old-arg --old --old-arg "$3" --new-arg --new --new-arg "$4" \
		"$PLANT" "$PLANT" -- --valid --digest c4759069c154 >"$T/cp.json" 2>"$T/cp.err" &&
		js "$T/cp.json" 'd["comparison"]'
}
cpair() { hpair "$CPHOST" "$@"; }
sprev=10.0000
fprev=10.0000
cp_ok=0
for i in $(seq 1 16); do
	base=100000
	[ "$i" -ge 9 ] && base=110000
	noise_next
	sv=$(noisy $base)
	noise_next
	fv=$(noisy 100000)
	commit=$(printf 'c%039d' "$i")
	[ "$i" = 9 ] && commit=$CPCOMMIT
	sc=$(cpair "$STEPCASE" "$sprev" "$sv") && fc=$(cpair flat "$fprev" "$fv") || continue
	sql "insert into jobs (head, commit_oid, base_oid, subject, state, created_at, started_at, finished_at)
		values ('main', '$commit', printf('c%039d', $i - 1), 'series $i', 'done',
		strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ'));
		update comparisons set job_id = last_insert_rowid() where id in ($sc, $fc)" && cp_ok=$((cp_ok + 1))
	sprev=$sv
	fprev=$fv
done
check "16 jobs of main on $CPHOST, each with a step and a flat comparison" eq 16 "$cp_ok"
check "a comparison by hand of the step's case" run 0 "$PERFD" pair --db "$DB" --host-name "$CPHOST" \
	--case "$STEPCASE" --pairs 3 --old-arg --old --old-arg 11 --new-arg --new --new-arg 11 \
	"$PLANT" "$PLANT" -- --valid --digest c4759069c154

# An outlier among comparisons by hand, as an unoptimised (-O0) build
# gives one: 11 comparisons of case o0 on host o0-host at 10 ms, each value
# with the fixed noise, the 6th one's new arm at 215.5 ms (a gain of
# -2055%); and 3 of o0-peer, to overlay.
OHOST=o0-host
OPEER=o0-peer
OCASE=o0
o_ok=0
for i in $(seq 1 14); do
	host=$OHOST
	[ "$i" -gt 11 ] && host=$OPEER
	noise_next
	ov=$(noisy 100000)
	noise_next
	nv=$(noisy 100000)
	[ "$i" = 6 ] && nv=215.5
	hpair "$host" "$OCASE" "$ov" "$nv" >/dev/null && o_ok=$((o_ok + 1))
done
check "14 comparisons of $OCASE by hand, one of them the outlier" eq 14 "$o_ok"
check "  whose gain is -2055%" eq 1 "$(sql "select count(*) from comparisons where host = '$OHOST' and gain_median < -20")"

# ---- a hub with [github]: a fake forge whose pull request 5 is at the
# commit of the newest demo job with comparisons ----
HC=$(sql "select commit_oid from jobs where id = (select max(job_id) from comparisons where host = '$DEMOHOST')")
HB=$(sql "select base_oid from jobs where id = (select max(job_id) from comparisons where host = '$DEMOHOST')")
GHTOKEN=ghp_$(printf 'f%.0s' $(seq 36))
python3 "$TESTS_DIR/fake-github.py" --repo acme/engine --token "$GHTOKEN" --log "$T/gh.log" \
	--max-seconds 600 >"$T/fake.out" 2>"$T/fake.err" &
fake=$!
trap 'kill $fake 2>/dev/null; rm -rf "$T"' EXIT
wait_for "fake-github.py's port in $T/fake.out" 10 test -s "$T/fake.out"
GH=http://127.0.0.1:$(head -n 1 "$T/fake.out")
curl -sf -X POST -H 'Content-Type: application/json' --data "[{\"number\": 5, \"author\": \"alice\",
	\"head_sha\": \"$HC\", \"head_ref\": \"alice-1\", \"base_ref\": \"main\", \"base_sha\": \"$HB\"}]" \
	"$GH/_fake/pulls" >/dev/null
check "the fake forge holds pull request 5" test -n "$HC"
printf '%s\n' "$GHTOKEN" >"$T/gh-token"
chmod 600 "$T/gh-token"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
EXPECT="$DEMOHOST m1 m1-max gfx1201 arc-b60"
cat >"$T/hub.conf" <<CONF
[hub]
database = $DB
listen = 127.0.0.1:$PORT
hosts = $EXPECT

[github]
api = $GH
repo = acme/engine
token_file = $T/gh-token
allow = alice
expect = $EXPECT
hub_url = http://127.0.0.1:$PORT
poll_s = 3600
CONF
for h in $EXPECT; do
	"$PERFD" token new "$h" --config "$T/hub.conf" >"$T/tok-$h" 2>/dev/null
done
check "a token per expected host" eq 5 "$(cat "$T"/tok-* | wc -l)"

"$PERFD" serve --config "$T/hub.conf" --static "$SRC/web/static" 2>"$T/serve.log" &
srv=$!
wait_for "perfd serve's line 'serving'" 10 grep -q "serving http://" "$T/serve.log"
port=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$T/serve.log")
check "perfd serve --config started" test -n "$port"
URL=http://127.0.0.1:$port
one_pull() {
	[ "$(curl -s "$URL/api/v1/pulls" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["pulls"]))')" = 1 ]
}
check "the hub lists pull request 5" wait_for "the hub's pull request 5" 10 one_pull

# What the hosts push: m1 is done with the head, m1-max measures it, the
# demo's host idles with a backlog, gfx1201 is quarantined, arc-b60 is
# never heard from.
push() { # HOST ENDPOINT FILE
	curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $(cat "$T/tok-$1")" \
		-H 'Content-Type: application/json' --data-binary "@$3" "$URL/api/v1/ingest/$2"
}
NOW=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
job() { # HOST STATE: a job record of pull/5 at the head, id 1
	printf '{"format": "perfd-job/1", "host": "%s", "id": 1, "seq": 1, "sha256": "", "head": "pull/5",
	 "commit": "%s", "base": "%s", "subject": "the head", "state": "%s", "detail": null,
	 "created_at": "%s", "started_at": "%s", "finished_at": %s}' "$1" "$HC" "$HB" "$2" "$NOW" "$NOW" "$3" >"$T/job0.json"
	python3 "$TESTS_DIR/fixtures/canon.py" edit "$T/job0.json" pass >"$T/job-$1.json"
}
hb() { # HOST STATE JOB BACKLOG QUARANTINE [SANDBOX [MORE]]: SANDBOX as JSON, left out when
	# empty; MORE: more members
	printf '{"format": "perfd-heartbeat/1", "host": "%s", "seq": 1, "sent_at": "%s", "state": "%s", "job": %s,
	 "backlog": %s, "fingerprint": null, "quarantine": %s%s%s}' "$1" "$NOW" "$2" "$3" "$4" "$5" \
	 "${6:+, \"sandbox\": $6}" "${7:+, $7}" >"$T/hb-$1.json"
}
job m1 done "\"$NOW\""
check "m1's job of the head, done: 201" eq 201 "$(push m1 jobs "$T/job-m1.json")"
job m1-max running null
check "m1-max's, running: 201" eq 201 "$(push m1-max jobs "$T/job-m1-max.json")"
hb m1 idle null 0 null '"bubblewrap"'
check "m1's heartbeat: sandboxed" eq 200 "$(push m1 heartbeat "$T/hb-m1.json")"
hb m1-max measuring 1 0 null '"bubblewrap"'
check "m1-max's heartbeat: measuring its job" eq 200 "$(push m1-max heartbeat "$T/hb-m1-max.json")"
hb "$DEMOHOST" idle null 2 null '"none: no sandbox here (bwrap: not found): builds and processes run as they are"'
check "$DEMOHOST's heartbeat: a backlog of 2, no sandbox" eq 200 "$(push "$DEMOHOST" heartbeat "$T/hb-$DEMOHOST.json")"
# gfx1201 holds a commit of no pull request: its standing says so, and no
# pull request's row changes.
hb gfx1201 idle null 0 "{\"fault\": \"GPU hang (ring gfx timeout)\", \"since\": \"$NOW\"}" \
	"" "\"kind\": \"GFX1201\", \"holds\": [{\"id\": 4, \"why\": \"went-down\", \"step\": \"case\", \"commit\": \"$(printf 'e%.0s' $(seq 40))\", \"tree\": null, \"since\": \"$NOW\", \"text\": \"the machine went down while case 'mm' ran\"}]"
check "gfx1201's heartbeat: quarantined, a commit held" eq 200 "$(push gfx1201 heartbeat "$T/hb-gfx1201.json")"
curl -s "$URL/api/v1/pulls?commit=$HC" >"$T/pulls.json"
check "the pull head's hosts as the API says them" eq "$DEMOHOST:pending m1:done m1-max:measuring gfx1201:quarantined arc-b60:silent" \
	"$(js "$T/pulls.json" '" ".join(h["host"] + ":" + h["state"] for h in d["pulls"][0]["hosts"])')"
curl -s "$URL/api/v1/hosts" >"$T/hosts.json"
check "gfx1201, known by its heartbeat alone, is a host" eq "idle 0 true 1" "$(js "$T/hosts.json" '" ".join(str(h["state"]) + " " + str(h["backlog"]) + " " + str(h["quarantined"]).lower() + " " + str(h["held"]) for h in d["hosts"] if h["name"] == "gfx1201")')"

mkdir -p "$SHOTS"
rm -f "$SHOTS"/*.png
BASE=$URL DB=$DB DEMOHOST=$DEMOHOST KASE=$KASE CPHOST=$CPHOST OHOST=$OHOST OPEER=$OPEER OCASE=$OCASE STEPCASE=$STEPCASE CPCOMMIT=$CPCOMMIT SHOTS=$SHOTS CHROMIUM=$CHROMIUM PROFILE=$T/profile HOSTILE=$HOSTILE HOSTILE_HEAD=$HOSTILE_HEAD HOSTILE_CASE=$HOSTILE_CASE \
	NODE_PATH="$SRC/node_modules" timeout "$(slow_s 240)" node "$SRC/tests/browser/dashboard.mjs" >"$T/browser.out" 2>&1
brc=$?
# Each line the browser test printed is a check here.
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	*) echo "$line" ;;
	esac
done <"$T/browser.out"
check "the browser test exited 0" eq 0 "$brc"
for s in overview receipt receipt-verify-ok receipt-verify-mismatch timeline timeline-overlay timeline-changepoints timeline-flat timeline-outlier timeline-outlier-whole timeline-outlier-overlay build head receipt-hostile receipt-aa; do
	check "screenshot $s.png kept" test -s "$SHOTS/$s.png"
done

kill -TERM "$srv"
wait "$srv"
check "perfd serve stopped on SIGTERM, exit 0" eq 0 $?
kill "$fake" 2>/dev/null
finish
