#!/bin/bash
# No comparison left running: a perfd killed by the program it measures,
# a write lock held past --lock-timeout, a disk that fills. The comparison
# ends abandoned with its reason, by the perfd that ran it while it can
# still write, else by the next perfd pair to open the database; a perfd
# that runs keeps its rows.
. "$(dirname "$0")/lib.sh"

# prog FILE BODY: a measured program that prints a timing, then does BODY.
prog() {
	printf '#!/bin/sh\necho "TIMING t_ms=$((10 + ${PERFD_SEQ}))"\n%s\n' "$2" >"$1"
	chmod +x "$1"
}
state() { sql "select state from comparisons where id=$1"; }
notes() { sql "select text from comparison_notes where comparison_id=$1 and kind='reason'"; }

# The measured program kills perfd (kill -9 of its parent) at its third
# process.
prog killer '[ "$PERFD_SEQ" = 3 ] && kill -9 $PPID; exit 0'
"$PERFD" pair --db "$DB" --warmup 0 --pairs 3 --max-pairs 3 ./killer ./killer >kill.out 2>kill.err
check "perfd killed by its program" eq 137 $?
check "its comparison is left running" eq running "$(state 1)"
check "a reader does not change it" run 0 "$PERFD" list --db "$DB"
check "  list shows it running" has out "running"
check "  still running" eq running "$(state 1)"
pid=$(sql "select owner from comparisons where id=1" | cut -d' ' -f1)
check "the row names its perfd" test -n "$pid"

prog quick 'exit 0'
check "the next perfd pair runs" run 0 "$PERFD" pair --db "$DB" --warmup 0 --pairs 1 --max-pairs 1 ./quick ./quick
check "  and says what it marked" has err "1 comparison left running by a perfd that is gone: stored as abandoned"
check "the killed one is abandoned" eq abandoned "$(state 1)"
check "  invalid" eq invalid "$(sql 'select verdict from comparisons where id=1')"
check "  with the reason" eq "the comparison was interrupted: the perfd that ran it (pid $pid) ended before it finished" "$(notes 1 | head -1)"
check "  its processes kept, none running" eq "3|0" "$(sql "select count(*), count(*) filter (where state='running') from processes where comparison_id=1")"
check "list shows it abandoned" run 0 "$PERFD" list --db "$DB"
check "  abandoned" has out "abandoned"
check "show says why" run 0 "$PERFD" show --db "$DB" 1
check "  the reason" has out "(pid $pid) ended before it finished"
check "verify holds" run 0 "$PERFD" verify --db "$DB"
check "and a second open marks nothing more" run 0 "$PERFD" pair --db "$DB" --warmup 0 --pairs 1 --max-pairs 1 ./quick ./quick
check "  says nothing of it" run 1 grep -q "left running" err

# A perfd that runs keeps its rows: a slow comparison, and another perfd
# pair on the same database meanwhile. The slow one's programs end only
# once the test has made the file release (60 s at most), so that it runs
# through the other however busy the machine is.
prog slow "for i in \$(seq 1200); do [ -e '$T/release' ] && break; sleep 0.05; done"
rm -f release
"$PERFD" pair --db "$DB" --warmup 0 --pairs 2 --max-pairs 2 ./slow ./slow >slow.out 2>slow.err &
slow=$!
running_one() { [ "$(sql "select count(*) from comparisons where state='running'")" = 1 ]; }
check "the slow comparison runs" wait_for "the slow comparison's row" 30 running_one
slow_id=$(sql "select id from comparisons where state='running'")
check "another perfd pair meanwhile" run 0 "$PERFD" pair --db "$DB" --warmup 0 --pairs 1 --max-pairs 1 ./quick ./quick
check "  leaves the running one running" eq running "$(state "$slow_id")"
: >release
wait $slow
check "which finishes" eq 0 $?
check "  done, not abandoned" eq done "$(state "$slow_id")"

