#!/bin/bash
# The dashboard in Debian's chromium (playwright-core, tests/browser/):
# the demo's database plus a comparison whose host and case names are
# markup, served by perfd serve on loopback; every page opened and checked
# against the API, a receipt recomputed before and after a stored gain is
# tampered with. Screenshots go to build/meson-logs/screenshots/.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$TESTS_DIR/.." && pwd)
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
need_vulkan
command -v glslc >/dev/null && command -v cc >/dev/null || { echo "glslc or cc missing: skipped"; exit 77; }
command -v node >/dev/null || { echo "node missing: skipped"; exit 77; }
[ -x "$CHROMIUM" ] || { echo "chromium missing: skipped"; exit 77; }
: "${PLANT:?PLANT must name the plant fixture}"
DB=$T/d/perfd.db
HOSTILE='<script>alert(1)</script>'
HOSTILE_CASE='<img src=x onerror=alert(2)>'
HOSTILE_HEAD='<script>alert(3)</script>'
# The screenshots outlive $T: beside meson's logs, in the build directory
# that holds $PERFD (BUILD/daemon/perfd).
SHOTS=$(cd "$(dirname "$PERFD")/.." && pwd)/meson-logs/screenshots

check "npm packages installed (./dev.sh build)" test -f "$SRC/node_modules/playwright-core/package.json"
check "Chart.js in web/static/vendor (./dev.sh build)" test -s "$SRC/web/static/vendor/chart.umd.js"

check "perfd demo --once" run 0 "$PERFD" demo --once --dir "$T/d"
check "a comparison with a hostile host and case name" run 0 "$PERFD" pair --db "$DB" \
	--host-name "$HOSTILE" --case "$HOSTILE_CASE" "$PLANT" "$PLANT" -- \
	--old 4392,4421,4113 --new 4362,4081,4218 --valid --digest c4759069c154
check "stored as given" eq 1 "$(sql "select count(*) from comparisons where host = '$HOSTILE'")"
# A branch named like markup, as a pull request could name one: the base
# step's job (it has no comparison, so nothing else changes).
sql "update jobs set head = '$HOSTILE_HEAD', subject = '$HOSTILE_CASE' where id = 1"

# A changed kernel from the third comparison on, as an upgrade between two
# heads would store it; the timeline must mark it.
cid=$(sql "select max(id) from comparisons where job_id is not null")
sql "update comparisons set fingerprint = replace(fingerprint, '\"kernel_release\":\"', '\"kernel_release\":\"9.9.9-upgraded-') where job_id is not null and id >= $cid - 1"
check "two fingerprints in the demo's comparisons" eq 2 "$(sql "select count(distinct fingerprint) from comparisons where job_id is not null")"
# The demo's builds are quiet; give the failed head's build a log with
# markup in it, as a compiler quoting source would print.
bid=$(sql "select c.head_build from comparisons c join jobs j on j.id = c.job_id where j.state = 'failed' limit 1")
sql "update builds set log = cast('cc -O2 -o demo demo.c' || char(10) || 'demo.c:3: warning: <script>alert(2)</script> & \"quotes\"' || char(10) as blob), log_bytes = 76 where id = $bid"
check "a log planted" eq 1 "$(sql "select count(*) from builds where id = $bid and length(log) > 0")"

"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 --static "$SRC/web/static" 2>"$T/serve.log" &
srv=$!
port=
for i in $(seq 100); do
	port=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$T/serve.log")
	[ -n "$port" ] && break
	sleep 0.1
done
check "perfd serve started" test -n "$port"

mkdir -p "$SHOTS"
rm -f "$SHOTS"/*.png
BASE=http://127.0.0.1:$port DB=$DB SHOTS=$SHOTS CHROMIUM=$CHROMIUM PROFILE=$T/profile HOSTILE=$HOSTILE HOSTILE_HEAD=$HOSTILE_HEAD HOSTILE_CASE=$HOSTILE_CASE \
	NODE_PATH="$SRC/node_modules" timeout 240 node "$SRC/tests/browser/dashboard.mjs" >"$T/browser.out" 2>&1
brc=$?
# Each line the browser test printed is a check here.
while IFS= read -r line; do
	case "$line" in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	*) echo "$line" ;;
	esac
done <"$T/browser.out"
check "the browser test exited 0" eq 0 "$brc"
for s in overview receipt receipt-verify-ok receipt-verify-mismatch timeline build head receipt-hostile receipt-aa; do
	check "screenshot $s.png kept" test -s "$SHOTS/$s.png"
done

kill -TERM "$srv"
wait "$srv"
check "perfd serve stopped on SIGTERM, exit 0" eq 0 $?
finish
