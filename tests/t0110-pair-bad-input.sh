#!/bin/bash
# Bad input to perfd pair: missing and non-executable programs, bad options,
# arms that crash, hang, print no metric, another digest, 100 MB, nan, a
# metric twice, several metrics, junk; each named, stored, never given a gain.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"

check "missing OLD is refused" run 2 "$PERFD" pair --db "$DB" ./nope "$PLANT"
check "and named" has err "OLD: program './nope': No such file or directory"
check "nothing stored for it" eq 0 "$( [ -f "$DB" ] && sql 'select count(*) from comparisons' || echo 0)"
cp "$PLANT" noexec && chmod -x noexec
check "non-executable NEW is refused" run 2 "$PERFD" pair --db "$DB" "$PLANT" ./noexec
check "and named" has err "NEW: program './noexec' is not executable"
check "a directory is refused" run 2 "$PERFD" pair --db "$DB" "$PLANT" /tmp
check "and named" has err "is a directory"
check "one program is a usage error" run 2 "$PERFD" pair --db "$DB" "$PLANT"
check "and says so" has err "expected OLD and NEW, got 1 program"

check "--pairs 0 refused" run 2 "$PERFD" pair --db "$DB" --pairs 0 "$PLANT" "$PLANT"
check "and named" has err "--pairs: '0' is not a whole number from 1 to 64"
check "--timeout x refused" run 2 "$PERFD" pair --db "$DB" --timeout x "$PLANT" "$PLANT"
check "and named" has err "--timeout: 'x' is not a number"
check "--min-effect 200% refused" run 2 "$PERFD" pair --db "$DB" --min-effect 200% "$PLANT" "$PLANT"
check "--format xml refused" run 2 "$PERFD" pair --db "$DB" --format xml "$PLANT" "$PLANT"
check "and named" has err "unknown format 'xml'"
check "--cpus 3-1 refused" run 2 "$PERFD" pair --db "$DB" --cpus 3-1 "$PLANT" "$PLANT"
check "--env without = refused" run 2 "$PERFD" pair --db "$DB" --env FOO "$PLANT" "$PLANT"
check "--env PERFD_ARM refused" run 2 "$PERFD" pair --db "$DB" --env PERFD_ARM=x "$PLANT" "$PLANT"
check "unknown option refused" run 2 "$PERFD" pair --db "$DB" --bogus "$PLANT" "$PLANT"
check "nothing stored by bad options" eq 0 "$( [ -f "$DB" ] && sql 'select count(*) from comparisons' || echo 0)"

# invalid CASE REASON ARGS...: the comparison is stored, invalid, with no
# gain, and the reason is named.
invalid() {
	what=$1 reason=$2
	shift 2
	check "$what: exit 1" run 1 "$PERFD" pair --db "$DB" --json --warmup 0 "$@"
	cp out "$what.json"
	check "$what: verdict invalid" eq invalid "$(js "$what.json" 'd["verdict"]')"
	check "$what: no gain" eq "None None" "$(js "$what.json" 'str(d["gain"]["median"])+" "+str(d["pairs"][0]["gain"])')"
	check "$what: reason" has "$what.json" "$reason"
	id=$(js "$what.json" 'd["comparison"]')
	check "$what: stored as invalid" eq invalid "$(sql "select verdict from comparisons where id=$id")"
	check "$what: verify agrees" run 0 "$PERFD" verify --db "$DB" "$id"
}

