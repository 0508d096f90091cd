#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# test_fuzz against the module flavour, in the VM with the esa module
# loaded: jobs 1..3 of test_fuzz's plan (fan-in 3, 4, 2; priorities 1..3;
# quotas 6, 5, 5, so the module's static slices are test_fuzz's 0+6, 6+5,
# 11+5 on 16 slots) registered through aggctl; test_fuzz --kmod then sets
# each segment's policy and timeout through aggctl. The jobs are removed
# on exit.
#
# usage: test_fuzz_kmod.sh [packets-per-segment [seed]]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/lib/tap.sh"
AGG=$ROOT/build/tools/aggctl

[ -d /sys/module/esa ] || { skip "test_fuzz, module flavour" "needs the esa module loaded (the VM)"; tap_done; }
# The module keeps its settings across the tests of one boot: restore them.
read -r POL SLOTS TMO <<< "$("$AGG" -j switch show | python3 -c 'import json,sys
j = json.load(sys.stdin); print(j["policy"], j["agg_slots"], j["agg_timeout_us"])')"
cleanup() {
	local j
	for j in 1 2 3; do "$AGG" job del id $j > /dev/null 2>&1; done
	[ -n "$TMO" ] && "$AGG" policy set "$POL" && "$AGG" switch set slots "$SLOTS" timeout "$TMO"
}
trap cleanup EXIT
for j in 1 2 3; do "$AGG" job del id $j > /dev/null 2>&1; done
fans=(0 3 4 2) quotas=(0 6 5 5) bases=(0 0 6 11)
"$AGG" policy set esa && "$AGG" switch set slots 16 || bail "configure the module with aggctl"
for j in 1 2 3; do
	workers=()
	for ((w = 0; w < fans[j]; w++)); do
		workers+=(worker "10.77.$j.$((10 + w)):$((40000 + j * 100 + w))")
	done
	"$AGG" job add id $j ps "10.77.$j.1:47000" "${workers[@]}" priority $j \
		quota "${quotas[j]}" || bail "job add $j"
done
# The oracle's static slices must be the module's.
"$AGG" policy set static || bail "policy static"
for j in 1 2 3; do
	rec=$("$AGG" -j job show id $j | tr -d ' \n')
	check "job $j: static slice ${bases[j]}+${quotas[j]}" \
		grep -Eq "\"agg_base\":${bases[j]},.*\"agg_slice\":${quotas[j]}[,}]" <<< "$rec"
done
rc=0
"$ROOT/build/selftests/bpf/test_fuzz" --kmod "$AGG" "$@" > "/tmp/test_fuzz_kmod.$$" 2>&1 || rc=$?
# its results become this test's (kselftest.h prints "ok N desc")
while IFS= read -r line; do
	if [[ $line =~ ^(not\ ok|ok)\ [0-9]+\ (-\ )?(.*)$ ]]; then
		if [ "${BASH_REMATCH[1]}" = ok ]; then ok "${BASH_REMATCH[3]}"; else not_ok "${BASH_REMATCH[3]}"; fi
	elif [[ ! $line =~ ^(TAP\ version|1\.\.) ]]; then
		echo "$line"
	fi
done < "/tmp/test_fuzz_kmod.$$"
rm -f "/tmp/test_fuzz_kmod.$$"
[ "$rc" = 0 ] || [ "$__tap_failed" != 0 ] || not_ok "test_fuzz exited with status $rc"
tap_done