# A write lock held past --lock-timeout while a process runs: the final
# write is tried again until the lock is free, and the comparison is
# stored as abandoned with the reason; perfd exits non-zero.
# The second process ends only once the lock is held (10 s at most).
prog locked '[ "$PERFD_SEQ" = 2 ] && { : >go; for i in $(seq 200); do [ -e held ] && break; sleep 0.05; done; }; exit 0'
rm -f go held
"$PERFD" pair --db "$DB" --lock-timeout 0.3 --warmup 0 --pairs 2 --max-pairs 2 ./locked ./locked >lock.out 2>lock.err &
p=$!
check "the second process runs" wait_for "the file go" 30 test -e go
python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("begin exclusive")
open("held", "w").close()
time.sleep(1.5)
c.execute("rollback")' "$DB" &
locker=$!
wait $p
rc=$?
wait $locker
lock_id=$(sql "select max(id) from comparisons")
check "perfd pair under a held lock exits 2" eq 2 $rc
check "  names the lock" has lock.err "is locked by another writer (waited 300 ms"
check "  and that it stored the comparison as abandoned" has lock.err "comparison $lock_id is stored as abandoned"
check "  abandoned" eq abandoned "$(state "$lock_id")"
check "  the reason names the lock" has <(notes "$lock_id") "the comparison was interrupted: database '$DB' is locked by another writer"
check "nothing left running" eq 0 "$(sql "select count(*) from comparisons where state='running'")"
check "verify holds" run 0 "$PERFD" verify --db "$DB"

# A full disk (a small tmpfs, in a mount namespace of this test's own; CI
# runs as root): the program fills it while perfd measures it.
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
	echo "not root: the full disk needs a tmpfs of its own: skipped"
	finish
fi
mkdir small
prog filler '[ "$PERFD_SEQ" = 3 ] && { cat /dev/zero >"$FILL" 2>/dev/null; : >filled; sleep 0.3; }; exit 0'
cat >full.sh <<SH
set -u
mount -t tmpfs -o size=2m perfd-test-small "$T/small" || exit 99
cd "$T/small"
"$PERFD" pair --db full.db --warmup 0 --pairs 3 --max-pairs 3 "$T/filler" "$T/filler" >"$T/full.out" 2>"$T/full.err"
echo \$? >"$T/full.rc"
cp full.db* "$T/" 2>/dev/null
# The space back: the next perfd pair marks what was left running.
rm -f fill
"$PERFD" pair --db full.db --warmup 0 --pairs 1 --max-pairs 1 "$T/quick" "$T/quick" >"$T/next.out" 2>"$T/next.err"
echo \$? >"$T/next.rc"
sqlite3 full.db "pragma integrity_check" >"$T/integrity"
sqlite3 full.db "select count(*) from comparisons where state='running'" >"$T/running"
sqlite3 full.db "select state from comparisons where id=1" >"$T/state1"
sqlite3 full.db "select text from comparison_notes where comparison_id=1 and kind='reason'" >"$T/reason1"
"$PERFD" verify --db full.db >"$T/verify.out" 2>&1
echo \$? >"$T/verify.rc"
SH
FILL=$T/small/fill unshare -m --propagation private bash full.sh
check "a full disk: perfd pair exits 2" eq 2 "$(cat full.rc)"
check "  says the disk is full" has full.err "disk full"
if grep -q "could not be marked abandoned either" full.err; then
	check "  says the next open marks it" has full.err "the next perfd pair or agent to open the database marks it so"
	check "  which the next perfd pair did" has next.err "1 comparison left running by a perfd that is gone"
	check "  with the reason" has reason1 "ended before it finished"
else
	check "  or that it stored it as abandoned" has full.err "comparison 1 is stored as abandoned"
	check "  with the reason" has reason1 "disk full"
fi
check "the next perfd pair runs" eq 0 "$(cat next.rc)"
check "the database is whole" eq ok "$(cat integrity)"
check "nothing left running" eq 0 "$(cat running)"
check "the comparison abandoned" eq abandoned "$(cat state1)"
check "verify holds" eq 0 "$(cat verify.rc)"
finish
