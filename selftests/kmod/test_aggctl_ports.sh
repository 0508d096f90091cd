#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# aggctl switch attach/detach touch only what is theirs and change all the
# ports given or none; attach says what a port lacks for forwarded frames
# to arrive (a veth peer without GRO or XDP, the MTU), and switch show
# says it per port, with the hosts learned behind it. Module-less here;
# the same code runs with the module.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh	# namespaces and veth links, cleanup at exit
need_root "aggctl ports"
PIN=/sys/fs/bpf/esa-ports-$$
PIN2=/sys/fs/bpf/esa-ports2-$$
A="$AGGCTL -d $PIN"
B="$AGGCTL -d $PIN2"
NS=$(ns h)		# host netns NS0.., each with eth0, the peer of port P0..
P=$(ifname p)		# switch ports P0.. in this netns
cleanup() {
	local i
	for i in 0 1 2 3 4; do
		$A switch detach dev $P$i > /dev/null 2>&1
		$B switch detach dev $P$i > /dev/null 2>&1
	done
	$A switch unload > /dev/null 2>&1
	$B switch unload > /dev/null 2>&1
	rm -rf "$PIN" "$PIN2"
}
# Hosts without GRO on eth0: what attach is to warn about.
for i in 0 1 2 3 4; do
	ns_add h$i && veth_add root $P$i h$i eth0 || bail "host $i"
	in_ns h$i ip addr add 198.18.7.$((i + 1))/24 dev eth0
done
cleanup_add cleanup
pinned() { [ -e "$1/esa_switch" ]; }
prog_on() { ip -d link show dev "$1" | grep -o 'prog/xdp id [0-9]*' | awk '{ print $3 }'; }

# --- all or nothing, and never a port that is no switch port
expect "attach dev lo is refused" 1 'switch attach lo: the loopback device leads to no other host' \
	$A switch attach dev lo
pinned $PIN && not_ok "attach dev lo left a data plane pinned" || ok "attach dev lo left nothing pinned"
expect "attach dev P0 dev lo is refused as a whole" 1 'switch attach lo: the loopback device' \
	$A switch attach dev ${P}0 dev lo
[ -z "$(prog_on ${P}0)" ] && ! pinned $PIN && ok "... and attached nothing" ||
	not_ok "attach dev P0 dev lo left P0 attached or a data plane pinned"
expect "a port given twice is bad input" 2 'invalid dev \(given twice\)' \
	$A switch attach dev ${P}0 dev ${P}0
# A port native XDP cannot take (MTU beyond one page) fails half way.
ip link set dev ${P}4 mtu 9000
ip -n ${NS}4 link set dev eth0 mtu 9000
expect "attach failing on the second port says why" 1 "switch attach ${P}4: .*MTU is too large for native XDP.*; nothing attached by this command stays" \
	$A switch attach dev ${P}0 dev ${P}4
[ -z "$(prog_on ${P}0)" ] && ! pinned $PIN && ok "... and the first port is detached again, the data plane unloaded" ||
	not_ok "a failed attach left ${P}0 attached ($(prog_on ${P}0)) or the data plane pinned"
ip link set dev ${P}4 mtu 1500

# --- what a port needs: the veth peer must take redirected frames
out=$($A switch attach dev ${P}0 dev ${P}1 2>&1); rc=$?
[ $rc = 0 ] && ok "attach with peers lacking GRO succeeds" || not_ok "attach: exit $rc: $(flat "$out")"
if grep -q "warning: switch attach ${P}0: its veth peer eth0 (netns ${NS}0) has neither GRO nor an XDP program, so the frames the switch forwards to ${P}0 are dropped: ip netns exec ${NS}0 ethtool -K eth0 gro on" <<< "$out"; then
	ok "attach warns about the peer without GRO, with the command that fixes it"
else
	not_ok "attach warns about the peer without GRO: $(flat "$out")"
fi
expect "switch show: the port is not ready, and why" 0 \
	"port ${P}0 xdp native role per-host mtu 1500 peer eth0 netns ${NS}0 peer-gro no peer-xdp no hosts - ready no why its veth peer eth0" \
	$A switch show