invalid crash "killed by signal 6 (SIGABRT)" "$PLANT" "$PLANT" -- --bad-arm new --mode crash
invalid exit3 "process 4 (old, pair 2) exited 3" "$PLANT" "$PLANT" -- --bad-arm old --bad-pair 2 --mode exit3
# The bound: 1 s, scaled (lib.sh's slow_s), long enough for the arms
# that do not hang to start and end on a busy machine.
bound=$(slow_s 1)
invalid hang "timed out after" --timeout "$bound" "$PLANT" "$PLANT" -- --bad-arm new --bad-pair 1 --mode hang
check "hang: the process is marked timed out" eq "true" "$(js hang.json 'd["processes"][1]["timed_out"]')"
check "hang: others ran normally" eq "true" "$(js hang.json 'd["processes"][0]["valid"]')"
invalid stubborn "timed out after" --pairs 1 --max-pairs 1 --timeout "$bound" "$PLANT" "$PLANT" -- --bad-arm old --mode hang --stubborn
check "stubborn: SIGKILL after the grace period" eq 9 "$(js stubborn.json 'd["processes"][0]["signal"]')"
# Its wall time as perfd measured it: never less than the bound plus the
# 2 s of grace; at most 5 s (scaled) more.
check "stubborn: took about the bound plus 2 s" eq 1 "$(js stubborn.json "int(($bound + 2) * 1000 <= d['processes'][0]['wall_ms'] <= ($bound + $(slow_s 5)) * 1000)")"
invalid nometric "printed no metric 'run2_ms'" --metric run2_ms "$PLANT" "$PLANT" -- --bad-arm old --bad-pair 3 --mode nometric
invalid digest "printed digest 0badd19e57, not c4759069c154" "$PLANT" "$PLANT" -- --digest c4759069c154 --bad-arm new --bad-pair 2 --mode digest
check "digest: digests not equal" eq false "$(js digest.json 'd["digests"]["equal"]')"
invalid nodigest "printed no digest while others did" "$PLANT" "$PLANT" -- --digest c4759069c154 --bad-arm new --bad-pair 2 --mode nodigest
invalid nan "metric 'run2_ms' is nan" "$PLANT" "$PLANT" -- --bad-arm new --mode nan
invalid twice "metric 'run2_ms' printed twice" "$PLANT" "$PLANT" -- --bad-arm old --bad-pair 1 --mode twice
invalid novalid "did not print TIMING_RECORD_VALID" "$PLANT" "$PLANT" -- --valid --bad-arm old --bad-pair 2 --mode novalid
invalid ambiguous "several metrics (decode_us, run2_ms): choose one with --metric" "$PLANT" "$PLANT" -- --also decode_us=5
check "ambiguous: stopped after the first process" eq 1 "$(js ambiguous.json 'len(d["processes"])')"
# Several metrics, one a rate: which one is asked first, not its direction.
invalid ambiguousrate "several metrics (it_s, run2_ms): choose one with --metric" "$PLANT" "$PLANT" -- --also it_s=5
check "ambiguous: --metric resolves it" run 0 "$PERFD" pair --db "$DB" --json --metric decode_us "$PLANT" "$PLANT" -- --also decode_us=5
check "ambiguous: the chosen metric is used" eq "decode_us unchanged" "$(js out 'd["metric"]+" "+d["verdict"]')"

# A new arm that claims perfd's own figure: a program may not print wall_ms,
# so a slower arm cannot read faster by saying so.
printf '#!/bin/sh\ntrue\n' >honest && chmod +x honest
printf '#!/bin/sh\nsleep 0.05\necho "TIMING wall_ms=1"\n' >claims && chmod +x claims
invalid fakewall "malformed output: line 1: TIMING: 'wall_ms' is a figure perfd measures itself: a program may not print it" --pairs 1 --max-pairs 1 ./honest ./claims
check "fakewall: no metric wall_ms stored from the program" eq 0 "$(sql "select count(*) from metrics m join processes p on p.id = m.process_id where p.comparison_id = $(js fakewall.json 'd["comparison"]') and m.name = 'wall_ms'")"

