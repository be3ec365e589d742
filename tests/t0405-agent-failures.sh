#!/bin/bash
# A failed job where the user looks: the agent's console and its --once
# summary show the last lines of a failed build's log with the commands
# that show all of it (perfd log) and queue the job again (perfd retry);
# perfd log prints the log from the database; a changed [build] recipe
# builds a failed head again at the next poll, perfd retry without one.
. "$(dirname "$0")/lib.sh"
need git cc
new_src
work_prog "$SRC/prog.c" 1000000 7
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
echo "RESULT contract on \"cpu\": passed=1 total=1"
SH
# The committed recipe, as a new user writes it: its wrapper lives where
# the build cannot see it.
cat >"$SRC/build.sh" <<'SH'
#!/bin/sh
echo "prog.c:3:5: error: expected ';' before '}' token"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo "build step $i"; done
echo "build.sh: /nowhere/wrapper: not found" >&2
exit 1
SH
chmod +x "$SRC/check.sh" "$SRC/build.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm "first"
C1=$(git -C "$SRC" rev-parse HEAD)

conf() {
	cat >agent.conf <<CONF
$(agent_repo)

$(work_suite "$@")
CONF
}
conf build=./build.sh
check "a failing build" run 0 "$PERFD" agent --config agent.conf --once
check "the job failed" eq "1 failed" "$(sql "select id, state from jobs where commit_oid = '$C1'" | tr '|' ' ')"
check "the console says which build failed and why" has err "job 1: build 1 of ${C1:0:12} failed: the build recipe exited 1; the last 10 of its 17 lines:"
check "  with its last lines" has err "  | build step 7"
check "  up to the last" has err "  | build.sh: /nowhere/wrapper: not found"
check "  and no more" eq 0 "$(grep -c "| build step 6$" err)"
check "  then its first error, before them" has err "  its first error, line 1:"
check "  the line itself" has err "  | prog.c:3:5: error: expected ';' before '}' token"
check "  the command to see all of it" has err "all of it: perfd log build 1 --db $DB"
check "  and to queue it again" has err "once fixed: perfd retry 1 --db $DB"
check "the summary says it too" has out "failures:"
check "  with the lines" has out "  | build step 15"
check "  and the commands" has out "perfd log build 1 --db $DB"

check "perfd log build prints the whole log" run 0 "$PERFD" log build 1 --db "$DB"
check "  from its first line" has out "build step 1"
check "  to its last" has out "build.sh: /nowhere/wrapper: not found"
check "  with the build's state" has out "build 1 of $C1"
check "  and why" has out "failed: the build recipe exited 1"
check "perfd log job prints its builds" run 0 "$PERFD" log job 1 --db "$DB"
check "  the job" has out "job 1: main at $C1"
check "  and its build's log" has out "build step 1"
check "no such build" run 2 "$PERFD" log build 99 --db "$DB"
check "  said" has err "no build 99 in '$DB'"
check "no such job" run 2 "$PERFD" log job 99 --db "$DB"
check "  said" has err "no job 99 in '$DB'"
check "not a number" run 2 "$PERFD" log build one --db "$DB"
check "  said" has err "'one' is not a build's id"
check "neither build nor job" run 2 "$PERFD" log comparison 1 --db "$DB"
check "perfd log --help" run 0 "$PERFD" log --help
check "  names perfd retry" has out "perfd retry"

# The head has not moved and the recipe is the same: not built again.
check "a second run" run 0 "$PERFD" agent --config agent.conf --once
check "  builds nothing" has out "builds made 0, cache hits 0"
check "  still one build" eq 1 "$(sql "select count(*) from builds")"

