#!/bin/sh
# bench/changepoints.sh [PERFD] [DB]: the latency of GET /api/v1/changepoints
# on a series of 1000 points and one of 100, served by perfd, side by side
# in the same run with two peers: bench/bare-mhd.c answering the same bytes
# from memory (the HTTP floor of an answer that size), and the timeline of
# the same series (GET /api/v1/timeline with limit=1000, as the dashboard
# asks it: 1000 points with every process's value), once from perfd serve --db, which marks the default branch's
# change points on it and so runs the detection too, and once from a hub
# whose default branch has no job, where it does not.
#
# DB defaults to changepoints.db; when absent it is made first (about 1100
# runs of the real `perfd pair`, a minute or two): host "bench", 1000 head
# jobs of main (rows written with sqlite3), each given a comparison of case
# c1000 (3 pairs and no more, no warm-up, of a script printing the planted value it is
# given: the old arm the job before's, the new arm the job's), whose head medians are
# 10 ms, 10.5 ms from job 251, 10.2 ms from 501 and 11 ms from 751, and the
# newest 100 jobs a comparison of case c100 too, 10 ms and 10.5 ms from job
# 951; every value with a fixed noise of +-0.4% (the shell's integer
# arithmetic, as tests/lib.sh's noise_next). An existing DB is used as it
# is, after checking it holds both series.
#
# The three servers run at once on 127.0.0.1; then ROUNDS rounds each ask
# every target its share of requests in turn, one at a time over one kept
# connection (one curl per target and round, its time_total per request),
# so that a change in the machine's load reaches every target alike. The
# figures are the median and the 90th percentile (nearest rank) of each
# target's requests, in ms.
#
# Needs curl, sqlite3 and libmicrohttpd's headers (for bench/bare-mhd.c).
# The hub keeps the change points of the last 8 series asked for (they are
# a function of the values alone), so these requests, after the first, do
# not run the detection: the figures of a first request are those of the
# cold servers below, CP_COLD pairs of servers started afresh.
#
# Environment: CP_REQUESTS (requests per target, 300), CP_ROUNDS (10),
# CP_COLD (20), CC.
set -eu

. "$(dirname "$0")/lib.sh"

nreq=${CP_REQUESTS:-300}
rounds=${CP_ROUNDS:-10}
cold=${CP_COLD:-20}
for v in "$nreq" "$rounds" "$cold"; do
	case $v in
	'' | *[!0-9]*) bench_fail "CP_REQUESTS and CP_ROUNDS must be whole numbers" ;;
	esac
done
[ "$rounds" -ge 1 ] && [ "$rounds" -le 100 ] || bench_fail "CP_ROUNDS must be 1 to 100"
[ "$nreq" -ge "$rounds" ] && [ "$nreq" -le 100000 ] || bench_fail "CP_REQUESTS must be CP_ROUNDS to 100000"
[ "$cold" -ge 1 ] && [ "$cold" -le 1000 ] || bench_fail "CP_COLD must be 1 to 1000"
per=$((nreq / rounds))
perfd=$(bench_perfd "${1:-build/daemon/perfd}")
db=${2:-changepoints.db}
bench_need curl "install it (apt-get install curl)"
bench_need sqlite3 "install it (apt-get install sqlite3)"
bench_scratch
bench_mhd

serve_pid=
hub_pid=
bare_pid=
bench_kill_at_exit serve_pid hub_pid bare_pid

# The planted series' noise: -40..40 units of 0.01% in $z.
seed=20261
noise_next() {
	seed=$(((seed * 1103515245 + 12345) % 2147483648))
	z=$((seed / 65536 % 81 - 40))
}
noisy() {  # BASE in units of 0.0001 ms, with the noise, as "MS.FFFF"
	v=$(($1 + $1 * z / 10000))
	printf '%d.%04d' $((v / 10000)) $((v % 10000))
}

# point CASE OLD NEW: job $i's comparison of CASE, its arms printing OLD
# and NEW.
point() {
	"$perfd" pair --db "$db" --quiet --host-name bench --case "$1" --pairs 3 --max-pairs 3 --warmup 0 \
		--old-arg old --old-arg "$2" --new-arg new --new-arg "$3" \
		"$SCRATCH/prog" "$SCRATCH/prog" >/dev/null ||
		bench_fail "perfd pair failed ($1, job $i)"
}

