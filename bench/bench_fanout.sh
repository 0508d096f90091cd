#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench-fanout`: copies per second of a one-armed port's fan-out
# (Documentation/dataplane.rst, "One-armed ports") on one CPU, for a job
# of 8 and of 32 workers. A namespace with one veth port, attached one-armed
# by aggctl (the module flavour when the esa module is loaded), its peer
# down so that the copies cost only the switch side; the workers' next
# hops are permanent neighbour entries. bench_fanout drives the XDP
# program with live frames (the PS's RESULT under atp, 64 values), each
# fanned out by esa_fanout. A figure, not a test: one line per job size,
#   fanout workers=<W> frames=<n> fanout_runs=<r> copies_per_s=<c> tc_ns_per_copy=<x>
# usage: bench_fanout.sh [FRAMES]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/build/bench/bench_fanout
AGG=$ROOT/build/tools/aggctl
FRAMES=${1:-200000}
[ -x "$BIN" ] || { echo "bench_fanout: $BIN missing: run 'make -C bench'" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench_fanout: needs root" >&2; exit 1; }
# shellcheck source=../selftests/lib/topo.sh
. "$ROOT/selftests/lib/topo.sh"		# the namespace, the veth, cleanup
PIN=$(pin_path fan)
NET=198.18.250
ns_add fan
veth_add fan sw0 fan wire0
in_ns fan ip link set wire0 down	# the copies cost only the switch side
in_ns fan ip addr add "$NET.2/24" dev sw0
in_ns fan sysctl -qw net.ipv4.conf.sw0.forwarding=1
cleanup_add "$AGG" -d "$PIN" switch unload
in_ns fan "$AGG" -d "$PIN" switch attach dev sw0 role one-armed 2> /dev/null
cleanup_add in_ns fan "$AGG" -d "$PIN" switch detach dev sw0
in_ns fan "$AGG" -d "$PIN" policy set atp
echo "# kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), flavour $([ -d /sys/module/esa ] && echo kmod || echo maps)"
for w in 8 32; do
	args=(job add id "$w" ps "$NET.1:47000")
	for ((i = 0; i < w; i++)); do
		a=$NET.$((10 + i))
		args+=(worker "$a:$((40000 + i))")
		in_ns fan ip neigh replace "$a" lladdr "02:00:00:00:00:$(printf %02x $((i + 1)))" \
			dev sw0 nud permanent
	done
	in_ns fan "$AGG" -d "$PIN" "${args[@]}"
	in_ns fan taskset -c 0 "$BIN" "$PIN" sw0 "$NET.2" "$NET.1" "$w" "$w" "$FRAMES"
	in_ns fan "$AGG" -d "$PIN" stats job "$w" | sed "s/^/# /"
	in_ns fan "$AGG" -d "$PIN" job del id "$w"
done
