#!/bin/bash
# The gates (tests/gates/gates.sh) fail on what they are there to stop. On a
# copy of the tracked tree: as it is, all three pass; a whole function of 20
# to 40 lines copied from one C file into another fails the copies gate,
# which names both places; a new function of 120 lines fails the length
# gate, which names it and its length; a line added at the top of every C
# file (every clone moves) still passes; a listed function that is short,
# or a listed one without its reason, fails; a document one line over its
# ceiling fails the docs gate, which names it, its lines and its ceiling,
# and one at its ceiling passes; a new document without a ceiling, and a
# ceiling without its reason, fail; --update then makes the planted copy
# part of the baseline and drops the stale line, and the gates pass.
. "$(dirname "$0")/lib.sh"
SRC=${PERFD_SOURCE_ROOT:-$(cd "$TESTS_DIR/.." && pwd)}
GATES=$SRC/tests/gates/gates.sh
CTAGS=$(command -v ctags-universal || command -v ctags) ||
	{ echo "universal-ctags missing (./dev.sh deps): skipped"; exit 77; }
[ -x "$SRC/node_modules/.bin/jscpd" ] ||
	{ echo "jscpd missing (npm ci): skipped"; exit 77; }

# The copy: the files git tracks, as they are in the work tree, made a
# repository of its own so that each case starts again from the same tree.
C=$T/tree
mkdir "$C"
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$SRC" && git ls-files -z | while IFS= read -r -d '' f; do
		[ -f "$f" ] && printf '%s\0' "$f"
	done | tar --null -T - -cf -) | tar -xf - -C "$C"
else
	(cd "$SRC" && tar --exclude=./build --exclude='./build-*' --exclude=./node_modules --exclude=./.git -cf - .) |
		tar -xf - -C "$C"
fi
g() { git -C "$C" -c user.name=t -c user.email=t@t.invalid "$@"; }
# both A B: a line of the gate's output names A and B.
both() {
	grep -F -- "$1" "$T/out" | grep -qF -- "$2" && return 0
	echo "  no line with '$1' and '$2' in:"
	sed 's/^/  | /' "$T/out"
	return 1
}
g init -q && g add -A && g commit -qm tree || exit 99
again() { g reset -q --hard && g clean -qfd; }

start=$(date +%s)
check "the tree as it is passes the gates" run 0 "$GATES" "$C"
check "the length gate said so" has out "gate length: ok"
check "the copies gate said so" has out "gate copies: ok"
check "the docs gate said so" has out "gate docs: ok"
echo "  one run of the gates: $(($(date +%s) - start)) s"

