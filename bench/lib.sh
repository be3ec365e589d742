# Shared by the bench/ scripts: a scratch directory removed on exit, the
# helper programs compiled into it, small statistics and a description of
# the machine. Sourced, never run.

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)

# bench_fail MESSAGE: says what went wrong and stops the script.
bench_fail() {
	echo "$(basename "$0"): $*" >&2
	exit 2
}

# bench_number NAME DEFAULT MIN MAX: the variable's value, or its default,
# checked to be a whole number in range (as v=$(bench_number ...): a
# failure ends the script under set -e).
bench_number() {
	v=
	eval "v=\${$1:-$2}"
	case $v in
	'' | *[!0-9]*) bench_fail "$1 must be a whole number from $3 to $4" ;;
	esac
	[ "$v" -ge "$3" ] && [ "$v" -le "$4" ] || bench_fail "$1 must be a whole number from $3 to $4"
	echo "$v"
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
# interrupted, after the processes named by bench_kill_at_exit are killed.
bench_scratch() {
	SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/perfd-bench.XXXXXX")
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM HUP
}

# bench_kill_at_exit VAR...: when the script exits, the processes whose
# pids these variables hold then are killed (an empty one names none).
bench_exit_vars=
bench_kill_at_exit() {
	bench_exit_vars="$bench_exit_vars $*"
}
bench_cleanup() {
	for bench_v in $bench_exit_vars; do
		eval "bench_p=\${$bench_v:-}"
		[ -z "$bench_p" ] || kill "$bench_p" 2>/dev/null || :
	done
	rm -rf "$SCRATCH"
}

# bench_stop VAR: kills the process whose pid VAR holds, waits for it and
# empties VAR.
bench_stop() {
	eval "bench_p=\${$1:-}"
	if [ -n "$bench_p" ]; then
		kill "$bench_p" 2>/dev/null || :
		wait "$bench_p" 2>/dev/null || :
	fi
	eval "$1="
}

# bench_port LOG: the port of the first "serving http://127.0.0.1:PORT/" in
# LOG (perfd serve's or bare-mhd's), waiting up to 10 s for it; fails
# without one.
bench_port() {
	i=0
	while [ $i -lt 100 ]; do
		port=$(sed -n 's|.*serving http://127\.0\.0\.1:\([0-9][0-9]*\)/.*|\1|p' "$1" 2>/dev/null | head -n 1)
		[ -n "$port" ] && { echo "$port"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# bench_fail_log LOG MESSAGE: shows LOG on stderr, then bench_fail MESSAGE.
bench_fail_log() {
	cat "$1" >&2
	bench_fail "$2"
}

# bench_hub HOST: a hub for host HOST on a loopback port of its choosing, its
# database $SCRATCH/hub.db, its configuration $SCRATCH/hub.conf; sets TOKEN
# (a token of HOST), srv (the pid of its perfd serve, $PERFD, killed at
# exit; its stderr in $SCRATCH/serve.err) and URL.
bench_hub() {
	printf '[hub]\ndatabase = %s\nlisten = 127.0.0.1:0\nhosts = %s\n' "$SCRATCH/hub.db" "$1" >"$SCRATCH/hub.conf"
	TOKEN=$("$PERFD" token new "$1" --config "$SCRATCH/hub.conf" 2>/dev/null) || bench_fail "perfd token new failed"
	"$PERFD" serve --config "$SCRATCH/hub.conf" 2>"$SCRATCH/serve.err" &
	srv=$!
	bench_kill_at_exit srv
	port=$(bench_port "$SCRATCH/serve.err") || bench_fail_log "$SCRATCH/serve.err" "the hub did not start"
	URL=http://127.0.0.1:$port
}

# bench_cc NAME [CC_ARGS...]: compiles bench/NAME.c into $SCRATCH/NAME;
# CC_ARGS come after the source, so libraries (-lm) link.
bench_cc() {
	name=$1
	shift
	${CC:-cc} -O2 -std=c11 -Wall -Wextra -o "$SCRATCH/$name" "$BENCH_DIR/$name.c" "$@" ||
		bench_fail "cannot compile bench/$name.c"
}

# bench_section NAME KEY=VALUE...: the configuration section [NAME] with a
# line "KEY = VALUE" for each, and a blank line after.
bench_section() {
	printf '[%s]\n' "$1"
	shift
	for bench_kv in "$@"; do
		printf '%s = %s\n' "${bench_kv%%=*}" "${bench_kv#*=}"
	done
	echo
}

# bench_agent_conf DIR POLL_S BUILD: an agent's configuration for the
# repository DIR/src (branch main), its database DIR/a.db and workdir DIR/w,
# polling every POLL_S seconds, building the artifact p with BUILD.
bench_agent_conf() {
	bench_section agent database="$1/a.db" workdir="$1/w" poll_s="$2"
	bench_section repo url="file://$1/src" branches=main
	bench_section build command="$3" artifacts=p
}

# bench_mhd: compiles bench/bare-mhd.c, the bare libmicrohttpd server the
# HTTP benchmarks compare perfd with, into $SCRATCH/bare-mhd.
bench_mhd() {
	${CC:-cc} -O2 -std=c11 -Wall -Wextra -o "$SCRATCH/bare-mhd" "$BENCH_DIR/bare-mhd.c" -lmicrohttpd ||
		bench_fail "cannot compile bench/bare-mhd.c (libmicrohttpd-dev is needed)"
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
