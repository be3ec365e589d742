#!/bin/bash
# The hub accepts writes (docs/hub.md): its configuration and --check, one
# clear line per mistake with file:line, plain HTTP refused off loopback;
# tokens made, listed and revoked; comparisons made by perfd pair in two
# agents' databases, exported with perfd export and POSTed: stored once with
# their calibration mapped to the hub's rows, a retry stores nothing, a
# changed gain is refused naming the figure, the same id with other content
# is a conflict, another host's token, a maintainer's, no token, a bad one,
# malformed, unknown, mistyped and missing members, a wrong sha256, an
# oversize body, a comparison not done: each refused with nothing stored;
# the stored rows are the agent's, byte for byte, and perfd verify passes
# on them. Then the same over HTTPS with a self-signed certificate.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"
command -v curl >/dev/null || { echo "curl missing: skipped"; exit 77; }

# ---- two agents' databases ----
A=$T/lavapipe.db
M=$T/m1.db
B60="--old-arg --old --old-arg 4392,4421,4113 --new-arg --new --new-arg 4362,4081,4218"
M1="--old-arg --old --old-arg 2089,2093,2103 --new-arg --new --new-arg 1955,1965,1951"
pair() { "$PERFD" pair --json "$@" >"$T/pair.json" 2>"$T/pair.err"; js "$T/pair.json" 'd["comparison"]'; }
a1=$(pair --db "$A" --host-name lavapipe --max-pairs 3 "$PLANT" "$PLANT" -- --old 100,101,99 --new 100,101,99)
check "an A/A on lavapipe" eq aa "$(js "$T/pair.json" 'd["kind"]')"
a2=$(pair --db "$A" --host-name lavapipe --max-pairs 3 $B60 "$PLANT" "$PLANT" -- --digest c4759069c154 --valid)
a3=$(pair --db "$A" --host-name lavapipe $M1 "$PLANT" "$PLANT")
check "lavapipe's third comparison is faster after its stages" eq faster "$(js "$T/pair.json" 'd["verdict"]')"
"$PERFD" pair --db "$A" --host-name lavapipe --warmup 0 "$PLANT" "$PLANT" -- --metric ops_per_s >/dev/null 2>&1
a4=$(sqlite3 "$A" "select max(id) from comparisons")
check "a fourth, abandoned (a rate without its direction)" eq abandoned "$(sqlite3 "$A" "select state from comparisons where id = $a4")"
a5=$(pair --db "$A" --host-name lavapipe --warmup 0 --pairs 1 --max-pairs 1 "$PLANT" "$PLANT" -- --junk)
m1=$(pair --db "$M" --host-name m1 $M1 --max-pairs 3 "$PLANT" "$PLANT")
check "lavapipe's and m1's ids" eq "1 2 3 4 5 1" "$a1 $a2 $a3 $a4 $a5 $m1"
# The agent's calibration (perfd pair sets none): the A/A calibrates the
# B60 comparison. With 3 gains, under the calibrated test's 12, its stored
# figures stay the sign test's, which perfd verify confirms.
sqlite3 "$A" "update comparisons set calibration = '[$a1]' where id = $a2"
# A time budget (a case's or host's time_budget_s) set the third's max_pairs.
sqlite3 "$A" "update comparisons set time_budget_s = 60 where id = $a3"
check "the agent's rows verify" run 0 "$PERFD" verify --db "$A"

# ---- export ----
exp() { "$PERFD" export --db "$@"; }
exp "$A" "$a1" >a1.json && exp "$A" "$a2" >a2.json && exp "$A" --output "$a3" >a3.json &&
	exp "$A" "$a4" >a4.json && exp "$A" --output "$a5" >a5.json && exp "$M" "$m1" >m1.json
check "perfd export prints one line" eq 1 "$(wc -l <a2.json)"
check "a record is the format" eq perfd-comparison/2 "$(js a2.json 'd["format"]')"
check "with its host and id" eq "lavapipe 2" "$(js a2.json 'd["host"]') $(js a2.json 'd["id"]')"
check "and its calibration as the host numbers it" eq "[$a1]" "$(js a2.json 'd["calibration"]')"
check "every process" eq "$(sqlite3 "$A" "select count(*) from processes where comparison_id = $a2")" "$(js a2.json 'len(d["processes"])')"
check "--output carries captured output" has a3.json '"output":{"stderr":'
check "a budgeted comparison's record carries its budget" eq "60.0 False" "$(js a3.json 'd["settings"]["time_budget_s"]') $(js a2.json 'str("time_budget_s" in d["settings"])')"
check "export of no comparison" run 2 "$PERFD" export --db "$A" 99
check "  says so" has "$T/err" "no comparison 99"

# tests/fixtures/canon.py: the canonical form as docs/hub.md defines it,
# written without jansson; rehash FILE EXPR edits a record and hashes it anew.
check "the documented canonical form gives the record's sha256" eq "$(js a3.json 'd["sha256"]')" "$(python3 "$TESTS_DIR/fixtures/canon.py" sha a3.json)"
check "  and export prints the canonical form of the whole record" eq "$(cat a2.json)" "$(python3 "$TESTS_DIR/fixtures/canon.py" form a2.json)"
rehash() { python3 "$TESTS_DIR/fixtures/canon.py" edit "$1" "$2"; }

# ---- the hub's configuration ----
cat >hub.conf <<CONF
[hub]
database = $T/hub.db
listen = 127.0.0.1:0
hosts = lavapipe m1
CONF
check "serve --config --check" run 0 "$PERFD" serve --config hub.conf --check
check "  says so" has "$T/out" "configuration OK"
cat >bad.conf <<CONF
[hub]
listen = 0.0.0.0:0
hosts = lavapipe bad/name lavapipe
colour = blue

