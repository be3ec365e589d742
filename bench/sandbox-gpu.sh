#!/bin/bash
# bench/sandbox-gpu.sh PERFD HOST_PROFILE [DIR]: the agent's sandbox on a GPU
# host. An agent with the profile and [sandbox] mode = on runs an A/A of
# perfd's own canary (--scale 4, metric q4_matvec_ms, 3 pairs) inside the
# sandbox, on the GPU the profile names, then the same with mode = off;
# prints the sandbox the agent set up (its device nodes), both receipts'
# process rows and the verify. DIR (/srv/perfd-sbx) must lie under
# directories the sandbox's user can search: it is made anew. Needs git and
# bwrap. LD_LIBRARY_PATH, when set, is passed into the sandbox, and
# SANDBOX_GPU_RO (a directory, e.g. where those libraries are) shown there.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 PERFD HOST_PROFILE [DIR]" >&2; exit 2; }
P=$(readlink -f "$1")
H=$(readlink -f "$2")
T=${3:-/srv/perfd-sbx}
command -v git >/dev/null || { echo "$0: git is needed" >&2; exit 2; }
command -v bwrap >/dev/null || { echo "$0: bwrap is needed (apt-get install bubblewrap)" >&2; exit 2; }
rm -rf "$T"
mkdir -p "$T/src"
chmod 755 "$T"
cp "$P" "$T/perfd"
cp "$H" "$T/profile.conf"
chmod 755 "$T/perfd"
chmod 644 "$T/profile.conf"
cd "$T/src"
git init -q -b main .
printf '#!/bin/sh\nexec %s canary --host %s --scale 4 "$@"\n' "$T/perfd" "$T/profile.conf" >gpu.sh
chmod +x gpu.sh
git add -A
git -c user.name=b -c user.email=b@example.org commit -qm base
git -c user.name=b -c user.email=b@example.org commit -q --allow-empty -m again
cd "$T"
cat >agent.conf <<CONF
[agent]
database = $T/perfd.db
workdir = $T/work
host = $H
[repo]
url = file://$T/src
branches = main
[sandbox]
mode = on
env = PATH LANG VK_* LD_LIBRARY_PATH
${SANDBOX_GPU_RO:+ro = $SANDBOX_GPU_RO}
[calibration]
runs = 0
idle_budget_s = 0
[build]
command = true
artifacts = gpu.sh
[case canary]
command = ./gpu.sh
metric = q4_matvec_ms
pairs = 3
max_pairs = 3
CONF
for mode in on off; do
	sed -i "s/^mode = .*/mode = $mode/" agent.conf
	rm -rf "$T/work" "$T/perfd.db"*
	echo "== [sandbox] mode = $mode"
	"$P" agent --config agent.conf --once 2>&1 | grep -E "sandbox:|comparison 1|job 1: (done|failed)"
	"$P" verify --db "$T/perfd.db"
	"$P" show --db "$T/perfd.db" 1 | sed -n '/^seq  arm/,$p'
done
