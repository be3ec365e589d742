#!/bin/bash
# Alerts on the forge (docs/github.md, "Alerts on the forge"): a hub with
# [github] and a fake forge (tests/fake-github.py), fed comparisons made by
# perfd pair and alert records pushed as an agent pushes them. Off by
# default: no issue. With alert_issues: one issue per raised alert of the
# default branch, none for another branch or an alert being confirmed; an
# update of the alert edits the issue's body, never opens a second one,
# and nothing unchanged is sent again; a triage at the hub closes it. With
# culprit_comments: the culprit's pull request (merged, found by the commit)
# gets one comment naming the alert, once however often the alert changes,
# and one for two culprits of the same pull request; a culprit of no pull
# request is asked about once. Triage by a command on the issue: a
# listed maintainer's /perfd triage applied and seen in GET
# /api/v1/alerts/ID with the login, a fixed by a comparison in the same
# direction refused (the issue says why), a malformed one ignored and said,
# one by a login off triage_allow ignored and counted, each comment taken
# once; fixed closes the issue, and a command left on it while closed is
# not applied when a maintainer opens it again. The
# forge down and slow to say so: the alert is stored and answered before
# the forge has answered the hub, its issue opened once the forge is back; a create whose answer is lost after it was made
# is found, not made twice, and one dropped before it was made is made
# once.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"
command -v curl >/dev/null || { echo "curl missing: skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "sqlite3 missing: skipped"; exit 77; }
GHTOKEN=ghp_$(printf 'a%.0s' $(seq 36))

# ---- host box's comparisons, as its agent would have them ----
A=$T/box.db
pair() {
	"$PERFD" pair --json --db "$A" --host-name box --case run "$@" "$PLANT" "$PLANT" \
		>"$T/pair.json" 2>"$T/pair.err"
	js "$T/pair.json" 'd["comparison"]'
}
SLOW="--old-arg --old --old-arg 1955,1965,1951 --new-arg --new --new-arg 2089,2093,2103"
FAST="--old-arg --old --old-arg 2089,2093,2103 --new-arg --new --new-arg 1955,1965,1951"
c1=$(pair $SLOW)
c2=$(pair $SLOW)
c3=$(pair $FAST)
check "box's comparisons: slower, slower again, then faster" eq "slower slower faster" \
	"$(sqlite3 "$A" "select group_concat(verdict, ' ') from (select verdict from comparisons order by id)")"

# ---- the forge ----
python3 "$TESTS_DIR/fake-github.py" --repo acme/engine --token "$GHTOKEN" --log "$T/gh.log" \
	--max-seconds 600 >"$T/fake.out" 2>"$T/fake.err" &
fake=$!
hub=
trap 'kill $fake $hub 2>/dev/null; wait $fake $hub 2>/dev/null; [ -n "${KEEP_T:-}" ] || rm -rf "$T"' EXIT
wait_for "fake-github.py's port in $T/fake.out" 10 test -s "$T/fake.out"
API=http://127.0.0.1:$(head -n 1 "$T/fake.out")
ctl() { curl -sf -X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "$API/_fake/$2"; }
state() { ctl GET state >"$T/state.json"; js "$T/state.json" "$1"; }
# requests METHOD REGEX: how many API requests of that method on a path
# matching REGEX the forge has had.
requests() {
	ctl GET requests >"$T/requests.json"
	python3 -c 'import json, re, sys; d = json.load(open(sys.argv[1])); print(sum(1 for r in d if r["method"] == sys.argv[2] and re.search(sys.argv[3], r["path"])))' \
		"$T/requests.json" "$1" "$2"
}
# issue_of ALERT: the number of the forge's issue whose marker names the
# hub's alert ALERT, and how many there are ("N/COUNT"); the body into issue.md.
issue_of() {
	ctl GET state >"$T/state.json"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
mine = [i for i in d["issues"] if (i["body"] or "").startswith("<!-- perfd:alert %s -->\n" % sys.argv[2])]
open(sys.argv[3], "w").write(mine[-1]["body"] + "\n" if mine else "")
print("%s/%d" % (mine[-1]["number"] if mine else 0, len(mine)))' "$T/state.json" "$1" "$T/issue.md"
}
# has_issue ALERT: ALERT has its issue. is_state NUMBER STATE: the issue is
# open or closed.
has_issue() { [ "$(issue_of "$1")" != 0/0 ]; }
is_state() { [ "$(state "[i['state'] for i in d['issues'] if i['number'] == $1][0]")" = "$2" ]; }
# body_has ALERT TEXT: ALERT's issue says TEXT.
body_has() { issue_of "$1" >/dev/null && grep -qF -- "$2" "$T/issue.md"; }
# polled: waits until the hub has begun three more polls of the forge (its
# listings of the open pull requests, each poll's first request): the
# second began after the call, the third after the second's whole round,
# so what the hub does at a poll for all that came before the call is done.
polled() {
	local before
	before=$(requests GET '^/repos/acme/engine/pulls$')
	wait_for "three more polls of the forge" 20 polls_since $((before + 3))
}
polls_since() { [ "$(requests GET '^/repos/acme/engine/pulls$')" -ge "$1" ]; }

# ---- the hub ----
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL=http://127.0.0.1:$PORT
HUB=$T/hub.db
printf '%s\n' "$GHTOKEN" >gh-token
chmod 600 gh-token
hub_conf() {
	cat >hub.conf <<CONF
[hub]
database = $HUB
listen = 127.0.0.1:$PORT
hosts = box

[github]
api = $API
repo = acme/engine
token_file = $T/gh-token
allow = alice
expect = box
hub_url = $URL
poll_s = 1
retries = 1
backoff_s = 0.1
$1
CONF
}
start_hub() {
	"$PERFD" serve --config hub.conf 2>>"$T/hub.err" &
	hub=$!
	wait_for "the hub to answer on $URL" 10 curl -s -o /dev/null "$URL/api/v1/hosts"
}
stop_hub() { kill "$hub"; wait "$hub" 2>/dev/null; hub=; }
hsql() { sqlite3 "$HUB" "$1"; }

hub_conf ""
TOK=$("$PERFD" token new box --config hub.conf 2>/dev/null)
MTOK=$("$PERFD" token new --maintainer carol --config hub.conf 2>/dev/null)
post() { # post KIND FILE: the status of POST /api/v1/ingest/KIND
	curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary "@$2" "$URL/api/v1/ingest/$1"
}
triage() { # triage ID BODY: the status of a maintainer's POST /api/v1/alerts/ID/triage
	curl -s -o "$T/body" -w '%{http_code}' -X POST -H "Authorization: Bearer $MTOK" \
		-H 'Content-Type: application/json' --data-binary "$2" "$URL/api/v1/alerts/$1/triage"
}

hub_conf "alert_issues = maybe"
check "alert_issues takes yes or no" run 2 "$PERFD" serve --config hub.conf --check
check "  said at its line" has "$T/err" "hub.conf:16: 'alert_issues': expected true or false, not 'maybe'"
hub_conf ""
check "off by default: the configuration" run 0 "$PERFD" serve --config hub.conf --check
check "the hub starts" start_hub

# ---- box's comparisons at the hub ----
# tie ORIGIN CMP LO HI: comparison CMP of box pushed as box's comparison
# ORIGIN, of a job ORIGIN from LO to HI and the builds of LO and HI (each
# pushed first, once): a comparison the hub can check. Its hub id printed.
# cmp_post ORIGIN JOB CMP LO HI: as tie, the comparison of job JOB (pushed
# before or after it), with the builds.
cmp_post() {
	for x in "$4" "$5"; do
		python3 - "$x" >"build-$x.json" <<'PY'
import json, sys
x = sys.argv[1]
print(json.dumps(dict(format="perfd-build/1", host="box", id=int(x[:6], 16), sha256="", commit=x,
    tree="f" * 40, recipe="0" * 64, state="done", dir="/b/" + x[:6], started_at="2026-12-01T03:00:00.000Z",
    finished_at="2026-12-01T03:00:01.000Z", exit=0, signal=0, timed_out=False, wall_ms=1.5, log="",
    log_bytes=0, toolchain="cc", fingerprint=None, detail=None, artifacts=[], runner_results=[])))
PY
		python3 "$TESTS_DIR/fixtures/canon.py" edit "build-$x.json" 'pass' >"build-$x.h.json"
		code=$(post builds "build-$x.h.json")
		[ "$code" = 201 ] || [ "$code" = 200 ] || { echo "build $x: $code $(cat "$T/body")" >&2; return 1; }
	done
	"$PERFD" export --db "$A" "$3" >"cmp-$1.json"
	python3 "$TESTS_DIR/fixtures/canon.py" edit "cmp-$1.json" \
		"d['id'] = $1; d['job'] = $2; d['base_build'] = int('$4'[:6], 16); d['head_build'] = int('$5'[:6], 16)" >"cmp-$1.h.json"
	[ "$(post comparisons "cmp-$1.h.json")" = 201 ] || { echo "comparison $1: $(cat "$T/body")" >&2; return 1; }
	js "$T/body" 'd["comparison"]'
}
tie() {
	printf '{"format": "perfd-job/1", "host": "box", "id": %d, "seq": 1, "sha256": "", "head": "t/%d", "commit": "%s", "base": "%s", "subject": "s", "state": "done", "detail": null, "created_at": "2026-12-01T03:00:00.000Z", "started_at": "2026-12-01T03:00:00.000Z", "finished_at": "2026-12-01T03:00:02.000Z"}\n' \
		"$1" "$1" "$4" "$3" >"job-$1.json"
	python3 "$TESTS_DIR/fixtures/canon.py" edit "job-$1.json" 'pass' >"job-$1.h.json"
	[ "$(post jobs "job-$1.h.json")" = 201 ] || { echo "job $1: $(cat "$T/body")" >&2; return 1; }
	cmp_post "$1" "$1" "$2" "$3" "$4"
}
LO=$(printf '1%.0s' $(seq 40))
CUL=$(printf 'c%.0s' $(seq 40)) CUL2=$(printf 'd%.0s' $(seq 40)) LONE=$(printf 'e%.0s' $(seq 40))
hi_of() { h=$(printf %x $(($1 + 1))); printf "$h%.0s" $(seq 40); }   # alert ID's hi
H1=$(tie "$c1" "$c1" "$LO" "$(hi_of 1)")
check "comparison $c1 pushed, with its job and builds" test -n "$H1"
H2=$(tie "$c2" "$c2" "$LO" "$CUL")
check "comparison $c2 pushed, with its job and builds" test -n "$H2"
"$PERFD" export --db "$A" "$c3" >"cmp$c3.json"
check "comparison $c3 pushed" eq 201 "$(post comparisons "cmp$c3.json")"
H3=$(js "$T/body" 'd["comparison"]')
# The other culprits' comparisons, and each other alert's own.
HD=$(tie 201 "$c2" "$LO" "$CUL2")
HE=$(tie 202 "$c2" "$LO" "$LONE")
for aid in 2 3 4 5 6 7; do
	check "alert $aid's comparison pushed, with its job and builds" test -n "$(tie $((100 + aid)) "$c1" "$LO" "$(hi_of $aid)")"
done

# alert_record ID SEQ BRANCH STATE BISECT [FINDING_SHA...]: an alert record
# of box, found by comparison c1 and confirmed by c2, of the range
# 1111..ID+1 (the digit ID + 1, 40 times), with a commit finding per
# FINDING_SHA, in alert-ID-SEQ.h.json. alert ...: the same, POSTed (its
# status printed; its answer in body).
alert_record() {
	python3 - "$c1" "$c2" "$CUL" "$@" >"alert-$1-$2.json" <<'PY'
import json, sys
c1, c2, cul, aid, seq, branch, state, bisect = sys.argv[1:9]
lo, hi = "1" * 40, "%x" % (int(aid) + 1) * 40
# Each finding's comparison is its own (tie above), the found-by one too.
mine = {cul: int(c2), "d" * 40: 201, "e" * 40: 202}
# The lone commit's finding carries a note of markup, longer than an issue
# shows.
notes = {"e" * 40: "repeated <b>|x</b> then " + "\u00e9" * 200}
f = [dict(what="commit", lo=lo, hi=sha, commits=1, gain=-0.0642, comparison=mine.get(sha, int(c2)),
     note=notes.get(sha)) for sha in sys.argv[9:] if sha]
found = int(c1) if aid == "1" else 100 + int(aid)
print(json.dumps(dict(format="perfd-alert/1", host="box", id=int(aid), seq=int(seq), sha256="",
    branch=branch, case="run", found_by="span", lo=lo, hi=hi, commits=4, direction="slower",
    gain=-0.0685, comparison=found, confirm=int(c2) if state != "confirming" else None,
    state=state, bisect=bisect, detail=None, created_at="2026-12-01T03:54:10.100Z",
    updated_at="2026-12-01T03:54:1%s.100Z" % seq, findings=f)))
PY
	python3 "$TESTS_DIR/fixtures/canon.py" edit "alert-$1-$2.json" 'pass' >"alert-$1-$2.h.json"
}
alert() { alert_record "$@" && post alerts "alert-$1-$2.h.json"; }

# ---- off by default ----
ctl POST pulls "[{\"number\": 9, \"author\": \"dave\", \"state\": \"closed\", \"merged\": true, \"commits\": [\"$CUL\", \"$CUL2\"]}]" >/dev/null
check "an alert raised on main, pushed" eq 201 "$(alert 1 1 main raised running "")"
HA1=$(js "$T/body" 'd["alert"]')
check "the hub polls the forge three times more" polled
check "  with alert_issues unset: no issue asked for" eq 0 "$(requests POST '/issues$')"
check "  and none there" eq 0 "$(state 'len(d["issues"])')"
check "  no culprit asked about" eq 0 "$(requests GET '/commits/.*/pulls$')"
stop_hub

# ---- on: one issue per raised alert of the default branch ----
hub_conf "alert_issues = yes
culprit_comments = yes
triage_allow = alice bob"
check "alert_issues, culprit_comments, triage_allow" run 0 "$PERFD" serve --config hub.conf --check
check "the hub starts again" start_hub
check "  the raised alert gets its issue" wait_for "the alert's issue" 30 has_issue "$HA1"
N1=$(issue_of "$HA1" | cut -d/ -f1)
check "  one" eq "$N1/1" "$(issue_of "$HA1")"
check "  stored with its number" eq "$N1|0|open" \
	"$(hsql "select number, unsure, state from alert_issues where repo = 'acme/engine' and alert_id = $HA1")"
check "  its title" eq "perfd alert $HA1: case run 6.850% slower on box (main)" \
	"$(state "[i['title'] for i in d['issues'] if i['number'] == $N1][0]")"
check "  names host, case, branch and gain" has issue.md "case run on host box became **6.850% slower** on branch main"
check "  and the range" has issue.md "in the 4 commits 111111111111..222222222222"
check "  links the finding comparison's receipt" has issue.md "[comparison $H1]($URL/static/comparison.html?id=$H1)"
check "  and the confirming one's" has issue.md "| confirmed by | [comparison $H2]($URL/static/comparison.html?id=$H2) |"
check "  its bisection and triage" has issue.md "| bisection | running |"
check "  links the alert at the hub" has issue.md "[the alert]($URL/api/v1/alerts/$HA1)"
check "  says who may triage it, and how" has issue.md "To triage it, alice or bob comments here with a first line of \`/perfd triage acknowledged\`"
check "  the hub's log says so" has "$T/hub.err" "alert $HA1: issue #$N1 created"

check "an alert raised on another branch" eq 201 "$(alert 2 2 dev raised none "")"
HA2=$(js "$T/body" 'd["alert"]')
check "an alert of main being confirmed" eq 201 "$(alert 3 3 main confirming none "")"
HA3=$(js "$T/body" 'd["alert"]')
check "the hub polls the forge three times more" polled
check "  neither gets an issue" eq "0/0 0/0" "$(issue_of "$HA2") $(issue_of "$HA3")"
check "  one issue in all" eq 1 "$(state 'len(d["issues"])')"

edits=$(requests PATCH "/issues/$N1\$")
check "the first alert's update: bisected, its culprit found" eq 201 "$(alert 1 4 main raised done "$CUL")"
check "  edits its issue" wait_for "the issue's body" 30 body_has "$HA1" "| bisection | done |"
check "  the same issue, no second" eq "$N1/1" "$(issue_of "$HA1")"
check "  by an edit" test "$(requests PATCH "/issues/$N1\$")" -gt "$edits"
check "  the finding listed with its receipt" has issue.md "| commit cccccccccccc | 1 | -6.420% | [comparison $H2]($URL/static/comparison.html?id=$H2) |"
check "  the hub's log says so" has "$T/hub.err" "alert $HA1: issue #$N1 edited"
culprit() { # the count of the hub's comments on pull request 9; the last into culprit.md
	ctl GET state >"$T/state.json"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); c = [c["body"] for c in d["comments"] if c["pr"] == 9 and c["user"]["login"] == "perfd-bot"]; open(sys.argv[2], "w").write(c[-1] if c else ""); print(len(c))' "$T/state.json" "$T/culprit.md"
}
commented() { [ "$(culprit)" = 1 ]; }
check "the culprit's pull request is commented on" wait_for "the culprit's comment" 30 commented
check "  naming the alert and linking it" has culprit.md "It is [perfd alert $HA1]($URL/api/v1/alerts/$HA1) at the hub, issue #$N1."
check "  and the commit, case, host, gain and receipt" has culprit.md "commit cccccccccccc of this pull request to have made case run on host box **6.420% slower** on branch main: [comparison $H2]($URL/static/comparison.html?id=$H2)"
check "  its marker first" eq "<!-- perfd:culprit $HA1 -->" "$(head -n 1 culprit.md)"
check "  the issue names the pull request" wait_for "the issue's body" 30 body_has "$HA1" "| [comparison $H2]($URL/static/comparison.html?id=$H2) | #9 |"
check "  the hub's log says so" has "$T/hub.err" "alert $HA1: culprit cccccccccccc: pull request #9 commented on"
check "the alert's next update: a second culprit of the same pull request, one of none" eq 201 \
	"$(alert 1 5 main raised done "$CUL" "$CUL2" "$LONE")"
