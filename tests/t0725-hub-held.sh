#!/bin/bash
# A held commit at the hub (docs/hub.md, "Held commits at the hub"): two
# agents of one kind of device (gfx-a and gfx-b, profiles on lavapipe)
# under a hub with [github] and a fake forge. gfx-b measures alice's pull
# request; on gfx-a its case hangs and the machine goes down (the agent
# killed with its children, the boot id changed, a pstore record left).
# gfx-a's next start holds the commit, and its heartbeat brings the hold to
# the hub: the pull request's comment and status perfd/gfx-a say "held"
# with what the commit did and the way out, gfx-b's row warns of it, and
# /api/v1/hosts and /metrics count it. "/perfd greenlight gfx-a" from a
# commenter off the allow list releases nothing; from alice, a listed
# maintainer, the hub records it, gfx-a's next heartbeat releases the hold
# and clears the host, and the step runs once.
. "$(dirname "$0")/lib.sh"
need git curl
need_vulkan --host lavapipe
GHTOKEN=ghp_$(printf 'g%.0s' $(seq 36))
S=$T/shared
mkdir -m 777 "$S"
export PERFD_BOOT_ID_FILE=$T/boot_id
echo 11111111-1111-1111-1111-111111111111 >"$PERFD_BOOT_ID_FILE"
chmod 644 "$PERFD_BOOT_ID_FILE"

# ---- the repository: alice's head hangs its new arm while hang-on exists ----
new_src
cat >"$SRC/hang.sh" <<SH
#!/bin/sh
if [ -f "$S/hang-on" ] && [ "\$PERFD_ARM" = new ] && [ -f "\$(dirname "\$0")/v.txt" ]; then
	echo "\$PERFD_SEQ" >"$S/hanging"
	while :; do sleep 1; done
fi
echo "TIMING t_ms=1"
SH
printf '#!/bin/sh\necho "RESULT contract on \\"cpu\\": passed=1 total=1"\n' >"$SRC/check.sh"
chmod +x "$SRC/hang.sh" "$SRC/check.sh"
git -C "$SRC" add -A && git -C "$SRC" commit -qm base
BASE=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q -b alice-1
echo 1 >"$SRC/v.txt"
git -C "$SRC" add v.txt && git -C "$SRC" commit -qm "a kernel that hangs the GPU"
HEAD1=$(git -C "$SRC" rev-parse HEAD)
git -C "$SRC" checkout -q main
git -C "$SRC" update-ref refs/pull/5/head "$HEAD1"

fake_github "$GHTOKEN" --git-dir "$SRC" --max-seconds 600
ctl POST pulls "[{\"number\": 5, \"author\": \"alice\", \"head_sha\": \"$HEAD1\", \"head_ref\": \"alice-1\", \"base_ref\": \"main\", \"base_sha\": \"$BASE\"}]" >/dev/null
status_of() { # SHA CONTEXT: the newest status "state: description"
	ctl GET state >"$T/state.json"
	js "$T/state.json" "''.join([s['state'] + ': ' + s['description'] for s in d['statuses'] if s['sha'] == '$1' and s['context'] == '$2'][-1:])"
}
comment() { # perfd's comment on pull request 5, into comment.md
	ctl GET state >"$T/state.json"
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); c = [c["body"] for c in d["comments"] if c["pr"] == 5 and c["user"]["login"] == "perfd-bot"]; open(sys.argv[2], "w").write(c[-1] if c else "")' "$T/state.json" "$T/comment.md"
}

# ---- the hub ----
hub_github "gfx-a gfx-b"
for h in gfx-a gfx-b; do
	"$PERFD" token new "$h" --config hub.conf >"tok-$h" 2>/dev/null
	chmod 600 "tok-$h"
done
"$PERFD" serve --config hub.conf 2>>"$T/hub.err" &
hub=$!
kill_at_exit hub
check "the hub starts" wait_for "the hub's port" 10 curl -sf -o /dev/null "$HUBURL/api/v1/hosts"

# ---- the agents: one kind of device, the shipped gfx1201 fault patterns ----
for h in gfx-a gfx-b; do
	{
		printf '[host]\nname = %s\n[device]\ndevice_match = llvmpipe\nexpected_driver = llvmpipe\n' "$h"
		printf '[timing]\nprocess_timeout_s = %s\n' "$(slow_s 20)"
		printf '[faults]\nfault_log = %s/kmsg\nboot_log_command =\nboot_log = %s/pstore-%s\n' "$S" "$T" "$h"
		grep '^fault_pattern' "$TESTS_DIR/../hosts/gfx1201.conf"
	} >"$h.conf"
	cat >"$h-agent.conf" <<CONF
