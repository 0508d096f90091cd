#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-bench end to end on a tiny scenario: every policy runs, every job
# finishes with verified sums, the CSV files, plots and closing line are
# there; bad command lines are refused. Runs on the host (module-less) and
# in the VM (module flavour, dynamic priorities).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH=$ROOT/tools/esa-bench/esa-bench
. "$ROOT/selftests/lib/tap.sh"
tmp=$(mktemp -d /tmp/esa-bench-test.XXXXXX); trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/tiny.scn" <<'SCN'
switch slots=8 timeout_us=3000 interval_ms=100 window=8 values=256
job id=4 workers=2 size=64K iterations=2 compute_ms=5
job id=9 workers=2 size=32K iterations=2 arrival_ms=50 priority=auto
SCN
"$BENCH" --quiet -o "$tmp/out" "$tmp/tiny.scn" > "$tmp/log" 2>&1
rc=$?
sed 's/^/# /' "$tmp/log"
check "esa-bench exits 0" [ $rc = 0 ]
check "jct.csv: 2 jobs x 3 policies, all verified" \
	[ "$(awk -F, 'NR > 1 && $8 == 1' "$tmp/out/jct.csv" | wc -l)" = 6 ]
check "stats.csv has samples of both jobs under each policy" \
	[ "$(awk -F, 'NR > 1 { print $1 "/" $4 }' "$tmp/out/stats.csv" | sort -u | wc -l)" = 6 ]
check "the aggregated counter rose for every job" \
	[ "$(awk -F, 'NR > 1 && $6 > 0 { print $1 "/" $4 }' "$tmp/out/stats.csv" | sort -u | wc -l)" = 6 ]
is_png() { [ "$(head -c 4 "$1" | tail -c 3)" = PNG ] && [ "$(stat -c %s "$1")" -gt 1000 ]; }
check "occupancy.png is a PNG image" is_png "$tmp/out/occupancy.png"
check "jct.png is a PNG image" is_png "$tmp/out/jct.png"
tail -n1 "$tmp/log" > "$tmp/last"
check "closing line" grep -Eq '^avg_jct esa=[0-9.]+ atp=[0-9.]+ static=[0-9.]+ speedup_esa_vs_atp=[0-9.]+$' "$tmp/last"

# The same jobs on a one-armed switch (switch mode=one-armed): hosts
# behind a bridge, the switch one port on it, jobs with tokens.
sed 's/^switch .*/switch slots=8 timeout_us=3000 interval_ms=100 window=8 values=256 mode=one-armed/' \
	"$tmp/tiny.scn" > "$tmp/oa.scn"
"$BENCH" --quiet -o "$tmp/oa" "$tmp/oa.scn" > "$tmp/oa.log" 2>&1
rc=$?
sed 's/^/# /' "$tmp/oa.log"
check "mode=one-armed: esa-bench exits 0" [ $rc = 0 ]
check "mode=one-armed: the summary says the switch was one-armed" \
	grep -q "^# one-armed switch: hosts behind a bridge" "$tmp/oa/summary.txt"
check "mode=one-armed: jct.csv: 2 jobs x 3 policies, all verified" \
	[ "$(awk -F, 'NR > 1 && $8 == 1' "$tmp/oa/jct.csv" 2> /dev/null | wc -l)" = 6 ]
check "mode=one-armed: the aggregated counter rose for every job" \
	[ "$(awk -F, 'NR > 1 && $6 > 0 { print $1 "/" $4 }' "$tmp/oa/stats.csv" 2> /dev/null | sort -u | wc -l)" = 6 ]

refused() { # expect-fragment args...
	local want=$1
	shift
	check_refused "esa-bench $*" "$want" "$BENCH" "$@"
}
out=$("$BENCH" --version 2>&1)
check "--version names the ESA version" [ "${out%% (git*}" = "esa-bench (ESA) $(cat "$ROOT/VERSION")" ]
refused "unknown option '--bogus'" --bogus "$tmp/tiny.scn"
refused "--repeat needs a count" --repeat 0 "$tmp/tiny.scn"
refused "unknown policy 'fifo'" --policies esa,fifo "$tmp/tiny.scn"
refused "cannot read scenario" "$tmp/missing.scn"
refused "one scenario only" "$tmp/tiny.scn" "$tmp/tiny.scn"
refused "sweep needs --slots" sweep "$tmp/tiny.scn"
refused "--slots belongs to 'sweep'" --slots 8 "$tmp/tiny.scn"
tap_done
