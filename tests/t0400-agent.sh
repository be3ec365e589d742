#!/bin/bash
# perfd agent on real git repositories made here: configuration errors, a
# head built and compared against its first parent, contract runners, the
# build cache, a failing build, a hanging runner, force-pushed and deleted
# heads, an unreachable remote, and a long history of which only heads are
# built.
. "$(dirname "$0")/lib.sh"
need git cc
new_src
# A program whose work is a loop of N rounds; the timing case compares it.
write_prog() { work_prog "$SRC/prog.c" "$1" "$2"; }
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
echo "RESULT contract on \"cpu\": passed=2 total=2"
echo "SUMMARY chunk ${PERFD_CHUNK:-1} of ${PERFD_CHUNKS:-1}"
SH
chmod +x "$SRC/check.sh"
write_prog 40000000 7
git -C "$SRC" add -A && git -C "$SRC" commit -qm "base: 40M rounds"
C1=$(git -C "$SRC" rev-parse HEAD)
write_prog 20000000 7
git -C "$SRC" commit -qam "half the rounds"
C2=$(git -C "$SRC" rev-parse HEAD)

cat >agent.conf <<CONF
$(agent_repo branches="main feature/*")

$(work_suite toolchain="cc --version" chunks=2)
CONF

check "--check accepts it" run 0 "$PERFD" agent --config agent.conf --check
check "configuration OK" has out "configuration OK"
cat >bad.conf <<'CONF'
[agent]
databse = x.db
poll_s = soon
[repo]
branches = main
[build]
command = make
[runner r]
chunks = 0
[mystery]
CONF
check "a bad configuration is refused" run 2 "$PERFD" agent --config bad.conf --check
check "unknown key, with its line" has err "bad.conf:2: unknown key 'databse' in [agent]"
check "malformed value, with its line" has err "bad.conf:3: 'poll_s': expected a number of seconds above 0 and at most 604800, not 'soon'"
check "bad chunks" has err "bad.conf:9: 'chunks': expected a whole number from 1 to 1000, not '0'"
check "unknown section" has err "bad.conf:10: unknown section [mystery]"
check "missing url" has err "bad.conf: [repo] needs 'url'"
check "missing artifacts" has err "bad.conf: [build] needs 'artifacts'"
check "runner without command" has err "bad.conf: [runner r] needs 'command'"
sed -e 's|^command = \./prog$|command = ./notbuilt --fast|' agent.conf >notbuilt.conf
check "a case program no artifact names is refused" run 2 "$PERFD" agent --config notbuilt.conf --check
check "  naming it" has err "[case work]: its program './notbuilt' is none of [build] artifacts"
check "a missing file is named" run 2 "$PERFD" agent --config nope.conf --check
check "and named" has err "configuration 'nope.conf'"

check "agent --once" run 0 "$PERFD" agent --config agent.conf --once
cp out once1.out
cp err once1.err
check "one job for main" eq "main $C2 $C1 done" "$(sql "select head, commit_oid, base_oid, state from jobs" | tr '|' ' ')"
check "head and base built" eq 2 "$(sql "select count(*) from builds where state='done'")"
check "one log line per step" has once1.err "job 1: done"
check "summary printed" has once1.out "builds made 2, cache hits 0"
cid=$(sql "select id from comparisons where job_id = 1 and case_name = 'work'")
check "comparison tied to the job and builds" eq "1" "$(sql "select count(*) from comparisons where id = $cid and base_build is not null and head_build is not null")"
check "half the rounds is faster" eq faster "$(sql "select verdict from comparisons where id = $cid")"
check "it verifies" run 0 "$PERFD" verify --db "$DB" "$cid"
hb=$(sql "select head_build from comparisons where id = $cid")
hdir=$(sql "select dir from builds where id = $hb")
check "stored hash is the built file's" eq "$(sha256sum "$hdir/prog" | cut -d' ' -f1)" "$(sql "select a.sha256 from build_artifacts b join artifacts a on a.id = b.artifact_id where b.build_id = $hb and b.name = 'prog'")"
check "build commit and tree stored" eq "$C2 $(git -C "$SRC" rev-parse "$C2^{tree}")" "$(sql "select commit_oid, tree_oid from builds where id = $hb" | tr '|' ' ')"
check "toolchain stored" eq "$(cc --version | head -n 1)" "$(sql "select toolchain from builds where id = $hb")"
check "two runner chunks, on the head's build" eq "2 $hb" "$(sql "select count(*), max(build_id) from runner_results where state = 'done'" | tr '|' ' ')"
check "runner lines kept verbatim" eq 2 "$(sql "select count(*) from runner_lines l join runner_results r on r.id = l.result_id where r.build_id = $hb and l.text = 'RESULT contract on \"cpu\": passed=2 total=2'")"
check "runner binary hashed" eq "$(sha256sum "$hdir/check.sh" | cut -d' ' -f1)" "$(sql "select distinct binary_sha256 from runner_results where build_id = $hb")"
check "chunk environment" eq 1 "$(sql "select count(*) from runner_lines l join runner_results r on r.id = l.result_id where r.build_id = $hb and l.text = 'SUMMARY chunk 2 of 2'")"

