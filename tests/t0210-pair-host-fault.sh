#!/bin/bash
# perfd pair --host: the profile's device must be present, its settings
# apply, the fingerprint is stored, and a fault line in the kernel log
# invalidates the process and quarantines the host until it is cleared.
. "$(dirname "$0")/lib.sh"
: "${PLANT:?}"
HOSTS=$(cd "$TESTS_DIR/../hosts" && pwd)

need_vulkan --host "$HOSTS/lavapipe.conf"

# Without --host: the host part of the fingerprint, no device.
check "pair without a profile" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 "$PLANT" "$PLANT"
check "host fingerprint stored" eq "[] $(uname -r)" "$(js out 'str(d["fingerprint"]["devices"])+" "+d["fingerprint"]["host"]["kernel_release"]')"
check "no fault watch without a profile" eq None "$(js out 'str(d["processes"][0]["fault_watch"])')"

check "pair --host lavapipe" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 --host lavapipe "$PLANT" "$PLANT"
check "host is the profile's name" eq lavapipe "$(js out 'd["host"]')"
check "Vulkan fingerprint stored" has out '"name": "llvmpipe'
check "profile bound applied" eq 60 "$(js out 'd["settings"]["timeout_s"]')"
check "an explicit --timeout wins" run 0 "$PERFD" pair --db "$DB" --json --pairs 1 --max-pairs 1 --timeout 30 --host lavapipe "$PLANT" "$PLANT"
check "explicit bound stored" eq 30 "$(js out 'd["settings"]["timeout_s"]')"
check "fault watch on" eq on "$(js out 'd["processes"][0]["fault_watch"]')"

check "absent device refused" run 3 "$PERFD" pair --db "$DB" --host m1 "$PLANT" "$PLANT"
check "and named" has err "expects a device named like 'Apple M1 (G13G'"
check "nothing stored for it" eq 3 "$(sql 'select count(*) from comparisons')"

# A profile of our own, watching a log file the fixture writes to.
cat >faulty.conf <<CONF
[host]
name = faulty
[device]
device_match = llvmpipe
expected_driver = llvmpipe
[timing]
process_timeout_s = 20
cooldown_ms = 10
noise = 0.2
min_effect = 0.02
[faults]
fault_log = $T/kmsg
fault_pattern = GPU HANG
CONF
: >kmsg
check "a fault invalidates" run 1 "$PERFD" pair --db "$DB" --json --warmup 0 --host ./faulty.conf "$PLANT" "$PLANT" -- --bad-arm new --bad-pair 2 --mode fault --fault-log "$T/kmsg"
cp out fault.json
check "profile thresholds applied" eq "0.2 0.02" "$(js fault.json 'str(d["settings"]["noise"])+" "+str(d["settings"]["min_effect"])')"
check "the process quotes the line" has fault.json 'GPU fault in the kernel log: \"[ 4242.000001] i915 0000:00:02.0: [drm] GPU HANG'
check "the fault stored on the process" eq 3 "$(js fault.json '[p["seq"] for p in d["processes"] if p["fault"]][0]')"
check "no process ran after the fault" eq 3 "$(js fault.json 'len(d["processes"])')"
check "the warning names the fault" has err "is quarantined: no GPU work runs on it until 'perfd host clear faulty'"
check "host list shows it" run 0 "$PERFD" host list --db "$DB"
check "quarantined" has out "faulty           quarantined"
check "quarantined host refused" run 3 "$PERFD" pair --db "$DB" --host ./faulty.conf "$PLANT" "$PLANT"
check "naming the fault" has err "): a GPU fault while case 'default' ran (its process 3, new arm); fault line: '[ 4242.000001] i915"
check "and the command that lifts it" has err "perfd host clear --db $DB faulty"
check "perfd host clear" run 0 "$PERFD" host clear --db "$DB" faulty
check "says lifted" has out "host 'faulty': quarantine lifted"
check "runs again after clearing" run 0 "$PERFD" pair --db "$DB" --pairs 1 --max-pairs 1 --host ./faulty.conf "$PLANT" "$PLANT"
check "clearing twice says so" run 0 "$PERFD" host clear --db "$DB" faulty
check "not quarantined" has out "was not quarantined"
check "fault comparison verifies" run 0 "$PERFD" verify --db "$DB"

# An unreadable log is said once and recorded on every process.
sed "s|fault_log = .*|fault_log = $T/missing/kmsg|" faulty.conf >blind.conf
check "unreadable log: runs" run 0 "$PERFD" pair --db "$DB" --json --pairs 2 --max-pairs 2 --warmup 0 --host ./blind.conf "$PLANT" "$PLANT"
check "said once" eq 1 "$(grep -c 'fault watch off' err)"
check "recorded on every process" eq "4" "$(js out 'sum(1 for p in d["processes"] if p["fault_watch"].startswith("off: "))')"
check "flagged" has out '"fault-watch-off"'
finish
