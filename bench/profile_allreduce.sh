#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where the CPU time of an allreduce goes (Documentation/profile.rst):
# one run on the topology of `make bench` (a PS host, N worker hosts in
# namespaces, the XDP switch on their links) under a system-wide
# `perf record -g` (cpu-clock), its samples sorted into stages by
# profile_categories.py: the switch's program, its result multicast, the
# copy of host frames into XDP, the hosts' receive stack, the endpoints'
# system calls, poll and wake-ups, user space. Not a test; needs root and
# perf (Debian: linux-perf).
#
# usage: profile_allreduce.sh esa|hostonly|gloo SIZE ITERATIONS [WORKERS]
#   SIZE in bytes or with K/M; WORKERS 1..4 (4). PERF_HZ sets the sampling
#   rate (997); VALUES the values per packet of esa and hostonly (363, the
#   most: profiles at two counts split the cost into a per-packet and a
#   per-value part). Keeps the profile in build/profile/MODE-SIZE.data.
#   SCHED=1 records the scheduler's switches instead and prints when the
#   CPUs were idle during the allreduce and what ran meanwhile
#   (sched_idle.py; build/profile/MODE-SIZE.sched.data); esa and hostonly
#   only (gloo's ranks wait for their start in a sleeping loop).
. "$(dirname "$0")/../selftests/endpoint/lib.sh"	# the switch topology
cleanup_add 'topo_down; rm -rf "$TMP"'
MODE=${1:-} SIZE=${2:-} IT=${3:-} N=${4:-4}
HZ=${PERF_HZ:-997}
VALUES=${VALUES:-363}
PY=/usr/bin/python3
die() { echo "profile_allreduce: $*" >&2; exit 1; }
usage() { die "usage: profile_allreduce.sh esa|hostonly|gloo SIZE ITERATIONS [WORKERS]"; }

case $MODE in esa|hostonly|gloo) ;; *) usage ;; esac
[[ "$SIZE" =~ ^([1-9][0-9]*)([KM]?)$ ]] || usage
BYTES=${BASH_REMATCH[1]}
case ${BASH_REMATCH[2]} in K) BYTES=$((BYTES << 10)) ;; M) BYTES=$((BYTES << 20)) ;; esac
[[ "$IT" =~ ^[1-9][0-9]*$ ]] || usage
[[ "$N" =~ ^[1-4]$ ]] || usage
[ "${SCHED:-0}" = 1 ] && [ "$MODE" = gloo ] && die "SCHED=1: esa and hostonly only"
[[ "$VALUES" =~ ^[1-9][0-9]*$ ]] && [ "$VALUES" -le 363 ] ||
	die "VALUES: '$VALUES' is not 1..363"
command -v perf > /dev/null || die "perf not found (Debian: apt-get install linux-perf)"
[ -x "$ESA_JOB" ] && [ -x "$ESA_PS" ] || die "esa-job/esa-ps not built (make)"

# The endpoints run under names of their own (the command name is what
# perf records), so other users of esa-job or python on the machine do
# not count.
ln -s "$ESA_JOB" "$TMP/esa-job-prof"
ln -s "$ESA_PS" "$TMP/esa-ps-prof"
ln -s "$(readlink -f $PY)" "$TMP/gloo-rank"
OUT=$ROOT/build/profile
mkdir -p "$OUT"
DATA=$OUT/$MODE-$SIZE.data
record=(-e cpu-clock -F "$HZ" -g)
if [ "${SCHED:-0}" = 1 ]; then
	DATA=$OUT/$MODE-$SIZE.sched.data
	record=(-e sched:sched_switch)
fi

hosts=(1)
for ((w = 0; w < N; w++)); do hosts+=($((10 + w))); done
topo_up "${hosts[@]}" > /dev/null && hosts_gro "${hosts[@]}" ||
	die "topology failed"
topo_ping "${hosts[@]}"
PS=$(haddr 1)
agg policy set esa && agg switch set slots 4096 timeout 20000 || die "switch configuration failed"

