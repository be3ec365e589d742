#!/bin/bash
# perfd agent's [history] on a generated git history whose program prints a
# planted time per commit: a creep of 0.4% steps caught by a span and
# reported as a range; a 5% step bisected to its commit past a commit that
# does not build; a change split across two commits, named with their
# shares; a single commit's change found by its head job; flat stretches
# that raise nothing; a bisection killed in the middle and resumed; a
# head's change dismissed as noise, which hides no span's; a head's change
# that is all of its span's, and one that is a part; a step whose half
# said slower falsely, repeated and not followed (and not repeated past
# the budget); and the configuration's errors.
. "$(dirname "$0")/lib.sh"
need git sqlite3 curl

mul() { awk -v v="$1" -v f="$2" 'BEGIN { printf "%.4f", v * f }'; }
sql() { sqlite3 "$DB" "$1"; }

new_src
C0=$(timed_commit "$SRC" 1000 base)
v=1000
for i in 1 2 3 4 5 6 7 8; do
	v=$(mul $v 1.004)
	C[$i]=$(timed_commit "$SRC" "$v" "creep $i")
done

cat >agent.conf <<CONF
$(agent_repo)

# A commit with a file named 'broken' does not build.
$(history_suite "test ! -e broken")
CONF
agent() { run 0 "$PERFD" agent --config agent.conf --once; }

# ---- a creep: each commit 0.4%, eight of them 3.2% ----
check "the agent runs the creep's history" agent
check "the head job sees no change alone" has out "main                 ${C[8]:0:12} done     run: #"
check "  (unchanged)" eq unchanged "$(sql "select verdict from comparisons c join jobs j on j.id = c.job_id
	where j.kind = 'head' and j.commit_oid = '${C[8]}'")"
check "a span job compared the head with 8 commits back" eq "span:main ${C[8]} $C0" \
	"$(sql "select head || ' ' || commit_oid || ' ' || base_oid from jobs where kind = 'span'")"
check "one alert, found by the span" eq "1|span|slower|8" \
	"$(sql "select id, found_by, direction, commits from alerts")"
check "confirmed by a repeated comparison before it was raised" eq "raised|confirm:1" \
	"$(sql "select a.state, j.head from alerts a join comparisons c on c.id = a.confirm_id
		join jobs j on j.id = c.job_id")"
check "bisected to the range that carries it: all 8 commits" eq "range|$C0|${C[8]}|8" \
	"$(sql "select what, lo_oid, hi_oid, commits from alert_findings where alert_id = 1")"
check "  since no half alone carried it" eq "both neither neither" \
	"$(sql "select outcome from bisect_steps where alert_id = 1 order by step" | tr '\n' ' ' | sed 's/ $//')"
check "perfd alerts lists it" run 0 "$PERFD" alerts --db "$DB"
check "  as a range of 8, new" has out "span  ${C0:0:12}..${C[8]:0:12}       8   -3."
check "  its state" has out "new           range of 8"
check "perfd alerts 1 shows its steps" run 0 "$PERFD" alerts --db "$DB" 1
check "  step 1 found both halves slower" has out "step 1: ${C[4]:0:12} in ${C0:0:12}..${C[8]:0:12}"
check "  the finding" has out "range ${C[8]} from $C0 (8 commits)"
check "a span's jobs run no contract runner and measure only" eq 0 \
	"$(sql "select count(*) from runner_results")"

# ---- a 5% step at one commit, with a commit that does not build before it ----
v8=$v
C[9]=$(timed_commit "$SRC" "$v8" "flat 9")
touch "$SRC/broken"
C[10]=$(timed_commit "$SRC" "$v8" "does not build")
rm "$SRC/broken"
C[11]=$(timed_commit "$SRC" "$v8" "builds again")
v=$(mul "$v8" 1.05)
C[12]=$(timed_commit "$SRC" "$v" "5% slower")
for i in 13 14 15 16; do C[$i]=$(timed_commit "$SRC" "$v" "flat $i"); done
check "the agent runs the step's history" agent
check "a second alert, by the span of ${C[8]:0:7}..${C[16]:0:7}" eq "2|span|slower|${C[8]}|${C[16]}" \
	"$(sql "select id, found_by, direction, lo_oid, hi_oid from alerts where id = 2")"
