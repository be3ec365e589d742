# Shared by the integration tests: a scratch directory, assertions that
# print what they saw, and a final verdict. Each test runs the real perfd
# binary ($PERFD) on fixture programs against a real SQLite file.
set -u
: "${PERFD:?PERFD must name the perfd binary}"
# Absolute before the cd below, so that a test also runs by hand from
# anywhere: PERFD=build/daemon/perfd bash tests/tNNNN-....sh
TESTS_DIR=$(cd "$(dirname "$0")" && pwd)
case $PERFD in /*) ;; *) PERFD=$(cd "$(dirname "$PERFD")" && pwd)/$(basename "$PERFD") ;; esac
T=$(mktemp -d /tmp/perfd-test.XXXXXX)
# Open to others for the sandbox: where the tests run as root, an agent's
# builds and processes run as nobody, which must reach the build directories.
chmod 711 "$T"
# kill_at_exit VAR...: the processes whose pids the variables VAR hold are
# killed and waited for when the test exits; read then, so a variable
# emptied after its process was waited for names none.
exit_vars=
kill_at_exit() { exit_vars="$exit_vars $*"; }
on_exit() {
	local v pids=
	for v in $exit_vars; do pids="$pids ${!v:-}"; done
	if [ -n "${pids// /}" ]; then
		kill $pids 2>/dev/null
		wait $pids 2>/dev/null
	fi
	[ -n "${KEEP_T:-}" ] || rm -rf "$T"
}
trap on_exit EXIT
cd "$T" || exit 99

# PERFD_TEST_SLOW: the one factor by which every bound on a wait is
# scaled (docs/testing.md, "A busy machine"), 1 unless set; ./dev.sh sets
# meson's --timeout-multiplier from it too. A positive number.
PERFD_TEST_SLOW=${PERFD_TEST_SLOW:-1}
if ! awk -v f="$PERFD_TEST_SLOW" 'BEGIN { exit !(f ~ /^[0-9]*\.?[0-9]+$/ && f > 0) }'; then
	echo "PERFD_TEST_SLOW: expected a positive number, not '$PERFD_TEST_SLOW'" >&2
	exit 99
fi
export PERFD_TEST_SLOW

# The tests plant their programs' timings, and the machine's load (other
# tests, a burner beside them) must not move a verdict: perfd records no
# CPU pressure unless a test names a file to read it from (PERFD_CPU_PRESSURE,
# docs/rule.md, "pairs-median/2.2"): the real /proc/pressure/cpu (t0100,
# t0420, t0510) or one a planted program writes (plant --pressure, t0140).
export PERFD_CPU_PRESSURE=

# slow_s SECONDS: SECONDS times PERFD_TEST_SLOW, the bound of a wait on
# this machine (for timeout(1), curl --max-time, a --timeout option).
slow_s() { awk -v s="$1" -v f="$PERFD_TEST_SLOW" 'BEGIN { printf "%g\n", s * f }'; }

# wait_for DESCRIPTION BOUND_S COMMAND...: runs COMMAND, its output
# dropped, until it succeeds (0) or BOUND_S seconds times PERFD_TEST_SLOW
# have passed; then runs it once more with its output shown, says on
# stderr what was waited for, and fails. A wait for an event (a line, a
# file, a row, a port), never a sleep that hopes it has come.
wait_for() {
	local desc=$1 bound end
	bound=$(slow_s "$2")
	shift 2
	# In ms: mawk's %d stops at 2^31 - 1.
	end=$(($(date +%s%N) + $(awk -v b="$bound" 'BEGIN { printf "%d", b * 1000 }') * 1000000))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	"$@" && return 0
	echo "  waited $bound s for $desc in vain: $*" >&2
	return 1
}
DB=$T/perfd.db
fails=0
count=0

# need PROGRAM...: skips the test (exit 77) unless every PROGRAM is on PATH.
need() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null || { echo "$p missing: skipped"; exit 77; }
	done
}

# new_src: an empty git repository in $SRC ($T/src), on branch main, and
# the author and committer of the commits the test makes there.
new_src() {
	export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
	SRC=$T/src
	git init -q -b main "$SRC"
}

# free_port: a TCP port on loopback that nothing listens on now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# served ERRFILE: waits for the line "perfd: serving URL/" that perfd serve
# writes first to its stderr, here ERRFILE, and prints URL (no trailing
# slash; nothing when no such line came in 10 s, scaled).
served() {
	wait_for "the line 'perfd: serving' in $1" 10 grep -q "serving https\?://" "$1"
	sed -n 's|^perfd: serving \(https\?://127.0.0.1:[0-9]*\)/$|\1|p' "$1" | head -n 1
}

ok() { count=$((count + 1)); echo "ok $count - $*"; }
not_ok() { count=$((count + 1)); fails=$((fails + 1)); echo "not ok $count - $*"; }

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# run WANT_RC COMMAND...: runs COMMAND with stdout in $T/out and stderr in
# $T/err; fails, showing both, unless it exits WANT_RC.
run() {
	want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "  expected exit $want, got $rc: $*"
		head -c 2000 "$T/err" | sed 's/^/  stderr: /'
		head -c 2000 "$T/out" | sed 's/^/  stdout: /'
		return 1
	fi
	return 0
}

# has FILE TEXT: FILE contains TEXT (fixed string).
has() {
	if grep -qF -- "$2" "$1"; then return 0; fi
	echo "  '$2' not found in $1:"
	head -c 2000 "$1" | sed 's/^/  | /'
	return 1
}

# eq WANT GOT
eq() {
	if [ "$1" = "$2" ]; then return 0; fi
	echo "  expected '$1', got '$2'"
	return 1
}

# js FILE EXPR: evaluates a Python expression over the JSON in FILE as d.
js() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(json.dumps(v) if isinstance(v,(dict,list,bool)) or v is None else v)' "$1" "$2"
}

sql() { sqlite3 "$DB" "$1"; }

# alive PIDFILE: how many of the pids in PIDFILE (a line each, as plant's
# --pid-file writes them) are still running; a zombie (killed, not yet
# reaped by whoever inherited it) is not. Only these processes are looked
# at, never the machine's others.
alive() {
	n=0
	[ -f "$1" ] || { echo 0; return; }
	while read -r pid; do
		state=$(sed 's/^.*) \(.\).*/\1/' "/proc/$pid/stat" 2>/dev/null)
		[ -n "$state" ] && [ "$state" != Z ] && n=$((n + 1))
	done <"$1"
	echo "$n"
}

