#!/bin/bash
# The agent pushes its done comparisons to the hub ([hub], docs/hub.md),
# its own database the spool: after perfd agent --once every done
# comparison is at the hub once, with the sha256 perfd export gives; with
# the hub killed (SIGKILL) the agent still measures and its summary and
# /metrics show the backlog; the hub back, the next --once drains it in id
# order with nothing doubled; a record sent again stores nothing; a token
# file others may read and plain HTTP off loopback are refused; the token is
# in no child's environment.
. "$(dirname "$0")/lib.sh"
need git cc curl

new_src
work_prog "$SRC/prog.c" 2000000 7
git -C "$SRC" add -A && git -C "$SRC" commit -qm base
work_prog "$SRC/prog.c" 1000000 7
git -C "$SRC" commit -qam "half the rounds"

PORT=$(free_port)
HUB=$T/hub.db
section hub database="$HUB" listen="127.0.0.1:$PORT" hosts=box >hub.conf
TOK=$("$PERFD" token new box --config hub.conf 2>/dev/null)
check "a token for host box" eq 64 "${#TOK}"
printf '%s\n' "$TOK" >token
chmod 600 token

cat >box.conf <<CONF
[host]
name = box
CONF
# The build prints its environment into its log: the token must not be in it.
conf() {
	cat <<CONF
$(agent_repo host="$T/box.conf")

$(section calibration runs=1 idle_budget_s=0)

$(section hub url="$1" token_file="$2")

[build]
command = env; cc -O1 -o prog prog.c
artifacts = prog
timeout_s = 60

[case work]
command = ./prog
pairs = 3
max_pairs = 3
warmup = 0
CONF
}
conf "http://127.0.0.1:$PORT/" "$T/token" >agent.conf
check "--check reads the token file" run 0 "$PERFD" agent --config agent.conf --check
check "  configuration OK" has "$T/out" "configuration OK"

# ---- refused configurations ----
cp token loose-token
chmod 644 loose-token
conf "http://127.0.0.1:$PORT" "$T/loose-token" >loose.conf
check "a token file others may read: --check refuses it" run 2 "$PERFD" agent --config loose.conf --check
check "  saying so" has "$T/err" "[hub] token file '$T/loose-token' is mode 0644: others than its owner can read it; refused: chmod 600 '$T/loose-token'"
check "  the token not in the message" eq 0 "$(grep -c "$TOK" "$T/err")"
check "  and the agent does not start" run 2 "$PERFD" agent --config loose.conf --once
mkfifo fifo-token
conf "http://127.0.0.1:$PORT" "$T/fifo-token" >fifo.conf
check "a FIFO as the token file: --check refuses it at once" run 2 timeout 20 "$PERFD" agent --config fifo.conf --check
check "  saying so" has "$T/err" "not a regular file"
check "  having built nothing" test ! -e "$T/work/builds"
conf "http://hub.example.org:8443" "$T/token" >plain.conf
check "plain HTTP to another host refused" run 2 "$PERFD" agent --config plain.conf --check
check "  at its line" has "$T/err" "plain.conf:15: 'url': 'http://hub.example.org:8443' is plain HTTP to a host other than this one"
conf "http://127.0.0.1.example.org" "$T/token" >name.conf
check "a name that begins as a loopback address is not one" run 2 "$PERFD" agent --config name.conf --check
check "  refused at its line" has "$T/err" "name.conf:15: 'url': 'http://127.0.0.1.example.org' is plain HTTP"
conf "ftp://127.0.0.1" "$T/token" | sed '/^token_file/d' >ftp.conf
check "another scheme, and no token_file" run 2 "$PERFD" agent --config ftp.conf --check
check "  the scheme at its line" has "$T/err" "ftp.conf:15: 'url': expected an https:// URL, not 'ftp://127.0.0.1'"
check "  the missing key" has "$T/err" "[hub] needs 'token_file'"