$(agent_repo database="$T/$h.db" workdir="$T/work-$h" host="$T/$h.conf" pulls=true)

$(section calibration runs=0 idle_budget_s=0)

$(section hub url="$HUBURL" token_file="$T/tok-$h")

$(section sandbox rw="$S")

$(section build command=true artifacts="hang.sh check.sh" timeout_s=60)

$(section "runner contract" command=./check.sh timeout_s=10)

$(section "case hang" command=./hang.sh pairs=2 max_pairs=2 warmup=0)
CONF
done
: >"$S/kmsg"
chmod 666 "$S/kmsg"
once() { "$PERFD" agent --config "$1-agent.conf" --once >"$T/$1.out" 2>>"$T/$1.err"; }

check "gfx-b measures alice's head" once gfx-b
check "  its job done" eq done "$(sqlite3 gfx-b.db "select state from jobs where commit_oid = '$HEAD1'")"

# ---- gfx-a: the machine goes down while the head's case hangs ----
touch "$S/hang-on"
"$PERFD" agent --config gfx-a-agent.conf --once >"$T/gfx-a.out" 2>>"$T/gfx-a.err" &
AGENT=$!
kill_at_exit AGENT
check "on gfx-a the head's new arm hangs" wait_for "$S/hanging" 60 test -s "$S/hanging"
kill -9 $AGENT
wait $AGENT 2>/dev/null
AGENT=
rm -f "$S/hang-on"
echo 22222222-2222-2222-2222-222222222222 >"$PERFD_BOOT_ID_FILE"
mkdir "$T/pstore-gfx-a"
printf '%s\n' "<3>[ 4252.100000] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=1, emitted seq=3" \
	"<6>[ 4252.200000] amdgpu 0000:03:00.0: amdgpu: MODE1 reset" >"$T/pstore-gfx-a/dmesg-ramoops-0"
check "gfx-a's next start holds the commit (exit 3)" run 3 "$PERFD" agent --config gfx-a-agent.conf --once
check "  and says how a maintainer releases it at the hub" has err "at the hub, a maintainer's '/perfd greenlight gfx-a' on its pull request releases it"
heard() { [ "$(sqlite3 "$HUB" "select count(*) from hub_holds where host = 'gfx-a' and in_force and commit_oid = '$HEAD1' and why = 'went-down'")" = 1 ]; }
check "the hub hears the hold" wait_for "gfx-a's hold at the hub" 10 heard
check "  with the host's kind" eq llvmpipe "$(sqlite3 "$HUB" "select kind from host_status where host = 'gfx-a'")"
held_status() { case "$(status_of "$HEAD1" perfd/gfx-a)" in "error: held; a maintainer's '/perfd greenlight gfx-a' runs it: the machine went down while case 'hang' of commit ${HEAD1:0:12}"*) return 0 ;; esac; return 1; }
check "status perfd/gfx-a: error, held, with the way out" wait_for "the held status" 10 held_status
row() { grep -F "| $1 | [$2](" "$T/comment.md"; } # HOST STATE: its row in comment.md
rows() { comment; row gfx-a held | grep -qF "| held; a maintainer's '/perfd greenlight gfx-a' runs it: the machine went down while case 'hang' of commit ${HEAD1:0:12} ran (boot 11111111"; }
check "the comment's gfx-a row: held, with what the commit did" wait_for "gfx-a's held row" 10 rows
check "  and the previous boot's fault line (in Markdown)" eq 1 "$(row gfx-a held | grep -cF "fault line: '&lt;3&gt;\[ 4252.100000\] \[drm:amdgpu\_job\_timedout \[amdgpu\]\] \*ERROR\* ring gfx\_0.0.0 timeout")"
check "gfx-b's row: done, warned of the hold on gfx-a" eq 1 "$(row gfx-b done | grep -cF "; warning: held on gfx-a, of the same kind: the machine went down while case 'hang' of commit ${HEAD1:0:12}")"
check "  its status still success" has <(status_of "$HEAD1" perfd/gfx-b) "success: "
curl -s -o "$T/hosts.json" "$HUBURL/api/v1/hosts"
check "/api/v1/hosts: gfx-a holds one commit, gfx-b none" eq "gfx-a:1 gfx-b:0" "$(js "$T/hosts.json" '" ".join("%s:%d" % (h["name"], h["held"]) for h in d["hosts"])')"
check "  saying what it did" eq true "$(js "$T/hosts.json" '[h for h in d["hosts"] if h["name"] == "gfx-a"][0]["hold"].startswith("the machine went down while case ")')"
check "/metrics counts it" has <(curl -s "$HUBURL/metrics") 'perfd_holds{why="went-down"} 1'

