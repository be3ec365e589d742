#!/bin/bash
# docs/tutorial.md, followed word for word: its ```sh blocks run in order in
# one shell, each block's stdout and stderr kept apart, and the ```text block
# after each must be found in that output, line by line, in order (… stands
# for any text). The markers are the page's own (its first comment): a block
# after "<!-- test: skip -->" is not run (the clone and build of perfd: this
# test uses the built $PERFD, and the build is timed by hand, docs/tutorial.md
# "How long"); one after "<!-- test: file NAME -->" is committed as NAME into
# the project this test makes.
#
# What differs from a reader's run, and nothing else: after the first block,
# its variables PERFD_REPO, PERFD_SRC, PROJECT, WORK, LISTEN and PERFD are set
# to this test's (the source tree, $T/src, $T/perfd-myproj, a free port on
# 127.0.0.1, $PERFD); git's author and committer come from the environment
# (lib.sh's new_src). The project is a git repository of three commits on main:
# bench.c, whose ./bench does its loop REPEAT = 3 times and prints
# "time: 60.000 ms" and a checksum; the tutorial's wrapper; then REPEAT = 2,
# "time: 40.000 ms", the same checksum. The time printed is planted (20 ms a
# repetition, whatever the loop took, as tests/lib.sh's work_prog does), so a
# loaded machine cannot turn the verdict. The test prints each block's time
# and the time to the first verdict.
. "$(dirname "$0")/lib.sh"
need git cc python3
new_src
PROJECT=$SRC
TREE=${PERFD_SOURCE_ROOT:-$(cd "$TESTS_DIR/.." && pwd)}
PAGE=$TREE/docs/tutorial.md

# The page cut into what runs (blocks/N.sh, and blocks/N.want when a text
# block follows), the files it names (files/NAME), the names the first
# block sets (blocks/vars) and its configuration examples (blocks/ini).
mkdir blocks files
python3 - "$PAGE" <<'PY' || exit 99
import os, re, sys
text = open(sys.argv[1], encoding="utf-8").read().split("\n")
n, i, mark, last = 0, 0, None, None
while i < len(text):
    line = text[i]
    m = re.match(r"^<!-- test: (skip|file (\S+)) -->$", line)
    if m:
        mark = m.group(2) or "skip"
    f = re.match(r"^```(\w*)$", line)
    if not f:
        i += 1
        continue
    j = i + 1
    while text[j] != "```":
        j += 1
    body = "\n".join(text[i + 1:j]) + "\n"
    kind = f.group(1)
    if kind == "sh" and mark == "skip":
        last = None
    elif kind == "sh" and mark:
        open("files/" + mark, "w").write(body)
        last = None
    elif kind == "sh":
        n += 1
        open("blocks/%d.sh" % n, "w").write(body)
        if n == 1:
            names = re.findall(r"^([A-Z_]+)=", body, re.M)
            open("blocks/vars", "w").write(" ".join(names) + "\n")
        last = n
    elif kind == "ini":
        open("blocks/ini", "a").write(body)
    elif kind == "text" and last:
        open("blocks/%d.want" % last, "w").write(body)
        last = None
    mark = None
    i = j + 1
PY
# match WANT OUT: every line of WANT is a whole line of OUT, in order.
cat >match.py <<'PY'
import re, sys
want = [l for l in open(sys.argv[1], encoding="utf-8").read().split("\n") if l]
got = [l.rstrip() for l in open(sys.argv[2], encoding="utf-8", errors="replace").read().split("\n")]
at = 0
for w in want:
    rx = re.compile(".*".join(re.escape(p) for p in w.split("\u2026")))
    while at < len(got) and not rx.fullmatch(got[at]):
        at += 1
    if at == len(got):
        print("  not found, in order: " + w)
        sys.exit(1)
    at += 1
