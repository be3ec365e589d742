#!/bin/bash
# meson install (docs/deploy.md): the real build installed with --destdir
# holds the binary, the systemd units naming the installed binary, the host
# profiles, the dashboard, the documents and the demo's history, each a copy
# of the source's. A build of the same source with --prefix in a scratch
# directory, installed there, is then run from the prefix: perfd serve
# serves the installed dashboard and documents (marked, so that a page from
# the source tree would show), an agent's `host = NAME` reads the installed
# profiles and only them, and systemd-analyze verify accepts the units.
. "$(dirname "$0")/lib.sh"
: "${PERFD_SOURCE_ROOT:?PERFD_SOURCE_ROOT must name the source tree}"
: "${PERFD_BUILD_ROOT:?PERFD_BUILD_ROOT must name the build tree of PERFD}"
command -v meson >/dev/null || { echo "meson missing: skipped"; exit 77; }
command -v curl >/dev/null || { echo "curl missing: skipped"; exit 77; }
SRC=$PERFD_SOURCE_ROOT

# installed FILE: where meson installs FILE of the build in $1 (a path in
# the source or build tree), from meson introspect --installed.
installed() {
	python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2" \
		<"$1/meson-info/intro-installed.json"
}

# same_tree A B [DIFF OPTIONS]: B holds exactly A's files, byte for byte.
same_tree() {
	diff -r "${@:3}" "$1" "$2" >"$T/diff" 2>&1 && return 0
	head -20 "$T/diff" | sed 's/^/  /'
	return 1
}

# ---- the real build, installed with --destdir ----
D=$T/dest
check "meson install --destdir of the build" \
	run 0 meson install -C "$PERFD_BUILD_ROOT" --no-rebuild --destdir "$D"
bin=$(installed "$PERFD_BUILD_ROOT" "$PERFD")
data=$(dirname "$(installed "$PERFD_BUILD_ROOT" "$SRC/hosts/m1.conf")")
data=${data%/hosts}
hub_unit=$(installed "$PERFD_BUILD_ROOT" "$PERFD_BUILD_ROOT/daemon/systemd/perfd-hub.service")
agent_unit=$(installed "$PERFD_BUILD_ROOT" "$PERFD_BUILD_ROOT/daemon/systemd/perfd-agent@.service")
check "the binary at $bin" test -x "$D$bin"
check "  the one built" cmp -s "$PERFD" "$D$bin"
check "the host profiles in $data/hosts" same_tree "$SRC/hosts" "$D$data/hosts" \
	-x '*.c' -x '*.h' -x meson.build
check "the dashboard in $data/static" same_tree "$SRC/web/static" "$D$data/static"
check "the documents in $data/docs" same_tree "$SRC/docs" "$D$data/docs"
check "the demo's history in $data/demo" same_tree "$SRC/kernels/demo/history" "$D$data/demo"
check "the hub's unit at $hub_unit" test -f "$D$hub_unit"
check "  runs the installed binary" has "$D$hub_unit" "ExecStart=$bin serve --config "
check "the agent's template unit at $agent_unit" test -f "$D$agent_unit"
check "  runs the installed binary on agent-%i.conf" has "$D$agent_unit" "ExecStart=$bin agent --config "
check "  with the instance's configuration" has "$D$agent_unit" "/perfd/agent-%i.conf"
check "  a configuration error is not restarted" has "$D$agent_unit" "RestartPreventExitStatus=2"
check "  the GPU nodes stay visible (no PrivateDevices)" \
	eq 0 "$(grep -c '^PrivateDevices=' "$D$agent_unit")"
sysusers=$(installed "$PERFD_BUILD_ROOT" "$SRC/daemon/systemd/perfd.sysusers")
check "the sandbox's user for systemd-sysusers at $sysusers" has "$D$sysusers" 'u perfd-sandbox - "perfd'"'"'s sandbox" / /usr/sbin/nologin'
if command -v systemd-sysusers >/dev/null && [ "$(id -u)" = 0 ]; then
	check "  read by systemd-sysusers (--dry-run)" run 0 systemd-sysusers --dry-run "$D$sysusers"
fi

