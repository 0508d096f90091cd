#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench-dataplane`: ns per packet of the XDP data plane's add and
# completing paths (BPF_PROG_TEST_RUN on CPU 0) at 64 and 363 values, and
# a plain C loop doing the same add. A figure, not a test. The last line:
#   dataplane values=363 add_ns=<x> complete_ns=<y> cloop_ns=<z> ratio=<x/z>
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/selftests/bpf/bench_dataplane
if [ ! -x "$BIN" ]; then
	echo "bench_dataplane: $BIN missing: run 'make selftests'" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "bench_dataplane: needs root (BPF)" >&2
	exit 1
fi
echo "# kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exec "$BIN"
