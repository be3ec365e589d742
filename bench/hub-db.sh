#!/bin/sh
# bench/hub-db.sh OUT.db [PROCESSES]: generates a perfd database for the
# hub benchmark (bench/hub.sh) with PROCESSES process records (1000000 by
# default; a multiple of 400).
#
# The file starts as a genuine perfd database: the real `perfd pair` runs
# once (3 pairs) on a small script that prints a TIMING metric and a DIGEST,
# so the schema is the current version and comparison 1 is a real one. The
# rest is bulk-inserted with the sqlite3 CLI in one transaction, shaped like
# the agent's history: 4 hosts x 5 cases, one job per commit of "main"
# (PROCESSES / 400 commits: 2,500 by default), for each host a head build
# per commit with its artifact and log, and for each host, case and commit
# one comparison of 10 pairs (20 processes, old against the previous
# commit's build) with a run_ms metric row, a digest and the stdout each
# process printed.
#
# Derived figures are computed in SQL exactly as the rule pairs-median/1
# (docs/rule.md) does: pair gains, medians (the mean of the two middle
# values), min, max, spread, the sign test at 10 pairs (8 in one
# direction), the verdict and the noisy flag. The values are made so that
# no comparison is unresolved (gains of +5%, -3% or 0 with per-process
# noise of at most +-0.3%), so no reason text is needed; the script ends by
# running `perfd verify` on a few ids spread over the range, and says
# whether they match. Values come from a hash of the row id, so two runs
# give the same figures (commit ids and timestamps aside).
#
# Needs: sqlite3 (the CLI), a built perfd (PERFD, default
# build/daemon/perfd). Prints the time taken and the file's size.
set -eu

. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] && [ $# -le 2 ] || bench_fail "usage: bench/hub-db.sh OUT.db [PROCESSES]"
out=$1
nproc_records=${2:-1000000}
case $nproc_records in
'' | *[!0-9]*) bench_fail "PROCESSES must be a whole number" ;;
esac
[ "$nproc_records" -ge 400 ] && [ $((nproc_records % 400)) -eq 0 ] ||
	bench_fail "PROCESSES must be a multiple of 400 (4 hosts x 5 cases x 20 processes)"
commits=$((nproc_records / 400))
perfd=$(bench_perfd "${PERFD:-build/daemon/perfd}")
bench_need sqlite3 "install it (apt-get install sqlite3)"
[ -e "$out" ] && bench_fail "'$out' exists: give a new file"
bench_scratch

start=$(date +%s.%N)

# The real comparison: the schema at the current version, and rows to
# imitate.
cat >"$SCRATCH/prog" <<'EOF'
#!/bin/sh
echo "TIMING run_ms=1.5"
echo "DIGEST 9f86d081884c7d65"
EOF
chmod +x "$SCRATCH/prog"
"$perfd" pair --pairs 3 --db "$out" --quiet --case case0 --host-name host0 \
	"$SCRATCH/prog" "$SCRATCH/prog" >/dev/null || bench_fail "perfd pair failed"

sqlite3 -bail "$out" >/dev/null <<EOF || bench_fail "sqlite3 failed"
PRAGMA synchronous = OFF;
PRAGMA cache_size = -262144;
PRAGMA temp_store = MEMORY;
BEGIN;
CREATE TEMP TABLE p (commits INTEGER, t0 REAL, fp TEXT);
INSERT INTO p SELECT $commits, julianday('2026-01-01T00:00:00'),
  (SELECT fingerprint FROM comparisons WHERE id = 1);

-- One job per commit of main, 20 minutes apart.
CREATE TEMP TABLE k (i INTEGER PRIMARY KEY, oid TEXT);
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < (SELECT commits FROM p))
INSERT INTO k SELECT i, lower(hex(randomblob(20))) FROM n;
INSERT INTO jobs (id, head, commit_oid, base_oid, subject, state, detail, created_at,
                  started_at, finished_at)
SELECT k.i, 'main', k.oid, b.oid, printf('commit %d: tune the inner loop', k.i), 'done', NULL,
  strftime('%Y-%m-%dT%H:%M:%fZ', p.t0 + k.i / 72.0),
  strftime('%Y-%m-%dT%H:%M:%fZ', p.t0 + k.i / 72.0 + 1 / 86400.0),
  strftime('%Y-%m-%dT%H:%M:%fZ', p.t0 + k.i / 72.0 + 900 / 86400.0)
