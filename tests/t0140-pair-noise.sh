#!/bin/bash
# pairs-median/2.1 through the real binary on a noisy program (the test
# program with a seeded normal noise, the same on every run): A/A
# comparisons give no verdict, unresolved ones run further stages, the
# calibration they build is used, and with it 3 pairs decide a clear change.
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