check "a second run finds nothing new" run 0 "$PERFD" agent --config agent.conf --once
check "no build made" has out "builds made 0, cache hits 0"
check "still one job" eq 1 "$(sql "select count(*) from jobs")"

# A commit whose tree was built already is not built again.
echo "notes" >"$SRC/NOTES" && git -C "$SRC" add NOTES && git -C "$SRC" commit -qm "notes"
git -C "$SRC" rm -q NOTES && git -C "$SRC" commit -qm "no notes"
C4=$(git -C "$SRC" rev-parse HEAD)
check "same tree again" run 0 "$PERFD" agent --config agent.conf --once
check "job for the new head" eq "done" "$(sql "select state from jobs where commit_oid = '$C4'")"
check "its build was a cache hit; its base was built" has out "builds made 1, cache hits 1"
check "no third build of prog's tree" eq 1 "$(sql "select count(*) from builds where tree_oid = '$(git -C "$SRC" rev-parse "$C4^{tree}")'")"

# A failing build: stored with its log, the job failed, the agent goes on.
git -C "$SRC" checkout -q -b feature/broken
echo "this is not C" >>"$SRC/prog.c" && git -C "$SRC" commit -qam "broken"
CB=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q main
check "a failing build" run 0 "$PERFD" agent --config agent.conf --once
check "the job failed" eq failed "$(sql "select state from jobs where commit_oid = '$CB'")"
check "naming the build" eq 1 "$(sql "select count(*) from jobs where commit_oid = '$CB' and detail like '%the build recipe exited 1%'")"
check "its log kept" eq 1 "$(sql "select count(*) from builds where commit_oid = '$CB' and state = 'failed' and cast(log as text) like '%error%'")"

# A deleted head is forgotten; a force-pushed one is a new job.
git -C "$SRC" branch -q -D feature/broken
git -C "$SRC" reset -q --hard "$C2"
C5=$(git -C "$SRC" rev-parse HEAD)
check "after delete and force-push" run 0 "$PERFD" agent --config agent.conf --once
check "deleted head forgotten" eq 0 "$(sql "select count(*) from heads where name = 'feature/broken'")"
check "main points at the forced commit" eq "$C5" "$(sql "select oid from heads where name = 'main'")"
check "a job for it exists once" eq 1 "$(sql "select count(*) from jobs where head = 'main' and commit_oid = '$C5'")"

# A runner that hangs is killed at its bound and recorded as timed out.
sed 's/^command = .\/check.sh$/command = sleep 30/; s/^timeout_s = 10$/timeout_s = 1/; s/^chunks = 2$/chunks = 1/' agent.conf >hang.conf
sed -i "s|^database = .*|database = $T/hang.db|; s|^workdir = .*|workdir = $T/hwork|" hang.conf
check "a hanging runner" run 0 "$PERFD" agent --config hang.conf --once
check "recorded as timed out" eq 1 "$(sqlite3 "$T/hang.db" "select count(*) from runner_results where timed_out = 1 and state = 'done'")"
check "the job failed for it" eq 1 "$(sqlite3 "$T/hang.db" "select count(*) from jobs where state = 'failed' and detail like '%contract runner%'")"

