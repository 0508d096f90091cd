#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host smoke test: a native XDP program (l2_redirect.bpf.c) on the two
# ports of a switch namespace joins hosts h1 and h2, which have no other
# path between them. Ping and UDP must cross, the program's counters must
# account for it, and without a peer entry the same traffic must stop.
# usage: xdp_l2_redirect.sh   (root; prints TAP)
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
. "$ROOT/selftests/lib/topo.sh"
. "$ROOT/selftests/lib/bpftool.sh"

OBJ=$ROOT/build/netns/l2_redirect.bpf.o
[ -f "$OBJ" ] || bail "missing $OBJ (run make)"

switch_add sw || bail "create switch namespace"
host_add h1 198.18.0.1/24 || bail "create host h1"
host_add h2 198.18.0.2/24 || bail "create host h2"
# l2_redirect.bpf.c only redirects: frames the hosts leave to checksum
# offload would arrive with partial checksums (the ESA switch completes
# them, this minimal program does not).
for h in h1 h2; do in_ns $h ethtool -K eth0 tx off > /dev/null; done
ok "two hosts joined to switch namespace $(ns sw)"

PROG=$(pin_path l2prog)
MAPS=$(pin_path l2maps)
check "load l2_redirect and pin its maps" \
	bpftool prog load "$OBJ" "$PROG" type xdp pinmaps "$MAPS" || tap_done

p1=$(port h1) p2=$(port h2)
if1=$(ifindex sw "$p1")
if2=$(ifindex sw "$p2")
# ifindex values are per namespace: the devmap resolves them in the
# namespace of the process updating it, so update from inside sw.
check "peer ports set in the devmap" \
	in_ns sw bash -c "$(declare -f le32 map_set_u32); map_set_u32 $MAPS/l2_peer $if1 $if2 &&
		map_set_u32 $MAPS/l2_peer $if2 $if1" || tap_done

for p in "$p1" "$p2"; do
	check "attach native XDP to $p" \
		in_ns sw bpftool net attach xdpdrv pinned "$PROG" dev "$p" || tap_done
	if in_ns sw ip -d link show dev "$p" | grep -q 'prog/xdp id'; then
		ok "$p runs the program in native mode"
	else
		not_ok "$p runs the program in native mode"
	fi
done

before=$(map_u64 "$MAPS/l2_stats" 0)
check "ping h1 -> h2 through XDP" \
	in_ns h1 ping -c 3 -i 0.2 -W 2 198.18.0.2

# UDP, with a real receiver: the payload must arrive intact.
msg="esa-netns-$$-$RANDOM"
rx=$(mktemp)
cleanup_add rm -f "$rx"
in_ns h2 timeout 10 socat -u UDP4-RECV:9000,bind=198.18.0.2 OPEN:"$rx",creat,append &
rxpid=$!
cleanup_add kill "$rxpid"
sleep 0.5
for _ in 1 2 3; do
	echo "$msg" | in_ns h1 socat -u - UDP4-SENDTO:198.18.0.2:9000
	grep -q "$msg" "$rx" && break
	sleep 0.5
done
if grep -q "$msg" "$rx"; then
	ok "UDP datagram h1 -> h2 received intact"
else
	not_ok "UDP datagram h1 -> h2 received intact"
fi
kill "$rxpid" 2>/dev/null

after=$(map_u64 "$MAPS/l2_stats" 0)
diag "redirected frames: before $before, after $after"
# 3 echo requests + 3 replies + 1 UDP datagram at least (plus ARP).
if [ -n "$after" ] && [ $((after - before)) -ge 7 ]; then
	ok "program counted the redirected frames ($((after - before)))"
else
	not_ok "program counted the redirected frames (${before:-?} -> ${after:-?})"
fi

# Without a peer for h1's port nothing crosses: the path really is XDP.
drops=$(map_u64 "$MAPS/l2_stats" 1)
# shellcheck disable=SC2046
bpftool map delete pinned "$MAPS/l2_peer" key $(le32 "$if1")
check_fails "no peer entry: ping h1 -> h2 fails" \
	in_ns h1 ping -c 2 -i 0.2 -W 1 198.18.0.2
drops2=$(map_u64 "$MAPS/l2_stats" 1)
if [ -n "$drops2" ] && [ "$drops2" -gt "${drops:-0}" ]; then
	ok "program counted the dropped frames ($drops -> $drops2)"
else
	not_ok "program counted the dropped frames (${drops:-?} -> ${drops2:-?})"
fi

for p in "$p1" "$p2"; do
	check "detach XDP from $p" in_ns sw bpftool net detach xdpdrv dev "$p"
done
tap_done