# 100 MB of output: captured to the bound, counted whole, metric still read.
check "flood: runs" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 "$PLANT" "$PLANT" -- --bad-arm new --mode flood
cp out flood.json
fid=$(js flood.json 'd["comparison"]')
check "flood: all bytes counted" test "$(js flood.json 'd["processes"][1]["stdout_bytes"]')" -gt 104000000
check "flood: 1 MiB kept" eq 1048576 "$(sql "select length(o.stdout) from process_output o join processes p on p.id=o.process_id where p.comparison_id=$fid and p.seq=2")"
check "flood: marked as cut" eq "true 1048576" "$(js flood.json 'str(d["processes"][1]["output_truncated"]).lower()+" "+str(d["processes"][1]["stdout_kept"])')"
check "flood: the other arm is whole" eq false "$(js flood.json 'd["processes"][0]["output_truncated"]')"
check "flood: metric read after the flood" eq 90 "$(js flood.json 'd["pairs"][0]["new"]')"
check "--capture bounds what is kept" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 --capture 20 "$PLANT" "$PLANT"
cid=$(js out 'd["comparison"]')
check "capture: 20 bytes kept" eq 20 "$(sql "select max(length(o.stdout)) from process_output o join processes p on p.id=o.process_id where p.comparison_id=$cid")"

# Junk around the protocol: CRLF, NUL bytes, a 2 MB line.
check "junk: valid" run 0 "$PERFD" pair --db "$DB" --json "$PLANT" "$PLANT" -- --junk
check "junk: figures read through it" eq "100 90" "$(js out 'str(d["old"]["median"])+" "+str(d["new"]["median"])')"
check "junk: no junk metric" eq '["run2_ms"]' "$(js out 'list(d["processes"][0]["metrics"].keys())')"

# Output that is not UTF-8 stays in the receipt, each bad byte shown as U+FFFD
# (one per maximal ill-formed subpart); the captured output keeps the bytes.
printf '#!/bin/sh\nprintf "TIMING a_ms=1\\nRESULT x on \\"dev\\377\\376\\": passed=1 total=1\\n"\n' >latin && chmod +x latin
check "non-UTF-8 output: runs" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 ./latin ./latin
check "non-UTF-8 output: the RESULT line is kept" eq "$(printf 'RESULT x on "dev\357\277\275\357\277\275": passed=1 total=1')" "$(js out 'd["processes"][0]["results"][0]["line"]')"
lid=$(js out 'd["comparison"]')
check "non-UTF-8 output: the captured output keeps the bytes" eq 1 "$(sql "select count(*) from process_output o join processes p on p.id = o.process_id where p.comparison_id = $lid and p.seq = 1 and instr(o.stdout, x'646576fffe22') > 0")"

# Children a program leaves behind are killed with its group.
check "leftovers: runs" run 0 "$PERFD" pair --db "$DB" --pairs 1 --max-pairs 1 --warmup 0 "$PLANT" "$PLANT" -- --spawn 2 --pid-file "$T/spawned"
check "leftovers: two programs and their four children" eq 6 "$(wc -l <"$T/spawned")"
none_alive() { [ "$(alive "$1")" = 0 ]; }
check "leftovers: none survive" wait_for "the leftovers to be gone" 10 none_alive "$T/spawned"

# Broken timers: a value that is negative, zero, subnormal or so large
# that a median would overflow makes its process invalid, with the value.
broken() {
	invalid "$1" "$2" --max-pairs 3 --old-arg --old --old-arg 98 --new-arg --new --new-arg "$3" \
		"$PLANT" "$PLANT"
}
broken negative "metric 'run2_ms' is -5, not a positive number" -5
check "negative: no +2060%" eq 0 "$(grep -c 2060 negative.json)"
broken zero "metric 'run2_ms' is 0, not a positive number" 0
broken subnormal "too small to be a measurement (subnormal)" 1e-310
broken huge "so large that a median of two such values would overflow" 1e308

# Direction: a rate metric needs one said; higher-is-better is judged so.
check "a named rate metric without --better is refused" run 2 "$PERFD" pair --db "$DB" \
	--metric ops_per_s "$PLANT" "$PLANT" -- --metric ops_per_s
check "  naming the setting" has err "metric 'ops_per_s' reads as a rate: say which way is better with --better higher"
check "  before running anything" eq 0 "$(grep -c '^{' out)"
check "a printed rate metric without --better stops the run" run 2 "$PERFD" pair --db "$DB" \
	--warmup 0 "$PLANT" "$PLANT" -- --metric read_mbps