make_db() {
	[ -e "$db" ] && bench_fail "'$db' exists"
	# The arm's name first: the two arms' arguments differ even where
	# their values are equal, so no comparison is taken for an A/A.
	printf '#!/bin/sh\necho "TIMING run_ms=$2"\n' >"$SCRATCH/prog"
	chmod +x "$SCRATCH/prog"
	echo "making $db: 1100 comparisons with perfd pair"
	t0=$(date +%s)
	prev1000=10.0000
	prev100=10.0000
	i=1
	while [ $i -le 1000 ]; do
		if [ $i -le 250 ]; then base=100000
		elif [ $i -le 500 ]; then base=105000
		elif [ $i -le 750 ]; then base=102000
		else base=110000
		fi
		noise_next
		val=$(noisy $base)
		point c1000 "$prev1000" "$val"
		prev1000=$val
		if [ $i -gt 900 ]; then
			base=100000
			[ $i -gt 950 ] && base=105000
			noise_next
			val=$(noisy $base)
			point c100 "$prev100" "$val"
			prev100=$val
		fi
		[ $((i % 100)) = 0 ] && echo "  $i of 1000 jobs' comparisons"
		i=$((i + 1))
	done
	# The jobs, 1 to 1000 in a new file, and each comparison's: the i-th
	# of c1000 job i, the i-th of c100 job 900 + i.
	sqlite3 -bail "$db" >/dev/null <<'SQL' || bench_fail "sqlite3 failed"
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
INSERT INTO jobs (id, head, commit_oid, base_oid, subject, state, created_at, started_at, finished_at)
SELECT i, 'main', printf('%040x', i), printf('%040x', i - 1), 'bench ' || i, 'done',
	strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ'), strftime('%Y-%m-%dT%H:%M:%fZ') FROM n;
UPDATE comparisons SET job_id = (SELECT count(*) FROM comparisons c2
	WHERE c2.case_name = comparisons.case_name AND c2.id <= comparisons.id)
	+ CASE case_name WHEN 'c100' THEN 900 ELSE 0 END;
COMMIT;
SQL
	echo "made in $(($(date +%s) - t0)) s"
}

[ -f "$db" ] || make_db
[ "$(sqlite3 "$db" "SELECT count(*) FROM comparisons c JOIN jobs j ON j.id = c.job_id
	WHERE c.host = 'bench' AND j.head = 'main' AND c.state = 'done' AND c.kind = 'compare'
	GROUP BY c.case_name ORDER BY 1" | tr '\n' ' ')" = "100 1000 " ] ||
	bench_fail "'$db' does not hold the series of 1000 and 100 points of host bench (remove it to make it again)"

bound=$((rounds * 120 + 120))
timeout "$bound" "$perfd" serve --db "$db" --listen 127.0.0.1:0 >"$SCRATCH/serve.log" 2>&1 &
serve_pid=$!
sport=$(bench_port "$SCRATCH/serve.log") || bench_fail_log "$SCRATCH/serve.log" "perfd serve --db did not start"
# The hub: its default branch has no job, so its timeline marks nothing.
printf '[hub]\ndatabase = %s\nlisten = 127.0.0.1:0\nhosts = bench\ndefault_branch = no-such-branch\n' \
	"$db" >"$SCRATCH/hub.conf"
timeout "$bound" "$perfd" serve --config "$SCRATCH/hub.conf" >"$SCRATCH/hub.log" 2>&1 &
hub_pid=$!
hport=$(bench_port "$SCRATCH/hub.log") || bench_fail_log "$SCRATCH/hub.log" "perfd serve --config did not start"