check "bisected to the one commit" eq "commit|${C[11]}|${C[12]}|1" \
	"$(sql "select what, lo_oid, hi_oid, commits from alert_findings where alert_id = 2")"
check "its share is the whole change (5%)" eq "-0.05" \
	"$(sql "select printf('%.2f', gain) from alert_findings where alert_id = 2")"
check "the commit that does not build was skipped, and said so" eq "skipped|${C[10]}" \
	"$(sql "select outcome, mid_oid from bisect_steps where alert_id = 2 and outcome = 'skipped'")"
check "  with why" has <(sql "select detail from bisect_steps where alert_id = 2 and
	outcome = 'skipped'") "failed"
steps=$(sql "select count(*) from bisect_steps where alert_id = 2 and outcome <> 'skipped'")
check "in at most ceil(log2 8) = 3 steps measured ($steps)" test "$steps" -le 3
cmps=$(sql "select count(*) from comparisons c join jobs j on j.id = c.job_id
	where j.kind = 'bisect' and j.alert_id = 2 and c.state = 'done'")
check "and 2 ceil(log2 8) + 2 = 8 comparisons at most ($cmps)" test "$cmps" -le 8
check "every step is an ordinary stored comparison that verifies" \
	run 0 "$PERFD" verify --db "$DB" "$(sql "select max(c.id) from comparisons c
		join jobs j on j.id = c.job_id where j.kind = 'bisect'")"

# ---- a change split across two commits, 3% each ----
v=$v
for i in 17 18 19 20 21 22 23 24; do
	case $i in 19|22) v=$(mul "$v" 1.03) ;; esac
	C[$i]=$(timed_commit "$SRC" "$v" "commit $i")
done
check "the agent runs the split history" agent
check "a third alert, by the span" eq "3|span|${C[16]}|${C[24]}" \
	"$(sql "select id, found_by, lo_oid, hi_oid from alerts where id = 3")"
check "both commits are named, in the branch's order" eq "commit|${C[19]}
commit|${C[22]}" "$(sql "select what, hi_oid from alert_findings where alert_id = 3 order by idx")"
check "each with its share (3%)" eq "-0.03 -0.03" \
	"$(sql "select printf('%.2f', gain) from alert_findings where alert_id = 3 order by idx" | tr '\n' ' ' | sed 's/ $//')"

# ---- one commit pushed alone, 5% faster: its head job finds it ----
C[25]=$(timed_commit "$SRC" "$(mul "$v" 0.95)" "5% faster")
check "the agent runs the single commit" agent
check "an alert found by the head job, faster" eq "4|head|faster|1|${C[24]}|${C[25]}" \
	"$(sql "select id, found_by, direction, commits, lo_oid, hi_oid from alerts where id = 4")"
check "confirmed, and its commit named without a step" eq "raised|commit|${C[25]}|0" \
	"$(sql "select a.state, f.what, f.hi_oid, (select count(*) from bisect_steps where alert_id = 4)
		from alerts a join alert_findings f on f.alert_id = a.id where a.id = 4")"
check "no span for one commit" eq 3 "$(sql "select count(*) from jobs where kind = 'span'")"

# ---- sixteen flat commits: spans, and no alert ----
v=$(mul "$v" 0.95)
for i in $(seq 26 41); do C[$i]=$(timed_commit "$SRC" "$v" "flat $i"); done
check "the agent runs sixteen flat commits" agent
check "a span of them" eq 4 "$(sql "select count(*) from jobs where kind = 'span'")"
check "and no new alert" eq 4 "$(sql "select count(*) from alerts")"
check "nothing left queued or running" eq 0 "$(sql "select count(*) from jobs where state in ('queued', 'running')")"

# The timeline is the head jobs' alone: a span, confirm or bisect job's
# comparison would be a point between two commits that is neither.
HOST=$(sql "select host from comparisons limit 1")
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>"$T/serve.err" &
spid=$!
URL=$(served "$T/serve.err")
check "the timeline holds the head jobs' comparisons alone" eq \
	"$(sql "select group_concat(c.id, ' ') from comparisons c join jobs j on j.id = c.job_id
		where j.kind = 'head' and c.kind = 'compare'")" \
	"$(curl -s "$URL/api/v1/timeline?host=$HOST&case=run" |
		python3 -c 'import json, sys; print(*[p["id"] for p in json.load(sys.stdin)["points"]])')"