# ---- the hub ----
start_hub() {
	"$PERFD" serve --config hub.conf 2>"$T/hub-$1.err" &
	hub=$!
	for i in $(seq 100); do grep -q "serving http://" "$T/hub-$1.err" && break; sleep 0.05; done
	grep -q "serving http://127.0.0.1:$PORT/" "$T/hub-$1.err"
}
check "the hub starts" start_hub 1
done_ids() { sql "select group_concat(id, ' ') from (select id from comparisons where state = 'done' order by id)"; }
hub_ids() { sqlite3 "$HUB" "select group_concat(origin_id, ' ') from (select origin_id from comparison_origins where host = 'box' order by comparison_id)"; }

# The CPU pressure each process ran beside travels with it: read here from
# a planted file that no process adds to (PERFD_CPU_PRESSURE), so every
# process keeps 0 ms, and the hub's recomputation of pairs-median/2.2 reads
# the calibration's from the rows it was sent.
printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n' >pressure
check "agent --once" run 0 env PERFD_CPU_PRESSURE="$T/pressure" "$PERFD" agent --config agent.conf --once
cp "$T/out" once1.out
cp "$T/err" once1.err
check "  an A/A and a comparison, done" eq "aa compare" "$(sql "select group_concat(kind, ' ') from (select kind from comparisons where state = 'done' order by id)")"
check "  the summary shows no backlog" has once1.out ", push backlog 0"
check "  the push is logged" has once1.err "push: 2 comparisons sent to http://127.0.0.1:$PORT"
check "every done comparison at the hub, in order" eq "$(done_ids)" "$(hub_ids)"
check "  marked sent, with the hub's ids" eq "201 201" "$(sql "select group_concat(status, ' ') from pushed")"
check "  the hub's ids recorded" eq "$(sqlite3 "$HUB" "select group_concat(comparison_id, ' ') from (select comparison_id from comparison_origins order by comparison_id)")" "$(sql "select group_concat(hub_id, ' ') from (select hub_id from pushed order by comparison_id)")"
for id in $(done_ids); do
	"$PERFD" export --db "$DB" "$id" >"exp-$id.json"
	check "  comparison $id: the hub has the record perfd export prints" eq "$(js "exp-$id.json" 'd["sha256"]')" "$(sqlite3 "$HUB" "select sha256 from comparison_origins where host = 'box' and origin_id = $id")"
done
check "  with its gain" eq "$(sql "select gain_median from comparisons where kind = 'compare'")" "$(sqlite3 "$HUB" "select gain_median from comparisons where kind = 'compare'")"
cpu_waits() { sqlite3 "$1" "select count(*), total(cpu_wait_ms) from processes where cpu_wait_ms is not null"; }
check "  every process's CPU pressure, 0 ms" eq "$(sql "select count(*) from processes where state = 'done'")|0.0" "$(cpu_waits "$DB")"
check "  as the hub keeps it" eq "$(cpu_waits "$DB")" "$(cpu_waits "$HUB")"
load_gates() { sqlite3 "$1" "select group_concat(coalesce(load_p, 'none') || ':' || coalesce(load_above, 'none'), ' ') from (select s.load_p, s.load_above from comparison_stages s join comparisons c on c.id = s.comparison_id where c.kind = 'compare' order by s.stage)"; }
check "  and the load gate as the agent judged it" eq "$(load_gates "$DB")" "$(load_gates "$HUB")"
echo "# load gates: $(load_gates "$DB")"
check "the job at the hub, as the host's, done" eq "box|1|main|done|$(sql "select commit_oid from jobs where id = 1")" "$(sqlite3 "$HUB" "select host, origin_id, head, state, commit_oid from jobs")"
check "  its comparison tied to it there" eq "$(sqlite3 "$HUB" "select id from jobs")" "$(sqlite3 "$HUB" "select job_id from comparisons where kind = 'compare'")"
check "  its updates acknowledged" eq "$(sql "select seq from jobs where id = 1")" "$(sql "select seq from pushed_jobs where job_id = 1")"
check "  the hub's copy at the newest" eq "$(sql "select seq from jobs where id = 1")" "$(sqlite3 "$HUB" "select seq from jobs")"
check "the heartbeat at the hub: idle, no backlog" eq "idle|0" "$(sqlite3 "$HUB" "select state, backlog from host_status where host = 'box'")"
check "  with the host's fingerprint" eq 1 "$(sqlite3 "$HUB" "select fingerprint is not null from host_status")"
# The sandbox the summary says, as the heartbeat says it: bubblewrap, or
# none and why (issue 24: no silent downgrade).
said=$(sed -n 's/^sandbox: //p' once1.out)
case $said in
"builds and processes ran sandboxed") want=bubblewrap ;;
*) want="none: $said" ;;
esac
check "  with the sandbox the summary says ($want)" eq "$want" "$(sqlite3 "$HUB" "select sandbox from host_status where host = 'box'")"
curl -s "http://127.0.0.1:$PORT/api/v1/hosts" >hosts.json
check "  and /api/v1/hosts says it" eq "$want" "$(js hosts.json '[h for h in d["hosts"] if h["name"] == "box"][0]["sandbox"]')"

