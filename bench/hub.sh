#!/bin/sh
# bench/hub.sh [PERFD] [DB]: the hub's latency, request rate and memory on a
# large database, side by side with a bare libmicrohttpd handler; and the
# rate of stored receipts against libmicrohttpd answering the same bytes
# from memory.
#
# Needs wrk (apt-get install wrk; Debian 12 has 4.1.0) and libmicrohttpd's
# headers (libmicrohttpd-dev) for bench/bare-mhd.c. PERFD defaults to
# build/daemon/perfd; DB to a database made by bench/hub-db.sh (1,000,000
# process records: bench/hub-db.sh hub.db). Only 127.0.0.1 is used.
#
# The script first drops the receipts DB has stored (the table of schema
# version 8), so that the server that only reads renders every receipt.
# It starts `perfd serve --db DB --listen 127.0.0.1:0` (the port is
# read from its first log line), then, each load bounded by wrk's -d:
#   latency   wrk -t1 -c1 -d LAT_S --latency, one request at a time:
#             receipt   GET /api/v1/comparisons/ID, ID random over 1..max(id)
#             timeline  GET /api/v1/timeline?host=H&case=C&limit=100, H and
#                       C random among those of the database
#             timeline (default limit, 100 points), the same
#   rate      wrk -t2 -c16 -d RATE_S on loopback:
#             receipt   as above, random ids
#             list      GET /api/v1/comparisons (50 newest)
#             bare      bench/bare-mhd.c (the flags and options of
#                       web/hub/server.c, a fixed 67-byte JSON body)
#   memory    VmRSS and VmHWM of the perfd process from /proc after the
#             loads.
#   stored    the hub, `perfd serve --config` on DB (a server that writes,
#             so it stores each done receipt at its first ask): HUB_RECEIPTS
#             random done comparisons are asked once each with curl, which
#             stores them, and their bytes and ETags are kept in files;
#             then wrk -t2 -c16 -d RATE_S asks for random ones of them
#             ("perfd stored receipt"), and the same of bench/bare-mhd.c
#             given those files, which answers each id with its bytes from
#             memory ("bare, same bytes").
# The ids and host/case pairs come from the database with sqlite3 first;
# the figures are wrk's (latency from its histogram, in ms).
#
# Targets (issue 5): receipt and timeline p99 under 20 ms; perfd's rate at
# least half the bare handler's; RSS under 64 MiB; stored receipts at
# least half the rate of the bare handler answering the same bytes. The
# last lines say met or missed; the exit status is 0 either way, 2 when
# something could not be measured. The receipts stored stay in DB.
#
# Environment: HUB_LAT_S (10), HUB_RATE_S (10), HUB_RECEIPTS (1000), CC (cc).
set -eu

. "$(dirname "$0")/lib.sh"

lat_s=${HUB_LAT_S:-10}
rate_s=${HUB_RATE_S:-10}
nreceipts=${HUB_RECEIPTS:-1000}
case $nreceipts in
'' | *[!0-9]*) bench_fail "HUB_RECEIPTS must be a count, 1 to 100000" ;;
esac
[ "$nreceipts" -ge 1 ] && [ "$nreceipts" -le 100000 ] || bench_fail "HUB_RECEIPTS must be a count, 1 to 100000"
for v in "$lat_s" "$rate_s"; do
	case $v in
	'' | *[!0-9]*) bench_fail "HUB_LAT_S and HUB_RATE_S must be seconds, 1 to 120" ;;
	esac
	[ "$v" -ge 1 ] && [ "$v" -le 120 ] || bench_fail "HUB_LAT_S and HUB_RATE_S must be seconds, 1 to 120"
done
perfd=$(bench_perfd "${1:-build/daemon/perfd}")
db=${2:-hub.db}
[ -f "$db" ] || bench_fail "no database '$db': make one with bench/hub-db.sh $db"
bench_need wrk "install it (apt-get install wrk)"
bench_need sqlite3 "install it (apt-get install sqlite3)"
bench_need curl "install it (apt-get install curl)"
bench_scratch
bench_mhd

serve_pid=
bare_pid=
hub_serve_pid=
bench_kill_at_exit serve_pid bare_pid hub_serve_pid

[ "$(sqlite3 "$db" "PRAGMA user_version")" -ge 8 ] ||
	bench_fail "'$db' is older than schema version 8: run a verb that writes to it first (perfd host clear x --db $db)"
