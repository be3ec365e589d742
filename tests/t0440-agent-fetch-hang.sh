#!/bin/bash
# A git server that accepts the connection and never answers: the agent's
# fetch runs in a child process (perfd fetch) bounded by [repo] timeout_s,
# so the poll costs that long, is said with the URL, and the agent goes on;
# SIGTERM during such a fetch stops the agent within the launcher's grace
# period (2 s) plus 1 s. perfd fetch by hand says what failed.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { echo "git missing: skipped"; exit 77; }

mkdir srv
git init -q --bare srv/repo.git
python3 "$TESTS_DIR/git-http-server.py" --root srv --silent --max-seconds 90 >port 2>server.log &
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$T"' EXIT
wait_for "the server's port file" 10 test -s port
PORT=$(head -1 port)
URL=http://127.0.0.1:$PORT/repo.git

conf() { # TIMEOUT
	cat <<CONF
[agent]
database = $DB
workdir = $T/work

[repo]
url = $URL
branches = main
timeout_s = $1

[build]
command = true
artifacts = none
CONF
}
now() { date +%s.%N; }
took() { python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }
below() { python3 -c "import sys; sys.exit(not float(sys.argv[1]) < float(sys.argv[2]))" "$1" "$2"; }

conf soon >bad.conf
check "timeout_s must be seconds" run 2 "$PERFD" agent --config bad.conf --check
check "and says so" has err "timeout_s"

conf 2 >agent.conf
t0=$(now)
check "a poll of a hung server ends (--once)" run 0 "$PERFD" agent --config agent.conf --once
t=$(took "$t0" "$(now)")
check "the server was asked" has server.log "silent: GET /repo.git/info/refs"
check "within the bound and the grace period, scaled (took ${t} s)" below "$t" "$(slow_s 6)"
check "said with the URL and the bound" has err "fetch from '$URL' did not end within 2 s ([repo] timeout_s)"
check "no job was queued" eq 0 "$(sql "select count(*) from jobs")"

# A long bound: only SIGTERM ends the fetch.
conf 600 >agent.conf
asked=$(grep -c "silent:" server.log)
"$PERFD" agent --config agent.conf >agent.out 2>agent.err &
p=$!
fetching() { [ "$(grep -c "silent:" server.log)" -gt "$asked" ]; }
check "the agent is fetching" wait_for "the agent's fetch at the silent server" 10 fetching
t0=$(now)
kill -TERM "$p"
wait "$p"
rc=$?
t=$(took "$t0" "$(now)")
check "SIGTERM stops it with exit 0 (got $rc)" eq 0 "$rc"
check "within the grace period plus 1 s, scaled (took ${t} s)" below "$t" "$(slow_s 3)"
check "it says it stopped" has agent.err "stopped"

# perfd fetch by hand.
check "perfd fetch needs --dir and --url" run 2 "$PERFD" fetch --dir m.git
check "and says so" has err "expected --dir MIRROR --url URL"
check "a refused connection" run 113 "$PERFD" fetch --dir "$T/m.git" --url http://127.0.0.1:1/none.git
check "is said on stdout" has out "git: cannot reach 'http://127.0.0.1:1/none.git'"
finish
