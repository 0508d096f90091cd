#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-sim runs: the hand-computable scenario matches its analytical JCT
# within 1 %; the same scenario and seed twice give byte-identical
# outputs (another seed does not); every job of every policy finishes with
# every sum verified; the LAS rule preempts where fixed priorities do not;
# a sweep; bad command lines are refused.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SIM=$ROOT/build/tools/esa-sim
HERE=$ROOT/selftests/esa-sim
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$ROOT/selftests/lib/tap.sh"

echo "TAP version 13"
if [ "$(id -u)" != 0 ] || [ ! -x "$SIM" ]; then
	skip "esa-sim runs" "needs root (BPF_PROG_TEST_RUN) and $SIM"
	tap_done
fi
run() { # OUTDIR ARGS...: a run without plots, its exit status
	local out=$1; shift
	"$SIM" --no-plots --quiet -o "$out" "$@" > "$out.log" 2>&1
}

# analytic.scn: P = 16384 packets per worker, T = 342 B x 80 ps = 27.36 ns
# per frame, d = 1 us per link, s = 0.5 us in the switch, C = 1 ms compute,
# 2 iterations. The workers' links never idle, so an iteration ends when
# the last result arrives:
#   esa, static: C + (P + 1) T + 2 d + s    (worker -> switch -> worker)
#   atp:         C + (P + 3) T + 4 d + 2 s  (... -> PS -> switch -> worker)
run "$tmp/an" "$HERE/analytic.scn"
rc=$?
for p in esa atp static; do
	got=$(awk -F, -v p="$p" '$1 == p { print $NF }' "$tmp/an/jct.csv")
	want=$(awk -v p="$p" 'BEGIN {
		T = 342 * 80e-12; P = 16384; d = 1e-6; s = 0.5e-6; C = 1e-3
		it = p == "atp" ? C + (P + 3) * T + 4 * d + 2 * s : C + (P + 1) * T + 2 * d + s
		printf "%.6f", 2 * it }')
	if [ -n "$got" ] && awk -v g="$got" -v w="$want" 'BEGIN { e = (g - w) / w; exit !(e < 0.01 && e > -0.01) }'; then
		ok "analytic: $p JCT $got s, formula $want s"
	else
		not_ok "analytic: $p JCT '$got' s, formula $want s (exit $rc: $(tail -2 "$tmp/an.log"))"
	fi
done

# Determinism: seed 3 twice, byte for byte; seed 4 moves the arrivals.
run "$tmp/d1" --seed 3 "$HERE/determinism.scn"; r1=$?
run "$tmp/d2" --seed 3 "$HERE/determinism.scn"; r2=$?
run "$tmp/d3" --seed 4 "$HERE/determinism.scn"; r3=$?
if [ $r1 = 0 ] && [ $r2 = 0 ] && [ $r3 = 0 ]; then
	ok "determinism scenario: every job of every policy verified every sum (3 runs)"
else
	not_ok "determinism scenario runs failed ($r1 $r2 $r3): $(tail -3 "$tmp/d1.log")"
fi
same=1
for f in jct.csv stats.csv summary.txt jct-cdf.csv; do
	cmp -s "$tmp/d1/$f" "$tmp/d2/$f" || { same=0; echo "# $f differs between two runs with seed 3"; }
done
rows=$(($(wc -l < "$tmp/d1/stats.csv") - 1))
if [ $same = 1 ] && [ "$rows" -gt 30 ]; then
	ok "same scenario and seed twice: jct.csv, stats.csv ($rows samples), summary.txt, jct-cdf.csv byte-identical"
else
	not_ok "same scenario and seed twice: outputs differ (or only $rows samples)"
fi
if ! cmp -s "$tmp/d1/jct.csv" "$tmp/d3/jct.csv"; then
	ok "another seed gives other arrivals and JCTs"
else
	not_ok "seed 4 gave the same jct.csv as seed 3"
fi
if awk -F, 'FNR > 1 && $8 != 1 { bad = 1 } END { exit bad }' "$tmp/d1/jct.csv" "$tmp/an/jct.csv" &&
   grep -q '^avg_jct esa=.* atp=.* static=.* speedup_esa_vs_atp=' "$tmp/d1/summary.txt"; then
	ok "jct.csv ok=1 for every job, summary's closing line"
else
	not_ok "a job without verified sums, or no closing line"
fi

# Priorities: under las (the module's rule, include/esa_rules.h) the job
# that arrives while the other holds the aggregators outranks it and
# preempts; under fixed nobody outranks anybody.
run "$tmp/las" --prio las "$HERE/las.scn"; r1=$?
run "$tmp/fixed" --prio fixed "$HERE/las.scn"; r2=$?
p_las=$(awk '$1 == "preemp" { print $2 }' "$tmp/las/summary.txt" 2>/dev/null)
p_fixed=$(awk '$1 == "preemp" { print $2 }' "$tmp/fixed/summary.txt" 2>/dev/null)
if [ $r1 = 0 ] && [ $r2 = 0 ] && [ "${p_las:-0}" -gt 0 ] && [ "$p_fixed" = 0 ]; then
	ok "las: the newcomer preempts ($p_las preemptions); fixed: none"
else
	not_ok "las preemptions '$p_las', fixed '$p_fixed' (exit $r1 $r2)"
fi

# A sweep: a row per point, each point's outputs in its directory.
"$SIM" sweep --quiet --no-plots --policy esa,atp --slots 128,256 --load 1,2 \
	-o "$tmp/sw" "$HERE/analytic.scn" > "$tmp/sw.log" 2>&1
rc=$?
rows=$(awk -F, 'NR > 1 && $5 != "" { n++ } END { print n + 0 }' "$tmp/sw/sweep.csv" 2>/dev/null)
if [ $rc = 0 ] && [ "$(head -1 "$tmp/sw/sweep.csv")" = "slots,load,avg_jct_esa,avg_jct_atp,esa_vs_atp,esa_vs_static" ] &&
   [ "$rows" = 4 ] && [ -s "$tmp/sw/slots128-load2/jct.csv" ]; then
	ok "sweep: 2 slots x 2 loads in sweep.csv, each point's outputs"
else
	not_ok "sweep: exit $rc, $rows rows: $(cat "$tmp/sw/sweep.csv" 2>/dev/null | tr '\n' ';')"
fi

# Command line errors: exit 2 and a reason.
cli() { # EXPECT ARGS...
	local want=$1 err; shift
	err=$("$SIM" "$@" 2>&1); local rc=$?
	if [ $rc = 2 ] && [[ "$err" == *"$want"* ]]; then
		ok "refused: esa-sim $*"
	else
		not_ok "esa-sim $*: exit $rc, '$err', wanted '$want'"
	fi
}
cli "unknown policy 'fifo'" --policy esa,fifo --no-plots -o "$tmp/x" "$HERE/analytic.scn"
cli "--prio: unknown rule 'lifo'" --prio lifo "$HERE/analytic.scn"
cli "--seed needs a whole number" --seed -1 "$HERE/analytic.scn"
cli "--slots belongs to 'sweep'" --slots 4 "$HERE/analytic.scn"
cli "sweep needs --slots" sweep "$HERE/analytic.scn"
cli "--load needs factors" sweep --slots 8 --load 0 "$HERE/analytic.scn"
cli "--slots needs N,N,... in 1..1048576, not '8,0'" sweep --slots 8,0 --load 1 "$HERE/analytic.scn"
cli "--trace needs one policy" --trace "$tmp/t" --no-plots -o "$tmp/x" "$HERE/analytic.scn"
cli "usage: esa-sim"
tap_done