check "  the issue lists them" wait_for "the issue's body" 30 body_has "$HA1" "| commit eeeeeeeeeeee | 1 |"
check "  the second culprit's pull request taken as commented" wait_for "the line in the hub's log" 30 grep -q "alert $HA1: culprit dddddddddddd: pull request #9 commented on for another culprit" "$T/hub.err"
check "  the lone commit of no pull request" wait_for "the line in the hub's log" 30 grep -q "alert $HA1: culprit eeeeeeeeeeee is of no pull request" "$T/hub.err"
check "  the issue names the second one's pull request" wait_for "the issue's body" 30 body_has "$HA1" "| commit dddddddddddd | 1 | -6.420% | [comparison $HD]($URL/static/comparison.html?id=$HD) | #9 | - |"
# 24 bytes of text, then 138 two-byte characters: 300 bytes, no character split.
check "  and the lone one's note, as text, cut where the hub has the rest" body_has "$HA1" \
	"| [comparison $HE]($URL/static/comparison.html?id=$HE) | - | repeated &lt;b&gt;\\|x&lt;/b&gt; then $(python3 -c 'print("\u00e9" * 138, end="")') ... (the rest at the hub) |"
check "  still one comment on the pull request" eq 1 "$(culprit)"
check "  each commit asked about once" eq "1 1 1" \
	"$(requests GET "/commits/$CUL/pulls\$") $(requests GET "/commits/$CUL2/pulls\$") $(requests GET "/commits/$LONE/pulls\$")"