# A build that hangs is killed at its bound; the job fails and says why.
sed 's/^command = cc -O1 -o prog prog.c$/command = sleep 30/; s/^timeout_s = 60$/timeout_s = 1/' agent.conf >bhang.conf
sed -i "s|^database = .*|database = $T/bh.db|; s|^workdir = .*|workdir = $T/bhw|" bhang.conf
check "a hanging build" run 0 "$PERFD" agent --config bhang.conf --once
check "the build timed out" eq "failed 1" "$(sqlite3 "$T/bh.db" "select state, timed_out from builds" | tr '|' ' ')"
check "the job says so" eq 1 "$(sqlite3 "$T/bh.db" "select count(*) from jobs where state = 'failed' and detail like '%the build recipe timed out%'")"

# An unreachable remote is said; the agent does not crash.
sed "s|^url = .*|url = http://127.0.0.1:1/nothing.git|; s|^database = .*|database = $T/u.db|; s|^workdir = .*|workdir = $T/uwork|" agent.conf >unreach.conf
check "unreachable remote" run 0 "$PERFD" agent --config unreach.conf --once
check "named in the log" has err "fetch: "
check "with its URL" has err "127.0.0.1:1"

# Over smart HTTP on loopback, with a pull-request head compared against
# its merge base with main.
if [ -x "$(git --exec-path)/git-http-backend" ]; then
	mkdir srv && git clone -q --bare "$SRC" srv/repo.git
	git -C "$SRC" checkout -q -b topic
	write_prog 30000000 7
	git -C "$SRC" commit -qam "topic: fewer rounds"
	CP=$(git -C "$SRC" rev-parse HEAD)
	git -C "$SRC" checkout -q main
	git -C "$SRC" push -q "$T/srv/repo.git" "topic:refs/pull/3/head"
	exec 3< <(exec python3 "$TESTS_DIR/git-http-server.py" --root "$T/srv" \
		--max-seconds 120 2>"$T/server.log")
	read -r -t "$(slow_s 10)" port <&3
	sed "s|^url = .*|url = http://127.0.0.1:$port/repo.git|; s|^database = .*|database = $T/h.db|; s|^workdir = .*|workdir = $T/hw|; s|^branches = .*|branches = main\npulls = true|" agent.conf >http.conf
	check "agent over smart HTTP" run 0 "$PERFD" agent --config http.conf --once
	check "the pull head is a job" eq "pull/3 $CP $C2" "$(sqlite3 "$T/h.db" "select head, commit_oid, base_oid from jobs where head like 'pull/%'" | tr '|' ' ')"
	check "it was compared" eq 1 "$(sqlite3 "$T/h.db" "select count(*) from comparisons c join jobs j on j.id = c.job_id where j.head = 'pull/3' and c.state = 'done'")"
	check "libgit2 spoke smart HTTP" has "$T/server.log" "service=git-upload-pack"
else
	echo "# no git http-backend: the HTTP part is skipped"
fi

# Without --once the agent polls; SIGHUP makes it poll now, SIGTERM stops it.
sed "s|^database = .*|database = $T/loop.db|; s|^workdir = .*|workdir = $T/loopw|; s|^\[agent\]$|[agent]\npoll_s = 3600|" agent.conf >loop.conf
"$PERFD" agent --config loop.conf >loop.out 2>loop.err &
agent=$!
# done_jobs N: the loop's database has N jobs done.
done_jobs() { [ "$(sqlite3 "$T/loop.db" "select count(*) from jobs where state = 'done'" 2>/dev/null)" = "$1" ]; }
check "the polling agent did the first job" wait_for "the first job done" 60 done_jobs 1
check "and is idle, not exited" kill -0 "$agent"
check "a second agent on its configuration is refused" run 2 "$PERFD" agent --config loop.conf --once
check "  naming the first's pid" has err "another agent (pid $agent) uses the workdir '$T/loopw'"
sed "s|^workdir = .*|workdir = $T/loopw2|" loop.conf >loop2.conf
check "one with another work directory, on its database, too" run 2 "$PERFD" agent --config loop2.conf --once
check "  naming the database" has err "another agent (pid $agent) uses the database '$T/loop.db'"
check "  having touched nothing: the first's job stays done" eq 1 "$(sqlite3 "$T/loop.db" "select count(*) from jobs where state = 'done'")"
write_prog 10000000 7
git -C "$SRC" commit -qam "a tenth"
kill -HUP "$agent"
check "SIGHUP: the new head was measured" wait_for "the second job done" 60 done_jobs 2
# The signal is read where the agent waits: after the step in hand (a poll
# that may already have found the head, an idle A/A), not during it.
check "said so" wait_for "the agent's line on SIGHUP" 60 grep -q "SIGHUP: polling now" loop.err
kill -TERM "$agent"
wait "$agent"
check "SIGTERM: stopped, exit 0" eq 0 $?