[agent]
database = x.db
CONF
check "mistakes refused" run 2 "$PERFD" serve --config bad.conf --check
check "  plain HTTP off loopback, at its line" has "$T/err" "bad.conf:2: 'listen': 0.0.0.0:0 is not a loopback address"
check "  with the way out" has "$T/err" "'allow_plain_http = yes'"
check "  a host's name" has "$T/err" "bad.conf:3: 'hosts': expected a host's name (1 to 63 letters, digits, '.', '_' or '-'), not 'bad/name'"
check "  a host twice" has "$T/err" "bad.conf:3: 'hosts': expected each once, not 'lavapipe' twice"
check "  an unknown key" has "$T/err" "bad.conf:4: unknown key 'colour' in [hub]"
check "  an unknown section" has "$T/err" "bad.conf:6: unknown section [agent]"
check "  each once, counted" has "$T/err" "5 errors in 'bad.conf'"
check "  the key under it is not reported again" eq 5 "$(grep -c '^bad.conf:' "$T/err")"
check "serve refuses it too, before listening" run 2 "$PERFD" serve --config bad.conf
check "  with the same line" has "$T/err" "bad.conf:2: 'listen'"
printf '[hub]\nlisten = 0.0.0.0:0\nallow_plain_http = yes\n' >plain.conf
check "allow_plain_http = yes lets it" run 0 "$PERFD" serve --config plain.conf --check
printf '[hub]\nlisten = [::1]:0\n' >v6.conf
check "[::1] is loopback" run 0 "$PERFD" serve --config v6.conf --check
printf '[hub]\ntls_cert = %s/nothing.pem\n' "$T" >tls-half.conf
check "a certificate without its key" run 2 "$PERFD" serve --config tls-half.conf --check
check "  named at its line" has "$T/err" "tls-half.conf:2: 'tls_cert' needs 'tls_key' too"
printf '[hub]\ntls_cert = %s/nothing.pem\ntls_key = %s/hub.conf\n' "$T" "$T" >tls-bad.conf
check "unreadable and non-PEM files" run 2 "$PERFD" serve --config tls-bad.conf --check
check "  the missing one" has "$T/err" "tls-bad.conf:2: 'tls_cert': '$T/nothing.pem': No such file"
check "  the one that is not PEM" has "$T/err" "tls-bad.conf:3: 'tls_key': expected a file of PEM text (-----BEGIN ...), not '$T/hub.conf'"
check "--config with --db is a usage error" run 2 "$PERFD" serve --config hub.conf --db x.db

# ---- tokens ----
check "a token for a host the hub does not accept" run 2 "$PERFD" token new gfx1201 --config hub.conf
check "  refused, naming it" has "$T/err" "host 'gfx1201' is not among the hosts"
check "token new lavapipe" run 0 "$PERFD" token new lavapipe --config hub.conf
TOK=$(cat "$T/out")
check "  prints 64 hex digits" eq 64 "$(printf %s "$TOK" | tr -dc 0-9a-f | wc -c)"
check "  and only its sha256 is stored" eq "$(printf %s "$TOK" | sha256sum | cut -d' ' -f1)" "$(sqlite3 hub.db "select sha256 from tokens where name = 'lavapipe'")"
check "  the token itself nowhere in the database" eq 0 "$(grep -c "$TOK" hub.db)"
check "  the hub's database is its owner's alone" eq 600 "$(stat -c %a hub.db)"
TOKM=$("$PERFD" token new m1 --config hub.conf 2>/dev/null)
TOKX=$("$PERFD" token new --maintainer alice --config hub.conf 2>/dev/null)
check "two tokens are never the same" test "$TOK" != "$TOKM"
check "token list" run 0 "$PERFD" token list --config hub.conf
check "  lists the maintainer's" has "$T/out" "maintainer alice"
check "  by hash, not by token" eq 0 "$(grep -c "$TOK" "$T/out")"
check "the hub's database is at schema 23" eq 23 "$(sqlite3 hub.db 'pragma user_version')"

# ---- the hub ----
"$PERFD" serve --config hub.conf 2>"$T/hub.err" &
hub=$!
wait_for "the hub's line 'serving'" 10 grep -q "serving http://" "$T/hub.err"
URL=$(sed -n 's|^perfd: serving \(http://127.0.0.1:[0-9]*\)/$|\1|p' "$T/hub.err" | head -n 1)
check "the hub serves on loopback" test -n "$URL"
ING=$URL/api/v1/ingest/comparisons
# post FILE [CURL ARGS]: the answer in $T/body, headers in $T/hdr; prints the status.
post() { f=$1; shift; curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$f" "$@" "$ING"; }
auth() { echo "Authorization: Bearer $1"; }
rows() { sqlite3 hub.db "select (select count(*) from comparisons) || ' ' || (select count(*) from processes) || ' ' || (select count(*) from comparison_origins)"; }

check "no token: 401" eq 401 "$(post a1.json)"
check "  asking for one" has "$T/hdr" 'WWW-Authenticate: Bearer realm="perfd"'
check "  in JSON" has "$T/body" '"error":"no token'
check "an unknown token: 401" eq 401 "$(post a1.json -H "$(auth "$(printf %064d 0)")")"
check "  said" has "$T/body" "not one this hub issued"
check "a malformed token: 401" eq 401 "$(post a1.json -H "Authorization: Bearer x")"
check "another scheme: 401" eq 401 "$(post a1.json -H "Authorization: Basic $TOK")"
check "a maintainer's token: 403" eq 403 "$(post a1.json -H "$(auth "$TOKX")")"
check "m1's token, lavapipe's record: 403" eq 403 "$(post a1.json -H "$(auth "$TOKM")")"
check "  naming both" has "$T/body" "the record is of host 'lavapipe', and the token is host 'm1''s"
check "GET on the endpoint: 405" eq 405 "$(curl -s -o /dev/null -D "$T/hdr" -w '%{http_code}' "$ING")"
check "  Allow: POST" has "$T/hdr" "Allow: POST"
check "nothing stored yet" eq "0 0 0" "$(rows)"

check "m1's comparison: 201" eq 201 "$(post m1.json -H "$(auth "$TOKM")")"
check "  the hub's id" eq 1 "$(js "$T/body" 'd["comparison"]')"
check "  stored" eq true "$(js "$T/body" 'd["stored"]')"
check "the B60 comparison before its calibration: 422" eq 422 "$(post a2.json -H "$(auth "$TOK")")"
check "  naming the missing one" has "$T/body" "calibration: comparison $a1 of host 'lavapipe' is not at this hub: send it first"
check "the A/A: 201" eq 201 "$(post a1.json -H "$(auth "$TOK")")"
h1=$(js "$T/body" 'd["comparison"]')
check "  as the hub's 2" eq 2 "$h1"
check "the B60 comparison now: 201" eq 201 "$(post a2.json -H "$(auth "$TOK")")"
h2=$(js "$T/body" 'd["comparison"]')
check "  its calibration is the hub's row of the A/A" eq "[$h1]" "$(sqlite3 hub.db "select calibration from comparisons where id = $h2")"
check "  its origin recorded" eq "lavapipe|$a2|$(js a2.json 'd["sha256"]')" "$(sqlite3 hub.db "select host, origin_id, sha256 from comparison_origins where comparison_id = $h2")"
before=$(rows)
check "the same record again: 200" eq 200 "$(post a2.json -H "$(auth "$TOK")")"
check "  the same id" eq "$h2" "$(js "$T/body" 'd["comparison"]')"
check "  stored nothing" eq false "$(js "$T/body" 'd["stored"]')"
check "  nothing new in the tables" eq "$before" "$(rows)"
# The same record with other blanks and key order is the same record.
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), indent=2, sort_keys=False))' a2.json >a2-pretty.json
check "the same record, pretty: 200" eq 200 "$(post a2-pretty.json -H "$(auth "$TOK")")"

