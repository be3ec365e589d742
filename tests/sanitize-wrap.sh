#!/usr/bin/env bash
# The sanitizer pass's wrapper around one test: ./dev.sh test-asan runs
#   SANITIZER_LOGS=DIR meson test -C build-asan --wrapper tests/sanitize-wrap.sh
# (docs/testing.md). Every sanitized process the test starts (perfd, a unit
# test, a fixture perfd runs) writes any report into a directory of its own
# for this test, DIR/TEST/, instead of to its stderr; the test fails when a
# report is there, whatever its own exit status. A test that expects perfd
# to exit 1, or skips when perfd fails, would otherwise pass over a report:
# AddressSanitizer exits 1 too, and the test may read that stderr only with
# grep, if at all.
set -u
: "${SANITIZER_LOGS:?SANITIZER_LOGS must name the report directory}"
supp=$(cd "$(dirname "$0")" && pwd)/lsan.supp
# The test's name: its script's (bash tests/tNNNN-....sh) or its program's.
name=$(basename "${!#}")
name=${name%.sh}
dir=$SANITIZER_LOGS/$name
rm -rf "$dir"
mkdir -p "$dir"

# log_path: a report goes to DIR/TEST/asan.PROGRAM.PID, a file made only
# when there is one. LeakSanitizer runs inside AddressSanitizer and writes
# to its log. handle_sigill: a failed UB check of a GCC build traps
# (meson.build) and is reported here. UBSAN_OPTIONS serve a clang build,
# whose UB reports follow their own log_path; halt_on_error says again that
# a UB report is fatal. Options already in the environment come last and
# win.
export ASAN_OPTIONS="log_path=$dir/asan:log_exe_name=1:detect_leaks=1:handle_sigill=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="log_path=$dir/ubsan:log_exe_name=1:print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# Libraries stay mapped to the end of each process (tests/fixtures/
# keep-loaded.c says why: a driver the Vulkan loader unloads otherwise
# reads as a leak from an unknown module). The ASan runtime need not then
# come first among the preloaded libraries.
keep=${PERFD_BUILD_ROOT:-}/tests/libkeep-loaded.so
if [ -f "$keep" ]; then
	export LD_PRELOAD="$keep${LD_PRELOAD:+:$LD_PRELOAD}"
	export ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0"
fi

"$@"
rc=$?

# An empty log is a process killed (SIGKILL, as t0480's soak kills the
# agent and, by their parent-death signal, its children) after the runtime
# opened the log and before it wrote a byte: it holds nothing to read, and
# is named, not counted.
find "$dir" -type f -size 0 | sort | while read -r f; do
	echo "sanitizer: ${f#"$SANITIZER_LOGS"/} is empty (its process was killed before it wrote): not counted" >&2
	rm -f "$f"
done
# A log that says only "Unable to get registers from thread N." is the same
# kill landing during LeakSanitizer's check at exit: the thread it stopped
# to scan was gone (ESRCH), so no check ran and nothing was found. Any other
# line, a report's "==ERROR:" included, keeps the log counted.
find "$dir" -type f | sort | while read -r f; do
	if ! grep -qv -E '^==[^=]+==[0-9]+==Unable to get registers from thread [0-9]+\.$' "$f"; then
		echo "sanitizer: ${f#"$SANITIZER_LOGS"/} says only that a thread was gone during the leak check (its process was killed then): not counted" >&2
		rm -f "$f"
	fi
done
n=$(find "$dir" -type f | wc -l)
if [ "$n" -gt 0 ]; then
	# ./dev.sh prints the whole reports after the pass; here the line of
	# each that says what was found.
	find "$dir" -type f | sort | while read -r f; do
		echo "sanitizer report ${f#"$SANITIZER_LOGS"/}:"
		grep -m1 -E '==ERROR: |runtime error: ' "$f" | sed 's/^/  /'
	done >&2
	echo "sanitizer: $n report(s); the test's own exit status was $rc" >&2
	if [ "$rc" = 0 ] || [ "$rc" = 77 ]; then
		rc=1
	fi
fi
exit "$rc"
