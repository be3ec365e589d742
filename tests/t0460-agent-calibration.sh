#!/bin/bash
# The agent's A/A comparisons (one build against itself), on the lavapipe
# profile: a fresh case gets [calibration] runs of them, stored as kind
# 'aa' with no job, before its first comparison (when = before, the
# default) or after its first job (when = after: that job's comparison
# judged without them, unless its stages are too few for a verdict without
# them); the next job runs none; a
# changed device fingerprint makes them run again; idle A/As keep to their
# hourly budget (0: none), go to the case whose calibration is oldest, and
# stop on SIGTERM, abandoned and not counted; /api/v1/calibration counts
# them; and the pull-request comment never calls an A/A a change.
#
# The fingerprint is changed honestly: lavapipe's vector width
# (LP_NATIVE_VECTOR_WIDTH, 128 or 256 bits) is part of the device name
# Vulkan reports, so an agent started with another width probes another
# device, as after a driver upgrade.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { echo "git missing: skipped"; exit 77; }
command -v cc >/dev/null || { echo "cc missing: skipped"; exit 77; }
need_vulkan --host lavapipe
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org

SRC=$T/src
git init -q -b main "$SRC"
work_prog "$SRC/prog.c" 2000000 7
# A program an A/A calls faster every time: its new arm prints a smaller
# time. The false verdict is planted, so that the counts are known.
cat >"$SRC/biased.sh" <<'SH'
#!/bin/sh
if [ "$PERFD_ARM" = new ]; then echo "TIMING t_ms=90"; else echo "TIMING t_ms=100"; fi
SH
chmod +x "$SRC/biased.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm base
C1=$(git -C "$SRC" rev-parse HEAD)
work_prog "$SRC/prog.c" 1000000 7
git -C "$SRC" commit -qam "half the rounds"
C2=$(git -C "$SRC" rev-parse HEAD)

# conf RUNS BUDGET [COOLDOWN_MS]: the agent's configuration.
conf() {
	cat <<CONF
[agent]
database = $DB
workdir = $T/work
host = lavapipe
poll_s = 0.2

[repo]
url = file://$SRC
branches = main

[calibration]
runs = $1
idle_budget_s = $2

[build]
command = cc -O1 -o prog prog.c
artifacts = prog biased.sh
timeout_s = 60

[case work]
command = ./prog
pairs = 3
max_pairs = 6
cooldown_ms = ${3:-0}

[case biased]
command = ./biased.sh
pairs = 9
max_pairs = 9
cooldown_ms = ${3:-0}
CONF
}
aa() { sql "select count(*) from comparisons where kind = 'aa' and state = 'done' ${1:-}"; }

# ---- the configuration ----
conf 2 0 >agent.conf
check "--check" run 0 "$PERFD" agent --config agent.conf --check
check "  shows the calibration" has out "calibration: 2 A/A comparisons before a case's comparison when it has none on this host; idle A/As up to 0 s an hour (none)"
check "  and that no calibration says yet what the host sees" has out "cases: no database yet at '$DB', so no calibration says what this host can see"
printf '[calibration]\nruns = -1\nidle_budget_s = 4000\nsoon = 1\nwhen = later\n' >>agent.conf
check "a bad [calibration] is refused" run 2 "$PERFD" agent --config agent.conf --check
check "  runs" has err "agent.conf:32: 'runs': expected a whole number from 0 to 100, not '-1'"
check "  idle_budget_s" has err "agent.conf:33: 'idle_budget_s': expected a number of seconds from 0 to 3600, not '4000'"
check "  an unknown key" has err "agent.conf:34: unknown key 'soon' in [calibration] (runs, when, idle_budget_s)"
check "  when" has err "agent.conf:35: 'when'"
check "  a second section" has err "agent.conf:31: a second [calibration] section"