ip netns exec ${NS}0 ethtool -K eth0 gro on > /dev/null
ip netns exec ${NS}1 ethtool -K eth0 gro on > /dev/null
expect "switch show: ready once the peer has GRO" 0 "port ${P}0 xdp native role per-host mtu 1500 peer eth0 netns ${NS}0 peer-gro yes peer-xdp no hosts - ready yes" \
	$A switch show
ip -n ${NS}1 link set eth0 down
expect "switch show: a peer that is down" 0 "port ${P}1 .* ready no why ${P}1 has no carrier \(its veth peer is down\)" \
	$A switch show
ip -n ${NS}1 link set eth0 up
ip link set dev ${P}1 mtu 1400
ip -n ${NS}1 link set dev eth0 mtu 1400
expect "switch show: an MTU below 1500" 0 "port ${P}1 .* ready no why ${P}1 has MTU 1400: full aggregation packets \(363 values\) need 1500 .*--values 338" \
	$A switch show
ip link set dev ${P}1 mtu 1500
ip -n ${NS}1 link set dev eth0 mtu 1500
# Hosts are learned from the frames that cross the switch (ARP, IPv4).
ip netns exec ${NS}0 ping -c 1 -W 1 198.18.7.2 > /dev/null 2>&1
out=$($A -j switch show)
if $PY -c 'import json,sys; j=json.loads(sys.argv[1]); p=[x for x in j["port_state"] if x["port"]==sys.argv[2]][0]; sys.exit(0 if p["hosts"] else 1)' "$out" "${P}0"; then
	ok "switch show -j: the hosts learned behind a port"
else
	not_ok "switch show -j: no hosts learned behind ${P}0: $(flat "$out")"
fi
expect "capacity given for a loaded data plane is refused" 1 \
	"capacity 128: the data plane pinned under $PIN has 65536 aggregators, fixed when it was loaded" \
	$A switch attach dev ${P}2 capacity 128
[ -z "$(prog_on ${P}2)" ] && ok "... and P2 was not attached" || not_ok "refused capacity attached P2"
$A switch detach dev ${P}0 dev ${P}1 && $A switch unload
$A switch attach dev ${P}0 capacity 128 2> /dev/null
expect "slots above the capacity name it" 1 "switch set: slots 200 above the 128 aggregators of the data plane under $PIN" \
	$A switch set slots 200
expect "the same capacity again is fine" 0 '^$' $A switch attach dev ${P}0 capacity 128

# --- two workers of a job behind one port get one result copy between them
# Port 3 leads to a bridge in its netns with two more hosts on it.
LAN=${NS}3
for h in a b; do
	ns_add h3$h && veth_add h3 x$h h3$h eth0 || bail "host 3$h"
done
ip -n $LAN link add br0 type bridge
ip -n $LAN link set eth0 master br0
for h in a b; do
	ip -n $LAN link set x$h master br0
	ip -n $LAN link set x$h up
	ip -n $LAN$h link set eth0 up
	ip -n $LAN$h addr add 198.18.7.1$([ $h = a ] && echo 1 || echo 2)/24 dev eth0
done
ip -n $LAN link set br0 up
ip netns exec ${NS}3 ethtool -K eth0 gro on > /dev/null
$A switch attach dev ${P}3 2> /dev/null
ip netns exec ${LAN}a ping -c 1 -W 1 198.18.7.1 > /dev/null 2>&1
ip netns exec ${LAN}b ping -c 1 -W 1 198.18.7.1 > /dev/null 2>&1
expect "job add: two workers learned behind one port are warned about" 0 \
	"warning: job add 77: workers 198.18.7.11:5000 and 198.18.7.12:5000 are both behind switch port ${P}3 \(learned from their traffic\): the switch sends one result copy per port, so one of them will not get its results" \
	$A job add id 77 ps 198.18.7.1:47000 worker 198.18.7.11:5000 worker 198.18.7.12:5000
