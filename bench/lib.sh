# Shared by the bench/ scripts: a scratch directory removed on exit, the
# helper programs compiled into it, small statistics and a description of
# the machine. Sourced, never run.

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)

# bench_fail MESSAGE: says what went wrong and stops the script.
bench_fail() {
	echo "$(basename "$0"): $*" >&2
	exit 2
}

# bench_need PROGRAM HINT: stops the script unless PROGRAM is on PATH.
bench_need() {
	command -v "$1" >/dev/null 2>&1 || bench_fail "'$1' is needed: $2"
}

# bench_perfd PATH: prints PATH made absolute, after checking that it is
# an executable file.
bench_perfd() {
	case $1 in
	/*) p=$1 ;;
	*) p=$(pwd)/$1 ;;
	esac
	[ -f "$p" ] && [ -x "$p" ] || bench_fail "'$1' is not an executable perfd (build it first, or give its path as the first argument)"
	echo "$p"
}

# bench_scratch: makes $SCRATCH, removed when the script exits or is
# interrupted.
bench_scratch() {
	SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/perfd-bench.XXXXXX")
	trap 'rm -rf "$SCRATCH"' EXIT
	trap 'exit 130' INT TERM HUP
}

# bench_cc NAME [CC_ARGS...]: compiles bench/NAME.c into $SCRATCH/NAME;
# CC_ARGS come after the source, so libraries (-lm) link.
bench_cc() {
	name=$1
	shift
	${CC:-cc} -O2 -std=c11 -Wall -Wextra -o "$SCRATCH/$name" "$BENCH_DIR/$name.c" "$@" ||
		bench_fail "cannot compile bench/$name.c"
}

# median: the median of the numbers on stdin, one a line (the mean of the
# two middle ones for an even count).
median() {
	sort -g | awk '{ v[NR] = $1 }
		END {
			if (NR == 0) exit 1
			if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}

# calc EXPR: evaluates an awk expression and prints it with %.3f, or with
# the format given as $2.
calc() {
	awk "BEGIN { printf \"${2:-%.3f}\n\", $1 }"
}

# machine_line: CPUs, CPU model, kernel and load, in one line.
machine_line() {
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
	printf '%s CPUs, %s, %s %s, load average %s\n' "$(nproc)" "${model:-unknown CPU}" \
		"$(uname -s)" "$(uname -r)" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
}