kill $spid; wait $spid 2>/dev/null

# ---- a verdict an upgrade found is not judged: old history raises nothing ----
check "every head and span job's verdicts were read once" eq 0 "$(sql "select count(*) from jobs where judged = 0")"

# ---- a bisection killed in the middle, then resumed ----
SRC2=$T/src2
git init -q -b main "$SRC2"
D0=$(timed_commit "$SRC2" 1000 base 0.05)
for i in 1 2 3 4 5 6 7 8; do
	[ $i = 6 ] && v2=1050 || v2=${v2:-1000}
	D[$i]=$(timed_commit "$SRC2" "$v2" "commit $i" 0.05)
done
sed -e "s|$DB|$T/kill.db|; s|$T/work|$T/work2|; s|file://$SRC|file://$SRC2|" agent.conf >kill.conf
"$PERFD" agent --config kill.conf --once >kill.out 2>kill.err &
pid=$!
for _ in $(seq 600); do
	n=$(sqlite3 "$T/kill.db" "select count(*) from bisect_steps" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 2 ] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.05
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
steps_then=$(sqlite3 "$T/kill.db" "select count(*) from bisect_steps")
check "the agent was killed during the bisection ($steps_then steps queued)" test "$steps_then" -ge 1
check "  before it ended" eq running "$(sqlite3 "$T/kill.db" "select bisect from alerts")"
check "started again, it resumes and ends" run 0 "$PERFD" agent --config kill.conf --once
check "the bisection names the step's commit" eq "commit|${D[6]}" \
	"$(sqlite3 "$T/kill.db" "select what, hi_oid from alert_findings")"
check "no step was asked twice" eq 0 "$(sqlite3 "$T/kill.db" "select count(*) from (select lo_oid, hi_oid,
	mid_oid from bisect_steps group by 1, 2, 3 having count(*) > 1)")"
check "steps numbered without a gap" eq 1 "$(sqlite3 "$T/kill.db" "select max(step) = count(*) from bisect_steps")"
check "a comparison cut by the kill is kept as abandoned, and measured again" eq 0 \
	"$(sqlite3 "$T/kill.db" "select count(*) from comparisons where state = 'running'")"

# ---- spans from the newest release tag ----
SRC3=$T/src3
git init -q -b main "$SRC3"
E[0]=$(timed_commit "$SRC3" 1000 base)
git -C "$SRC3" tag v1.0
for i in 1 2 3 4 5 6 7 8; do
	[ $i = 7 ] && v3=1050 || v3=${v3:-1000}
	E[$i]=$(timed_commit "$SRC3" "$v3" "commit $i")
	case $i in
	4) git -C "$SRC3" tag -a -m "release 1.1" v1.1 ;;  # annotated
	6) git -C "$SRC3" tag nightly-6 ;;                  # not a release
	esac
done
sed -e "s|$DB|$T/tag.db|; s|$T/work|$T/work3|; s|file://$SRC|file://$SRC3|;
	s|^span_commits = 8|span_commits = 4\nreference = tag:v*|" agent.conf >tag.conf
check "the agent runs with reference = tag:v*" run 0 "$PERFD" agent --config tag.conf --once
check "  its span starts at the newest matching tag, v1.1 (not nightly-6)" eq "${E[8]} ${E[4]}" \
	"$(sqlite3 "$T/tag.db" "select commit_oid || ' ' || base_oid from jobs where kind = 'span'")"
check "  and says so" has err "the span starts at tag v1.1 (${E[4]:0:12})"
check "  the change since the release is found, bisected to its commit" eq "commit|${E[7]}" \
	"$(sqlite3 "$T/tag.db" "select what, hi_oid from alert_findings")"
E[9]=$(timed_commit "$SRC3" 1050 "commit 9")
git -C "$SRC3" tag v1.2
for i in 10 11 12 13; do E[$i]=$(timed_commit "$SRC3" 1050 "commit $i"); done
check "four commits later, a new release" run 0 "$PERFD" agent --config tag.conf --once
check "  the next span starts at it" eq "${E[13]} ${E[9]}" \
	"$(sqlite3 "$T/tag.db" "select commit_oid || ' ' || base_oid from jobs where kind = 'span'
		order by id desc limit 1")"