run_esa() {
	local port=47000 psargs=(--no-result-on-complete) ws="" wargs=() w pids=()
	if [ "$MODE" = hostonly ]; then
		port=47010
		psargs=(--host-only)
	fi
	for ((w = 0; w < N; w++)); do
		ws+="${ws:+,}$(haddr $((10 + w))):$port"
		wargs+=(worker "$(haddr $((10 + w))):$port")
	done
	# host-only traffic is not for the switch: no job there
	if [ "$MODE" = esa ]; then
		agg job add id 1 ps "$PS:$port" "${wargs[@]}" priority 1 || die "job add failed"
	fi
	ip netns exec "$(ns 1)" "$TMP/esa-ps-prof" --bind "$PS:$port" --job "1:$N@$ws" \
		--iterations "$IT" --size "$BYTES" --values "$VALUES" --linger-ms 300 --deadline-s 600 \
		"${psargs[@]}" > "$TMP/ps" 2>&1 &
	pids+=($!)
	udp_bound_wait 1 "$port" || die "the PS did not bind $PS:$port"
	for ((w = 0; w < N; w++)); do
		ip netns exec "$(ns $((10 + w)))" "$TMP/esa-job-prof" --job 1 --worker $w \
			--fan-in "$N" --ps "$PS:$port" --bind "$(haddr $((10 + w))):$port" \
			--slots 4096 --window 256 --values "$VALUES" --iterations "$IT" --size "$BYTES" -j \
			> "$TMP/w$w" 2> "$TMP/w$w.err" &
		pids+=($!)
	done
	for w in "${pids[@]}"; do wait "$w" || die "a worker or the PS failed: $(cat "$TMP"/w*.err "$TMP/ps")"; done
}

if [ "$MODE" = gloo ]; then
	# Connected and ready first, so the profile holds the allreduces only.
	pids=()
	for ((r = 0; r < N; r++)); do
		ip netns exec "$(ns $((10 + r)))" env GLOO_SOCKET_IFNAME=eth0 \
			"$TMP/gloo-rank" "$ROOT/bench/gloo_allreduce.py" \
			--rank $r --world "$N" --master "$(haddr 10):29499" \
			--size "$BYTES" --iterations "$IT" --ready-file "$TMP/ready$r" \
			--start-file "$TMP/start" > "$TMP/g$r" 2>&1 &
		pids+=($!)
	done
	for ((t = 0; t < 1200; t++)); do
		[ "$(ls "$TMP"/ready* 2> /dev/null | wc -l)" = "$N" ] && break
		sleep 0.1
	done
	[ "$t" -lt 1200 ] || die "gloo ranks did not connect: $(cat "$TMP"/g*)"
	perf record -q "${record[@]}" -a -o "$DATA" 2> /dev/null &
	perfp=$!
	sleep 1
	touch "$TMP/start"
	for r in "${pids[@]}"; do wait "$r" || die "a gloo rank failed: $(cat "$TMP"/g*)"; done
	kill -INT $perfp
	wait $perfp
	ranks=gloo-rank
else
	perf record -q "${record[@]}" -a -o "$DATA" 2> /dev/null &
	perfp=$!
	sleep 1
	run_esa
	kill -INT $perfp
	wait $perfp
	ranks=
fi
# Wall time: each iteration from the first worker in to the last one out.
wall=$("$PY" - "$TMP"/[wg][0-9] <<'PY'
import json, sys
ws = [json.load(open(f)) for f in sys.argv[1:]]
its = zip(*[[i["allreduce_ms"] for i in w["iterations"]] for w in ws])
print(f"{sum(max(t) for t in its):.0f}")
PY
)
echo "# $MODE, $N workers, $IT x $SIZE, $VALUES values per packet: $wall ms of allreduce (wall); load average $(cut -d' ' -f1-3 /proc/loadavg); profile $DATA"
if [ "${SCHED:-0}" = 1 ]; then
	perf script -F cpu,time,trace -i "$DATA" 2> /dev/null |
		"$PY" "$ROOT/bench/sched_idle.py" --comm esa-job-prof esa-ps-prof
	exit
fi
perf script -F comm,ip,sym -i "$DATA" 2> /dev/null |
	"$PY" "$ROOT/bench/profile_categories.py" --hz "$HZ" \
		--bytes $((BYTES * IT)) --ranks "$ranks" --wall-ms "$wall"
