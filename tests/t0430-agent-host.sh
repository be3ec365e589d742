#!/bin/bash
# perfd agent with a host profile, each time on a fresh database: the
# shipped lavapipe profile; a profile of our own with CPU pinning, a
# cool-down, a fault watch on a log file and a fault that quarantines the
# host; a CPU host (no [device]) with settings per case; and a stop
# (SIGTERM) in the middle of a build, by the agent's own
# signal and by a service manager's signal to the whole service, after which
# the next start builds the commit again instead of calling it failed.
. "$(dirname "$0")/lib.sh"
need git cc
need_vulkan --host lavapipe

new_src
# What the test and the sandboxed steps share ([sandbox] rw): the watched
# log, the switch that makes a fault, the build's hold. Open to the
# sandbox's user.
S=$T/shared
mkdir -m 777 "$S"
work_prog "$SRC/prog.c" 2000000 7
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
echo "RESULT contract on \"cpu\": passed=1 total=1"
SH
# The second case writes a GPU fault line into the watched log during the
# head's second pair, when asked to by the file $S/fault-on.
cat >"$SRC/fault.sh" <<SH
#!/bin/sh
if [ -f "$S/fault-on" ] && [ "\$PERFD_ARM" = new ] && [ "\$PERFD_PAIR" = 2 ]; then
	echo "[ 4242.000001] i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb" >>"$S/kmsg"
fi
echo "TIMING t_ms=1"
SH
chmod +x "$SRC/check.sh" "$SRC/fault.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm base
work_prog "$SRC/prog.c" 1000000 7
git -C "$SRC" commit -qam "half the rounds"

# conf DB PROFILE BUILD_COMMAND: an agent configuration.
conf() {
	cat <<CONF
$(agent_repo database="$1" workdir="$T/work-$(basename "$1" .db)" host="$2")

$(section sandbox rw="$S")

$(work_suite build="$3" artifacts="prog check.sh fault.sh" pairs=2)

[case fault]
command = ./fault.sh
pairs = 3
max_pairs = 3
warmup = 0
CONF
}

# ---- the shipped profile, on a fresh database ----
DB=$T/lavapipe.db
conf "$DB" lavapipe "cc -O1 -o prog prog.c" >lavapipe.conf
check "agent with host = lavapipe, fresh database" run 0 "$PERFD" agent --config lavapipe.conf --once
check "the start names the host" has err "agent on host 'lavapipe'"
check "the head's job done" eq "done" "$(sql "select group_concat(state, ' ') from jobs")"
check "two comparisons on lavapipe" eq 2 "$(sql "select count(*) from comparisons where host = 'lavapipe' and state = 'done' and kind = 'compare'")"
check "  after A/As of each case (docs/config.md, [calibration])" eq "fault work" "$(sql "select group_concat(case_name, ' ') from (select distinct case_name from comparisons where host = 'lavapipe' and state = 'done' and kind = 'aa' and job_id is null order by case_name)")"
check "the fault watch was on" eq 0 "$(sql "select count(*) from processes where fault_watch is not 'on'")"
check "the profile's fingerprint is stored" eq "$(sql "select count(*) from comparisons")" "$(sql "select count(*) from comparisons where fingerprint like '%llvmpipe%'")"
check "they verify" run 0 "$PERFD" verify --db "$DB"
check "no progress lines when stderr is no terminal" eq 0 "$(grep -c '^perfd: \[[0-9]*/[0-9]*\]' err)"
# On a terminal (script(1) gives it one) each process is a line as it ends.
git -C "$SRC" commit -q --allow-empty -m "a head watched on a terminal"
script -qec "'$PERFD' agent --config lavapipe.conf --once" /dev/null >tty.out 2>&1 </dev/null
last_job="(select max(id) from jobs)"
check "progress lines on a terminal, one per process" eq "$(sql "select count(*) from processes p join comparisons c on c.id = p.comparison_id where c.job_id = $last_job")" "$(grep -c '^perfd: \[[0-9]*/[0-9]*\] stage [0-9]' tty.out)"
check "  with each pair's gain" eq "$(sql "select count(*) from processes p join comparisons c on c.id = p.comparison_id where c.job_id = $last_job and p.pair > 0 and p.arm = 'old'")" "$(grep -c 'pair gain [-+][0-9]' tty.out)"