# ---- the green light: not from a commenter off the allow list ----
ctl POST comments '{"pr": 5, "author": "mallory", "body": "/perfd greenlight gfx-a"}' >/dev/null
# listings: how many times the hub has listed the open pull requests.
listings() { grep -c '"path": "/repos/acme/engine/pulls"' "$T/gh.log"; }
NLIST=$(listings)
polled() { [ "$(listings)" -ge $((NLIST + 2)) ]; }
check "mallory's /perfd greenlight: the hub polls after it" wait_for "two listings of the pull requests" 10 polled
check "  reading pull request 5's comments" eq True "$(python3 -c 'import json, sys; print(any(json.loads(l)["path"] == "/repos/acme/engine/issues/5/comments" and json.loads(l)["method"] == "GET" for l in open(sys.argv[1]).readlines()[-40:]))' "$T/gh.log")"
check "  and releases nothing" eq "" "$(sqlite3 "$HUB" "select greenlit_by from hub_holds where host = 'gfx-a'")"
check "  gfx-a still holds it (exit 3)" run 3 "$PERFD" agent --config gfx-a-agent.conf --once
check "  its hold in force" eq 1 "$(sqlite3 gfx-a.db "select count(*) from holds where released_at is null")"
ctl POST comments '{"pr": 5, "author": "alice", "body": "/perfd greenlight gfx-a\nthe hang is understood"}' >/dev/null
greenlit() { [ "$(sqlite3 "$HUB" "select greenlit_by || ' ' || greenlit_pr from hub_holds where host = 'gfx-a'")" = "alice 5" ]; }
check "alice's /perfd greenlight: recorded at the hub" wait_for "the green light" 10 greenlit
check "  said in the hub's log" wait_for "the hub's log line" 10 grep -q "pull request 5 at ${HEAD1:0:12}: 1 held step released by /perfd greenlight" "$T/hub.err"
released_status() { case "$(status_of "$HEAD1" perfd/gfx-a)" in "error: held; released by alice's /perfd greenlight, waiting for the host: "*) return 0 ;; esac; return 1; }
check "  the status says it waits for the host" wait_for "the released status" 10 released_status
check "gfx-a's next run: released by its heartbeat's answer, still exit 3" run 3 "$PERFD" agent --config gfx-a-agent.conf --once
check "  the hold released, by whom" eq "/perfd greenlight by alice on pull request #5, at the hub" "$(sqlite3 gfx-a.db "select released_by from holds")"
check "  said in its log" has err "hold 1 released by /perfd greenlight by alice on pull request #5, at the hub: the machine went down"
check "  the host cleared" eq 0 "$(sqlite3 gfx-a.db "select count(*) from hosts where quarantined = 1")"
check "the next run runs the step once" once gfx-a
check "  its job done" eq done "$(sqlite3 gfx-a.db "select state from jobs where commit_oid = '$HEAD1'")"
check "  one comparison done beside the abandoned one" eq "abandoned done" "$(sqlite3 gfx-a.db "select group_concat(state, ' ') from (select state from comparisons where job_id = (select id from jobs where commit_oid = '$HEAD1') order by id)")"
check "the hub: the hold no longer in force, kept" eq "0 alice" "$(sqlite3 "$HUB" "select in_force || ' ' || greenlit_by from hub_holds where host = 'gfx-a'")"
done_row() { comment; row gfx-a done >/dev/null; }
check "  gfx-a's row done" wait_for "gfx-a's done row" 10 done_row
check "  no warning on gfx-b's any more" eq 0 "$(grep -c "warning: held on gfx-a" "$T/comment.md")"
check "  status perfd/gfx-a success" has <(status_of "$HEAD1" perfd/gfx-a) "success: "
check "perfd verify on gfx-a's database" run 0 "$PERFD" verify --db gfx-a.db
check "  and on the hub's" run 0 "$PERFD" verify --db "$HUB"
kill "$hub"; wait "$hub" 2>/dev/null
finish
