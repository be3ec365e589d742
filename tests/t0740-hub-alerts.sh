#!/bin/bash
# Alerts at the hub (docs/hub.md, "The alert record"; docs/api.md, "Alerts"):
# an agent with [history] and [hub] finds a planted 5% slowdown, confirms it
# and pushes the alert; the hub lists it with its comparisons mapped to its
# own ids; triage is refused without a token and with a host's, taken with
# a maintainer's; bad triage bodies, unknown states and ids change nothing;
# fixed needs a later comparison of the host and case in the other
# direction; the false-alarm share per host; an agent's later update
# changes the alert but not its triage, an older one is ignored; a
# malformed alert record gets 400 naming the member and stores nothing.
. "$(dirname "$0")/lib.sh"
need git sqlite3 curl

new_src
C0=$(timed_commit "$SRC" 1000 base)
C1=$(timed_commit "$SRC" 1050 "5% slower")

PORT=$(free_port)
HUB=$T/hub.db
URL=http://127.0.0.1:$PORT
section hub database="$HUB" listen="127.0.0.1:$PORT" hosts=box >hub.conf
TOK=$("$PERFD" token new box --config hub.conf 2>/dev/null)
MTOK=$("$PERFD" token new --maintainer alice --config hub.conf 2>/dev/null)
check "a host's token and a maintainer's" eq "64 64" "${#TOK} ${#MTOK}"
printf '%s\n' "$TOK" >token
chmod 600 token
printf '[host]\nname = box\n' >box.conf
cat >agent.conf <<CONF
$(agent_repo host="$T/box.conf")

$(section calibration runs=1 idle_budget_s=0)

$(section hub url="$URL/" token_file="$T/token")

$(history_suite)
CONF
"$PERFD" serve --config hub.conf 2>"$T/hub.err" &
hub=$!
kill_at_exit hub
for i in $(seq 100); do grep -q "serving http://" "$T/hub.err" && break; sleep 0.05; done
hsql() { sqlite3 "$HUB" "$1"; }
get() { curl -s -o "$T/body" -w '%{http_code}' "$URL$1"; }
# triage ID BODY [TOKEN]: the status of POST /api/v1/alerts/ID/triage.
triage() {
	curl -s -o "$T/body" -w '%{http_code}' -X POST ${3:+-H "Authorization: Bearer $3"} \
		-H 'Content-Type: application/json' --data-binary "$2" "$URL/api/v1/alerts/$1/triage"
}
postalert() {
	curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $TOK" \
		-H 'Content-Type: application/json' --data-binary "@$1" "$URL/api/v1/ingest/alerts"
}

# ---- the agent finds the slowdown and pushes its alert ----
check "the agent runs the history" run 0 "$PERFD" agent --config agent.conf --once
check "  its alert raised by its head job" eq "1|head|slower|raised" \
	"$(sql "select id, found_by, direction, state from alerts")"
check "  and nothing left to push" has out "push backlog 0"
check "  each update of it answered" eq "$(sql "select seq from alerts where id = 1")|201" \
	"$(sql "select seq, status from pushed_alerts where alert_id = 1")"
check "the hub holds it with its origin" eq "box|1|head|slower|raised|1|$C0|$C1|new" \
	"$(hsql "select host, origin_id, found_by, direction, state, commits, lo_oid, hi_oid, triage from alerts")"
AC=$(sql "select comparison_id from alerts where id = 1")
HC=$(hsql "select comparison_id from comparison_origins where host = 'box' and origin_id = $AC")
check "  its comparison mapped to the hub's" eq "$HC" "$(hsql "select comparison_id from alerts")"
HCONF=$(hsql "select o.comparison_id from comparison_origins o where o.host = 'box' and o.origin_id = $(sql "select confirm_id from alerts where id = 1")")
check "  and its confirming one" eq "$HCONF" "$(hsql "select confirm_id from alerts")"
check "  its finding, the commit" eq "commit|$C1|1" "$(hsql "select what, hi_oid, commits from alert_findings")"
HA=$(hsql "select id from alerts")