# ---- a profile of our own: pinning, cool-down, fault watch, quarantine ----
cat >own.conf <<CONF
[host]
name = own
[device]
device_match = llvmpipe
expected_driver = llvmpipe
[timing]
process_timeout_s = 20
cpus = 0
cooldown_ms = 150
noise = 0.2
min_effect = 0.02
[faults]
fault_log = $S/kmsg
fault_pattern = GPU HANG
CONF
: >"$S/kmsg"
chmod 666 "$S/kmsg"
DB=$T/own.db
conf "$DB" "$T/own.conf" "cc -O1 -o prog prog.c" >own-agent.conf
check "agent with our profile, fresh database" run 0 "$PERFD" agent --config own-agent.conf --once
check "every process pinned to CPU 0" eq "0" "$(sql "select group_concat(distinct cpus) from processes")"
check "the profile's thresholds are stored" eq "0.2 0.02" "$(sql "select distinct noise || ' ' || min_effect from comparisons")"
check "the fault watch was on" eq 0 "$(sql "select count(*) from processes where fault_watch is not 'on'")"
# The cool-down is a pause between one process's end and the next one's
# start; the timestamps are the stored ones.
gap=$(sql "select min((julianday(b.started_at) - julianday(a.ended_at)) * 86400000) from processes a join processes b on b.comparison_id = a.comparison_id and b.seq = a.seq + 1")
check "processes at least 150 ms apart (min gap ${gap} ms)" python3 -c "import sys; sys.exit(not float('$gap') >= 149)"

# The same host faults on a new head: the process is invalid, the host
# quarantined, its commit held, and the next start refuses GPU work until
# the host is cleared; the held commit runs again once it is released.
touch "$S/fault-on"
git -C "$SRC" commit -q --allow-empty -m "a head that faults"
check "a fault during a comparison: the run ends quarantined, exit 3" run 3 "$PERFD" agent --config own-agent.conf --once
check "an empty commit's comparison is called A/A" has err "base and head builds made the same artifacts, byte for byte: an A/A comparison"
check "the process with the fault is kept" eq 1 "$(sql "select count(*) from processes where fault like '%GPU HANG%'")"
check "its comparison is invalid" eq invalid "$(sql "select c.verdict from comparisons c join processes p on p.comparison_id = c.id where p.fault is not null")"
check "the host is quarantined" eq 1 "$(sql "select quarantined from hosts where name = 'own'")"
rm -f "$S/fault-on"
git -C "$SRC" commit -q --allow-empty -m "a head after the fault"
check "the next start refuses GPU work" run 3 "$PERFD" agent --config own-agent.conf --once
check "naming the fault, the step and its commit" has err "host 'own' is quarantined (a GPU fault while case 'fault' of commit $(git -C "$SRC" rev-parse HEAD~ | cut -c1-12) ran (its process 3, new arm), job"
check "  with the line" has err "fault line: '[ 4242.000001] i915 0000:00:02.0: [drm] GPU HANG"
check "and the command that clears it" has err "perfd host clear --db $DB own"
check "the faulting commit is held (docs/hosts.md)" eq "fault|case|fault|3" "$(sql "select why, step, name, seq from holds")"
check "perfd host clear" run 0 "$PERFD" host clear --db "$DB" own
check "then the queue runs" run 0 "$PERFD" agent --config own-agent.conf --once
# The head after the faulting one (whose base it is) waits for the held
# commit's release; the faulting head's job ended with its fault.
check "  but not the job whose base is held" eq "$(git -C "$SRC" rev-parse HEAD)" "$(sql "select group_concat(commit_oid) from jobs where state not in ('done', 'failed') and hold_id = 1")"
check "perfd retry --held releases it" run 0 "$PERFD" retry --held --db "$DB"
check "then they run" run 0 "$PERFD" agent --config own-agent.conf --once
check "every job ended" eq 0 "$(sql "select count(*) from jobs where state not in ('done', 'failed')")"
check "they verify" run 0 "$PERFD" verify --db "$DB"

