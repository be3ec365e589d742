#!/usr/bin/env bash
# bench/history.sh PERFD: the agent's history ([history], docs/history.md)
# on a generated branch whose program does real, noisy work
# (bench/noisy.c, 1% noise) with planted slow-downs, pushed 16 commits at a
# time so that only spans see them:
#   flat     20 commits, nothing planted (a false alarm if anything is raised)
#   step     16 commits, one 5% slower, one before it that does not build
#   creep    16 commits, the first ten 0.4% slower each (4.1% in all)
#   split    16 commits, two 3% slower (the 4th and the 11th)
#   flat2    16 commits, nothing planted
# For each push: the agent's wall time (perfd agent --once), what the
# alert found against what was planted, the bisection's steps and
# comparisons against the bound 2 ceil(log2 n) + 2, and beside it the peer:
# `git bisect run` over the same range, each step a `perfd pair` of the
# range's start against the commit (bad when slower, skip when it does not
# build), its comparisons, wall time and the commit it names.
set -eu
. "$(dirname "$0")/lib.sh"
bench_need git "apt-get install git"
bench_need sqlite3 "apt-get install sqlite3"
bench_need python3 "apt-get install python3"
PERFD=$(bench_perfd "${1:-build/daemon/perfd}")
bench_scratch
bench_cc noisy -lm
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.org GIT_COMMITTER_NAME=b \
	GIT_COMMITTER_EMAIL=b@example.org
SRC=$SCRATCH/src DB=$SCRATCH/perfd.db
sql() { sqlite3 "$DB" "$1"; }

# commit SLOW MESSAGE [broken]: the next commit, whose program is noisy's
# work SLOW percent slower than the base; its id to stdout.
commit() {
	printf '#!/bin/sh\nexec ./noisy --units 20 --noise 1 --slow %s\n' "$1" >"$SRC/prog"
	chmod +x "$SRC/prog"
	if [ "${3:-}" = broken ]; then touch "$SRC/broken"; else rm -f "$SRC/broken"; fi
	git -C "$SRC" add -A && git -C "$SRC" commit -q -m "$2" && git -C "$SRC" rev-parse HEAD
}
git init -q -b main "$SRC"
cp "$SCRATCH/noisy" "$SRC/noisy"
LAST=$(commit 0 base)
slow=0

cat >"$SCRATCH/agent.conf" <<CONF
[agent]
database = $DB
workdir = $SCRATCH/work

[repo]
url = file://$SRC
branches = main

[build]
command = test ! -e broken
artifacts = prog noisy
timeout_s = 60

[case work]
command = ./prog

[calibration]
runs = 0

[history]
span_commits = 16
reference = last
CONF

# peer LO HI: git bisect run over LO..HI, each step perfd pair of LO's
# program against the step's; prints "COMPARISONS SECONDS NAMED".
peer() {
	local w=$SCRATCH/peer t0 t1
	rm -rf "$w" && git clone -q "$SRC" "$w"
	git -C "$w" show "$1:prog" >"$SCRATCH/lo-prog" && chmod +x "$SCRATCH/lo-prog"
	cat >"$SCRATCH/step.sh" <<'SH'
#!/bin/sh
# One step of git bisect run: 125 (skip) when the commit does not build,
# 1 (bad) when perfd pair says it is slower than the range's start.
[ -e broken ] && exit 125
echo x >>"$PEER_COUNT"
cp "$PEER_LO" lo/prog 2>/dev/null || { mkdir -p lo && cp noisy lo/ && cp "$PEER_LO" lo/prog; }
v=$("$PEER_PERFD" pair --db "$PEER_DB" --json ./lo/prog ./prog |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["verdict"])')
[ "$v" = slower ] && exit 1
exit 0
SH
	chmod +x "$SCRATCH/step.sh"
	: >"$SCRATCH/count"
	t0=$(date +%s.%N)
	(cd "$w" && git bisect start -q "$2" "$1" >/dev/null &&
		PEER_LO=$SCRATCH/lo-prog PEER_PERFD=$PERFD PEER_DB=$SCRATCH/peer.db \
			PEER_COUNT=$SCRATCH/count git bisect run "$SCRATCH/step.sh" >"$SCRATCH/bisect.out" 2>&1 || true)
	t1=$(date +%s.%N)
	named=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' "$SCRATCH/bisect.out" | head -n 1)
	if [ -z "$named" ]; then
		named=$(grep -q "only skipped commits left" "$SCRATCH/bisect.out" && echo skipped-only || echo none)
	fi
	echo "$(wc -l <"$SCRATCH/count") $(calc "$t1 - $t0" %.1f) $named"
}