check "  stored" eq "$CUL|9|0 $CUL2|9|0 $LONE|0|0" \
	"$(hsql "select group_concat(commit_oid || '|' || pr || '|' || unsure, ' ') from (select * from alert_culprits where alert_id = $HA1 order by commit_oid)")"
edits=$(requests PATCH '/issues/[0-9]+$')
check "the hub polls the forge three times more" polled
check "nothing changed, nothing sent" eq "$edits" "$(requests PATCH '/issues/[0-9]+$')"
check "  and nothing made" eq 1 "$(requests POST '/issues$')"

check "  nor asked again" eq 3 "$(requests GET '/commits/.*/pulls$')"
check "  and the pull request not commented on again" eq 1 "$(culprit)"

# ---- triage by a command on the issue ----
comment() { ctl POST comments "{\"issue\": $1, \"author\": \"$2\", \"body\": \"$3\"}" >/dev/null; }
outcomes() { hsql "select group_concat(login || ' ' || outcome, ', ') from (select * from alert_commands where alert_id = $HA1 order by comment_id)"; }
triage_of() { # the alert's triage, by whom and fixed by, as GET /api/v1/alerts/ID says
	curl -s "$URL/api/v1/alerts/$1" >"$T/alert.json"
	js "$T/alert.json" '"%s %s %s" % (d["triage"], d["triage_by"], d["fixed_by"])'
}
triage_is() { [ "$(triage_of "$1")" = "$2" ]; }
outcomes_are() { [ "$(outcomes)" = "$1" ]; }
comment "$N1" mallory "/perfd triage false-alarm"
comment "$N1" bob "/perfd triage maybe\\nit looks like noise"
comment "$N1" alice "LGTM, looking at it"
comment "$N1" alice "/perfd triage acknowledged\\nlooking at it"
check "commands on the issue: a listed maintainer's applied" wait_for "the alert's triage" 30 triage_is "$HA1" "acknowledged alice None"
check "  in order, each as it came" eq "mallory ignored, bob malformed, alice applied" "$(outcomes)"
check "  the one off the list said in the log" has "$T/hub.err" "alert $HA1: '/perfd triage false-alarm' by 'mallory' (issue #$N1) ignored: 'mallory' may not triage (triage_allow)"
check "  the malformed one said, ignored" has "$T/hub.err" "alert $HA1: '/perfd triage maybe' by 'bob' (issue #$N1) not understood, ignored: expected a state after /perfd triage"
check "  the issue shows the triage" wait_for "the issue's body" 30 body_has "$HA1" "| triage | acknowledged, by alice at 20"
check "  and what came of the commands read" has issue.md "- bob: /perfd triage maybe: malformed, expected a state after /perfd triage"
check "  not the one off the list" test "$(grep -c mallory issue.md)" = 0
comment "$N1" alice "/perfd triage fixed $H2"
check "fixed by a later comparison that says slower too: refused" wait_for "the commands' outcomes" 30 outcomes_are "mallory ignored, bob malformed, alice applied, alice refused"
check "  the triage kept" eq "acknowledged alice None" "$(triage_of "$HA1")"
check "  the issue says why" wait_for "the issue's body" 30 body_has "$HA1" "- alice: /perfd triage fixed $H2: refused, fixed\_by: comparison $H2 says slower; undoing a slower alert takes one that says faster"
check "  so does the log" has "$T/hub.err" "alert $HA1: '/perfd triage fixed $H2' by 'alice' (issue #$N1) refused: fixed_by: comparison $H2 says slower"
comment "$N1" bob "/perfd triage fixed $H3"
check "fixed by the later comparison that says faster" wait_for "the alert's triage" 30 triage_is "$HA1" "fixed bob $H3"
check "  the issue closed" wait_for "the issue's state" 30 is_state "$N1" closed
check "  and says so" body_has "$HA1" "| triage | fixed, by bob at"
check "  /metrics counts the commands" eq 200 "$(curl -s -o "$T/metrics" -w '%{http_code}' "$URL/metrics")"
check "  by outcome" eq 'perfd_alert_commands{outcome="applied"} 2|perfd_alert_commands{outcome="ignored"} 1|perfd_alert_commands{outcome="malformed"} 1|perfd_alert_commands{outcome="refused"} 1' \
	"$(grep '^perfd_alert_commands{' "$T/metrics" | paste -sd'|')"
