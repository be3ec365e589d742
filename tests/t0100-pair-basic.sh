#!/bin/bash
# perfd pair end to end: planted values, the receipt JSON, the stored rows,
# every output format, verify, and a tampered row caught by verify.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"

# The posted rows, replayed by one program whose arms differ by their own
# arguments; the first stage alone (--max-pairs 3), no warm-up, as posted.
B60_ARMS="--old-arg --old --old-arg 4392,4421,4113 --new-arg --new --new-arg 4362,4081,4218"
B60="--digest c4759069c154 --valid"
check "pair runs the B60 vector" run 0 "$PERFD" pair --db "$DB" --json --host-name lavapipe \
	--max-pairs 3 --warmup 0 $B60_ARMS "$PLANT" "$PLANT" -- $B60
cp out b60.json
check "  a comparison, not an A/A" eq compare "$(js b60.json 'd["kind"]')"
check "the same program in both arms is called an A/A comparison" run 0 "$PERFD" pair --db "$DB" \
	--json --pairs 1 --max-pairs 1 --case aa "$PLANT" "$PLANT"
check "  and says so" has err "OLD and NEW are the same program (sha256 "
check "  and is stored as one" eq aa "$(js out 'd["kind"]')"
check "two programs" run 0 "$PERFD" pair --db "$DB" --pairs 1 --max-pairs 1 "${WORK_OLD:?}" "${WORK_NEW:?}"
check "  are not" eq 0 "$(grep -c "same program" err)"
check "one program with its arms' own arguments" run 0 "$PERFD" pair --db "$DB" --pairs 1 --max-pairs 1 --old-arg --old --old-arg 5 "$PLANT" "$PLANT"
check "  is not" eq 0 "$(grep -c "same program" err)"
# The wrapper trap: one script that runs each arm's binary by PERFD_ARM
# is one file in both arms. perfd says so before running and goes on (an
# A/A may be meant); --old-file and --new-file make it a comparison.
cp "$WORK_OLD" old; cp "$WORK_NEW" new
printf '#!/bin/sh\nexec "%s/$PERFD_ARM" "$@"\n' "$T" >wrap
chmod +x wrap; ln wrap wrap-link; cp wrap wrap-copy
check "a wrapper as both arms" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 --warmup 0 ./wrap ./wrap
check "  is named as one file" has err "OLD and NEW are one file, '$T/wrap': if it is a wrapper"
check "  with the options that tell the arms apart" has err "name each arm's program with --old-file and --new-file"
check "  and still runs, stored as an A/A" eq aa "$(js out 'd["kind"]')"
check "a hard link to it is the same file" run 0 "$PERFD" pair --db "$DB" --pairs 1 --max-pairs 1 --warmup 0 ./wrap ./wrap-link
check "  and said so" has err "OLD and NEW are one file, '$T/wrap'"
check "a copy of it" run 0 "$PERFD" pair --db "$DB" --pairs 1 --max-pairs 1 --warmup 0 ./wrap ./wrap-copy
check "  is an A/A but not one file" eq "1 0" "$(grep -c "same program" err) $(grep -c "one file" err)"
check "the wrapper with each arm's program named" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 --warmup 0 --old-file old --new-file new ./wrap ./wrap
check "  is not warned about" eq 0 "$(grep -c "one file\|same program" err)"
check "  and is stored as a comparison" eq compare "$(js out 'd["kind"]')"
check "metric chosen as the only TIMING metric" eq run2_ms "$(js b60.json 'd["metric"]')"
check "pair gains are the posted rows' gains" eq "[0.006831, 0.076906, -0.025529]" "$(js b60.json '[p["gain"] for p in d["pairs"]]')"
check "gain median is 0.683%, not 5.3%" eq 0.006831 "$(js b60.json 'd["gain"]["median"]')"
check "verdict unresolved" eq unresolved "$(js b60.json 'd["verdict"]')"
check "flagged noisy" eq '["noisy"]' "$(js b60.json 'd["flags"]')"
check "reason names the sign disagreement" has b60.json "pair gains disagree in sign"
check "old arm figures" eq "4392 4113 4421 0.070128" "$(js b60.json '" ".join(str(d["old"][k]) for k in ("median","min","max","spread"))')"
check "new arm median" eq 4218 "$(js b60.json 'd["new"]["median"]')"
check "execution order old,new,new,old,old,new" eq "old,new,new,old,old,new" "$(js b60.json '",".join(p["arm"] for p in d["processes"])')"
check "pairs 1,1,2,2,3,3" eq "1,1,2,2,3,3" "$(js b60.json '",".join(str(p["pair"]) for p in d["processes"])')"
check "digests equal, one value" eq 'True [c4759069c154]' "$(js b60.json 'str(d["digests"]["equal"])+" ["+",".join(d["digests"]["values"])+"]"')"
check "RESULT line kept and parsed" eq "1" "$(js b60.json 'd["processes"][0]["results"][0]["counts"]["passed"]')"
check "sha256 is the binary's" eq "$(sha256sum "$PLANT" | cut -d' ' -f1)" "$(js b60.json 'd["old"]["sha256"]')"
check "host stored" eq lavapipe "$(js b60.json 'd["host"]')"

