#!/bin/bash
# pairs-median/2.2 through the real binary on a noisy program (the test
# program with a seeded normal noise, the same on every run): A/A
# comparisons give no verdict, unresolved ones run further stages, the
# calibration they build is used, and with it 3 pairs decide a clear change;
# what that calibration lets the host see (the MDE) is said by the receipt,
# an unresolved verdict, /api/v1/calibration and perfd agent --check.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"

aa() { "$PERFD" pair --db "$DB" --json --host-name noisy-host --case noisy "$@" "$PLANT" "$PLANT" \
	-- --old 100 --new 100 --noise 10 --seed "$seed"; }

# ---- A/A comparisons of a program with 10% noise ----
N=30
failed=0
for seed in $(seq 1 $N); do
	aa >"aa$seed.json" 2>"aa$seed.err" || failed=$((failed + 1))
done
check "$N A/A comparisons ran" eq 0 "$failed"
check "$N A/A comparisons stored as A/As" eq "$N" "$(sql "select count(*) from comparisons where kind = 'aa' and state = 'done'")"
check "no false verdict in $N" eq "" "$(sql "select group_concat(id) from comparisons where kind = 'aa' and verdict in ('faster', 'slower')")"
check "the first ran every stage: 3, 6, 12, 24 pairs" eq "24 3,6,12,24 sign" "$(js aa1.json 'str(d["pairs_run"]) + " " + ",".join(str(s["pairs"]) for s in d["stages"]) + " " + d["stages"][0]["test"]')"
check "  and is unresolved, with the stage's p values" has aa1.json "stage 4 of 4 (24 pairs, sign test): sign test p "
check "the second is calibrated by the first" eq "[$(js aa1.json 'd["comparison"]')] sign+calibrated 24" "$(js aa2.json 'json.dumps(d["calibration"]) + " " + d["stages"][0]["test"] + " " + str(d["stages"][0]["calibration_gains"])')"
check "the last by at most 120 gains, newest first" eq 1 "$(js "aa$N.json" 'int(0 < d["stages"][0]["calibration_gains"] <= 120 and d["calibration"] == sorted(d["calibration"]) and d["calibration"][-1] == d["comparison"] - 1)')"
check "every comparison verifies" run 0 "$PERFD" verify --db "$DB"

# ---- a planted 20% slow-down in the same noise ----
seed=1000
check "a calibrated comparison of a 20% slower new arm" run 0 "$PERFD" pair --db "$DB" --json \
	--host-name noisy-host --case noisy --old-arg --old --old-arg 100 --new-arg --new --new-arg 120 \
	"$PLANT" "$PLANT" -- --noise 10 --seed "$seed"
cp out planted.json
check "  is slower" eq slower "$(js planted.json 'd["verdict"]')"
check "  by the calibrated test" eq sign+calibrated "$(js planted.json 'd["stages"][-1]["test"]')"
check "  within max_pairs" eq 1 "$(js planted.json 'int(d["pairs_run"] <= 24)')"
check "the same without a calibration (another case)" run 0 "$PERFD" pair --db "$DB" --json \
	--host-name noisy-host --case fresh --old-arg --old --old-arg 100 --new-arg --new --new-arg 120 \
	"$PLANT" "$PLANT" -- --noise 10 --seed "$seed"
check "  uses the sign test" eq sign "$(js out 'd["stages"][-1]["test"]')"
check "  and needs at least 12 pairs for any verdict" eq 1 "$(js out 'int(d["pairs_run"] >= 12)')"