comment "$N1" alice "/perfd triage new"
check "the hub polls the forge three times more" polled
check "a closed issue is read no more: a command there changes nothing" eq "fixed bob $H3" "$(triage_of "$HA1")"
check "  each comment taken once" eq 5 "$(hsql "select count(*) from alert_commands")"
check "a maintainer opens it again at the hub" eq 200 "$(triage "$HA1" '{"triage": "acknowledged"}')"
check "  the issue is opened again" wait_for "the issue's state" 30 is_state "$N1" open
comment "$N1" bob "/perfd triage acknowledged\\nwatching it"
check "  a command after the reopening is applied" wait_for "the alert's triage" 30 triage_is "$HA1" "acknowledged bob None"
check "  the one left while it was closed never is" eq "mallory ignored, bob malformed, alice applied, alice refused, bob applied, bob applied" "$(outcomes)"

check "the alert being confirmed, raised" eq 201 "$(alert 3 6 main raised none "")"
check "  gets its issue" wait_for "the alert's issue" 30 has_issue "$HA3"
N3=$(issue_of "$HA3" | cut -d/ -f1)
check "a maintainer marks it a false alarm at the hub" eq 200 "$(triage "$HA3" '{"triage": "false_alarm"}')"
check "  its issue is closed" wait_for "the issue's state" 30 is_state "$N3" closed
issue_of "$HA3" >/dev/null
check "  and says who triaged it" has issue.md "| triage | false_alarm, by carol at 20"
check "back to new at the hub" eq 200 "$(triage "$HA3" '{"triage": "new"}')"
check "  opens it again" wait_for "the issue's state" 30 is_state "$N3" open