# ---- a fresh case: runs A/As first ----
conf 2 0 >agent.conf
check "agent --once, fresh database" run 0 "$PERFD" agent --config agent.conf --once
cp err once1.err
check "two A/As per case, done, of no job" eq "biased 2|work 2" "$(sql "select group_concat(case_name || ' ' || n, '|') from (select case_name, count(*) n from comparisons where kind = 'aa' and state = 'done' and job_id is null group by case_name order by case_name)")"
check "each of 7 pairs (work) or the case's 9 (biased), for the 13 gains a calibration needs" eq "7,9" "$(sql "select group_concat(p) from (select distinct pairs p from comparisons where kind = 'aa' order by p)")"
B1=$(sql "select id from builds where commit_oid = '$C1'")
check "the base build against itself: one artifact, one build" eq 4 "$(aa "and old_artifact = new_artifact and base_build = $B1 and head_build = $B1")"
W1=$(sql "select id from comparisons where job_id is not null and case_name = 'work'")
check "before the case's comparison" eq 0 "$(aa "and case_name = 'work' and id > $W1")"
check "which they calibrate" eq "[$(sql "select group_concat(id, ',') from (select id from comparisons where kind = 'aa' and case_name = 'work' order by id)")]" "$(sql "select calibration from comparisons where id = $W1")"
check "the job's comparison is a comparison, faster" eq "compare faster" "$(sql "select kind || ' ' || verdict from comparisons where id = $W1")"
check "the log says A/A" has once1.err "case work: A/A comparison of build $B1 against itself, 7 pairs (1 of 2: the case has 0 of the 13 A/A gains it needs on this host)"
check "  and its verdict as a calibration sample" has once1.err "case biased: comparison $(sql "select min(id) from comparisons where kind = 'aa' and case_name = 'biased'"), A/A: a false verdict (calibration sample, not a change)"
check "the summary counts them" has out "A/A comparisons 4"
check "the planted A/As are false verdicts" eq "faster faster" "$(sql "select group_concat(verdict, ' ') from comparisons where kind = 'aa' and case_name = 'biased'")"
check "the others are not (7 pairs cannot pass the sign test at its quarter of 1%)" eq "unresolved unresolved" "$(sql "select group_concat(verdict, ' ') from comparisons where kind = 'aa' and case_name = 'work'")"
check "every comparison verifies" run 0 "$PERFD" verify --db "$DB"
check "perfd list" run 0 "$PERFD" list --db "$DB"
check "  calls them A/A" eq 4 "$(grep -c ' A/A ' out)"
A1=$(sql "select min(id) from comparisons where kind = 'aa'")
check "perfd show" run 0 "$PERFD" show --db "$DB" "$A1"
check "  says what an A/A is" has out "A/A: one build against itself; its verdict is a calibration sample (of the false verdict rate), not a change"
check "perfd show --json" run 0 "$PERFD" show --db "$DB" --json "$A1"
check "  kind and build, no job" eq "aa $B1 $B1 None" "$(js out 'd["kind"] + " " + str(d["builds"]["base"]) + " " + str(d["builds"]["head"]) + " " + str(d.get("job"))')"

# ---- the next job: calibrated already ----
work_prog "$SRC/prog.c" 500000 7
git -C "$SRC" commit -qam "a quarter"
check "the next job" run 0 "$PERFD" agent --config agent.conf --once
check "  runs no A/A" has out "A/A comparisons 0"
check "  still four" eq 4 "$(aa)"
W3=$(sql "select max(id) from comparisons where job_id is not null and case_name = 'work'")
check "  its comparison has the same calibration" eq "$(sql "select calibration from comparisons where id = $W1")" "$(sql "select calibration from comparisons where id = $W3")"

# ---- a changed fingerprint: A/As again ----
if grep -q '256 bits' "$T/probe.out"; then WIDTH=128; else WIDTH=256; fi
export LP_NATIVE_VECTOR_WIDTH=$WIDTH
fp_old=$(sed -n 's/^fingerprint //p' "$T/probe.out")
"$PERFD" probe --host lavapipe >probe2.out 2>&1
check "lavapipe at $WIDTH bits is another fingerprint" test "$(sed -n 's/^fingerprint //p' probe2.out)" != "$fp_old"
work_prog "$SRC/prog.c" 400000 7
git -C "$SRC" commit -qam "fewer still"
check "the agent on the changed device" run 0 "$PERFD" agent --config agent.conf --once
check "  runs the A/As again" has out "A/A comparisons 4"
check "  of the new fingerprint" eq 4 "$(aa "and fingerprint like '%$WIDTH bits%'")"
W4=$(sql "select max(id) from comparisons where job_id is not null and case_name = 'work'")
check "  which alone calibrate the next comparison" eq "[$(sql "select group_concat(id, ',') from (select id from comparisons where kind = 'aa' and case_name = 'work' and fingerprint like '%$WIDTH bits%' order by id)")]" "$(sql "select calibration from comparisons where id = $W4")"