# ---- the hub down ----
kill -9 "$hub"
wait "$hub" 2>/dev/null
work_prog "$SRC/prog.c" 500000 7
git -C "$SRC" commit -qam "half again"
check "the hub killed: agent --once still measures" run 0 "$PERFD" agent --config agent.conf --once
cp "$T/out" once2.out
cp "$T/err" once2.err
check "  the new comparison done" eq 3 "$(sql "select count(*) from comparisons where state = 'done'")"
check "  the summary shows the backlog: the comparison, its job and its build" has once2.out ", push backlog 3"
check "  the failure said once" eq 1 "$(grep -c "push: POST http://127.0.0.1:$PORT/api/v1/ingest/" once2.err)"
check "  nothing marked" eq 2 "$(sql "select count(*) from pushed")"
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>"$T/ro.err" &
ro=$!
for i in $(seq 100); do grep -q "serving http://" "$T/ro.err" && break; sleep 0.05; done
RO=$(sed -n 's|^perfd: serving \(http://127.0.0.1:[0-9]*\)/$|\1|p' "$T/ro.err" | head -n 1)
curl -s "$RO/metrics" >metrics.txt
kill "$ro"; wait "$ro" 2>/dev/null
check "/metrics of the agent's database shows the backlog" has metrics.txt "perfd_push_backlog 3"

# A second commit while the hub is down: a backlog of six (two
# comparisons, two jobs, two builds).
work_prog "$SRC/prog.c" 250000 7
git -C "$SRC" commit -qam "half once more"
check "still down: agent --once measures again" run 0 "$PERFD" agent --config agent.conf --once
check "  a backlog of 6" has "$T/out" ", push backlog 6"
check "  the hub has the first two only" eq "1 2" "$(sqlite3 "$HUB" "select group_concat(origin_id, ' ') from comparison_origins")"

# A hub that answers 503: the backlog stays, to be sent later.
cat >h503.py <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(503); self.send_header("Content-Length", "0"); self.end_headers()
        open("h503.log", "a").write(self.path + "\n")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 h503.py "$PORT" &
h503=$!
for i in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.05; done
check "a hub answering 503: agent --once" run 0 "$PERFD" agent --config agent.conf --once
check "  said" has "$T/err" "push: POST http://127.0.0.1:$PORT/api/v1/ingest/builds: answered 503"
check "  one request, the turn ends there" eq 1 "$(wc -l <h503.log)"
check "  the backlog kept" has "$T/out" ", push backlog 6"
kill "$h503"; wait "$h503" 2>/dev/null

