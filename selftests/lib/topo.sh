#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The one topology library of the shell tests: TAP output, uniquely named
# namespaces and veth links, one cleanup on exit (failures included).
#
#   . "$(dirname "$0")/../lib/topo.sh"      # sets a trap on EXIT
#
# A tool with exit handling of its own (tools/esa-bench/topology.sh) sets
# TOPO_TRAP=no before sourcing and calls topo_cleanup from its handler.
# A program that cannot source it (a C test) runs it as a command:
#   selftests/lib/topo.sh veth_add root IF_A root IF_B [OPTION VALUE...]
# makes the pair in the caller's namespace and leaves it there (the
# caller removes it, or the namespace goes with it); a failed step
# leaves nothing. Exit 0, 1 on failure, 2 on bad usage.
#
# TAP output: selftests/lib/tap.sh, sourced from here (ok, not_ok, skip,
# check, check_fails, xfail, diag, bail, tap_done).
#
# Namespaces and links (every name includes this shell's PID, $$, so runs
# in parallel or after a crashed run never collide; all are removed at exit):
#   ns NAME               print the full name of namespace NAME (esa-$$-NAME)
#   ns_add NAME           create namespace NAME with lo up (at exit, its
#                         processes are killed and it is removed)
#   ns_del NAME           remove namespace NAME now: its processes are
#                         killed, its veth pairs (both ends) are gone on return
#   in_ns NAME CMD...     run CMD in namespace NAME ("root": this namespace).
#                         Uses nsenter --net, not `ip netns exec`, so the
#                         caller's /sys/fs/bpf pins stay visible.
#   veth_add NS_A IF_A NS_B IF_B [OPTION VALUE...]
#                         a veth pair: IF_A in namespace NS_A, IF_B in NS_B
#                         (as for in_ns: "root" or a name given to ns_add),
#                         both up, offloads untouched. A name in "root" must
#                         be unique: take it from port or ifname. OPTIONs
#                         are `ip link add` link options given to both ends
#                         (mtu N, numtxqueues N, numrxqueues N).
#   ifname NAME           print a link name for this namespace that no
#                         parallel run uses (e$$-NAME; keep NAME to 6)
#   stub_ports_add NAME...
#                         switch ports with no host behind them: link
#                         $(ifname NAME) here, its peer NAME in namespace
#                         "stubs" (made on first use), up with GRO on so that
#                         frames forwarded to the port arrive (and go no
#                         further). For control-plane tests.
#   switch_add [NAME]     choose the switch: a new namespace NAME, or "root"
#                         for this namespace (default "root"). Sets SWITCH.
#   host_add NAME ADDR/PLEN
#                         create namespace NAME with "eth0" at ADDR, joined
#                         by a veth pair to a switch port (port name printed
#                         by `port NAME`). eth0 keeps its default offloads
#                         (the ESA switch completes partial checksums) but
#                         gets GRO on (a veth that receives XDP-redirected
#                         frames needs NAPI). Keep NAME to 6 characters.
#   port NAME             print host NAME's switch-side interface name
#   ifindex NS IFNAME     print IFNAME's ifindex in namespace NS ("root" ok)
#   pin_path NAME         print a unique path under /sys/fs/bpf (removed at exit)
#   udp_bound_wait NAME PORT
#                         until a socket in namespace NAME is bound to UDP
#                         PORT, at most 10 s; 1 if none ever was. For a PS
#                         started in the background: workers start after it,
#                         since a sum the switch completes before the PS
#                         binds is lost to the PS (Documentation/endpoints.rst,
#                         "Known limits").
# (ns, ifname, port and pin_path only print names: safe inside $(...).)
#   cleanup_add CMD...    run CMD at exit (last added runs first)
#   topo_cleanup          run them now, then remove whatever this shell
#                         named and a failed step did not register
#
# Addresses: only in namespaces a test creates (e.g. 198.18.0.0/15, the
# benchmarking range), never anything else.

# Sourced twice (topo_bridge.sh by a script that has topo.sh already):
# once is the one set of names and cleanups.
[ -n "${__TOPO_SH:-}" ] && return 0
__TOPO_SH=1
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

NETNS_TAG=esa-$$
SWITCH=root
__cleanups=()