check "GET /api/v1/alerts lists it" eq 200 "$(get /api/v1/alerts)"
check "  with its host, case, range, gain, state and triage" eq "box run $C0 $C1 slower raised new" \
	"$(js "$T/body" '" ".join(str(d["alerts"][0][k]) for k in ("host","case","lo","hi","direction","state","triage"))')"
check "  its gain near -5%" eq -0.05 "$(js "$T/body" '"%.2f" % d["alerts"][0]["gain"]')"
check "filtered by host, state and triage" eq 200 "$(get "/api/v1/alerts?host=box&state=raised&triage=new&case=run")"
check "  still it" eq 1 "$(js "$T/body" 'len(d["alerts"])')"
check "a filter that matches none" eq 200 "$(get "/api/v1/alerts?host=other")"
check "  lists none" eq 0 "$(js "$T/body" 'len(d["alerts"])')"
check "an unknown state filter: 400" eq 400 "$(get "/api/v1/alerts?state=open")"
check "  named" has "$T/body" "state: expected confirming, raised or dismissed"
check "a limit over its bound: 400" eq 400 "$(get "/api/v1/alerts?limit=100000")"
check "GET /api/v1/alerts/ID" eq 200 "$(get /api/v1/alerts/$HA)"
check "  links its comparisons" eq "/api/v1/comparisons/$HC /api/v1/comparisons/$HCONF" \
	"$(js "$T/body" 'd["links"]["comparison"] + " " + d["links"]["confirm"]')"
check "  and its finding's" eq "/api/v1/comparisons/$HCONF" "$(js "$T/body" 'd["findings"][0]["link"]')"
check "an unknown alert: 404" eq 404 "$(get /api/v1/alerts/999)"

# ---- triage: who may, and what ----
check "triage without a token: 401" eq 401 "$(triage "$HA" '{"triage": "acknowledged"}')"
check "triage with a host's token: 403" eq 403 "$(triage "$HA" '{"triage": "acknowledged"}' "$TOK")"
check "  saying a maintainer's is needed" has "$T/body" "an alert's triage takes a maintainer's"
check "  nothing changed" eq "new|" "$(hsql "select triage, coalesce(triage_by, '') from alerts")"
check "bad JSON: 400" eq 400 "$(triage "$HA" '{"triage": ' "$MTOK")"
check "  named" has "$T/body" "malformed JSON"
check "an unknown state: 400" eq 400 "$(triage "$HA" '{"triage": "wontfix"}' "$MTOK")"
check "  naming the states" has "$T/body" "triage: expected new, acknowledged, fixed or false_alarm"
check "an unknown member: 400" eq 400 "$(triage "$HA" '{"triage": "new", "by": "x"}' "$MTOK")"
check "  named" has "$T/body" "unknown member 'by'"
check "an unknown alert: 404" eq 404 "$(triage 999 '{"triage": "acknowledged"}' "$MTOK")"
check "an id that is not one: 400" eq 400 "$(triage x1 '{"triage": "acknowledged"}' "$MTOK")"
check "  nothing changed" eq "new|" "$(hsql "select triage, coalesce(triage_by, '') from alerts")"
check "a maintainer acknowledges it: 200" eq 200 "$(triage "$HA" '{"triage": "acknowledged"}' "$MTOK")"
check "  stored with who and when" eq "acknowledged|alice|1" \
	"$(hsql "select triage, triage_by, triage_at like '20%Z' from alerts")"
check "fixed without fixed_by: 422" eq 422 "$(triage "$HA" '{"triage": "fixed"}' "$MTOK")"
check "  named" has "$T/body" "fixed_by: an alert marked fixed names the later comparison"
check "fixed by its own comparison (not later): 422" eq 422 \
	"$(triage "$HA" "{\"triage\": \"fixed\", \"fixed_by\": $HC}" "$MTOK")"
check "  named" has "$T/body" "not after the alert's comparison"
check "fixed by its confirmation (later, the same direction): 422" eq 422 \
	"$(triage "$HA" "{\"triage\": \"fixed\", \"fixed_by\": $HCONF}" "$MTOK")"
