#!/bin/bash
# Artifacts are read from the build directory and nowhere else (issue 24):
# a build that makes its artifact directory a link to /proc (where the root
# agent would open /proc/kmsg and block for ever) or to the agent's own
# directory (whose token, configuration and database would be hashed,
# stored and pushed as artifacts) fails promptly with the reason, and no
# file outside is stored. A sparse 16 GiB artifact passes the bound on
# bytes hashed per build and fails the build before it is read. The bounds'
# keys are checked with the rest of the configuration.
. "$(dirname "$0")/lib.sh"
need git cc sqlite3
new_src
work_prog "$SRC/prog.c" 1000000 7
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
echo "RESULT contract on \"cpu\": passed=1 total=1"
SH
chmod +x "$SRC/check.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm one
echo "// two" >>"$SRC/prog.c" && git -C "$SRC" commit -qam two
echo "perfd_notarealtoken0123456789abcdef" >hub.token
chmod 600 hub.token

# conf NAME BUILD: NAME.conf, with its own database NAME.db and workdir,
# whose build is cc then BUILD, and whose artifacts are prog, check.sh and
# what out/ holds.
conf() {
	cat >"$1.conf" <<CONF
$(agent_repo database="$T/$1.db" workdir="$T/work-$1")

[hub]
url = http://127.0.0.1:9
token_file = $T/hub.token
timeout_s = 1

$(work_suite build="cc -O1 -o prog prog.c && $2" artifacts="prog check.sh out/*")
CONF
}

# agent NAME: runs the agent once on NAME.conf, killed at 120 s: it must
# end by itself well before (the old agent blocked in /proc/kmsg for ever,
# SIGTERM or not).
agent() {
	local t0=$SECONDS
	check "$1: the agent runs once" run 0 timeout -s KILL 120 "$PERFD" agent \
		--config "$1.conf" --once
	check "$1: and ends promptly" test $((SECONDS - t0)) -lt 60
	cp err "$1.err"
}

# builds NAME WHAT: that every build of NAME failed, none done, with WHAT in
# its detail.
builds() {
	local like=${2//\'/\'\'}
	check "$1: builds made" test "$(sqlite3 "$T/$1.db" "select count(*) from builds")" -ge 1
	check "$1: no build done" eq 0 \
		"$(sqlite3 "$T/$1.db" "select count(*) from builds where state != 'failed'")"
	check "$1: each failed with the reason" eq 0 \
		"$(sqlite3 "$T/$1.db" "select count(*) from builds where detail not like '%$like%'")"
}

conf proc "ln -s /proc out"
check "the configuration is checked" run 0 "$PERFD" agent --config proc.conf --check
agent proc
builds proc "'out' is a symbolic link: artifacts are not followed out of the build directory"
check "proc: no artifact stored" eq 0 "$(sqlite3 "$T/proc.db" "select count(*) from artifacts")"
check "proc: the log says why" has proc.err "'out' is a symbolic link"

# The agent's own directory: its configuration, token and database.
conf home "ln -s $T out"
agent home
builds home "'out' is a symbolic link"
token_sha=$(sha256sum hub.token | cut -c1-64)
conf_sha=$(sha256sum home.conf | cut -c1-64)
check "home: no artifact is a file of the agent's" eq 0 "$(sqlite3 "$T/home.db" \
	"select count(*) from artifacts where path like '%hub.token' or path like '%.conf' or
	 path like '%.db' or path not like '$T/work-home/builds/%' or
	 sha256 in ('$token_sha', '$conf_sha')")"
check "home: no artifact stored" eq 0 "$(sqlite3 "$T/home.db" "select count(*) from artifacts")"

# A link in the artifact's own place, and a FIFO, are refused too.
conf last "mkdir out && ln -s $T/hub.token out/token"
agent last
builds last "'out/token' is a symbolic link"
conf fifo "mkdir out && mkfifo out/pipe"
agent fifo
builds fifo "'out/pipe' is a FIFO: only regular files are artifacts"

# A sparse 16 GiB artifact: over the 4096 MiB hashed per build by default,
# refused before a byte is read.
conf sparse "mkdir out && truncate -s 16G out/big"
agent sparse
builds sparse "hashing 'out/big' passes the bound of 4294967296 bytes hashed per build"
check "sparse: the key is named" eq 0 "$(sqlite3 "$T/sparse.db" \
	"select count(*) from builds where detail not like '%[build] hash_max_mb%'")"

# With a larger bound it is hashed: the bound, not the file, failed it.
sed -i 's/^\[build\]$/[build]\nhash_max_mb = 17000\nhash_timeout_s = 600/' sparse.conf
check "the bounds are read" run 0 "$PERFD" agent --config sparse.conf --check
sed 's/^hash_max_mb = 17000$/hash_max_mb = lots/; s/^hash_timeout_s = 600$/hash_timeout_s = 0/' \
	sparse.conf >bad.conf
check "bad bounds are refused" run 2 "$PERFD" agent --config bad.conf --check
check "  the bytes, with its line" has err "'hash_max_mb': expected a whole number from 1 to 1073741824, not 'lots'"
check "  the seconds, with its line" has err "'hash_timeout_s': expected a number of seconds above 0"
sed -i 's/^hash_max_mb = 17000$/hash_max_mb = 1/' sparse.conf
sed -i 's/^hash_timeout_s = 600$/hash_timeout_s = 1/' sparse.conf
rm -rf "$T/sparse.db" "$T/work-sparse"
agent sparse
builds sparse "bound of 1048576 bytes hashed per build"
finish