# ---- idle A/As ----
# run_idle CONF SECONDS: the agent without --once for SECONDS after its
# first idle A/A ended (or 15 s, scaled, and SECONDS when none comes), then
# SIGTERM. The agent logs no decision not to run another A/A: SECONDS is
# the time in which it would have begun one.
more_aa() { [ "$(aa)" -gt "$1" ]; }
run_idle() {
	before=$(aa)
	"$PERFD" agent --config "$1" >idle.out 2>idle.err &
	p=$!
	wait_for "an idle A/A" 15 more_aa "$before" 2>/dev/null
	sleep "$2"
	kill -TERM "$p"
	wait "$p"
	idle_rc=$?
}
conf 2 0 >idle0.conf
run_idle idle0.conf 2
check "idle with idle_budget_s = 0: exit 0 on SIGTERM" eq 0 "$idle_rc"
check "  and no A/A" eq 8 "$(aa)"
# With a cool-down of 300 ms an A/A of 3 pairs takes over 1.5 s: one A/A
# spends a budget of 1 s.
conf 2 1 300 >idle1.conf
run_idle idle1.conf 3
check "idle with a budget of 1 s: exit 0" eq 0 "$idle_rc"
check "  one A/A" eq 9 "$(aa)"
check "  of no job" eq 5 "$(aa "and case_name = 'work' and job_id is null")"
check "  for the case whose calibration is oldest" eq work "$(sql "select case_name from comparisons where kind = 'aa' order by id desc limit 1")"
check "  of the newest build" eq "$(sql "select max(id) from builds where state = 'done'")" "$(sql "select base_build from comparisons where kind = 'aa' order by id desc limit 1")"
check "  said" has idle.err "case work: A/A comparison of build"
check "  as idle" has idle.err "(idle, its calibration the oldest)"
# The budget is the agent's own: a new start may spend it again, on the
# case that is now the oldest.
run_idle idle1.conf 3
check "the next start's idle A/A" eq 10 "$(aa)"
check "  goes to the other case" eq biased "$(sql "select case_name from comparisons where kind = 'aa' order by id desc limit 1")"

# A stop in the middle of an idle A/A: abandoned, not counted.
conf 2 3600 300 >idle2.conf
"$PERFD" agent --config idle2.conf >stop.out 2>stop.err &
p=$!
aa_running() { [ "$(sql "select count(*) from comparisons where kind = 'aa' and state = 'running'")" = 1 ]; }
check "an idle A/A running" wait_for "an idle A/A's row" 30 aa_running
kill -TERM "$p"
wait "$p"
check "SIGTERM during it: exit 0" eq 0 $?
check "  it is abandoned" eq 1 "$(sql "select count(*) from comparisons where kind = 'aa' and state = 'abandoned'")"
check "  said" has stop.err "of case work: stopped, kept as abandoned and not counted"
check "  nothing left running" eq 0 "$(sql "select count(*) from processes where state = 'running'")"

# ---- the hub ----
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>serve.log &
srv=$!
wait_for "perfd serve's line 'serving'" 10 grep -q "serving http://" serve.log
port=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' serve.log)
check "perfd serve started" test -n "$port"
URL=http://127.0.0.1:$port
get() { curl -s -o "$T/body" -w '%{http_code}' "$1"; }
check "GET /api/v1/calibration" eq 200 "$(get "$URL/api/v1/calibration")"
check "a row per case of the host" eq "lavapipe biased|lavapipe work" "$(js body '"|".join(r["host"] + " " + r["case"] for r in d["calibration"])')"
for k in work biased; do
	row="[r for r in d['calibration'] if r['case'] == '$k'][0]"
	check "$k: the A/As done, invalid ones apart" eq "$(aa "and case_name = '$k' and verdict != 'invalid'") $(aa "and case_name = '$k' and verdict = 'invalid'")" "$(js body "str($row['count']) + ' ' + str($row['invalid'])")"
	check "$k: by verdict" eq "$(sql "select sum(verdict = 'faster') || ' ' || sum(verdict = 'slower') || ' ' || sum(verdict = 'unchanged') || ' ' || sum(verdict = 'unresolved') from comparisons where kind = 'aa' and state = 'done' and case_name = '$k'")" "$(js body "' '.join(str($row[v]) for v in ('faster', 'slower', 'unchanged', 'unresolved'))")"
	check "$k: its calibration, the newest of this fingerprint" eq "$(sql "select group_concat(id, ' ') from (select id from comparisons where kind = 'aa' and state = 'done' and case_name = '$k' and fingerprint like '%$WIDTH bits%' order by id)")" "$(js body "' '.join(str(i) for i in $row['calibration'])")"
	check "$k: their gains" eq "$(sql "select count(*) from pair_gains g join comparisons c on c.id = g.comparison_id where c.kind = 'aa' and c.state = 'done' and c.case_name = '$k' and c.fingerprint like '%$WIDTH bits%'")" "$(js body "$row['gains']")"
