#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench-dataplane`: ns per packet of the XDP data plane's add and
# completing paths (BPF_PROG_TEST_RUN on CPU 0) at 64 and 363 values, and
# a plain C loop doing the same add; with --scale also 1 against 1023 jobs
# and 1024 against ESA_MAX_AGGREGATORS aggregators, side by side. With the
# esa module loaded (the VM), the module flavour runs next to the
# module-less one on every packet: its job 1 (32 workers, the address plan
# of selftests/bpf/dp_util.h) is set up here with aggctl and removed after.
# A figure, not a test. The last line:
#   dataplane values=363 add_ns=<x> complete_ns=<y> cloop_ns=<z> ratio=<x/z>
#
# usage: bench_dataplane.sh [--scale]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/build/bench/bench_dataplane
AGG=$ROOT/build/tools/aggctl
if [ ! -x "$BIN" ]; then
	echo "bench_dataplane: $BIN missing: run 'make bench-dataplane'" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "bench_dataplane: needs root (BPF)" >&2
	exit 1
fi
echo "# kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
if [ ! -d /sys/module/esa ]; then
	exec "$BIN" "$@"
fi
# The module flavour's config and job come from the module.
workers=()
for ((i = 0; i < 32; i++)); do workers+=(worker "10.77.1.$((10 + i)):$((40100 + i))"); done
"$AGG" job del id 1 > /dev/null 2>&1 || true
trap '"$AGG" job del id 1 > /dev/null 2>&1 || true' EXIT
"$AGG" policy set esa
"$AGG" switch set slots 64 timeout 0
"$AGG" job add id 1 ps 10.77.1.1:47000 "${workers[@]}" priority 1
"$BIN" --flavours maps,kmod "$@"