# A changed gain, the record otherwise sound (its sha256 recomputed).
rehash a3.json 'd["summary"]["gain"]["median"] += 0.01' >a3-gain.json
check "a changed gain: 422" eq 422 "$(post a3-gain.json -H "$(auth "$TOK")")"
check "  naming the figure" has "$T/body" "figures differ from the rule's: gain.median"
check "  with both values" eq 1 "$(js "$T/body" 'sum(m.startswith("gain.median: sent ") and ", recomputed " in m for m in d["mismatches"])')"
rehash a3.json 'd["processes"][3]["metrics"]["run2_ms"] = 1500.0' >a3-proc.json
check "a process's value changed under its figures: 422" eq 422 "$(post a3-proc.json -H "$(auth "$TOK")")"
check "  naming what it moves" has "$T/body" "pair 1 gain"
rehash a3.json 'd["rule"] = "pairs-median/9"' >a3-rule.json
check "a rule this hub does not know: 422" eq 422 "$(post a3-rule.json -H "$(auth "$TOK")")"
check "  refused by name, never judged by the newest" has "$T/body" "rule 'pairs-median/9' is unknown to this perfd, which knows pairs-median/1"
check "  nothing stored" eq "$before" "$(rows)"
for b in 0 -1 '"60"' 1e9; do
	rehash a3.json "d[\"settings\"][\"time_budget_s\"] = $b" >a3-budget.json
	check "a time budget of $b: 400" eq 400 "$(post a3-budget.json -H "$(auth "$TOK")")"
	check "  naming it" has "$T/body" "settings.time_budget_s: expected a number of seconds above 0 and at most 604800"
done
check "lavapipe's faster comparison: 201" eq 201 "$(post a3.json -H "$(auth "$TOK")")"
h3=$(js "$T/body" 'd["comparison"]')
rehash a3.json 'd["processes"][0]["wall_ms"] += 1' >a3-other.json
check "its id again with other content: 409" eq 409 "$(post a3-other.json -H "$(auth "$TOK")")"
check "  said" has "$T/body" "is here already (as $h3"
check "  and logged" has "$T/hub.err" "ingest: comparison $a3 of host 'lavapipe' is here already"
check "a record of $(($(wc -c <a5.json) / 1000)) kB (1 MiB of output a process): 201" eq 201 "$(post a5.json -H "$(auth "$TOK")")"
h5=$(js "$T/body" 'd["comparison"]')
check "an abandoned comparison: 422" eq 422 "$(post a4.json -H "$(auth "$TOK")")"
check "  only a done one is accepted" has "$T/body" "is abandoned: only a done comparison is accepted"

# ---- 400 and 413: nothing read into the tables ----
after=$(rows)
head -c 1000 a1.json >cut.json
check "malformed JSON: 400" eq 400 "$(post cut.json -H "$(auth "$TOK")")"
check "  said where" has "$T/body" "malformed JSON: line 1"
# malformed NAME EDIT WHAT: a1.json changed by EDIT, as NAME.json, is
# refused with 400.
malformed() {
	rehash a1.json "$2" >"$1.json"
	check "$3: 400" eq 400 "$(post "$1.json" -H "$(auth "$TOK")")"
}
malformed unknown 'd["colour"] = "blue"' "an unknown member"
check "  named" has "$T/body" "the record: unknown member 'colour'"
malformed type 'd["processes"][2]["seq"] = "3"' "a wrong type"
check "  named with its place" has "$T/body" "processes[2].seq: expected a whole number"
malformed missing 'del d["summary"]["verdict"]' "a missing member"
check "  named" has "$T/body" "summary.verdict: missing"
malformed mtype 'd["processes"][1]["metrics"]["extra"] = "x"' "a metric that is not a number"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["processes"][0]["wall_ms"] += 1; print(json.dumps(d))' a1.json >nosha.json
check "a changed value under the old sha256: 400" eq 400 "$(post nosha.json -H "$(auth "$TOK")")"
check "  the canonical form's hash named" has "$T/body" "its canonical form (docs/hub.md) hashes to"
head -c $((8 * 1024 * 1024 + 1)) /dev/zero >big.json
check "a body over 8 MiB: 413" eq 413 "$(post big.json -H "$(auth "$TOK")")"
check "  with the bound" has "$T/body" "over this endpoint's bound of 8388608 bytes"
check "a body without Content-Length: 411" eq 411 "$(post a1.json -H "$(auth "$TOK")" -H 'Transfer-Encoding: chunked')"
# raw PATH HEADERS...: one POST (or $RAW_METHOD) of a1.json as sent, LEN in
# a header its length; the status line's code printed.
raw() {
	python3 - "${URL#http://}" "${RAW_METHOD:-POST}" "$@" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)), 5)
