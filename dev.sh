#!/usr/bin/env bash
# Set-up and the two everyday jobs, on a fresh Debian 12 as on a used one:
#   ./dev.sh demo    install what is missing, build, run the main job
#   ./dev.sh test    install what is missing, check the gates (gates
#                    below), build, run every test, then
#                    the sanitizer pass (test-asan below)
#                    and the fuzz corpora's replay (test-fuzz below)
# Also: ./dev.sh build, ./dev.sh deps, ./dev.sh gates (the gates alone),
# and ./dev.sh test-asan: the sanitizer pass alone, every test again from
# build-asan/, built with AddressSanitizer and UndefinedBehaviorSanitizer
# (docs/testing.md);
# ./dev.sh test-fuzz: the libFuzzer targets of tests/fuzz/, built with clang
# in build-fuzz/, each run once over its corpus. Needs root or sudo only
# when a Debian package is missing.
# PERFD_TEST_SLOW=N (1 unless set) scales every time limit of the tests on
# a busy machine (docs/testing.md, "A busy machine").
set -euo pipefail
cd "$(dirname "$0")"

DEPS=(
	gcc libc6-dev meson ninja-build pkg-config python3
	libsqlite3-dev sqlite3 libjansson-dev libssl-dev libcmocka-dev
	libvulkan-dev libvulkan1 mesa-vulkan-drivers glslc
	libgit2-dev git libmicrohttpd-dev libcurl4-openssl-dev curl
	# bubblewrap: the agent's sandbox for builds and measured programs
	# (docs/security.md; t0470 never skips it).
	bubblewrap
	# openssl(1) makes the self-signed certificate of the hub's HTTPS test
	# (t0700); the hub's TLS itself is GnuTLS, inside Debian's libmicrohttpd12.
	openssl
	# systemd-analyze verifies the installed units (t0800), and systemd's
	# pkg-config file says where units install; nothing here runs systemd.
	systemd
	procps
	# mount and unshare (util-linux): a small tmpfs that fills (t0125) and a
	# read-only bind mount (t0130), each in a mount namespace of its test's
	# own; both are in every Debian, said here for the record.
	mount util-linux
	nodejs chromium fonts-dejavu-core
	# The fuzz targets (tests/fuzz/, ./dev.sh test-fuzz): clang, and
	# libFuzzer with clang's sanitizer runtimes, which Debian 12 ships in
	# libclang-rt-14-dev (clang-14 only recommends it).
	clang libclang-rt-14-dev
	# universal-ctags: where each C function begins and ends, for the
	# function-length gate (tests/gates/gates.sh; jscpd, the copies gate's
	# tool, comes from npm: package.json).
	universal-ctags
	# Debian's npm, unless npm is there already: NodeSource's nodejs carries
	# its own and conflicts with Debian's package.
	$(command -v npm >/dev/null || echo npm)
)

deps() {
	local missing=() p sudo=""
	for p in "${DEPS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "dev.sh: installing ${missing[*]}" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
}

# The dashboard's npm packages (Chart.js, and playwright-core for the
# browser tests) and jscpd for the copies gate (tests/gates/), installed
# exactly as package-lock.json pins them; Chart.js
# is then served from web/static/vendor/, which git ignores.
npm_deps() {
	if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
		npm ci --no-audit --no-fund >/dev/null
		touch node_modules
	fi
	mkdir -p web/static/vendor
	cp node_modules/chart.js/dist/chart.umd.js web/static/vendor/chart.umd.js
}

# quiet_ninja DIR [TARGET...]: ninja, silent when it builds, its whole
# output shown when it fails (a compile or link error would otherwise end
# the run with no word of why).
quiet_ninja() {
	local out
	out=$(mktemp)
	if ! ninja -C "$@" >"$out" 2>&1; then
		cat "$out" >&2
		rm -f "$out"
		echo "dev.sh: the build in $1 failed (above)" >&2
		return 1
	fi
	rm -f "$out"
}

build() {
	deps
	npm_deps
	if [ ! -f build/build.ninja ]; then
		meson setup build -Dwerror=true >/dev/null
	fi
	quiet_ninja build
}