cleanup_add() { __cleanups+=("$*"); }
topo_cleanup() {
	local i
	for ((i = ${#__cleanups[@]} - 1; i >= 0; i--)); do
		eval "${__cleanups[i]}" > /dev/null 2>&1 || true
	done
	__cleanups=()
	# Sweep whatever this run named and a failed step did not register.
	local n
	for n in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
		case $n in "$NETNS_TAG"-*) ip netns del "$n" 2>/dev/null ;; esac
	done
	for n in $(ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
		case $n in "e$$-"*|"t$$-"*) ip link del "$n" 2>/dev/null ;; esac
	done
	rm -rf /sys/fs/bpf/"$NETNS_TAG"-* 2>/dev/null
}
# As a command, what it makes outlives it: no cleanup at exit.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	TOPO_TRAP=no
fi
if [ "${TOPO_TRAP:-yes}" != no ]; then
	trap topo_cleanup EXIT
	trap 'exit 130' INT TERM
fi

ns() { echo "$NETNS_TAG-$1"; }
ns_add() {
	local n
	n=$(ns "$1")
	ip netns add "$n" || return 1
	cleanup_add "ip netns pids $n | xargs -r kill; ip netns del $n"
	ip -n "$n" link set lo up
}
ns_del() {
	local n l
	n=$(ns "$1")
	ip netns pids "$n" 2>/dev/null | xargs -r kill 2>/dev/null
	# Its veth links first: a namespace's links go after ip netns del
	# returns, a deleted link's peer is gone when ip link del returns.
	for l in $(ip -n "$n" -o link show type veth | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
		ip -n "$n" link del dev "$l"
	done
	ip netns del "$n"
}
in_ns() {
	local n=$1
	shift
	if [ "$n" = root ]; then
		"$@"
	else
		nsenter --net="/run/netns/$(ns "$n")" "$@"
	fi
}

switch_add() {
	SWITCH=${1:-root}
	[ "$SWITCH" = root ] || ns_add "$SWITCH"
}

ifname() { echo "e$$-$1"; }

port() {
	if [ "$SWITCH" = root ]; then
		ifname "$1"
	else
		echo "p-$1"
	fi
}

# A link made in this namespace under a temporary name, then moved to NS
# and named IF there (two namespaces may each hold an "eth0").
__veth_place() { # tmp ns if
	[ "$2" = root ] && [ "$1" = "$3" ] && return 0
	if [ "$2" != root ]; then
		ip link set dev "$1" netns "$(ns "$2")" || return 1
	fi
	in_ns "$2" ip link set dev "$1" name "$3"
}

__nveth=0
veth_add() {
	local nsa=$1 ifa=$2 nsb=$3 ifb=$4 ta tb
	shift 4
	__nveth=$((__nveth + 1))
	ta=t$$-${__nveth}a tb=t$$-${__nveth}b
	[ "$nsa" = root ] && ta=$ifa
	ip link add name "$ta" "$@" type veth peer name "$tb" "$@" || return 1
	if [ "$nsa" = root ]; then
		cleanup_add ip link del dev "$ifa"
	elif [ "$nsb" = root ]; then
		cleanup_add ip link del dev "$ifb"
	fi
	__veth_place "$ta" "$nsa" "$ifa" && __veth_place "$tb" "$nsb" "$ifb" || return 1
	in_ns "$nsa" ip link set dev "$ifa" up && in_ns "$nsb" ip link set dev "$ifb" up
}

stub_ports_add() {
	local n
	[ -e "/run/netns/$(ns stubs)" ] || ns_add stubs || return 1
	for n in "$@"; do
		veth_add root "$(ifname "$n")" stubs "$n" || return 1
		in_ns stubs ethtool -K "$n" gro on > /dev/null || return 1
	done
}

host_add() {
	local name=$1 addr=$2
	[ ${#name} -le 6 ] || { echo "host_add: name '$name' longer than 6" >&2; return 1; }
	ns_add "$name" || return 1
	veth_add "$SWITCH" "$(port "$name")" "$name" eth0 || return 1
	in_ns "$name" ip addr add "$addr" dev eth0 || return 1
	in_ns "$name" ethtool -K eth0 gro on > /dev/null
}

udp_bound_wait() {
	local t
	for ((t = 0; t < 200; t++)); do
		in_ns "$1" ss -Huln "sport = :$2" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}

ifindex() {
	in_ns "$1" ip -o link show dev "$2" | awk -F: '{ print $1; exit }'
}

pin_path() { echo "/sys/fs/bpf/$NETNS_TAG-$1"; }

# __topo_command VETH_ADD_ARGS...: topo.sh run as a command (see the top).
__topo_command() {
	if [ "$1" != veth_add ] || [ "$2" != root ] || [ "$4" != root ] || [ $# -lt 5 ]; then
		echo "usage: topo.sh veth_add root IF_A root IF_B [OPTION VALUE...]" \
		     "(as a command: both ends in the caller's namespace)" >&2
		exit 2
	fi
	"$@" && exit 0
	topo_cleanup
	exit 1
}
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	__topo_command "$@"
fi