# need_vulkan [ARGS...]: skips the test (exit 77) when perfd probe [ARGS]
# finds no Vulkan device (its exit status 3), and fails it on any other
# probe failure, which is a fault to see and not a reason to skip.
need_vulkan() {
	"$PERFD" probe "$@" >"$T/probe.out" 2>"$T/probe.err"
	case $? in
	0) return 0 ;;
	3) echo "no Vulkan device: skipped"; sed 's/^/  /' "$T/probe.err"; exit 77 ;;
	*) echo "perfd probe $* failed:"; sed 's/^/  /' "$T/probe.err"; exit 1 ;;
	esac
}

# verdict_holds WANT VERDICT GAIN: for comparisons of real timings (the
# demo's Vulkan kernels), where a loaded machine's noise may keep the rule
# from a verdict but must never turn one around: VERDICT is WANT, or it is
# unresolved. An unresolved comparison's median gain says nothing the rule
# stands by (the demo's tree reduction on lavapipe, unresolved after 24
# pairs, had medians of -3.0%, +17.1% and +18.5% in three runs), so its
# side is printed, not asserted.
verdict_holds() {
	[ "$2" = "$1" ] && return 0
	if [ "$2" = unresolved ]; then
		echo "  # $1 expected, unresolved on this machine's noise (gain $3)"
		return 0
	fi
	echo "  expected $1 (or unresolved), got $2 with gain $3"
	return 1
}