demo() {
	build
	echo "perfd demo: the shipped history of a small Vulkan program (a speed-up, a"
	echo "changed output, a slow-down, a failing contract runner) made into a git"
	echo "repository; the agent measures every step on this machine's Vulkan device"
	echo "while the dashboard serves the results on 127.0.0.1. Ctrl-C stops both."
	echo
	exec build/daemon/perfd demo --dir "${PERFD_DEMO_DIR:-perfd-demo}" \
		--listen "${PERFD_DEMO_LISTEN:-127.0.0.1:8080}"
}

# build-asan/: the same tree with AddressSanitizer (LeakSanitizer
# included) and UndefinedBehaviorSanitizer; meson.build makes a UB report
# fatal. GCC links the two as separate runtimes, and the UB one then writes
# its reports to stderr whatever its log_path says (it sets the other's),
# where a test that expects perfd to fail may never look. So here a failed
# UB check traps, and AddressSanitizer reports the trap in its log
# (handle_sigill, tests/sanitize-wrap.sh) with the stack of the check;
# -fno-crossjumping keeps each trap on its own line rather than merged
# into one per function, so the report names the line of the check.
# float-cast-overflow (a double out of an integer's range converted to it)
# is undefined too, but not in GCC's -fsanitize=undefined.
ASAN_C_ARGS="-fsanitize=float-cast-overflow -fsanitize-undefined-trap-on-error -fno-crossjumping"
build_asan() {
	deps
	npm_deps
	if [ ! -f build-asan/build.ninja ]; then
		meson setup build-asan -Dwerror=true -Db_sanitize=address,undefined \
			-Dc_args="$ASAN_C_ARGS" >/dev/null
	fi
	quiet_ninja build-asan
}

# The sanitizer pass: every test, unit and integration, run again from
# build-asan/, each through tests/sanitize-wrap.sh, which fails a test when
# a sanitized process it started wrote a report, whatever the test's own
# exit status. The reports are printed here, whole. A report that no failed
# test accounts for (a process that outlived its test) fails the pass too,
# and counts as one more failed test. Time limits are doubled: sanitized
# code runs about twice as slowly. meson names its log after the wrapper.
# Every time limit, meson's and each wait's in the tests, is scaled by one
# factor, PERFD_TEST_SLOW (1 unless set; docs/testing.md, "A busy
# machine"): meson's --timeout-multiplier is the factor in the plain pass
# and twice it here.
ASAN_LOG=build-asan/meson-logs/testlog-sanitize-wrap.sh.txt
PERFD_TEST_SLOW=${PERFD_TEST_SLOW:-1}
export PERFD_TEST_SLOW
# slow_times N: N times PERFD_TEST_SLOW, refused unless the factor is a
# positive number.
slow_times() {
	awk -v n="$1" -v f="$PERFD_TEST_SLOW" 'BEGIN { if (!(f ~ /^[0-9]*\.?[0-9]+$/ && f > 0)) exit 1; printf "%g\n", n * f }' || {
		echo "dev.sh: PERFD_TEST_SLOW: expected a positive number, not '$PERFD_TEST_SLOW'" >&2
		return 1
	}
}
slow_times 1 >/dev/null || exit 2
asan_late=0
asan_pass() {
	local logs=$PWD/build-asan/sanitizer-logs rc=0 f
	rm -rf "$logs" "$ASAN_LOG"
	mkdir -p "$logs"
	SANITIZER_LOGS=$logs meson test -C build-asan --print-errorlogs \
		--timeout-multiplier "$(slow_times 2)" --wrapper "$PWD/tests/sanitize-wrap.sh" || rc=$?
	asan_late=0
	# An empty log (a process killed before it wrote) is no report:
	# tests/sanitize-wrap.sh says why.
	if [ -n "$(find "$logs" -type f -size +0)" ]; then
		echo "sanitizer reports (build-asan/sanitizer-logs):"
		find "$logs" -type f -size +0 | sort | while read -r f; do
			echo "==== ${f#"$logs"/}"
			cat "$f"
		done
		if [ "$rc" = 0 ]; then
			echo "sanitizer: a report that no failed test accounts for"
			asan_late=1
			rc=1
		fi
	fi
	return $rc
}