# The suite read from the default branch, never from the head under test.
SUITE=$T/suiterepo
git init -q -b main "$SUITE"
cp "$SRC/prog.c" "$SRC/check.sh" "$SUITE/"
sed -n '/^\[build\]/,$p' agent.conf >"$SUITE/perfd.ini"
git -C "$SUITE" add -A && git -C "$SUITE" commit -qm "suite and program"
git -C "$SUITE" checkout -q -b feature/evil
sed -i 's/^command = cc -O1 -o prog prog.c$/command = echo pwned >\/tmp\/perfd-evil-$$; cc -O1 -o prog prog.c/' "$SUITE/perfd.ini"
echo "// evil" >>"$SUITE/prog.c"
git -C "$SUITE" commit -qam "change the suite"
git -C "$SUITE" checkout -q main
agent_repo database="$T/s.db" workdir="$T/sw" url="$SUITE" branches="main feature/*" suite=perfd.ini >suite.conf
check "a suite from the default branch" run 0 "$PERFD" agent --config suite.conf --once
check "said where it came from" has err "suite from origin/main:perfd.ini"
check "the feature head was built" eq done "$(sqlite3 "$T/s.db" "select state from jobs where head = 'feature/evil'")"
check "with the default branch's recipe, not the head's" test ! -e "/tmp/perfd-evil-$$"
printf '[build]\ncommand = cc\nartifacts = prog\n[case x]\npairs = none\n' >"$SUITE/perfd.ini"
git -C "$SUITE" commit -qam "a broken suite"
check "a broken suite on the default branch: nothing built" run 2 "$PERFD" agent --config suite.conf --once
check "its errors named with the branch and line" has err "origin/main:perfd.ini:5: 'pairs': expected a whole number from 1 to 64, not 'none'"
check "and why nothing ran" has err "no suite to build with"
check "the queued job waits" eq queued "$(sqlite3 "$T/s.db" "select state from jobs order by id desc limit 1")"
cat >both.conf <<CONF
[repo]
url = $SUITE
branches = main
suite = perfd.ini
[build]
command = make
artifacts = x
CONF
check "suite and sections together are refused" run 2 "$PERFD" agent --config both.conf --check
check "and said" has err "'suite' reads the suite from the default branch"

# A long history: only the head is built, with its first parent.
LONG=$T/long
git init -q -b main "$LONG"
cp "$SRC/prog.c" "$SRC/check.sh" "$LONG/"
git -C "$LONG" add -A && git -C "$LONG" commit -qm "start"
{
	for i in $(seq 1 10000); do
		printf 'commit refs/heads/main\ncommitter t <t@example.org> %d +0000\ndata 4\nc%03d\n' $((1700000000 + i)) $((i % 1000))
		[ "$i" = 1 ] && printf 'from refs/heads/main^0\n'
		printf 'M 644 inline counter\ndata %d\n%d\n\n' $((${#i} + 1)) "$i"
	done
} | git -C "$LONG" fast-import --quiet
check "10,000 commits made" eq 10001 "$(git -C "$LONG" rev-list --count main)"
sed "s|^url = .*|url = file://$LONG|; s|^database = .*|database = $T/long.db|; s|^workdir = .*|workdir = $T/lwork|" agent.conf >long.conf
check "agent on the long history" run 0 "$PERFD" agent --config long.conf --once
check "one job" eq 1 "$(sqlite3 "$T/long.db" "select count(*) from jobs")"
check "head and base built, nothing else" eq 2 "$(sqlite3 "$T/long.db" "select count(*) from builds")"
finish