# ---- the hub back ----
check "the hub restarts" start_hub 2
check "agent --once drains the backlog" run 0 "$PERFD" agent --config agent.conf --once
check "  no backlog" has "$T/out" ", push backlog 0"
check "  said" has "$T/err" "push: 2 comparisons sent to http://127.0.0.1:$PORT"
check "every done comparison at the hub, in order" eq "$(done_ids)" "$(hub_ids)"
check "  none twice" eq "$(sqlite3 "$HUB" "select count(*) from comparison_origins")" "$(sqlite3 "$HUB" "select count(distinct origin_id) from comparison_origins")"
check "  the jobs too, each once, each tied to its comparison" eq "1 2 3" "$(sqlite3 "$HUB" "select group_concat(j.origin_id, ' ') from (select origin_id from jobs order by origin_id) j")"
check "  every compare at the hub has its job" eq 0 "$(sqlite3 "$HUB" "select count(*) from comparisons where kind = 'compare' and job_id is null")"
check "  the hub received them in id order" eq "$(hub_ids)" "$(sqlite3 "$HUB" "select group_concat(origin_id, ' ') from (select origin_id from comparison_origins order by received_at, comparison_id)")"

# ---- a record sent again ----
before=$(sqlite3 "$HUB" "select (select count(*) from comparisons) || ' ' || (select count(*) from processes)")
sql "delete from pushed where comparison_id = 2"
check "a lost answer: the record again" run 0 "$PERFD" agent --config agent.conf --once
check "  answered 200" eq 200 "$(sql "select status from pushed where comparison_id = 2")"
check "  the hub stored nothing new" eq "$before" "$(sqlite3 "$HUB" "select (select count(*) from comparisons) || ' ' || (select count(*) from processes)")"

# ---- a permanent refusal ----
# The hub refuses, for good, an id it has with other content (409): the
# agent keeps the refusal and sends it no more.
sql "delete from pushed where comparison_id = 3; update processes set wall_ms = wall_ms + 1 where comparison_id = 3 and seq = 1"
check "a record the hub refuses" run 0 "$PERFD" agent --config agent.conf --once
check "  kept as refused, with the hub's message" eq 409 "$(sql "select status from pushed where comparison_id = 3")"
check "  the message" has <(sql "select message from pushed where comparison_id = 3") "is here already"
check "  logged" has "$T/err" "push: comparison 3 refused by the hub (409:"
check "  not sent again" run 0 "$PERFD" agent --config agent.conf --once
check "  nor logged again" eq 0 "$(grep -c "refused by the hub" "$T/err")"
check "  no backlog" has "$T/out" ", push backlog 0"

# ---- the token ----
check "builds printed their environment" eq 1 "$(sql "select count(*) > 0 from builds where cast(log as text) like '%PATH=%'")"
check "the token is in no build log" eq 0 "$(sql "select count(*) from builds where instr(cast(log as text), '$TOK') > 0")"
check "  nor anywhere in the agent's database or work directory" eq 0 "$(grep -rlF "$TOK" "$DB" "$T/work" | wc -l)"
check "  nor in the agent's log" eq 0 "$(cat once1.err once2.err "$T/err" | grep -cF "$TOK")"
kill "$hub"; wait "$hub" 2>/dev/null

# ---- a hub that hangs: the request's bound ([hub] timeout_s) ----
cat >hang.py <<'PY'
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
held = []
while True:
    c, _ = s.accept(); held.append(c)   # accepted, read from never, answered never
PY
python3 hang.py "$PORT" &
hang=$!
for i in $(seq 100); do python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 1)" "$PORT" 2>/dev/null && break; sleep 0.05; done
sed -e 's|^token_file = .*|&\ntimeout_s = 1|' agent.conf >hang.conf
work_prog "$SRC/prog.c" 125000 7
git -C "$SRC" commit -qam "half yet again"
start=$(date +%s)
check "a hub that accepts and never answers: agent --once still measures" run 0 "$PERFD" agent --config hang.conf --once
check "  within its bound (1 s a request, one request a turn)" test $(($(date +%s) - start)) -lt 30
check "  the timeout said" has "$T/err" "push: POST http://127.0.0.1:$PORT/api/v1/ingest/"
check "  the backlog kept" has "$T/out" ", push backlog 3"
kill "$hang"; wait "$hang" 2>/dev/null

