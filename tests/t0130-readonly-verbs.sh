#!/bin/bash
# The verbs that only read (show, list, verify, log, host list, serve) never
# create, migrate or change a database: a missing path, a missing directory,
# an empty file, a foreign file, a newer and an older schema are refused
# with a sentence naming the file, exit 2, and nothing is left behind. On a
# real database they work, serve included while another perfd writes, and
# they leave no -wal or -shm file.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"
command -v curl >/dev/null || { echo "curl missing: skipped"; exit 77; }

# refused WHAT PATH MESSAGE: every reading verb on PATH exits 2 and says
# MESSAGE. serve is bounded: one that starts would serve until killed.
refused() {
	check "$1: show refused" run 2 "$PERFD" show --db "$2" 1
	check "$1: show says why" has err "$3"
	check "$1: list refused" run 2 "$PERFD" list --db "$2"
	check "$1: list says why" has err "$3"
	check "$1: verify refused" run 2 "$PERFD" verify --db "$2"
	check "$1: verify says why" has err "$3"
	check "$1: host list refused" run 2 "$PERFD" host list --db "$2"
	check "$1: host list says why" has err "$3"
	check "$1: log refused" run 2 "$PERFD" log build 1 --db "$2"
	check "$1: log says why" has err "$3"
	check "$1: serve refused" run 2 timeout 20 "$PERFD" serve --db "$2" --listen 127.0.0.1:0
	check "$1: serve says why" has err "$3"
}

# files PREFIX: the names in $T starting with PREFIX, on one line.
files() { (cd "$T" && ls -A | grep "^$1" | tr '\n' ' ' | sed 's/ $//'); }

refused "a missing file" typo.db "no database at 'typo.db'"
check "no typo.db, -wal or -shm created" eq "" "$(files typo.db)"

refused "a missing directory" missing/dir/x.db "no database at 'missing/dir/x.db'"
check "no directory created" eq "" "$(files missing)"

: >empty.db
refused "an empty file" empty.db "database 'empty.db' is empty"
check "the empty file stays empty, alone" eq "empty.db 0" "$(files empty.db) $(stat -c %s empty.db)"

sqlite3 foreign.db "create table t (x); insert into t values (1);"
before=$(sha256sum foreign.db)
refused "a foreign file" foreign.db "database 'foreign.db' is an SQLite file but not a perfd database"
check "the foreign file is unchanged" eq "$before" "$(sha256sum foreign.db)"

# A real database, made by a writing verb.
check "pair stores a comparison" run 0 "$PERFD" pair --db "$DB" --pairs 2 "$PLANT" "$PLANT"
check "and leaves no -wal or -shm" eq "perfd.db" "$(files perfd.db)"
before=$(sha256sum "$DB")
check "show reads it" run 0 "$PERFD" show --db "$DB" 1
check "and prints the comparison" has out "comparison 1"
check "show --json reads it" run 0 "$PERFD" show --db "$DB" --json 1
check "show --output reads captured output" run 0 "$PERFD" show --db "$DB" --output 1 1
check "list reads it" run 0 "$PERFD" list --db "$DB"
check "and lists comparison 1" eq 1 "$(awk 'NR == 2 { print $1 }' out)"
check "verify reads it" run 0 "$PERFD" verify --db "$DB"
check "and the figures match" has out "comparison 1:"
check "host list reads it" run 0 "$PERFD" host list --db "$DB"
check "the database is unchanged" eq "$before" "$(sha256sum "$DB")"
check "and no -wal or -shm is left" eq "perfd.db" "$(files perfd.db)"

# serve reads it while another perfd writes: a comparison stored after it
# started is served; when both stop, no -wal or -shm is left.
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>"$T/serve.err" &
srv=$!
URL=$(served "$T/serve.err")
check "serve starts" test -n "$URL"
check "it serves comparison 1" run 0 curl -sf "$URL/api/v1/comparisons/1"
check "pair writes while serve reads" run 0 "$PERFD" pair --db "$DB" --pairs 1 --max-pairs 1 "$PLANT" "$PLANT"
check "serve sees the new comparison" run 0 curl -sf "$URL/api/v1/comparisons/2"
kill -TERM $srv
wait $srv
check "serve stops cleanly" eq 0 $?
check "no -wal or -shm left after both" eq "perfd.db" "$(files perfd.db)"