done
# Its A/As without a calibration say faster (every pair agrees); with one
# made of its own biased A/As, unchanged: the bias is the host's noise.
rate=$(sql "select round(1.0 * sum(verdict in ('faster', 'slower')) / count(*), 6) from comparisons where kind = 'aa' and state = 'done' and case_name = 'biased' and verdict != 'invalid'")
check "the planted case's false verdict rate, as stored" eq "$(python3 -c "print(float('$rate'))") 0.1 0.1" "$(js body "' '.join(str(float([r for r in d['calibration'] if r['case'] == 'biased'][0][k])) for k in ('false_verdict_rate', 'noise_median', 'noise_p90'))")"
check "the other's is 0, and no noise" eq "0.0 0.0 0.0" "$(js body "' '.join(str(float([r for r in d['calibration'] if r['case'] == 'work'][0][k])) for k in ('false_verdict_rate', 'noise_median', 'noise_p90'))")"
check "filtered by host and case" eq 200 "$(get "$URL/api/v1/calibration?host=lavapipe&case=work")"
check "  one row" eq work "$(js body '"|".join(r["case"] for r in d["calibration"])')"
check "an unknown host: none" eq 0 "$(get "$URL/api/v1/calibration?host=nowhere" >/dev/null; js body 'len(d["calibration"])')"
check "an unknown parameter: 400" eq 400 "$(get "$URL/api/v1/calibration?limit=3")"
check "CSV" eq 200 "$(get "$URL/api/v1/calibration?format=csv")"
check "  its header" eq "host,case,count,faster,slower,unchanged,unresolved,invalid,false_verdict_rate,newest_at,rule,better,fingerprint_hash,calibration,gains,noise_median,noise_p90,max_pairs,min_effect,mde,mde_text" "$(head -n 1 body)"
check "comparisons name their kind" eq 200 "$(get "$URL/api/v1/comparisons?host=lavapipe&case=work&limit=500")"
check "  aa and compare" eq "$(sql "select count(*) from comparisons where case_name = 'work' and kind = 'aa'") $(sql "select count(*) from comparisons where case_name = 'work' and kind = 'compare'")" "$(js body 'str(sum(c["kind"] == "aa" for c in d["comparisons"])) + " " + str(sum(c["kind"] == "compare" for c in d["comparisons"]))')"
check "the timeline leaves A/As out" eq 200 "$(get "$URL/api/v1/timeline?host=lavapipe&case=work")"
check "  a point per comparison" eq "$(sql "select count(*) from comparisons where case_name = 'work' and kind = 'compare'")" "$(js body 'len(d["points"])')"
kill -TERM "$srv"
wait "$srv"

