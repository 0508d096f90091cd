#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-bench scenario files, read through `esa-sim parse`: the shipped ones
# parse; every kind of bad input is rejected with a message naming the
# line and key; esa-bench's own limits hold.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
source "$ROOT/tools/esa-bench/scenario.sh"
. "$ROOT/selftests/lib/tap.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

for f in "$ROOT"/tools/esa-bench/scenarios/*.scn; do
	if scn_load "$f" 2> "$tmp/err"; then
		ok "$(basename "$f") parses (${#JOB_IDS[@]} jobs, slots $SW_SLOTS)"
	else
		not_ok "$(basename "$f"): $(cat "$tmp/err")"
	fi
done

# A good file, then its values read back.
printf 'switch slots=64 loss=5 policies=esa,atp # c\njob id=7 workers=2 size=4K iterations=3 priority=9\n' > "$tmp/good.scn"
if scn_load "$tmp/good.scn" && [ "$SW_SLOTS" = 64 ] && [ "$SW_LOSS" = 5 ] &&
   [ "${SW_POLICIES[*]}" = "esa atp" ] && [ "${JOB_IDS[*]}" = 7 ] &&
   [ "${JOB_SIZE[7]}" = 4096 ] && [ "${JOB_PRIO[7]}" = 9 ] && [ "${JOB_COMPUTE_MS[7]}" = 0 ]; then
	ok "values and defaults read back"
else
	not_ok "values read back wrong"
fi

# mode=one-armed: the default values per packet leave room for the token.
printf 'switch slots=64 mode=one-armed\njob id=1 workers=2 size=4K iterations=1\n' > "$tmp/oa.scn"
if scn_load "$tmp/oa.scn" && [ "${SW_MODE:-}" = one-armed ] && [ "$SW_VALUES" = 361 ]; then
	ok "mode=one-armed read back, 361 values per packet"
else
	not_ok "mode=one-armed read back wrong (${SW_MODE:-unset}, ${SW_VALUES:-unset} values)"
fi
if scn_load "$tmp/good.scn" && [ "${SW_MODE:-}" = per-host ] && [ "$SW_VALUES" = 363 ]; then
	ok "no mode: per-host, 363 values per packet"
else
	not_ok "no mode read back wrong (${SW_MODE:-unset}, ${SW_VALUES:-unset} values)"
fi
if err=$("$ESA_SIM" "$tmp/oa.scn" 2>&1); then
	not_ok "the simulator ran a one-armed scenario"
elif [[ "$err" == *"mode=one-armed: the simulator models a port per host"* ]]; then
	ok "the simulator refuses mode=one-armed: $err"
else
	not_ok "the simulator's message for mode=one-armed: '$err'"
fi

# bad input -> expected fragment of the message
bad() { # expect-fragment file-content
	printf '%b' "$2" > "$tmp/bad.scn"
	check_refused "$(printf '%b' "$2" | tr '\n' ';')" "$1" \
		scn_load "$tmp/bad.scn"
}
J='job id=1 workers=2 size=4K iterations=1\n'
bad "no 'switch' line" "$J"
bad "no 'job' line" 'switch slots=8\n'
bad "switch needs slots" "switch loss=1\n$J"
bad ":1: slots=0 is out of range" "switch slots=0\n$J"
bad "whole number, not 'x'" "switch slots=x\n$J"
bad "unknown switch key 'sloths'" "switch sloths=4\n$J"
bad "unknown policy 'fifo'" "switch slots=4 policies=esa,fifo\n$J"
bad "a second 'switch' line" "switch slots=4\nswitch slots=5\n$J"
bad ":2: job needs size" "switch slots=4\njob id=1 workers=2 iterations=1\n"
bad "workers=99 is out of range" "switch slots=4\njob id=1 workers=99 size=4K iterations=1\n"
bad "multiple of 4" "switch slots=4\njob id=1 workers=2 size=6 iterations=1\n"
bad "optional K/M/G suffix" "switch slots=4\njob id=1 workers=2 size=4T iterations=1\n"
bad "defined twice" "switch slots=4\n$J$J"
bad "unknown directive 'jobs'" "switch slots=4\njobs id=1\n"
bad "expected KEY=VALUE" "switch slots=4\njob id=1 workers\n"
bad "priority=300 is out of range" "switch slots=4\njob id=1 workers=2 size=4K iterations=1 priority=300\n"
# the testbed's limits, and the simulator's own keys refused
bad ":1: slots=65537 is out of range 1..65536" "switch slots=65537\n$J"
bad ":2: workers=9 is out of range 1..8" "switch slots=4\njob id=1 workers=9 size=4K iterations=1\n"
bad "size=2G must be 4 B..1 GiB" "switch slots=4\njob id=1 workers=2 size=2G iterations=1\n"
bad ":1: 'link_gbps' is for the simulator only" "switch slots=4 link_gbps=10\n$J"
bad ":2: 'model' is for the simulator only" "switch slots=4\njob id=1 workers=2 model=resnet50 iterations=1\n"
bad ":2: 'poisson' is for the simulator only" "switch slots=4\npoisson jobs=2 mean_ms=1 workers=2 size=4K iterations=1\n"
bad "no 'switch' line" ""
bad ":1: unknown mode 'both' (per-host, one-armed)" "switch slots=4 mode=both\n$J"
bad ":1: values=363: mode=one-armed carries a job token, at most 361 values" "switch slots=4 mode=one-armed values=363\n$J"
if err=$(scn_load "$tmp/missing.scn" 2>&1); then not_ok "missing file accepted"; else ok "missing file: $err"; fi
tap_done