# A directory the reader cannot write: in WAL mode SQLite needs the -shm
# file, so reading works only while a writer has the database open. Checked
# as nobody, where the test runs as root.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	mkdir ro
	cp "$DB" ro/perfd.db
	chmod 711 "$T"
	chmod 755 ro
	chmod 644 ro/perfd.db
	as_nobody() { setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups "$@"; }
	check "unwritable directory: list refused" run 2 as_nobody "$PERFD" list --db ro/perfd.db
	check "and says why" has err "database 'ro/perfd.db' cannot be read: in WAL mode SQLite needs a 'ro/perfd.db-shm' file"
	rm -f ro.fifo && mkfifo ro.fifo
	( echo "select count(*) from comparisons;"; cat ro.fifo ) | sqlite3 ro/perfd.db >/dev/null &
	holder=$!
	wait_for "the writer's ro/perfd.db-shm" 10 test -e ro/perfd.db-shm
	check "with a writer holding it open, list reads it" run 0 as_nobody "$PERFD" list --db ro/perfd.db
	check "and lists comparison 2" eq 2 "$(awk 'NR == 2 { print $1 }' out)"
	echo "-- released" >ro.fifo
	wait $holder
	chmod 700 "$T"
else
	echo "# not root, or no setpriv: the unwritable directory is not checked"
fi

# A read-only filesystem (a read-only bind mount, in a mount namespace of
# this test's own; CI runs as root): with no -shm to be made, the verbs
# read the file as it stands (immutable), serve included. A -wal holding
# writes the file lacks cannot be read so: refused, saying why.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	mkdir rofs
	cp "$DB" rofs/perfd.db
	# walheld.db: a copy taken while a writer had it open, its -wal
	# holding a write the file lacks (and no -shm).
	cp "$DB" rofs/src.db
	python3 -c '
import shutil, sqlite3, sys
d = sys.argv[1]
c = sqlite3.connect(d + "/src.db", isolation_level=None)
c.execute("pragma wal_autocheckpoint = 0")
c.execute("insert into hosts (name) values (?)", ("walheld",))
shutil.copy(d + "/src.db", d + "/walheld.db")
shutil.copy(d + "/src.db-wal", d + "/walheld.db-wal")
c.close()' "$T/rofs"
	rm -f rofs/src.db*
	check "a -wal with writes to keep" test -s rofs/walheld.db-wal
	before=$(cd rofs && sha256sum perfd.db walheld.db walheld.db-wal)
	cat >ro.sh <<SH
set -u
mount --bind "$T/rofs" "$T/rofs" && mount -o remount,ro,bind "$T/rofs" || exit 99
cd "$T/rofs"
touch probe 2>/dev/null && echo writable >"$T/ro.writable"
for v in "show 1" "list" "verify" "host list"; do
	"$PERFD" \$v --db perfd.db >"$T/ro.\${v// /-}.out" 2>&1
	echo \$? >"$T/ro.\${v// /-}.rc"