# ---- a load that comes after the calibration (pairs-median/2.2) ----
# The CPU pressure perfd reads around each process comes from a file the
# planted program adds to (plant --pressure; PERFD_CPU_PRESSURE names it):
# no pressure while the case "shifted" is calibrated, then a 5% slower new
# arm, in 1% noise, with and without a load planted beside every process.
printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n' >pressure
# shifted SEED NEW PRESSURE_MS: old 100, new NEW (100: an A/A, both arms
# with the same arguments), each process adding PRESSURE_MS to the
# pressure file.
shifted() {
	local arms=(--old-arg --old --old-arg 100 --new-arg --new --new-arg "$2") plant=()

	[ "$2" != 100 ] || { arms=(); plant=(--old 100 --new 100); }
	PERFD_CPU_PRESSURE=$T/pressure "$PERFD" pair --db "$DB" --json --host-name noisy-host \
		--case shifted "${arms[@]}" "$PLANT" "$PLANT" -- "${plant[@]}" --noise 1 \
		--sleep-ms 20 --pressure "$T/pressure" --pressure-ms "$3" --seed "$1"
}
check "two quiet A/As of case shifted" run 0 shifted 4001 100 0
check "  (the second)" run 0 shifted 4002 100 0
check "  their processes kept the planted pressure, 0 ms" eq 0 "$(sql "select count(*) from processes p join comparisons c on c.id = p.comparison_id where c.case_name = 'shifted' and p.cpu_wait_ms is not 0")"
check "a 5% slower new arm, quiet" run 0 shifted 4003 105 0
check "  is slower in 3 pairs, by the calibrated test, the load gate passed" \
	eq "slower 3 sign+calibrated 0 True" "$(js out 'd["verdict"] + " " + str(d["pairs_run"]) + " " + d["stages"][0]["test"] + " " + str(d["stages"][0]["load_gate"]["above"]) + " " + str(d["stages"][0]["load_gate"]["passed"])')"
check "the same beside a planted load of 15 ms a process" run 0 shifted 4003 105 15
cp out loaded.json
check "  its processes kept 15 ms each" eq 1 "$(js loaded.json 'int(all(p["cpu_wait_ms"] == 15 for p in d["processes"]))')"
check "  its first stage judged by the sign test alone: 6 of 6 over the calibration's every one" \
	eq "sign 6 False" "$(js loaded.json 'd["stages"][0]["test"] + " " + str(d["stages"][0]["load_gate"]["above"]) + " " + str(d["stages"][0]["load_gate"]["passed"])')"
check "  so it takes more pairs (the sign test needs 12 of 12)" eq 1 "$(js loaded.json 'int(d["pairs_run"] >= 12)')"
loaded=$(js loaded.json 'd["comparison"]')
check "  the text receipt says why" run 0 "$PERFD" show --db "$DB" "$loaded"
check "  in its words" has out "6 processes ran under more CPU pressure than all but the largest of the calibration's (p "
check "  and verify recomputes the gate" run 0 "$PERFD" verify --db "$DB" "$loaded"
sql "update processes set cpu_wait_ms = 0 where comparison_id = $loaded"
check "  from the rows: with the pressure taken away, it differs" run 1 "$PERFD" verify --db "$DB" "$loaded"
check "  naming the gate" has out "stage 1 load p"
sql "update processes set cpu_wait_ms = 15 where comparison_id = $loaded"
check "  and matches again with the rows as they were" run 0 "$PERFD" verify --db "$DB" "$loaded"

# ---- what the noisy host can see (docs/rule.md, "What a host can see") ----
# The MDE as every view words it: two digits, whole from 10%.
words() { js "$1" "'changes under %s%% are not visible on this host within 24 pairs' % (('%.0f' if d['mde'] >= 0.1 else '%.2g') % (100 * d['mde']))"; }
check "the first A/A had no calibration: no MDE" eq "None no calibration yet says what this host can see" "$(js aa1.json 'str(d["mde"]) + " " + d["mde_text"]')"
seed=2000
check "a 1% slower new arm in the same 10% noise" run 0 "$PERFD" pair --db "$DB" --json \
	--host-name noisy-host --case noisy --old-arg --old --old-arg 100 --new-arg --new --new-arg 101 \
	"$PLANT" "$PLANT" -- --noise 10 --seed "$seed"
