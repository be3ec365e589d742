#!/bin/bash
# The database as bad input: corrupt, foreign, newer schema, unopenable,
# locked by another writer; and an interrupted comparison, kept whole.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"

head -c 8192 /dev/urandom >corrupt.db
before=$(sha256sum corrupt.db)
check "corrupt database refused" run 2 "$PERFD" pair --db corrupt.db "$PLANT" "$PLANT"
check "and named" has err "database 'corrupt.db' is corrupt or not an SQLite file"
check "corrupt file left as it was" eq "$before" "$(sha256sum corrupt.db)"
check "show refuses it too" run 2 "$PERFD" show --db corrupt.db 1

sqlite3 foreign.db "create table t (x); insert into t values (1);"
before=$(sha256sum foreign.db)
check "foreign SQLite file refused" run 2 "$PERFD" pair --db foreign.db "$PLANT" "$PLANT"
check "and named" has err "is an SQLite file but not a perfd database"
check "foreign file left as it was" eq "$before" "$(sha256sum foreign.db)"

check "a fresh database" run 0 "$PERFD" pair --db "$DB" --pairs 1 --max-pairs 1 --warmup 0 "$PLANT" "$PLANT"
v=$(sql "pragma user_version")
sql "pragma user_version = 99"
before=$(sha256sum "$DB")
check "newer schema refused" run 2 "$PERFD" pair --db "$DB" "$PLANT" "$PLANT"
check "and named" has err "has schema version 99; this perfd knows versions up to $v"
check "newer file left as it was" eq "$before" "$(sha256sum "$DB")"
sql "pragma user_version = $v"

mkdir adir
check "a directory as database refused" run 2 "$PERFD" pair --db adir "$PLANT" "$PLANT"
check "and named" has err "database 'adir' cannot be opened"
check "a path in a missing directory refused" run 2 "$PERFD" pair --db missing/dir/x.db "$PLANT" "$PLANT"
check "and named" has err "database 'missing/dir/x.db' cannot be opened"

# Another writer holds the lock: perfd waits --lock-timeout, then says so,
# before running anything.
rm -f lock.fifo && mkfifo lock.fifo
( echo "begin exclusive; insert into artifacts (path, size, sha256) values ('x', 1, 'y');"; cat lock.fifo; echo "rollback;" ) | sqlite3 "$DB" &
holder=$!
# The holder's lock taken: a writer of no patience is refused.
locked() { ! sqlite3 "$DB" "begin immediate; rollback;" >/dev/null 2>&1; }
check "another writer holds the lock" wait_for "the holder's lock" 10 locked
check "locked database refused after the timeout" run 2 "$PERFD" pair --db "$DB" --lock-timeout 0.3 --pairs 1 --max-pairs 1 "$PLANT" "$PLANT"
check "and named" has err "is locked by another writer (waited 300 ms"
echo "-- released" >lock.fifo
wait $holder
check "still one comparison stored" eq 1 "$(sql 'select count(*) from comparisons')"
check "no process rows left behind" eq 2 "$(sql 'select count(*) from processes')"
check "and it verifies" run 0 "$PERFD" verify --db "$DB"

# Two writers at once both store their comparisons.
"$PERFD" pair --db "$DB" --pairs 2 --warmup 0 "$PLANT" "$PLANT" >/dev/null 2>&1 &
a=$!
"$PERFD" pair --db "$DB" --pairs 2 --warmup 0 "$PLANT" "$PLANT" >/dev/null 2>&1 &
b=$!
wait $a; ra=$?
wait $b; rb=$?
check "concurrent writers both succeed" eq "0 0" "$ra $rb"
check "three comparisons stored" eq 3 "$(sql 'select count(*) from comparisons')"

# Interrupt: the process in hand is stopped, the comparison kept as
# abandoned with every process that ran, and it still verifies.
"$PERFD" pair --db "$DB" --json --warmup 0 "$PLANT" "$PLANT" -- --bad-arm new --bad-pair 2 --mode hang >int.json 2>int.err &
p=$!
hanging() {
	[ "$(sql "select count(*) from processes where state='running'")" = 1 ] &&
		[ "$(sql "select count(*) from processes p join comparisons c on c.id=p.comparison_id where c.state='running'")" -ge 3 ]
}
check "the comparison is in its hanging process" wait_for "the hanging process's row" 30 hanging
kill -INT $p
wait $p
check "interrupted pair exits 130" eq 130 $?
check "and says so" has int.err "interrupted: comparison 4 is stored as abandoned"
check "state abandoned" eq abandoned "$(sql 'select state from comparisons where id=4')"
check "verdict invalid, reason interrupted" eq "invalid" "$(sql 'select verdict from comparisons where id=4')"
check "reason stored" eq 1 "$(sql "select count(*) from comparison_notes where comparison_id=4 and text='the comparison was interrupted: stopped by a signal before it finished'")"
check "the processes that ran are kept" eq 3 "$(sql 'select count(*) from processes where comparison_id=4')"
check "no process left running" eq 0 "$(sql "select count(*) from processes where state='running'")"
check "the receipt was printed" eq abandoned "$(js int.json 'd["state"]')"
check "it verifies" run 0 "$PERFD" verify --db "$DB" 4

# kill -9 of perfd takes the program it was running with it.
"$PERFD" pair --db "$DB" --timeout 60 "$PLANT" "$PLANT" -- --mode hang --bad-arm old --sleep-ms 1 --pid-file "$T/hang.pids" >/dev/null 2>&1 &
p=$!
alive_is() { [ "$(alive "$T/hang.pids")" = "$1" ]; }
check "the hanging program runs" wait_for "the hanging program" 30 alive_is 1
kill -9 $p
wait $p 2>/dev/null
check "and dies with perfd" wait_for "the hanging program's end" 10 alive_is 0

# A database that would keep nothing: refused before anything runs.
for bad in "" ":memory:" "file::memory:" "file:$T/uri.db?mode=memory"; do
	check "pair --db '$bad' refused" run 2 "$PERFD" pair --db "$bad" "$PLANT" "$PLANT" -- --pid-file "$T/empty.pids"
	check "  said" has "$T/err" "database '$bad': not a file's path"
	check "  nothing ran" test ! -e "$T/empty.pids"
	check "  no receipt printed" eq 0 "$(wc -c <"$T/out")"
	check "list --db '$bad' refused too" run 2 "$PERFD" list --db "$bad"
done
check "no file made of the URI" test ! -e "$T/uri.db"
finish