FROM k JOIN k b ON b.i = k.i - 1, p;

-- Hosts 0 to 3; a head build of every commit (0 is the first base) on
-- each, with its artifact and a short log. Build id = commit * 4 + host + 1.
CREATE TEMP TABLE h (h INTEGER PRIMARY KEY, name TEXT);
INSERT INTO h VALUES (0, 'host0'), (1, 'host1'), (2, 'host2'), (3, 'host3');
INSERT INTO artifacts (id, path, size, sha256)
SELECT 100 + k.i * 4 + h.h, printf('/var/lib/perfd/builds/%s/%s/prog', h.name, k.oid),
  16000 + k.i % 97, lower(hex(randomblob(32)))
FROM k, h;
INSERT INTO builds (id, host, commit_oid, tree_oid, recipe_hash, state, dir, started_at,
                    finished_at, exit_code, signal, timed_out, wall_ms, log, log_bytes,
                    toolchain, fingerprint, detail)
SELECT k.i * 4 + h.h + 1, h.name, k.oid, lower(hex(randomblob(20))), 'b7c1e0a9d2f3', 'done',
  printf('/var/lib/perfd/builds/%s/%s', h.name, k.oid),
  strftime('%Y-%m-%dT%H:%M:%fZ', p.t0 + k.i / 72.0 + 2 / 86400.0),
  strftime('%Y-%m-%dT%H:%M:%fZ', p.t0 + k.i / 72.0 + 40 / 86400.0),
  0, 0, 0, 38000 + k.i % 1000,
  CAST(printf('cc -O2 -o prog prog.c\nbuilt %s on %s\n', k.oid, h.name) AS BLOB), 60,
  'cc (Debian 12.2.0-14) 12.2.0', replace(p.fp, '"host0"', '"' || h.name || '"'), NULL
FROM k, h, p;
INSERT INTO build_artifacts (build_id, name, artifact_id)
SELECT k.i * 4 + h.h + 1, 'prog', 100 + k.i * 4 + h.h FROM k, h;

-- Comparisons: commit i >= 1, host h, case c; id = 1 + ((i-1)*4 + h)*5 + c + 1.
-- g is the true gain: 0 for 70%, +5% for 15%, -3% for 15% (by a hash of id).
CREATE TEMP TABLE c (id INTEGER PRIMARY KEY, i INTEGER, h INTEGER, cs INTEGER, g REAL, base REAL);
INSERT INTO c
SELECT id, i, h, cs,
  CASE WHEN ((id * id * 7919 + id * 104729) % 1000003) % 100 < 70 THEN 0.0
       WHEN ((id * id * 7919 + id * 104729) % 1000003) % 100 < 85 THEN 0.05 ELSE -0.03 END,
  (100.0 * (cs + 1)) * (1 + 0.1 * h) * (1 + 0.00002 * i)
FROM (SELECT 2 + ((k.i - 1) * 4 + h.h) * 5 + cs.c AS id, k.i AS i, h.h AS h, cs.c AS cs
      FROM k, h, (SELECT 0 AS c UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
                  UNION ALL SELECT 4) cs
      WHERE k.i >= 1);
INSERT INTO comparisons (id, created_at, finished_at, state, rule, case_name, metric_requested,
  metric, host, fingerprint, old_artifact, new_artifact, pairs, warmup, timeout_s, min_effect,
  noise, args, job_id, base_build, head_build)
SELECT c.id,
  strftime('%Y-%m-%dT%H:%M:%fZ', p.t0 + c.i / 72.0 + (60 + c.cs * 30) / 86400.0),
  strftime('%Y-%m-%dT%H:%M:%fZ', p.t0 + c.i / 72.0 + (60 + c.cs * 30 + 25) / 86400.0),
  'done', 'pairs-median/1', 'case' || c.cs, NULL, 'run_ms', h.name,
  replace(p.fp, '"host0"', '"' || h.name || '"'),
  100 + (c.i - 1) * 4 + c.h, 100 + c.i * 4 + c.h, 10, 0, 600.0, 0.01, 0.05,
  printf('{"old":{"argv":["/var/lib/perfd/builds/%s/base/prog","--case","case%d"],"env":[]},'
         || '"new":{"argv":["/var/lib/perfd/builds/%s/head/prog","--case","case%d"],"env":[]},"env":[]}',
         h.name, c.cs, h.name, c.cs),
  c.i, (c.i - 1) * 4 + c.h + 1, c.i * 4 + c.h + 1
