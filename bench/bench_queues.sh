#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The switch's packet rate per core with one and with two receive queues
# on its port (bench/bench_queues.c): for each queue count a veth
# pair with that many queues, the switch natively on one end, frames sent
# into the other from 1 and from 2 CPUs; then the same with a plain
# XDP_DROP on the port (the cost of the generator and veth alone). A
# benchmark that prints figures, not a test. Each configuration's last line:
#   queues=Q threads=T mpps=<min/median/max> prog_ns=... mpps_per_busy_cpu=...
#
# usage: bench_queues.sh [REPEATS [FRAMES]]   (default 5 repeats, 2^20 frames)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/build/bench/bench_queues
REPEATS=${1:-5}
FRAMES=${2:-1048576}
if [ ! -x "$BIN" ]; then
	echo "bench_queues: $BIN missing: run 'make -C bench'" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "bench_queues: needs root (BPF, links)" >&2
	exit 1
fi
# shellcheck source=../selftests/lib/topo.sh
. "$ROOT/selftests/lib/topo.sh"		# the veth pair, cleanup
GEN=$(ifname gen)
SW=$(ifname sw)
# Frames each receive queue of the port took since the last call (veth's
# per-queue XDP counters).
declare -A seen
queue_spread() {
	local line=() q n
	while read -r q n; do
		line+=("rx-$q $((n - ${seen[$q]:-0}))")
		seen[$q]=$n
	done < <(ethtool -S "$SW" | sed -n 's/^ *rx_queue_\([0-9]*\)_xdp_packets: \([0-9]*\)/\1 \2/p')
	echo "# frames per queue: ${line[*]}"
}
echo "# kernel $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for queues in 1 2; do
	veth_add root "$GEN" root "$SW" numtxqueues "$queues" numrxqueues "$queues"
	seen=()
	for threads in 1 2; do
		"$BIN" -t "$threads" -r "$REPEATS" -n "$FRAMES" "$GEN" "$SW"
		queue_spread
	done
	"$BIN" -t 2 -r "$REPEATS" -n "$FRAMES" --drop "$GEN" "$SW"
	ip link del "$GEN"
done