check "  and raises nothing" eq 1 "$(sqlite3 "$T/tag.db" "select count(*) from alerts")"

# ---- a head's change dismissed as noise hides no span's ----
# A creep of four commits, 0.8% each (3.2%), whose last commit's program
# prints 2.4% more for its first 4 processes alone: its head job (a warm-up
# and 3 pairs) runs those and finds as much as the span; its repeated
# comparison, after the span's, sees 0.8%.
SRC4=$T/src4
FLAKY=$T/flaky
mkdir "$FLAKY" && chmod 777 "$FLAKY"
git init -q -b main "$SRC4"
F[0]=$(timed_commit "$SRC4" 1000 base)
v4=1000
for i in 1 2 3; do
	v4=$(mul "$v4" 1.008)
	F[$i]=$(timed_commit "$SRC4" "$v4" "creep $i")
done
v4=$(mul "$v4" 1.008)
cat >"$SRC4/prog" <<SH
#!/bin/sh
# 0.8% more than its parent, and 2.4% more again for its first 4 processes.
n=\$(wc -l <"$FLAKY/count" 2>/dev/null || echo 0)
echo x >>"$FLAKY/count"
v=$v4
[ "\$n" -lt 4 ] && v=$(mul "$v4" 1.024)
exec awk -v v=\$v -v s="\${PERFD_SEQ:-1}" 'BEGIN { srand(s * 7919); z = 0
	for (i = 0; i < 12; i++) z += rand(); z -= 6
	printf "TIMING run_ms=%.4f\n", v * (1 + 0.001 * z) }'
SH
git -C "$SRC4" commit -q -am "creep 4, flaky" && F[4]=$(git -C "$SRC4" rev-parse HEAD)
sed -e "s|$DB|$T/flaky.db|; s|$T/work|$T/work4|; s|file://$SRC|file://$SRC4|;
	s|^span_commits = 8|span_commits = 4|; s|^\[build\]|[sandbox]\nrw = $FLAKY\n\n[build]|" \
	agent.conf >flaky.conf
check "the agent runs a creep whose head is noisy at first" run 0 "$PERFD" agent --config flaky.conf --once
cp err flaky.err
fsql() { sqlite3 "$T/flaky.db" "$1"; }
check "the head job found it 3.2% slower (0.8% and the first processes' 2.4%)" eq "slower|-0.03" \
	"$(fsql "select c.verdict, printf('%.2f', c.gain_median) from comparisons c
		join jobs j on j.id = c.job_id where j.kind = 'head' and j.commit_oid = '${F[4]}'")"
check "  its alert was dismissed by the repeated comparison" eq "head|dismissed" \
	"$(fsql "select found_by, state from alerts where lo_oid = '${F[3]}' and hi_oid = '${F[4]}'")"
check "  the span waited for that" has flaky.err "whose alert is being confirmed: read again"
check "the span's creep is raised all the same" eq "span|${F[0]}|${F[4]}|raised" \
	"$(fsql "select found_by, lo_oid, hi_oid, state from alerts where found_by = 'span'")"
check "  and bisected" eq done "$(fsql "select bisect from alerts where found_by = 'span'")"
check "every job read" eq 0 "$(fsql "select count(*) from jobs where judged = 0")"

# ---- a head's change makes its span's only when it is all of it ----
# Push 1: three flat commits and a 5% step at the head: the head job finds
# the span's whole change, which makes no span alert. Push 2: three
# commits of 0.8% and a 1.5% step at the head: the head job finds 1.5%,
# the span 4%, and the 2.5% no head found makes a span alert.
SRC5=$T/src5
git init -q -b main "$SRC5"
G[0]=$(timed_commit "$SRC5" 1000 base)
for i in 1 2 3; do G[$i]=$(timed_commit "$SRC5" 1000 "flat $i"); done
G[4]=$(timed_commit "$SRC5" 1050 "5% slower")
sed -e "s|$DB|$T/part.db|; s|$T/work|$T/work5|; s|file://$SRC|file://$SRC5|;
	s|^span_commits = 8|span_commits = 4\nreference = last|" agent.conf >part.conf
psql() { sqlite3 "$T/part.db" "$1"; }
check "the agent runs a span whose change is its head's" run 0 "$PERFD" agent --config part.conf --once
check "  the head's alert, raised" eq "head|${G[3]}|${G[4]}|raised" \
	"$(psql "select found_by, lo_oid, hi_oid, state from alerts")"
