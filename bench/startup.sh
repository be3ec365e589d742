#!/bin/sh
# bench/startup.sh [PERFD]: what starting perfd costs, side by side with
# programs that do nothing but load shared libraries, in one hyperfine run:
#   perfd        perfd --version (libcurl and libmicrohttpd are opened at
#                run time by the verbs that speak HTTP, not at start)
#   bare         bench/trivial.c linked with libc alone
#   as linked    bench/trivial.c linked with the libraries perfd links
#                (sqlite3, jansson, libcrypto, libgit2)
#   + curl, mhd  the same plus libcurl and libmicrohttpd: what each start
#                of perfd would load if they were linked
# Each is run RUNS times (300) after 20 warm-up runs; the figures are
# hyperfine's means, in ms, and the count of shared objects ldd lists.
#
# Environment: STARTUP_RUNS (300), CC (cc).
set -eu

. "$(dirname "$0")/lib.sh"

runs=$(bench_number STARTUP_RUNS 300 10 10000)
perfd=$(bench_perfd "${1:-build/daemon/perfd}")
bench_need hyperfine "install it (apt-get install hyperfine)"
bench_need pkg-config "install it (apt-get install pkg-config)"
bench_scratch

linked=$(pkg-config --libs sqlite3 jansson libcrypto libgit2) ||
	bench_fail "pkg-config does not know perfd's libraries (./dev.sh installs them)"
http=$(pkg-config --libs libcurl libmicrohttpd) ||
	bench_fail "pkg-config does not know libcurl or libmicrohttpd (./dev.sh installs them)"
${CC:-cc} -O2 -o "$SCRATCH/bare" "$BENCH_DIR/trivial.c" || bench_fail "cannot compile bench/trivial.c"
# --no-as-needed: the program uses none of them, and each must still load.
# shellcheck disable=SC2086
${CC:-cc} -O2 -Wl,--no-as-needed -o "$SCRATCH/linked" "$BENCH_DIR/trivial.c" $linked ||
	bench_fail "cannot link bench/trivial.c with $linked"
# shellcheck disable=SC2086
${CC:-cc} -O2 -Wl,--no-as-needed -o "$SCRATCH/linked-http" "$BENCH_DIR/trivial.c" $linked $http ||
	bench_fail "cannot link bench/trivial.c with $linked $http"

echo "startup: hyperfine -N --warmup 20 --runs $runs, means in ms"
echo "perfd: $perfd"
echo "machine: $(machine_line)"
echo
hyperfine -N --warmup 20 --runs "$runs" --export-json "$SCRATCH/hf.json" \
	"$perfd --version" "$SCRATCH/bare" "$SCRATCH/linked" "$SCRATCH/linked-http" \
	>/dev/null 2>"$SCRATCH/hf.err" || {
	cat "$SCRATCH/hf.err" >&2
	bench_fail "hyperfine failed"
}
libs() { ldd "$1" | wc -l; }
python3 - "$SCRATCH/hf.json" "$(libs "$perfd")" "$(libs "$SCRATCH/bare")" \
	"$(libs "$SCRATCH/linked")" "$(libs "$SCRATCH/linked-http")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
names = ["perfd --version", "bare (libc)", "as linked", "+ curl, mhd"]
print("%-18s %10s %10s %8s" % ("", "mean ms", "stddev", "objects"))
for name, x, libs in zip(names, r, sys.argv[2:]):
    print("%-18s %10.2f %10.2f %8s" % (name, x["mean"] * 1e3, x["stddev"] * 1e3, libs))
print()
print("startup: perfd %.2f ms; with libcurl and libmicrohttpd linked a start would load %.2f ms"
      " (%.2f ms more than perfd's libraries alone)"
      % (r[0]["mean"] * 1e3, r[3]["mean"] * 1e3, (r[3]["mean"] - r[2]["mean"]) * 1e3))
PY
