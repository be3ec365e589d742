#!/bin/bash
# perfd serve on loopback: every endpoint's status, type and content against
# what perfd show and the database hold; CSV, paging, filters, 404, 400 for
# each kind of bad parameter, 405, path traversal, ETag, escaping of a case
# and a branch named <script>, /metrics, verify before and after tampering,
# receipts stored once by a server that writes (and what is not stored),
# and a clean stop on SIGTERM.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"
command -v curl >/dev/null || { echo "curl missing: skipped"; exit 77; }

XSS='<script>alert(1)</script>"q'\''s'
# The posted rows, each arm with its own; B60 as posted (one stage of 3
# pairs), M1 through the stages (faster once 12 pairs agree).
B60="--max-pairs 3 --old-arg --old --old-arg 4392,4421,4113 --new-arg --new --new-arg 4362,4081,4218"
B60_ARGS="--digest c4759069c154 --valid"
M1="--old-arg --old --old-arg 2089,2093,2103 --new-arg --new --new-arg 1955,1965,1951"
pair() { "$PERFD" pair --db "$DB" --json --host-name lavapipe --warmup 0 "$@" >"$T/pair.json" \
	2>"$T/pair.err" && js "$T/pair.json" 'd["comparison"]'; }
c1=$(pair $B60 "$PLANT" "$PLANT" -- $B60_ARGS)
c2=$(pair --case "$XSS" $M1 "$PLANT" "$PLANT")
c3=$(pair --case "$XSS" $M1 "$PLANT" "$PLANT")
c4=$(pair --case other $M1 "$PLANT" "$PLANT")
c5=$(pair $M1 "$PLANT" "$PLANT")
check "five comparisons stored" eq "1 2 3 4 5" "$c1 $c2 $c3 $c4 $c5"

# A small agent run, as t0400 makes one, on a branch named <script>: jobs,
# builds and runner results.
agent=no
if command -v git >/dev/null && command -v cc >/dev/null; then
	agent=yes
	new_src
	printf '#!/bin/sh\necho "RESULT contract stage=1 on \\"cpu\\": passed=2 total=2"\necho "SUMMARY all good"\n' >"$SRC/check.sh"
	chmod +x "$SRC/check.sh"
	work_prog "$SRC/prog.c" 1000000 7
	git -C "$SRC" add -A && git -C "$SRC" commit -qm "base"
	git -C "$SRC" checkout -q -b "feature/<script>alert(1)</script>"
	work_prog "$SRC/prog.c" 500000 7
	git -C "$SRC" commit -qam "<script>alert(2)</script> fewer rounds"
	CH=$(git -C "$SRC" rev-parse HEAD)
	git -C "$SRC" checkout -q main
	{ agent_repo branches="feature/*"; echo; work_suite; } >agent.conf
	check "agent --once" run 0 "$PERFD" agent --config agent.conf --once
	job=$(sql "select id from jobs where commit_oid = '$CH'")
	ca=$(sql "select id from comparisons where job_id = $job")
	hb=$(sql "select head_build from comparisons where id = $ca")
	bb=$(sql "select base_build from comparisons where id = $ca")
	check "the agent's comparison exists" test -n "$ca"
fi

# port 0: the server picks one and names it in its first line.
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>"$T/serve.err" &
srv=$!
URL=$(served "$T/serve.err")
check "the first line names the URL" test -n "$URL"

