#!/bin/bash
# Forecasts on a pull request (docs/comment.md, "Forecasts"), against
# tests/fake-github.py: the description states two forecasts for the case
# "work" (one its halved rounds meet, one they do not) and a line that does
# not read, the head commit's message one more; the agent records them
# before it measures the head, reads the message from its mirror (no
# request for it), and its comment says inside and outside per host, names
# the malformed line and why, and where each came from. The description
# edited after the measurement changes no forecast: the comment says it
# changed and still shows the ones stated before.
. "$(dirname "$0")/lib.sh"
need git cc curl
TOKEN=ghp_perfdTestToken0123456789abcdef
HUB=http://hub.example:8080

new_src
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
echo "RESULT contract on \"cpu\": passed=1 total=1"
SH
chmod +x "$SRC/check.sh"
work_prog "$SRC/prog.c" 8000000 7
git -C "$SRC" add -A && git -C "$SRC" commit -qm "base"
C1=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q -b alice-1
work_prog "$SRC/prog.c" 4000000 7
git -C "$SRC" commit -qam "half the rounds

perfd-expect: work unchanged 1%"
C2=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q main
git -C "$SRC" update-ref refs/pull/5/head "$C2"

fake_github "$TOKEN" --max-seconds 600 --git-dir "$SRC"
requests() { ctl GET requests >"$T/req.json"; js "$T/req.json" "$1"; }
describe() { # PR BODY: the pull request's description
	ctl POST pulls "$(python3 -c 'import json, sys; print(json.dumps([{"number": int(sys.argv[1]), "author": "alice", "head_sha": sys.argv[3], "head_ref": "alice-1", "base_ref": "main", "base_sha": sys.argv[4], "body": sys.argv[2]}]))' "$1" "$2" "$C2" "$C1")" >/dev/null
}
check "the server is up" test -n "$PORT"
describe 5 "Halves the rounds.

perfd-expect: work faster 40%..60%
  PERFD-EXPECT: work Faster 5%..10%
perfd-expect: work quicker 5%"
check "the server answers the head commit's message" eq "perfd-expect: work unchanged 1%" "$(curl -sf -H "Authorization: Bearer $TOKEN" "$API/repos/acme/engine/git/commits/$C2" | python3 -c "import json, sys; print(json.load(sys.stdin)[\"message\"].splitlines()[2])")"
ctl POST reset-requests >/dev/null

printf '%s\n' "$TOKEN" >token
chmod 600 token
cat >agent.conf <<CONF
$(agent_repo pulls=true)

$(github_conf)

$(work_suite)
CONF

check "agent --once" run 0 "$PERFD" agent --config agent.conf --once
check "the pull head is measured" eq done "$(sql "select state from jobs where head = 'pull/5' and commit_oid = '$C2'")"
verdict=$(sql "select c.verdict from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C2'")
check "  faster, as planted" eq faster "$verdict"
check "four forecast lines stored, three from the description" eq "description 3 commit 1" "$(sql "select group_concat(source || ' ' || n, ' ') from (select source, count(*) n from forecasts where pr = 5 and commit_oid = '$C2' group by source order by source = 'commit')")"
check "  each first seen before the head's first comparison" eq 0 "$(sql "select count(*) from forecasts f where first_seen > (select min(c.created_at) from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C2')")"
check "  the malformed one with why" eq "perfd-expect: work quicker 5%|expected faster, slower or unchanged after the case name" "$(sql "select line || '|' || problem from forecasts where problem is not null")"
check "  the bands as fractions" eq "0.4 0.6" "$(sql "select band_lo || ' ' || band_hi from forecasts where idx = 0 and source = 'description'")"
check "the message came from the mirror: no request for it" eq "[]" "$(requests "[r['path'] for r in d if '/git/commits/' in r['path']]")"
posted 5 >posted1.md
host=$(sql "select c.host from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C2'")
cid=$(sql "select c.id from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C2'")
gain=$(sql "select printf('%.3f%%', gain_median * 100) from comparisons where id = $cid")
row() { # LINE SOURCE OUTCOME: the line of posted1.md's table for it
	grep -F "| $1 | $2 | " "$4" | grep -F "| $host | [$gain]($HUB/static/comparison.html?id=$cid) | $3 |"
}
check "the comment has a Forecasts section" has posted1.md "#### Forecasts"
check "  40%..60%: inside" row "perfd-expect: work faster 40%..60%" description inside posted1.md
check "  5%..10%: outside" row "PERFD-EXPECT: work Faster 5%..10%" description outside posted1.md
check "  the commit's unchanged 1%: outside" row "perfd-expect: work unchanged 1%" commit outside posted1.md
check "  the malformed line named, with why" has posted1.md "- description, first seen "
check "  ... its text and problem" has posted1.md ": perfd-expect: work quicker 5%: expected faster, slower or unchanged after the case name"
check "  no word of a changed description yet" eq 0 "$(grep -c "changed after this head" posted1.md)"
check "perfd comment --dry-run renders the same" run 0 "$PERFD" comment --pr 5 --config agent.conf --commit "$C2" --dry-run
check "  byte for byte" cmp out posted1.md

# ---- the description edited after the measurement ----
describe 5 "perfd-expect: work slower 1%..2%"
check "agent --once after the edit" run 0 "$PERFD" agent --config agent.conf --once
check "the stored forecasts are as they were" eq "perfd-expect: work faster 40%..60%" "$(sql "select line from forecasts where source = 'description' and idx = 0")"
check "  none from the edit" eq 0 "$(sql "select count(*) from forecasts where line like '%slower 1%'")"
check "  the change is marked" eq 1 "$(sql "select count(*) from forecast_reads where source = 'description' and changed_at is not null")"
posted 5 >posted2.md
check "the comment still shows the original forecasts" row "perfd-expect: work faster 40%..60%" description inside posted2.md
check "  and not the edited line" eq 0 "$(grep -c "slower 1%" posted2.md)"
check "  and says the description changed" has posted2.md "The description's perfd-expect lines changed after this head was measured"
check "the head's message was read once (never asked of the API)" eq 0 "$(requests "len([r for r in d if '/git/commits/' in r['path']])")"

finish
