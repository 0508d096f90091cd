# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# A switch server behind an ordinary network, for the one-armed tests: a
# Linux bridge plays the top-of-rack switch, hosts sit behind it, and the
# ESA server is one more host on it with a single port (Documentation/
# deployment.rst draws it). Everything of selftests/lib/topo.sh is here
# too (sourced): TAP, ns/in_ns, switch_add/host_add for per-host ports on
# the same switch (a mixed switch), cleanup at exit.
#
#   . "$(dirname "$0")/../lib/topo_bridge.sh"
#
#   bridge_add [MTU]      the ToR: namespace "tor" with bridge br0 (no STP,
#                         no forwarding delay, VLAN-unaware); every
#                         link made below gets MTU (default 1500, the ESA
#                         MTU)
#   bridge_host_add NAME ADDR/PLEN
#                         namespace NAME with eth0 at ADDR, cabled to the
#                         ToR (its bridge port is `bridge_port NAME`). eth0
#                         keeps its offloads and has GRO on, as a NIC.
#   bridge_switch_add ADDR/PLEN [NS]
#                         the switch server: SWITCH becomes "root" (default)
#                         or a new namespace NS, as switch_add; its one port,
#                         `port sw`, at ADDR with IPv4 forwarding on
#                         (one-armed ports need it), cabled to the ToR (its
#                         end needs no GRO: a one-armed port sends skbs,
#                         not XDP frames). Call bridge_add first. Several
#                         servers: one namespace NS each.
#   bridge_cable NS IF NAME
#                         a cable from link IF in namespace NS (as for
#                         in_ns) to the ToR's port `bridge_port NAME`, both
#                         up; what IF needs beyond that (an address, GRO)
#                         is the caller's
#   bridge_port NAME      print the ToR-side link of host NAME ("sw": the
#                         switch server's in this namespace; NS: the one in
#                         namespace NS)
#   bridge_loss NAME PCT  PCT % random loss of aggregation frames each way
#                         on host NAME's cable: netem on the ToR's port
#                         (towards the host) and on the host's eth0 (towards
#                         the ToR); a kernel without sch_netem gets the
#                         endpoint tests' loss programs instead
#                         (build/selftests/endpoint/drop_N.bpf.o, N in
#                         10000: PCT 0, 1 or 5). Prints which it used.
#   bridge_loss_clear NAME
#                         no more loss on host NAME's cable (GRO on again)
#
# Addresses: only in namespaces this creates (198.18.0.0/15, as topo.sh).

# shellcheck source=topo.sh
. "$(dirname "${BASH_SOURCE[0]}")/topo.sh"

TOR=tor
TOR_MTU=1500
TOPO_DROP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/selftests/endpoint

bridge_add() {
	TOR_MTU=${1:-1500}
	ns_add "$TOR" || return 1
	in_ns "$TOR" ip link add br0 mtu "$TOR_MTU" type bridge stp_state 0 \
		forward_delay 0 || return 1
	in_ns "$TOR" ip link set br0 up
}

bridge_port() { echo "to-$1"; }

bridge_cable() {
	local bp
	bp=$(bridge_port "$3")
	veth_add "$1" "$2" "$TOR" "$bp" mtu "$TOR_MTU" || return 1
	in_ns "$TOR" ip link set "$bp" master br0
}

bridge_host_add() {
	local name=$1 addr=$2
	[ ${#name} -le 6 ] || { echo "bridge_host_add: name '$name' longer than 6" >&2; return 1; }
	ns_add "$name" || return 1
	bridge_cable "$name" eth0 "$name" || return 1
	in_ns "$name" ip addr add "$addr" dev eth0 || return 1
	in_ns "$name" ethtool -K eth0 gro on > /dev/null
}

bridge_switch_add() {
	local addr=$1 cable=${2:-sw} p
	switch_add "${2:-root}" || return 1
	p=$(port sw)
	bridge_cable "$SWITCH" "$p" "$cable" || return 1
	in_ns "$SWITCH" ip addr add "$addr" dev "$p" || return 1
	# The switch finds next hops with bpf_fib_lookup(), which needs it.
	in_ns "$SWITCH" sysctl -qw "net.ipv4.conf.$p.forwarding=1"
}

# __has_netem: whether this kernel can run netem (a module or built in).
__has_netem() {
	in_ns "$TOR" tc qdisc add dev br0 root netem loss 0% 2> /dev/null || return 1
	in_ns "$TOR" tc qdisc del dev br0 root
}

bridge_loss() {
	local name=$1 pct=$2 obj
	if __has_netem; then
		in_ns "$TOR" tc qdisc replace dev "$(bridge_port "$name")" root \
			netem loss "$pct%" || return 1
		in_ns "$name" tc qdisc replace dev eth0 root netem loss "$pct%" || return 1
		echo netem
		return 0
	fi
	obj=$TOPO_DROP_DIR/drop_$((pct * 100)).bpf.o
	[ -e "$obj" ] || { echo "bridge_loss: no netem and no $obj (make selftests)" >&2; return 1; }
	# Frames to the host: XDP on the host's eth0 (turns its GRO off);
	# frames from it: tc on its egress. `ip -n`, not in_ns: iproute2's
	# loader pins the object's maps under the bpffs it finds in
	# /proc/mounts, which in a chroot names the mount by its path outside
	# ("mkdir /sys/fs/bpf/xdp//globals failed"); `ip -n` mounts /sys, and
	# so a bpffs, of its own. Nothing here needs the caller's pins.
	ip -n "$(ns "$name")" link set dev eth0 xdp obj "$obj" sec xdp || return 1
	tc -n "$(ns "$name")" qdisc replace dev eth0 clsact || return 1
	tc -n "$(ns "$name")" filter replace dev eth0 egress pref 1 bpf da obj "$obj" sec tc || return 1
	echo "loss program $(basename "$obj")"
}

bridge_loss_clear() {
	local name=$1
	in_ns "$TOR" tc qdisc del dev "$(bridge_port "$name")" root 2> /dev/null
	in_ns "$name" tc qdisc del dev eth0 root 2> /dev/null
	in_ns "$name" tc qdisc del dev eth0 clsact 2> /dev/null
	in_ns "$name" ip link set dev eth0 xdp off || return 1
	in_ns "$name" ethtool -K eth0 gro on > /dev/null
}
