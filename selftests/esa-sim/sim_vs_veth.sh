#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The simulator's switch against the live XDP switch on veth, frame by
# frame (sim_vs_veth.c): nine veth pairs in one namespace, the switch
# ports Pi with the data plane attached natively, the host ends Hi driven
# with packet sockets. A seeded random trace under esa, atp and static,
# plus reclaims after the timeout.
#   sim_vs_veth.sh [SEED [STEPS]]
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/selftests/esa-sim/sim_vs_veth
SEED=${1:-1}
STEPS=${2:-300}
NS=esa-simveth-$$

if [ "$(id -u)" != 0 ] || [ ! -x "$BIN" ]; then
	. "$ROOT/selftests/lib/tap.sh"
	skip "the simulator against the live switch" "needs root and $BIN (make selftests)"
	tap_done
fi
cleanup() { ip netns del "$NS" 2> /dev/null; }
trap cleanup EXIT
ip netns add "$NS" || { echo "not ok 1 - create namespace $NS"; echo "1..1"; exit 1; }
ns() { ip netns exec "$NS" "$@"; }
ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
pairs=()
for h in 0 1 2 3 4 5 6 7 8; do
	ns ip link add "p$h" type veth peer name "h$h" ||
		{ echo "not ok 1 - veth pair $h"; echo "1..1"; exit 1; }
	ns ip link set "p$h" up
	ns ip link set "h$h" up
	# frames redirected into a veth need NAPI on the receiving end
	ns ethtool -K "h$h" gro on > /dev/null 2>&1
	pairs+=("p$h:h$h")
done
ns "$BIN" "$SEED" "$STEPS" "${pairs[@]}"