check "  named" has "$T/body" "says slower; undoing a slower alert takes one that says faster"
check "fixed by no comparison: 422" eq 422 "$(triage "$HA" '{"triage": "fixed", "fixed_by": 99999}' "$MTOK")"
check "  still acknowledged" eq "acknowledged|" "$(hsql "select triage, coalesce(fixed_by, '') from alerts")"

# ---- the change undone by a later commit ----
C2=$(timed_commit "$SRC" 1000 "back to before")
check "the agent runs the commit that undoes it" run 0 "$PERFD" agent --config agent.conf --once
check "  its head job found it faster: a second alert" eq "2|head|faster|raised" \
	"$(sql "select id, found_by, direction, state from alerts where id = 2")"
HB=$(hsql "select id from alerts where origin_id = 2")
HF=$(hsql "select comparison_id from alerts where id = $HB")
check "fixed by that later, faster comparison: 200" eq 200 \
	"$(triage "$HA" "{\"triage\": \"fixed\", \"fixed_by\": $HF}" "$MTOK")"
check "  stored" eq "fixed|$HF|alice" "$(hsql "select triage, fixed_by, triage_by from alerts where id = $HA")"
check "  and linked" eq 200 "$(get /api/v1/alerts/$HA)"
check "  as its fix" eq "/api/v1/comparisons/$HF" "$(js "$T/body" 'd["links"]["fixed_by"]')"
check "a state other than fixed takes no fixed_by: 422" eq 422 \
	"$(triage "$HB" "{\"triage\": \"false_alarm\", \"fixed_by\": $HF}" "$MTOK")"
check "the second alert marked a false alarm" eq 200 "$(triage "$HB" '{"triage": "false_alarm"}' "$MTOK")"
check "the false-alarm share per host in the API" eq 200 "$(get /api/v1/alerts)"
check "  2 raised, 2 triaged, 1 false alarm: 0.5" eq '{"host": "box", "raised": 2, "triaged": 2, "false_alarms": 1, "false_alarm_share": 0.5}' \
	"$(js "$T/body" 'd["hosts"][0]')"
check "filtered by triage" eq 200 "$(get "/api/v1/alerts?triage=false_alarm")"
check "  the false alarm alone" eq "$HB" "$(js "$T/body" '" ".join(str(a["id"]) for a in d["alerts"])')"

# ---- an agent's update never changes the triage; an older one is ignored ----
sql "update alerts set detail = 'looked at again', seq = seq + 100 where id = 1"
check "the agent pushes its alert's newer update" run 0 "$PERFD" agent --config agent.conf --once
check "  the hub takes its detail and seq" eq "looked at again|$(sql "select seq from alerts where id = 1")" \
	"$(hsql "select detail, seq from alerts where id = $HA")"
check "  its triage kept" eq "fixed|alice|$HF" "$(hsql "select triage, triage_by, fixed_by from alerts where id = $HA")"

# A record built as the agent would: the alert as its database holds it.
python3 - "$DB" >alert1.json <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
r = db.execute("select id, seq, branch, case_name, found_by, lo_oid, hi_oid, commits, direction,"
               " gain, comparison_id, confirm_id, state, bisect, detail, created_at, updated_at"
               " from alerts where id = 1").fetchone()
f = [dict(what=w, lo=lo, hi=hi, commits=n, gain=g, comparison=c, note=note) for w, lo, hi, n, g, c, note in
     db.execute("select what, lo_oid, hi_oid, commits, gain, comparison_id, note from alert_findings"
                " where alert_id = 1 order by idx")]
k = ("id", "seq", "branch", "case", "found_by", "lo", "hi", "commits", "direction", "gain",
     "comparison", "confirm", "state", "bisect", "detail", "created_at", "updated_at")
