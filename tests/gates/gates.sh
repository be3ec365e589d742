#!/usr/bin/env bash
# The gates: the tree grows no new copy, no new long function and no
# document past its ceiling.
#
#   tests/gates/gates.sh [--update] [length] [copies] [docs] [DIR]
#
# length: no C function outside the tests (tests/, bench/, test-*.c, and
#   kernels/demo/history/, a shipped demo program) is over MAX_LINES lines,
#   from the line of its name to its closing brace, as universal-ctags
#   finds it, unless tests/gates/long-functions.txt lists it with a reason;
#   and every function listed there is still over MAX_LINES.
# copies: jscpd, with the settings of .jscpd.json, finds no duplicated
#   block that tests/gates/clones.txt does not hold.
# docs: each document (README.md, docs/*.md) has a line ceiling in
#   tests/gates/doc-ceilings.txt, with its reason, and is within it.
# All three by default. DIR is the tree to check (this checkout by default);
# its own .jscpd.json and tests/gates/ files are used, but the tools are
# this checkout's (node_modules/.bin/jscpd; JSCPD and CTAGS override them).
# Only files git tracks are read, or with DIR outside git every file.
# --update writes tests/gates/clones.txt from today's clones and deletes the
# lines of long-functions.txt that are no longer over MAX_LINES; it never
# raises a document's ceiling.
#
# Exit 0: passed; 1: a gate failed (each reason printed); 2: usage, or a tool
# missing (./dev.sh deps installs universal-ctags, and npm ci jscpd).
# docs/testing.md, "The gates".
set -euo pipefail

MAX_LINES=100

here=$(cd "$(dirname "$0")" && pwd)
home=$(cd "$here/../.." && pwd)
update=
gates=()
dir=

usage() {
	sed -n '5p' "$0" | sed 's/^# *//' >&2
	exit 2
}

while (($#)); do
	case $1 in
	--update) update=--update ;;
	length | copies | docs) gates+=("$1") ;;
	-h | --help) usage ;;
	*) [ -z "$dir" ] && [ -d "$1" ] || usage; dir=$1 ;;
	esac
	shift
done
((${#gates[@]})) || gates=(length copies docs)
dir=$(cd "${dir:-$home}" && pwd -P)

CTAGS=${CTAGS:-$(command -v ctags-universal || command -v ctags || true)}
JSCPD=${JSCPD:-$home/node_modules/.bin/jscpd}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The files to check, relative to DIR, NUL-separated: what git tracks
# (and is still there), so that a build directory or a scratch file is
# never read.
cd "$dir"
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$dir" ]; then
	git ls-files -z | while IFS= read -r -d '' f; do
		[ -f "$f" ] && printf '%s\0' "$f"
	done >"$tmp/files"
else
	find . \( -path ./.git -o -path ./node_modules -o -path ./build -o \
		-path './build-*' \) -prune -o -type f -printf '%P\0' >"$tmp/files"
fi

# verdict CMD...: runs CMD; rc becomes the worst exit status so far.
rc=0
verdict() {
	local r=0
	"$@" || r=$?
	[ "$r" -le "$rc" ] || rc=$r
}

for g in "${gates[@]}"; do
	case $g in
	length)
		if ! "$CTAGS" --version 2>/dev/null | grep -q 'Universal Ctags'; then
			echo "gates.sh: universal-ctags missing (./dev.sh deps installs it)" >&2
			exit 2
		fi
		tr '\0' '\n' <"$tmp/files" |
			grep -E '\.c$' |
			grep -v -E '^(tests|bench|kernels/demo/history)/|(^|/)test-[^/]*\.c$' |
			tr '\n' '\0' >"$tmp/c-files" || true
		xargs -0 -r "$CTAGS" --languages=C --c-kinds=f --fields=+ne -o - \
			<"$tmp/c-files" >"$tmp/tags"
		verdict python3 "$here/gates.py" length "$MAX_LINES" \
			tests/gates/long-functions.txt "$tmp/tags" $update
		;;
	copies)
		if [ ! -x "$JSCPD" ] || ! "$JSCPD" --version >/dev/null 2>&1; then
			echo "gates.sh: jscpd missing at $JSCPD (npm ci, or ./dev.sh deps)" >&2
			exit 2
		fi
		mapfile -d '' files <"$tmp/files"
		# jscpd picks the formats and the ignored folders from .jscpd.json.
		"$JSCPD" -c .jscpd.json -r json -o "$tmp/jscpd" "${files[@]}" \
			>"$tmp/jscpd.log" 2>&1 || {
			cat "$tmp/jscpd.log" >&2
			echo "gates.sh: jscpd failed" >&2
			exit 2
		}
		verdict python3 "$here/gates.py" copies tests/gates/clones.txt \
			"$tmp/jscpd/jscpd-report.json" $update
		;;
	docs)
		mapfile -t docs < <(tr '\0' '\n' <"$tmp/files" |
			grep -E '^(README\.md|docs/[^/]*\.md)$' || true)
		verdict python3 "$here/gates.py" docs tests/gates/doc-ceilings.txt \
			"${docs[@]}"
		;;
	esac
done
exit $rc
