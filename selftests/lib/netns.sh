# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared helpers for network-namespace tests: TAP output, uniquely named
# namespaces and veth links, cleanup on exit (failures included).
#
#   . "$(dirname "$0")/../lib/netns.sh"      # sets a trap on EXIT
#
# TAP output: selftests/lib/tap.sh, sourced from here (ok, not_ok, skip,
# check, check_fails, xfail, diag, bail, tap_done).
#
# Namespaces and links (every name includes this shell's PID, $$, so runs
# in parallel or after a crashed run never collide; all are removed at exit):
#   ns NAME               print the full name of namespace NAME (esa-$$-NAME)
#   ns_add NAME           create namespace NAME with lo up (at exit, its
#                         processes are killed and it is removed)
#   in_ns NAME CMD...     run CMD in namespace NAME ("root": this namespace).
#                         Uses nsenter --net, not `ip netns exec`, so the
#                         caller's /sys/fs/bpf pins stay visible.
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
#                         PORT, at most 10 s (selftests/lib/udp_wait.sh)
# (ns, port and pin_path only print names: safe inside $(...).)
#   cleanup_add CMD...    run CMD at exit (last added runs first)
#
# Addresses: only in namespaces a test creates (e.g. 198.18.0.0/15, the
# benchmarking range), never anything else.

. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
. "$(dirname "${BASH_SOURCE[0]}")/udp_wait.sh"

NETNS_TAG=esa-$$
SWITCH=root
__cleanups=()

cleanup_add() { __cleanups+=("$*"); }
__cleanup() {
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
trap __cleanup EXIT
trap 'exit 130' INT TERM

ns() { echo "$NETNS_TAG-$1"; }
ns_add() {
	local n
	n=$(ns "$1")
	ip netns add "$n" || return 1
	cleanup_add "ip netns pids $n | xargs -r kill; ip netns del $n"
	ip -n "$n" link set lo up
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

port() {
	if [ "$SWITCH" = root ]; then
		echo "e$$-$1"
	else
		echo "p-$1"
	fi
}

host_add() {
	local name=$1 addr=$2 hns p tmp
	[ ${#name} -le 6 ] || { echo "host_add: name '$name' longer than 6" >&2; return 1; }
	hns=$(ns "$name")
	p=$(port "$name")
	tmp=t$$-$name
	ns_add "$name" || return 1
	# Create in this namespace under temporary names, then move.
	ip link add "$tmp" type veth peer name "$p" || return 1
	cleanup_add ip link del "$p"
	ip link set "$tmp" netns "$hns" || return 1
	ip -n "$hns" link set "$tmp" name eth0 || return 1
	ip -n "$hns" addr add "$addr" dev eth0 || return 1
	ip -n "$hns" link set eth0 up || return 1
	in_ns "$name" ethtool -K eth0 gro on > /dev/null || return 1
	if [ "$SWITCH" != root ]; then
		ip link set "$p" netns "$(ns "$SWITCH")" || return 1
	fi
	in_ns "$SWITCH" ip link set "$p" up
}

udp_bound_wait() { udp_bound_wait_via "$2" in_ns "$1"; }

ifindex() {
	in_ns "$1" ip -o link show dev "$2" | awk -F: '{ print $1; exit }'
}

pin_path() { echo "/sys/fs/bpf/$NETNS_TAG-$1"; }
