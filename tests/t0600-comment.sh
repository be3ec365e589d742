#!/bin/bash
# perfd comment --dry-run on a real demo run: the Markdown for a head commit
# equals what tests/fixtures/comment-golden.py derives from the stored rows,
# replications pool into one cell, strings from a repository or a runner are
# escaped, and a request it cannot carry out is refused with a clear message.
. "$(dirname "$0")/lib.sh"
need_vulkan
command -v glslc >/dev/null && command -v cc >/dev/null || { echo "glslc or cc missing: skipped"; exit 77; }
DB=$T/d/perfd.db
HUB=http://127.0.0.1:8080
GOLDEN="python3 $TESTS_DIR/fixtures/comment-golden.py"

check "perfd demo --once" run 0 "$PERFD" demo --once --dir "$T/d"
HEAD=$(sql "select commit_oid from jobs where head = 'demo/02-tree-reduction'")
BASE=$(sql "select base_oid from jobs where head = 'demo/02-tree-reduction'")
CID=$(sql "select c.id from comparisons c join jobs j on j.id = c.job_id where j.head = 'demo/02-tree-reduction' and c.state = 'done'")
BUILD=$(sql "select head_build from comparisons where id = $CID")
comment() { run 0 "$PERFD" comment --pr 7 --dry-run --commit "$HEAD" --db "$DB" --hub "$HUB/"; }
# rows: the table's body rows; cols: the cells of each, split at unescaped pipes.
rows() { grep -c '^| \[' "$1"; }
cols() { grep '^| \[' "$1" | sed 's/\\|//g' | awk -F'|' '{ print NF - 2 }' | sort -u | tr '\n' ' '; }

check "the comment of the tree reduction" comment
cp out c1.md
check "equals the one derived from the stored rows" diff -u <($GOLDEN "$DB" "$HEAD" "$HUB") c1.md
check "the marker is the first line" eq "<!-- perfd:comment -->" "$(head -n 1 c1.md)"
check "it names the head and the base" has c1.md "Head commit \`$HEAD\` (demo/02-tree-reduction) against base \`$BASE\`."
check "the rule links to the hub's docs/rule.md" has c1.md "[pairs-median/2.2]($HUB/docs/rule.md)"
check "one row" eq 1 "$(rows c1.md)"
check "of ten cells" eq "10 " "$(cols c1.md)"
check "every cell links to the receipt" eq 10 "$(grep '^| \[' c1.md | grep -o "($HUB/static/comparison.html?id=$CID)" | wc -l)"
gain=$(sql "select printf('%.3f%%', gain_median * 100) from comparisons where id = $CID")
check "the gain is the stored one" has c1.md "[$gain]($HUB/static/comparison.html?id=$CID)"
run_pairs=$(sql "select coalesce(nullif(pairs_run, 0), pairs) from comparisons where id = $CID")
check "the pairs are those its stages ran" has c1.md "| [$run_pairs]($HUB/static/comparison.html?id=$CID) |"
# The cell is the verdict, and for an unresolved one, why, when the host
# cannot see min_effect ("unresolved: this host sees changes of ...").
v=$(sql "select verdict from comparisons where id = $CID")
check "the verdict is the stored one" grep -Eq "\| \[$v(\]\(|: [^]|]+\]\()" c1.md
check "the runner's binary hash is the stored one" has c1.md "binary sha256 \`$(sql "select binary_sha256 from runner_results where build_id = $BUILD")\`"
check "made from the head" has c1.md "Build $BUILD, made from commit \`$HEAD\`."
sql "select l.text from runner_lines l join runner_results r on r.id = l.result_id where r.build_id = $BUILD order by l.idx" >lines.want
check "its RESULT and SUMMARY lines, verbatim" eq "$(cat lines.want)" "$(grep -E '^(RESULT|SUMMARY) ' c1.md)"
# Step 05 is faster but its contract runner fails: the job failed, and the
# comment says so beside its table.
H5=$(sql "select commit_oid from jobs where head = 'demo/05-vec4-loads'")
J5=$(sql "select id from jobs where head = 'demo/05-vec4-loads'")
check "the comment of the failing step" run 0 "$PERFD" comment --pr 8 --dry-run --commit "$H5" --db "$DB" --hub "$HUB"
cp out c5.md
check "equals the one derived from the stored rows" diff -u <($GOLDEN "$DB" "$H5" "$HUB") c5.md
check "it has its table" eq 1 "$(rows c5.md)"
check "and says the job failed, and why" has c5.md "- [job $J5]($HUB/static/head.html?job=$J5) (demo/05-vec4-loads): failed, $(sql "select detail from jobs where id = $J5")"
check "the runner's failure is in its lines" has c5.md "failed=6"
check "a commit with no comparison says so" run 0 "$PERFD" comment --pr 7 --dry-run --commit "$BASE" --db "$DB"
check "  (no comparison of it is done yet)" has out "no comparison of it is done yet"
check "  (and has no table)" eq 0 "$(rows out)"

