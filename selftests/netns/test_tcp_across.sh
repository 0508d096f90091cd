#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TCP and UDP between hosts across the ESA switch with the hosts' default
# offloads (bpf/esa_csum.h): three hosts in namespaces whose eth0 keeps TX
# checksum offload on (CHECKSUM_PARTIAL frames), the switch attached to
# their ports by aggctl in this namespace (module-less flavour here, the
# module's in the VM). A 4 MiB TCP stream each way and UDP datagrams with
# checksums arrive intact, and no receiver counts a checksum error.
# usage: test_tcp_across.sh   (root; prints TAP)
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
. "$ROOT/selftests/lib/topo.sh"

AGGCTL=$ROOT/build/tools/aggctl
[ -x "$AGGCTL" ] || bail "missing $AGGCTL (run make)"
PIN=$(pin_path tcp)
NET=198.18.$(($$ % 200 + 20))
TMP=$(mktemp -d)
cleanup_add rm -rf "$TMP"

for h in 1 2 3; do
	host_add "h$h" "$NET.$h/24" || bail "create host h$h"
done
feat=$(in_ns h1 ethtool -k eth0 | awk -F': ' '$1 == "tx-checksumming" { print $2 }')
if [ "$feat" = on ]; then
	ok "hosts keep TX checksum offload (tx-checksumming: $feat)"
else
	not_ok "hosts keep TX checksum offload (tx-checksumming: $feat)"
fi
devs=()
for h in 1 2 3; do devs+=(dev "$(port "h$h")"); done
cleanup_add "$AGGCTL" -d "$PIN" switch unload
cleanup_add "$AGGCTL" -d "$PIN" switch detach "${devs[@]}"
check "aggctl switch attach to the 3 ports" \
	"$AGGCTL" -d "$PIN" switch attach "${devs[@]}" || tap_done
check "ping h1 -> h3 through the switch" in_ns h1 ping -c 2 -i 0.2 -W 2 "$NET.3"

# csum_errors NS: TCP and UDP checksum errors the host counted.
csum_errors() {
	in_ns "$1" nstat -az TcpInCsumErrors UdpInCsumErrors 2>/dev/null |
		awk '/CsumErrors/ { s += $2 } END { print s + 0 }'
}

# tcp FROM TO: a 4 MiB stream, compared byte for byte.
tcp() {
	local from=$1 to=$2 port=$((9000 + RANDOM % 1000)) pid
	head -c 4194304 /dev/urandom > "$TMP/tx"
	rm -f "$TMP/rx"
	in_ns "$to" timeout 30 socat -u TCP4-LISTEN:$port,bind="$NET.${to#h}",reuseaddr \
		OPEN:"$TMP/rx",creat > /dev/null 2>&1 &
	pid=$!
	sleep 0.3
	in_ns "$from" timeout 20 socat -u OPEN:"$TMP/tx" \
		TCP4:"$NET.${to#h}":$port,connect-timeout=5 2>&1 | sed 's/^/# /'
	wait "$pid"
	cmp -s "$TMP/tx" "$TMP/rx"
}
e0=$(( $(csum_errors h2) + $(csum_errors h3) + $(csum_errors h1) ))
check "TCP h1 -> h2: 4 MiB arrive intact" tcp h1 h2
check "TCP h3 -> h1: 4 MiB arrive intact" tcp h3 h1

# UDP with checksums (socat's sockets compute them, left to offload).
msg="esa-udp-$$-$RANDOM"
in_ns h2 timeout 10 socat -u UDP4-RECV:9999,bind="$NET.2" OPEN:"$TMP/udp",creat,append &
rxpid=$!
cleanup_add kill "$rxpid"
sleep 0.3
for _ in 1 2 3; do
	echo "$msg" | in_ns h3 socat -u - UDP4-SENDTO:"$NET.2":9999
	grep -q "$msg" "$TMP/udp" 2>/dev/null && break
	sleep 0.3
done
check "UDP datagram with checksum h3 -> h2 received intact" grep -q "$msg" "$TMP/udp"
e1=$(( $(csum_errors h2) + $(csum_errors h3) + $(csum_errors h1) ))
check "no host counted a TCP or UDP checksum error ($((e1 - e0)))" test "$e1" = "$e0"
tap_done
