#!/bin/bash
# A commit that takes the machine down (docs/hosts.md, "When the machine
# goes down"): an agent killed with its children while a case of a head
# hangs, and started again in what it takes for another boot (the boot id
# it reads changed), must not run that step again: it holds the commit,
# names it with the fault line the previous boot's log kept (a fake pstore
# record, matched by the shipped gfx1201 profile's patterns), quarantines
# the host, keeps the other rows whole, moves on to other heads once the
# host is cleared, and runs the step once after 'perfd retry --held'. A
# head that changes the profile's [gate] paths waits for a release before
# its first run, the host untouched. Then
# a process that outlives SIGKILL (frozen in a cgroup v1 freezer, where a
# frozen task takes no signal): the agent names it, quarantines the host,
# holds the commit and goes on, answering SIGTERM within seconds.
. "$(dirname "$0")/lib.sh"
need git
need_vulkan --host lavapipe

new_src
S=$T/shared
mkdir -m 777 "$S"
# gone DIR: no process's command line names DIR (the pattern read from a
# file, so that grep's own command line does not name it).
gone() {
	printf '%s\n' "$1" >"$T/pattern"
	! grep -qaFf "$T/pattern" /proc/[0-9]*/cmdline 2>/dev/null
}
# The boot id the agent reads (docs/testing.md): a new one is a reboot.
export PERFD_BOOT_ID_FILE=$T/boot_id
echo 11111111-1111-1111-1111-111111111111 >"$PERFD_BOOT_ID_FILE"
chmod 644 "$PERFD_BOOT_ID_FILE"

# hang.sh hangs in its new arm while $S/hang-on exists, in a build of a
# commit with v.txt, as a kernel that hangs the GPU would (the machine then
# goes down); stuck.sh waits for the test to freeze it while $S/stuck-on
# exists.
cat >"$SRC/hang.sh" <<SH
#!/bin/sh
if [ -f "$S/hang-on" ] && [ "\$PERFD_ARM" = new ] && [ -f "\$(dirname "\$0")/v.txt" ]; then
	echo "\$PERFD_SEQ" >"$S/hanging"
	while :; do sleep 1; done
fi
echo "TIMING t_ms=1"
SH
cat >"$SRC/stuck.sh" <<SH
#!/bin/sh
if [ -f "$S/stuck-on" ] && [ "\$PERFD_ARM" = new ]; then
	touch "$S/stuck"
	while :; do sleep 0.2; done
fi
echo "TIMING t_ms=1"
SH
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
echo "RESULT contract on \"cpu\": passed=1 total=1"
SH
chmod +x "$SRC/hang.sh" "$SRC/stuck.sh" "$SRC/check.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm base
BASE=$(git -C "$SRC" rev-parse HEAD)
echo 1 >"$SRC/v.txt"
git -C "$SRC" add v.txt && git -C "$SRC" commit -qm "a head whose kernel hangs the GPU"
HEAD1=$(git -C "$SRC" rev-parse HEAD)

# A profile of our own device (lavapipe's) with the shipped gfx1201
# profile's fault patterns, reading the previous boot's log from a fake
# pstore directory alone.
{
	cat <<CONF
[host]
name = hang
[device]
device_match = llvmpipe
expected_driver = llvmpipe
[timing]
process_timeout_s = $(slow_s 20)
[faults]
fault_log = $S/kmsg
boot_log_command =
boot_log = $T/pstore
CONF
	grep '^fault_pattern' "$TESTS_DIR/../hosts/gfx1201.conf"
} >hang.conf
: >"$S/kmsg"
chmod 666 "$S/kmsg"

# conf CASE: the agent's configuration, its one case CASE.sh.
conf() {
	cat <<CONF
$(agent_repo host="$T/hang.conf" poll_s=1 branches="main other")

[calibration]
runs = 0
idle_budget_s = 0

$(section sandbox rw="$S")

$(section build command=true artifacts="hang.sh stuck.sh check.sh" timeout_s=60)

$(section "runner contract" command=./check.sh timeout_s=10)

$(section "case $1" command="./$1.sh" pairs=2 max_pairs=2 warmup=0)
CONF
}
conf hang >agent.conf

# Another host's comparison in the same file, which must stay whole.
check "a comparison of another host" run 0 "$PERFD" pair --db "$DB" --pairs 2 "$SRC/check.sh" "$SRC/check.sh"
OTHER=$(sql "select id || ' ' || host || ' ' || verdict from comparisons")

# ---- the machine goes down while the head's case hangs ----
touch "$S/hang-on"
"$PERFD" agent --config agent.conf --once >run1.out 2>run1.err &
AGENT=$!
kill_at_exit AGENT
check "the head's new arm hangs" wait_for "$S/hanging" 60 test -s "$S/hanging"
# The reset: the agent and its children gone at once, nothing written.
kill -9 $AGENT
wait $AGENT 2>/dev/null
AGENT=
check "  the sandbox went with it" wait_for "no process of the test's builds" 10 gone "$T/work/builds/"
check "a comparison and a process left running" eq "running running" \
	"$(sql "select c.state || ' ' || p.state from comparisons c join processes p on p.comparison_id = c.id where c.case_name = 'hang' order by p.seq desc limit 1")"
