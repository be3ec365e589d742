#!/bin/bash
# GET /api/v1/changepoints over real HTTP, from perfd serve --db on a
# database the agent made from a generated git history: one job per commit
# of main, whose two programs print a planted time with a fixed noise of
# +-0.4%: "step" 10% slower from one known commit on, "flat" never. The
# step is found at that commit and nowhere else, the flat series has none,
# a branch of three commits says it has too few points, the answer states
# the method and its parameters, the timeline marks the same point, a
# fingerprint change is told apart from the change point, and every bad
# parameter answers 400 naming it.
. "$(dirname "$0")/lib.sh"
need git curl sqlite3
: "${PLANT:?PLANT must name the plant fixture}"

# commit SRC STEP_VALUE FLAT_VALUE MESSAGE: the next commit, each program
# printing its value; its id goes to stdout.
commit() {
	printf '#!/bin/sh\necho "TIMING run_ms=%s"\n' "$2" >"$1/step"
	printf '#!/bin/sh\necho "TIMING run_ms=%s"\n' "$3" >"$1/flat"
	chmod +x "$1/step" "$1/flat"
	git -C "$1" add -A && git -C "$1" commit -q --allow-empty -m "$4" && git -C "$1" rev-parse HEAD
}

new_src
cat >agent.conf <<CONF
$(agent_repo branches="main short")

[build]
command = true
artifacts = step flat
timeout_s = 60

[case step]
command = ./step
pairs = 3

[case flat]
command = ./flat
pairs = 3

[calibration]
runs = 0
CONF
# One poll per commit: a job per commit, as a push of each would make.
agent() { "$PERFD" agent --config agent.conf --once >"$T/agent.out" 2>"$T/agent.err" || {
	echo "  perfd agent failed:"; sed 's/^/  /' "$T/agent.err" | tail -n 20; return 1; }; }

# 24 commits after the root, the step from commit 13 on: the series' 13th
# point (index 12).
STEP_AT=13
noise_next
C[0]=$(commit "$SRC" "$(noisy 100000)" "$(noisy 100000)" root)
agent_ok=0
for i in $(seq 1 24); do
	base=100000
	[ "$i" -ge "$STEP_AT" ] && base=110000
	noise_next
	sv=$(noisy $base)
	noise_next
	fv=$(noisy 100000)
	C[$i]=$(commit "$SRC" "$sv" "$fv" "commit $i")
	agent && agent_ok=$((agent_ok + 1))
done
check "the agent measured each of the 24 commits" eq 24 "$agent_ok"
git -C "$SRC" checkout -q -b short
short_ok=0
for i in 1 2 3; do
	noise_next
	S[$i]=$(commit "$SRC" "$(noisy 110000)" "$(noisy 100000)" "short $i")
	agent && short_ok=$((short_ok + 1))
done
check "and the three of branch short" eq 3 "$short_ok"
HOST=$(sql "select host from comparisons limit 1")
check "a comparison of each case per job of main" eq 48 \
	"$(sql "select count(*) from comparisons c join jobs j on j.id = c.job_id
		where j.head = 'main' and c.state = 'done' and c.kind = 'compare'")"
check "the step commit's head median is 10% above its base's" eq 1 \
	"$(sql "select c.new_median / c.old_median between 1.09 and 1.11 from comparisons c
		join jobs j on j.id = c.job_id where j.commit_oid = '${C[$STEP_AT]}' and c.case_name = 'step'")"

"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>"$T/serve.err" &
srv=$!
URL=$(served "$T/serve.err")
check "perfd serve --db names its URL" test -n "$URL"