# work_prog FILE ROUNDS DIGEST: the C source of a program whose work is a
# loop of ROUNDS rounds; it prints DIGEST and, as TIMING work_ms, a planted
# time: ROUNDS in millions, whatever the loop took. The loop still takes
# real time (a kill can land in it), but a verdict on these programs does
# not depend on how loaded the machine is; t0420-demo is the test of real
# timing.
work_prog() {
	cat >"$1" <<C
#include <stdio.h>
int main(void)
{
	volatile unsigned long x = 0;
	unsigned long i;
	for (i = 0; i < $2UL; i++)
		x += i * i;
	printf("TIMING work_ms=%.3f\n", $2UL / 1e6);
	printf("DIGEST %016lx\n", $3UL);
	return 0;
}
C
}

# section NAME KEY=VALUE...: the configuration section [NAME] with a line
# "KEY = VALUE" for each; a key given again replaces its earlier value, in
# its place (so a helper's defaults come first and its caller's after).
section() {
	local -A val
	local order=() kv k
	printf '[%s]\n' "$1"
	shift
	for kv in "$@"; do
		k=${kv%%=*}
		[ -n "${val[$k]+set}" ] || order+=("$k")
		val[$k]=${kv#*=}
	done
	for k in "${order[@]}"; do printf '%s = %s\n' "$k" "${val[$k]}"; done
}

# agent_repo [KEY=VALUE...]: the [agent] and [repo] sections of an agent's
# configuration: database $DB, workdir $T/work, url file://$SRC and
# branches main, each replaced or added to by a KEY=VALUE: database,
# workdir, host and poll_s in [agent], any other key in [repo] (url,
# branches, pulls, suite, timeout_s).
agent_repo() {
	local agent=() repo=() kv
	for kv in "$@"; do
		case ${kv%%=*} in
		database | workdir | host | poll_s) agent+=("$kv") ;;
		*) repo+=("$kv") ;;
		esac
	done
	section agent database="$DB" workdir="$T/work" "${agent[@]}"
	echo
	section repo url="file://$SRC" branches=main "${repo[@]}"
}

# work_suite [KEY=VALUE...]: the agent's suite that builds prog.c into prog,
# runs check.sh as the contract runner and compares prog as the case "work"
# with pairs = 3. build=COMMAND, artifacts=FILES and toolchain=COMMAND
# change the build, chunks=N the runner; any other KEY=VALUE replaces or
# adds a line of [case work] (command, pairs, max_pairs, warmup).
work_suite() {
	local build=() runner=() work=() kv
	for kv in "$@"; do
		case ${kv%%=*} in
		build) build+=("command=${kv#*=}") ;;
		artifacts | toolchain) build+=("$kv") ;;
		chunks) runner+=("$kv") ;;
		*) work+=("$kv") ;;
		esac
	done
	section build command="cc -O1 -o prog prog.c" artifacts="prog check.sh" timeout_s=60 "${build[@]}"
	echo
	section "runner contract" command=./check.sh timeout_s=10 "${runner[@]}"
	echo
	section "case work" command=./prog pairs=3 "${work[@]}"
}

# github_conf [KEY=VALUE...]: an agent's [github] section for fake_github's
# acme/engine, the token in $T/token, alice allowed and links to $HUB/,
# each replaced or added to by a KEY=VALUE.
github_conf() {
	section github api="$API" repo=acme/engine token_file="$T/token" allow=alice hub_url="$HUB/" backoff_s=0.2 "$@"
}

