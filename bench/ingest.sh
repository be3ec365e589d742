#!/bin/sh
# bench/ingest.sh [PERFD [N]]: how many comparisons of 12 processes a
# second the hub accepts (POST /api/v1/ingest/comparisons, docs/hub.md),
# against SQLite inserting the same rows, in the same run (issue 12: at
# least 0.5x).
#
# One comparison of 6 pairs (12 processes, no warm-up) of bench/noisy.c is
# made with `perfd pair` and exported (`perfd export`); a hub (`perfd serve
# --config`, plain HTTP on 127.0.0.1, one host and its token) is started on
# a fresh database; bench/ingest.py then POSTs N (default 500) copies of
# the record, each with its own id and sha256, on one keep-alive
# connection, and inserts the rows the hub stored for one of them N times
# into an empty database of the same schema with Python's sqlite3, a
# transaction per comparison, as the hub does. Both rates are printed, and
# their ratio against the target. Needs python3 and sqlite3.
set -eu

. "$(dirname "$0")/lib.sh"

PERFD=$(bench_perfd "${1:-build/daemon/perfd}")
N=${2:-500}
bench_need python3 "apt-get install python3"
bench_need sqlite3 "apt-get install sqlite3"
bench_scratch
bench_cc noisy -lm
cd "$SCRATCH"

"$PERFD" pair --db agent.db --host-name bench --case ingest --pairs 6 --max-pairs 6 \
	--warmup 0 --new-arg --slow --new-arg 5 ./noisy ./noisy -- --units 2 >/dev/null 2>&1 ||
	bench_fail "perfd pair could not make the comparison to send"
"$PERFD" export --db agent.db 1 >record.json || bench_fail "perfd export failed"

bench_hub bench
sqlite3 hub.db .schema | sqlite3 raw.db

echo "machine: $(machine_line)"
echo "record: $(wc -c <record.json) bytes, $(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["processes"]))' record.json) processes; $N comparisons each way"
python3 "$BENCH_DIR/ingest.py" record.json "$URL" "$TOKEN" hub.db raw.db "$N" >rates.txt ||
	bench_fail "bench/ingest.py failed"
hub=$(awk '$1 == "hub" { print $3 }' rates.txt)
raw=$(awk '$1 == "raw" { print $3 }' rates.txt)
echo "hub ingest:  $hub comparisons/s ($(awk '$1 == "hub" { print $2 }' rates.txt) s)"
echo "raw SQLite:  $raw comparisons/s ($(awk '$1 == "raw" { print $2 }' rates.txt) s)"
ratio=$(calc "$hub / $raw")
echo "ratio: $ratio; target at least 0.5: $(awk "BEGIN { print ($ratio >= 0.5) ? \"met\" : \"missed\" }")"
echo "stored at the hub: $(sqlite3 hub.db 'select count(*) from comparisons') comparisons, $(sqlite3 hub.db 'select count(*) from processes') processes"