body = open("a1.json", "rb").read()
head = "%s %s HTTP/1.1\r\nHost: hub\r\n" % (sys.argv[2], sys.argv[3]) + "".join(h.replace("LEN", str(len(body))) + "\r\n" for h in sys.argv[4:]) + "\r\n"
s.sendall(head.encode() + body)
answer = s.recv(4096)
open("raw.out", "wb").write(answer)
print(answer.split(b" ")[1].decode())
PY
}
check "two Content-Length headers, the same: 400" eq 400 "$(raw /api/v1/ingest/comparisons "Authorization: Bearer $TOK" "Content-Length: LEN" "Content-Length: LEN")"
check "two that differ: 400" eq 400 "$(raw /api/v1/ingest/comparisons "Authorization: Bearer $TOK" "Content-Length: LEN" "Content-length: 5")"
check "a blank before a header's colon: 400" eq 400 "$(raw /api/v1/ingest/comparisons "Authorization: Bearer $TOK" "Content-Length : LEN")"
check "  said" has raw.out "a header's name holds a blank"
check "a GET with one: 400, its body not read as a request" eq 400 "$(RAW_METHOD=GET raw /api/v1/comparisons "Content-Length : LEN")"
check "nothing stored by any of them" eq "$after" "$(rows)"

# ---- what the hub stored ----
check "perfd verify --db hub.db" run 0 "$PERFD" verify --db hub.db
check "  every comparison" has "$T/out" "5 comparisons verified, 0 with differences"
same_rows() {  # same_rows HUBID AGENTDB ID [output]: the raw rows, less ids
	for q in "select created_at, finished_at, state, rule, case_name, metric_requested, metric, host, fingerprint, pairs, warmup, timeout_s, min_effect, noise, args, verdict, gain_median, gain_min, gain_max, old_median, old_min, old_max, old_spread, new_median, new_min, new_max, new_spread, digests_equal, kind, better, max_pairs, old_manifest, new_manifest, pairs_run from comparisons where id = %s" \
		"select seq, arm, pair, warmup, state, started_at, ended_at, exit_code, signal, timed_out, spawn_error, wall_ms, user_ms, sys_ms, maxrss_kb, cpus, digest, record_valid, stdout_bytes, stderr_bytes, fault, fault_watch, valid, invalid_reason from processes where comparison_id = %s order by seq" \
		"select p.seq, m.name, m.value from metrics m join processes p on p.id = m.process_id where p.comparison_id = %s order by 1, 2" \
		"select p.seq, l.idx, l.kind, l.text from process_lines l join processes p on p.id = l.process_id where p.comparison_id = %s order by 1, 2" \
		${4:+"select p.seq, hex(o.stdout), hex(o.stderr) from process_output o join processes p on p.id = o.process_id where p.comparison_id = %s order by 1"} \
		"select pair, gain from pair_gains where comparison_id = %s order by pair" \
		"select kind, idx, text from comparison_notes where comparison_id = %s order by 1, 2" \
		"select stage, pairs, test, calibration_gains, alpha, p_faster, p_slower, p_below, p_above, verdict from comparison_stages where comparison_id = %s order by stage"; do
		# shellcheck disable=SC2059
		hub_rows=$(sqlite3 hub.db "$(printf "$q" "$1")") || return 1
		agent_rows=$(sqlite3 "$2" "$(printf "$q" "$3")") || return 1
		# The comparison, its processes and metrics exist; notes may not.
		case $q in *"from comparisons "*|*"from processes "*|*"from metrics "*)
			[ -n "$hub_rows" ] || { echo "  none: $q"; return 1; } ;;
		esac
		[ "$hub_rows" = "$agent_rows" ] || { echo "  differs: $q"; return 1; }
	done
}
check "the faster comparison's rows are lavapipe's, output included" same_rows "$h3" "$A" "$a3" output
check "the B60 comparison's rows are lavapipe's" same_rows "$h2" "$A" "$a2"
check "m1's rows are m1's" same_rows 1 "$M" "$m1"
check "the large record's rows, its output whole" same_rows "$h5" "$A" "$a5" output
"$PERFD" show --db hub.db --json "$h3" >hub3.json
"$PERFD" show --db "$A" --json "$a3" >agent3.json
check "its receipt at the hub is the agent's but for the id" eq same "$(python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); a.pop("comparison"); b.pop("comparison"); print("same" if a==b else "differs")' hub3.json agent3.json)"
check "served by the API" eq 200 "$(curl -s -o "$T/body" -w '%{http_code}' "$URL/api/v1/comparisons/$h3")"
check "  as perfd show" cmp -s "$T/body" hub3.json
check "  with the time budget that set its max_pairs" eq 60.0 "$(js hub3.json 'd["settings"]["time_budget_s"]')"
check "exported again from the hub: the same record but for the id" eq same "$(exp hub.db --output "$h3" | python3 -c 'import json,sys; a=json.load(sys.stdin); b=json.load(open(sys.argv[1])); [x.pop(k) for x in (a,b) for k in ("id","sha256")]; print("same" if a==b else "differs")' a3.json)"