cp out small.json
check "  is unresolved after every stage" eq "unresolved 24" "$(js small.json 'd["verdict"] + " " + str(d["pairs_run"])')"
check "  its receipt has its calibration's MDE: over min_effect, under 100%" eq 1 "$(js small.json 'int(0.01 < d["mde"] < 1)')"
check "  in the words of every view" eq "$(words small.json)" "$(js small.json 'd["mde_text"]')"
check "  the same as the planted 20%'s, of the same calibration" eq "$(js planted.json 'd["mde"]')" "$(js small.json 'd["mde"]')"
MDE_PCT=$(words small.json | sed 's/changes under \([0-9.]*%\).*/\1/')
check "  and why it is unresolved" eq "this host sees changes of $MDE_PCT or more; min_effect is 1%" "$(js small.json 'd["unresolved_because"]')"
small=$(js small.json 'd["comparison"]')
check "its text receipt" run 0 "$PERFD" show --db "$DB" "$small"
check "  says what the host sees" has out "sees  $(words small.json)"
check "  and why it is unresolved" has out "verdict unresolved: this host sees changes of $MDE_PCT or more; min_effect is 1%"
check "the 20% comparison, resolved, has no such reason" eq None "$(js planted.json 'str(d["unresolved_because"])')"
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>serve.err &
srv=$!
kill_at_exit srv
URL=$(served serve.err)
check "perfd serve" test -n "$URL"
curl -s "$URL/api/v1/calibration?host=noisy-host&case=noisy" >cal.json
check "/api/v1/calibration: the same MDE, its stages and min_effect" eq "$(js small.json 'd["mde"]') 24 0.01" "$(js cal.json 'str(d["calibration"][0]["mde"]) + " " + str(d["calibration"][0]["max_pairs"]) + " " + str(d["calibration"][0]["min_effect"])')"
check "  in the same words" eq "$(words small.json)" "$(js cal.json 'd["calibration"][0]["mde_text"]')"
curl -s "$URL/api/v1/calibration?format=csv" >cal.csv
check "  and in CSV" has cal.csv ",24,0.01,$(js small.json 'd["mde"]'),$(words small.json)"
kill -TERM "$srv"
wait "$srv"
# perfd agent --check says it per case, from the same calibration.
printf '[host]\nname = noisy-host\n[faults]\nfault_log = %s/kmsg\n' "$T" >noisy-host.conf
: >"$T/kmsg"
cat >agent.conf <<CONF
[agent]
database = $DB
workdir = $T/work
host = $T/noisy-host.conf

[repo]
url = file://$T/nowhere
branches = main

[build]
command = true
artifacts = plant

[case noisy]
command = ./plant
[case fresh]
command = ./plant
CONF
check "agent --check" run 0 "$PERFD" agent --config agent.conf --check
check "  says what the host sees of the noisy case" has out "case noisy: $(words small.json)"
check "  and that a case without A/As has no calibration yet" has out "case fresh: no calibration yet says what this host can see"

