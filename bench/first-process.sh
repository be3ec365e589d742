#!/bin/sh
# bench/first-process.sh [PERFD] [PROGRAM]: is the first process of a run
# cold? Runs RUNS A/A comparisons (PROGRAM against itself, by default
# /bin/true, measured by its wall time) with --pairs 3, first without
# warm-up and then with --warmup 1, all in one database, and reports for
# each setting:
#   first slowest   how often the first process of the run (seq 1) was the
#                   slowest of the six that count
#   first / rest    the median, over runs, of seq 1's wall time divided by
#                   the median of the other five
#   verdicts        the A/A comparisons' verdicts: any faster or slower is a
#                   false verdict, since both arms are one file
# The same processes, the same machine, one after the other.
#
# Environment: FIRST_RUNS (40, from 5 to 1000).
set -eu

. "$(dirname "$0")/lib.sh"

runs=$(bench_number FIRST_RUNS 40 5 1000)
perfd=$(bench_perfd "${1:-build/daemon/perfd}")
prog=${2:-/bin/true}
[ -x "$prog" ] || bench_fail "'$prog' is not an executable program"
bench_need sqlite3 "install it (apt-get install sqlite3)"
bench_scratch
db=$SCRATCH/first.db

for warmup in 0 1; do
	i=0
	while [ "$i" -lt "$runs" ]; do
		"$perfd" pair --db "$db" --quiet --pairs 3 --warmup "$warmup" --case "warmup-$warmup" \
			"$prog" "$prog" >/dev/null 2>&1 || [ $? = 1 ] ||
			bench_fail "perfd pair failed (warm-up $warmup, run $i)"
		i=$((i + 1))
	done
done

echo "first-process: $runs A/A comparisons of $prog each way, --pairs 3, wall time"
echo "perfd: $perfd"
echo "machine: $(machine_line)"
echo
printf '%-10s %14s %14s  %s\n' "warm-up" "first slowest" "first / rest" "verdicts"
for warmup in 0 1; do
	case_name=warmup-$warmup
	# seq 1 of the pairs: the first process that counts.
	slowest=$(sqlite3 "$db" "select count(*) from comparisons c where c.case_name = '$case_name'
		and (select p.wall_ms from processes p where p.comparison_id = c.id and p.pair > 0
		     order by p.seq limit 1) >=
		    (select max(p.wall_ms) from processes p where p.comparison_id = c.id and p.pair > 0)")
	ratio=$(sqlite3 "$db" "select c.id from comparisons c where c.case_name = '$case_name'" |
		while read -r id; do
			first=$(sqlite3 "$db" "select wall_ms from processes where comparison_id = $id and pair > 0 order by seq limit 1")
			rest=$(sqlite3 "$db" "select wall_ms from processes where comparison_id = $id and pair > 0 order by seq limit -1 offset 1" | median)
			calc "$first / $rest" "%.4f"
		done | median)
	verdicts=$(sqlite3 "$db" "select group_concat(verdict || ' ' || n, ', ') from
		(select verdict, count(*) as n from comparisons where case_name = '$case_name'
		 group by verdict order by verdict)")
	printf '%-10s %9s of %-3s %14s  %s\n' "$warmup" "$slowest" "$runs" "$(calc "$ratio" "%.2f")" "$verdicts"
done