id=$(js b60.json 'd["comparison"]')
check "six process rows stored in order" eq "old|1 new|1 new|2 old|2 old|3 new|3" "$(sql "select arm||'|'||pair from processes where comparison_id=$id order by seq" | tr '\n' ' ' | sed 's/ $//')"
check "metric rows stored" eq 6 "$(sql "select count(*) from metrics m join processes p on p.id=m.process_id where p.comparison_id=$id and m.name='run2_ms'")"
check "stored gain median" eq 0.00683060109289617 "$(sql "select round(gain_median, 17) from comparisons where id=$id")"
check "verify passes" run 0 "$PERFD" verify --db "$DB" "$id"
check "verify says the figures match" has out "figures match the rule pairs-median/2.2"
check "  and ends with a count, also for one" eq "1 comparison verified, 0 with differences" "$(tail -n 1 out)"
check "a database with no comparison" run 0 "$PERFD" host clear --db empty.db nosuch
check "  verifies" run 0 "$PERFD" verify --db empty.db
check "  and says it verified none" eq "0 comparisons verified, 0 with differences" "$(cat out)"

check "show text" run 0 "$PERFD" show --db "$DB" "$id"
check "text has the verdict" has out "verdict unresolved"
check "text has the gain row" has out "-2.553%"
check "show json equals the pair output" run 0 "$PERFD" show --db "$DB" --json "$id"
check "json identical" cmp -s out b60.json
check "show csv" run 0 "$PERFD" show --db "$DB" --format csv "$id"
check "csv has a header and six rows" eq 7 "$(wc -l <out)"
check "csv rows in execution order" eq "1,2,3,4,5,6" "$(tail -n +2 out | cut -d, -f2 | paste -sd,)"
check "csv carries the metric column" has out ",run2_ms"
check "show md" run 0 "$PERFD" show --db "$DB" --format md "$id"
check "md table row" has out "| 3 | 4113 | 4218 | -2.553% |"
check "md verdict" has out "verdict: **unresolved**"

# The three M1 vectors: the seeds' medians. Three pairs alone cannot
# pass the sign test at 1% (all three agree 1/8 of the time by chance):
# unresolved, and why. With the stages (up to 24 pairs; the program repeats
# its first values from pair 4 on), all twelve of stage 3 agree: faster.
for v in "2089,2093,2103 1955,1965,1951 0.064146 0.064146" "2090,2110,2089 1962,1938,1965 0.061244 0.061244" "3406,3421,3413 3240,3249,3241 0.050278 0.048738"; do
	set -- $v
	check "M1 vector $3 runs" run 0 "$PERFD" pair --db "$DB" --json --max-pairs 3 --warmup 0 \
		--old-arg --old --old-arg "$1" --new-arg --new --new-arg "$2" "$PLANT" "$PLANT"
	check "M1 vector $3 is unresolved in 3 pairs" eq "unresolved $3" "$(js out 'd["verdict"]+" "+str(d["gain"]["median"])')"
	check "  the sign test cannot pass" has out "stage 1 of 1 (3 pairs, sign test)"
	check "M1 vector $3 with stages" run 0 "$PERFD" pair --db "$DB" --json --warmup 0 \
		--old-arg --old --old-arg "$1" --new-arg --new --new-arg "$2" "$PLANT" "$PLANT"
	check "  is faster at stage 3, 12 pairs" eq "faster 12 3 $4" "$(js out 'd["verdict"]+" "+str(d["pairs_run"])+" "+str(len(d["stages"]))+" "+str(d["gain"]["median"])')"
done

# Environment and arguments: shared ARGS, then each arm's own.
check "per-arm args and env" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 --warmup 0 --env PLANT_BOTH=1 \
	--old-arg --old --old-arg 200 --new-env PLANT_NEW=yes "$PLANT" "$PLANT" -- --show-env --new 150
