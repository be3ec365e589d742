#!/bin/bash
# The demo history (kernels/demo/history): every step builds with the
# operator's recipe; its contract runner passes, except at the step whose
# edge-case bug it is there to catch; and perfd pair against the step's
# parent gives the verdict the step is there to show. Runs on whatever
# Vulkan device is present (lavapipe where there is no GPU). Real timings:
# a verdict must hold, or stay unresolved (verdict_holds).
. "$(dirname "$0")/lib.sh"
HISTORY=$(cd "$TESTS_DIR/../kernels/demo/history" && pwd) || exit 99

command -v glslc >/dev/null && command -v cc >/dev/null || exit 77
need_vulkan

BUILD='glslc shader.comp -o shader.spv && cc -O2 -std=c11 -o demo demo.c -lvulkan -lm && cc -O2 -std=c11 -o contract contract.c -lvulkan -lm'

# What each step must show: the contract runner's exit status and the
# verdict of perfd pair against the step before it.
declare -A want_contract=(
	[01-base]=0 [02-tree-reduction]=0 [03-mean-square]=0
	[04-shared-counter]=0 [05-vec4-loads]=1
)
declare -A want_verdict=(
	[02-tree-reduction]=faster [03-mean-square]=invalid
	[04-shared-counter]=slower [05-vec4-loads]=faster
)

grep -v -e '^#' -e '^$' "$HISTORY/steps" >steps.txt
check "steps name the five steps in order" eq \
	"01-base 02-tree-reduction 03-mean-square 04-shared-counter 05-vec4-loads" \
	"$(cut -f1 steps.txt | paste -sd' ')"
check "every step has a branch and a subject" eq 0 "$(awk -F'\t' 'NF != 3 || $3 !~ /^demo: /' steps.txt | wc -l)"
check "the failing runner sits on a feature branch" eq "feature/vec4-loads" \
	"$(awk -F'\t' '$1 == "05-vec4-loads" { print $2 }' steps.txt)"

parent=
mkdir "$T/stage"
while IFS=$'\t' read -r step _; do
	# A step holds the files it changes, laid over the step above.
	cp -R "$HISTORY/$step/." "$T/stage/"
	mkdir "$T/$step"
	cp -R "$T/stage/." "$T/$step/"
	check "$step builds" run 0 sh -c "cd '$T/$step' && $BUILD"

	# The runner, run from elsewhere: it finds shader.spv beside itself.
	check "$step contract runner exits ${want_contract[$step]}" run "${want_contract[$step]}" "$T/$step/contract"
	check "$step runner prints one RESULT per group" eq 3 "$(grep -c '^RESULT [a-z]* on ".*": passed=[0-9]* failed=[0-9]* total=[0-9]*$' out)"
	if [ "${want_contract[$step]}" = 0 ]; then
		check "$step runner: nothing failed" eq 0 "$(grep -c 'failed=[1-9]' out)"
	else
		check "$step runner: the ragged rows fail" eq 1 "$(grep -c '^RESULT ragged .* failed=[1-9]' out)"
		check "$step runner: the summary says so" has out "SUMMARY 8 of 14 checks passed"
	fi

	check "$step demo exits 0" run 0 "$T/$step/demo"
	check "$step demo speaks the line protocol" eq 3 \
		"$(grep -cE '^(TIMING kernel_ms=[0-9]+\.[0-9]{4}|DIGEST [0-9a-f]{12}|TIMING_RECORD_VALID)$' out)"

	if [ -n "$parent" ]; then
		verdict=${want_verdict[$step]}
		# perfd pair exits 1 for an invalid comparison.
		pair_rc=0
		[ "$verdict" = invalid ] && pair_rc=1
		check "$step against $parent: pair runs" run $pair_rc "$PERFD" pair --db "$DB" --json \
			--pairs 3 --metric kernel_ms "$T/$parent/demo" "$T/$step/demo"
		cp out "$step.json"
		if [ "$verdict" = invalid ]; then
			check "$step against $parent: verdict invalid" eq invalid "$(js "$step.json" 'd["verdict"]')"
		else
			check "$step against $parent: verdict $verdict" verdict_holds "$verdict" \
				"$(js "$step.json" 'd["verdict"]')" "$(js "$step.json" 'd["gain"]["median"]')"
		fi
		case $verdict in
		invalid)
			check "$step: digests differ" eq false "$(js "$step.json" 'd["digests"]["equal"]')"
			check "$step: the reason names the digest" eq true \
				"$(js "$step.json" 'any("digest" in r for r in d["reasons"])')"
			;;
		*)
			check "$step: digests equal" eq true "$(js "$step.json" 'd["digests"]["equal"]')"
			check "$step: every process valid" eq true "$(js "$step.json" 'all(p["valid"] for p in d["processes"])')"
			;;
		esac
		echo "# $step against $parent: $(js "$step.json" '"%s, gain %s, pairs %s" % (d["verdict"], d["gain"]["median"], [(p["old"], p["new"]) for p in d["pairs"]])')"
	fi
	parent=$step
done <steps.txt
finish
