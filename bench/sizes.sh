#!/bin/sh
# bench/sizes.sh [PERFD [N]]: the bytes a comparison and a process take in
# an agent's database and at the hub, for docs/scaling.md.
#
# N (default 200) comparisons of 10 pairs and 1 warm-up pair (22 processes
# each) of a program printing 164 bytes (two lines of its own, two TIMING
# lines, a DIGEST, TIMING_RECORD_VALID) over 5 cases, made with perfd pair;
# then each pushed to a hub (perfd serve --config, plain HTTP on
# 127.0.0.1) as an agent does: the record perfd export prints, without
# output. Prints each file's size, each table's and index's pages by
# sqlite3's dbstat (those of more than one page), and the bytes per
# comparison. Needs sqlite3 (with
# dbstat, as Debian's is) and curl.
set -eu

. "$(dirname "$0")/lib.sh"

PERFD=$(bench_perfd "${1:-build/daemon/perfd}")
N=${2:-200}
bench_need sqlite3 "apt-get install sqlite3"
bench_need curl "apt-get install curl"
bench_scratch
cd "$SCRATCH"

cat >prog <<'SH'
#!/bin/sh
echo "blit: 4096x4096 RGBA8, 64 iterations"
echo "blit: device llvmpipe, shader v2"
echo "TIMING run2_ms=4392.0"
echo "TIMING decode_us=128.5"
echo "DIGEST c4759069c154"
echo "TIMING_RECORD_VALID"
SH
chmod +x prog
for i in $(seq "$N"); do
	"$PERFD" pair --db agent.db --quiet --case "c$((i % 5))" --host-name m1 --pairs 10 \
		--max-pairs 10 --warmup 1 --metric run2_ms ./prog ./prog >/dev/null 2>&1 ||
		bench_fail "perfd pair failed"
done

bench_hub m1
for i in $(seq "$N"); do
	"$PERFD" export --db agent.db "$i" | curl -sf -o /dev/null -H "Authorization: Bearer $TOKEN" \
		--data-binary @- "$URL/api/v1/ingest/comparisons" || bench_fail "comparison $i was refused"
done
bench_stop srv

echo "machine: $(machine_line)"
procs=$(sqlite3 agent.db "select count(*) from processes")
for f in agent hub; do
	sqlite3 "$f.db" "pragma wal_checkpoint(truncate)" >/dev/null
	bytes=$(wc -c <"$f.db")
	echo "$f.db: $bytes bytes, $N comparisons, $procs processes, $(calc "$bytes / $N / 1000" %.1f) KB a comparison"
	sqlite3 -separator ' ' "$f.db" "select name, sum(pgsize) from dbstat group by name having sum(pgsize) > 4096 order by 2 desc" |
		while read -r name size; do printf '  %-36s %10s\n' "$name" "$size"; done
done