done
"$PERFD" serve --db perfd.db --listen 127.0.0.1:0 2>"$T/ro.serve.err" &
srv=\$!
for i in \$(seq 100); do grep -q "serving http://" "$T/ro.serve.err" && break; sleep 0.05; done
url=\$(sed -n 's|^perfd: serving \(http://127.0.0.1:[0-9]*/\)\$|\1|p' "$T/ro.serve.err" | head -n 1)
curl -sf "\${url}api/v1/comparisons/1" >"$T/ro.serve.json"
echo \$? >"$T/ro.serve.rc"
kill -TERM \$srv
wait \$srv
"$PERFD" list --db walheld.db >"$T/ro.walheld.out" 2>&1
echo \$? >"$T/ro.walheld.rc"
ls -A >"$T/ro.files"
SH
	unshare -m --propagation private bash ro.sh
	check "the bind mount is read-only" test ! -e ro.writable
	check "read-only fs: show reads it" eq 0 "$(cat ro.show-1.rc)"
	check "  and prints comparison 1" has ro.show-1.out "comparison 1"
	check "read-only fs: list reads it" eq 0 "$(cat ro.list.rc)"
	check "  and lists comparison 2" eq 2 "$(awk 'NR == 2 { print $1 }' ro.list.out)"
	check "read-only fs: verify reads it" eq 0 "$(cat ro.verify.rc)"
	check "  and the figures match" has ro.verify.out "comparison 1:"
	check "read-only fs: host list reads it" eq 0 "$(cat ro.host-list.rc)"
	check "read-only fs: serve serves comparison 1" eq 0 "$(cat ro.serve.rc)"
	check "  its JSON" eq 1 "$(js ro.serve.json 'd["comparison"]')"
	check "a -wal with writes on a read-only fs: refused" eq 2 "$(cat ro.walheld.rc)"
	check "  saying why" has ro.walheld.out "'walheld.db-wal' holds writes not yet in the database"
	check "nothing made beside them" eq "perfd.db walheld.db walheld.db-wal" "$(tr '\n' ' ' <ro.files | sed 's/ $//')"
	check "the files are unchanged" eq "$before" "$(cd rofs && sha256sum perfd.db walheld.db walheld.db-wal)"
else
	echo "# not root: the read-only filesystem is not checked"
fi

# A newer schema: refused, and the file is left as it was.
cp "$DB" newer.db
sqlite3 newer.db "pragma user_version = 99"
before=$(sha256sum newer.db)
refused "a newer schema" newer.db "database 'newer.db' has schema version 99"
check "the newer file is unchanged" eq "$before" "$(sha256sum newer.db)"

# An older schema: a verb that only reads does not migrate; one that writes
# does, and the readers then read it.
cp "$DB" older.db
sqlite3 older.db "drop table hub_holds; drop table holds; alter table jobs drop column hold_id; drop table alert_commands; drop table alert_culprits; drop table alert_issues;
	drop table forecast_reads; drop table forecasts; drop table pushed_alerts;
	drop table alert_findings; drop table bisect_steps; drop table alerts;
	drop table stale_builds; drop index comparisons_running; alter table comparisons drop column owner;
	alter table comparisons drop column abandoned_reason; alter table builds drop column owner;
	alter table runner_results drop column owner; drop table pushed_builds; drop index builds_origin;
	alter table builds drop column origin_id; alter table builds drop column sha256;
	alter table runner_results drop column origin_id;
	drop table receipts; drop table pushed_jobs; drop table host_status;
	drop table hub_pulls; drop table pushed; drop table tokens; drop table comparison_origins;
	drop table pull_comments; drop table commit_statuses;
	drop table pull_approvals; drop table pull_heads_seen;
	drop table comparison_stages; drop table manifest_files; drop table manifests;
	drop index comparisons_kind;
	alter table comparisons drop column kind; alter table comparisons drop column better;
	alter table comparisons drop column max_pairs; alter table comparisons drop column calibration;
	alter table comparisons drop column old_manifest; alter table comparisons drop column new_manifest;
	alter table comparisons drop column pairs_run; alter table comparisons drop column time_budget_s;
	alter table processes drop column cpu_wait_ms;
	pragma user_version = 3;"
before=$(sha256sum older.db)
refused "an older schema" older.db "database 'older.db' has schema version 3"
check "and says how to migrate it" has err "perfd host clear"
check "the older file is unchanged" eq "$before" "$(sha256sum older.db)"
check "still at version 3" eq 3 "$(sqlite3 older.db 'pragma user_version')"
check "a writing verb migrates it" run 0 "$PERFD" host clear --db older.db nohost
check "to version 23" eq 23 "$(sqlite3 older.db 'pragma user_version')"
check "show then reads it" run 0 "$PERFD" show --db older.db 2
finish
