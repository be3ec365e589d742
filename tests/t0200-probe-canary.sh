#!/bin/sh
# t0200: perfd probe and perfd canary on whatever Vulkan device is present
# (lavapipe where there is no GPU). Usage: t0200-probe-canary.sh PERFD, or
# PERFD in the environment. Exits 77 (skip) only when no Vulkan device exists.
set -u

PERFD=${1:-${PERFD:-}}
if [ -z "$PERFD" ] || [ ! -x "$PERFD" ]; then
	echo "t0200: give the perfd binary as \$1 or \$PERFD" >&2
	exit 2
fi
HOSTS=$(cd "$(dirname "$0")/../hosts" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/perfd-t0200.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
failures=0

fail() {
	echo "not ok - $*"
	failures=$((failures + 1))
}

ok() {
	echo "ok - $*"
}

# expect_rc WANT GOT WHAT
expect_rc() {
	if [ "$2" -eq "$1" ]; then ok "$3 (exit $2)"; else fail "$3: exit $2, want $1"; fi
}

# perfd_rc WANT WHAT ARGS...: perfd ARGS, its output in $TMP/out and
# $TMP/err, exits WANT.
perfd_rc() {
	want=$1 what=$2
	shift 2
	"$PERFD" "$@" >"$TMP/out" 2>"$TMP/err"
	expect_rc "$want" $? "$what"
}

# expect_grep PATTERN FILE WHAT
expect_grep() {
	if grep -qE -- "$1" "$2"; then
		ok "$3"
	else
		fail "$3: no line matches /$1/ in:"
		sed 's/^/    /' "$2"
	fi
}

# Is there a device at all? Exit 3 with a no-loader/driver/device sentence.
"$PERFD" probe >"$TMP/probe.out" 2>"$TMP/probe.err"
rc=$?
if [ $rc -eq 3 ] && grep -qE "Vulkan loader|no driver|no device" "$TMP/probe.err"; then
	echo "t0200: no Vulkan device here, skipping:" >&2
	cat "$TMP/probe.err" >&2
	exit 77
fi
expect_rc 0 $rc "probe lists devices"
expect_grep '^device 0: ' "$TMP/probe.out" "probe names device 0"
expect_grep '^fingerprint [0-9a-f]{12}$' "$TMP/probe.out" "probe prints a fingerprint hash"

# --json: one line of JSON that names llvmpipe (where lavapipe is the device).
"$PERFD" probe --json >"$TMP/probe.json" 2>"$TMP/err"
expect_rc 0 $? "probe --json"
if python3 -c '
import json, sys
fp = json.load(open(sys.argv[1]))
names = [d["name"] for d in fp["devices"]]
assert fp["host"]["kernel_release"], "no kernel release"
assert all(len(d["device_uuid"]) == 32 for d in fp["devices"]), "bad uuid"
assert any("llvmpipe" in n for n in names), "no llvmpipe in %r" % names
' "$TMP/probe.json" 2>"$TMP/err"; then
	ok "probe --json parses and names llvmpipe"
else
	fail "probe --json: $(cat "$TMP/err")"
fi
if [ "$(wc -l <"$TMP/probe.json")" -eq 1 ]; then ok "probe --json is one line"
else fail "probe --json is not one line"; fi

# The fingerprint is the same text run to run.
"$PERFD" probe --json >"$TMP/probe2.json" 2>/dev/null
if cmp -s "$TMP/probe.json" "$TMP/probe2.json"; then ok "fingerprint is stable"
else fail "fingerprint changed between two runs"; fi

# --host: the right profile passes, the wrong one names what it expected.
perfd_rc 0 "probe --host lavapipe.conf" probe --host "$HOSTS/lavapipe.conf"
expect_grep "^host 'lavapipe': device [0-9]+ 'llvmpipe" "$TMP/out" "probe --host names the match"
"$PERFD" probe --host lavapipe >/dev/null 2>&1
expect_rc 0 $? "probe --host by bare name"

# A CPU host (no [device]) needs no Vulkan device and says what it is.
printf '[host]\nname = cpu-only\n[timing]\ncooldown_ms = 5\n' >"$TMP/cpu.conf"
perfd_rc 0 "probe --host of a CPU host" probe --host "$TMP/cpu.conf"
expect_grep "^host 'cpu-only': a CPU host \\(no \\[device\\]\\)" "$TMP/out" "probe says it is a CPU host"
perfd_rc 3 "canary on a CPU host: no GPU to run on" canary --host "$TMP/cpu.conf"
expect_grep "names no device: a CPU host" "$TMP/err" "canary says why"
printf '[host]\nname = half\n[device]\ndevice_match = x\n' >"$TMP/half.conf"
perfd_rc 2 "probe --host of a [device] without expected_driver" probe --host "$TMP/half.conf"
expect_grep "missing required key 'expected_driver' in \\[device\\]" "$TMP/err" "names the missing key"
perfd_rc 3 "probe --host m1.conf on a machine without an M1" probe --host "$HOSTS/m1.conf"
expect_grep "expects a device named like 'Apple M1 \\(G13G' with driver 'Honeykrisp'" \
	"$TMP/err" "probe --host m1 names what it expected"
expect_grep "device 0 'llvmpipe" "$TMP/err" "probe --host m1 names what it found"

# A bad profile: exit 2, every error with its file:line.
cat >"$TMP/bad.conf" <<'CONF'
[host]
name = broken
colour = blue
[device]
device_match = llvmpipe
expected_driver = llvmpipe
[timing]
process_timeout_s = 1O
CONF
perfd_rc 2 "probe --host with a bad profile" probe --host "$TMP/bad.conf"
expect_grep "^$TMP/bad.conf:3: unknown key 'colour' in \\[host\\]" "$TMP/err" \
	"bad profile: unknown key with file:line"
expect_grep "^$TMP/bad.conf:8: 'process_timeout_s': expected a number of seconds above 0 and at most 604800, not '1O'" "$TMP/err" \
	"bad profile: malformed number with file:line"

# The canary: five runs, every check passing, one digest.
"$PERFD" canary --help >"$TMP/out" 2>&1
expect_rc 0 $? "canary --help"
expect_grep '^usage: perfd canary' "$TMP/out" "canary --help prints the usage"

digests=""
for run in 1 2 3 4 5; do
	"$PERFD" canary --host lavapipe >"$TMP/canary$run.out" 2>"$TMP/canary$run.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "canary run $run: exit $rc"
		cat "$TMP/canary$run.out" "$TMP/canary$run.err"
	fi
	digests="$digests $(sed -n 's/^DIGEST \([0-9a-f]\{12\}\)$/\1/p' "$TMP/canary$run.out")"
done
out=$TMP/canary1.out
expect_grep '^TIMING copy_ms=[0-9]+\.[0-9]+ q4_matvec_ms=[0-9]+\.[0-9]+$' "$out" "canary TIMING line"
expect_grep '^DIGEST [0-9a-f]{12}$' "$out" "canary DIGEST line"
expect_grep '^RESULT copy .* on "llvmpipe[^"]*": passed=1 total=1$' "$out" "canary copy passed"
expect_grep '^RESULT q4_matvec .* on "llvmpipe[^"]*": passed=1 total=1$' "$out" \
	"canary q4_matvec passed"
expect_grep '^RESULT control .* on "llvmpipe[^"]*": caught=1 total=1$' "$out" \
	"canary control caught"
expect_grep '^SUMMARY canary on ".*": 2 of 2 shapes passed, control caught' "$out" \
	"canary SUMMARY"
expect_grep '^TIMING_RECORD_VALID$' "$out" "canary TIMING_RECORD_VALID"
set -- $digests
if [ $# -eq 5 ] && [ "$1" = "$2" ] && [ "$1" = "$3" ] && [ "$1" = "$4" ] && [ "$1" = "$5" ]
then ok "digest identical over 5 runs ($1)"
else fail "digests over 5 runs:$digests"; fi
first=$1

# More work, same answer: one more q4 dispatch per hundred, the same digest.
"$PERFD" canary --extra-work 1 >"$TMP/extra.out" 2>"$TMP/err"
expect_rc 0 $? "canary --extra-work 1"
expect_grep '^RESULT q4_matvec .*dispatches=101 ' "$TMP/extra.out" "extra work adds a dispatch"
expect_grep "^DIGEST $first\$" "$TMP/extra.out" "extra work keeps the digest"
# Half a percent: a last dispatch over half the rows, the same digest; a
# fraction that is not whole rows is refused before any device work.
"$PERFD" canary --extra-work 0.5 >"$TMP/half.out" 2>"$TMP/err"
expect_rc 0 $? "canary --extra-work 0.5"
expect_grep '^RESULT q4_matvec .*dispatches=100 partial_rows=128 ' "$TMP/half.out" \
	"half a percent is half a dispatch"
expect_grep "^DIGEST $first\$" "$TMP/half.out" "a partial dispatch keeps the digest"
"$PERFD" canary --extra-work 0.3 >"$TMP/out" 2>"$TMP/err"
expect_rc 2 $? "canary --extra-work 0.3"
expect_grep "extra work 0.3% is 76.8 rows of 256" "$TMP/err" "a fraction of a row is refused"

# The canary refuses the wrong host and bad options.
"$PERFD" canary --host m1 >/dev/null 2>"$TMP/err"
expect_rc 3 $? "canary --host m1"
"$PERFD" canary --scale 0 >/dev/null 2>"$TMP/err"
expect_rc 2 $? "canary --scale 0"
expect_grep "--scale: '0' is not a whole number" "$TMP/err" "canary names the bad option"

# No loader, no driver: a sentence naming the problem and exit 3, no crash.
PERFD_VULKAN_LOADER=$TMP/no-such-libvulkan.so "$PERFD" probe >/dev/null 2>"$TMP/err"
expect_rc 3 $? "probe without a loader"
expect_grep 'cannot open the Vulkan loader' "$TMP/err" "no loader is named"
env -u VK_DRIVER_FILES VK_ICD_FILENAMES=$TMP/none.json "$PERFD" canary >/dev/null 2>"$TMP/err"
expect_rc 3 $? "canary without a driver"
expect_grep 'found no driver|found no device' "$TMP/err" "no driver is named"

if [ $failures -ne 0 ]; then
	echo "t0200: $failures failed"
	exit 1
fi
echo "t0200: all passed"
exit 0