sqlite3 "$db" "DELETE FROM receipts" || bench_fail "cannot drop the receipts stored in '$db'"
maxid=$(sqlite3 "$db" "SELECT max(id) FROM comparisons")
nproc_rec=$(sqlite3 "$db" "SELECT count(*) FROM processes")
ncomp=$(sqlite3 "$db" "SELECT count(*) FROM comparisons")
# The host and case pairs, from the loose index scan the hub uses too.
sqlite3 "$db" "SELECT DISTINCT host, case_name FROM comparisons" >"$SCRATCH/cells"
ncells=$(wc -l <"$SCRATCH/cells")
[ "$maxid" -ge 1 ] && [ "$ncells" -ge 1 ] || bench_fail "'$db' has no comparisons"

# Lua for wrk: each request picks its target; done() prints one line
# "p50_ms p99_ms requests_per_s requests errors non2xx".
lua_common='
local counter = 0
function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1000000) + tonumber(tostring({}):sub(8), 16) % 100000)
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %.3f %.3f %.1f %d %d %d\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests / (summary.duration / 1000000), summary.requests,
    e.connect + e.read + e.write + e.timeout, e.status))
end
'
{
	printf '%s\n' "$lua_common"
	echo "local maxid = $maxid"
	echo 'function request() return wrk.format("GET", "/api/v1/comparisons/" .. math.random(1, maxid)) end'
} >"$SCRATCH/receipt.lua"
tl_lua() {
	printf '%s\n' "$lua_common"
	echo "local cells = {"
	awk -F'|' '{ printf "  {\"%s\", \"%s\"},\n", $1, $2 }' "$SCRATCH/cells"
	echo "}"
	echo "local suffix = \"$1\""
	echo 'function request()'
	echo '  local c = cells[math.random(1, #cells)]'
	echo '  return wrk.format("GET", "/api/v1/timeline?host=" .. c[1] .. "&case=" .. c[2] .. suffix)'
	echo 'end'
}
tl_lua "&limit=100" >"$SCRATCH/timeline100.lua"
tl_lua "" >"$SCRATCH/timeline.lua"
{
	printf '%s\n' "$lua_common"
	echo 'function request() return wrk.format("GET", "/api/v1/comparisons") end'
} >"$SCRATCH/list.lua"
{
	printf '%s\n' "$lua_common"
	echo 'function request() return wrk.format("GET", "/") end'
} >"$SCRATCH/bare.lua"
# The done comparisons whose stored receipts are asked for.
sqlite3 "$db" "SELECT id FROM comparisons WHERE state = 'done' ORDER BY random() LIMIT $nreceipts" \
	>"$SCRATCH/stored-ids"
{
	printf '%s\n' "$lua_common"
	echo "local ids = {"
	sed 's/$/,/' "$SCRATCH/stored-ids"
	echo "}"
	echo 'function request() return wrk.format("GET", "/api/v1/comparisons/" .. ids[math.random(1, #ids)]) end'
} >"$SCRATCH/stored.lua"

# load NAME PORT LUA THREADS CONNECTIONS SECONDS: runs wrk, keeps its output
# in $SCRATCH/NAME.wrk and sets $res to its RESULT line's fields (p50 p99 rate requests errors non2xx).
load() {
	wrk -t"$4" -c"$5" -d"$6"s --timeout 5s --latency -s "$3" "http://127.0.0.1:$2" \
		>"$SCRATCH/$1.wrk" 2>&1 || { cat "$SCRATCH/$1.wrk" >&2; bench_fail "wrk failed ($1)"; }
	r=$(sed -n 's/^RESULT //p' "$SCRATCH/$1.wrk")
	[ -n "$r" ] || { cat "$SCRATCH/$1.wrk" >&2; bench_fail "no result from wrk ($1)"; }
	set -- $r
	[ "$5" = 0 ] && [ "$6" = 0 ] ||
		echo "warning: $1: $5 socket errors, $6 answers other than 2xx/3xx" >&2
	res=$r
}

echo "hub: $perfd"
echo "database: $db, $nproc_rec process records, $ncomp comparisons, $ncells host/case pairs," \
	"$(calc "$(stat -c %s "$db") / 1048576" "%.1f") MiB"
echo "machine: $(machine_line)"
echo "wrk: $(wrk --version 2>&1 | head -n 1 | cut -d' ' -f1-2); latency runs ${lat_s}s at -t1 -c1, rate runs ${rate_s}s at -t2 -c16;" \
	"$nreceipts stored receipts"