# ---- the same source with --prefix, installed there and run ----
P=$T/prefix
start=$(date +%s)
check "meson setup --prefix" run 0 meson setup -Dtests=false --prefix="$P" \
	-Dsystemdsystemunitdir="$P/lib/systemd/system" -Dsysusersdir="$P/lib/sysusers.d" \
	"$T/build" "$SRC"
check "ninja" run 0 ninja -C "$T/build"
check "meson install" run 0 meson install -C "$T/build" --no-rebuild
echo "# the second build and its install took $(($(date +%s) - start)) s"
IP=$P/bin/perfd
check "perfd in PREFIX/bin" test -x "$IP"
check "serve --help names the installed dashboard" run 0 "$IP" serve --help
check "  $P/share/perfd/static" has "$T/out" "$P/share/perfd/static"

# Marks in the installed copies: served, they show the files came from the
# prefix and not from the source tree, which holds the same text without.
echo "<!-- installed copy -->" >>"$P/share/perfd/static/index.html"
echo "installed copy" >>"$P/share/perfd/docs/hub.md"
cat >hub.conf <<CONF
[hub]
database = $T/hub.db
listen = 127.0.0.1:0
hosts = m1
CONF
"$IP" serve --config hub.conf 2>"$T/hub.err" &
hub=$!
for i in $(seq 100); do grep -q "serving http://" "$T/hub.err" && break; sleep 0.05; done
URL=$(sed -n 's|^perfd: serving \(http://127.0.0.1:[0-9]*\)/$|\1|p' "$T/hub.err" | head -n 1)
check "the installed hub serves" test -n "$URL"
curl -sS -o page "$URL/static/index.html"
check "/static/index.html is the installed one" has page "<!-- installed copy -->"
curl -sS -o doc "$URL/docs/hub.md"
check "/docs/hub.md is the installed one" has doc "installed copy"
check "  the document itself" has doc "# The hub"
if [ -f "$SRC/web/static/vendor/chart.umd.js" ]; then
	curl -sS -o chart "$URL/static/vendor/chart.umd.js"
	check "Chart.js served from the prefix" cmp -s chart "$SRC/web/static/vendor/chart.umd.js"
else
	echo "# web/static/vendor/chart.umd.js absent from the source: not installed"
fi
kill "$hub"
wait "$hub"
check "  it stopped with exit 0 on SIGTERM" eq 0 $?

# Host profiles by name: m1 from the prefix; one that is only in the
# prefix found by the installed perfd and not by the build tree's.
sed 's/^name = .*/name = only-installed/' "$P/share/perfd/hosts/m1.conf" \
	>"$P/share/perfd/hosts/only-installed.conf"
agent_conf() {
	cat <<CONF
[agent]
host = $1
[repo]
url = file://$T/nowhere
branches = main
[build]
command = true
artifacts = prog
[case c]
command = ./prog
CONF
}
agent_conf m1 >m1.conf
check "installed perfd: host = m1" run 0 "$IP" agent --config m1.conf --check
check "  configuration OK" has "$T/out" "configuration OK"
agent_conf only-installed >only.conf
check "installed perfd: a profile only the prefix has" run 0 "$IP" agent --config only.conf --check
check "the build tree's perfd does not read the prefix" run 2 "$PERFD" agent --config only.conf --check
agent_conf no-such-host >none.conf
check "installed perfd: no such profile" run 2 "$IP" agent --config none.conf --check
check "  looked for in PREFIX/share/perfd/hosts alone" \
	has "$T/err" "no host profile 'no-such-host' in $P/share/perfd/hosts"

U=$P/lib/systemd/system
check "units in the given unit directory" test -f "$U/perfd-hub.service" -a -f "$U/perfd-agent@.service"
check "the sysusers file in the given directory" test -f "$P/lib/sysusers.d/perfd.conf"
check "  naming PREFIX/bin/perfd" has "$U/perfd-hub.service" "ExecStart=$IP serve --config $P/etc/perfd/hub.conf"
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify perfd-hub.service" run 0 systemd-analyze verify "$U/perfd-hub.service"
	check "systemd-analyze verify perfd-agent@m1.service" \
		run 0 systemd-analyze verify "$U/perfd-agent@m1.service"
	cat "$T/err"
elif [ "${CI:-}" = true ]; then
	not_ok "systemd-analyze missing: in CI ./dev.sh installs systemd"
else
	echo "# systemd-analyze missing (Debian: systemd): the units are not verified"
fi
finish
