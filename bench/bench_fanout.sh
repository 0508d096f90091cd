#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench-fanout`: what a one-armed port's fan-out (Documentation/
# dataplane.rst, "One-armed ports") costs the server per result, on one
# CPU, by the number of copies it makes. A namespace with one veth port,
# attached one-armed by aggctl (the module flavour when the esa module is
# loaded), its peer down so that only the switch side is measured; the
# workers' next hops are permanent neighbour entries. bench_fanout drives
# the XDP program with live frames (the PS's RESULT under atp, 64 values,
# the job's token), each fanned out by esa_fanout, one clone per worker.
# A job of 1 worker is what the server would do for any job if the ToR
# made the copies (a multicast group per job: one frame out per result),
# through the same path. Each size runs once to warm up, then REPEAT
# times (default 5); a figure, not a test: one line per run,
#   fanout workers=<W> frames=<n> fanout_runs=<r> copies_per_s=<c>
#          tc_ns_per_copy=<x> cpu_ns_per_result=<y>
# (bench/bench_fanout.c says what each is), then one per size over its
# runs, min/median/max of each:
#   summary workers=<W> runs=<R> cpu_ns_per_result=<min>/<median>/<max>
#           copies_per_s=... tc_ns_per_copy=...
# usage: [REPEAT=R] [WORKERS="1 3 8 32"] bench_fanout.sh [FRAMES]
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
TOKEN=00000000000000fa
# summary W: the min/median/max of each figure over the runs in $OUT
summary() {
	python3 - "$1" "$OUT" <<'PY'
import re, statistics, sys
runs = [dict(re.findall(r"(\w+)=(\S+)", l)) for l in open(sys.argv[2])
        if l.startswith("fanout ")]
w = int(sys.argv[1])
def mmm(xs, fmt):
    return "/".join(fmt % x for x in (min(xs), statistics.median(xs), max(xs)))
cps = [float(r["copies_per_s"]) for r in runs]
print("summary workers=%d runs=%d cpu_ns_per_result=%s copies_per_s=%s tc_ns_per_copy=%s" %
      (w, len(runs), mmm([float(r["cpu_ns_per_result"]) for r in runs], "%.0f"),
       mmm(cps, "%.0f"), mmm([float(r["tc_ns_per_copy"]) for r in runs], "%.0f")))
PY
}
OUT=$(mktemp)
cleanup_add rm -f "$OUT"
for w in ${WORKERS:-1 3 8 32}; do
	args=(job add id "$w" ps "$NET.1:47000" token "$TOKEN")
	for ((i = 0; i < w; i++)); do
		a=$NET.$((10 + i))
		args+=(worker "$a:$((40000 + i))")
		in_ns fan ip neigh replace "$a" lladdr "02:00:00:00:00:$(printf %02x $((i + 1)))" \
			dev sw0 nud permanent
	done
	in_ns fan "$AGG" -d "$PIN" "${args[@]}"
	# One run first, not counted: it pays for the job's cold caches.
	in_ns fan taskset -c 0 "$BIN" "$PIN" sw0 "$NET.2" "$NET.1" "$w" "$w" "$FRAMES" "$TOKEN" |
		sed "s/^/# warm-up: /"
	: > "$OUT"
	for ((r = 0; r < ${REPEAT:-5}; r++)); do
		in_ns fan taskset -c 0 "$BIN" "$PIN" sw0 "$NET.2" "$NET.1" "$w" "$w" "$FRAMES" "$TOKEN" |
			tee -a "$OUT"
	done
	summary "$w"
	in_ns fan "$AGG" -d "$PIN" stats job "$w" | sed "s/^/# /"
	in_ns fan "$AGG" -d "$PIN" job del id "$w"
done
