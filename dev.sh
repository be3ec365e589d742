#!/usr/bin/env bash
# Set-up and the two everyday jobs, on a fresh Debian 12 as on a used one:
#   ./dev.sh demo    install what is missing, build, run the main job
#   ./dev.sh test    install what is missing, build, run every test
# Also: ./dev.sh build, ./dev.sh deps. Needs root or sudo only when a
# Debian package is missing.
set -euo pipefail
cd "$(dirname "$0")"

DEPS=(
	gcc libc6-dev meson ninja-build pkg-config python3
	libsqlite3-dev sqlite3 libjansson-dev libssl-dev libcmocka-dev
	libvulkan-dev libvulkan1 mesa-vulkan-drivers glslc
	libgit2-dev git libmicrohttpd-dev libcurl4-openssl-dev curl
	procps
	nodejs chromium fonts-dejavu-core
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
# browser tests), installed exactly as package-lock.json pins them; Chart.js
# is then served from web/static/vendor/, which git ignores.
npm_deps() {
	if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
		npm ci --no-audit --no-fund >/dev/null
		touch node_modules
	fi
	mkdir -p web/static/vendor
	cp node_modules/chart.js/dist/chart.umd.js web/static/vendor/chart.umd.js
}

build() {
	deps
	npm_deps
	if [ ! -f build/build.ninja ]; then
		meson setup build -Dwerror=true >/dev/null
	fi
	ninja -C build >/dev/null
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

test_all() {
	build
	local log=build/meson-logs/testlog.txt rc=0
	meson test -C build --print-errorlogs || rc=$?
	# One closing line in the plain form CI reads.
	python3 - "$log" <<'PY' || true
import re, sys
text = open(sys.argv[1], errors="replace").read()
def count(name):
    m = re.findall(r"^%s:\s+(\d+)" % name, text, re.M)
    return int(m[-1]) if m else 0
passed = count("Ok")
failed = count("Fail") + count("Timeout") + count("Unexpected Pass")
skipped = count("Skipped")
print("tests: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
PY
	return $rc
}

case "${1:-}" in
deps) deps ;;
build) build ;;
demo) demo ;;
test) test_all ;;
*)
	echo "usage: ./dev.sh demo|test|build|deps" >&2
	exit 2
	;;
esac
