#!/usr/bin/env bash
# The canary on a GPU host, through perfd pair: the spread of each canary
# shape over 12 fresh processes, a planted 1% slow-down (the q4 shape doing
# 1% more dispatches with the same result), and five A/A comparisons.
#
#   bench/gpu-canary.sh [PERFD] [PROFILE] [OUTDIR]
#     PERFD    the perfd binary (default build/daemon/perfd)
#     PROFILE  a host profile (default hosts/h200.conf)
#     OUTDIR   where the database and receipts go (default /tmp/perfd-gpu)
#   SCALE=N    the canary's work size (default 16); PAIRS=N pairs for the
#              planted slow-down (default 9); AA_PAIRS=N for each A/A (default 5)
set -eu
PERFD=${1:-build/daemon/perfd}
PROFILE=${2:-hosts/h200.conf}
OUT=${3:-/tmp/perfd-gpu}
SCALE=${SCALE:-16}
PAIRS=${PAIRS:-9}
AA_PAIRS=${AA_PAIRS:-5}
mkdir -p "$OUT"
DB=$OUT/gpu.db
rm -f "$DB" "$DB"-wal "$DB"-shm

"$PERFD" probe --json >"$OUT/probe.json"
"$PERFD" probe --host "$PROFILE"
echo "== one canary at scale $SCALE"
/usr/bin/env time -f "wall %e s" "$PERFD" canary --host "$PROFILE" --scale "$SCALE" 2>&1 |
	tee "$OUT/canary.txt"

pair() {
	"$PERFD" pair --db "$DB" --host "$PROFILE" --metric q4_matvec_ms --json --quiet "$@"
}
echo "== spread: 12 fresh processes (A/A, 6 pairs)"
pair --case canary-spread --pairs 6 "$PERFD" "$PERFD" -- canary --host "$PROFILE" --scale "$SCALE" \
	>"$OUT/spread.json" || true
echo "== planted slow-down: new does 1% more q4 dispatches ($PAIRS pairs)"
pair --case canary-extra-1pct --pairs "$PAIRS" --new-arg --extra-work --new-arg 1 \
	"$PERFD" "$PERFD" -- canary --host "$PROFILE" --scale "$SCALE" >"$OUT/extra1.json" || true
for i in 1 2 3 4 5; do
	echo "== A/A $i ($AA_PAIRS pairs)"
	pair --case "canary-aa-$i" --pairs "$AA_PAIRS" "$PERFD" "$PERFD" -- canary --host "$PROFILE" \
		--scale "$SCALE" >"$OUT/aa$i.json" || true
done
"$PERFD" verify --db "$DB"

python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import json, os, statistics, sys
out = sys.argv[1]
def load(name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)
s = load("spread.json")
print("spread over %d fresh processes (device %s)" % (len(s["processes"]),
      s["fingerprint"]["devices"][0]["name"] if s.get("fingerprint") and s["fingerprint"]["devices"] else "?"))
for m in ("copy_ms", "q4_matvec_ms"):
    v = [p["metrics"][m] for p in s["processes"] if m in p["metrics"]]
    if v:
        med = statistics.median(v)
        print("  %-13s median %.4f  min %.4f  max %.4f  spread %.3f%%" % (m, med, min(v), max(v), (max(v)-min(v))/med*100))
e = load("extra1.json")
g = [p["gain"] for p in e["pairs"]]
print("1%% more work: verdict %s, gain median %s, pair gains %s" % (e["verdict"],
      "%.3f%%" % (e["gain"]["median"]*100) if e["gain"]["median"] is not None else "-",
      ", ".join("%.3f%%" % (x*100) for x in g if x is not None)))
print("   reasons: %s" % e["reasons"])
for i in range(1, 6):
    a = load("aa%d.json" % i)
    print("A/A %d: verdict %s, gain median %s, flags %s" % (i, a["verdict"],
          "%.3f%%" % (a["gain"]["median"]*100) if a["gain"]["median"] is not None else "-", a["flags"]))
PY