# ---- a CPU host (a profile without [device]) and settings per case ----
cat >cpu.conf <<CONF
[host]
name = cpu-only
[timing]
noise = 0.1
min_effect = 0.05
max_pairs = 4
[faults]
fault_log = $T/kmsg
CONF
DB=$T/cpu.db
conf "$DB" "$T/cpu.conf" "cc -O1 -o prog prog.c" >cpu-agent.conf
# Appended to the last section, [case fault].
cat >>cpu-agent.conf <<CONF
min_effect = 0.2
noise = 0.3
cpus = 0
cooldown_ms = 60
CONF
check "--check reads a CPU host's profile" run 0 "$PERFD" agent --config cpu-agent.conf --check
check "the agent on a CPU host, fresh database" run 0 "$PERFD" agent --config cpu-agent.conf --once
check "its comparisons are the CPU host's" eq 6 "$(sql "select count(*) from comparisons where host = 'cpu-only' and state = 'done'")"
check "no Vulkan device in its fingerprint" eq 6 "$(sql "select count(*) from comparisons where fingerprint like '%\"devices\": []%' or fingerprint like '%\"devices\":[]%'")"
check "the work case keeps the host's thresholds" eq "0.1 0.05" "$(sql "select distinct noise || ' ' || min_effect from comparisons where case_name = 'work'")"
check "the fault case has its own" eq "0.3 0.2" "$(sql "select distinct noise || ' ' || min_effect from comparisons where case_name = 'fault'")"
check "the work case's stages reach the host's max_pairs" eq "2 4" "$(sql "select distinct pairs || ' ' || max_pairs from comparisons where case_name = 'work' and job_id is not null")"
check "the fault case keeps its own" eq "3 3" "$(sql "select distinct pairs || ' ' || max_pairs from comparisons where case_name = 'fault' and job_id is not null")"
check "only the fault case's processes are pinned" eq "fault 0" "$(sql "select distinct c.case_name || ' ' || p.cpus from processes p join comparisons c on c.id = p.comparison_id where p.cpus is not null")"
gap=$(sql "select min((julianday(b.started_at) - julianday(a.ended_at)) * 86400000) from processes a join processes b on b.comparison_id = a.comparison_id and b.seq = a.seq + 1 join comparisons c on c.id = a.comparison_id where c.case_name = 'fault'")
check "the fault case's cool-down (min gap ${gap} ms)" python3 -c "import sys; sys.exit(not float('$gap') >= 59)"
sed 's|^host = .*|host = no-such-host|' cpu-agent.conf >nohost.conf
check "--check refuses a host profile that does not exist" run 2 "$PERFD" agent --config nohost.conf --check
check "  naming it" has err "no host profile 'no-such-host'"
printf 'min_effect = 2\ncpus = 3-1\n' >>cpu-agent.conf
check "bad case settings are refused" run 2 "$PERFD" agent --config cpu-agent.conf --check
check "  the fraction" has err "'min_effect': expected a fraction in [0, 1) (0.05 is 5%), not '2'"
check "  the CPU list" has err "'cpus': range 3-1 runs backwards"
sed '/^min_effect = 2$/d; /^cpus = 3-1$/d' cpu-agent.conf >stages.conf
printf '\n[case rate]\ncommand = ./prog\nmetric = ops_per_s\npairs = 6\nmax_pairs = 3\nbetter = up\n' >>stages.conf
check "bad stages and directions are refused" run 2 "$PERFD" agent --config stages.conf --check
check "  a direction that is no word of the two" has err "'better': 'up' is neither 'lower' nor 'higher'"
check "  max_pairs under pairs" has err "[case rate]: max_pairs 3 is under pairs 6"
check "  a rate metric with no direction said" has err "[case rate]: metric 'ops_per_s' reads as a rate: say which way is better with 'better = higher' (or lower)"
printf '[host]\nname = cpu-stages\n[timing]\npairs = 8\nmax_pairs = 4\n' >stages-host.conf
printf '[host]\nname = cpu-zero\n[timing]\npairs = 0\nmax_pairs = 65\n' >zero-host.conf
sed "s|^host = .*|host = $T/stages-host.conf|" cpu-agent.conf | sed '/^min_effect = 2$/d; /^cpus = 3-1$/d' >sh.conf
sed "s|^host = .*|host = $T/zero-host.conf|" cpu-agent.conf | sed '/^min_effect = 2$/d; /^cpus = 3-1$/d' >zh.conf
check "a host profile whose max_pairs is under its pairs" run 2 "$PERFD" agent --config sh.conf --check
check "  refused, at its line" has err "stages-host.conf:5: max_pairs 4 is under pairs 8"
check "a host profile with pairs 0 and max_pairs 65" run 2 "$PERFD" agent --config zh.conf --check
check "  pairs named" has err "'pairs': expected a whole number from 1 to 64, not '0'"
check "  max_pairs named" has err "'max_pairs': expected a whole number from 1 to 64, not '65'"