# ---- job updates (docs/hub.md, "The job record") ----
# postto PATH FILE [CURL ARGS]: as post, to another endpoint.
postto() { p=$1 f=$2; shift 2; curl -s -o "$T/body" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "@$f" "$@" "$URL$p"; }
C1=$(printf 'c%.0s' $(seq 40)); B1=$(printf 'b%.0s' $(seq 40))
cat >job0.json <<JSON
{"format": "perfd-job/1", "host": "lavapipe", "id": 7, "seq": 1, "sha256": "", "head": "pull/3",
 "commit": "$C1", "base": "$B1", "subject": "Faster \"blit\"", "state": "queued", "detail": null,
 "created_at": "2026-11-04T10:00:00.100Z", "started_at": null, "finished_at": null}
JSON
rehash job0.json 'pass' >job1.json
rehash job0.json 'd["seq"] = 3; d["state"] = "running"; d["started_at"] = "2026-11-04T10:00:01.000Z"' >job3.json
rehash job0.json 'd["seq"] = 2; d["state"] = "failed"; d["detail"] = "late"' >job2.json
rehash job0.json 'd["detail"] = "other"' >job1-other.json
rehash job0.json 'd["seq"] = 4; d["commit"] = "d" * 40' >job4-moved.json
rehash job0.json 'd["seq"] = 5; d["state"] = "done"; d["finished_at"] = "2026-11-04T10:00:09.000Z"' >job5.json
rehash job0.json 'd["commit"] = "C" * 40' >job-upper.json
rehash job0.json 'd["colour"] = "blue"' >job-unknown.json
rehash job0.json 'd["host"] = "m1"' >job-m1.json
rehash job0.json 'del d["base"]' >job-nobase.json
check "a job's update: 201" eq 201 "$(postto /api/v1/ingest/jobs job1.json -H "$(auth "$TOK")")"
check "  stored" eq "lavapipe|7|1|queued|pull/3|$C1|$B1" "$(sqlite3 hub.db "select host, origin_id, seq, state, head, commit_oid, base_oid from jobs")"
hj=$(js "$T/body" 'd["job"]')
check "the same update again: 200, nothing stored" eq "200 false" "$(postto /api/v1/ingest/jobs job1.json -H "$(auth "$TOK")") $(js "$T/body" 'str(d["stored"]).lower()')"
check "the same update with other content: 409" eq 409 "$(postto /api/v1/ingest/jobs job1-other.json -H "$(auth "$TOK")")"
check "  said, with both hashes" has "$T/body" "update 1 of job 7 of host 'lavapipe' came before with sha256"
check "a newer update: 201" eq 201 "$(postto /api/v1/ingest/jobs job3.json -H "$(auth "$TOK")")"
check "an older one after it: 200, not applied" eq "200 false" "$(postto /api/v1/ingest/jobs job2.json -H "$(auth "$TOK")") $(js "$T/body" 'str(d["stored"]).lower()')"
check "  the newest wins" eq "3|running|2026-11-04T10:00:01.000Z" "$(sqlite3 hub.db "select seq, state, started_at from jobs")"
check "the job moved to another commit: 409" eq 409 "$(postto /api/v1/ingest/jobs job4-moved.json -H "$(auth "$TOK")")"
check "  a job's identity never changes" has "$T/body" "job 7 of host 'lavapipe' is pull/3 at cccccccccccc"
check "a commit not in lower-case hex: 400" eq 400 "$(postto /api/v1/ingest/jobs job-upper.json -H "$(auth "$TOK")")"
check "  named" has "$T/body" "commit: expected a commit id (40 lower-case hex digits)"
check "an unknown member: 400" eq 400 "$(postto /api/v1/ingest/jobs job-unknown.json -H "$(auth "$TOK")")"
check "a missing one: 400" eq 400 "$(postto /api/v1/ingest/jobs job-nobase.json -H "$(auth "$TOK")")"
check "  named" has "$T/body" "base: missing"
check "another host's job with lavapipe's token: 403" eq 403 "$(postto /api/v1/ingest/jobs job-m1.json -H "$(auth "$TOK")")"
check "no token: 401" eq 401 "$(postto /api/v1/ingest/jobs job1.json)"
check "  nothing of them stored" eq "3|running" "$(sqlite3 hub.db "select seq, state from jobs")"
# A comparison of that job, sent before the job's last update: tied to the
# job at once (the job is here); one of a job not here yet is tied when the
# job comes.
rehash a1.json 'd["id"] = 60; d["job"] = 7' >a60.json
rehash a1.json 'd["id"] = 61; d["job"] = 8' >a61.json
check "a comparison of job 7: 201" eq 201 "$(postto /api/v1/ingest/comparisons a60.json -H "$(auth "$TOK")")"
check "  tied to the hub's row of the job" eq "$hj" "$(sqlite3 hub.db "select c.job_id from comparisons c join comparison_origins o on o.comparison_id = c.id where o.origin_id = 60")"
check "a comparison of job 8, not here yet: 201" eq 201 "$(postto /api/v1/ingest/comparisons a61.json -H "$(auth "$TOK")")"
check "  not tied yet" eq "" "$(sqlite3 hub.db "select c.job_id from comparisons c join comparison_origins o on o.comparison_id = c.id where o.origin_id = 61")"
h61=$(js "$T/body" 'd["comparison"]')
curl -s "$URL/api/v1/comparisons/$h61" >r61.json
check "  its receipt, stored as answered, names no job" eq "null 1" "$(js r61.json 'd.get("job")') $(sqlite3 hub.db "select count(*) from receipts where comparison_id = $h61 and format = 'json'")"
rehash job5.json 'd["id"] = 8; d["seq"] = 6; d["head"] = "main"' >job8.json
check "job 8 comes: 201" eq 201 "$(postto /api/v1/ingest/jobs job8.json -H "$(auth "$TOK")")"
check "  its comparison tied to it" eq "$(js "$T/body" 'd["job"]')" "$(sqlite3 hub.db "select c.job_id from comparisons c join comparison_origins o on o.comparison_id = c.id where o.origin_id = 61")"
curl -s "$URL/api/v1/comparisons/$h61" >r61.json
check "  and its receipt rendered anew, naming the job" eq "main $C1" "$(js r61.json 'd["job"]["head"], d["job"]["commit"]' | tr -d "(),'")"
check "a job's update over 512 KiB: 413" eq 413 "$(postto /api/v1/ingest/jobs big.json -H "$(auth "$TOK")")"