# ---- the comment never calls an A/A a change ----
git -C "$SRC" commit -q --allow-empty -m "nothing changed"
C5=$(git -C "$SRC" rev-parse HEAD)
check "an empty commit" run 0 "$PERFD" agent --config agent.conf --once
check "  is called A/A" has err "base and head builds made the same artifacts, byte for byte: an A/A comparison"
check "  its comparisons are stored as A/As of its job" eq "aa aa" "$(sql "select group_concat(c.kind, ' ') from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C5'")"
# Calibrated by A/As of their own kind, the work case is unchanged. The
# biased case's bias is in its calibration too, but pairs-median/2.2's sign
# test does not lean on the calibration: 9 of 9 pairs faster is a verdict,
# a false one the A/A counts (its arms are not exchangeable).
check "  the biased one faster, the work one unchanged" eq "faster unchanged" "$(sql "select group_concat(c.verdict, ' ') from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$C5'")"
check "  the --once summary calls the faster one false, not a change" eq "1 0" "$(grep -F "${C5:0:12}" out | grep -c 'A/A: a false verdict (calibration sample, not a change)') $(grep -F "${C5:0:12}" out | grep -cE '#[0-9]+ (faster|slower)')"
check "its comment" run 0 "$PERFD" comment --pr 1 --dry-run --commit "$C5" --db "$DB" --hub http://hub.example
cp out c5.md
check "  is the one derived from the stored rows" diff -u <(python3 "$TESTS_DIR/fixtures/comment-golden.py" "$DB" "$C5" http://hub.example) c5.md
check "  shows each A/A's verdict as a calibration sample" eq "1 1" "$(grep -o '\[A/A: unchanged (calibration sample)\](' c5.md | wc -l) $(grep -o '\[A/A: a false verdict (calibration sample, not a change)\](' c5.md | wc -l)"
check "  never faster or slower" eq 0 "$(grep -ciE 'faster|slower' c5.md)"
check "  says what the host sees of each case" eq 2 "$(grep -cE '^- lavapipe, (work|biased): (changes under [0-9.]+% are not visible|no change is visible) on this host within (6|9) pairs$' c5.md)"
check "a change's comment" run 0 "$PERFD" comment --pr 1 --dry-run --commit "$C2" --db "$DB"
check "  says faster" has out "[faster]("

# ---- when = after: the first verdict waits for no A/A ----
# work now has 24 pairs at most (12 of 12 pass the sign test), biased 7
# (7 of 7 pass at one stage): neither waits for its A/As.
DB=$T/after.db
conf 2 0 | sed "s|^database = .*|database = $DB|; s|^max_pairs = 6|max_pairs = 24|; /^\[calibration\]/a when = after" >after.conf
work_prog "$SRC/prog.c" 300000 7
git -C "$SRC" commit -qam "less again"
check "when = after, fresh database" run 0 "$PERFD" agent --config after.conf --once
cp err after.err
WA=$(sql "select min(id) from comparisons where job_id is not null and case_name = 'work'")
check "  the job's comparisons run first" eq 0 "$(aa "and id < $WA")"
check "  judged without a calibration, by the sign test: faster in 12 pairs" eq "none faster 12" "$(sql "select coalesce(calibration, 'none') || ' ' || verdict || ' ' || pairs_run from comparisons where id = $WA")"
check "  then A/As of the base build, for the 12 gains" eq "1 1" "$(sql "select count(*) >= 1, sum(pairs_run) >= 12 from comparisons where kind = 'aa' and case_name = 'work' and id > $WA and job_id is null and base_build = head_build and base_build = (select base_build from comparisons where id = $WA)" | tr '|' ' ')"
check "  after the job is done" eq 0 "$(sql "select count(*) from comparisons c join jobs j on j.id = $(sql "select job_id from comparisons where id = $WA") where c.kind = 'aa' and c.created_at < j.finished_at")"
check "  the log says none ran first" eq 0 "$(grep -c 'give no verdict without a calibration' after.err)"
check "  every comparison verifies" run 0 "$PERFD" verify --db "$DB"
work_prog "$SRC/prog.c" 200000 7
git -C "$SRC" commit -qam "less still"
check "the next job" run 0 "$PERFD" agent --config after.conf --once
check "  runs no A/A" has out "A/A comparisons 0"
WB=$(sql "select max(id) from comparisons where job_id is not null and case_name = 'work'")
check "  its comparison calibrated by them: faster in 3 pairs" eq "[$(sql "select group_concat(id, ',') from (select id from comparisons where kind = 'aa' and case_name = 'work' order by id)")] faster 3" "$(sql "select calibration || ' ' || verdict || ' ' || pairs_run from comparisons where id = $WB")"
check "--check says when = after" run 0 "$PERFD" agent --config after.conf --check
check "  in its words" has out "calibration: 2 A/A comparisons after a case's first job when it has none"
# 3 to 6 pairs give no verdict without a calibration: that case's A/As run
# first even so.
DB=$T/after6.db
sed "s|^database = .*|database = $DB|; s|^max_pairs = 24|max_pairs = 6|" after.conf >after6.conf
check "when = after, a case of at most 6 pairs" run 0 "$PERFD" agent --config after6.conf --once
check "  runs its A/As first, and says why" has err "case work: 3 to 6 pairs give no verdict without a calibration: its A/As run first"
check "  its comparison calibrated" eq 0 "$(sql "select count(*) from comparisons where case_name = 'work' and kind = 'compare' and calibration is null")"
finish
