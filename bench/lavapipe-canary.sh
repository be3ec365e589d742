#!/usr/bin/env bash
# The canary on this machine's Vulkan device (lavapipe without a GPU): the
# wall time of five runs and their digests, which must all be equal.
#   bench/lavapipe-canary.sh [PERFD] [PROFILE]
set -eu
PERFD=${1:-build/daemon/perfd}
PROFILE=${2:-hosts/lavapipe.conf}
digests=""
for i in 1 2 3 4 5; do
	t0=$(date +%s.%N)
	out=$("$PERFD" canary --host "$PROFILE")
	t1=$(date +%s.%N)
	d=$(printf '%s\n' "$out" | sed -n 's/^DIGEST //p')
	timing=$(printf '%s\n' "$out" | sed -n 's/^TIMING //p')
	printf 'run %d: wall %.2f s, %s, digest %s\n' "$i" "$(awk "BEGIN { print $t1 - $t0 }")" "$timing" "$d"
	digests="$digests$d\n"
done
n=$(printf "$digests" | sort -u | wc -l)
echo "distinct digests over 5 runs: $n"
[ "$n" = 1 ]