# push NAME N PLAN: N commits, where PLAN maps a commit's place (1..N) to
# "SLOW_PCT_MORE" or "broken"; then one agent run and the report.
declare -A NAME_OF
push() {
	local name=$1 n=$2 i lo=$LAST t0 t1 id plan before other
	shift 2
	for i in $(seq "$n"); do
		plan=${PLAN[$i]:-}
		if [ "$plan" = broken ]; then
			LAST=$(commit "$slow" "$name $i" broken)
		else
			[ -n "$plan" ] && slow=$(calc "((1 + $slow / 100) * (1 + $plan / 100) - 1) * 100" %.4f)
			LAST=$(commit "$slow" "$name $i")
		fi
		NAME_OF[$LAST]="$name $i"
	done
	before=$(sql "select coalesce(max(id), 0) from alerts" 2>/dev/null || echo 0)
	t0=$(date +%s.%N)
	"$PERFD" agent --config "$SCRATCH/agent.conf" --once >"$SCRATCH/agent.out" 2>"$SCRATCH/agent.err" ||
		bench_fail "the agent failed: $(tail -n 3 "$SCRATCH/agent.err")"
	t1=$(date +%s.%N)
	printf '%-6s %3d commits  agent %6.1f s' "$name" "$n" "$(calc "$t1 - $t0" %.1f)"
	id=$(sql "select max(id) from alerts where lo_oid = '$lo' and hi_oid = '$LAST'")
	other=$(sql "select count(*) from alerts where id > $before and id <> coalesce(nullif('$id', ''), 0)")
	if [ -z "$id" ]; then
		printf '  span: %s; no span alert, %d other\n' "$(sql "select c.verdict ||
			printf(' %+.2f%%', 100 * c.gain_median) from comparisons c
			join jobs j on j.id = c.job_id where j.kind = 'span' order by c.id desc limit 1")" \
			"$other"
		return
	fi
	local state steps skipped cmps found bound
	state=$(sql "select state || ' ' || bisect || printf(' %+.2f%%', 100 * gain) from alerts where id = $id")
	steps=$(sql "select count(*) from bisect_steps where alert_id = $id and outcome <> 'skipped'")
	skipped=$(sql "select count(*) from bisect_steps where alert_id = $id and outcome = 'skipped'")
	cmps=$(sql "select count(*) from comparisons c join jobs j on j.id = c.job_id
		where j.kind = 'bisect' and j.alert_id = $id")
	bound=$(calc "2 * int(log($n - 1) / log(2) + 0.999999) + 2" %d)
	found=$(sql "select what || ' ' || hi_oid || ' ' || commits || printf(' %+.2f%%', 100 * gain)
		from alert_findings where alert_id = $id order by idx" |
		while read -r what hi k g; do
			if [ "$what" = commit ]; then printf '[%s %s] ' "${NAME_OF[$hi]}" "$g"
			else printf '[range of %s to %s %s] ' "$k" "${NAME_OF[$hi]}" "$g"; fi
		done)
	printf '  alert %s: %s (%d other alerts)\n' "$id" "$state" "$other"
	printf '       bisection: %d steps (+%d skipped), %d comparisons (bound %d); found %s\n' \
		"$steps" "$skipped" "$cmps" "$bound" "$found"
	read -r pc ps pn <<<"$(peer "$lo" "$LAST")"
	case $pn in none|skipped-only) ;; *) pn=${NAME_OF[$pn]:-$pn} ;; esac
	printf '       peer git bisect run + perfd pair: %d comparisons, %s s; names [%s]\n' \
		"$pc" "$ps" "$pn"
}

echo "machine: $(machine_line)"
echo "perfd: $("$PERFD" --version)"
PLAN=()
push flat 20
PLAN=([5]=broken [7]=5)
push step 16
PLAN=()
for i in 1 2 3 4 5 6 7 8 9 10; do PLAN[$i]=0.4; done
push creep 16
PLAN=([4]=3 [11]=3)
push split 16
PLAN=()
push flat2 16
echo "comparisons in all: $(sql "select j.kind || ' ' || count(*) from comparisons c
	join jobs j on j.id = c.job_id group by j.kind" | tr '\n' ',' | sed 's/,$//')"
