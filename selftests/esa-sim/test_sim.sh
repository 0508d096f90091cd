#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-sim runs: the hand-computable scenario matches its analytical JCT
# within 1 %; the same scenario and seed twice give byte-identical
# outputs (another seed does not); every job of every policy finishes with
# every sum verified; the LAS rule preempts where fixed priorities do not
# and ranks jobs, not workers; a lost first packet is resent after the
# path's timeout; a job's window colliding whole at its PS drops nothing
# there and the job finishes within its bound; the evaluation's claims on wide.scn and demo.scn hold; the
# oversubscription sweep's command; a sweep; bad command lines are refused.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/selftests/esa-sim
. "$HERE/lib.sh"

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

# Priority by job: las_width.scn's jobs have the same gradient and 4 and
# 32 workers. The data frames each job sends into the switch carry its
# LAS priority (re-stamped every millisecond); in every 100 us of virtual
# time where both sent, the last priority of each must be equal, and they
# must have been served (below the top) in at least 3 such intervals.
run "$tmp/width" --trace "$tmp/width.trace" "$HERE/las_width.scn"; rc=$?
read -r both served unequal < <(awk '
	$2 == "in" && $4 ~ /^flags=0x0[0-7]$/ {
		split($5, j, "="); split($9, p, "=")
		t = int($1 / 1e5); last[t, j[2]] = p[2]; seen[t] = 1
	}
	END {
		for (t in seen) {
			if (!((t, 1) in last) || !((t, 2) in last))
				continue
			both++
			if (last[t, 1] < 255) served++
			if (last[t, 1] != last[t, 2]) {
				unequal++
				printf "# at %d00 us: 4 workers %d, 32 workers %d\n", t, last[t, 1], last[t, 2] > "/dev/stderr"
			}
		}
		print both + 0, served + 0, unequal + 0
	}' "$tmp/width.trace")
if [ $rc = 0 ] && [ "$served" -ge 3 ] && [ "$unequal" = 0 ]; then
	ok "las: 4 and 32 workers with the same gradient stamp equal priorities ($both intervals, $served served)"
else
	not_ok "las: 4 vs 32 workers: $unequal of $both intervals unequal, $served served (exit $rc)"
fi

# The first timeout follows the path: first_loss.scn's first packet is
# sent after the 1 ms compute and lost (seed 1, lost frames never reach
# the switch); its resend must reach the switch within 2 resend floors
# (200 us) of that, not after a fixed 100 ms.
run "$tmp/fl" --seed 1 --trace "$tmp/fl.trace" "$HERE/first_loss.scn"; rc=$?
read -r first resent < <(awk '$2 == "in" && $5 == "job=1" && $6 == "seq=0" {
		if ($4 == "flags=0x00" && !t0) t0 = $1
		if ($4 == "flags=0x01" && !t1) t1 = $1
	} END { print t0 + 0, t1 + 0 }' "$tmp/fl.trace")
if [ $rc = 0 ] && [ "$first" = 0 ] && [ "$resent" -gt 1000000 ] && [ "$resent" -lt 1400000 ]; then
	ok "first loss: the lost first packet resent at $resent ns (compute ends at 1 ms, floor 200 us)"
else
	not_ok "first loss: first packet at '$first' ns, resent at '$resent' ns, wanted lost and resent in 1-1.4 ms (exit $rc)"
fi

# Incast at the PS: incast.scn's second job sends its first window while
# the first holds every aggregator, so under atp it goes to its PS. The
# workers' congestion window keeps the 32 workers' copies within the PS
# link's buffer: no queue drops, and every sum right.
run "$tmp/ic" --trace "$tmp/ic.trace" "$HERE/incast.scn"; rc=$?
drops=$(sed -n 's/.* \([0-9]*\) queue drops.*/\1/p' "$tmp/ic/perf.txt" 2>/dev/null)
coll=$(awk '$2 == "out" && $5 == "job=2" && $4 == "flags=0x02" {
		split($6, q, "="); if (q[2] < 256) n++ } END { print n + 0 }' "$tmp/ic.trace")
if [ $rc = 0 ] && [ "$coll" -ge 256 ] && [ "$drops" = 0 ]; then
	ok "incast: $coll first-window packets of job 2 went to its PS, no queue drops"
else
	not_ok "incast: $coll first-window collisions, '$drops' queue drops (exit $rc)"
fi
# ... and job 2 finishes within its bound: its compute (2 x 1 ms), 10
# round trips R through its PS (4 frames T = 342 B x 80 ps, 4 links of
# d = 1 us, 2 switch passes of s = 1 us), its transfer (2 x 1024 frames)
# and the drain of every copy that went to its PS (its collisions).
jct2=$(awk -F, '$1 == "atp" && $3 == 2 { print $NF }' "$tmp/ic/jct.csv")
bound=$(awk '$2 == "out" && $5 == "job=2" && $4 == "flags=0x02" { n++ }
	END { T = 342 * 80e-12; R = 4 * T + 4e-6 + 2e-6
		printf "%.6f", 2e-3 + 10 * R + 2 * 1024 * T + n * T }' "$tmp/ic.trace")
if [ -n "$jct2" ] && awk -v j="$jct2" -v b="$bound" 'BEGIN { exit !(j <= b) }'; then
	ok "incast: job 2 took $jct2 s, within its bound $bound s"
else
	not_ok "incast: job 2 took '$jct2' s, above its bound $bound s"
fi

worst() { # JCT.CSV: the largest esa JCT / atp JCT of one job, and the job
	awk -F, 'NR > 1 { t[$1, $3] = $9; id[$3] = 1 }
		END { m = 0; for (i in id) if (t["atp", i] > 0 && t["esa", i] / t["atp", i] > m) {
			m = t["esa", i] / t["atp", i]; w = i }
		printf "%.3f %s\n", m, w }' "$1"
}

# Resends within the congestion window: resend_burst.scn's 32-worker
# BERT-large job turns from the switch to its PS with a full window; a
# timeout that resent every late packet of every worker at once took it
# to 2.26x its atp JCT. No job may take more than 1.3x.
run "$tmp/rb" --policy esa,atp "$HERE/resend_burst.scn"; rc=$?
read -r r job < <(worst "$tmp/rb/jct.csv")
if [ $rc = 0 ] && awk -v r="$r" 'BEGIN { exit !(r > 0 && r <= 1.3) }'; then
	ok "resend burst: no job slower under esa than 1.3x atp (worst $r, job $job)"
else
	not_ok "resend burst: job $job takes $r x its atp JCT under esa (exit $rc)"
fi

# LAS at small scale: las_scaled.scn's jobs last 0.2 to 3 ms; with the
# control plane's period scaled like them they are ranked while they run:
# preemptions happen, and no job takes more than 1.3x its atp JCT.
run "$tmp/ls" --policy esa,atp "$HERE/las_scaled.scn"; rc=$?
read -r r job < <(worst "$tmp/ls/jct.csv")
pre=$(awk '$1 == "preemp" { print $2 }' "$tmp/ls/summary.txt" 2>/dev/null)
if [ $rc = 0 ] && [ "${pre:-0}" -gt 0 ] && awk -v r="$r" 'BEGIN { exit !(r > 0 && r <= 1.3) }'; then
	ok "las at 1/1024 scale: $pre preemptions, no job above 1.3x atp (worst $r, job $job)"
else
	not_ok "las at 1/1024 scale: '$pre' preemptions, job $job at $r x atp (exit $rc)"
fi

# The evaluation's claims on the shipped scenarios (Documentation/
# evaluation.rst): wide.scn (64 jobs of 4 to 32 workers, 8x
# oversubscribed) gives esa an average JCT no longer than atp's and
# static's, and in wide.scn and demo.scn no job takes more than 1.3x its
# atp JCT under esa.
SCN=$ROOT/tools/esa-sim/scenarios
run "$tmp/wide" "$SCN/wide.scn"; rc=$?
read -r esa atp static < <(sed -n 's/^avg_jct esa=\([0-9.]*\) atp=\([0-9.]*\) static=\([0-9.]*\) .*/\1 \2 \3/p' "$tmp/wide/summary.txt")
if [ $rc = 0 ] && [ -n "$esa" ] && awk -v e="$esa" -v a="$atp" -v s="$static" 'BEGIN { exit !(e <= a && e <= s) }'; then
	ok "wide.scn: esa's average JCT $esa s, atp $atp s, static $static s"
else
	not_ok "wide.scn: average JCT esa '$esa' atp '$atp' static '$static' s (exit $rc)"
fi
run "$tmp/demo" "$SCN/demo.scn"; rc2=$?
for d in wide demo; do
	read -r r job < <(worst "$tmp/$d/jct.csv")
	if [ $rc = 0 ] && [ $rc2 = 0 ] && awk -v r="$r" 'BEGIN { exit !(r > 0 && r <= 1.3) }'; then
		ok "$d.scn: no job slower under esa than 1.3x atp (worst $r, job $job)"
	else
		not_ok "$d.scn: job $job takes $r x its atp JCT under esa (exit $rc $rc2)"
	fi
done

# The oversubscription sweep's command: a row per mix, factor and load.
"$ROOT/tools/esa-sim/sweep-oversub.sh" -o "$tmp/ov" --oversub 1,8 --load 1 \
	"$HERE/analytic.scn" > "$tmp/ov.log" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(head -1 "$tmp/ov/oversub.csv")" = "mix,oversub,slots,load,avg_jct_esa,avg_jct_atp,avg_jct_static,esa_vs_atp,esa_vs_static" ] &&
   [ "$(awk -F, 'NR > 1 { printf "%s:%s:%s;", $2, $3, $4 }' "$tmp/ov/oversub.csv")" = "1.0:256:1;8.0:32:1;" ]; then
	ok "sweep-oversub.sh: 2 factors of analytic.scn's 256 wanted slots (256, 32)"
else
	not_ok "sweep-oversub.sh: exit $rc: $(tr '\n' ';' < "$tmp/ov/oversub.csv" 2>/dev/null) $(tail -2 "$tmp/ov.log")"
fi
for bad in "--oversub 0" "--oversub 1.5" "--load x" "-o"; do
	"$ROOT/tools/esa-sim/sweep-oversub.sh" $bad > "$tmp/ovbad.log" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -q "^sweep-oversub: " "$tmp/ovbad.log"; then
		ok "sweep-oversub.sh $bad: refused ($(head -1 "$tmp/ovbad.log"))"
	else
		not_ok "sweep-oversub.sh $bad: exit $rc, $(head -1 "$tmp/ovbad.log")"
	fi
done

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