# A replication: the same commit as a pull head, its comparison a copy of the
# branch's with another gain, and hostile names from the repository and runner.
EVIL='<script>alert(1)</script>|x'
sql "update jobs set head = '$EVIL' where head = 'demo/02-tree-reduction'"
sql "update comparisons set case_name = 'ker|nel \`<b>' where id = $CID"
sql "update runner_lines set text = text || ' | \`\`\`</pre>' where idx = 0 and result_id = (select id from runner_results where build_id = $BUILD)"
# copy_job HEAD WHERE SET: a job of HEAD made from the jobs WHERE selects,
# and in it a copy of comparison $CID changed by SET; prints its id.
copy_job() {
	sql "insert into jobs (head, commit_oid, base_oid, subject, state, created_at) select '$1', commit_oid, base_oid, subject, state, created_at from jobs where $2"
	sql "create temp table t as select * from comparisons where id = $CID; update t set id = (select max(id) + 1 from comparisons), job_id = (select id from jobs where head = '$1'), $3; insert into comparisons select * from t"
	sql "select max(id) from comparisons"
}
CID2=$(copy_job pull/7/head "commit_oid = '$HEAD'" "gain_median = gain_median / 2")
check "the pooled comment" comment
cp out c2.md
check "equals the one derived from the stored rows" diff -u <($GOLDEN "$DB" "$HEAD" "$HUB") c2.md
check "still one row" eq 1 "$(rows c2.md)"
check "still of ten cells" eq "10 " "$(cols c2.md)"
pooled=$(sql "select printf('%.3f%%', avg(gain_median) * 100) from comparisons where id in ($CID, $CID2)")
g2=$(sql "select printf('%.3f%%', gain_median * 100) from comparisons where id = $CID2")
check "the cell pools both runs, each linked" has c2.md " $pooled, median of 2 runs: [$gain]($HUB/static/comparison.html?id=$CID), [$g2]($HUB/static/comparison.html?id=$CID2) |"
check "both heads are named, escaped" has c2.md "(&lt;script&gt;alert(1)&lt;/script&gt;\\|x, pull/7/head)"
check "no raw HTML from a name" eq 0 "$(grep -c '<script>\|<b>' c2.md)"
check "the case is escaped" has c2.md "[ker\\|nel \\\`&lt;b&gt;]("
check "the runner line stays verbatim inside a longer fence" has c2.md "| \`\`\`</pre>"
check "  (the fence is four backticks)" eq 2 "$(grep -cx '````' c2.md)"

# Another head at the commit whose base build differs while the case
# program is the same file (a wrapper): another manifest, so a row of its
# own, not a third run of the cell.
OTHER=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
CID3=$(copy_job pull/9/head "head = 'pull/7/head'" "old_manifest = '$OTHER'")
check "the comment with another base manifest" comment
cp out c9.md
check "equals the one derived from the stored rows" diff -u <($GOLDEN "$DB" "$HEAD" "$HUB") c9.md
check "two rows: its manifests differ" eq 2 "$(rows c9.md)"
check "the row names its base manifest" has c9.md "[${OTHER:0:12}, $(sql "select substr(new_manifest, 1, 12) from comparisons where id = $CID3")]($HUB/static/comparison.html?id=$CID3)"
check "the other row still pools two runs" has c9.md "median of 2 runs"
sql "delete from comparisons where id = $CID3; delete from jobs where head = 'pull/9/head'"