# hub_github HOSTS: a hub's configuration, hub.conf, with [github] for
# fake_github's acme/engine: the token GHTOKEN in $T/gh-token, alice
# allowed, each host of HOSTS accepted and expected, a poll a second; sets
# PORT, HUBURL and HUB (its database).
hub_github() {
	PORT=$(free_port)
	HUBURL=http://127.0.0.1:$PORT
	HUB=$T/hub.db
	printf '%s\n' "$GHTOKEN" >"$T/gh-token"
	chmod 600 "$T/gh-token"
	{
		section hub database="$HUB" listen="127.0.0.1:$PORT" hosts="$1"
		echo
		section github api="$API" repo=acme/engine token_file="$T/gh-token" allow=alice \
			expect="$1" hub_url="$HUBURL" poll_s=1
	} >"$T/hub.conf"
}

# fake_github TOKEN [ARGS...]: starts tests/fake-github.py for acme/engine,
# accepting TOKEN, its requests logged in $T/gh.log, with ARGS; sets fake
# (its pid, killed at exit), PORT and API (its URL).
fake_github() {
	local token=$1
	shift
	python3 "$TESTS_DIR/fake-github.py" --repo acme/engine --token "$token" --log "$T/gh.log" \
		"$@" >"$T/fake.out" 2>"$T/fake.err" &
	fake=$!
	kill_at_exit fake
	wait_for "fake-github.py's port in $T/fake.out" 10 test -s "$T/fake.out"
	PORT=$(head -n 1 "$T/fake.out")
	API=http://127.0.0.1:$PORT
}

# ctl METHOD PATH [JSON]: a call to fake_github's control endpoints.
ctl() { curl -sf -X "$1" -H 'Content-Type: application/json' ${3:+--data "$3"} "$API/_fake/$2"; }

# posted PR: the body of perfd's comment on pull request PR at fake_github,
# byte for byte.
posted() {
	ctl GET state >"$T/state.json"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.stdout.write([c["body"] for c in d["comments"] if c["pr"] == int(sys.argv[2]) and c["user"]["login"] == "perfd-bot"][0])' "$T/state.json" "$1"
}

# timed_commit SRC VALUE MESSAGE [SLEEP]: the next commit of SRC, whose
# program prog prints VALUE ms with 0.1% of noise fixed by PERFD_SEQ (the
# same noise in every comparison), after sleeping SLEEP seconds if given;
# its id goes to stdout.
timed_commit() {
	cat >"$1/prog" <<SH
#!/bin/sh
# This commit's program takes $2 ms.
${4:+sleep $4}
exec awk -v v=$2 -v s="\${PERFD_SEQ:-1}" 'BEGIN { srand(s * 7919); z = 0
	for (i = 0; i < 12; i++) z += rand(); z -= 6
	printf "TIMING run_ms=%.4f\n", v * (1 + 0.001 * z) }'
SH
	chmod +x "$1/prog"
	git -C "$1" add -A && git -C "$1" commit -q --allow-empty -m "$3" && git -C "$1" rev-parse HEAD
}

# history_suite [BUILD_COMMAND]: the suite for timed_commit's programs:
# BUILD_COMMAND (true, nothing to build, if not given), prog the case "run",
# and [history] with span_commits = 8.
history_suite() {
	section build command="${1:-true}" artifacts=prog timeout_s=60
	echo
	section "case run" command=./prog
	echo
	section history span_commits=8
}

# A fixed noise for planted series (t0510, t0520): noise_next draws the
# next z, -40..40 in units of 0.01%, from a linear congruential generator in
# the shell's own integer arithmetic, the same on every machine (awk's rand
# is not); noisy BASE prints BASE (in units of 0.0001) times 1 + z/10000 as
# "N.FFFF". noise_next must run in the test's shell, not in $(...), which
# would lose its state.
noise_seed=20261
noise_next() {
	noise_seed=$(((noise_seed * 1103515245 + 12345) % 2147483648))
	z=$((noise_seed / 65536 % 81 - 40))
}
noisy() {
	v=$(($1 + $1 * z / 10000))
	printf '%d.%04d' $((v / 10000)) $((v % 10000))
}

finish() {
	echo "$count checks, $fails failed"
	[ "$fails" = 0 ]
	exit $?
}