d = dict(zip(k, r), format="perfd-alert/1", host="box", sha256="", findings=f)
print(json.dumps(d))
PY
rehash() { python3 "$TESTS_DIR/fixtures/canon.py" edit "$1" "$2"; }
rehash alert1.json 'pass' >same.json
check "the same update sent again: 200, nothing stored" eq 200 "$(postalert same.json)"
check "  said so" eq false "$(js "$T/body" 'd["stored"]')"
rehash alert1.json 'd["seq"] = 1; d["detail"] = "old news"' >stale.json
check "an older update: 200, ignored as stale" eq 200 "$(postalert stale.json)"
check "  the detail kept" eq "looked at again" "$(hsql "select detail from alerts where id = $HA")"
rehash alert1.json 'd["detail"] = "other"' >other.json
check "the seq held with other content: 409" eq 409 "$(postalert other.json)"

# ---- malformed records: 400 naming the member, nothing stored ----
before=$(hsql "select count(*) || ' ' || max(seq) || ' ' || (select count(*) from alert_findings) from alerts")
# malformed NAME EDIT WHAT MESSAGE: alert1.json as alert 77 at seq 999,
# changed by EDIT, is refused with 400, the answer naming MESSAGE.
malformed() {
	rehash alert1.json "d[\"id\"] = 77; d[\"seq\"] = 999; $2" >"$1.json"
	check "$3: 400" eq 400 "$(postalert "$1.json")"
	check "  named" has "$T/body" "$4"
}
malformed missing 'del d["direction"]' "a member missing" "direction: missing"
malformed extra 'd["colour"] = "red"' "an unknown member" "unknown member 'colour'"
malformed zero 'd["findings"][0]["commits"] = 0' "a finding's commits out of bounds" \
	"findings[0].commits: expected a whole number from 1"
malformed state 'd["state"] = "open"' "an unknown state" "state: expected confirming, raised or dismissed"
malformed many 'd["findings"] = d["findings"] * 1001' "findings over their bound" \
	"findings: expected a list of at most 1000 entries"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["id"]=77; print(json.dumps(d))' same.json >badsha.json
check "a sha256 not of its canonical form: 400" eq 400 "$(postalert badsha.json)"
rehash alert1.json 'd["id"] = 79; d["seq"] = 999' >samerange.json
check "another alert id of the same range: 409" eq 409 "$(postalert samerange.json)"
check "  named" has "$T/body" "host 'box' has another alert (not id 79) of main, case 'run'"
rehash alert1.json 'd["id"] = 78; d["comparison"] = 99999' >nocmp.json
check "a comparison not at the hub: 422" eq 422 "$(postalert nocmp.json)"
check "  named" has "$T/body" "comparison: comparison 99999 of host 'box' is not at this hub: send it first"
check "  nothing stored by any of them" eq "$before" \
	"$(hsql "select count(*) || ' ' || max(seq) || ' ' || (select count(*) from alert_findings) from alerts")"
check "a maintainer's token does not push alerts: 403" eq 403 \
	"$(curl -s -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $MTOK" --data-binary @same.json "$URL/api/v1/ingest/alerts")"

# ---- perfd serve --db on the agent's own database ----
APORT=$(free_port)
"$PERFD" serve --db "$DB" --listen "127.0.0.1:$APORT" 2>"$T/agent-serve.err" &
aserve=$!
for i in $(seq 100); do grep -q "serving http://" "$T/agent-serve.err" && break; sleep 0.05; done
check "serve --db on the agent's database lists its alerts" eq 200 \
	"$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$APORT/api/v1/alerts?host=box")"
check "  named by its host, triage untouched there" eq "2 box new|1 box new" \
	"$(js "$T/body" '"|".join("%d %s %s" % (a["id"], a["host"], a["triage"]) for a in d["alerts"])')"
check "  and refuses a triage" eq 405 \
	"$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $MTOK" --data-binary '{"triage":"new"}' "http://127.0.0.1:$APORT/api/v1/alerts/1/triage")"
kill $aserve; wait $aserve 2>/dev/null

kill $hub; wait $hub 2>/dev/null
[ "$fails" -eq 0 ]