# The bytes perfd answers, for the peer; the answers checked.
get() {  # PORT PATH FILE
	code=$(curl -s -o "$3" -w '%{http_code}' "http://127.0.0.1:$1$2")
	[ "$code" = 200 ] || bench_fail "GET $2 answered $code"
}
mkdir "$SCRATCH/bare"
get "$sport" "/api/v1/changepoints?host=bench&case=c1000" "$SCRATCH/bare/1.body"
get "$sport" "/api/v1/changepoints?host=bench&case=c100" "$SCRATCH/bare/2.body"
: >"$SCRATCH/bare/1.etag"
: >"$SCRATCH/bare/2.etag"
cps() {  # FILE: "points: index index ..."
	sed -n 's/.*"points":\([0-9]*\),.*/\1/p' "$1" | head -n 1 | tr '\n' ':'
	grep -o '"index":[0-9]*' "$1" | sed 's/"index"://' | tr '\n' ' '
}
cp1000=$(cps "$SCRATCH/bare/1.body")
cp100=$(cps "$SCRATCH/bare/2.body")
get "$sport" "/api/v1/timeline?host=bench&case=c1000&limit=1000" "$SCRATCH/tl-marked"
get "$hport" "/api/v1/timeline?host=bench&case=c1000&limit=1000" "$SCRATCH/tl-plain"
marks=$(grep -o '"changepoint":true' "$SCRATCH/tl-marked" | wc -l)
plain_marks=$(grep -o '"changepoint":true' "$SCRATCH/tl-plain" | wc -l)
[ "$plain_marks" = 0 ] || bench_fail "the hub with no default branch marked $plain_marks change points"
timeout "$bound" "$SCRATCH/bare-mhd" 0 "$bound" "$SCRATCH/bare" >"$SCRATCH/bare.log" 2>&1 &
bare_pid=$!
bport=$(bench_port "$SCRATCH/bare.log") || bench_fail_log "$SCRATCH/bare.log" "bare-mhd did not start"
code=$(curl -s -o "$SCRATCH/bare-check" -w '%{http_code}' "http://127.0.0.1:$bport/api/v1/comparisons/1")
[ "$code" = 200 ] && cmp -s "$SCRATCH/bare-check" "$SCRATCH/bare/1.body" ||
	bench_fail "bare-mhd does not answer perfd's bytes"

size() { wc -c <"$1" | tr -d ' '; }
echo "perfd: $perfd"
echo "database: $db, $(sqlite3 "$db" "SELECT count(*) FROM comparisons") comparisons, $(sqlite3 "$db" "SELECT count(*) FROM processes") processes"
echo "machine: $(machine_line)"
echo "requests: $nreq per target, in $rounds rounds of $per, one at a time over one connection (curl $(curl --version | head -n 1 | cut -d' ' -f2))"
echo "series c1000: $cp1000(points: change point indexes); c100: $cp100"
echo "timeline c1000 (limit=1000): $(size "$SCRATCH/tl-marked") B with $marks marked, $(size "$SCRATCH/tl-plain") B from the hub"
echo

# The targets: name, port, path.
cat >"$SCRATCH/targets" <<EOF
cp1000 $sport /api/v1/changepoints?host=bench&case=c1000
bare1000 $bport /api/v1/comparisons/1
cp100 $sport /api/v1/changepoints?host=bench&case=c100
bare100 $bport /api/v1/comparisons/2
tl-marked $sport /api/v1/timeline?host=bench&case=c1000&limit=1000
tl-plain $hport /api/v1/timeline?host=bench&case=c1000&limit=1000
EOF
while read -r name port path; do
	: >"$SCRATCH/$name.ms"
	i=0
	while [ $i -lt "$per" ]; do
		printf 'url = "http://127.0.0.1:%s%s"\noutput = "/dev/null"\n' "$port" "$path"
		i=$((i + 1))
	done >"$SCRATCH/$name.curl"
	# A warm-up: the page cache, SQLite's, the first connection.
	curl -s -o /dev/null "http://127.0.0.1:$port$path"
done <"$SCRATCH/targets"
r=1
while [ $r -le "$rounds" ]; do
	while read -r name port path; do
		curl -s --config "$SCRATCH/$name.curl" -w '%{http_code} %{time_total}\n' >"$SCRATCH/$name.out" ||
			bench_fail "curl failed ($name)"
		awk -v n="$name" '$1 != 200 { print "warning: " n " answered " $1 > "/dev/stderr" }
			{ printf "%.3f\n", $2 * 1000 }' "$SCRATCH/$name.out" >>"$SCRATCH/$name.ms"
	done <"$SCRATCH/targets"
	r=$((r + 1))
done