# ---- a time budget in place of max_pairs (docs/hosts.md, time_budget_s) ----
# budget S [ARGS]: a comparison (not an A/A: the calibration stays) on the
# noisy host's profile with [timing] time_budget_s = S.
budget() {
	printf '[host]\nname = noisy-host\n[timing]\ntime_budget_s = %s\n[faults]\nfault_log = %s/kmsg\n' \
		"$1" "$T" >budget-host.conf
	shift
	"$PERFD" pair --db "$DB" --json --host "$T/budget-host.conf" --case noisy "$@" \
		--old-arg --old --old-arg 100 --new-arg --new --new-arg 100 "$PLANT" "$PLANT" -- --noise 10 --seed 3000
}
check "a negative budget is refused" run 2 budget -5
check "  naming the key and its range" has err "budget-host.conf:4: 'time_budget_s': expected a number of seconds above 0 and at most 604800, not '-5'"
check "a budget that fits no more than the first stage" run 0 budget 0.001
check "  sets max_pairs to pairs, stored, and says so" eq "3 3 0.001" "$(js out 'str(d["settings"]["pairs"]) + " " + str(d["settings"]["max_pairs"]) + " " + str(d["settings"]["time_budget_s"])')"
check "  in the text receipt too" has <("$PERFD" show --db "$DB" "$(js out 'd["comparison"]')") "pairs 3, up to 3 (set by a time budget of 0.001 s)"
check "a budget that fits everything: the last stage end under 64" run 0 budget 100000
check "  48 pairs" eq "48 100000.0" "$(js out 'str(d["settings"]["max_pairs"]) + " " + str(d["settings"]["time_budget_s"])')"
# From the calibration's mean pair process time (no cool-down, one warm-up
# pair): a budget of 13.5 pairs fits 12 after the warm-up, a stage end.
mean=$(sql "select avg(wall_ms) / 1000.0 from processes where warmup = 0 and comparison_id in ($(js out '",".join(str(i) for i in d["calibration"])'))")
check "a budget of 13.5 pairs at the calibration's process times" run 0 budget "$(python3 -c "print(repr(2 * $mean * 13.5))")"
check "  runs up to 12 pairs, a stage end" eq 12 "$(js out 'd["settings"]["max_pairs"]')"
check "--max-pairs overrides the host's budget" run 0 budget 100000 --max-pairs 6
check "  6 pairs, no budget said" eq "6 None" "$(js out 'str(d["settings"]["max_pairs"]) + " " + str(d["settings"]["time_budget_s"])')"
check "budgeted comparisons verify" run 0 "$PERFD" verify --db "$DB"

# ---- a quiet host: 3 pairs decide once calibrated ----
failed=0
for seed in 1 2 3; do
	"$PERFD" pair --db "$DB" --json --host-name quiet-host --case m1 --max-pairs 6 "$PLANT" "$PLANT" \
		-- --old 2089 --new 2089 --noise 0.2 --seed "$seed" >"quiet$seed.json" 2>/dev/null ||
		failed=$((failed + 1))
done
check "three A/As of a quiet program ran" eq 0 "$failed"
check "three A/As of 0.2% noise calibrate the case" eq 18 "$(sql "select sum(pairs_run) from comparisons where host = 'quiet-host' and kind = 'aa'")"
check "the posted M1 rows, one stage of 3 pairs" run 0 "$PERFD" pair --db "$DB" --json \
	--host-name quiet-host --case m1 --max-pairs 3 --warmup 0 \
	--old-arg --old --old-arg 2089,2093,2103 --new-arg --new --new-arg 1955,1965,1951 "$PLANT" "$PLANT"
check "  are faster at once: 3 gains above all 18 A/A gains, p 1/1330" eq "faster 3 0.000752" "$(js out 'd["verdict"] + " " + str(d["pairs_run"]) + " " + "%.6f" % d["stages"][0]["calibrated"]["p_faster"]')"
check "  on a host that sees far less than the noisy one" eq 1 "$(js out "int(d['mde'] < 0.02 and d['mde'] * 2 < $(js small.json 'd["mde"]'))")"
# Without --case every program shares the case "default": no calibration.
for seed in 1 2; do
	"$PERFD" pair --db "$DB" --json --host-name quiet-host --max-pairs 6 "$PLANT" "$PLANT" \
		-- --old 2089 --new 2089 --noise 0.2 --seed "$seed" >/dev/null 2>&1
done
check "a comparison without --case" run 0 "$PERFD" pair --db "$DB" --json --host-name quiet-host \
	--max-pairs 3 --warmup 0 --old-arg --old --old-arg 2089 --new-arg --new --new-arg 1955 "$PLANT" "$PLANT"
check "  uses no calibration, though A/As of its case exist" eq "[] sign" "$(js out 'json.dumps(d["calibration"]) + " " + d["stages"][0]["test"]')"
check "and everything verifies" run 0 "$PERFD" verify --db "$DB"
finish