SEQ=$(cat "$S/hanging")
NPROC=$(sql "select count(*) from processes p join comparisons c on c.id = p.comparison_id where c.case_name = 'hang'")
# The next boot: another boot id, and what pstore kept of the last one.
echo 22222222-2222-2222-2222-222222222222 >"$PERFD_BOOT_ID_FILE"
mkdir "$T/pstore"
printf '%s\n' "Panic#1 Part1" \
	"<6>[ 4242.000000] amdgpu 0000:03:00.0: amdgpu: GPU fault detected: 146 0x0000480c" \
	"<3>[ 4252.100000] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=1, emitted seq=3" \
	"<6>[ 4252.200000] amdgpu 0000:03:00.0: amdgpu: MODE1 reset" >"$T/pstore/dmesg-ramoops-0"
# A head of another branch, which does not hold the held commit.
git -C "$SRC" branch other "$BASE"
git -C "$SRC" checkout -q other
echo 2 >"$SRC/w.txt"
git -C "$SRC" add w.txt && git -C "$SRC" commit -qm "another head"
HEAD2=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q main

check "the next start refuses to run it again" run 3 "$PERFD" agent --config agent.conf --once
check "  saying the machine went down under it" has err "the machine went down while case 'hang' of commit ${HEAD1:0:12} ran (boot 11111111; its process $SEQ, new arm"
check "  with the previous boot's fault line" has err "fault line: '<3>[ 4252.100000] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout"
check "  and how to release it" has err "perfd retry --held 1 --db $DB"
check "no process of the case was started again" eq "$NPROC" "$(sql "select count(*) from processes p join comparisons c on c.id = p.comparison_id where c.case_name = 'hang'")"
check "the hold names the commit, step, process, boot and fault" eq \
	"went-down|case|hang|$HEAD1|$SEQ|new|11111111-1111-1111-1111-111111111111|1" \
	"$(sql "select why, step, name, commit_oid, seq, arm, boot, fault like '%ring gfx_0.0.0 timeout%' from holds")"
check "  and what was read of the previous boot's log" eq 1 "$(sql "select count(*) from holds where log_read like '%$T/pstore: 1 file%'")"
check "the host is quarantined with it" eq 1 "$(sql "select count(*) from hosts where name = 'hang' and quarantined = 1 and fault like 'the machine went down while case ''hang''%'")"
check "the hung comparison is abandoned, not run again" eq "abandoned" "$(sql "select group_concat(state) from comparisons where case_name = 'hang'")"
check "the other host's comparison is whole" eq "$OTHER" "$(sql "select id || ' ' || host || ' ' || verdict from comparisons where case_name = 'default'")"
check "the database verifies" run 0 "$PERFD" verify --db "$DB"
check "  and is whole" eq ok "$(sql "pragma integrity_check")"
check "a second start holds nothing more" run 3 "$PERFD" agent --config agent.conf --once
check "  one hold still" eq 1 "$(sql "select count(*) from holds")"
check "perfd host list shows the held commit" run 0 "$PERFD" host list --db "$DB"
check "  with what it did" has out "the machine went down while case 'hang' of commit ${HEAD1:0:12}"

# ---- the host cleared: other heads run, the held commit waits ----
check "perfd host clear" run 0 "$PERFD" host clear --db "$DB" hang
check "  says the commit is still held" has out "1 commit still held on it"
check "the agent takes other heads" run 0 "$PERFD" agent --config agent.conf --once
check "  the other head's job is done" eq done "$(sql "select state from jobs where commit_oid = '$HEAD2'")"
check "  the held head's job waits on the hold" eq "running 1" "$(sql "select state || ' ' || hold_id from jobs where commit_oid = '$HEAD1'")"
check "  said at the start" has err "hold 1: the machine went down while case 'hang' of commit ${HEAD1:0:12}"
check "  and its case did not run" eq "$NPROC" "$(sql "select count(*) from processes p join comparisons c on c.id = p.comparison_id where c.case_name = 'hang' and c.job_id = (select id from jobs where commit_oid = '$HEAD1')")"
check "  the summary says it is held" has out "hold 1: the machine went down"

# ---- released: the step runs once ----
rm -f "$S/hang-on"
check "perfd retry --held of an unknown hold" run 2 "$PERFD" retry --held 9 --db "$DB"
check "  says so" has err "no hold 9 in"
check "perfd retry --held 1" run 0 "$PERFD" retry --held 1 --db "$DB"
check "  releases it" has out "hold 1 released"
check "  a second time: released already" run 2 "$PERFD" retry --held 1 --db "$DB"
check "the agent runs the held step" run 0 "$PERFD" agent --config agent.conf --once
check "  once: its job is done" eq done "$(sql "select state from jobs where commit_oid = '$HEAD1'")"
check "  with one comparison done beside the abandoned one" eq "abandoned done" "$(sql "select group_concat(state, ' ') from (select state from comparisons where case_name = 'hang' and job_id = (select id from jobs where commit_oid = '$HEAD1') order by id)")"
check "the hold is released, by whom" eq 1 "$(sql "select count(*) from holds where released_at is not null and released_by like 'perfd retry --held, by %'")"
check "the database verifies" run 0 "$PERFD" verify --db "$DB"