check "  no span alert, said so" has err "as the head job of ${G[4]:0:12} found alone: no span alert"
v5=1050
for i in 5 6 7; do
	v5=$(mul "$v5" 1.008)
	G[$i]=$(timed_commit "$SRC5" "$v5" "creep $i")
done
G[8]=$(timed_commit "$SRC5" "$(mul "$v5" 1.015)" "1.5% slower")
check "the agent runs a span whose head carries a part of it" run 0 "$PERFD" agent --config part.conf --once
check "  the head's alert, raised" eq "head|raised" \
	"$(psql "select found_by, state from alerts where lo_oid = '${G[7]}' and hi_oid = '${G[8]}'")"
check "  and the span's, raised too" eq "span|raised|done" \
	"$(psql "select found_by, state, bisect from alerts where lo_oid = '${G[4]}' and hi_oid = '${G[8]}'")"

# ---- a false verdict of one half is repeated, not bisected ----
# Eight commits whose sixth is 5% slower; the fourth, the first step's
# midpoint, is flat but prints 5% more for its first 4 processes: the
# step's lower comparison (a warm-up and 3 pairs) runs those alone and
# says slower, the upper one says slower too, and the halves then carry
# twice the segment's 5%. Repeated, the lower half is unchanged: the
# bisection descends into the upper half alone and names the one commit.
SRC6=$T/src6
git init -q -b main "$SRC6"
H[0]=$(timed_commit "$SRC6" 1000 base)
for i in 1 2 3; do H[$i]=$(timed_commit "$SRC6" 1000 "flat $i"); done
cat >"$SRC6/prog" <<SH
#!/bin/sh
# 1000 ms, and 1050 for its first 4 processes.
n=\$(wc -l <"$FLAKY/mid.count" 2>/dev/null || echo 0)
echo x >>"$FLAKY/mid.count"
v=1000
[ "\$n" -lt 4 ] && v=1050
exec awk -v v=\$v -v s="\${PERFD_SEQ:-1}" 'BEGIN { srand(s * 7919); z = 0
	for (i = 0; i < 12; i++) z += rand(); z -= 6
	printf "TIMING run_ms=%.4f\n", v * (1 + 0.001 * z) }'
SH
git -C "$SRC6" commit -q -am "flat 4, slow at first" && H[4]=$(git -C "$SRC6" rev-parse HEAD)
H[5]=$(timed_commit "$SRC6" 1000 "flat 5")
for i in 6 7 8; do H[$i]=$(timed_commit "$SRC6" 1050 "commit $i, 5% slower than 5"); done
sed -e "s|$DB|$T/repeat.db|; s|$T/work|$T/work6|; s|file://$SRC|file://$SRC6|;
	s|^\[build\]|[sandbox]\nrw = $FLAKY\n\n[build]|" agent.conf >repeat.conf
rsql() { sqlite3 "$T/repeat.db" "$1"; }
check "the agent runs a step whose midpoint is slow at first" run 0 "$PERFD" agent --config repeat.conf --once
check "  a span alert of the 8 commits, raised" eq "span|${H[0]}|${H[8]}|raised|done" \
	"$(rsql "select found_by, lo_oid, hi_oid, state, bisect from alerts")"
check "  step 1 at ${H[4]:0:7}: both halves slower, twice the segment's change" eq "1|${H[4]}|both" \
	"$(rsql "select step, mid_oid, outcome from bisect_steps where step = 1")"
check "  its lower half said slower" has <(rsql "select detail from bisect_steps where step = 1") \
	"${H[0]:0:12}..${H[4]:0:12} slower -5."
check "  step 2 is its repeat: the lower half unchanged now" eq "2|${H[0]}|${H[8]}|${H[4]}|upper" \
	"$(rsql "select step, lo_oid, hi_oid, mid_oid, outcome from bisect_steps where step = 2")"
check "  said so, with why" has <(rsql "select detail from bisect_steps where step = 2") \
	"repeat of step 1, whose halves carry -10."
check "  and the segment's" has <(rsql "select detail from bisect_steps where step = 2") \
	"against the segment's -5."