# Cold: the first request of a server just started, whose cache of change
# points is empty, CP_COLD times: the marked timeline (serve --db, which
# runs the detection) beside the unmarked one (the hub, which does not),
# in turns.
cold_one() {  # NAME ARGS...: starts perfd serve ARGS, times its first timeline
	name=$1
	shift
	timeout 60 "$perfd" serve "$@" >"$SCRATCH/cold.log" 2>&1 &
	cold_pid=$!
	cport=$(bench_port "$SCRATCH/cold.log") || bench_fail_log "$SCRATCH/cold.log" "a cold server did not start"
	curl -s -o /dev/null -w '%{http_code} %{time_total}\n' \
		"http://127.0.0.1:$cport/api/v1/timeline?host=bench&case=c1000&limit=1000" |
		awk -v n="$name" '$1 != 200 { print "warning: " n " answered " $1 > "/dev/stderr" }
			{ printf "%.3f\n", $2 * 1000 }' >>"$SCRATCH/$name.ms"
	kill "$cold_pid" 2>/dev/null
	wait "$cold_pid" 2>/dev/null || true
}
: >"$SCRATCH/cold-marked.ms"
: >"$SCRATCH/cold-plain.ms"
c=1
while [ $c -le "$cold" ]; do
	cold_one cold-marked --db "$db" --listen 127.0.0.1:0
	cold_one cold-plain --config "$SCRATCH/hub.conf"
	c=$((c + 1))
done
printf 'cold-marked\ncold-plain\n' >"$SCRATCH/cold-targets"

p90() {  # the nearest-rank 90th percentile of the numbers on stdin
	sort -g | awk '{ v[NR] = $1 } END { k = int(NR * 0.9); if (k < NR * 0.9) k++; print v[k] }'
}
printf '%-44s %8s %10s %10s %9s\n' "target" requests "median ms" "p90 ms" bytes
while read -r name port path; do
	med=$(median <"$SCRATCH/$name.ms")
	p=$(p90 <"$SCRATCH/$name.ms")
	eval "med_$(echo "$name" | tr -- '-' '_')=\$med"
	case $name in
	cp1000) what="perfd changepoints, 1000 points"; bytes=$(size "$SCRATCH/bare/1.body") ;;
	bare1000) what="bare-mhd, the same bytes"; bytes=$(size "$SCRATCH/bare/1.body") ;;
	cp100) what="perfd changepoints, 100 points"; bytes=$(size "$SCRATCH/bare/2.body") ;;
	bare100) what="bare-mhd, the same bytes"; bytes=$(size "$SCRATCH/bare/2.body") ;;
	tl-marked) what="perfd timeline c1000, marked (serve --db)"; bytes=$(size "$SCRATCH/tl-marked") ;;
	tl-plain) what="perfd timeline c1000, unmarked (hub)"; bytes=$(size "$SCRATCH/tl-plain") ;;
	esac
	printf '%-44s %8s %10s %10s %9s\n' "$what" "$(wc -l <"$SCRATCH/$name.ms" | tr -d ' ')" "$med" "$p" "$bytes"
done <"$SCRATCH/targets"
while read -r name; do
	med=$(median <"$SCRATCH/$name.ms")
	p=$(p90 <"$SCRATCH/$name.ms")
	eval "med_$(echo "$name" | tr -- '-' '_')=\$med"
	case $name in
	cold-marked) what="cold: timeline c1000, marked (serve --db)" ;;
	cold-plain) what="cold: timeline c1000, unmarked (hub)" ;;
	esac
	printf '%-44s %8s %10s %10s %9s\n' "$what" "$(wc -l <"$SCRATCH/$name.ms" | tr -d ' ')" "$med" "$p" ""
done <"$SCRATCH/cold-targets"
echo
echo "changepoints over the bare answer of the same bytes: 1000 points $(calc "$med_cp1000 - $med_bare1000") ms," \
	"100 points $(calc "$med_cp100 - $med_bare100") ms (medians)"
echo "the timeline's marks cost $(calc "$med_tl_marked - $med_tl_plain") ms (median, marked less unmarked)"
det=$(calc "$med_cold_marked - $med_cold_plain")
echo "target: the detection at 1000 points, uncached, under 50 ms: $(awk "BEGIN { print ($det < 50) ? \"met\" : \"missed\" }") ($det ms)"