# ---- a gate: a change to the profile's [gate] paths waits for a release ----
printf '[gate]\npaths = shaders/* *.s\n' >>hang.conf
mkdir -p "$SRC/shaders"
echo "void main() {}" >"$SRC/shaders/k.comp"
git -C "$SRC" add shaders && git -C "$SRC" commit -qm "a shader change"
GATED=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q other
echo 3 >"$SRC/w.txt"
git -C "$SRC" commit -qam "a change outside the gate"
UNGATED=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q main
check "the agent with a gate" run 0 "$PERFD" agent --config agent.conf --once
check "  holds the gated head before its first run" eq "gate|job|$GATED|shaders/k.comp" "$(sql "select why, step, commit_oid, detail from holds where id = 2")"
check "  which waits, said with the path" has err "its commit ${GATED:0:12} is held on this host (hold 2: commit ${GATED:0:12} changes 'shaders/k.comp', one of the host profile's [gate] paths"
check "  and is not built" eq 0 "$(sql "select count(*) from builds where commit_oid = '$GATED'")"
check "  while the host is not quarantined" eq 0 "$(sql "select count(*) from hosts where quarantined = 1")"
check "  and the other head runs" eq done "$(sql "select state from jobs where commit_oid = '$UNGATED'")"
check "perfd retry --held 2" run 0 "$PERFD" retry --held 2 --db "$DB"
check "  says it runs next" has out "hold 2 released (commit ${GATED:0:12} changes 'shaders/k.comp'"
check "then the gated head runs" run 0 "$PERFD" agent --config agent.conf --once
check "  its job done" eq done "$(sql "select state from jobs where commit_oid = '$GATED'")"
check "  one gate hold, released" eq 1 "$(sql "select count(*) from holds where why = 'gate' and released_at is not null")"
sed -i '/^\[gate\]/,$d' hang.conf

# ---- a process that outlives SIGKILL ----
FREEZER=/sys/fs/cgroup/freezer
if [ "$(id -u)" != 0 ] || [ ! -f "$FREEZER/tasks" ]; then
	echo "# not root, or no cgroup v1 freezer: the unkillable process is not tried"
	finish
fi
CG=$FREEZER/perfd-test-$$
DB=$T/stuck.db
conf stuck >stuck.conf
sed -i "s|^database = .*|database = $DB|; s|^workdir = .*|workdir = $T/work-stuck|" stuck.conf
sed -i "s|^process_timeout_s = .*|process_timeout_s = 2|" hang.conf
thaw() {
	[ -d "$CG" ] || return 0
	echo THAWED >"$CG/freezer.state"
	wait_for "the frozen process to end once thawed" 10 gone "$T/work-stuck/builds/"
	rmdir "$CG"
}
# A test that fails half way leaves no frozen process behind it.
trap 'thaw; on_exit' EXIT
git -C "$SRC" commit -q --allow-empty -m "a head whose process gets stuck"
touch "$S/stuck-on"
"$PERFD" agent --config stuck.conf >stuck.out 2>stuck.err &
AGENT=$!
kill_at_exit AGENT
check "the stuck arm runs" wait_for "$S/stuck" 60 test -f "$S/stuck"
mkdir "$CG"
for pid in $(grep -laF -- "$T/work-stuck/builds/" /proc/[0-9]*/cmdline | cut -d/ -f3); do
	[ "$(cat /proc/$pid/comm 2>/dev/null)" = stuck.sh ] && echo "$pid" >"$CG/tasks"
done
check "  is in the freezer" test -n "$(cat "$CG/tasks")"
echo FROZEN >"$CG/freezer.state"
check "  frozen" wait_for "the freezer to say FROZEN" 10 grep -qx FROZEN "$CG/freezer.state"
check "the agent names what outlived SIGKILL" wait_for "its log to say so" 60 grep -q "outlived SIGKILL: pid [0-9]* ('stuck.sh') in state D" stuck.err
check "  and quarantines the host" wait_for "the quarantine said" 10 grep -q "host 'hang' is quarantined (a process of case 'stuck' of commit" stuck.err
check "the hold is stored" eq "unkillable|case|stuck|$(git -C "$SRC" rev-parse HEAD)" "$(sql "select why, step, name, commit_oid from holds")"
check "the agent still answers: SIGTERM stops it" run 0 kill -TERM $AGENT
check "  within seconds" wait_for "the agent to end" 5 sh -c "! kill -0 $AGENT 2>/dev/null"
wait $AGENT
check "  with exit 0" test $? = 0
AGENT=
thaw
check "the database verifies" run 0 "$PERFD" verify --db "$DB"
finish