PY
nblocks=$(ls blocks/*.sh | wc -l)
check "the page has its blocks ($nblocks run)" test "$nblocks" -ge 10
check "the first block sets exactly what this test sets" \
	eq "PERFD_REPO PERFD_SRC PROJECT WORK LISTEN PERFD" "$(cat blocks/vars)"
check "the page gives the wrapper as a file" test -s files/perfd-bench.sh

# The project: bench.c at REPEAT = 3, the page's wrapper, then REPEAT = 2.
bench_c() {
	cat >"$PROJECT/bench.c" <<C
#include <stdio.h>

#define ROUNDS 20000000UL
#define REPEAT $1

static unsigned long work(void)
{
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < ROUNDS; i++)
		x += i * i;
	return x;
}

int main(void)
{
	unsigned long sum = 0;
	int r;

	for (r = 0; r < REPEAT; r++)
		sum = work();
	printf("checksum: %016lx\n", sum);
	/* planted: 20 ms a repetition, however long the loop took */
	printf("time: %.3f ms\n", REPEAT * 20.0);
	return 0;
}
C
	git -C "$PROJECT" add -A && git -C "$PROJECT" commit -q -m "$2"
}
bench_c 3 "bench: a sum of squares"
install -m 755 files/perfd-bench.sh "$PROJECT/perfd-bench.sh"
git -C "$PROJECT" add -A && git -C "$PROJECT" commit -q -m "bench: perfd's wrapper"
bench_c 2 "bench: the work twice, not three times"

# The script: the blocks in order in one shell, the test's settings after
# the first; after a block with a text block, a bounded wait for its lines
# (a block may leave a server starting in the background).
PORT=$(free_port)
{
	for n in $(seq "$nblocks"); do
		echo "s=\$(date +%s%N)"
		echo "{"
		cat "blocks/$n.sh"
		echo "} >'$T/blocks/$n.out' 2>&1"
		echo "echo \$? >'$T/blocks/$n.rc'"
		if [ -f "blocks/$n.want" ]; then
			echo "w=\$((SECONDS + 10))"
			echo "until python3 '$T/match.py' '$T/blocks/$n.want' '$T/blocks/$n.out' >/dev/null || [ \$SECONDS -ge \$w ]; do sleep 0.2; done"
		fi
		echo "echo \$(( (\$(date +%s%N) - s) / 1000000 )) >'$T/blocks/$n.ms'"
		if [ "$n" = 1 ]; then
			echo "PERFD_REPO='$TREE' PERFD_SRC='$TREE' PROJECT='$PROJECT'"
			echo "WORK='$T/perfd-myproj' LISTEN=127.0.0.1:$PORT PERFD='$PERFD'"
		fi
	done
	echo "jobs -p >'$T/blocks/left'"
} >tutorial.sh
bash tutorial.sh >script.out 2>&1
check "the script ran to its end" test -f blocks/left
[ -f blocks/left ] || sed 's/^/  | /' script.out
left=$(cat blocks/left 2>/dev/null)
kill_at_exit left
# The page's last block stops its server: every job the script left ends
# (each polled for 5 s; a zombie counts as ended).
for w in $(seq 50); do [ "$(alive blocks/left)" = 0 ] && break; sleep 0.1; done

total=0 verdict=
for n in $(seq "$nblocks"); do
	first=$(grep -m 1 -v '^\s*\(#.*\)\?$' "blocks/$n.sh" | cut -c 1-60)
	ms=$(cat "blocks/$n.ms" 2>/dev/null || echo 0)
	total=$((total + ms))
	echo "  block $n: $ms ms: $first"
	was=$fails
	check "block $n exits 0: $first" eq 0 "$(cat "blocks/$n.rc" 2>/dev/null)"
	[ -f "blocks/$n.want" ] &&
		check "block $n prints what the page says" python3 match.py "blocks/$n.want" "blocks/$n.out"
	[ "$fails" = "$was" ] || sed 's/^/  | /' "blocks/$n.out"
	if [ -z "$verdict" ] && grep -q -- "--once" "blocks/$n.sh"; then
		verdict=$total
	fi
done
echo "  time to the first verdict (the blocks up to the first --once): $((verdict / 1000)).$((verdict % 1000 / 100)) s"
echo "  the whole tutorial: $((total / 1000)).$((total % 1000 / 100)) s"
check "a first --once gave the verdict" test -n "$verdict"

# The page's [github] example, not run by the page (it needs a token): the
# agent's configuration of step 3 with the example's sections in place of
# its [repo], the token file a test one, passes --check, which reads the
# token file and sends nothing.
CONF=$T/perfd-myproj/agent.conf
printf 'ghp_test\n' >token && chmod 600 token
{
	sed -n '/^\[agent\]/,/^$/p' "$CONF"
	sed "s|^token_file = .*|token_file = $T/token|" blocks/ini
	echo
	sed -n '/^\[build\]/,$p' "$CONF"
} >github.conf
check "the page's [github] example passes --check" run 0 "$PERFD" agent --config github.conf --check
check "  configuration OK" has out "configuration OK"
check "the dashboard's server is stopped by the page's kill" eq 0 "$(alive blocks/left)"
finish