expect "job add: two workers at one address are warned about" 0 \
	"warning: job add 78: workers 198.18.7.2:5000 and 198.18.7.2:5001 share a host, so a switch port" \
	$A job add id 78 ps 198.18.7.1:47000 worker 198.18.7.2:5000 worker 198.18.7.2:5001
expect "job add: workers on ports of their own: no warning" 0 '^$' \
	$A job add id 79 ps 198.18.7.11:47000 worker 198.18.7.1:5000 worker 198.18.7.2:5000
for j in 77 78 79; do $A job del id $j; done
$A switch detach dev ${P}3
for h in a b; do ip netns del $LAN$h; done

# --- detach of several ports: the program comes off every one of them
# before any leaves the multicast (a sum completed meanwhile on a port not
# yet detached must still reach the PS and every worker: a restart under
# way otherwise leaves a worker with a result nobody else has). The order
# of the system calls: every XDP detach (RTM_SETLINK) before the first
# devmap delete.
$A switch attach dev ${P}1 2> /dev/null
if command -v strace > /dev/null; then
	trace=$(mktemp)
	strace -o "$trace" -e trace=bpf,sendto $A switch detach dev ${P}0 dev ${P}1
	order=$(grep -o 'RTM_SETLINK\|BPF_MAP_DELETE_ELEM' "$trace" | uniq | tr '\n' ' ')
	rm -f "$trace"
	[ "$order" = "RTM_SETLINK BPF_MAP_DELETE_ELEM " ] &&
		ok "detach P0 P1: both programs off before either port leaves the multicast" ||
		not_ok "detach P0 P1: a port left the multicast while another still ran the program ($order)"
else
	skip "detach order of several ports" "no strace (scripts/deps.sh installs it)"
	$A switch detach dev ${P}0 dev ${P}1
fi
$A switch attach dev ${P}0 2> /dev/null

# --- detach: only this data plane's program, and all or nothing
expect "detach of a port never attached" 1 "switch detach ${P}2: not a port of the data plane under $PIN \(no XDP program on it\); nothing to detach" \
	$A switch detach dev ${P}2
$B switch attach dev ${P}2 2> /dev/null
other=$(prog_on ${P}2)
expect "detach of another ESA data plane's port is refused" 1 \
	"switch detach ${P}2: the port runs another ESA data plane's program $other \(esa_switch\), not the one pinned under $PIN; left alone" \
	$A switch detach dev ${P}2
[ "$(prog_on ${P}2)" = "$other" ] && ok "... and its program stays" || not_ok "another data plane's program was removed"
expect "attach over another ESA data plane is refused" 1 "switch attach ${P}2: the port runs another ESA data plane's program $other" \
	$A switch attach dev ${P}2
foreign_xdp_add ${P}3
foreign=$(prog_on ${P}3)
if [ -n "$foreign" ]; then
	expect "detach of a port with a foreign program is refused" 1 \
		"switch detach ${P}3: the port runs another XDP program $foreign \(xdp_pass\), not ESA's; left alone" \
		$A switch detach dev ${P}3
	expect "detach dev P0 dev P3 is refused as a whole" 1 "switch detach ${P}3: the port runs another XDP program" \
		$A switch detach dev ${P}0 dev ${P}3
	[ "$(prog_on ${P}3)" = "$foreign" ] && [ -n "$(prog_on ${P}0)" ] &&
		ok "... and nothing was detached" || not_ok "detach P0 P3: P0 or P3 lost its program"
	ip link set dev ${P}3 xdp off
else
	not_ok "detach of a foreign program: cannot attach xdp_pass to ${P}3"
fi
# A program removed behind aggctl's back: detach only drops the listing.
ip link set dev ${P}0 xdp off
expect "detach of a port whose program was removed by other means" 0 \
	"switch detach ${P}0: no XDP program was attached any more \(removed by other means\); taken out of the data plane's ports" \
	$A switch detach dev ${P}0
expect "... and it is no port any more" 0 '^module no dataplane yes flavour maps .*ports$' $A switch show
expect "unload" 0 '^$' $A switch unload
expect "the other data plane still has its port" 0 "ports ${P}2\$" $B switch show
tap_done