# ---- builds (docs/hub.md, "The build record") ----
R1=$(printf 'e%.0s' $(seq 64)); A1=$(printf 'a%.0s' $(seq 64))
cat >build0.json <<JSON
{"format": "perfd-build/1", "host": "lavapipe", "id": 4, "sha256": "", "commit": "$C1",
 "tree": "$B1", "recipe": "$R1", "state": "done", "dir": "/w/builds/4",
 "started_at": "2026-11-04T10:00:00.100Z", "finished_at": "2026-11-04T10:00:02.100Z",
 "exit": 0, "signal": 0, "timed_out": false, "wall_ms": 2000.5, "log": "Y2MgLW8gcHJvZwo=",
 "log_bytes": 12, "toolchain": "cc 12", "fingerprint": null, "detail": null,
 "artifacts": [{"name": "prog", "path": "/w/builds/4/prog", "size": 16000, "sha256": "$A1"}],
 "runner_results": []}
JSON
rehash build0.json 'pass' >build1.json
rehash build0.json 'd["runner_results"] = [{"id": 9, "runner": "contract", "chunk": 1, "chunks": 1, "binary_sha256": None, "started_at": "2026-11-04T10:00:03.000Z", "ended_at": "2026-11-04T10:00:03.500Z", "exit": 0, "signal": 0, "timed_out": False, "elapsed_ms": 500.0, "spawn_error": None, "lines": [{"kind": "RESULT", "text": "RESULT stage1: passed=3 total=3"}]}]' >build2.json
rehash build0.json 'd["wall_ms"] = 1.0' >build-other.json
rehash build0.json 'd["log"] = "not base64!"' >build-badlog.json
rehash build0.json 'd["state"] = "running"' >build-running.json
rehash a1.json 'd["id"] = 62; d["head_build"] = 4; d["base_build"] = 5' >a62.json
check "a comparison naming builds not here yet: 201" eq 201 "$(postto /api/v1/ingest/comparisons a62.json -H "$(auth "$TOK")")"
h62=$(js "$T/body" 'd["comparison"]')
check "a build with no runner result yet: 201" eq 201 "$(postto /api/v1/ingest/builds build1.json -H "$(auth "$TOK")")"
hb4=$(js "$T/body" 'd["build"]')
check "  stored as the host's, its artifact with it" eq "lavapipe|4|$C1|done|16000" "$(sqlite3 hub.db "select b.host, b.origin_id, b.commit_oid, b.state, a.size from builds b join build_artifacts ba on ba.build_id = b.id join artifacts a on a.id = ba.artifact_id where b.id = $hb4")"
check "  the comparison that named it tied to it" eq "$hb4|" "$(sqlite3 hub.db "select head_build, base_build from comparisons where id = $h62")"
check "the same again: 200, nothing stored" eq "200 false" "$(postto /api/v1/ingest/builds build1.json -H "$(auth "$TOK")") $(js "$T/body" 'str(d["stored"]).lower()')"
check "with a runner result more: 201" eq 201 "$(postto /api/v1/ingest/builds build2.json -H "$(auth "$TOK")")"
check "  the result and its line stored" eq "contract|RESULT stage1: passed=3 total=3" "$(sqlite3 hub.db "select r.runner, l.text from runner_results r join runner_lines l on l.result_id = r.id where r.build_id = $hb4")"
check "  again: 200, not twice" eq "200 1" "$(postto /api/v1/ingest/builds build2.json -H "$(auth "$TOK")") $(sqlite3 hub.db "select count(*) from runner_results where build_id = $hb4")"
check "the build with other content: 409" eq 409 "$(postto /api/v1/ingest/builds build-other.json -H "$(auth "$TOK")")"
check "  a finished build never changes" has "$T/body" "build 4 of host 'lavapipe' is here already with other content"
check "a log that is not base64: 400" eq 400 "$(postto /api/v1/ingest/builds build-badlog.json -H "$(auth "$TOK")")"
check "  named" has "$T/body" "log: "
check "a build not finished: 400" eq 400 "$(postto /api/v1/ingest/builds build-running.json -H "$(auth "$TOK")")"
check "  named" has "$T/body" "state: expected done or failed"
check "  nothing of them stored" eq "1 1" "$(sqlite3 hub.db "select (select count(*) from builds where origin_id is not null) || ' ' || (select count(*) from runner_results)")"
curl -s "$URL/api/v1/comparisons/$h62" >r62.json
check "the comparison's receipt names its head build" eq "$hb4 None" "$(js r62.json 'd["builds"]["head"], d["builds"]["base"]' | tr -d '(),')"