# One closing line in the plain form CI reads, over the meson test logs
# given (both passes for ./dev.sh test) and LATE failures outside any test.
summary() {
	python3 - "$@" <<'PY' || true
import re, sys
late = int(sys.argv[1])
passed = failed = skipped = 0
for log in sys.argv[2:]:
    try:
        text = open(log, errors="replace").read()
    except OSError:
        continue
    def count(name):
        m = re.findall(r"^%s:\s+(\d+)" % name, text, re.M)
        return int(m[-1]) if m else 0
    passed += count("Ok")
    failed += count("Fail") + count("Timeout") + count("Unexpected Pass")
    skipped += count("Skipped")
print("tests: %d passed, %d failed, %d skipped" % (passed, failed + late, skipped))
PY
}

# In CI (CI=true) every test must run: deps installs git, cc, glslc, node,
# chromium and Mesa's lavapipe, so a skipped test there is a missing install
# step or a broken probe, not a machine without a GPU. Prints each skipped
# test of the JSON logs given and the count.
ci_skips() {
	[ "${CI:-}" = true ] || { echo 0; return; }
	python3 - "$@" <<'PY'
import json, sys
skipped = []
for log in sys.argv[1:]:
    try:
        lines = open(log).read().splitlines()
    except OSError:
        continue
    for line in lines:
        t = json.loads(line)
        if t.get("result") == "SKIP":
            skipped.append(t.get("name", "?"))
for name in skipped:
    print("CI: '%s' was skipped; in CI every test must run" % name, file=sys.stderr)
print(len(skipped))
PY
}

# build-fuzz/: the libFuzzer targets of tests/fuzz/ with clang (meson's
# -Dfuzz=true instruments every target and adds AddressSanitizer and
# UndefinedBehaviorSanitizer); only they are built, not perfd nor its
# tests. The pass replays each target's seed corpus once (meson test
# --suite fuzz: fuzz-NAME -runs=0 tests/fuzz/corpus/NAME), seconds in all;
# a crash, a sanitizer report or a failed check fails it. bench/fuzz.sh
# fuzzes them for minutes.
FUZZ_LOG=build-fuzz/meson-logs/testlog.txt
build_fuzz() {
	deps
	if [ ! -f build-fuzz/build.ninja ]; then
		CC=clang meson setup build-fuzz -Dwerror=true -Dfuzz=true -Dtests=false \
			-Dsystemd=false >/dev/null
	fi
	quiet_ninja build-fuzz fuzz
}

fuzz_pass() {
	rm -f "$FUZZ_LOG"
	meson test -C build-fuzz --no-rebuild --print-errorlogs --suite fuzz
}

# The gates (docs/testing.md, "The gates"): no C function over 100 lines
# that tests/gates/long-functions.txt does not list, no duplicated block
# that tests/gates/clones.txt does not hold, no document over its ceiling
# in tests/gates/doc-ceilings.txt. Seconds, so ./dev.sh test runs
# them first and stops there when they fail, before the long passes.
gates() {
	deps
	npm_deps
	tests/gates/gates.sh
}

test_all() {
	deps
	npm_deps
	tests/gates/gates.sh || {
		echo "dev.sh: a gate failed (above); no test ran" >&2
		return 1
	}
	build
	build_asan
	build_fuzz
	local rc=0 skips
	meson test -C build --print-errorlogs --timeout-multiplier "$(slow_times 1)" || rc=$?
	asan_pass || rc=$?
	fuzz_pass || rc=$?
	skips=$(ci_skips build/meson-logs/testlog.json "${ASAN_LOG%.txt}.json")
	[ "$skips" = 0 ] || rc=1
	summary "$((asan_late + skips))" build/meson-logs/testlog.txt "$ASAN_LOG" "$FUZZ_LOG"
	return $rc
}

test_fuzz() {
	build_fuzz
	local rc=0
	fuzz_pass || rc=$?
	summary 0 "$FUZZ_LOG"
	return $rc
}

test_asan() {
	build_asan
	local rc=0
	asan_pass || rc=$?
	summary "$asan_late" "$ASAN_LOG"
	return $rc
}

case "${1:-}" in
deps) deps ;;
build) build ;;
demo) demo ;;
gates) gates ;;
test) test_all ;;
test-asan) test_asan ;;
test-fuzz) test_fuzz ;;
*)
	echo "usage: ./dev.sh demo|test|test-asan|test-fuzz|gates|build|deps" >&2
	exit 2
	;;
esac
