#!/bin/bash
# perfd agent --check and --check --trial: a wrapper the suite names under
# a /tmp directory of its own (open to everyone, as mktemp -d and chmod 755
# leave it) is not in the sandbox's view. --check names it, with the key
# that named it and the one that fixes it; --check --trial builds the
# default branch's head in the sandbox as a job would, fails, says the
# path the recipe could not see and exits 1, storing nothing; with
# [sandbox] ro naming the directory both pass. A recipe past its timeout
# fails the trial too; a suite read from the repository is checked by the
# trial.
. "$(dirname "$0")/lib.sh"
need git
check "bubblewrap is installed" test -x /usr/bin/bwrap

# Outside the test's directory, as a user's own scratch wrapper would be.
W=$(mktemp -d /tmp/perfd-wrap.XXXXXX)
chmod 755 "$W"
trap 'rm -rf "$W"; on_exit' EXIT
cat >"$W/wrap.sh" <<'SH'
#!/bin/sh
echo "wrapped: $*"
exec "$@"
SH
chmod 755 "$W/wrap.sh"

new_src
cat >"$SRC/build.sh" <<'SH'
#!/bin/sh
echo "building in $(pwd)"
printf '#!/bin/sh\necho work_ms=5\n' >prog
chmod +x prog
SH
git -C "$SRC" add -A && git -C "$SRC" commit -qm one

conf() {
	cat <<CONF
[agent]
database = $DB
workdir = $T/work
[repo]
url = $SRC
branches = main
[sandbox]
$1
[build]
command = $W/wrap.sh sh ./build.sh
env = WRAPPER=$W/wrap.sh
env = DATA=./data
artifacts = prog
timeout_s = ${2:-120}
[case work]
command = ./prog ./data
pairs = 3
CONF
}
conf "" >agent.conf

check "--check passes: a warning, not an error" run 0 "$PERFD" agent --config agent.conf --check
check "  names the wrapper, the key that names it and the fix" has err "sandbox: [build] command names '$W/wrap.sh', which a sandboxed step does not see (its /tmp, /var/tmp, /run and /dev/shm are private and empty): [sandbox] ro = $W/wrap.sh (or its directory; rw where the step writes there) shows it, or move it into the repository"
check "  once for the path, though [build] env names it too" eq 1 "$(grep -cF "'$W/wrap.sh'" err)"
check "  nothing said of the relative paths, which the build shows" eq "" "$(grep -F "'./data'" err)"
check "  --check stores nothing" test ! -e "$DB"

check "--check --trial: the trial build fails (exit 1)" run 1 "$PERFD" agent --config agent.conf --check --trial
check "  progress: the fetch" has err "trial: fetching file://$SRC"
check "  progress: the build, where and within what" has err "trial: building main at $(git -C "$SRC" rev-parse --short=12 HEAD) in $T/work/builds/"
check "  the recipe's exit status" has out "trial build failed: the build recipe exited 127"
check "  the last lines of its log" has out "  | "
check "  the path it could not see, with the fix" has out "the build tried '$W/wrap.sh', which a sandboxed step does not see (its /tmp, /var/tmp, /run and /dev/shm are private and empty): [sandbox] ro = $W/wrap.sh (or its directory; rw where the step writes there) shows it, or move it into the repository"
check "  nothing stored: no database" test ! -e "$DB"
check "  the scratch checkout removed" eq "" "$(ls -A "$T/work/builds")"

conf "ro = $W" >agent.conf
check "with ro = the wrapper's directory, --check passes" run 0 "$PERFD" agent --config agent.conf --check
check "  and says nothing of it" eq "" "$(grep -F "$W" err)"
check "  the view shows it" has out "$W (read-only: [sandbox] ro)"
check "--check --trial passes (exit 0)" run 0 "$PERFD" agent --config agent.conf --check --trial
check "  the recipe ran through the wrapper" has out "wrapped: sh ./build.sh"
check "  said passed" has out "trial build passed: exit 0, artifacts prog"
check "  nothing stored: no database" test ! -e "$DB"
check "  the scratch checkout removed" eq "" "$(ls -A "$T/work/builds")"

sed -i 's|^command = .*build.sh$|command = sleep 60|' agent.conf
sed -i 's|^timeout_s = 120$|timeout_s = 1|' agent.conf
check "a recipe past [build] timeout_s fails the trial (exit 1)" run 1 "$PERFD" agent --config agent.conf --check --trial
check "  said so" has out "trial build failed: the build recipe timed out after"
check "  the scratch checkout removed" eq "" "$(ls -A "$T/work/builds")"

# The suite from the repository ([repo] suite): --check cannot read it
# without the mirror, --check --trial reads it as the agent does and says
# its paths too.
conf "" | sed -n '/^\[build\]$/,$p' >"$SRC/perfd.suite"
git -C "$SRC" add -A && git -C "$SRC" commit -qm suite
conf "" | sed '/^\[build\]$/,$d; s|^branches = main$|branches = main\nsuite = perfd.suite|' >repo.conf
check "a suite from the repository: --check --trial fails (exit 1)" run 1 "$PERFD" agent --config repo.conf --check --trial
check "  it names the wrapper the repository's suite names, with the key" has err "sandbox: [build] command names '$W/wrap.sh', which a sandboxed step does not see"
check "  and the path the build tried" has out "the build tried '$W/wrap.sh'"

check "--trial without --check is refused (exit 2)" run 2 "$PERFD" agent --config agent.conf --trial
check "  said so" has err "--trial goes with --check"

finish