FROM c JOIN h ON h.h = c.h, p;

-- Processes: 20 per comparison in the rule's order (old, new, new, old,
-- ...); process id = (comparison id - 2) * 20 + seq + 100.
-- e is the process's noise, within +-0.3%, from a hash of its id; the
-- value is rounded to 6 decimals, as the printed TIMING line it is read from.
CREATE TEMP TABLE pr (id INTEGER PRIMARY KEY, cid INTEGER, seq INTEGER, arm TEXT, pair INTEGER,
                      v REAL, t REAL);
WITH RECURSIVE s(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM s WHERE seq < 20)
INSERT INTO pr
SELECT id, cid, seq, arm, pair,
  CAST(printf('%.6f', base * (CASE arm WHEN 'new' THEN 1 - g ELSE 1 END)
       * (1 + (((id * id * 7919 + id * 104729) % 1000003) / 1000003.0 - 0.5) * 0.006)) AS REAL),
  t
FROM (SELECT (c.id - 2) * 20 + s.seq + 100 AS id, c.id AS cid, s.seq AS seq,
        CASE WHEN ((s.seq + 1) / 2) % 2 = s.seq % 2 THEN 'old' ELSE 'new' END AS arm,
        (s.seq + 1) / 2 AS pair, c.g AS g, c.base AS base,
        p.t0 + c.i / 72.0 + (60 + c.cs * 30 + s.seq * 1.2) / 86400.0 AS t
      FROM c, s, p);
INSERT INTO processes (id, comparison_id, seq, arm, pair, warmup, state, started_at, ended_at,
  exit_code, signal, timed_out, spawn_error, wall_ms, user_ms, sys_ms, maxrss_kb, cpus, digest,
  record_valid, stdout_bytes, stderr_bytes, fault, fault_watch, valid, invalid_reason)
SELECT id, cid, seq, arm, pair, 0, 'done',
  strftime('%Y-%m-%dT%H:%M:%fZ', t), strftime('%Y-%m-%dT%H:%M:%fZ', t + (v + 3.1) / 86400000.0),
  0, 0, 0, NULL, v + 3.1, v * 0.97, v * 0.02, 11000 + id % 500, NULL, '9f86d081884c7d65',
  0, 14 + length(printf('%.6f', v)) + 1 + 24, 0, NULL, NULL, 1, NULL
FROM pr;
INSERT INTO metrics (process_id, name, value) SELECT id, 'run_ms', v FROM pr;
INSERT INTO process_output (process_id, stdout, stderr)
SELECT id, CAST(printf('TIMING run_ms=%.6f' || char(10) || 'DIGEST 9f86d081884c7d65' || char(10), v)
  AS BLOB), X'' FROM pr;

-- The rule: pair gains, then medians over 10 values (the mean of the 5th
-- and 6th), min, max, spread, the sign test (8 of 10) and the verdict.
CREATE TEMP TABLE pg (cid INTEGER, pair INTEGER, o REAL, n REAL, gain REAL,
                      PRIMARY KEY (cid, pair));
INSERT INTO pg
SELECT cid, pair, o, n, (o - n) / o FROM
 (SELECT cid, pair, max(CASE arm WHEN 'old' THEN v END) AS o,
         max(CASE arm WHEN 'new' THEN v END) AS n
  FROM pr GROUP BY cid, pair);
INSERT INTO pair_gains (comparison_id, pair, gain) SELECT cid, pair, gain FROM pg;
CREATE TEMP TABLE med (cid INTEGER PRIMARY KEY, gm REAL, om REAL, nm REAL);
INSERT INTO med
SELECT cid,
  (sum(CASE WHEN rg IN (5, 6) THEN gain END)) / 2.0,
  (sum(CASE WHEN ro IN (5, 6) THEN o END)) / 2.0,
  (sum(CASE WHEN rn IN (5, 6) THEN n END)) / 2.0
