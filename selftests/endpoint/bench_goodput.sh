#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Allreduce goodput of one job with 4 workers, 1 MiB and 64 MiB tensors,
# through the XDP switch (it sums, the PS only finishes leftovers) against
# the host-only baseline in the same run: the same library and topology,
# but the job uses UDP port BASE_PORT instead of ESA_UDP_PORT, so the
# switch passes every packet at layer 2 and esa-ps --host-only does all
# sums and unicasts every result. Not a timed test: prints a table (and
# JSON with -j) for the report.
#
# usage: bench_goodput.sh [-j] [ITER_1M] [ITER_64M]
. "$(dirname "$0")/lib.sh"
trap 'topo_down; rm -rf "$TMP"' EXIT
json=0
[ "${1:-}" = -j ] && { json=1; shift; }
IT1=${1:-20}
IT64=${2:-3}
BASE_PORT=47010
for t in "$ESA_JOB" "$ESA_PS" "$AGGCTL"; do
	[ -x "$t" ] || { echo "bench_goodput: $t not built (make selftests)" >&2; exit 1; }
done
topo_up 1 10 11 12 13 > /dev/null || { echo "bench_goodput: topology failed" >&2; exit 1; }
topo_ping 1 10 11 12 13
PS=$(haddr 1)

# run MODE SIZE ITER: median over iterations of the goodput of the worker
# that entered the allreduce last (its time is the collective's own, not
# the other workers' wait for the slowest to finish computing).
run() {
	local mode=$1 size=$2 iter=$3 port=47000 psargs=(--no-result-on-complete) w pids=()
	if [ "$mode" = baseline ]; then
		port=$BASE_PORT
		psargs=(--host-only)
	fi
	local ws="$(haddr 10):$port,$(haddr 11):$port,$(haddr 12):$port,$(haddr 13):$port"
	local wargs=()
	for w in 10 11 12 13; do wargs+=(worker "$(haddr $w):$port"); done
	agg job del id 1 2> /dev/null
	agg policy set esa && agg switch set slots 4096 timeout 20000 &&
		agg job add id 1 ps "$PS:$port" "${wargs[@]}" priority 1 ||
		{ echo "bench_goodput: switch configuration failed" >&2; exit 1; }
	ip netns exec "$(ns 1)" "$ESA_PS" --bind "$PS:$port" --job "1:4@$ws" \
		--iterations "$iter" --size "$size" --linger-ms 500 \
		--deadline-s 600 "${psargs[@]}" \
		> "$TMP/ps" 2>&1 &
	local psp=$!
	for w in 0 1 2 3; do
		ip netns exec "$(ns $((10 + w)))" "$ESA_JOB" --job 1 --worker $w \
			--fan-in 4 --ps "$PS:$port" --bind "$(haddr $((10 + w))):$port" \
			--slots 4096 --window 256 --iterations "$iter" --size "$size" -j \
			> "$TMP/w$w" 2> "$TMP/w$w.err" &
		pids+=($!)
	done
	for w in "${pids[@]}"; do
		wait "$w" || { echo "bench_goodput: a worker failed:" >&2; cat "$TMP"/w*.err >&2; }
	done
	wait $psp
	python3 - "$TMP" <<'PY'
import json, statistics, sys
ws = [json.load(open(f"{sys.argv[1]}/w{w}")) for w in range(4)]
its = zip(*[[i["allreduce_ms"] for i in j["iterations"]] for j in ws])
ms = statistics.median(min(t) for t in its)
print(f'{ws[0]["size"] * 8 / (ms * 1e6):.4f}')
PY
}

declare -A G
for size in 1M 64M; do
	it=$IT1
	[ $size = 64M ] && it=$IT64
	for mode in switch baseline; do
		G[$mode.$size]=$(run $mode $size $it)
	done
done
r1=$(python3 -c "print(f'{${G[switch.1M]} / ${G[baseline.1M]}:.2f}')")
r64=$(python3 -c "print(f'{${G[switch.64M]} / ${G[baseline.64M]}:.2f}')")
if [ $json = 1 ]; then
	printf '{"workers":4,"unit":"Gbit/s","1M":{"switch":%s,"baseline":%s,"ratio":%s},"64M":{"switch":%s,"baseline":%s,"ratio":%s}}\n' \
		"${G[switch.1M]}" "${G[baseline.1M]}" "$r1" "${G[switch.64M]}" "${G[baseline.64M]}" "$r64"
else
	echo "allreduce goodput, 1 job x 4 workers (Gbit/s of tensor per worker, median iteration)"
	printf '%-8s %12s %12s %8s\n' size switch host-only ratio
	printf '%-8s %12s %12s %8s\n' 1MiB "${G[switch.1M]}" "${G[baseline.1M]}" "$r1"
	printf '%-8s %12s %12s %8s\n' 64MiB "${G[switch.64M]}" "${G[baseline.64M]}" "$r64"
fi