# ---- heartbeats ----
# hb HOST SEQ STATE [QUARANTINE [SANDBOX]]: SANDBOX as JSON, the member
# left out without it (an older agent's heartbeat).
hb() { printf '{"format": "perfd-heartbeat/1", "host": "%s", "seq": %s, "sent_at": "2026-11-04T10:00:00.100Z", "state": "%s", "job": 7, "backlog": 3, "fingerprint": "{}", "quarantine": %s%s}' "$1" "$2" "$3" "${4:-null}" "${5:+, \"sandbox\": $5}" >hb.json; }
hb lavapipe 100 measuring
check "a heartbeat: 200, kept" eq "200 true" "$(postto /api/v1/ingest/heartbeat hb.json -H "$(auth "$TOK")") $(js "$T/body" 'str(d["stored"]).lower()')"
check "  as sent" eq "100|measuring|7|3|0" "$(sqlite3 hub.db "select seq, state, job_origin, backlog, quarantined from host_status where host = 'lavapipe'")"
check "  no sandbox said: none kept" eq 1 "$(sqlite3 hub.db "select sandbox is null from host_status where host = 'lavapipe'")"
curl -s "$URL/metrics" >metrics.txt
check "  /metrics: no host known to be unsandboxed" has metrics.txt "perfd_hosts_unsandboxed 0"
hb lavapipe 99 idle '{"fault": "GPU hang", "since": null}'
check "an older one: 200, not kept" eq "200 false" "$(postto /api/v1/ingest/heartbeat hb.json -H "$(auth "$TOK")") $(js "$T/body" 'str(d["stored"]).lower()')"
NOSBX='none: [sandbox] mode = off: builds and processes run as they are'
hb lavapipe 101 idle '{"fault": "GPU hang", "since": "2026-11-04T10:00:00.000Z"}' "\"$NOSBX\""
check "a newer one, quarantined and unsandboxed: kept" eq 200 "$(postto /api/v1/ingest/heartbeat hb.json -H "$(auth "$TOK")")"
check "  with its fault" eq "101|idle|1|GPU hang" "$(sqlite3 hub.db "select seq, state, quarantined, fault from host_status where host = 'lavapipe'")"
check "  and why it has no sandbox" eq "$NOSBX" "$(sqlite3 hub.db "select sandbox from host_status where host = 'lavapipe'")"
curl -s "$URL/metrics" >metrics.txt
check "  /metrics counts it unsandboxed" has metrics.txt "perfd_hosts_unsandboxed 1"
for v in '"bubble wrap"' '""' '"none:"' 42 null; do
	hb lavapipe 102 idle null "$v"
	check "a sandbox of $v: 400" eq 400 "$(postto /api/v1/ingest/heartbeat hb.json -H "$(auth "$TOK")")"
	check "  naming it" has "$T/body" "sandbox: expected a sandbox's name"
done
check "  the heartbeat kept as it was" eq "101|$NOSBX" "$(sqlite3 hub.db "select seq, sandbox from host_status where host = 'lavapipe'")"
hb lavapipe 102 sleeping
check "an unknown state: 400" eq 400 "$(postto /api/v1/ingest/heartbeat hb.json -H "$(auth "$TOK")")"
check "  naming the states" has "$T/body" "state: expected idle, polling, building, measuring or calibrating"
hb m1 103 idle
check "m1's heartbeat with lavapipe's token: 403" eq 403 "$(postto /api/v1/ingest/heartbeat hb.json -H "$(auth "$TOK")")"
check "  nothing of m1 kept" eq 0 "$(sqlite3 hub.db "select count(*) from host_status where host = 'm1'")"

# ---- the hosts as the dashboard reads them ----
curl -s "$URL/api/v1/hosts" >hosts.json
hostjs() { js hosts.json "[h for h in d['hosts'] if h['name'] == '$1'][0]$2"; }
check "/api/v1/hosts: lavapipe's newest heartbeat" eq "idle 3" "$(hostjs lavapipe '["state"]') $(hostjs lavapipe '["backlog"]')"
check "  when the hub received it" eq "$(sqlite3 hub.db "select received_at from host_status where host = 'lavapipe'")" "$(hostjs lavapipe '["last_push"]')"
check "  quarantined as it says, with its fault" eq "true GPU hang null" "$(hostjs lavapipe '["quarantined"]') $(hostjs lavapipe '["fault"]') $(hostjs lavapipe '["since"]')"
check "  its sandbox: none, and why" eq "$NOSBX" "$(hostjs lavapipe '["sandbox"]')"
check "  m1 sent none: null" eq "null null null false null" "$(hostjs m1 '["last_push"]') $(hostjs m1 '["state"]') $(hostjs m1 '["backlog"]') $(hostjs m1 '["quarantined"]') $(hostjs m1 '["sandbox"]')"
curl -s "$URL/api/v1/hosts?format=csv" >hosts.csv
check "  CSV columns" eq "name,fingerprint_hash,heartbeat,quarantined,fault,since,last_push,state,backlog,sandbox,held,hold" "$(head -n 1 hosts.csv)"
check "  lavapipe's line" has hosts.csv ",true,GPU hang,,$(hostjs lavapipe '["last_push"]'),idle,3,$NOSBX"
hb lavapipe 106 idle '{"fault": "GPU hang", "since": "2026-11-04T10:00:00.000Z"}' '"bubblewrap"'
check "a newer heartbeat, sandboxed: kept" eq 200 "$(postto /api/v1/ingest/heartbeat hb.json -H "$(auth "$TOK")")"
curl -s "$URL/api/v1/hosts" >hosts.json
check "  /api/v1/hosts says its sandbox" eq bubblewrap "$(hostjs lavapipe '["sandbox"]')"
curl -s "$URL/metrics" >metrics.txt
check "  /metrics: no host unsandboxed" has metrics.txt "perfd_hosts_unsandboxed 0"
check "/api/v1/pulls without [github]: an empty list, no token needed" eq "200 None []" "$(curl -s -o "$T/body" -w '%{http_code}' "$URL/api/v1/pulls") $(js "$T/body" 'd["repo"], d["pulls"]' | tr -d '(),')"
check "  the same for a commit" eq "200 []" "$(curl -s -o "$T/body" -w '%{http_code}' "$URL/api/v1/pulls?commit=$C1") $(js "$T/body" 'd["pulls"]')"
for q in commit=xyz1 commit=abc commit=ABCD limit=0 limit=501 colour=blue; do
	check "  ?$q: 400" eq 400 "$(curl -s -o "$T/body" -w '%{http_code}' "$URL/api/v1/pulls?$q")"
done
check "  said as JSON, naming the parameter" eq "unknown parameter 'colour'" "$(js "$T/body" 'd["error"]')"