# ---- a hub whose certificate only the agent's ca_file trusts ----
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
		-keyout key.pem -out cert.pem 2>/dev/null
	printf 'tls_cert = %s/cert.pem\ntls_key = %s/key.pem\n' "$T" "$T" >>hub.conf
	"$PERFD" serve --config hub.conf 2>"$T/hub-tls.err" &
	hub=$!
	for i in $(seq 100); do grep -q "serving https://" "$T/hub-tls.err" && break; sleep 0.05; done
	sed -e "/^\[hub\]/,/^\$/s|^url = .*|url = https://127.0.0.1:$PORT|" agent.conf >tls.conf
	check "HTTPS with a certificate the system does not trust: refused" run 0 "$PERFD" agent --config tls.conf --once
	check "  said" has "$T/err" "push: POST https://127.0.0.1:$PORT/api/v1/ingest/"
	check "  the backlog kept" has "$T/out" ", push backlog 3"
	sed -e 's|^token_file = .*|&\nca_file = '"$T"'/cert.pem|' tls.conf >ca.conf
	check "with [hub] ca_file naming it: agent --once" run 0 "$PERFD" agent --config ca.conf --once
	check "  the backlog drained" has "$T/out" ", push backlog 0"
	check "  the new comparison at the hub" eq "$(done_ids)" "$(hub_ids)"
	kill "$hub"; wait "$hub" 2>/dev/null
	sed -e 's|^token_file = .*|&\nca_file = '"$T"'/nothing.pem|' tls.conf >ca-missing.conf
	check "a ca_file that is missing: --check refuses it" run 2 "$PERFD" agent --config ca-missing.conf --check
	check "  at its line" has "$T/err" "ca-missing.conf:17: 'ca_file': '$T/nothing.pem': No such file"
	sed -e 's|^token_file = .*|&\nca_file = '"$T"'/agent.conf|' tls.conf >ca-bad.conf
	check "one that is not PEM: refused" run 2 "$PERFD" agent --config ca-bad.conf --check
	check "  said" has "$T/err" "ca-bad.conf:17: 'ca_file': expected a file of PEM text (-----BEGIN CERTIFICATE-----...), not '$T/agent.conf'"
fi

# ---- a record over the hub's bound ----
# A 413 is final for that record: kept refused with the hub's message, and
# the backlog behind it goes on (a chatty runner's 9 MB build record once
# held back every later record of its host). A stub hub refuses builds so.
cat >h413.py <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        open("h413.log", "a").write(self.path + "\n")
        big = self.path.endswith("/builds")
        body = (b'{"error":"a record of 9700000 bytes is over this endpoint\'s bound"}' if big
                else b'{"comparison": 99}')
        self.send_response(413 if big else 201)
        self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
python3 h413.py "$PORT" &
h413=$!
for i in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.05; done
work_prog "$SRC/prog.c" 60000 7
git -C "$SRC" commit -qam "a build the hub finds too large"
check "a hub answering 413 for a build: agent --once" run 0 "$PERFD" agent --config agent.conf --once
check "  the build kept as refused" eq 413 "$(sql "select status from pushed_builds order by build_id desc limit 1")"
check "  with the hub's message" has <(sql "select message from pushed_builds order by build_id desc limit 1") "over this endpoint's bound"
check "  logged" has "$T/err" "refused by the hub (413:"
check "  the backlog behind it sent" test "$(grep -c '/api/v1/ingest/comparisons' h413.log)" -ge 1
check "  none left" has "$T/out" ", push backlog 0"
builds=$(grep -c '/api/v1/ingest/builds' h413.log)
check "  not sent again" run 0 "$PERFD" agent --config agent.conf --once
check "  no build asked again" eq "$builds" "$(grep -c '/api/v1/ingest/builds' h413.log)"
kill "$h413"; wait "$h413" 2>/dev/null