FROM (SELECT cid, gain, o, n,
        row_number() OVER (PARTITION BY cid ORDER BY gain) AS rg,
        row_number() OVER (PARTITION BY cid ORDER BY o) AS ro,
        row_number() OVER (PARTITION BY cid ORDER BY n) AS rn
      FROM pg)
GROUP BY cid;
CREATE TEMP TABLE sm (cid INTEGER PRIMARY KEY, gm REAL, gmin REAL, gmax REAL, om REAL, omin REAL,
  omax REAL, nm REAL, nmin REAL, nmax REAL, pos INTEGER, neg INTEGER, small INTEGER);
INSERT INTO sm
SELECT pg.cid, med.gm, min(gain), max(gain), med.om, min(o), max(o), med.nm, min(n), max(n),
  sum(gain > 0), sum(gain < 0), sum(abs(gain) < 0.01)
FROM pg JOIN med ON med.cid = pg.cid GROUP BY pg.cid;
UPDATE comparisons SET
  verdict = (SELECT CASE WHEN pos >= 8 AND gm >= 0.01 THEN 'faster'
                         WHEN neg >= 8 AND -gm >= 0.01 THEN 'slower'
                         WHEN small = 10 THEN 'unchanged' ELSE 'unresolved' END
             FROM sm WHERE cid = comparisons.id),
  gain_median = (SELECT gm FROM sm WHERE cid = comparisons.id),
  gain_min = (SELECT gmin FROM sm WHERE cid = comparisons.id),
  gain_max = (SELECT gmax FROM sm WHERE cid = comparisons.id),
  old_median = (SELECT om FROM sm WHERE cid = comparisons.id),
  old_min = (SELECT omin FROM sm WHERE cid = comparisons.id),
  old_max = (SELECT omax FROM sm WHERE cid = comparisons.id),
  old_spread = (SELECT (omax - omin) / abs(om) FROM sm WHERE cid = comparisons.id),
  new_median = (SELECT nm FROM sm WHERE cid = comparisons.id),
  new_min = (SELECT nmin FROM sm WHERE cid = comparisons.id),
  new_max = (SELECT nmax FROM sm WHERE cid = comparisons.id),
  new_spread = (SELECT (nmax - nmin) / abs(nm) FROM sm WHERE cid = comparisons.id),
  digests_equal = 1
WHERE id >= 2;
INSERT INTO comparison_notes (comparison_id, kind, idx, text)
SELECT id, 'flag', 0, 'noisy' FROM comparisons
WHERE id >= 2 AND NOT (old_spread <= noise AND new_spread <= noise);
COMMIT;
ANALYZE;
PRAGMA wal_checkpoint(TRUNCATE);
EOF

end=$(date +%s.%N)
unresolved=$(sqlite3 "$out" "SELECT count(*) FROM comparisons WHERE verdict = 'unresolved' AND id >= 2")
[ "$unresolved" = 0 ] ||
	echo "warning: $unresolved generated comparisons are unresolved and have no reasons stored" >&2
ncomp=$(sqlite3 "$out" "SELECT count(*) FROM comparisons")
last=$(sqlite3 "$out" "SELECT max(id) FROM comparisons")
echo "hub-db: $out: $(sqlite3 "$out" "SELECT count(*) FROM processes") process records," \
	"$ncomp comparisons (ids 1 to $last), $commits jobs," \
	"$(sqlite3 "$out" "SELECT count(*) FROM builds") builds"
echo "verdicts: $(sqlite3 -separator ' ' "$out" "SELECT group_concat(v || ' ' || n, ', ') FROM (SELECT verdict AS v, count(*) AS n FROM comparisons GROUP BY 1 ORDER BY 1)")"
echo "time: $(calc "$end - $start" "%.1f") s; size: $(du -k "$out" | cut -f1) KiB ($(calc "$(stat -c %s "$out") / 1048576" "%.1f") MiB)"

# perfd verify on ids spread over the range, the real one included.
ids="1 2 $(( (last + 2) / 3 )) $(( last / 2 )) $(( (2 * last) / 3 )) $last"
if "$perfd" verify --db "$out" $ids >"$SCRATCH/verify" 2>&1; then
	echo "perfd verify $ids: every figure matches"
else
	echo "perfd verify $ids: MISMATCH" >&2
	cat "$SCRATCH/verify" >&2
	exit 1
fi
