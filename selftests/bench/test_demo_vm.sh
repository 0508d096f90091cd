#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo VM=1`, the part that runs in the VM: tools/demo.sh --in-vm
# takes the host's settings as scripts/vm-run.sh hands them over
# (ESA_DEMO_REPEAT, ESA_DEMO_SCENARIO and, for a scenario the guest cannot
# see, ESA_DEMO_SCENARIO_TEXT), runs them, exits 0 and leaves every result
# in $ESA_VM_OUT/demo, which vm-run copies back to the host (copying back
# is selftests/vm/vm_run.sh's). A VM test of selftests/bench/Makefile: a two-job
# scenario, one run per policy (about two minutes under TCG).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/lib/tap.sh"
tmp=$(mktemp -d /tmp/esa-demo-test.XXXXXX); trap 'rm -rf "$tmp"' EXIT

[ -n "${ESA_VM_OUT:-}" ] || { skip "tools/demo.sh --in-vm" "not in the test VM"; tap_done; }

# The host's scenario file, at a path only the host has.
scn='switch slots=8 timeout_us=3000 interval_ms=100 window=8 values=256
job id=6 workers=2 size=32K iterations=2 compute_ms=5
job id=11 workers=2 size=16K iterations=2 arrival_ms=50'
rc=0
ESA_VM_OUT=$tmp/out ESA_DEMO_REPEAT=1 ESA_DEMO_SCENARIO=/nonexistent-on-the-guest/mine.scn \
	ESA_DEMO_SCENARIO_TEXT=$scn "$ROOT/tools/demo.sh" --in-vm > "$tmp/log" 2>&1 || rc=$?
sed 's/^/# /' "$tmp/log"
out=$tmp/out/demo
check "tools/demo.sh --in-vm exits 0" [ "$rc" = 0 ]
check "the scenario came from its text (mine.scn)" grep -q 'scenario .*/mine.scn' "$tmp/log"
for f in summary.txt jct.csv stats.csv jct.png occupancy.png; do
	check "result $f is in \$ESA_VM_OUT/demo" test -s "$out/$f"
done
# jct.csv: policy,run,job,workers,size,iterations,arrival_ms,ok,jct_s
check "one run (ESA_DEMO_REPEAT=1) of jobs 6 and 11 under 3 policies, all verified" \
	[ "$(awk -F, 'NR > 1 && $2 == 1 && $8 == 1 { print $1 "/" $3 }' "$out/jct.csv" |
	     sort -u | tr '\n' ' ')" = "atp/11 atp/6 esa/11 esa/6 static/11 static/6 " ]
check "no second run" [ "$(awk -F, 'NR > 1 && $2 != 1' "$out/jct.csv" | wc -l)" = 0 ]
check "closing line" grep -Eq '^avg_jct esa=[0-9.]+ atp=[0-9.]+ static=[0-9.]+ speedup_esa_vs_atp=[0-9.]+$' \
	"$out/summary.txt"
tap_done