check "the one true culprit is the only finding" eq "commit|${H[6]}" \
	"$(rsql "select what, hi_oid from alert_findings")"
check "  its note names the repeat" has <(rsql "select note from alert_findings") \
	"step 1 repeated as step 2"
check "the repeat is counted: two comparisons a step, the repeat's among them" eq 1 \
	"$(rsql "select count(*) = 2 * (select count(*) from bisect_steps)
		from jobs where kind = 'bisect'")"
check "  and said in the alert" has <(rsql "select detail from alerts") \
	"bisected in 4 steps, 1 of them a repeat: 1 finding"
check "perfd alerts 1 shows the repeat" run 0 "$PERFD" alerts --db "$T/repeat.db" 1
check "  as its step" has out "step 2: ${H[4]:0:12} in ${H[0]:0:12}..${H[8]:0:12}"
check "  and the finding's note" has out "commit ${H[6]}, -5."
check "    (found past step 1 repeated as step 2)" has out "(found past step 1 repeated as step 2)"
"$PERFD" serve --db "$T/repeat.db" --listen 127.0.0.1:0 2>"$T/serve6.err" &
spid=$!
URL=$(served "$T/serve6.err")
check "the API's alert carries the repeat" eq "bisected in 4 steps, 1 of them a repeat: 1 finding
commit ${H[6]} found past step 1 repeated as step 2" \
	"$(curl -s "$URL/api/v1/alerts/1" | python3 -c 'import json, sys; a = json.load(sys.stdin)
print(a["detail"].split("; ")[-1]); print(*[" ".join((f["what"], f["hi"], f["note"])) for f in a["findings"]], sep="\n")')"
kill $spid; wait $spid 2>/dev/null
# The same history with a budget of one step: no two comparisons are left
# to repeat it, and the range is said as found, not bisected on a doubt.
rm "$FLAKY/mid.count"
sed -e "s|$T/repeat.db|$T/repeat2.db|; s|$T/work6|$T/work7|;
	s|^span_commits = 8|span_commits = 8\nbisect_comparisons = 2|" repeat.conf >repeat2.conf
check "the agent runs it again with bisect_comparisons = 2" run 0 "$PERFD" agent --config repeat2.conf --once
check "  one step, not repeated" eq "1|both" "$(sqlite3 "$T/repeat2.db" "select step, outcome from bisect_steps")"
check "  the whole range is the finding, the budget spent" eq "budget|range|${H[0]}|${H[8]}" \
	"$(sqlite3 "$T/repeat2.db" "select a.bisect, f.what, f.lo_oid, f.hi_oid from alerts a
		join alert_findings f on f.alert_id = a.id")"
check "  said so" has <(sqlite3 "$T/repeat2.db" "select note from alert_findings") \
	"step 1's halves carry -10."
check "  and why" has <(sqlite3 "$T/repeat2.db" "select note from alert_findings") \
	"and the budget left no comparison to repeat it"

# ---- the configuration's errors ----
cat >bad.conf <<CONF
[agent]
database = $T/bad.db
[repo]
url = file://$SRC
branches = main
[build]
command = true
artifacts = prog
[case run]
command = ./prog
[history]
branches = main release
span_hours = 2
reference = sideways
bisect_comparisons = lots
colour = blue
CONF
check "a bad [history] is refused" run 2 "$PERFD" agent --config bad.conf --check
check "  an unwatched branch" has err "bad.conf: [history] branch 'release' is none of [repo] branches"
check "  span_hours without span_commits" has err "[history] 'span_hours' needs 'span_commits'"
check "  a bad reference, at its line" has err "bad.conf:14: 'reference': expected back (span_commits back), last (the last span's head) or tag:PATTERN (the newest tag matching PATTERN, as v*), not 'sideways'"
check "  a bad budget" has err "bad.conf:15: 'bisect_comparisons': expected a whole number from 0 to 1000, not 'lots'"
check "  an unknown key" has err "bad.conf:16: unknown key 'colour' in [history]"
sed -i 's/^reference = sideways/reference = tag:/' bad.conf
check "a tag reference needs a pattern" run 2 "$PERFD" agent --config bad.conf --check
check "  said at its line" has err "bad.conf:14: 'reference': expected back (span_commits back), last (the last span's head) or tag:PATTERN (the newest tag matching PATTERN, as v*), not 'tag:'"
finish