# get URL: the body in $T/body, headers in $T/hdr; prints the status.
get() { : >"$T/body"; curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$1"; }
hdr() { tr -d '\r' <"$T/hdr" | sed -n "s/^$1: //Ip" | head -n 1; }
CP=$URL/api/v1/changepoints

# ---- the step: one change point, at its commit ----
check "the step's change points: 200" eq 200 "$(get "$CP?host=$HOST&case=step")"
check "  as JSON" eq application/json "$(hdr Content-Type)"
cp "$T/body" step.json
check "  of the default branch, main" eq main "$(js step.json 'd["branch"]')"
check "  over its 24 points, the head median of run_ms" eq "24 run_ms head median" \
	"$(js step.json '"%d %s %s" % (d["series"]["points"], d["series"]["metric"], d["series"]["value"])')"
check "  one change point" eq 1 "$(js step.json 'len(d["changepoints"])')"
check "  at the step's commit" eq "${C[$STEP_AT]}" "$(js step.json 'd["changepoints"][0]["commit"]')"
check "  the series' 13th point" eq $((STEP_AT - 1)) "$(js step.json 'd["changepoints"][0]["index"]')"
cmp_step=$(sql "select c.id from comparisons c join jobs j on j.id = c.job_id
	where j.commit_oid = '${C[$STEP_AT]}' and c.case_name = 'step'")
job_step=$(sql "select id from jobs where commit_oid = '${C[$STEP_AT]}' and head = 'main'")
check "  its comparison and job" eq "$cmp_step $job_step" \
	"$(js step.json '"%d %d" % (d["changepoints"][0]["comparison"], d["changepoints"][0]["job"])')"
check "  the level before ~10 ms and after ~11 ms" eq "True True" \
	"$(js step.json '"%s %s" % (abs(d["changepoints"][0]["mean_before"] - 10) < 0.05, abs(d["changepoints"][0]["mean_after"] - 11) < 0.05)')"
check "  a shift of +10%" eq true "$(js step.json 'abs(d["changepoints"][0]["change"] - 0.1) < 0.005')"
check "  significant: p < 0.01" eq true "$(js step.json '0 < d["changepoints"][0]["p"] < 0.01')"
check "  no fingerprint change there" eq false "$(js step.json 'd["changepoints"][0]["fingerprint_changed"]')"
check "  nothing to note" eq null "$(js step.json 'd["note"]')"
check "the answer states the method and its parameters" eq \
	'e-divisive-means 1 1.0 4 199 0x70657266644350 0.01 1000 16' \
	"$(js step.json '" ".join(str(d["method"][k]) for k in ("name", "version", "alpha", "min_segment", "permutations", "seed", "p_threshold", "max_points", "max_changepoints"))')"
check "branch=main is the same answer" eq 200 "$(get "$CP?host=$HOST&case=step&branch=main")"
check "  byte for byte" cmp -s "$T/body" step.json
check "as CSV: 200" eq 200 "$(get "$CP?host=$HOST&case=step&format=csv")"
check "  text/csv" eq "text/csv; charset=utf-8" "$(hdr Content-Type)"
check "  a header and one row, at the commit" eq "2 $((STEP_AT - 1)),$cmp_step,$job_step,${C[$STEP_AT]}" \
	"$(wc -l <"$T/body") $(sed -n 2p "$T/body" | cut -d, -f1-4)"

# The timeline marks the same comparison, and it alone.
check "the step's timeline: 200" eq 200 "$(get "$URL/api/v1/timeline?host=$HOST&case=step&limit=1000")"
check "  marks the change point at its comparison alone" eq "[$cmp_step]" \
	"$(js "$T/body" '[p["id"] for p in d["points"] if p["changepoint"]]')"

# ---- the flat series: none ----
check "the flat series' change points: 200" eq 200 "$(get "$CP?host=$HOST&case=flat")"
cp "$T/body" flat.json
check "  over its 24 points" eq 24 "$(js flat.json 'd["series"]["points"]')"
check "  whose values do vary (the noise)" test "$(sql "select count(distinct c.new_median)
	from comparisons c join jobs j on j.id = c.job_id where j.head = 'main' and c.case_name = 'flat'")" -gt 12
check "  none" eq "[]" "$(js flat.json 'd["changepoints"]')"
check "  and nothing to note" eq null "$(js flat.json 'd["note"]')"
check "  the timeline marks none" eq 0 \
	"$(get "$URL/api/v1/timeline?host=$HOST&case=flat" >/dev/null; js "$T/body" 'sum(p["changepoint"] for p in d["points"])')"

# ---- a branch of three points says it has too few ----
check "branch short: 200" eq 200 "$(get "$CP?host=$HOST&case=step&branch=short")"
check "  3 points" eq 3 "$(js "$T/body" 'd["series"]["points"]')"
check "  no change point" eq "[]" "$(js "$T/body" 'd["changepoints"]')"
check "  and says why" eq "too few points: 3, where a change point needs 4 on either side (8 in all)" \
	"$(js "$T/body" 'd["note"]')"
check "  its method too" eq e-divisive-means "$(js "$T/body" 'd["method"]["name"]')"

# A case measured by hand alone: known, with no point on the branch.
check "a comparison by hand of case byhand" run 0 "$PERFD" pair --db "$DB" --host-name "$HOST" \
	--case byhand --pairs 3 "$PLANT" "$PLANT"
check "its change points: 200" eq 200 "$(get "$CP?host=$HOST&case=byhand")"
check "  none, and says why" eq "0 [] branch 'main' has no comparison of this host and case" \
	"$(js "$T/body" '"%d %s %s" % (d["series"]["points"], d["changepoints"], d["note"])')"

# ---- bad parameters: 400, naming the parameter ----
bad() {  # bad QUERY TEXT: 400, a JSON error holding TEXT
	check "400 for ?$1" eq 400 "$(get "$CP?$1")"
	check "  as JSON" eq application/json "$(hdr Content-Type)"
	check "  saying: $2" has <(js "$T/body" 'd["error"]') "$2"
}
long=$(printf 'h%.0s' $(seq 257))
bad "case=step" "parameter 'host' is required"
bad "host=$HOST" "parameter 'case' is required"
bad "host=nohost&case=step" "parameter 'host': no comparison of host 'nohost' is stored"
bad "host=$HOST&case=nocase" "parameter 'case': no comparison of case 'nocase' on host '$HOST' is stored"
bad "host=$HOST&case=step&branch=nobranch" "parameter 'branch': no head job of branch 'nobranch' is stored"
bad "host=$HOST&case=step&branch=pull/9" "parameter 'branch': no head job of branch 'pull/9' is stored"
bad "host=&case=step" "parameter 'host' is empty"
bad "host=$HOST&case=step&branch=" "parameter 'branch' is empty"
bad "host=$HOST&case=st%01ep" "parameter 'case' holds a control character"
bad "host=$HOST&case=step&format=xml" "parameter 'format': expected json or csv"
bad "host=$long&case=step" "parameter 'host': the value is over 256 bytes"
bad "host=$HOST&case=step&branch=$long" "parameter 'branch': the value is over 256 bytes"
bad "host=$HOST&case=step&limit=5" "unknown parameter 'limit'"
bad "host=$HOST&host=$HOST&case=step" "parameter 'host' is given twice"
check "the server still answers after them" eq 200 "$(get "$CP?host=$HOST&case=step")"
check "  the same" cmp -s "$T/body" step.json

# ---- a fingerprint change is told apart ----
# The step's comparisons from the step on, and the flat's from commit 7 on,
# as a kernel upgrade would store them: the change point now comes with a
# fingerprint change; the flat series' fingerprint change makes none.
sql "update comparisons set fingerprint = replace(fingerprint, '\"kernel_release\":\"', '\"kernel_release\":\"9.9.9-upgraded-')
	where id in (select c.id from comparisons c join jobs j on j.id = c.job_id
	where (c.case_name = 'step' and j.id >= $job_step) or (c.case_name = 'flat' and
	j.id >= (select id from jobs where commit_oid = '${C[7]}' and head = 'main')))"
check "the fingerprints changed" eq 2 "$(sql "select count(distinct fingerprint) from comparisons where case_name = 'flat'")"
check "the step's change point: a fingerprint change there too" eq "1 ${C[$STEP_AT]} True" \
	"$(get "$CP?host=$HOST&case=step" >/dev/null; js "$T/body" '"%d %s %s" % (len(d["changepoints"]), d["changepoints"][0]["commit"], d["changepoints"][0]["fingerprint_changed"])')"
check "the flat series: still none" eq "[]" \
	"$(get "$CP?host=$HOST&case=flat" >/dev/null; js "$T/body" 'd["changepoints"]')"
check "  while its timeline's fingerprint hash changes once" eq 1 \
	"$(get "$URL/api/v1/timeline?host=$HOST&case=flat" >/dev/null; js "$T/body" 'sum(1 for a, b in zip(d["points"], d["points"][1:]) if a["fingerprint_hash"] != b["fingerprint_hash"])')"

kill -TERM "$srv"
wait "$srv"
check "perfd serve stopped on SIGTERM, exit 0" eq 0 $?
finish