# ---- the forge down, then up ----
# Its answer to an issue's create held 2 s (scaled): the hub's two tries
# (retries = 1) take 4 s at least before it logs their failure.
alert_record 4 7 main raised none ""
ctl POST faults "[{\"method\": \"POST\", \"path\": \"/issues\$\", \"status\": 503, \"times\": 1000, \"delay\": $(slow_s 2)},
	{\"method\": \"*\", \"path\": \"^/repos/\", \"status\": 503, \"times\": 1000}]" >/dev/null
check "the forge down: an alert is stored" eq 201 "$(post alerts alert-4-7.h.json)"
HA4=$(js "$T/body" 'd["alert"]')
check "  answered before the forge answered the hub: its issue's failure not logged yet" \
	test "$(grep -c "alert $HA4: issue:" "$T/hub.err")" = 0
check "  and served" eq 200 "$(curl -s -o /dev/null -w '%{http_code}' "$URL/api/v1/alerts/$HA4")"
check "  its issue not made, said in the log" wait_for "the line in the hub's log" 30 grep -q "alert $HA4: issue: .*tried again at the next poll" "$T/hub.err"
check "  none there" eq 0/0 "$(issue_of "$HA4")"
ctl DELETE faults >/dev/null
check "the forge back: the issue is opened" wait_for "the alert's issue" 30 has_issue "$HA4"
check "  once" eq 1 "$(issue_of "$HA4" | cut -d/ -f2)"

# ---- a create whose answer is lost ----
made=$(requests POST '/issues$')
ctl POST faults '[{"method": "POST", "path": "/issues$", "status": 502, "apply": true}]' >/dev/null
check "a create made, its answer lost (502)" eq 201 "$(alert 5 8 main raised none "")"
HA5=$(js "$T/body" 'd["alert"]')
check "  the issue is found, not made again" wait_for "the line in the hub's log" 30 grep -q "alert $HA5: issue #[0-9]* found" "$T/hub.err"
check "  one issue" eq 1 "$(issue_of "$HA5" | cut -d/ -f2)"
check "  one create sent" eq $((made + 1)) "$(requests POST '/issues$')"
check "  its number stored" eq "$(issue_of "$HA5" | cut -d/ -f1)|0" \
	"$(hsql "select number, unsure from alert_issues where alert_id = $HA5")"
ctl POST faults '[{"method": "POST", "path": "/issues$", "drop": true}]' >/dev/null
check "a create dropped before it was made" eq 201 "$(alert 6 9 main raised none "")"
HA6=$(js "$T/body" 'd["alert"]')
check "  is made later" wait_for "the alert's issue" 30 has_issue "$HA6"
check "  once" eq 1 "$(issue_of "$HA6" | cut -d/ -f2)"
check "  the hub's log said it was unknown" has "$T/hub.err" "alert $HA6: issue: POST /repos/acme/engine/issues: Server returned nothing"
# ---- a host's token cannot make the hub speak for what it cannot check ----
culprits=$(culprit)
issues=$(state 'len(d["issues"])')
# Each found by comparison c1 (from LO to alert 1's hi, case run) and
# naming culprit CUL by c2 (checked): eight name another hi than c1's, two
# another case.
alert 1 1 main raised done "$CUL" >/dev/null
for k in $(seq 20 29); do
	case $k in
	2[0-7]) edit="d['hi'] = 'a$k' * 13 + 'a'" ;;
	*) edit="d['case'] = 'other$k'" ;;
	esac
	python3 "$TESTS_DIR/fixtures/canon.py" edit alert-1-1.json "d['id'] = $k; $edit" >"invented-$k.json"
	check "invented alert $k: stored" eq 201 "$(post alerts "invented-$k.json")"