# perfd retry: the failed build is set aside, and built again.
check "retry of a job that is not there" run 2 "$PERFD" retry 99 --db "$DB"
check "  said" has err "no job 99 of this agent"
check "retry of a head with no job" run 2 "$PERFD" retry nosuch --db "$DB"
check "  said" has err "'nosuch' is neither a job's id"
check "retry of a branch with no failed job" run 2 "$PERFD" retry --branch nosuch --db "$DB"
check "  said" has err "branch 'nosuch' has no failed job"
check "retry with no job named" run 2 "$PERFD" retry --db "$DB"
check "perfd retry JOB" run 0 "$PERFD" retry 1 --db "$DB"
check "  says what it did" has out "job 1 (main at ${C1:0:12}): queued again, 1 build set aside"
check "  the job is queued" eq queued "$(sql "select state from jobs where id = 1")"
check "  the build set aside, why said" eq "set aside by perfd retry of job 1" "$(sql "select reason from stale_builds where build_id = 1")"
check "retry of a queued job" run 2 "$PERFD" retry 1 --db "$DB"
check "  said" has err "job 1 (main at ${C1:0:12}) is queued, not failed: nothing to retry"
check "the run after the retry" run 0 "$PERFD" agent --config agent.conf --once
check "  built the head again" has out "builds made 1, cache hits 0"
check "  a second build" eq "2 failed" "$(sql "select count(*), max(state) from builds" | tr '|' ' ')"
check "  the job failed again" eq failed "$(sql "select state from jobs where id = 1")"
check "  said with the new build" has err "perfd log build 2 --db $DB"
check "perfd retry --branch" run 0 "$PERFD" retry --branch main --db "$DB"
check "  queued it" eq queued "$(sql "select state from jobs where id = 1")"
check "perfd retry HEAD" run 2 "$PERFD" retry main --db "$DB"
check "  finds it queued" has err "is queued, not failed"
check "and it is built again" run 0 "$PERFD" agent --config agent.conf --once
check "  a third build" eq 3 "$(sql "select count(*) from builds")"

# The recipe fixed in the agent's configuration: built again at once.
conf
check "the run after the fix" run 0 "$PERFD" agent --config agent.conf --once
check "  says why it queued the job" has err "job 1: queued again: it failed with another [build] recipe"
check "  built the head" has out "builds made 1, cache hits 0"
check "  the job is done" eq done "$(sql "select state from jobs where id = 1")"
check "  its runner ran on the new build" eq 1 "$(sql "select count(*) from runner_results r join builds b on b.id = r.build_id where b.state = 'done'")"
check "  still one job" eq 1 "$(sql "select count(*) from jobs")"
check "a run after that builds nothing" run 0 "$PERFD" agent --config agent.conf --once
check "  nothing" has out "builds made 0, cache hits 0"

# A contract runner that fails is said the same way, with its output.
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
echo "checking the cpu"
echo "check.sh: the result differs" >&2
exit 3
SH
git -C "$SRC" commit -qam "a failing contract"
check "a failing runner" run 0 "$PERFD" agent --config agent.conf --once
check "  said with its output" has err "job 2: runner contract of build 5 exited 3; its output:"
check "  its lines" has err "  | check.sh: the result differs"
check "perfd log build shows the runner's output" run 0 "$PERFD" log build 5 --db "$DB"
check "  its end" has out "--- runner contract: exited 3"
check "  its output" has out "check.sh: the result differs"

# A comparison that ends invalid: said with its reason and the end of the
# failing process's stderr; the job is not failed by it, so no retry.
cat >"$SRC/check.sh" <<'SH'
#!/bin/sh
echo "RESULT contract on \"cpu\": passed=1 total=1"
SH
cat >"$SRC/prog.c" <<'C'
#include <stdio.h>
int main(void)
{
	fprintf(stderr, "prog: cannot open 'input.txt'\n");
	return 1;
}
C
git -C "$SRC" commit -qam "a program that fails"
check "an invalid comparison" run 0 "$PERFD" agent --config agent.conf --once
cid=$(sql "select id from comparisons where job_id = 3 and kind = 'compare'")
check "  it is invalid" eq invalid "$(sql "select verdict from comparisons where id = $cid")"
check "  said with the process's stderr" has err "  | prog: cannot open 'input.txt'"
check "  naming the comparison" has err "job 3: case work: comparison $cid is invalid: "
check "  and the command that shows it" has err "all of it: perfd show $cid --db $DB"
check "  no retry offered for a job that did not fail" eq 0 "$(grep -c "perfd retry 3 " err)"

finish
