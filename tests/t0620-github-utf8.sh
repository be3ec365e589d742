#!/bin/bash
# A contract runner and a case that print a byte that is not UTF-8 (a raw
# 0xE9 in a RESULT line's device): the agent stores the line repaired (the
# byte as U+FFFD) and keeps the raw byte in the captured output; the
# pull-request comment, perfd show --json and the hub's API show the repaired
# line; a restart posts normally, and a line stored unrepaired (a database
# written by an older perfd) is repaired when the comment is made.
. "$(dirname "$0")/lib.sh"
need git cc curl
TOKEN=ghp_perfdTestToken0123456789abcdef
HUB=http://hub.example:8080
LINE='RESULT contract on "caf\351": passed=1 total=1'
RAW=$(printf "$LINE")
FIXED=$(printf 'RESULT contract on "caf\357\277\275": passed=1 total=1')

# ---- a repository whose runner and case print the byte ----
new_src
work_prog "$SRC/prog.c" 4000000 7
printf '#!/bin/sh\nprintf '\''%s\\n'\''\n' "$LINE" >"$SRC/check.sh"
printf '#!/bin/sh\n"$(dirname "$0")/prog" && printf '\''%s\\n'\''\n' "$LINE" >"$SRC/case.sh"
chmod +x "$SRC/check.sh" "$SRC/case.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm "base"
C1=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q -b alice-1
work_prog "$SRC/prog.c" 2000000 7
git -C "$SRC" commit -qam "half the rounds"
C2=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q main
git -C "$SRC" update-ref refs/pull/5/head "$C2"
check "the runner prints the byte" eq 'e9' "$(cd "$SRC" && ./check.sh | od -An -tx1 -j23 -N1 | tr -d ' ')"

# ---- the server ----
fake_github "$TOKEN" --max-seconds 300
srv=
kill_at_exit srv
ncomments() { ctl GET state >"$T/state.json"; js "$T/state.json" "len([c for c in d['comments'] if c['pr'] == $1])"; }
check "the server is up" test -n "$PORT"
ctl POST pulls "[{\"number\": 5, \"author\": \"alice\", \"head_sha\": \"$C2\", \"head_ref\": \"alice-1\", \"base_ref\": \"main\", \"base_sha\": \"$C1\"}]" >/dev/null

printf '%s\n' "$TOKEN" >token
chmod 600 token
cat >agent.conf <<CONF
$(agent_repo pulls=true)

$(github_conf max_wait_s=5)

$(work_suite artifacts="prog check.sh case.sh" command=./case.sh pairs=1 max_pairs=1 warmup=0)
CONF

# ---- the agent posts the comment ----
check "agent --once exits 0" run 0 "$PERFD" agent --config agent.conf --once
check "  the pull request's job is done" eq done "$(sql "select state from jobs where head = 'pull/5' and commit_oid = '$C2'")"
check "one comment on pull request 5" eq 1 "$(ncomments 5)"
posted 5 >posted1.md
check "  it holds the line, the byte as U+FFFD" python3 -c 'import sys; sys.exit(sys.argv[1] not in open(sys.argv[2], encoding="utf-8").read().splitlines())' "$FIXED" posted1.md
check "the runner's line is stored repaired" eq "$(printf '%s' 'RESULT contract on "caf' | od -An -tx1 | tr -d ' \n')efbfbd" "$(sql "select lower(hex(substr(text, 1, 24))) from runner_lines l join runner_results r on r.id = l.result_id where r.runner = 'contract' limit 1")"
check "  its output keeps the raw byte" test "$(sql "select instr(output, x'22636166e922') from runner_results where runner = 'contract' limit 1")" -gt 0
check "  and no stored line has it" eq 0 "$(sql "select count(*) from runner_lines where instr(cast(text as blob), x'e9') > 0")"
cid=$(sql "select c.id from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C2'")
hb=$(sql "select head_build from comparisons where id = $cid")
check "a process's line is stored repaired" eq 2 "$(sql "select count(*) from process_lines l join processes p on p.id = l.process_id where p.comparison_id = $cid and instr(cast(l.text as blob), x'636166efbfbd22') > 0")"
check "  its captured output keeps the raw byte" eq 2 "$(sql "select count(*) from process_output o join processes p on p.id = o.process_id where p.comparison_id = $cid and instr(o.stdout, x'636166e922') > 0")"

# ---- perfd show --json ----
check "perfd show --json" run 0 "$PERFD" show --db "$DB" --json "$cid"
check "  the line with U+FFFD" eq "$FIXED" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"][0]["results"][0]["line"])' out)"
check "  its device too" eq "caf$(printf '\357\277\275')" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"][0]["results"][0]["device"])' out)"

# ---- the hub's API ----
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>"$T/serve.err" &
srv=$!
URL=$(served "$T/serve.err")
check "the hub is up" test -n "$URL"
check "GET /api/v1/builds/ID" eq 200 "$(curl -s -o build.json -w '%{http_code}' "$URL/api/v1/builds/$hb")"
check "  the runner's line with U+FFFD" eq "$FIXED" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["runner_results"][0]["lines"][0]["line"])' build.json)"
check "GET /api/v1/comparisons/ID" eq 200 "$(curl -s -o cmp.json -w '%{http_code}' "$URL/api/v1/comparisons/$cid")"
check "  the process's line with U+FFFD" eq "$FIXED" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes"][0]["results"][0]["line"])' cmp.json)"
kill "$srv"
wait "$srv" 2>/dev/null
srv=

# ---- a restart ----
check "agent --once again exits 0" run 0 "$PERFD" agent --config agent.conf --once
check "  still one comment" eq 1 "$(ncomments 5)"
git -C "$SRC" checkout -q alice-1
work_prog "$SRC/prog.c" 1000000 7
git -C "$SRC" commit -qam "a quarter of the rounds"
C3=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q main
git -C "$SRC" update-ref refs/pull/5/head "$C3"
ctl POST pulls "[{\"number\": 5, \"author\": \"alice\", \"head_sha\": \"$C3\", \"head_ref\": \"alice-1\", \"base_ref\": \"main\", \"base_sha\": \"$C1\"}]" >/dev/null
check "agent --once on a moved head exits 0" run 0 "$PERFD" agent --config agent.conf --once
check "  the comment is edited, still one" eq 1 "$(ncomments 5)"
posted 5 >posted2.md
check "  it names the new head" has posted2.md "### perfd: \`$C3\`"
check "  with the repaired line" python3 -c 'import sys; sys.exit(sys.argv[1] not in open(sys.argv[2], encoding="utf-8").read().splitlines())' "$FIXED" posted2.md

# A line stored as raw bytes (a database an older perfd wrote) is repaired
# when the comment is made, not refused.
sql "update runner_lines set text = cast(x'$(printf '%s' "$RAW" | od -An -tx1 | tr -d ' \n')' as text)"
check "  (a raw line is stored)" eq 1 "$(sql "select count(*) > 0 from runner_lines where instr(cast(text as blob), x'e9') > 0")"
check "perfd comment with a raw stored line exits 0" run 0 "$PERFD" comment --pr 5 --config agent.conf --hub http://hub2.example
check "  edited" has out "comment edited"
posted 5 >posted3.md
check "  with the line repaired" python3 -c 'import sys; sys.exit(sys.argv[1] not in open(sys.argv[2], encoding="utf-8").read().splitlines())' "$FIXED" posted3.md
finish