done
check "an alert after them, its comparison checked" eq 201 "$(alert 7 9 main raised none "")"
HA7=$(js "$T/body" 'd["alert"]')
check "  gets its issue" wait_for "the alert's issue" 30 has_issue "$HA7"
check "  the invented ones none: no commit of theirs is their comparison's" eq $((issues + 1)) "$(state 'len(d["issues"])')"
check "  and no culprit comment" eq "$culprits" "$(culprit)"
check "  nor a culprit asked about" eq 0 "$(hsql "select count(*) from alert_culprits c join alerts a on a.id = c.alert_id where a.origin_id between 20 and 29")"

check "every issue its own alert's" eq "$(hsql "select count(*) from alerts where state = 'raised' and branch = 'main' and origin_id < 20")" \
	"$(state 'len(d["issues"])')"
stop_hub

# ---- a host's actions on the forge, bounded per hour ----
hub_conf "alert_issues = yes
culprit_comments = yes
forge_actions_per_hour = 0"
check "forge_actions_per_hour takes 1 or more" run 2 "$PERFD" serve --config hub.conf --check
check "  said at its line" has "$T/err" "'forge_actions_per_hour': expected a whole number from 1 to 100000, not '0'"
hub_conf "alert_issues = yes
culprit_comments = yes
triage_allow = alice bob
forge_actions_per_hour = 1"
check "the hub starts with one action per host and hour" start_hub
issues=$(state 'len(d["issues"])')
check "two alerts more, each checked" test -n "$(tie 108 "$c1" "$LO" "$(hi_of 8)")$(tie 109 "$c1" "$LO" "$(hi_of 9)")"
check "  the first pushed" eq 201 "$(alert 8 9 main raised none "")"
HA8=$(js "$T/body" 'd["alert"]')
check "  gets its issue" wait_for "the alert's issue" 30 has_issue "$HA8"
check "  the second pushed" eq 201 "$(alert 9 9 main raised none "")"
HA9=$(js "$T/body" 'd["alert"]')
check "  the second's issue waits for the next hour" wait_for "the line in the hub's log" 30 grep -q "alert $HA9: issue: host 'box' has had its forge actions for this hour (forge_actions_per_hour)" "$T/hub.err"
check "  one issue made" eq $((issues + 1)) "$(state 'len(d["issues"])')"
curl -s "$URL/metrics" >"$T/metrics"
check "  /metrics counts box's action done" grep -qx 'perfd_forge_actions_total{host="box"} 1' "$T/metrics"
check "  and those refused" grep -qE '^perfd_forge_actions_refused_total\{host="box"\} [1-9]' "$T/metrics"

