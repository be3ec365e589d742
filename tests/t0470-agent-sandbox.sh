#!/bin/bash
# The sandbox (docs/security.md). A hostile commit's build, contract runner
# and timed process try what a red-team pass did: read the agent's
# configuration, token and database, and the secrets of every other perfd
# service on the machine (a second agent's token, a hub's forge token, TLS
# key and database), find the agent through /proc, rewrite a verdict, write
# outside the build directory, reach the network, read the agent's
# environment, leave a daemon behind, fork, write and fill /tmp without
# bound, make a user namespace, change the measured binary. Each is refused
# or contained, as root under a parent closed to the sandbox's user (0700,
# as any mktemp -d or /root) and, at the end, as an unprivileged user
# beside a second agent and a hub of that same user. Then: a build killed
# with its agent leaves no process; a cached build whose artifact changed
# is stale and built again; where bubblewrap is absent or user namespaces
# are refused, pull heads are not built (mode auto) or the agent does not
# start (mode on); any other failure to start it stops the agent.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { echo "git missing: skipped"; exit 77; }
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org

# Never skipped: CI installs bubblewrap (dev.sh), and the sandbox is the
# point of this test.
check "bubblewrap is installed" test -x /usr/bin/bwrap
# Closed to every other user, as /root is: the sandbox needs no path
# permission of its parents.
chmod 700 "$T"

# A listener on loopback that a build must not reach without network = yes.
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"reached\n"); c.close()
' >port.txt &
listener=$!
wait_for "the server's port file" 10 test -s port.txt
PORT=$(cat port.txt)

SRC=$T/src
git init -q -b main "$SRC"
# The build: every attempt's outcome into findings.txt, an artifact.
cat >"$SRC/hostile.sh" <<'SH'
#!/bin/sh
f=findings.txt
: >$f
say() { echo "$1=$2" >>$f; }
say vars "${CONF:+c}${TOKEN:+t}${DBFILE:+d}${WORK:+w}${PORT:+p}"
say config "$(cat "$CONF" 2>/dev/null | wc -c)"
say token "$(cat "$TOKEN" 2>/dev/null | wc -c)"
say database "$(cat "$DBFILE" 2>/dev/null | wc -c)"
say mirror "$(ls "$WORK/mirror.git" 2>/dev/null | wc -l)"
say builds "$(ls "$WORK/builds" 2>/dev/null | wc -l)"
# Other services' secrets, each readable by its mode: none is in the view.
say others "$(cat "$OTHERS"/* 2>/dev/null | wc -c)"
say homes "$(ls /root /home /srv /var/lib 2>/dev/null | wc -l)"
say etc "$(ls /etc | wc -l)"
unshare -U true 2>/dev/null; say userns $?
# /tmp fills at its size (2 MB here), whatever the file size limit.
for i in 1 2 3; do head -c 900000 /dev/zero >/tmp/fill$i 2>/dev/null; done
say tmpfull "$(cat /tmp/fill* | wc -c)"
rm -f /tmp/fill*
say processes "$(ls /proc | grep -c '^[0-9]')"
say environ "$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c SECRET_FOR_TEST)"
say env "$(env | grep -c SECRET_FOR_TEST)"
say passed "$(env | sort | tr '\n' ' ')"
sqlite3 "$DBFILE" "update comparisons set verdict = 'faster'" 2>/dev/null; say update $?
touch "$OUTSIDE" 2>/dev/null; say outside $?
echo x >"/tmp/$TMPNAME" 2>/dev/null; say tmp $?
python3 -c "import socket; print(socket.create_connection(('127.0.0.1', $PORT), 2).recv(9))" \
	>/dev/null 2>&1; say network $?
