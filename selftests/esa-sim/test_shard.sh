#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-sim with several switch servers (servers=S): the same jobs on S = 1
# and S = 2 both finish with every sum verified under every policy, with
# loss and contention (the simulator checks each sum against its closed
# form, so both runs return the same sums bit for bit); each server runs
# the share of the frames the index-mod-S rule gives it; bad server
# counts are refused with the reason.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/esa-sim/lib.sh"

[ -x "$SIM" ] || bail "$SIM is not built"

J='job id=1 workers=2 size=4K iterations=1\n'
bad ":1: servers=0 is out of range 1..16" "switch slots=64 servers=0\n$J"
bad ":1: servers=17 is out of range 1..16" "switch slots=64 servers=17\n$J"
bad ":1: servers must be a whole number, not 'two'" "switch slots=64 servers=two\n$J"
bad ":1: oversub=0 is out of range 1..64" "switch slots=64 rack_hosts=4 oversub=0\n$J"

if [ "$(id -u)" != 0 ]; then
	skip "esa-sim runs with several servers" "needs root (BPF_PROG_TEST_RUN)"
	tap_done
fi
run() { # OUTDIR SCENARIO: a run without plots, its exit status
	"$SIM" --no-plots --quiet -o "$1" "$2" > "$1.log" 2>&1
}

# A job's index space is S x slots; 16 x 65536 is the most a job may span.
printf 'switch slots=65537 servers=16 policies=esa\n%b' "$J" > "$tmp/big.scn"
if run "$tmp/big" "$tmp/big.scn"; then
	not_ok "servers=16 x slots=65537 ran"
elif grep -q "servers=16 x slots=65537 is above a job's index space of 1048576" "$tmp/big.log"; then
	ok "servers=16 x slots=65537: refused, above a job's index space"
else
	not_ok "servers=16 x slots=65537: wrong message: $(tail -2 "$tmp/big.log")"
fi

# S = 1 and S = 2, loss, contention for 24 aggregators per server, a
# two-tier network with an oversubscribed uplink and a service time per
# frame: every job ok under every policy, every sum verified.
for S in 1 2; do
	cat > "$tmp/s$S.scn" <<-SCN
	switch slots=24 window=16 values=64 timeout_us=500 loss=5 rto_us=300 servers=$S server_ns=300 rack_hosts=4 oversub=2
	job id=1 workers=4 size=64K iterations=2
	job id=2 workers=8 size=32K iterations=2 arrival_ms=0
	job id=3 workers=3 size=48K iterations=1 arrival_ms=0
	SCN
	run "$tmp/s$S" "$tmp/s$S.scn"; rc=$?
	oks=$(grep -c ' 3/3 jobs ok$' "$tmp/s$S/perf.txt" 2>/dev/null)
	# the loss hit every policy's run, and every server ran frames
	lossy=$(grep -Ec ', [1-9][0-9]* lost,' "$tmp/s$S/perf.txt" 2>/dev/null)
	idle=$(grep 'frames per server' "$tmp/s$S/perf.txt" 2>/dev/null | grep -Ec ' 0( |$)')
	if [ "$rc" = 0 ] && [ "$oks" = 3 ] && [ "$lossy" = 3 ] && [ "$idle" = 0 ] &&
	   ! grep -q "mismatch\|nowhere" "$tmp/s$S.log"; then
		ok "servers=$S, 5 % loss: every job of esa, atp, static verified every sum"
	else
		not_ok "servers=$S: rc $rc, $oks policies all ok, $lossy lossy, $idle with an idle server: $(tail -3 "$tmp/s$S.log")"
	fi
done
if [ "$(grep -c 'frames per server' "$tmp/s2/perf.txt")" = 3 ] &&
   ! grep -q 'frames per server' "$tmp/s1/perf.txt"; then
	ok "perf.txt: frames per server for each policy at servers=2, none at 1"
else
	not_ok "perf.txt's frames per server: $(grep -h 'per server' "$tmp"/s[12]/perf.txt)"
fi

# The share: values=363 and 14520 bytes are 10 packets per worker, indices
# 0..9 of a window of 16 x 4; index g goes to server g mod 4, so each of 2
# workers sends 3, 3, 2, 2 frames to servers 0..3 (contiguous ranges of
# 16 would send all 10 to server 0). No loss, no contention: frames in
# are exactly the workers' packets.
printf 'switch slots=64 window=16 values=363 servers=4 policies=esa\njob id=1 workers=2 size=14520 iterations=1\n' > "$tmp/share.scn"
run "$tmp/share" "$tmp/share.scn"; rc=$?
want=$(awk 'BEGIN { for (k = 0; k < 4; k++) { n = 0
	for (g = 0; g < 10; g++) if (g % 4 == k) n += 2
	printf " %d", n } }')
got=$(sed -n 's/^policy esa: frames per server//p' "$tmp/share/perf.txt")
if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
	ok "servers=4: frames per server$got, as index mod 4 deals them"
else
	not_ok "servers=4: rc $rc, frames per server '$got', wanted '$want'"
fi

# sweep-servers.sh: a row per S, scaling against the first; bad input refused.
SWEEP=$ROOT/tools/esa-sim/sweep-servers.sh
printf 'switch slots=64 window=16 values=363 server_ns=531 policies=esa\njob id=1 workers=2 size=145200 iterations=1\n' > "$tmp/sweep.scn"
if "$SWEEP" -o "$tmp/sw" --servers 1,2 "$tmp/sweep.scn" > "$tmp/sw.log" 2>&1 &&
   [ "$(head -1 "$tmp/sw/servers.csv")" = "servers,goodput_gbps,avg_jct_s,scaling,jct_vs_first" ] &&
   awk -F, 'NR == 2 && $1 == 1 && $4 == "1.00" { a = 1 } NR == 3 && $1 == 2 && $4 > 1.5 { b = 1 }
	    END { exit !(a && b && NR == 3) }' "$tmp/sw/servers.csv"; then
	ok "sweep-servers.sh --servers 1,2: $(tail -1 "$tmp/sw/servers.csv")"
else
	not_ok "sweep-servers.sh: $(cat "$tmp/sw/servers.csv" "$tmp/sw.log" 2>/dev/null | tail -4)"
fi
for args in "--servers 0,2" "--servers 1,17" "--servers 1,x" "--bogus"; do
	# shellcheck disable=SC2086
	if err=$("$SWEEP" -o "$tmp/sw2" $args "$tmp/sweep.scn" 2>&1); then
		not_ok "sweep-servers.sh $args accepted"
	else
		ok "sweep-servers.sh $args refused: $err"
	fi
done
if err=$("$SWEEP" -o "$tmp/sw3" "$tmp/share.scn" 2>&1); then
	not_ok "sweep-servers.sh ran a scenario that sets servers= itself"
else
	ok "refused: $err"
fi
tap_done