cp out env.json
eid=$(js env.json 'd["comparison"]')
check "old arm used its own argument" eq 200 "$(js env.json 'd["pairs"][0]["old"]')"
"$PERFD" show --db "$DB" --stderr 1 "$eid" >err1
"$PERFD" show --db "$DB" --stderr 2 "$eid" >err2
check "old got PERFD_ARM=old" has err1 "env PERFD_ARM=old"
check "old got PERFD_SEQ=1 PERFD_PAIR=1" eq "2" "$(grep -cE 'env PERFD_(SEQ|PAIR)=1$' err1)"
check "old got the shared env" has err1 "env PLANT_BOTH=1"
check "old did not get new's env" eq 0 "$(grep -c PLANT_NEW err1)"
check "new got its env" has err2 "env PLANT_NEW=yes"
check "old argv: shared args then arm args" eq "--show-env --new 150 --old 200" "$(grep '^argv\[[1-9]' err1 | cut -d' ' -f2 | paste -sd' ')"
check "show --output prints stdout" run 0 "$PERFD" show --db "$DB" --output 2 "$eid"
check "captured stdout" has out "plant: arm new pair 1"

# CPU pinning reaches the child; a CPU that does not exist is a start failure.
check "--cpus 0" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 --cpus 0 "$PLANT" "$PLANT" -- --show-env
pid=$(js out 'd["comparison"]')
check "pinning stored" eq 0 "$(js out 'd["processes"][0]["cpus"]')"
"$PERFD" show --db "$DB" --stderr 1 "$pid" >pin.err
check "the child runs on CPU 0 alone" has pin.err "affinity 1 cpus, cpu0 1"
check "--cpus 1000 cannot start" run 1 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 --cpus 1000 "$PLANT" "$PLANT"
check "and says why" has out "could not start: cannot pin to CPUs '1000'"

# A progress line per process, on request (by default on a terminal only).
check "--progress" run 0 "$PERFD" pair --db "$DB" --progress --warmup 0 --max-pairs 6 \
	--new-arg --new --new-arg 90 "$PLANT" "$PLANT"
check "one line per process" eq 12 "$(grep -c '^perfd: \[[0-9]*/[0-9]*\] stage ' err)"
check "naming arm, pair and stage" has err "[3/6] stage 1 new pair 2"
check "  and the next stage's" has err "[9/12] stage 2 old pair 5"
check "each pair's gain once it is whole" eq 6 "$(grep -c '  pair gain +10.000%$' err)"
check "  on the pair's second process" eq "0 1" "$(grep -c '\[3/6\].*pair gain' err) $(grep -c '\[4/6\] stage 1 old pair 2 .*pair gain' err)"
check "a line per stage judged" has err "perfd: stage 1 of 2 (3 pairs, sign test): unresolved, p 0.125 faster"
check "  saying another runs" has err "running the next stage"
check "no progress when not a terminal" run 0 "$PERFD" pair --db "$DB" --pairs 1 --max-pairs 1 "$WORK_OLD" "$WORK_NEW"
check "stderr quiet" eq 0 "$(wc -c <err)"

# Warm-ups run first, interleaved, outside the figures.
check "warmup runs" run 0 "$PERFD" pair --db "$DB" --json --warmup 2 --max-pairs 3 $B60_ARMS \
	"$PLANT" "$PLANT" -- $B60
check "ten processes" eq 10 "$(js out 'len(d["processes"])')"
check "warm-ups first, interleaved" eq "old:0:True,new:0:True,new:0:True,old:0:True,old:1:False" "$(js out '",".join("%s:%d:%s" % (p["arm"], p["pair"], p["warmup"]) for p in d["processes"][:5])')"
check "figures unchanged by warm-ups" eq 0.006831 "$(js out 'd["gain"]["median"]')"

# Tampering: a stored figure, then a raw row.
sql "update comparisons set gain_median = 0.0529 where id = $id"
check "verify catches a changed figure" run 1 "$PERFD" verify --db "$DB" "$id"
check "verify names the figure" has out "gain.median: stored 0.0529, recomputed 0.00683060109"
sql "update comparisons set gain_median = 0.00683060109289617 where id = $id"
check "verify passes again" run 0 "$PERFD" verify --db "$DB" "$id"
sql "update metrics set value = 4000 where name = 'run2_ms' and process_id = (select id from processes where comparison_id = $id and seq = 1)"
check "verify catches a changed raw row" run 1 "$PERFD" verify --db "$DB" "$id"
check "verify names the pair gain" has out "pair 1 gain: stored 0.0068306"
check "verify of everything fails too" run 1 "$PERFD" verify --db "$DB"
check "and counts the comparisons" has out "comparisons verified, 1 with differences"