# A comment over GitHub's 65,536 characters is cut to fit: runner lines of
# 200 KB and 300 rows leave the comment under 65,536 bytes, the lines and
# the rows that do not fit left to the hub, every fence closed.
sql "with recursive k(i) as (select 1 union all select i + 1 from k where i < 60) insert into runner_lines select result_id, 1000 + i, kind, text || ' ' || printf('%.3000c', 'x') from runner_lines, k where result_id = (select id from runner_results where build_id = $BUILD order by id limit 1) and idx = 0"
check "a comment whose runner lines are too long" run 0 "$PERFD" comment --pr 7 --dry-run --commit "$HEAD" --db "$DB" --hub "$HUB"
cp out c3.md
check "  stays under 65,536 bytes ($(wc -c <c3.md))" test "$(wc -c <c3.md)" -le 65536
check "  keeps its table" eq 1 "$(rows c3.md)"
check "  leaves the lines to the build's page on the hub" has c3.md "Build $BUILD: [its runners' lines are on the hub]($HUB/static/build.html?id=$BUILD)."
check "  says it was cut, and where the rest is" has c3.md "Cut to stay under 65536 bytes: everything about this commit is at $HUB/static/head.html?commit=$HEAD"
check "  no fence is left open" eq 0 "$(( $(grep -cx '````*' c3.md) % 2 ))"
# The unit beside each arm's values is read from the metric's name by
# perfd's one table: a rate's values are never shown as seconds.
METRIC=$(sql "select metric from comparisons where id = $CID")
sql "update comparisons set metric = 'xxh3_mb_s' where metric = '$METRIC'"
check "a comment of an mb_s metric" run 0 "$PERFD" comment --pr 7 --dry-run --commit "$HEAD" --db "$DB" --hub "$HUB"
check "  shows both arms' values in MB/s" eq "$(( 2 * $(rows out) )) rows" "$(grep '^| \[' out | grep -o ' MB/s (' | wc -l) rows"
check "  and none in seconds" eq 0 "$(grep '^| \[' out | grep -c ' s (')"
sql "update comparisons set metric = '$METRIC' where metric = 'xxh3_mb_s'"
{
	echo "create temp table t as select * from comparisons where id = $CID;"
	for i in $(seq 300); do
		echo "update t set id = (select max(id) + 1 from comparisons), case_name = 'case-$i'; insert into comparisons select * from t;"
	done
} | sqlite3 "$DB"
check "a comment of 300 rows" run 0 "$PERFD" comment --pr 7 --dry-run --commit "$HEAD" --db "$DB" --hub "$HUB"
cp out c4.md
check "  stays under 65,536 bytes ($(wc -c <c4.md))" test "$(wc -c <c4.md)" -le 65536
check "  keeps as many rows as fit ($(rows c4.md))" test "$(rows c4.md)" -gt 50
check "  says where the table goes on" grep -q "^The table goes on for the comparisons from [0-9]* on, on the hub.$" c4.md
check "  and that it was cut" has c4.md "Cut to stay under 65536 bytes"
check "without --commit it fails" run 2 "$PERFD" comment --pr 7 --dry-run --db "$DB"
check "  saying why" has err "without --config the pull request's head cannot be asked for: give --commit"
check "without --dry-run it fails" run 2 "$PERFD" comment --pr 7 --commit "$HEAD" --db "$DB"
check "  saying why" has err "posting needs --config FILE with a [github] section"
check "a bad hub URL fails" run 2 "$PERFD" comment --pr 7 --dry-run --commit "$HEAD" --db "$DB" --hub 'http://x/)<a>'
check "an absent database fails without creating one" run 2 "$PERFD" comment --pr 7 --dry-run --commit "$HEAD" --db "$T/none.db"
check "  (none created)" test ! -e "$T/none.db"
finish