echo

# The hub, bounded in time: it gets SIGTERM after the loads at the latest.
bound=$((4 * lat_s + 3 * rate_s + 60))
timeout "$bound" "$perfd" serve --db "$db" --listen 127.0.0.1:0 >"$SCRATCH/serve.log" 2>&1 &
serve_pid=$!
port=$(bench_port "$SCRATCH/serve.log") || bench_fail_log "$SCRATCH/serve.log" "perfd serve did not start"
# timeout forks perfd: the hub's own pid is timeout's child.
hub_pid=$(pgrep -P "$serve_pid" | head -n 1)
[ -n "$hub_pid" ] || bench_fail "cannot find the perfd serve process"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/v1/comparisons/$maxid")
[ "$code" = 200 ] || bench_fail "GET /api/v1/comparisons/$maxid answered $code"
rss_start=$(awk '/^VmRSS/ { print $2 }' "/proc/$hub_pid/status")
echo "perfd serve on 127.0.0.1:$port (pid $hub_pid), VmRSS at start $(calc "$rss_start / 1024" "%.1f") MiB"

# Sizes of one answer of each kind.
size() {
	curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:$port$1"
}
first_cell=$(head -n 1 "$SCRATCH/cells")
h=${first_cell%%|*}
c=${first_cell#*|}
echo "answer sizes: receipt $(size "/api/v1/comparisons/$maxid") B," \
	"timeline limit=100 $(size "/api/v1/timeline?host=$h&case=$c&limit=100") B," \
	"timeline default $(size "/api/v1/timeline?host=$h&case=$c") B," \
	"list $(size /api/v1/comparisons) B"
echo

printf '%-28s %10s %10s %10s %10s\n' "latency (one at a time)" "p50 ms" "p99 ms" "req/s" requests
for what in receipt timeline100 timeline; do
	load "lat-$what" "$port" "$SCRATCH/$what.lua" 1 1 "$lat_s"
	set -- $res
	eval "p99_$what=\$2"
	printf '%-28s %10s %10s %10s %10s\n' "$what" "$1" "$2" "$3" "$4"
done
echo

printf '%-28s %10s %10s %10s %10s\n' "rate (-t2 -c16)" "p50 ms" "p99 ms" "req/s" requests
load rate-receipt "$port" "$SCRATCH/receipt.lua" 2 16 "$rate_s"
	set -- $res
rate_receipt=$3
printf '%-28s %10s %10s %10s %10s\n' "perfd receipt" "$1" "$2" "$3" "$4"
load rate-list "$port" "$SCRATCH/list.lua" 2 16 "$rate_s"
	set -- $res
rate_list=$3
printf '%-28s %10s %10s %10s %10s\n' "perfd list" "$1" "$2" "$3" "$4"

rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$hub_pid/status")
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$hub_pid/status")
bench_stop serve_pid

timeout $((rate_s + 30)) "$SCRATCH/bare-mhd" 0 $((rate_s + 20)) >"$SCRATCH/bare.log" 2>&1 &
bare_pid=$!
bport=$(bench_port "$SCRATCH/bare.log") || bench_fail_log "$SCRATCH/bare.log" "bare-mhd did not start"
load rate-bare "$bport" "$SCRATCH/bare.lua" 2 16 "$rate_s"
	set -- $res
rate_bare=$3
printf '%-28s %10s %10s %10s %10s\n' "bare libmicrohttpd" "$1" "$2" "$3" "$4"
bench_stop bare_pid
echo

# The hub, which stores each done receipt at its first ask.
printf '[hub]\ndatabase = %s\nlisten = 127.0.0.1:0\nhosts = bench\n' "$db" >"$SCRATCH/hub.conf"
timeout $((rate_s + 60 + nreceipts / 50)) "$perfd" serve --config "$SCRATCH/hub.conf" \
	>"$SCRATCH/hub.log" 2>&1 &
hub_serve_pid=$!
hport=$(bench_port "$SCRATCH/hub.log") || bench_fail_log "$SCRATCH/hub.log" "perfd serve --config did not start"
hub2_pid=$(pgrep -P "$hub_serve_pid" | head -n 1)
mkdir "$SCRATCH/receipts"
t0=$(date +%s.%N)
while read -r id; do
	code=$(curl -s -D "$SCRATCH/hdr" -o "$SCRATCH/receipts/$id.body" -w '%{http_code}' \
		"http://127.0.0.1:$hport/api/v1/comparisons/$id")
	[ "$code" = 200 ] || bench_fail "GET /api/v1/comparisons/$id answered $code"
	tr -d '\r' <"$SCRATCH/hdr" | sed -n 's/^ETag: //p' >"$SCRATCH/receipts/$id.etag"
done <"$SCRATCH/stored-ids"
t1=$(date +%s.%N)
nstored=$(sqlite3 "$db" "SELECT count(*) FROM receipts WHERE format = 'json'")
[ "$nstored" = "$nreceipts" ] || bench_fail "$nstored receipts stored of the $nreceipts asked for"
id=$(head -n 1 "$SCRATCH/stored-ids")
"$perfd" show --db "$db" --json "$id" | cmp -s - "$SCRATCH/receipts/$id.body" ||
	bench_fail "the stored receipt of $id is not perfd show --json $id"
echo "stored: $nreceipts receipts rendered and stored at their first ask in" \
	"$(calc "$t1 - $t0" "%.1f") s (curl, one at a time), $(du -sk "$SCRATCH/receipts" | cut -f1) KiB"
printf '%-28s %10s %10s %10s %10s\n' "rate (-t2 -c16)" "p50 ms" "p99 ms" "req/s" requests
load rate-stored "$hport" "$SCRATCH/stored.lua" 2 16 "$rate_s"
	set -- $res
rate_stored=$3
printf '%-28s %10s %10s %10s %10s\n' "perfd stored receipt" "$1" "$2" "$3" "$4"
hub_hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$hub2_pid/status")
bench_stop hub_serve_pid
timeout $((rate_s + 30)) "$SCRATCH/bare-mhd" 0 $((rate_s + 20)) "$SCRATCH/receipts" \
	>"$SCRATCH/bare2.log" 2>&1 &
bare_pid=$!
bport=$(bench_port "$SCRATCH/bare2.log") || bench_fail_log "$SCRATCH/bare2.log" "bare-mhd did not start"
load rate-bare-same "$bport" "$SCRATCH/stored.lua" 2 16 "$rate_s"
	set -- $res
rate_bare_same=$3
printf '%-28s %10s %10s %10s %10s\n' "bare, same bytes" "$1" "$2" "$3" "$4"
bench_stop bare_pid
echo

r_receipt=$(calc "$rate_receipt / $rate_bare" "%.3f")
r_list=$(calc "$rate_list / $rate_bare" "%.3f")
r_stored=$(calc "$rate_stored / $rate_bare_same" "%.3f")
echo "rate / bare: receipt $r_receipt, list $r_list; stored receipt / bare with the same bytes $r_stored"
echo "memory after the loads: VmRSS $(calc "$rss / 1024" "%.1f") MiB, VmHWM $(calc "$hwm / 1024" "%.1f") MiB"
echo

verdict() {
	awk "BEGIN { print ($1) ? \"met\" : \"missed\" }"
}
echo "target receipt p99 < 20 ms: $(verdict "$p99_receipt < 20") ($p99_receipt ms)"
echo "target timeline p99 < 20 ms, limit=100: $(verdict "$p99_timeline100 < 20") ($p99_timeline100 ms)"
echo "target timeline p99 < 20 ms, default limit: $(verdict "$p99_timeline < 20") ($p99_timeline ms)"
echo "target rate >= half the bare handler's, receipt: $(verdict "$r_receipt >= 0.5") ($r_receipt)"
echo "target rate >= half the bare handler's, list: $(verdict "$r_list >= 0.5") ($r_list)"
echo "target RSS < 64 MiB: $(verdict "$hwm < 65536") (VmHWM $(calc "$hwm / 1024" "%.1f") MiB; the hub storing receipts $(calc "$hub_hwm / 1024" "%.1f") MiB)"
echo "target stored receipts >= half the bare handler's with the same bytes: $(verdict "$r_stored >= 0.5") ($r_stored)"
echo "hub: receipt p99 $p99_receipt ms, timeline p99 $p99_timeline100 ms (limit 100) and $p99_timeline ms (default limit)," \
	"rate receipt $rate_receipt/s list $rate_list/s bare $rate_bare/s," \
	"stored receipt $rate_stored/s bare same bytes $rate_bare_same/s, VmHWM $(calc "$hwm / 1024" "%.1f") MiB"
