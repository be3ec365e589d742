#!/bin/bash
# builder's git over smart HTTP: git http-backend behind a loopback server
# (git-http-server.py), the unit binary test-git in its HTTP mode fetching
# heads and pull heads and checking out a commit, compared here with git
# archive; then a force-push and deletions on the server, fetched again.
. "$(dirname "$0")/lib.sh"
: "${TEST_GIT:?TEST_GIT must name the test-git binary}"

if ! command -v git >/dev/null || [ ! -x "$(git --exec-path)/git-http-backend" ]; then
	echo "skip: no git http-backend"
	exit 77
fi
export HOME=$T GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=perfd GIT_AUTHOR_EMAIL=perfd@example.org
export GIT_COMMITTER_NAME=perfd GIT_COMMITTER_EMAIL=perfd@example.org

git init -q -b main work
(
	cd work &&
	printf 'one\n' >a.txt && mkdir bin && printf '#!/bin/sh\n' >bin/tool &&
	chmod 755 bin/tool && ln -s a.txt link && git add -A && git commit -q -m one &&
	printf 'two\n' >a.txt && git commit -q -a -m two &&
	git checkout -q -b feature/y && printf 'y\n' >y.txt && git add y.txt &&
	git commit -q -m y && git checkout -q main
) || exit 99
mkdir srv && git clone -q --bare work srv/repo.git || exit 99
git -C srv/repo.git update-ref refs/pull/12/head feature/y || exit 99
rev() { git -C srv/repo.git rev-parse "$1"; }

exec 3< <(exec python3 "$TESTS_DIR/git-http-server.py" --root "$T/srv" \
	--max-seconds 120 2>"$T/server.log")
srv=$!
trap 'kill $srv 2>/dev/null; rm -rf "$T"' EXIT
read -r -t "$(slow_s 10)" port <&3
check "the server printed its port" eq 1 "$([[ $port =~ ^[0-9]+$ ]] && echo 1)"
URL=http://127.0.0.1:$port/repo.git

# fetch NAME REV HEADS: runs test-git over HTTP into mirror and co-NAME.
fetch() {
	PERFD_TEST_GIT_URL=$URL PERFD_TEST_GIT_MIRROR=$T/mirror PERFD_TEST_GIT_HEADS=$3 \
		PERFD_TEST_GIT_REV=$2 PERFD_TEST_GIT_CHECKOUT=$T/co-$1 run 0 "$TEST_GIT"
}
# same_as_archive NAME REV: co-NAME is git archive of REV, executable bits too.
same_as_archive() {
	mkdir "ar-$1" && git -C srv/repo.git archive "$2" | tar -x -C "ar-$1" &&
		diff -r --no-dereference "co-$1" "ar-$1" &&
		eq "$(cd "ar-$1" && find . -type f -perm -u+x | sort)" \
			"$(cd "co-$1" && find . -type f -perm -u+x | sort)"
}

heads=$(printf 'feature/y %s\nmain %s\npull/12 %s pull 12\n' \
	"$(rev feature/y)" "$(rev main)" "$(rev refs/pull/12/head)")
check "fetch over HTTP: heads, pull heads, checkout" fetch first "$(rev main)" "$heads"
check "checkout equals git archive" same_as_archive first "$(rev main)"
check "the executable came out executable" test -x co-first/bin/tool
check "the link is a link" eq a.txt "$(readlink co-first/link)"
check "libgit2 spoke smart HTTP" has "$T/server.log" "service=git-upload-pack"
check "and fetched through POST" has "$T/server.log" "POST /repo.git/git-upload-pack"

old=$(rev main)
git -C srv/repo.git update-ref refs/heads/main main~1 &&
	git -C srv/repo.git update-ref -d refs/heads/feature/y &&
	git -C srv/repo.git update-ref -d refs/pull/12/head || exit 99
check "main was force-pushed" test "$old" != "$(rev main)"
check "fetch again: main moved back, feature/y and pull/12 pruned" \
	fetch second "$(rev main)" "main $(rev main)"
check "second checkout equals git archive" same_as_archive second "$(rev main)"

kill "$srv"
wait "$srv" 2>/dev/null
check "the server stopped on SIGTERM" eq 1 "$(kill -0 "$srv" 2>/dev/null || echo 1)"
check "the server stops by itself after --max-seconds" run 0 \
	timeout 20 python3 "$TESTS_DIR/git-http-server.py" --root "$T/srv" --max-seconds 1
finish