# More processes than the limit.
set -- /proc/[0-9]*
before=$#
( for i in $(seq 80); do (echo x >>forks.txt; exec sleep 1) & done; wait ) 2>/dev/null
# Until they end: counted with the shell's own globbing, which needs no fork.
while set -- /proc/[0-9]*; [ $# -gt "$before" ]; do :; done
say forks_started "$(wc -l <forks.txt)"
rm -f forks.txt
# More bytes than the file size limit (2 MB against 1 MB).
(head -c 2000000 /dev/zero >big.bin) 2>/dev/null; say big "$(wc -c <big.bin)"
rm -f big.bin
# A core dump, its limit raised first: none may be written.
sh -c 'ulimit -c unlimited; kill -SEGV $$' 2>/dev/null
say cores "$(ls core* 2>/dev/null | wc -l)"
say corelimit "$(ulimit -H -c)"
# With CACHE (a [sandbox] rw whose data a [sandbox] ro shows): what data
# shows, then data made a link to the agent's database for the next step.
if [ -n "$CACHE" ]; then
	say cached "$(cat "$CACHE/data" 2>/dev/null | wc -c)"
	ln -sfn "$DBFILE" "$CACHE/data"
fi
# A daemon that would outlive the build.
setsid sh -c "sleep 300; : perfd_hostile_daemon_$TMPNAME" >/dev/null 2>&1 &
cc -O1 -o prog prog.c
SH
chmod +x "$SRC/hostile.sh"
cat >"$SRC/prog.c" <<'C'
#include <stdio.h>
int main(int argc, char **argv)
{
	/* The measured program tries to change itself. */
	FILE *f = fopen(argv[0], "ab");
	printf("TIMING work_ms=%d\n", f ? 999 : 5);
	fprintf(stderr, "self-write: %s\n", f ? "done" : "refused");
	if (f)
		fclose(f);
	return 0;
}
C
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
# A contract runner that may not write into the build it checks.
if touch runner-was-here 2>/dev/null; then p=0; else p=1; fi
echo "RESULT readonly on \"cpu\": passed=$p total=1"
SH
chmod +x "$SRC/check.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm one
echo "// two" >>"$SRC/prog.c" && git -C "$SRC" commit -qam two

# The process bound: where the step has cgroups of its own (root, cgroup
# v1), 35 tasks of the step alone; elsewhere the process limit, which
# counts every process of the sandbox's user on this machine (so, 30 more
# than it has now: another test's sandbox may take some of them).
if [ "$(id -u)" = 0 ] && [ -w /sys/fs/cgroup/memory/cgroup.procs ] && [ -w /sys/fs/cgroup/pids/cgroup.procs ]; then
	bound="processes = none
step_processes = 35"
else
	if [ "$(id -u)" = 0 ]; then
		who=$(getent passwd perfd-sandbox >/dev/null && echo perfd-sandbox || echo nobody)
	else
		who=$(id -u)
	fi
	bound="processes = $(( $(ps -u "$who" --no-headers | wc -l) + 30 ))"
fi
echo "perfd_notarealtoken0123456789abcdef" >hub.token
chmod 600 hub.token
# A second agent's and a hub's secrets on the same machine, left readable.
mkdir -p others
for f in agent2-hub.token forge.token hub-tls.key hub.db; do echo "secret-$f" >"others/$f"; done
chmod 755 others
chmod 644 others/*
cat >agent.conf <<CONF
[agent]
database = $DB
workdir = $T/work
[repo]
url = $SRC
branches = main
[hub]
url = http://127.0.0.1:9
token_file = $T/hub.token
timeout_s = 1
[sandbox]
$bound
file_size_mb = 1
tmp_mb = 2
[build]
command = ./hostile.sh
env = CONF=$T/agent.conf
env = TOKEN=$T/hub.token
env = DBFILE=$DB
env = WORK=$T/work
env = OUTSIDE=$T/outside
env = OTHERS=$T/others
env = PORT=$PORT
env = TMPNAME=perfd-hostile-$(basename "$T")
artifacts = prog check.sh findings.txt
timeout_s = 120
[runner readonly]
command = ./check.sh
[case work]
command = ./prog
pairs = 3
CONF
check "the configuration is checked" run 0 "$PERFD" agent --config agent.conf --check
check "--check names the sandbox" has out "sandbox: auto"
check "--check prints the view" has out "a sandboxed step sees, and nothing else of this machine:"
check "  the system read-only" has out "/usr (read-only)"
check "  the private /tmp of its size" has out "/tmp (private, empty, 2 MB)"
check "  nothing of the test's directory" eq "" "$(grep -v '^cases: ' out | grep -F "$T")"
check "  a path the build names under /tmp is said, with the fix" has err "sandbox: [build] env names '$T/outside', which a sandboxed step does not see (its /tmp, /var/tmp, /run and /dev/shm are private and empty): [sandbox] ro = $T/outside (or its directory; rw where the step writes there) shows it, or move it into the repository"
check "  one of the agent's own files, with no fix" has err "sandbox: [build] env names '$T/agent.conf', which is the agent's own (its work directory, database, configuration or a token file): no step sees it, and no [sandbox] ro may show it"
sed 's|^command = ./check.sh$|command = /opt/perfd-nowhere/check.sh|' agent.conf >opt.conf
check "a runner under /opt: --check passes" run 0 "$PERFD" agent --config opt.conf --check
check "  and says the view lacks it" has err "sandbox: [runner readonly] command names '/opt/perfd-nowhere/check.sh', which a sandboxed step does not see (nothing outside the view is shown): [sandbox] ro = /opt/perfd-nowhere/check.sh"
sed -i "s|^\[sandbox\]$|[sandbox]\nro = /opt/perfd-nowhere|" opt.conf
check "with ro naming it" run 0 "$PERFD" agent --config opt.conf --check
check "  nothing said of it" eq "" "$(grep -F /opt/perfd-nowhere err)"

export SECRET_FOR_TEST=hunter2
check "the agent runs the hostile commit" run 0 "$PERFD" agent --config agent.conf --once
unset SECRET_FOR_TEST
# The process limit has shown what it does: none from here on.
sed -i "s/^processes = .*/processes = none/; /^step_processes = 35$/d" agent.conf
cp err agent.err
check "the agent says its sandbox" has agent.err "sandbox: /usr/bin/bwrap"
if [ "$(id -u)" = 0 ] && ! getent passwd perfd-sandbox >/dev/null; then
	check "  as nobody, for want of its own user, said" has agent.err "sandbox: no user 'perfd-sandbox' here, which the install makes for the sandbox alone (docs/deploy.md): it runs as 'nobody', whose processes other daemons share"
elif [ "$(id -u)" = 0 ]; then
	check "  as its own user" has agent.err "sandbox: /usr/bin/bwrap as perfd-sandbox"
fi
check "both builds done" eq "2" "$(sql "select count(*) from builds where state = 'done'")"
F=$(sql "select dir from builds order by id limit 1")/findings.txt
check "findings written" test -s "$F"
finding() { sed -n "s/^$1=//p" "$F"; }
check "the build knows every path it tries" eq ctdwp "$(finding vars)"
check "the build ran under a parent closed to its user" eq 700 "$(stat -c %a "$T")"
check "no other service's secret is seen" eq 0 "$(finding others)"
check "no home, /srv or /var/lib" eq 0 "$(finding homes)"
check "only the parts of /etc a toolchain reads" test "$(finding etc)" -lt 40
check "no user namespace inside" test "$(finding userns)" != 0
check "/tmp is bounded by tmp_mb" test "$(finding tmpfull)" -le 2097152
check "the configuration is hidden" eq 0 "$(finding config)"
check "the token file is hidden" eq 0 "$(finding token)"
check "the database is hidden" eq 0 "$(finding database)"
check "the mirror is hidden" eq 0 "$(finding mirror)"
check "other builds are hidden: only its own directory is there" eq 1 "$(finding builds)"
check "only the sandbox's own processes are seen" test "$(finding processes)" -lt 10
check "no process's environment shows the agent's" eq 0 "$(finding environ)"
check "the agent's environment is not passed" eq 0 "$(finding env)"
check "the environment passed is named: HOME on the private /tmp" has "$F" "HOME=/tmp"
check "  PATH fixed, whatever the agent's holds" has "$F" "PATH=/usr/local/bin:/usr/bin:/bin "
check "the build's env is there" has "$F" "CONF=$T/agent.conf"
check "no verdict rewritten by the build" test "$(finding update)" != 0
check "no verdict in the database says faster" eq 0 "$(sql "select count(*) from comparisons where verdict = 'faster'")"
check "nothing written outside the build directory" test ! -e "$T/outside"
check "the build's /tmp is its own" test ! -e "/tmp/perfd-hostile-$(basename "$T")"
check "no network" test "$(finding network)" != 0
check "the fork bomb ran" test "$(finding forks_started)" -ge 10
check "the process limit holds" test "$(finding forks_started)" -le 30
check "the file size limit holds" test "$(finding big)" -le 1048576
check "no core dump, the limit raised or not" eq "0 0" "$(finding cores) $(finding corelimit)"
check "no daemon outlives the build" eq "" "$(pgrep -f "perfd_hostile_daemon_perfd-hostile-$(basename "$T")")"
check "the contract runner ran" test "$(sql "select count(*) from runner_lines where text like 'RESULT readonly %'")" -ge 1
check "the contract runner could not write the build" eq 0 "$(sql "select count(*) from runner_lines where text like 'RESULT readonly %' and text not like '%passed=1 total=1%'")"
check "the timed process could not change itself" eq 0 "$(sql "select count(*) from metrics where name = 'work_ms' and value = 999")"
check "the timed processes ran" test "$(sql "select count(*) from metrics where name = 'work_ms' and value = 5")" -ge 6
check "every comparison verifies" run 0 "$PERFD" verify --db "$DB"
check "the artifacts are still what was hashed" eq "" "$(sql "select a.path || ' ' || a.sha256 from artifacts a" | while read -r p h; do [ "$(sha256sum "$p" | cut -c1-64)" = "$h" ] || echo "$p"; done)"

# With network = yes the recipe reaches it.
sed -i 's/^command = .\/hostile.sh$/command = .\/hostile.sh\nnetwork = yes/' agent.conf
echo "// three" >>"$SRC/prog.c" && git -C "$SRC" commit -qam three
check "a recipe with network = yes" run 0 "$PERFD" agent --config agent.conf --once
cp err net.err
F=$(sql "select dir from builds order by id desc limit 1")/findings.txt
check "network = yes reaches the network" eq 0 "$(finding network)"
check "and still hides the token" eq 0 "$(finding token)"

# A link a build makes inside a path the steps write is never followed by
# a later step's bind: with rw = cache and ro = cache/data (absent at
# first), a build points data at the agent's database; the next build is
# not shown it, said in the log, and runs as before.
mkdir -m 777 "$T/cache"
sed -i "s|^\[sandbox\]\$|[sandbox]\nrw = $T/cache\nro = $T/cache/data|; s|^env = PORT=|env = CACHE=$T/cache\nenv = PORT=|" agent.conf
sed -i '/^network = yes$/d' agent.conf
echo "// link" >>"$SRC/prog.c" && git -C "$SRC" commit -qam link
check "a build makes a link to the database in a writable path" run 0 "$PERFD" agent --config agent.conf --once
check "  made" eq "$DB" "$(readlink "$T/cache/data")"
echo "// after" >>"$SRC/prog.c" && git -C "$SRC" commit -qam after
check "the next build runs" run 0 "$PERFD" agent --config agent.conf --once
F=$(sql "select dir from builds order by id desc limit 1")/findings.txt
check "  and is not shown the database through it" eq 0 "$(finding cached)"
check "  said in the log, with the fix" has err "sandbox: '$T/cache/data' is not shown to this step: it leads to '$DB' now, through a link inside '$T/cache', which the steps write (remove the link to show it again)"
check "  its build done" eq done "$(sql "select state from builds order by id desc limit 1")"
sed -i "\|^rw = $T/cache\$|d; \|^ro = $T/cache/data\$|d; \|^env = CACHE=|d" agent.conf
check "the configuration as it was" eq 0 "$(grep -c cache agent.conf)"

# A step's own cgroups (where perfd is root and cgroup v1's memory and
# pids controllers are there): a build that takes more memory than
# step_memory_mb is ended by the kernel, said in its log, and the agent
# and the next build live on.
if [ "$(id -u)" = 0 ] && [ -w /sys/fs/cgroup/memory/cgroup.procs ] && [ -w /sys/fs/cgroup/pids/cgroup.procs ]; then
	sed -i "s|^\[sandbox\]\$|[sandbox]\nstep_memory_mb = 64|; s|^command = ./hostile.sh\$|command = python3 -c \"b = b'x' * (200 << 20)\"|" agent.conf
	echo "// hungry" >>"$SRC/prog.c" && git -C "$SRC" commit -qam hungry
	# As a shell's child of its own, so that its pid, which names its
	# groups, is known.
	hungry() { "$PERFD" agent --config agent.conf --once & hungry_pid=$!; wait $hungry_pid; }
	check "a build past its step's memory bound" run 0 hungry
	check "  the start says the step's bounds" has err "each step in cgroups of its own: memory 64 MB (its tmpfs included)"
	check "  the build failed" eq failed "$(sql "select state from builds where commit_oid = '$(git -C "$SRC" rev-parse HEAD)'")"
	check "  ended by the kernel at the bound it passed, said" has err "it passed the step's memory bound of 64 MB"
	sed -i '/^step_memory_mb = 64$/d; s|^command = python3 -c .*$|command = ./hostile.sh|' agent.conf
	check "  none of its groups left" eq 0 "$(ls -d /sys/fs/cgroup/*/perfd/step-"$hungry_pid"-* 2>/dev/null | wc -l)"
else
	echo "# not root with cgroup v1's memory and pids: the step's cgroups are not tried"
fi

# A build killed with its agent leaves nothing running, and the restart
# builds in a new directory.
M=$(basename "$T" | tr -c 'A-Za-z0-9\n' _)
kill_cmd="sh -c \"setsid sh -c 'sleep 300; : perfd_killed_daemon_$M' \& sleep 300; : perfd_killed_build_$M\""
sed -i "s|^command = ./hostile.sh\$|command = $kill_cmd|" agent.conf
sed -i '/^network = yes$/d' agent.conf
echo "// four" >>"$SRC/prog.c" && git -C "$SRC" commit -qam four
"$PERFD" agent --config agent.conf --once >kill.out 2>kill.err &
p=$!
check "the build's daemon started" wait_for "the build's daemon" 10 pgrep -f perfd_killed_daemon_$M
kill -9 "$p"
wait "$p" 2>/dev/null
none_killed_left() { ! pgrep -f "perfd_killed_(daemon|build)_$M" >/dev/null; }
check "no process of the killed build is left" wait_for "the killed build's end" 3 none_killed_left
sed -i 's/^command = sh -c .*$/command = .\/hostile.sh/' agent.conf
# A sandbox left over by a killed agent (bwrap's first process can be
# caught before it sets its own parent-death signal): the restart kills it.
# The killed build's own bwrap may be slow to end on a loaded machine (10 s
# at most here); one still there is killed too, and counted with the
# planted one.
no_bwrap() { ! pgrep -f "bwrap .*$T/work/builds" >/dev/null; }
wait_for "the killed build's bwrap to end" 10 no_bwrap 2>/dev/null
left=$(pgrep -fc "bwrap .*$T/work/builds" || true)
bwrap --ro-bind / / --ro-bind "$T/work/builds" "$T/work/builds" --unshare-pid -- sleep 300 &
stray=$!
check "the restart finishes" run 0 "$PERFD" agent --config agent.conf --once
wait "$stray"
check "  a sandbox left over is killed at it" eq 137 "$?"
killed=$(sed -n 's/^perfd: \([0-9]*\) bwrap processes left by a stopped agent killed$/\1/p' err)
check "  said (its bwrap and the first process under it)" test "${killed:-0}" -ge 2 -a "${killed:-0}" -le $((2 + 2 * left))
check "no build directory used twice" eq "" "$(sql "select dir from builds group by dir having count(*) > 1")"
check "the killed build abandoned" eq 1 "$(sql "select count(*) from builds where state = 'abandoned'")"
check "and its directory removed at the restart" test ! -e "$(sql "select dir from builds where state = 'abandoned'")"
check "  said" has err "1 directory of abandoned or stale builds removed"

# Evidence that cannot drift: an artifact of a cached build changed after
# it was hashed makes the build stale; its tree is built again.
old=$(sql "select dir from builds where state = 'done' and commit_oid = '$(git -C "$SRC" rev-parse HEAD)'")
check "the build to tamper with" test -f "$old/prog"
printf 'tampered' >>"$old/prog"
git -C "$SRC" commit -qm "five: the same tree as four" --allow-empty
check "a job over a tampered build" run 0 "$PERFD" agent --config agent.conf --once
check "the tampering is said" has err "changed since it was built"
check "the build is stale with its reason" eq 1 "$(sql "select count(*) from stale_builds where reason like '%''prog'' changed since it was built%'")"
check "its tree built again" eq 1 "$(sql "select count(*) from builds b, stale_builds s where s.build_id != b.id and b.tree_oid = (select tree_oid from builds where id = s.build_id) and b.state = 'done'")"
check "the comparison measured the new build's file" eq "" "$(sql "select c.id from comparisons c join jobs j on j.id = c.job_id where j.commit_oid = '$(git -C "$SRC" rev-parse HEAD)' and c.base_build in (select build_id from stale_builds)")"
check "every comparison verifies after it" run 0 "$PERFD" verify --db "$DB"

# Any other failure to start bubblewrap stops the agent (mode auto too):
# nothing is built unsandboxed for a reason that can be fixed.
# Fake bwraps in a directory open to the sandbox's user, who runs them.
BIN=$(mktemp -d /tmp/perfd-bin.XXXXXX)
chmod 755 "$BIN"
trap 'on_exit; rm -rf "$BIN"' EXIT
cat >"$BIN/broken-bwrap" <<'SH'
#!/bin/sh
echo "bwrap: Can't mount proc on /newroot/proc: Operation not permitted" >&2
exit 1
SH
chmod +x "$BIN/broken-bwrap"
sed -i "s|^\[sandbox\]$|[sandbox]\nbwrap = $BIN/broken-bwrap|" agent.conf
check "a sandbox that fails otherwise stops the agent (exit 2)" run 2 "$PERFD" agent --config agent.conf --once
check "  and says why" has err "Can't mount proc"
check "  nothing built" eq 0 "$(sql "select count(*) from builds where started_at > (select max(started_at) from builds where state = 'done')")"
sed -i "/^bwrap = .*broken-bwrap$/d" agent.conf

# Where bubblewrap cannot run: a bwrap that fails as one without user
# namespaces does.
cat >"$BIN/fake-bwrap" <<'SH'
#!/bin/sh
echo "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2
exit 1
SH
chmod +x "$BIN/fake-bwrap"
git -C "$SRC" update-ref refs/pull/7/head "$(git -C "$SRC" rev-parse HEAD)"
sed -i "s|^\[sandbox\]$|[sandbox]\nbwrap = $BIN/fake-bwrap|; s|^branches = main$|branches = main\npulls = true|" agent.conf
check "without a sandbox (mode auto) the agent runs" run 0 "$PERFD" agent --config agent.conf --once
check "it says why there is no sandbox" has err "non-privileged user namespaces"
check "the stale build's directory is removed at this start" test ! -e "$old"
check "the pull head is not built, and why" has out "pull/7 at"
check "the pull head's reason" has out "not built: no sandbox here"
check "no job for the pull head" eq 0 "$(sql "select count(*) from jobs where head like 'pull/%'")"
sed -i "s|^\[sandbox\]$|[sandbox]\nmode = on|" agent.conf
check "mode = on: the agent does not start" run 2 "$PERFD" agent --config agent.conf --once
check "mode = on: and says why" has err "[sandbox] mode = on"

# As an unprivileged user beside a second agent and a hub of that same
# user (the documented User=perfd deployment), their files mode 600, the
# hub running and taking this agent's records: the sandbox hides them by
# showing nothing it was not asked to.
U=$(mktemp -d /tmp/perfd-user.XXXXXX)
trap 'on_exit; rm -rf "$BIN" "$U"' EXIT
chmod 755 "$U"
git clone -q --bare "$SRC" "$U/src.git"
mkdir "$U/hub"
for f in agent2-hub.token forge.token tls.key; do echo "secret-$f" >"$U/hub/$f"; done
HPORT=$(free_port)
section hub database="$U/hub/hub.db" listen="127.0.0.1:$HPORT" hosts=box >"$U/hub/hub.conf"
printf '[host]\nname = box\n' >"$U/box.conf"
sed -e "s|$T/work|$U/work|g; s|$T/others|$U/hub|; s|$T/hub.token|$U/hub.token|g" \
	-e "s|^database = .*|database = $U/perfd.db\nhost = $U/box.conf|; s|^url = $SRC$|url = $U/src.git|" \
	-e "s|^url = http://127.0.0.1:9$|url = http://127.0.0.1:$HPORT|" \
	-e "s|^env = CONF=.*|env = CONF=$U/agent.conf|; s|^env = DBFILE=.*|env = DBFILE=$U/perfd.db|" \
	-e "/^bwrap = /d; /^mode = on$/d; /^pulls = true$/d" agent.conf >"$U/agent.conf"
chown -R 40471:40471 "$U"
AS_USER="setpriv --reuid=40471 --regid=40471 --clear-groups env HOME=$U"
as_user() { $AS_USER "$@"; }
as_user sh -c "umask 077; '$PERFD' token new box --config '$U/hub/hub.conf' >'$U/hub.token' 2>/dev/null"
chmod 600 "$U"/hub/*
# Not through the function: $! is then the hub itself, for the kill at exit.
$AS_USER "$PERFD" serve --config "$U/hub/hub.conf" 2>"$U/hub.err" &
hubpid=$!
kill_at_exit hubpid
check "a hub runs as the same user" test -n "$(served "$U/hub.err")"
check "as an unprivileged user, the agent runs the hostile commit" run 0 as_user "$PERFD" agent --config "$U/agent.conf" --once
check "  sandboxed" has out "sandbox: builds and processes ran sandboxed"
check "  its records reached the hub beside it" test "$(sqlite3 "$U/hub/hub.db" "select count(*) from comparison_origins where host = 'box'")" -ge 1
F=$(sqlite3 "$U/perfd.db" "select dir from builds where state = 'done' order by id limit 1")/findings.txt
check "  findings written" test -s "$F"
check "  the build knows every path it tries" eq ctdwp "$(finding vars)"
check "  no secret of the hub or the second agent is seen, nor the hub's database" eq 0 "$(finding others)"
check "  its own token is hidden" eq 0 "$(finding token)"
check "  its own database is hidden" eq 0 "$(finding database)"
check "  its own configuration is hidden" eq 0 "$(finding config)"
check "  no daemon outlives the build" eq "" "$(pgrep -f "perfd_hostile_daemon_perfd-hostile-$(basename "$T")")"
check "  the hub still runs" kill -0 "$hubpid"

# A path shown to builds that holds the agent's own files is refused.
sed "s|^\[sandbox\]$|[sandbox]\nrw = $T|" agent.conf >shows-own.conf
check "an rw holding the agent's files refused" run 2 "$PERFD" agent --config shows-own.conf --check
check "  and why" has err "[sandbox] rw '$T' would show the agent's own"

# Bad [sandbox] settings and a bad [device] nodes: each named at its line.
cat >bad.conf <<CONF
[repo]
url = $SRC
branches = main
[sandbox]
mode = maybe
env = PATH bad-name!
nodes = /etc/passwd /dev/.. /dev/kmsg
ro = relative/dir /srv/..
bwrap = bwrap
processes = 0
[build]
command = true
artifacts = prog
CONF
check "bad [sandbox] settings refused" run 2 "$PERFD" agent --config bad.conf --check
check "  mode" has err "bad.conf:5: 'mode': expected auto, on or off, not 'maybe'"
check "  env" has err "bad.conf:6: 'env': expected a variable name (letters, digits, '_', with '*' or '?'), not 'bad-name!'"
check "  nodes" has err "bad.conf:7: 'nodes': expected a GPU's device node (under /dev/dri/ or /dev/accel/, or /dev/kfd, /dev/nvidia*, /dev/mali*, /dev/dxg), not '/etc/passwd'"
check "  nodes: /dev/.. is the root, not a node" has err "bad.conf:7: 'nodes': expected a GPU's device node (under /dev/dri/ or /dev/accel/, or /dev/kfd, /dev/nvidia*, /dev/mali*, /dev/dxg), not '/dev/..'"
check "  nodes: /dev/kmsg is no GPU's" has err "bad.conf:7: 'nodes': expected a GPU's device node (under /dev/dri/ or /dev/accel/, or /dev/kfd, /dev/nvidia*, /dev/mali*, /dev/dxg), not '/dev/kmsg'"
check "  ro" has err "bad.conf:8: 'ro': expected an absolute path, not 'relative/dir'"
check "  ro: a path through .. is not shown" has err "bad.conf:8: 'ro': expected an absolute path, not '/srv/..'"
check "  bwrap" has err "bad.conf:9: 'bwrap': expected an absolute path, not 'bwrap'"
check "  processes" has err "bad.conf:10: 'processes': expected 'none' or a whole number from 1 to 4194304, not '0'"
printf '[host]\nname = bad\n[device]\ndevice_match = x\nexpected_driver = y\nnodes = /dev/dri/* /etc/shadow\n' >bad-host.conf
sed "s|^\[repo\]$|[agent]\nhost = $T/bad-host.conf\n[repo]|; /^\[sandbox\]$/,/^\[build\]$/{/^\[build\]$/!d}" bad.conf >bad-host-agent.conf
check "a host profile's nodes outside /dev refused" run 2 "$PERFD" agent --config bad-host-agent.conf --check
check "  at its line" has err "bad-host.conf:6: 'nodes': expected a GPU's device node (under /dev/dri/ or /dev/accel/, or /dev/kfd, /dev/nvidia*, /dev/mali*, /dev/dxg), not '/etc/shadow'"

kill "$listener" 2>/dev/null
finish
