#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Sums that left the switch in part, end to end (Documentation/
# wire-protocol.rst, "Sums that left the switch in part"): the module-less
# switch attached with aggctl to the veth ports of a PS and three workers,
# one aggregator, reclaim after a minute (never within the test), policy
# esa; the real esa-ps; the workers (veth_peer.py script) send single
# packets in an order the test dictates. Two sums must finish though early
# release freed their slot under packets whose siblings had already gone
# on to the PS (on the tree before the gone records, seq 2 never did):
#   seq 2: workers 0 and 1 collide with seq 1; seq 1 completes and frees
#     the slot; worker 2's packet of seq 2 must go on to the PS (before
#     the gone records it claimed the slot and stayed there forever);
#   seq 3: worker 0's partial is flushed by its resend; workers 1 and 2
#     come later and must leave as one PARTIAL as soon as both are in;
#   seqs 4 and 5 as seqs 1 and 2, but worker 2 sends both in one UDP GSO
#     send: the switch multicasts seq 4's sum and sends seq 5's last packet
#     to the PS in one NAPI poll (the kernel's devmap flush then ran both
#     through one egress program, which dropped the PARTIAL).
# Checks: every worker gets an exact RESULT of every sequence, the PS
# finished all five, the switch counted two completions and three early
# partials.
. "$(dirname "$0")/../lib/topo.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
AGGCTL=${AGGCTL:-$ROOT/build/tools/aggctl}
ESA_PS=${ESA_PS:-$ROOT/build/tools/esa-ps}
PEER=$ROOT/selftests/bpf/veth_peer.py
JOB=7 FAN=3 NVAL=64 PORT0=41000

echo "TAP version 13"
if [ "$(id -u)" != 0 ] || [ ! -x "$AGGCTL" ] || [ ! -x "$ESA_PS" ]; then
	skip "gone records end to end" "needs root, build/tools/aggctl and build/tools/esa-ps"
	tap_done
fi
TMP=$(mktemp -d)
cleanup_add rm -rf "$TMP"
NET=198.18.$(( $$ % 250 ))
PIN=$(pin_path sw)
agg() { "$AGGCTL" -d "$PIN" "$@"; }

switch_add root
devs=()
for h in ps w0 w1 w2; do
	case $h in ps) a=$NET.1 ;; *) a=$NET.1${h#w} ;; esac
	host_add "$h" "$a/24" || bail "host $h"
	devs+=(dev "$(port "$h")")
done
agg switch attach "${devs[@]}" || bail "aggctl switch attach"
cleanup_add "$AGGCTL" -d "$PIN" switch detach "${devs[@]}"
workers=() wlist=
for w in 0 1 2; do
	workers+=(worker "$NET.1$w:$((PORT0 + w))")
	wlist+="${wlist:+,}$NET.1$w:$((PORT0 + w))"
done
check "switch: one aggregator, no reclaim within the test, esa, job $JOB" \
	bash -c "'$AGGCTL' -d '$PIN' switch set slots 1 timeout 60000000 &&
		 '$AGGCTL' -d '$PIN' policy set esa &&
		 '$AGGCTL' -d '$PIN' job add id $JOB ps $NET.1:47000 ${workers[*]} fan-in $FAN priority 1" ||
	tap_done
# Every host speaks once, so the switch knows each address's port.
for w in 0 1 2; do in_ns "w$w" ping -c1 -W1 "$NET.1" > /dev/null; done

in_ns ps "$ESA_PS" --bind "$NET.1" --job "$JOB:$FAN@$wlist" --results 5 \
	--no-result-on-complete --linger-ms 300 --deadline-s 20 -j \
	> "$TMP/ps.json" 2> "$TMP/ps.err" &
pspid=$!
for w in 0 1 2; do
	mkfifo "$TMP/in$w"
	in_ns "w$w" python3 "$PEER" script "$w" "$NET.1$w" "$((PORT0 + w))" \
		"$NET.1" "$NVAL" "$FAN" "$JOB" < "$TMP/in$w" > "$TMP/out$w" 2>&1 &
	eval "wpid$w=$!"
	eval "exec $((10 + w))> '$TMP/in$w'"
done
# send W VERB SEQ: worker W sends SEQ; returns once it has left the host.
declare -A nsent=([0]=0 [1]=0 [2]=0)
send() {
	local w=$1 i
	echo "$2 $3 0" >&$((10 + w))	# "send2" takes two sequences in $3
	nsent[$w]=$((nsent[$w] + 1))
	for i in $(seq 100); do
		[ "$(grep -c '^sent$' "$TMP/out$w")" -ge "${nsent[$w]}" ] && break
		sleep 0.02
	done
	sleep 0.05	# the switch's XDP step runs on the veth's NAPI
}
for w in 0 1 2; do
	for _ in $(seq 100); do grep -q '^ready' "$TMP/out$w" && break; sleep 0.05; done
done
send 0 send 1
send 0 send 2		# collides with seq 1
send 1 send 2		# collides
send 1 send 1
send 2 send 1		# completes seq 1: the slot is free
send 2 send 2		# the last of seq 2: on to the PS, no claim
send 0 send 3		# claims
send 0 resend 3		# flushed to the PS
send 1 send 3		# claims, knowing worker 0 left
send 2 send 3		# all in or gone: PARTIAL to the PS at once
send 0 send 4
send 0 send 5
send 1 send 5
send 1 send 4
send 2 send2 "4 5"	# completes seq 4 (multicast), seq 5 goes on (unicast)
for w in 0 1 2; do eval "exec $((10 + w))>&-"; done
for w in 0 1 2; do
	eval "pid=\$wpid$w"
	if wait "$pid"; then
		ok "worker $w: $(tail -1 "$TMP/out$w")"
	else
		not_ok "worker $w: $(tr '\n' ' ' < "$TMP/out$w")"
	fi
done
wait "$pspid"
check "the PS finished sequences 1 to 5" python3 -c "
import json, sys
j = {x['job']: x for x in json.load(open('$TMP/ps.json'))['jobs']}[$JOB]
print('finished', j['finished'], 'merged', j['merged'])
sys.exit(j['finished'] != 5)" || sed 's/^/# /' "$TMP/ps.err"
agg -j stats job "$JOB" > "$TMP/stats.json"
check "switch: 2 completed, 3 early partials, 4 collisions, 1 flush" python3 -c "
import json, sys
d = json.load(open('$TMP/stats.json'))[0]['dataplane']  # aggctl -j stats: an array of records
got = [d[k] for k in ('completed', 'early_partials', 'collisions', 'stranded')]
print(dict(zip(('completed', 'early_partials', 'collisions', 'stranded'), got)))
sys.exit(got != [2, 3, 4, 1])"
tap_done