# get [CURL ARGS] URL: the body in $T/body, headers in $T/hdr; prints the status.
get() { rm -f "$T/body"; : >"$T/body"; curl -s --path-as-is -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@"; }
hdr() { tr -d '\r' <"$T/hdr" | sed -n "s/^$1: //Ip" | head -n 1; }
api_ok() {  # api_ok PATH: 200, JSON, no-store, nosniff
	[ "$(get "$URL$1")" = 200 ] && [ "$(hdr Content-Type)" = application/json ] &&
		[ "$(hdr Cache-Control)" = no-store ] && [ "$(hdr X-Content-Type-Options)" = nosniff ]
}
status() { get "$@" >"$T/status"; cat "$T/status"; }
receipt_ok() {  # receipt_ok URL: 200, JSON, an ETag, no-cache, nosniff
	[ "$(get "$1")" = 200 ] && [ "$(hdr Content-Type)" = application/json ] &&
		[ -n "$(hdr ETag)" ] && [ "$(hdr Cache-Control)" = no-cache ] &&
		[ "$(hdr X-Content-Type-Options)" = nosniff ]
}

# ---- static files ----
check "GET / is the index" eq 200 "$(status "$URL/")"
check "as HTML" eq "text/html; charset=utf-8" "$(hdr Content-Type)"
check "linking the API" has "$T/body" 'href="/api/v1/comparisons"'
check "cacheable for 300 s" eq "max-age=300" "$(hdr Cache-Control)"
etag=$(hdr ETag)
check "with an ETag" test -n "$etag"
check "If-None-Match: 304" eq 304 "$(status -H "If-None-Match: $etag" "$URL/")"
check "a 304 has no body" eq 0 "$(wc -c <"$T/body")"
check "another ETag: 200" eq 200 "$(status -H 'If-None-Match: "other"' "$URL/")"
check "/static/index.html" eq 200 "$(status "$URL/static/index.html")"
check "an absent static file: 404" eq 404 "$(status "$URL/static/nothing.js")"
DOCS="$(cd "$TESTS_DIR/.." && pwd)/docs"
check "/docs/rule.md, which comments link to" eq 200 "$(status "$URL/docs/rule.md")"
check "  as text/plain" eq "text/plain; charset=utf-8" "$(hdr Content-Type)"
check "  the document itself" cmp "$T/body" "$DOCS/rule.md"
check "an absent document: 404" eq 404 "$(status "$URL/docs/nothing.md")"
check "a document that is not Markdown: 404" eq 404 "$(status "$URL/docs/rule")"
check "a way out of /docs/: 400" eq 400 "$(status "$URL/docs/../README.md")"
check "a nested path under /docs/: 404" eq 404 "$(status "$URL/docs/a/rule.md")"
curl -sv -o /dev/null -o /dev/null "$URL/api/v1/hosts" "$URL/" 2>"$T/keep.err"
check "a connection is kept alive between requests" has "$T/keep.err" "Re-using existing connection"
check "HEAD answers without a body" eq 200 "$(curl -s -I -o /dev/null -w '%{http_code}' "$URL/api/v1/hosts")"

# ---- comparisons: the receipt, byte for byte ----
check "comparison $c1" receipt_ok "$URL/api/v1/comparisons/$c1"
"$PERFD" show --db "$DB" --json "$c1" >show.json
check "is perfd show --json, byte for byte" cmp -s "$T/body" show.json
check "CSV of one comparison" eq 200 "$(status "$URL/api/v1/comparisons/$c1?format=csv")"
check "as text/csv" eq "text/csv; charset=utf-8" "$(hdr Content-Type)"
"$PERFD" show --db "$DB" --format csv "$c1" >show.csv
check "is perfd show --format csv" cmp -s "$T/body" show.csv
check "the script case" receipt_ok "$URL/api/v1/comparisons/$c2"
check "comes back as a JSON string, unchanged" eq "$XSS" "$(js "$T/body" 'd["case"]')"
check "escaped by JSON (no raw quote)" has "$T/body" '"case": "<script>alert(1)</script>\"q'"'"'s"'

# ---- the list, paging and filters ----
check "comparisons" api_ok "/api/v1/comparisons"
n_all=$(sql "select count(*) from comparisons")
check "every comparison, newest first" eq "$(sql "select group_concat(id, ' ') from (select id from comparisons order by id desc)")" "$(js "$T/body" '" ".join(str(c["id"]) for c in d["comparisons"])')"
check "no next page" eq null "$(js "$T/body" 'd["next"]')"
check "gain of $c1" eq 0.006831 "$(js "$T/body" '[c["gain"] for c in d["comparisons"] if c["id"]=='"$c1"'][0]')"
check "sha256 listed" eq "$(sha256sum "$PLANT" | cut -d' ' -f1)" "$(js "$T/body" 'd["comparisons"][-1]["old_sha256"]')"
check "perfd pair's comparisons made by hand" eq "pair pair pair pair pair" "$(js "$T/body" '" ".join(c["made_by"] for c in d["comparisons"] if c["id"] <= 5)')"
if [ "$agent" = yes ]; then
	check "the agent's comparison made by its job" eq job "$(js "$T/body" '[c["made_by"] for c in d["comparisons"] if c["id"] == '"$ca"'][0]')"
	aas=$(sql "select group_concat(id, ' ') from comparisons where kind = 'aa' and job_id is null")
	check "the agent's A/As made by its calibration" eq "calibration" "$(js "$T/body" '" ".join(sorted(set(c["made_by"] for c in d["comparisons"] if c["id"] in ['"${aas// /,}"'])))')"
fi
check "manifest listed, in full" eq "$(sql "select old_manifest from comparisons where id = $c1")" "$(js "$T/body" 'd["comparisons"][-1]["old_manifest"]')"
check "limit=2" api_ok "/api/v1/comparisons?limit=2"
check "two rows" eq 2 "$(js "$T/body" 'len(d["comparisons"])')"
next=$(js "$T/body" 'd["next"]')
check "next is the last id shown" eq "$(js "$T/body" 'd["comparisons"][1]["id"]')" "$next"
check "before=next" api_ok "/api/v1/comparisons?limit=2&before=$next"
check "the page after" eq "$((next - 1)) $((next - 2))" "$(js "$T/body" '" ".join(str(c["id"]) for c in d["comparisons"])')"
check "limit=500" api_ok "/api/v1/comparisons?limit=500"
check "the last page has no next" eq null "$(js "$T/body" 'd["next"]')"
check "filter by case (encoded)" api_ok "/api/v1/comparisons?case=%3Cscript%3Ealert(1)%3C%2Fscript%3E%22q%27s"
check "the two script comparisons" eq "$c3 $c2" "$(js "$T/body" '" ".join(str(c["id"]) for c in d["comparisons"])')"
check "filter by host and verdict" api_ok "/api/v1/comparisons?host=lavapipe&verdict=unresolved"
check "one unresolved" eq "$c1" "$(js "$T/body" '" ".join(str(c["id"]) for c in d["comparisons"])')"
check "an unknown host" api_ok "/api/v1/comparisons?host=nowhere"
check "matches nothing" eq 0 "$(js "$T/body" 'len(d["comparisons"])')"
check "comparisons as CSV" eq 200 "$(status "$URL/api/v1/comparisons?format=csv&host=lavapipe")"
check "text/csv" eq "text/csv; charset=utf-8" "$(hdr Content-Type)"
check "a header and five rows" eq 6 "$(wc -l <"$T/body")"
check "header row" eq "id,created_at,state,host,case,metric,verdict,gain,old_sha256,new_sha256,old_manifest,new_manifest,job,head,commit,kind,made_by" "$(head -n 1 "$T/body")"
check "a quoted field doubles its quotes" has "$T/body" ',"<script>alert(1)</script>""q'"'"'s",'

# ---- timeline and cells ----
check "timeline" api_ok "/api/v1/timeline?host=lavapipe&case=default"
check "its points in time order" eq "$c1 $c5" "$(js "$T/body" '" ".join(str(p["id"]) for p in d["points"])')"
check "every raw value of the first" eq "4392 4362 4081 4421 4113 4218" "$(js "$T/body" '" ".join("%g" % v["value"] for v in d["points"][0]["values"])')"
check "with arm and pair" eq "old:1 new:1 new:2 old:2 old:3 new:3" "$(js "$T/body" '" ".join("%s:%d" % (v["arm"], v["pair"]) for v in d["points"][0]["values"])')"
check "arm medians" eq "4392 4218" "$(js "$T/body" '"%g %g" % (d["points"][0]["old_median"], d["points"][0]["new_median"])')"
fp=$(sql "select fingerprint from comparisons where id = $c1")
check "the fingerprint hash" eq "$(printf %s "$fp" | sha256sum | cut -c1-12)" "$(js "$T/body" 'd["points"][0]["fingerprint_hash"]')"
check "timeline limit=1 keeps the newest" api_ok "/api/v1/timeline?host=lavapipe&case=default&limit=1"
check "one point" eq "$c5" "$(js "$T/body" '" ".join(str(p["id"]) for p in d["points"])')"
check "timeline CSV" eq 200 "$(status "$URL/api/v1/timeline?host=lavapipe&case=default&format=csv")"
check "one row per process value (6 and 24, and a header)" eq 31 "$(wc -l <"$T/body")"
check "cells" api_ok "/api/v1/cells?host=lavapipe"
check "the script case pools two" eq "$c2 $c3" "$(js "$T/body" '" ".join(str(c["id"]) for x in d["cells"] if x["case"].startswith("<script>") for c in x["comparisons"])')"
check "default pools two, median of their gains" eq "2 0.035488" "$(js "$T/body" '[ "%d %s" % (len(x["comparisons"]), x["gain_median"]) for x in d["cells"] if x["case"]=="default"][0]')"
check "cells CSV" eq 200 "$(status "$URL/api/v1/cells?format=csv")"
check "header" eq "host,case,old_manifest,new_manifest,old_sha256,new_sha256,gain_median,comparison,verdict,gain" "$(head -n 1 "$T/body")"

# ---- manifests ----
mf=$(sql "select old_manifest from comparisons where id = $c1")
check "a manifest" api_ok "/api/v1/manifests/$mf"
check "  named by its hash" eq "$mf" "$(js "$T/body" 'd["hash"]')"
check "  of perfd pair: no build" eq "null null" "$(js "$T/body" '"%s %s" % (json.dumps(d["build"]), json.dumps(d["commit"]))')"
check "  its one file, the program" eq "$(basename "$PLANT") $(stat -c %s "$PLANT") $(sha256sum "$PLANT" | cut -d' ' -f1)" "$(js "$T/body" '" ".join("%s %d %s" % (f["name"], f["size"], f["sha256"]) for f in d["files"])')"
check "a manifest not stored: 404" eq 404 "$(status "$URL/api/v1/manifests/$(printf '0%.0s' $(seq 64))")"
check "not a hash: 400" eq 400 "$(status "$URL/api/v1/manifests/abc")"
if [ "$agent" = yes ]; then
	hm=$(sql "select new_manifest from comparisons where id = $ca")
	check "the agent's head manifest" api_ok "/api/v1/manifests/$hm"
	check "  is its head build's" eq "$hb $CH" "$(js "$T/body" '"%d %s" % (d["build"], d["commit"])')"
	check "  with every artifact" eq "$(sql "select group_concat(name, ' ') from (select name from build_artifacts where build_id = $hb order by name)")" "$(js "$T/body" '" ".join(f["name"] for f in d["files"])')"
fi

# ---- verify, then a tampered figure ----
check "verify" api_ok "/api/v1/comparisons/$c1/verify"
check "ok" eq "True 0" "$(js "$T/body" 'str(d["ok"]) + " " + str(len(d["mismatches"]))')"
check "counts the figures" test "$(js "$T/body" 'd["checked"]')" -gt 10
check "names the rule" eq pairs-median/2.2 "$(js "$T/body" 'd["rule"]')"
sql "update comparisons set gain_median = 0.0529 where id = $c1"
check "verify after tampering" api_ok "/api/v1/comparisons/$c1/verify"
check "not ok" eq false "$(js "$T/body" 'd["ok"]')"
check "names the figure" eq 1 "$(js "$T/body" 'sum(1 for m in d["mismatches"] if m.startswith("gain.median: stored 0.0529"))')"
sql "update comparisons set gain_median = 0.00683060109289617 where id = $c1"

# ---- hosts ----
check "hosts" api_ok "/api/v1/hosts"
check "lavapipe listed" eq "lavapipe" "$(js "$T/body" '" ".join(h["name"] for h in d["hosts"] if h["name"]=="lavapipe")')"
check "its fingerprint parsed" eq True "$(js "$T/body" 'str(isinstance([h for h in d["hosts"] if h["name"]=="lavapipe"][0]["fingerprint"], dict))')"
check "its heartbeat is its newest comparison" eq "$(sql "select coalesce(finished_at, created_at) from comparisons where host = 'lavapipe' order by id desc limit 1")" "$(js "$T/body" '[h for h in d["hosts"] if h["name"]=="lavapipe"][0]["heartbeat"]')"
check "not quarantined" eq false "$(js "$T/body" '[h for h in d["hosts"] if h["name"]=="lavapipe"][0]["quarantined"]')"
check "  holding no commit" eq "0 None" "$(js "$T/body" '" ".join(str(h[k]) for h in d["hosts"] if h["name"] == "lavapipe" for k in ("held", "hold"))')"
check "hosts CSV" eq 200 "$(status "$URL/api/v1/hosts?format=csv")"
check "header" eq "name,fingerprint_hash,heartbeat,quarantined,fault,since,last_push,state,backlog,sandbox,held,hold" "$(head -n 1 "$T/body")"
check "no heartbeat in an agent's database: no last push, state or backlog" eq "null null null" "$(curl -s "$URL/api/v1/hosts" | python3 -c 'import json, sys; h = [h for h in json.load(sys.stdin)["hosts"] if h["name"] == "lavapipe"][0]; print(*[json.dumps(h[k]) for k in ("last_push", "state", "backlog")])')"

# ---- pull heads: a server without [github] knows none ----
check "pulls" api_ok "/api/v1/pulls"
check "an empty list" eq "null []" "$(js "$T/body" 'd["repo"]') $(js "$T/body" 'd["pulls"]')"
check "pulls of a commit" api_ok "/api/v1/pulls?commit=abcd&limit=500"
for q in commit=abc commit=abcg limit=0 limit=x format=csv; do
	check "pulls?$q: 400" eq 400 "$(status "$URL/api/v1/pulls?$q")"
done

# ---- jobs, builds, the agent's receipt ----
check "jobs" api_ok "/api/v1/jobs"
if [ "$agent" = yes ]; then
	check "the job, with the branch named <script>" eq "feature/<script>alert(1)</script>" "$(js "$T/body" 'd["jobs"][0]["head"]')"
	check "its subject as a JSON string" eq "<script>alert(2)</script> fewer rounds" "$(js "$T/body" 'd["jobs"][0]["subject"]')"
	check "its comparison listed" eq "$ca work" "$(js "$T/body" '"%d %s" % (d["jobs"][0]["comparisons"][0]["id"], d["jobs"][0]["comparisons"][0]["case"])')"
	check "heads" api_ok "/api/v1/heads"
	check "the watched head, its commit and its job's state" eq "feature/<script>alert(1)</script> $CH done" "$(js "$T/body" '" ".join(str(h[k]) for h in d["heads"] if h["name"].startswith("feature/") for k in ("name", "commit", "job_state"))')"
	check "heads CSV" eq 200 "$(status "$URL/api/v1/heads?format=csv")"
	check "with the commit in a row" has "$T/body" "$CH"
	check "heads with an unknown parameter" eq 400 "$(status "$URL/api/v1/heads?x=1")"
	check "jobs CSV" eq 200 "$(status "$URL/api/v1/jobs?format=csv")"
	check "a row per job and comparison" has "$T/body" ",$ca,work,"
	check "the agent's comparison" receipt_ok "$URL/api/v1/comparisons/$ca"
	cp "$T/body" agent.json
	"$PERFD" show --db "$DB" --json "$ca" >show-agent.json
	check "is perfd show's receipt, byte for byte" cmp -s agent.json show-agent.json
	check "which names the job and builds" python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); j=a["job"]; bl=a["builds"]; sys.exit(0 if j["commit"]==sys.argv[2] and bl=={"base":int(sys.argv[3]),"head":int(sys.argv[4])} else 1)' agent.json "$CH" "$bb" "$hb"
	check "filter by commit prefix" api_ok "/api/v1/comparisons?commit=${CH:0:8}"
	check "finds it" eq "$ca $CH" "$(js "$T/body" '" ".join("%d %s" % (c["id"], c["commit"]) for c in d["comparisons"])')"
	check "build $hb" api_ok "/api/v1/builds/$hb"
	check "its commit" eq "$CH" "$(js "$T/body" 'd["commit"]')"
	check "its artifacts and hashes" eq "check.sh prog $(sha256sum "$(sql "select dir from builds where id = $hb")/prog" | cut -d' ' -f1)" "$(js "$T/body" '" ".join(a["name"] for a in d["artifacts"]) + " " + [a["sha256"] for a in d["artifacts"] if a["name"]=="prog"][0]')"
	check "its log and log_bytes" eq "$(sql "select log_bytes from builds where id = $hb")" "$(js "$T/body" 'd["log_bytes"]')"
	check "its runner's RESULT line verbatim" eq 'RESULT contract stage=1 on "cpu": passed=2 total=2' "$(js "$T/body" 'd["runner_results"][0]["lines"][0]["line"]')"
	check "with its attrs, as a receipt writes them" eq '{"stage": "1"}' "$(js "$T/body" 'd["runner_results"][0]["lines"][0]["attrs"]')"
	check "with parsed counts" eq "2 2" "$(js "$T/body" '"%g %g" % (d["runner_results"][0]["lines"][0]["counts"]["passed"], d["runner_results"][0]["lines"][0]["counts"]["total"])')"
	check "its counts JSON integers, as in a receipt" eq "2 2" "$(js "$T/body" '" ".join(repr(v) for v in d["runner_results"][0]["lines"][0]["counts"].values() if type(v) is int)')"
	check "and the runner's hash" eq "$(sql "select binary_sha256 from runner_results where build_id = $hb limit 1")" "$(js "$T/body" 'd["runner_results"][0]["binary_sha256"]')"
	check "jobs limit=1 before the job: none" api_ok "/api/v1/jobs?limit=1&before=$job"
	check "empty" eq "0 None" "$(js "$T/body" '"%d %s" % (len(d["jobs"]), d["next"])')"
fi

# ---- no raw <script> in HTML; JSON is JSON ----
check "the overview's scripts are files, none inline" eq 0 "$(curl -s "$URL/" | grep -o '<script[^>]*>' | grep -vc 'src=')"

# ---- errors ----
for p in /api/v1/comparisons/99999 /api/v1/comparisons/99999/verify /api/v1/builds/99999 /api/v1/nothing /api/v1/comparisons/1/other /nothing /api; do
	check "404 for $p" eq 404 "$(status "$URL$p")"
	check "with a JSON error" test -n "$(js "$T/body" 'd["error"]')"
done
check "an unknown comparison is named" has "$T/body" "no such"
bad() {  # bad QUERY PARAM: 400 naming the parameter
	check "400 for $1" eq 400 "$(status "$URL$1")"
	check "the error names '$2'" has "$T/body" "$2"
}
long=$(printf 'h%.0s' $(seq 257))
bad "/api/v1/comparisons/abc" "'abc' is not an id"
bad "/api/v1/comparisons/-1" "is not an id"
bad "/api/v1/comparisons/0/verify" "'0' is not an id"
bad "/api/v1/builds/1x" "'1x' is not an id"
bad "/api/v1/comparisons?limit=0" "parameter 'limit'"
bad "/api/v1/comparisons?limit=501" "parameter 'limit'"
bad "/api/v1/comparisons?limit=ten" "parameter 'limit'"
bad "/api/v1/jobs?before=-3" "parameter 'before'"
bad "/api/v1/comparisons?format=xml" "parameter 'format'"
bad "/api/v1/comparisons/$c1?format=md" "parameter 'format'"
bad "/api/v1/comparisons?host=$long" "parameter 'host'"
bad "/api/v1/comparisons?hots=x" "unknown parameter 'hots'"
bad "/api/v1/comparisons?host=a&host=b" "parameter 'host' is given twice"
bad "/api/v1/comparisons?verdict=better" "parameter 'verdict'"
bad "/api/v1/comparisons?commit=XYZ1" "parameter 'commit'"
bad "/api/v1/comparisons?case=a%09b" "parameter 'case'"
bad "/api/v1/timeline?case=default" "parameter 'host' is required"
bad "/api/v1/timeline?host=lavapipe&case=default&limit=1001" "parameter 'limit'"
bad "/api/v1/comparisons/$c1/verify?x=1" "unknown parameter 'x'"
bad "/metrics?x=1" "unknown parameter 'x'"
for m in POST PUT DELETE PATCH; do
	check "405 for $m" eq 405 "$(status -X "$m" "$URL/api/v1/comparisons")"
done
check "says GET and HEAD are allowed" eq "GET, HEAD" "$(hdr Allow)"
check "405 for a GET with a body" eq 405 "$(status -X GET --data-binary hello "$URL/api/v1/comparisons")"
check "405 for a chunked body" eq 405 "$(status -X GET -H 'Transfer-Encoding: chunked' --data-binary hello "$URL/api/v1/comparisons")"

# ---- nothing outside the static root ----
mkdir -p www/sub
echo "inside" >www/ok.txt
echo "<p>sub</p>" >www/sub/page.html
ln -s /etc/passwd www/evil
ln -s ok.txt www/alias.txt
ln -s /etc/passwd www/evil.md
ln -s ok.txt www/ok.md
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 --static "$T/www" --docs "$T/www" 2>"$T/serve2.err" &
srv2=$!
URL2=$(served "$T/serve2.err")
check "--static DIR" eq 200 "$(status "$URL2/static/ok.txt")"
check "as text/plain" eq "text/plain; charset=utf-8" "$(hdr Content-Type)"
check "a nested file" eq 200 "$(status "$URL2/static/sub/page.html")"
check "a link inside the root is followed" eq 200 "$(status "$URL2/static/alias.txt")"
check "a link out of the root is refused" eq 404 "$(status "$URL2/static/evil")"
check "no index here: 404" eq 404 "$(status "$URL2/")"
for p in "/static/../../etc/passwd" "/../../etc/passwd" "/%2e%2e/%2e%2e/etc/passwd" \
	"/static/%2e%2e%2f%2e%2e%2fetc%2fpasswd" "/static/..%2f..%2fetc%2fpasswd" \
	"/static/%2E%2E/%2E%2E/etc/passwd" "/static/..%5c..%5cetc%5cpasswd" \
	"/static/ok.txt%00.html" "/static/sub/../../../etc/passwd" "/static/.%2e/.%2e/etc/passwd"; do
	code=$(status "$URL2$p")
	check "traversal $p: 400 or 404 ($code)" test "$code" = 400 -o "$code" = 404
	check "and no file contents" eq 0 "$(grep -c 'root:' "$T/body")"
done
check "the default root's index is not under this one" eq 404 "$(status "$URL2/static/index.html")"
check "a link out of --docs is refused" eq 404 "$(status "$URL2/docs/evil.md")"
check "  (the same link inside it is served)" eq 200 "$(status "$URL2/docs/ok.md")"
kill -TERM "$srv2"
wait "$srv2"
check "second server stopped" eq 0 $?

# ---- /metrics ----
check "/metrics" eq 200 "$(status "$URL/metrics")"
check "in Prometheus text" eq "text/plain; version=0.0.4; charset=utf-8" "$(hdr Content-Type)"
check "comparisons by verdict" has "$T/body" "perfd_comparisons_total{verdict=\"faster\"} $(sql "select count(*) from comparisons where verdict = 'faster'")"
check "unresolved too" has "$T/body" "perfd_comparisons_total{verdict=\"unresolved\"} $(sql "select count(*) from comparisons where verdict = 'unresolved'")"
check "no host quarantined" has "$T/body" "perfd_hosts_quarantined 0"
check "no host unsandboxed (no heartbeat here)" has "$T/body" "perfd_hosts_unsandboxed 0"
check "no commit held (the family, with no row)" has "$T/body" "# TYPE perfd_holds gauge"
n404=$(grep '^perfd_http_requests_total{code="404"}' "$T/body" | cut -d' ' -f2)
check "404s counted ($n404)" test "${n404:-0}" -ge 7
check "400s counted" grep -q '^perfd_http_requests_total{code="400"} [1-9]' "$T/body"
check "405s counted" grep -q '^perfd_http_requests_total{code="405"} [1-9]' "$T/body"
if [ "$agent" = yes ]; then
	check "jobs by state" has "$T/body" "perfd_jobs{state=\"done\"} $(sql "select count(*) from jobs where state = 'done'")"
	check "builds by state" has "$T/body" "perfd_builds{state=\"done\"} $(sql "select count(*) from builds where state = 'done'")"
fi

# ---- receipts stored once, by a server that writes ----
check "the server that only reads stored no receipt" eq 0 "$(sql "select count(*) from receipts")"
cat >hub.conf <<CONF
[hub]
database = $DB
listen = 127.0.0.1:0
hosts = lavapipe
CONF
"$PERFD" serve --config hub.conf 2>"$T/hub.err" &
hub=$!
HUB=$(served "$T/hub.err")
check "the hub on the same database" test -n "$HUB"
"$PERFD" show --db "$DB" --json "$c1" >show.json
"$PERFD" show --db "$DB" --format csv "$c1" >show.csv
stored() { sql "select count(*) from receipts where comparison_id = $1 and format = '$2'"; }
check "a done comparison's receipt" receipt_ok "$HUB/api/v1/comparisons/$c1"
cp "$T/body" r1.json
etag=$(hdr ETag)
check "  is perfd show --json, byte for byte" cmp -s r1.json show.json
check "  stored once" eq 1 "$(stored "$c1" json)"
check "  with the sha256 of its bytes" eq "$(sha256sum <r1.json | cut -d' ' -f1)" "$(sql "select sha256 from receipts where comparison_id = $c1 and format = 'json'")"
check "  which is its ETag" eq "\"$(sha256sum <r1.json | cut -d' ' -f1)\"" "$etag"
check "  and its renderer" eq "perfd $("$PERFD" --version | cut -d' ' -f2), receipt 5" "$(sql "select renderer from receipts where comparison_id = $c1")"
check "asked again" receipt_ok "$HUB/api/v1/comparisons/$c1"
check "  the same bytes" cmp -s "$T/body" r1.json
check "  still one row" eq 1 "$(stored "$c1" json)"
check "If-None-Match with its ETag: 304" eq 304 "$(status -H "If-None-Match: $etag" "$HUB/api/v1/comparisons/$c1")"
check "  without a body" eq 0 "$(wc -c <"$T/body")"
check "  naming the ETag" eq "$etag" "$(hdr ETag)"
check "another ETag: 200" eq 200 "$(status -H 'If-None-Match: "other"' "$HUB/api/v1/comparisons/$c1")"
check "CSV, stored apart" eq 200 "$(status "$HUB/api/v1/comparisons/$c1?format=csv")"
check "  is perfd show --format csv" cmp -s "$T/body" show.csv
check "  stored once" eq 1 "$(stored "$c1" csv)"
# The answer is the stored bytes, not a new rendering.
sql "update receipts set body = cast('stored bytes' as blob) where comparison_id = $c1 and format = 'json'"
check "the stored bytes are answered" receipt_ok "$HUB/api/v1/comparisons/$c1"
check "  as stored" eq "stored bytes" "$(cat "$T/body")"
check "  by the server that only reads too" receipt_ok "$URL/api/v1/comparisons/$c1"
check "  as stored" eq "stored bytes" "$(cat "$T/body")"
# Bytes an older perfd's renderer stored are rendered anew.
sql "update receipts set renderer = 'perfd 0.0.1, receipt 1' where comparison_id = $c1 and format = 'json'"
check "another renderer's receipt" receipt_ok "$HUB/api/v1/comparisons/$c1"
check "  is rendered anew" cmp -s "$T/body" show.json
check "  and replaces the old one" eq "1 perfd $("$PERFD" --version | cut -d' ' -f2), receipt 5" "$(sql "select count(*), renderer from receipts where comparison_id = $c1 and format = 'json'" | tr '|' ' ')"
# A running comparison changes: rendered each time, never stored.
sql "update comparisons set state = 'running' where id = $c5"
check "a running comparison" eq 200 "$(status "$HUB/api/v1/comparisons/$c5")"
check "  is not kept (no-store)" eq no-store "$(hdr Cache-Control)"
check "  has no ETag" eq "" "$(hdr ETag)"
check "  is not stored" eq 0 "$(sql "select count(*) from receipts where comparison_id = $c5")"
sql "update comparisons set state = 'done' where id = $c5"
if [ "$agent" = yes ]; then
	check "the agent's receipt from the hub" receipt_ok "$HUB/api/v1/comparisons/$ca"
	check "  is perfd show's" cmp -s "$T/body" show-agent.json
	check "  stored" eq 1 "$(stored "$ca" json)"
	# Linked to another job: the write drops the stored receipt
	# (db_receipt_forget, in the write's transaction), and the next ask
	# renders the new link.
	job2=$(sql "insert into jobs (head, commit_oid, base_oid, subject, state, created_at) values ('relinked', '$(printf 'e%.0s' $(seq 40))', NULL, 's', 'done', '2026-11-04T10:00:00.000Z'); select last_insert_rowid();")
	sql "begin; update comparisons set job_id = $job2 where id = $ca; delete from receipts where comparison_id = $ca; commit;"
	check "relinked" receipt_ok "$HUB/api/v1/comparisons/$ca"
	check "  names its new job" eq "$job2 relinked" "$(js "$T/body" '"%d %s" % (d["job"]["id"], d["job"]["head"])')"
	"$PERFD" show --db "$DB" --json "$ca" >show-relinked.json
	check "  as perfd show does" cmp -s "$T/body" show-relinked.json
	check "  stored anew" eq "$(sha256sum <show-relinked.json | cut -d' ' -f1)" "$(sql "select sha256 from receipts where comparison_id = $ca and format = 'json'")"
fi
kill -TERM "$hub"
wait "$hub"
check "the hub stopped" eq 0 $?

# ---- bad options, then a clean stop ----
check "a malformed --listen" run 2 "$PERFD" serve --db "$DB" --listen localhost
check "is named" has err "--listen 'localhost'"
check "a missing --static directory" run 2 "$PERFD" serve --db "$DB" --listen 127.0.0.1:0 --static "$T/none"
check "is named" has err "static directory"
check "a missing --docs directory" run 2 "$PERFD" serve --db "$DB" --listen 127.0.0.1:0 --docs "$T/none"
check "is named" has err "documents' directory '$T/none' is not a directory"
kill -TERM "$srv"
wait "$srv"
check "SIGTERM: exit 0" eq 0 $?
check "said so" has "$T/serve.err" "SIGTERM: stopped"
finish