# The CPU pressure each process ran beside (cpu_wait_ms, from the kernel's
# /proc/pressure/cpu): pinned to one CPU that a busy loop shares, a process
# of about 0.2 s of work and the loop take turns, so some task waits for
# the CPU through much of its wall time; each figure is kept and shown.
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[-,].*//')
printf '#!/bin/sh\ni=0\nwhile [ $i -lt 150000 ]; do i=$((i + 1)); done\necho "TIMING loop_ms=1"\n' >busy
chmod +x busy
taskset -c "$cpu" sh -c 'while :; do :; done' &
hog=$!
check "a comparison pinned to a CPU a busy loop shares" run 0 env PERFD_CPU_PRESSURE=/proc/pressure/cpu \
	"$PERFD" pair --db "$DB" --json --cpus "$cpu" --warmup 0 --pairs 3 --max-pairs 3 ./busy ./busy
kill "$hog"
wait "$hog" 2>/dev/null
echo "# cpu_wait_ms: $(js out '[p["cpu_wait_ms"] for p in d["processes"]]')"
if grep -q '^some .*total=' /proc/pressure/cpu 2>/dev/null; then
	check "  each process waited for the CPU a fifth of its wall time or more" eq true \
		"$(js out 'all(p["cpu_wait_ms"] >= 0.2 * p["wall_ms"] for p in d["processes"]) and len(d["processes"]) == 6')"
else
	check "  without the kernel's CPU pressure, none is kept" eq true \
		"$(js out 'all(p["cpu_wait_ms"] is None for p in d["processes"])')"
fi
busy_id=$(js out 'd["comparison"]')
csv_of() { python3 -c 'import csv, sys; print(" ".join(str(round(float(r["cpu_wait_ms"]), 3)) if r["cpu_wait_ms"] else "None" for r in csv.DictReader(sys.stdin)))'; }
check "  the figure in the CSV" eq "$(js out '" ".join(str(round(p["cpu_wait_ms"], 3)) if p["cpu_wait_ms"] is not None else "None" for p in d["processes"])')" \
	"$("$PERFD" show --db "$DB" --format csv "$busy_id" | csv_of)"
check "  and in the database" eq "$(js out '" ".join(str(round(p["cpu_wait_ms"], 3)) if p["cpu_wait_ms"] is not None else "None" for p in d["processes"])')" \
	"$(sql "select group_concat(w, ' ') from (select coalesce(round(cpu_wait_ms, 3), 'None') as w from processes where comparison_id = $busy_id order by seq)")"
check "  which verifies" run 0 "$PERFD" verify --db "$DB" "$busy_id"

# A stored comparison of a rule this perfd does not know (a newer perfd's)
# is refused by name, never judged by the newest rule; its receipt still
# shows what was stored.
sql "update comparisons set rule = 'pairs-median/9' where id = $busy_id"
check "verify refuses an unknown rule" run 1 "$PERFD" verify --db "$DB" "$busy_id"
check "  naming it and the rules it knows" has out "cannot verify: comparison $busy_id: rule 'pairs-median/9' is unknown to this perfd, which knows pairs-median/1, pairs-median/2, pairs-median/2.1 and pairs-median/2.2"
check "  its receipt still shows" run 0 "$PERFD" show --db "$DB" --json "$busy_id"
check "  with the stored rule" eq pairs-median/9 "$(js out 'd["rule"]')"
check "  and no calibration sentence" eq null "$(js out 'd["mde_text"]')"
sql "update comparisons set rule = 'pairs-median/2.2' where id = $busy_id"
check "  verifies again under its own rule" run 0 "$PERFD" verify --db "$DB" "$busy_id"

check "list shows comparisons" run 0 "$PERFD" list --db "$DB"
check "list has the first one" has out "unresolved"
# One program against itself whose arms differ (plant's new arm prints 90,
# its old 100): an A/A, whose faster is a false verdict, never a change.
check "an A/A with a false verdict" run 0 "$PERFD" pair --db aa.db "$PLANT" "$PLANT"
check "  list says it false" eq "A/A false faster" "$("$PERFD" list --db aa.db | awk 'NR == 2 { print $4, $7, $8 }')"
finish