# ---- no host profile, and no Vulkan device the loader can find ----
# The fingerprint is the host alone, and says why rather than leaving the
# device out unexplained (docs/hosts.md, "Without a profile").
DB=$T/noprofile.db
cat >noprofile.conf <<CONF
$(agent_repo workdir="$T/work-noprofile")

$(section sandbox rw="$S")

$(section calibration runs=0 idle_budget_s=0)

$(work_suite pairs=2)
CONF
check "an agent without a profile where Vulkan has no driver" run 0 env VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json "$PERFD" agent --config noprofile.conf --once
check "  says so at its start" has err "no host profile; no Vulkan device found"
check "  its comparison ran" eq 1 "$(sql "select count(*) from comparisons where state = 'done'")"
check "  with the note in the fingerprint, no device" eq "[] no host profile; no Vulkan device found" "$(sql "select distinct fingerprint from comparisons" >fp.json; js fp.json 'str(d["devices"]) + " " + d["note"]')"
"$PERFD" serve --db "$DB" --listen 127.0.0.1:0 2>"$T/serve.err" &
srv=$!
kill_at_exit srv
URL=$(served "$T/serve.err")
check "/api/v1/hosts" eq 200 "$(curl -s -o hosts.json -w '%{http_code}' "$URL/api/v1/hosts")"
check "  the host's fingerprint carries the note" eq "no host profile; no Vulkan device found" "$(js hosts.json 'd["hosts"][0]["fingerprint"]["note"]')"
kill "$srv" && wait "$srv"
srv=

# ---- a stop in the middle of a build ----
# The recipe says it started, then waits on a file that the test removes
# before the restart; the recipe is the same text either way, so the
# restart builds the same tree with the same recipe. Its process is found
# by a word in its command unique to this run: in the sandbox, its own
# idea of its pid is its namespace's.
word=perfd_t0430_recipe_$(basename "$T" | tr -c 'A-Za-z0-9\n' _)
no_recipe() { ! pgrep -f "$word" >/dev/null; }
stop_round() { # NAME HOW
	DB=$T/stop-$1.db
	touch "$S/hold"
	rm -f "$S/recipe.started"
	conf "$DB" lavapipe ": $word; touch $S/recipe.started; while [ -f $S/hold ]; do sleep 0.05; done; cc -O1 -o prog prog.c" >stop-$1.conf
	"$PERFD" agent --config stop-$1.conf --once >stop-$1.out 2>stop-$1.err &
	p=$!
	check "$1: the build started" wait_for "the recipe's start" 10 test -e "$S/recipe.started"
	case $2 in
	agent) kill -TERM "$p" ;;
	# A service manager's stop: every process of the service gets SIGTERM,
	# here the recipe's group first, the worst order for the agent.
	group)
		recipe=$(pgrep -f "$word" | head -1)
		kill -TERM -- "-$(ps -o pgid= -p "$recipe" | tr -d ' ')"
		check "$1: the recipe's group ends first" wait_for "the recipe's end" 10 no_recipe
		kill -TERM "$p" ;;
	esac
	wait "$p"
	rc=$?
	check "$1: the agent stopped with exit 0 (got $rc)" eq 0 "$rc"
	check "$1: the build is abandoned, not failed" eq abandoned "$(sql "select state from builds where id = 1")"
	check "$1: no failed job" eq 0 "$(sql "select count(*) from jobs where state = 'failed'")"
	check "$1: the stop is said" has stop-$1.err "build 1: stopped, abandoned"
	rm -f "$S/hold"
	check "$1: the next start" run 0 "$PERFD" agent --config stop-$1.conf --once
	check "$1: builds the commit again" eq "abandoned done" "$(sql "select group_concat(state, ' ') from (select state from builds where commit_oid = (select commit_oid from builds where id = 1) order by id)")"
	check "$1: the job done" eq "done" "$(sql "select group_concat(state, ' ') from jobs")"
}
stop_round agent agent
stop_round group group
finish