check "  naming the setting" has err "metric 'read_mbps' reads as a rate: say which way is better (--better higher"
check "  after one process, kept" eq "1|abandoned" "$(sql "select count(*), c.state from processes p join comparisons c on c.id = p.comparison_id where c.id = (select max(id) from comparisons)")"
check "--better higher judges a throughput that fell" run 0 "$PERFD" pair --db "$DB" --json \
	--better higher --warmup 0 --old-arg --old --old-arg 500 --new-arg --new --new-arg 400 \
	"$PLANT" "$PLANT" -- --metric read_mbps
check "  slower, by 20%" eq "slower -0.2 higher" "$(js out 'd["verdict"]+" "+str(d["gain"]["median"])+" "+d["settings"]["better"]')"
check "  the same rows, lower better: faster" run 0 "$PERFD" pair --db "$DB" --json \
	--better lower --warmup 0 --old-arg --old --old-arg 500 --new-arg --new --new-arg 400 \
	"$PLANT" "$PLANT" -- --metric read_mbps
check "  faster, by 20%" eq "faster 0.2" "$(js out 'd["verdict"]+" "+str(d["gain"]["median"])')"
# Units come from the name's suffix (docs/protocol.md, "Units"): a rate
# outside the old word list, or a name with no unit, needs a direction too,
# and a rate's values are shown as the rate they are, never as seconds.
check "a printed it_s metric without --better stops the run" run 2 "$PERFD" pair --db "$DB" \
	--warmup 0 "$PLANT" "$PLANT" -- --metric hash_it_s
check "  naming the setting" has err "metric 'hash_it_s' reads as a rate: say which way is better (--better higher"
check "a named metric with no unit (speed) without --better is refused" run 2 "$PERFD" pair \
	--db "$DB" --metric speed "$PLANT" "$PLANT" -- --metric speed
check "  naming the setting" has err "metric 'speed' reads as a rate: say which way is better with --better higher"
check "an mb_s metric, better higher" run 0 "$PERFD" pair --db "$DB" --json --better higher \
	--warmup 0 --old-arg --old --old-arg 16069.7 "$PLANT" "$PLANT" -- --metric xxh3_mb_s
check "  has its unit in the receipt" eq "xxh3_mb_s MB/s" "$(js out 'd["metric"]+" "+d["unit"]')"
check "  its text receipt" run 0 "$PERFD" show --db "$DB" "$(js out 'd["comparison"]')"
check "  shows MB/s, not seconds" has out "old   median 16069.7 MB/s (16069.7 to 16069.7)"
check "a time metric's unit" run 0 "$PERFD" pair --db "$DB" --format md --warmup 0 "$PLANT" "$PLANT"
check "  is its suffix" has out "- old: median 100 ms (100 to 100)"
check "--better up is refused" run 2 "$PERFD" pair --db "$DB" --better up "$PLANT" "$PLANT"
check "  naming the word" has err "--better: 'up' is neither 'lower' nor 'higher'"
check "--max-pairs under --pairs is refused" run 2 "$PERFD" pair --db "$DB" --pairs 6 --max-pairs 3 "$PLANT" "$PLANT"
check "  and named" has err "--max-pairs 3 is under the first stage's 6 pairs"

# A program perfd could not exec is stored with its reason.
printf '#!/nonexistent/interpreter\n' >badinterp && chmod +x badinterp
invalid spawn "could not start: cannot execute" ./badinterp ./badinterp

# A metric that no line could print: refused before any process runs.
n=$(sqlite3 "$DB" "select count(*) from processes")
check "--metric 'bad name!' refused" run 2 "$PERFD" pair --db "$DB" --metric 'bad name!' "$PLANT" "$PLANT"
check "  naming it" has err "--metric: 'bad name!' is not a metric name"
check "  no process ran" eq "$n" "$(sqlite3 "$DB" "select count(*) from processes")"
finish