# ---- the pull heads agents read ----
check "GET /api/v1/hub/pulls without a token: 401" eq 401 "$(curl -s -o "$T/body" -w '%{http_code}' "$URL/api/v1/hub/pulls")"
check "  with a host's token: 200" eq 200 "$(curl -s -o "$T/body" -w '%{http_code}' -H "$(auth "$TOK")" "$URL/api/v1/hub/pulls")"
check "  none: this hub has no [github]" eq "None []" "$(js "$T/body" 'd["repo"], d["pulls"]' | tr -d '(),')"
check "  no parameters taken" eq 400 "$(curl -s -o "$T/body" -w '%{http_code}' -H "$(auth "$TOK")" "$URL/api/v1/hub/pulls?x=1")"

# ---- revocation, at once ----
check "token revoke lavapipe" run 0 "$PERFD" token revoke lavapipe --config hub.conf
check "  said" has "$T/err" "revoked 1 token of host 'lavapipe'"
check "the running hub refuses it at once: 401" eq 401 "$(post a1.json -H "$(auth "$TOK")")"
check "m1's still works" eq 200 "$(post m1.json -H "$(auth "$TOKM")")"
check "revoking again: nothing to revoke" run 2 "$PERFD" token revoke lavapipe --config hub.conf
check "  said" has "$T/err" "host 'lavapipe' has no live token to revoke"
check "the maintainer's revoked" run 0 "$PERFD" token revoke --maintainer alice --config hub.conf
check "  listed with its time" eq 2 "$(sqlite3 hub.db "select count(*) from tokens where revoked_at is not null")"
kill -TERM "$hub"
wait "$hub"
check "the hub stops on SIGTERM with 0" eq 0 "$?"

# A read-only server (--db) still refuses every write.
"$PERFD" serve --db hub.db --listen 127.0.0.1:0 2>"$T/ro.err" &
ro=$!
wait_for "the hub's line 'serving'" 10 grep -q "serving http://" "$T/ro.err"
RO=$(sed -n 's|^perfd: serving \(http://127.0.0.1:[0-9]*\)/$|\1|p' "$T/ro.err" | head -n 1)
check "serve --db: a POST is 405" eq 405 "$(curl -s -o "$T/body" -w '%{http_code}' -H "$(auth "$TOKM")" --data-binary @m1.json "$RO/api/v1/ingest/comparisons")"
check "  it only reads" has "$T/body" "this server only reads"
kill -TERM "$ro"
wait "$ro"

# ---- HTTPS ----
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
		-keyout key.pem -out cert.pem 2>/dev/null
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=other -keyout other-key.pem -out other.pem 2>/dev/null
	check "a self-signed certificate made" test -s cert.pem -a -s key.pem
	cat >tls.conf <<CONF
[hub]
database = $T/hub.db
listen = 0.0.0.0:0
tls_cert = $T/cert.pem
tls_key = $T/key.pem
hosts = m1 lavapipe
CONF
	check "TLS off loopback needs no allow_plain_http" run 0 "$PERFD" serve --config tls.conf --check
	sed -i 's/^listen = .*/listen = 127.0.0.1:0/' tls.conf
	"$PERFD" serve --config tls.conf 2>"$T/tls.err" &
	tls=$!
	wait_for "the hub's line 'serving'" 10 grep -q "serving https://" "$T/tls.err"
	HTTPS=$(sed -n 's|^perfd: serving \(https://127.0.0.1:[0-9]*\)/$|\1|p' "$T/tls.err" | head -n 1)
	check "the hub serves HTTPS" test -n "$HTTPS"
	check "GET over HTTPS, the certificate checked" eq 200 "$(curl -s --cacert cert.pem -o "$T/body" -w '%{http_code}' "$HTTPS/api/v1/comparisons")"
	check "  the stored comparisons" eq 8 "$(js "$T/body" 'len(d["comparisons"])')"
	check "a client that does not trust it fails" test "$(curl -s -o /dev/null -w '%{http_code}' "$HTTPS/api/v1/hosts")" = 000
	check "plain HTTP on the TLS port gets no answer" test "$(curl -s -o /dev/null -w '%{http_code}' "http${HTTPS#https}/api/v1/hosts")" != 200
	TOK2=$("$PERFD" token new lavapipe --config tls.conf 2>/dev/null)
	check "a record over HTTPS: 200 for one stored" eq 200 "$(curl -s --cacert cert.pem -o "$T/body" -w '%{http_code}' -H "$(auth "$TOK2")" --data-binary @a2.json "$HTTPS/api/v1/ingest/comparisons")"
	"$PERFD" pair --db "$A" --host-name lavapipe --max-pairs 3 $B60 "$PLANT" "$PLANT" >/dev/null 2>&1
	exp "$A" "$(sqlite3 "$A" "select max(id) from comparisons")" >a6.json
	check "a new one over HTTPS: 201" eq 201 "$(curl -s --cacert cert.pem -o "$T/body" -w '%{http_code}' -H "$(auth "$TOK2")" --data-binary @a6.json "$HTTPS/api/v1/ingest/comparisons")"
	check "over HTTPS, a token is still needed" eq 401 "$(curl -s --cacert cert.pem -o /dev/null -w '%{http_code}' --data-binary @a6.json "$HTTPS/api/v1/ingest/comparisons")"
	kill -TERM "$tls"
	wait "$tls"
	sed -i "s|^tls_key = .*|tls_key = $T/other-key.pem|" tls.conf
	check "a key that is not the certificate's: refused at start" run 2 "$PERFD" serve --config tls.conf
	check "  said" has "$T/err" "libmicrohttpd refused the certificate and key"
else
	not_ok "openssl is missing: the HTTPS test needs it (dev.sh installs it)"
fi
check "perfd verify --db hub.db at the end" run 0 "$PERFD" verify --db hub.db
finish
