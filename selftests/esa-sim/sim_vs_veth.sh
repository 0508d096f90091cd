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

. "$ROOT/selftests/lib/topo.sh"	# namespaces and veth links, cleanup at exit
if [ "$(id -u)" != 0 ] || [ ! -x "$BIN" ]; then
	skip "the simulator against the live switch" "needs root and $BIN (make selftests)"
	tap_done
fi
ns_add sim || bail "create namespace sim"
in_ns sim sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
pairs=()
for h in 0 1 2 3 4 5 6 7 8; do
	veth_add sim "p$h" sim "h$h" || bail "veth pair $h"
	# frames redirected into a veth need NAPI on the receiving end
	in_ns sim ethtool -K "h$h" gro on > /dev/null 2>&1
	pairs+=("p$h:h$h")
done
in_ns sim "$BIN" "$SEED" "$STEPS" "${pairs[@]}"
