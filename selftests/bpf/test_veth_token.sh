#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The job token against a host on a member's own segment (Documentation/
# security.rst), end to end on veth, whichever flavour aggctl attaches
# (module-less on the host, the module's in the VM).
# Worker 0 and attacker X share one switch port (a Linux bridge behind
# it), the PS and attacker Y another, worker 1 has its own: port binding
# cannot tell X from worker 0, nor Y from the PS. The attackers know the
# jobs' ids, addresses and UDP ports, not the token (spoof.py).
# Job 8 (no token), the control: X's data packet claiming worker 0 is
# summed and Y's RESULT claiming the PS reaches worker 1 (port binding
# alone does not stop them). Job 7 (a token): the same frames, without a
# token (version 1) and with a guessed one (version 2), are all dropped and
# counted drop_token for job 7, nothing summed, no result passed, none
# reaches worker 1; then job 7's members with the token (veth_peer.py
# --token, atp: the PS's RESULTs through the switch) get every sum exact.
NSEQ=10
. "$(dirname "$0")/veth_members.sh"
CTL=8
TOKEN=5eed0fa11c0ffee5 GUESS=0123456789abcdef
Y=$NET.67
members_setup "job token against a host on a member's segment"

# seg_add SEG: a switch port whose far end is a Linux bridge (the segment).
seg_add() {
	local seg=$1 p
	p=$(port "$seg")
	ns_add "$seg" || return 1
	veth_add root "$p" "$seg" uplink || return 1
	in_ns "$seg" ip link add br0 type bridge || return 1
	in_ns "$seg" ip link set dev uplink master br0 || return 1
	in_ns "$seg" ethtool -K uplink gro on > /dev/null || return 1
	in_ns "$seg" ip link set br0 up
}
# seg_host NAME SEG ADDR/LEN: a host whose eth0 is a port of SEG's bridge.
seg_host() {
	local name=$1 seg=$2 addr=$3
	ns_add "$name" || return 1
	veth_add "$name" eth0 "$seg" "$name" || return 1
	in_ns "$name" ip addr add "$addr" dev eth0 || return 1
	in_ns "$seg" ip link set "$name" master br0
}

switch_add root
seg_add sega || bail "segment a"
seg_add segb || bail "segment b"
seg_host w0 sega "$W0/24" || bail "host w0"
seg_host x sega "$X/24" || bail "host x"
seg_host ps segb "$PS/24" || bail "host ps"
seg_host y segb "$Y/24" || bail "host y"
host_add w1 "$W1/24" || bail "host w1"
devs=(dev "$(port sega)" dev "$(port segb)" dev "$(port w1)")
agg switch attach "${devs[@]}" || bail "aggctl switch attach"
cleanup_add "$AGGCTL" -d "$PIN" switch detach "${devs[@]}"
[ $flavour = kmod ] && cleanup_add "$AGGCTL" job del id $JOB
[ $flavour = kmod ] && cleanup_add "$AGGCTL" job del id $CTL
members() { # PORT_OFFSET: the members, each bound to its port
	echo ps "$PS:47000" dev "$(port segb)" \
		worker "$W0:$((PORT0 + $1))" dev "$(port sega)" \
		worker "$W1:$((PORT0 + 1 + $1))" dev "$(port w1)"
}
# shellcheck disable=SC2046
check "job $JOB with a token" agg job add id $JOB $(members 0) priority 1 token $TOKEN ||
	tap_done
# shellcheck disable=SC2046
check "job $CTL without one (the control)" agg job add id $CTL $(members 5) priority 1 ||
	tap_done
agg switch set slots 8 timeout 3000 > /dev/null
agg policy set atp > /dev/null

# The members speak first: the switch learns where each sits.
relearn() {
	in_ns ps ping -c1 -W1 "$W1" > /dev/null
	in_ns w0 ping -c1 -W1 "$W1" > /dev/null
	in_ns w1 ping -c1 -W1 "$PS" > /dev/null
}
relearn

# count JOB COUNTER: the data plane's count of JOB (0: switch-wide).
count() {
	if [ "$1" = 0 ]; then agg -j stats; else agg -j stats job "$1"; fi |
		python3 -c "
import json, sys
r = json.load(sys.stdin)
r = r[0] if isinstance(r, list) else r
print(r['dataplane']['$2'])"
}
# attack EXPECT JOB WPORT [SPOOF OPTIONS]: X sends worker 0's data of
# JOB (seq 0..2), Y the PS's RESULT of JOB (seq 3..5), while worker 1
# captures what of JOB reaches it; prints how many frames it got. The
# capture ends once the EXPECT frames that should pass came (60 s at
# most: six senders start slowly on a loaded machine); where none should
# (EXPECT 0), after 8 s.
attack() {
	local expect=$1 job=$2 wport=$3 seq window
	shift 3
	window=(8 "$job")
	[ "$expect" = 0 ] || window=(60 "$job" "$expect")
	in_ns w1 python3 "$SPOOF" capture eth0 "${window[@]}" > "$TMP/capture" 2>&1 &
	local cpid=$!
	for _ in $(seq 50); do grep -q ready "$TMP/capture" && break; sleep 0.1; done
	for seq in 0 1 2; do
		in_ns x python3 "$SPOOF" "$@" data eth0 "$W0" "$wport" "$PS" "$job" $FAN 0 $seq $NVAL
		in_ns y python3 "$SPOOF" "$@" result eth0 "$PS" "$W0" "$job" $FAN $((seq + 3)) $NVAL
	done
	wait $cpid
	sed -n 's/^captured \([0-9]*\) frames.*/\1/p' "$TMP/capture"
}

# The control: without a token, port binding lets both attacks through.
got=$(attack 3 $CTL $((PORT0 + 5)))
agg_ctl=$(count $CTL aggregated) res_ctl=$(count $CTL results)
diag "job $CTL: aggregated $agg_ctl results $res_ctl; worker 1 captured $got"
check "no token: the attacker's data is summed ($agg_ctl of 3)" test "$agg_ctl" = 3
check "no token: the forged RESULTs pass ($res_ctl of 3) and reach worker 1 ($got)" \
	test "$res_ctl" = 3 -a "$got" = 3

# The control's partials, forged, would reach the PS as evictions: gone
# with their job.
agg job del id $CTL > /dev/null

# Job 7: without its token, and with a guessed one.
got1=$(attack 0 $JOB $PORT0)
got2=$(attack 0 $JOB $PORT0 --token $GUESS)
rx=$(count $JOB rx) drop=$(count $JOB drop_token) sum=$(count $JOB aggregated)
res=$(count $JOB results) pulls=$(count $JOB pulls)
diag "job $JOB: rx $rx drop_token $drop aggregated $sum results $res pulls $pulls"
check "a token: all 12 forged frames dropped, counted drop_token" \
	test "$rx" = 12 -a "$drop" = 12
check "a token: nothing summed, no result passed" test "$sum" = 0 -a "$res" = 0 -a "$pulls" = 0
check "a token: none of the forged frames reached worker 1 ($got1, $got2)" \
	test "$got1" = 0 -a "$got2" = 0
check "the switch-wide drop_token is job $JOB's" test "$(count 0 drop_token)" = 12

# The members, with the token: every sum exact. A host on a shared
# segment can still take a member's MAC at the switch (security.rst):
# the members speak again first.
relearn
members_run " with the token" "--token $TOKEN" answer "$W0"
check "job $JOB's own frames: no drop_token beyond the 12 forged" test "$(count $JOB drop_token)" = 12
tap_done