# ---- a pull head's status waits for its host's comparisons ----
"$PERFD" pair --json --db "$A" --host-name box --case run2 $SLOW "$PLANT" "$PLANT" >"$T/pair.json" 2>"$T/pair.err"
c4=$(js "$T/pair.json" 'd["comparison"]')
status_of() { # SHA: box's newest status of SHA, "state: description"
	state "''.join([s['state'] + ': ' + s['description'] for s in d['statuses'] if s['sha'] == '$1' and s['context'] == 'perfd/box'][-1:])"
}
status_is() { case "$(status_of "$1")" in "$2"*) return 0 ;; esac; return 1; }
HX=$(printf 'f0%.0s' $(seq 20)) HY=$(printf 'f1%.0s' $(seq 20))
python3 -c 'import json, sys; print(json.dumps([dict(number=n, author="alice", head_sha=h, head_ref="a-%d" % n, base_ref="main", base_sha=sys.argv[3]) for n, h in ((901, sys.argv[1]), (902, sys.argv[2]))]))' "$HX" "$HY" "$LO" >pulls.json
check "two open pull requests of alice" ctl POST pulls "$(cat pulls.json)"
# job ID HEAD SHA [EDIT]: box's job ID done, pushed (its status printed)
job() {
	printf '{"format": "perfd-job/1", "host": "box", "id": %d, "seq": 2, "sha256": "", "head": "%s", "commit": "%s", "base": "%s", "subject": "s", "state": "done", "detail": null, "created_at": "2026-12-01T03:00:00.000Z", "started_at": "2026-12-01T03:00:00.000Z", "finished_at": "2026-12-01T03:00:02.000Z"}\n' \
		"$1" "$2" "$3" "$LO" >"job-$1.json"
	python3 "$TESTS_DIR/fixtures/canon.py" edit "job-$1.json" "${4:-pass}" >"job-$1.h.json"
	post jobs "job-$1.h.json"
}
check "a pull head's job done, its record saying 2 comparisons" eq 201 "$(job 300 pull/901 "$HX" "d['comparisons'] = 2")"
check "  its status waits for them" wait_for "the head's status" 30 status_is "$HX" "pending: built; 0 of 2 comparisons in"
check "  the first comparison comes" test -n "$(cmp_post 301 300 "$c1" "$LO" "$HX")"
check "  still pending, one missing" wait_for "the head's status" 30 status_is "$HX" "pending: built; 1 of 2 comparisons in"
check "  the second comes" test -n "$(cmp_post 302 300 "$c4" "$LO" "$HX")"
check "  now counted: failure, both slower" wait_for "the head's status" 30 status_is "$HX" "failure: slower: run"
check "  stored with the job" eq 2 "$(hsql "select comparisons from jobs where host = 'box' and origin_id = 300")"
check "an older agent's job, no count in its record" eq 201 "$(job 310 pull/902 "$HY")"
check "  pending until one comparison is in" wait_for "the head's status" 30 status_is "$HY" "pending: built; no comparison in yet"
check "  it comes" test -n "$(cmp_post 311 310 "$c1" "$LO" "$HY")"
check "  then counted" wait_for "the head's status" 30 status_is "$HY" "failure: slower: run"
stop_hub
finish