# A function of 20 to 40 lines from one C file (the first such in the
# sorted files of db/ and common/, whatever they hold now) and the first
# other C file there, which it is appended to.
mapfile -t cfiles < <(cd "$C" && ls db/*.c common/*.c | grep -v '/test-')
(cd "$C" && "$CTAGS" --languages=C --c-kinds=f --fields=+ne -o - "${cfiles[@]}") |
	awk -F'\t' '{ l = e = 0
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^line:/) l = substr($i, 6)
			if ($i ~ /^end:/) e = substr($i, 5)
		}
		n = e - l + 1
		if (n >= 20 && n <= 40) print $2, l, e, $1 }' | sort | head -1 >"$T/pick"
read -r from l e fn <"$T/pick"
for to in "${cfiles[@]}"; do [ "$to" != "$from" ] && break; done
check "a function to copy was found ($fn, $from:$l-$e)" test -n "$fn"
at=$(($(wc -l <"$C/$to") + 2))
{ echo; sed -n "${l},${e}p" "$C/$from"; } >>"$C/$to"
check "a planted copy fails" run 1 "$GATES" "$C"
check "the copies gate names it" has out "gate copies: FAILED"
check "both places on one line" both "$from:" "$to:"
check "where it went, from the line it starts" has out "$to:$at-"
check "the length gate passes" has out "gate length: ok"
again

# A function of 120 lines, from its name to its closing brace; each line
# differs, so that it holds no copy.
{
	echo
	echo "int planted_long_function(int x)"
	echo "{"
	for i in $(seq 1 117); do printf '\tx = x * 3 + %d;\n' "$i"; done
	echo "}"
} >>"$C/$to"
check "a planted long function fails" run 1 "$GATES" "$C"
check "the length gate names it" has out "planted_long_function is 120 lines, over 100"
check "where it is" has out "$to:$(($(wc -l <"$C/$to") - 119)):"
check "the copies gate passes" has out "gate copies: ok"
again

# Clones keep their keys when lines move: an empty line at the top of
# every C file (empty, so that no clone's text changes).
(cd "$C" && git ls-files -z '*.c' | xargs -0 sed -i '1s/^/\n/')
check "every line shifted still passes" run 0 "$GATES" copies "$C"
check "no clone is new" has out "gate copies: ok"
again

# The allow-list: a short function listed, a line without a reason.
(cd "$C" && "$CTAGS" --c-kinds=f --fields=+ne -o - "$to") |
	awk -F'\t' '{ print $2 "\t" $1 "\tnot long" }' | head -1 >"$T/short"
cat "$T/short" >>"$C/tests/gates/long-functions.txt"
check "a listed short function fails" run 1 "$GATES" length "$C"
check "named, with what to do" has out "$(cut -f1,2 "$T/short" | tr '\t' ' ') is listed but no longer over 100 lines"
again
printf 'runners/pair.c\tfoo\n' >>"$C/tests/gates/long-functions.txt"
check "a line without a reason fails" run 1 "$GATES" length "$C"
check "it is named" has out "wants FILE FUNCTION REASON"
again

# The documents' ceilings: docs/performance.md filled to its ceiling
# passes, one line more fails, named with its lines and its ceiling.
CEIL=$C/tests/gates/doc-ceilings.txt
doc=docs/performance.md
max=$(awk -v d="$doc" '$1 == d { print $2 }' "$CEIL")
check "$doc has a ceiling" test -n "$max"
check "$doc is within it" test "$(wc -l <"$C/$doc")" -le "${max:-0}"
while [ "$(wc -l <"$C/$doc")" -lt "${max:-0}" ]; do echo "filler" >>"$C/$doc"; done
check "a document at its ceiling passes" run 0 "$GATES" docs "$C"
check "said so" has out "gate docs: ok"
echo "one line too many" >>"$C/$doc"
check "a document over its ceiling fails" run 1 "$GATES" docs "$C"
check "named, with its lines and its ceiling" \
	has out "$doc: $((max + 1)) lines, over its ceiling of $max"
again
printf '# New\n\nA page.\n' >"$C/docs/new-page.md"
g add docs/new-page.md
check "a document without a ceiling fails" run 1 "$GATES" docs "$C"
check "it is named" has out "docs/new-page.md: 3 lines and no ceiling"
again
echo "docs/new-page.md 10" >>"$CEIL"
check "a ceiling without its reason fails" run 1 "$GATES" docs "$C"
check "the line is named" has out "doc-ceilings.txt:$(wc -l <"$CEIL"): 'docs/new-page.md 10': wants PATH LINES REASON"
again

# --update takes the planted copy into the baseline and drops the stale
# line; then both pass.
{ echo; sed -n "${l},${e}p" "$C/$from"; } >>"$C/$to"
cat "$T/short" >>"$C/tests/gates/long-functions.txt"
check "--update" run 0 "$GATES" --update "$C"
check "it drops the stale line" has out "dropped"
check "then both pass" run 0 "$GATES" "$C"
check "the baseline holds more clones" test "$(grep -vc '^#' "$C/tests/gates/clones.txt")" \
	-gt "$(grep -vc '^#' "$SRC/tests/gates/clones.txt")"
check "the allow-list lost one line" eq "$(wc -l <"$SRC/tests/gates/long-functions.txt")" \
	"$(wc -l <"$C/tests/gates/long-functions.txt")"
finish
