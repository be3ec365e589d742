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
trap '[ -n "${KEEP_T:-}" ] || rm -rf "$T"' EXIT
cd "$T" || exit 99
DB=$T/perfd.db
fails=0
count=0

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
# unresolved with the median gain on WANT's side (faster: > 0, slower: < 0).
verdict_holds() {
	[ "$2" = "$1" ] && return 0
	if [ "$2" = unresolved ] && python3 -c "import sys; g = float(sys.argv[2]); sys.exit(not (g > 0 if sys.argv[1] == 'faster' else g < 0))" "$1" "$3" 2>/dev/null; then
		echo "  # $1 expected, unresolved on this machine's noise (gain $3)"
		return 0
	fi
	echo "  expected $1 (or unresolved on its side), got $2 with gain $3"
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

# work_suite: the agent's suite that builds prog.c into prog, runs check.sh
# as the contract runner and compares prog as the case "work".
work_suite() {
	cat <<'CONF'
[build]
command = cc -O1 -o prog prog.c
artifacts = prog check.sh
timeout_s = 60

[runner contract]
command = ./check.sh
timeout_s = 10

[case work]
command = ./prog
pairs = 3
CONF
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