# ---- a record cut to the hub's bound ----
# A contract runner that prints 12 MB of RESULT lines (three chunks of 1024
# lines of 4000 bytes): the agent cuts the build record's lines to fit the
# hub's 8 MiB, a last SUMMARY line of each cut result says how many were
# left out, and the real hub stores it; the records after it arrive too.
section hub database="$HUB" listen="127.0.0.1:$PORT" hosts=box >hub.conf
check "the hub, plain HTTP again" start_hub 3
cat >"$SRC/chatty.sh" <<'SH'
#!/bin/sh
pad=$(head -c 3980 /dev/zero | tr '\0' x)
i=1
while [ $i -le 1024 ]; do
	echo "RESULT c$PERFD_CHUNK-$i on \"dev\": $pad"
	i=$((i + 1))
done
SH
chmod +x "$SRC/chatty.sh"
git -C "$SRC" add chatty.sh
work_prog "$SRC/prog.c" 30000 7
git -C "$SRC" commit -qam "a chatty contract runner"
conf "http://127.0.0.1:$PORT/" "$T/token" >chatty.conf
printf '\n[runner chatty]\ncommand = ./chatty.sh\nchunks = 3\ntimeout_s = 120\n' >>chatty.conf
# (comparisons up to here the 413 stub took for the real hub)
since=$(sql "select max(id) from comparisons")
done_since() { sql "select group_concat(id, ' ') from (select id from comparisons where state = 'done' and id > $since order by id)"; }
hub_since() { sqlite3 "$HUB" "select group_concat(origin_id, ' ') from (select origin_id from comparison_origins where host = 'box' and origin_id > $since order by comparison_id)"; }
check "a runner of 12 MB of lines: agent --once" run 0 "$PERFD" agent --config chatty.conf --once
BID=$(sql "select max(build_id) from runner_results")
check "  its lines kept whole at the agent" eq 3072 "$(sql "select count(*) from runner_lines l join runner_results r on r.id = l.result_id where r.build_id = $BID")"
check "  the build sent, not refused" eq 201 "$(sql "select status from pushed_builds where build_id = $BID")"
check "  no backlog" has "$T/out" ", push backlog 0"
HB=$(sqlite3 "$HUB" "select id from builds where commit_oid = '$(git -C "$SRC" rev-parse HEAD)'")
check "  the hub stored the build" test -n "$HB"
check "  with its three results" eq 3 "$(sqlite3 "$HUB" "select count(*) from runner_results where build_id = '$HB'")"
kept=$(sqlite3 "$HUB" "select count(*) from runner_lines l join runner_results r on r.id = l.result_id where r.build_id = '$HB' and l.kind = 'RESULT'")
check "  fewer lines than printed" test "$kept" -lt 3072 -a "$kept" -gt 1000
check "  each result's cut said in its last line" eq 3 "$(sqlite3 "$HUB" "select count(*) from runner_lines l join runner_results r on r.id = l.result_id where r.build_id = '$HB' and l.kind = 'SUMMARY' and l.text like 'SUMMARY perfd: % of 1024 lines left out to fit the hub''s bound of 8388608 bytes' and l.idx = (select max(idx) from runner_lines where result_id = l.result_id)")"
cut=$(sqlite3 "$HUB" "select sum(cast(substr(text, 16, instr(text, ' of ') - 16) as integer)) from runner_lines l join runner_results r on r.id = l.result_id where r.build_id = '$HB' and l.kind = 'SUMMARY'")
check "  the counts add up" eq 3072 "$((kept + ${cut:-0}))"
check "  the comparison after it at the hub" eq "$(done_since)" "$(hub_since)"
check "  (one at least)" test -n "$(hub_since)"
work_prog "$SRC/prog.c" 20000 7
git -C "$SRC" commit -qam "after the chatty one"
check "a later commit: agent --once" run 0 "$PERFD" agent --config chatty.conf --once
check "  its build at the hub too" eq 1 "$(sqlite3 "$HUB" "select count(*) from builds where commit_oid = '$(git -C "$SRC" rev-parse HEAD)'")"
check "  and its comparison" eq "$(done_since)" "$(hub_since)"
check "  no backlog" has "$T/out" ", push backlog 0"
kill "$hub"; wait "$hub" 2>/dev/null

[ "$fails" -eq 0 ]
