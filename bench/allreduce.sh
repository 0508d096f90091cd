#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench` (Documentation/performance.rst): one table.
#  - the data plane's ns per packet at ESA_MAX_VALUES values and its ratio
#    to a plain C loop (build/bench/bench_dataplane);
#  - allreduce goodput on one topology (a PS host and up to 4 worker hosts
#    in namespaces, their links the XDP switch's ports) of
#      esa       through the switch (it sums; the PS finishes leftovers),
#      onearmed  the same through a one-armed port of the same switch: the
#                hosts behind a Linux bridge playing the top-of-rack
#                switch, the switch one port on it (Documentation/
#                deployment.rst), the job with a token, 361 values a packet,
#      sharded   the same job spread over two one-armed switch servers
#                (S = 2, Documentation/endpoints.rst, "Over several switch
#                servers"): the first as for onearmed, the second a
#                namespace on the same bridge with a module-less data plane
#                of its own; workers and PS get --switch A,B,
#      hostonly  the same library and hosts, the job on UDP port 47010 so
#                the switch forwards at layer 2 and esa-ps --host-only sums,
#      gloo      PyTorch's torch.distributed gloo allreduce between the
#                worker hosts, TCP through the same switch, the hosts'
#                default offloads (if TCP cannot cross the switch with them,
#                as before the switch completed partial checksums, the gloo
#                runs turn TX checksum offload off and the table says so);
#    for each size and worker count, the policies interleaved, BENCH_RUNS runs
#    each; a run's figure is the median over its iterations of the time of
#    the worker that entered the allreduce last (the collective's own time),
#    as Gbit/s of tensor per worker, and for esa's runs the CPU time of
#    the run's processes (workers and PS, user and system, from start to
#    exit: the switch's program and veth included where they ran in one of
#    their system calls) per MiB of tensor. Before the timed runs, one
#    untimed run of each esa configuration checks every sum bit-exact (esa-job
#    --verify recomputes every worker's values: in a timed run it would
#    take the CPU from workers still in their allreduce); every gloo sum
#    is checked exact (a cheap comparison).
# Progress on stderr. The last line:
#   bench goodput_vs_gloo=<x> goodput_vs_hostonly=<x> dataplane_ratio=<x>
# (medians, the largest size with the most workers). Also writes
# $BENCH_OUT/goodput.csv and, with gnuplot, goodput.png (against size).
#
# Environment: BENCH_RUNS (3), BENCH_SIZES ("1M 64M"), BENCH_WORKERS
# ("3 4"), BENCH_POLICIES ("esa onearmed sharded hostonly gloo"), BENCH_OUT
# (build/bench),
# BENCH_ITER_<SIZE> (iterations of that size per run; 10 up to 1M, then
# fewer), BENCH_DATAPLANE (1; 0 skips the data plane figure).
. "$(dirname "$0")/../selftests/endpoint/lib.sh"	# the switch topology
. "$ROOT/selftests/lib/topo_bridge.sh"			# the one-armed one
cleanup_add 'topo_down; rm -rf "$TMP"'
RUNS=${BENCH_RUNS:-3}
SIZES=${BENCH_SIZES:-"1M 64M"}
WORKERS=${BENCH_WORKERS:-"3 4"}
POLICIES=${BENCH_POLICIES:-"esa onearmed sharded hostonly gloo"}
OUT=${BENCH_OUT:-$ROOT/build/bench}
GLOO=$ROOT/bench/gloo_allreduce.py
DATAPLANE=$ROOT/bench/bench_dataplane.sh
HOSTONLY_PORT=47010
GLOO_PORT=29500
PY=/usr/bin/python3

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (namespaces, XDP)"
for t in "$ESA_JOB" "$ESA_PS" "$AGGCTL" "$ROOT/build/bench/bench_dataplane"; do
	[ -x "$t" ] || die "$t not built (make all selftests)"
done
case " $POLICIES " in
*" sharded "*) [ -d /sys/module/esa ] &&
	die "sharded needs two module-less data planes; the esa module is one per kernel (rmmod esa)" ;;
esac
case " $POLICIES " in
*" gloo "*) "$PY" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2> /dev/null ||
	die "gloo needs PyTorch for $PY (Debian: python3-torch; make deps)" ;;
esac
max_w=0
for n in $WORKERS; do
	[[ "$n" =~ ^[1-4]$ ]] || die "BENCH_WORKERS: $n is not 1..4"
	[ "$n" -gt "$max_w" ] && max_w=$n
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS: '$RUNS' is not a positive number"

bytes() { # 256K, 1M, 64M -> bytes
	[[ "$1" =~ ^([1-9][0-9]*)([KM]?)$ ]] || die "BENCH_SIZES: bad size '$1'"
	local n=${BASH_REMATCH[1]}
	case ${BASH_REMATCH[2]} in
	K) n=$((n << 10)) ;;
	M) n=$((n << 20)) ;;
	esac
	echo "$n"
}
iterations() { # SIZE: enough to take a median, few for big tensors
	local v="BENCH_ITER_$1" b
	[ -n "${!v:-}" ] && { echo "${!v}"; return; }
	b=$(bytes "$1")
	if [ "$b" -le $((1 << 20)) ]; then echo 10
	elif [ "$b" -le $((16 << 20)) ]; then echo 4
	else echo 2
	fi
}
whost() { echo $((10 + $1)); }	# worker i's host index

# ---- the one-armed side (selftests/lib/topo_bridge.sh): hosts oa-ps,
# ---- oa-w0.. behind the ToR's bridge, the switch's one port on it in
# ---- this namespace at OA_SW
OANET=198.19.$(($$ % 250))
OA_SW=$OANET.100
OA_PORT=$(port sw)
oa_ns() { ns "oa-$1"; }		# topo.sh's namespace of host oa-HOST
oa_addr() { # HOST: ps -> .1, wN -> .(10+N)
	if [ "$1" = ps ]; then echo "$OANET.1"; else echo "$OANET.$((10 + ${1#w}))"; fi
}
# oa_up N: the bridge, the PS and N worker hosts, the port attached
# one-armed to the switch topo_up loaded (detached at exit before the
# port goes).
oa_up() {
	local h
	bridge_add && bridge_switch_add "$OA_SW/24" || return 1
	sysctl -qw "net.ipv6.conf.$OA_PORT.disable_ipv6=1"
	for h in ps $(for ((w = 0; w < $1; w++)); do echo "w$w"; done); do
		bridge_host_add "oa-$h" "$(oa_addr "$h")/24" || return 1
		in_ns "oa-$h" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	done
	agg switch attach dev "$OA_PORT" role one-armed || return 1
	cleanup_add agg switch detach dev "$OA_PORT"
}
# ---- the second switch server of "sharded": namespace oa-sv1 on the
# ---- bridge, its port p-sw at OA_SW2, a module-less data plane at PIN2
OA_SW2=$OANET.101
PIN2=$PIN-sv1
# aggctl on the second server (nsenter keeps /sys/fs/bpf, ip netns exec not)
agg2() { in_ns oa-sv1 "$AGGCTL" -d "$PIN2" "$@"; }
oa_sv1_up() {
	bridge_switch_add "$OA_SW2/24" oa-sv1 || return 1
	SWITCH=root	# the first server's port stays `port sw` of this namespace
	in_ns oa-sv1 sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	cleanup_add "rm -rf $PIN2"
	cleanup_add agg2 switch unload
	cleanup_add agg2 switch detach dev p-sw
	agg2 switch attach dev p-sw role one-armed && agg2 policy set esa &&
		agg2 switch set slots 4096 timeout 20000
}

# cpu_per_mib TIMES BYTES ITERATIONS: CPU ms per MiB of tensor of the
# finished children in TIMES (the output of the `times` builtin, run in the
# shell that waited for the run's processes: a command substitution would
# see only its own children).
cpu_per_mib() {
	awk -v b="$2" -v it="$3" 'NR == 2 {
		t = 0
		for (i = 1; i <= 2; i++) { split($i, x, /[ms]/); t += x[1] * 60 + x[2] }
		printf "%.2f\n", t * 1000 / (b * it / 1048576) }' "$1"
}

# Median over iterations of the time of the worker that entered last (the
# smallest time), as Gbit/s; FAIL if any worker failed or summed wrong.
# FILES: one JSON per worker (esa-job -j or gloo_allreduce.py).
goodput() {
	"$PY" - "$@" <<'PY'
import json, statistics, sys
try:
    ws = [json.load(open(f)) for f in sys.argv[1:]]
except (OSError, ValueError):
    print("FAIL"); sys.exit()
if not all(w.get("ok") for w in ws):
    print("FAIL"); sys.exit()
its = zip(*[[i["allreduce_ms"] for i in w["iterations"]] for w in ws])
ms = statistics.median(min(t) for t in its)
print(f'{ws[0]["size"] * 8 / (ms * 1e6):.4f}')
PY
}

# run_esa esa|onearmed|sharded|hostonly SIZE N [ITERATIONS --verify]: one run of
# N workers; prints its goodput and CPU ms per MiB.
run_esa() {
	local mode=$1 size=$2 n=$3 it=${4:-} check=${5:-} port=47000
	local psargs=(--no-result-on-complete) w ws="" wargs=() pids=() psp ok=1
	local ps=$PS psns psname swargs=() out token
	[ -n "$it" ] || it=$(iterations "$size")
	psns=$(ns 1) psname=1
	if [ "$mode" = hostonly ]; then
		port=$HOSTONLY_PORT
		psargs=(--host-only)
	fi
	for ((w = 0; w < n; w++)); do
		ws+="${ws:+,}$(w_addr "$mode" $w):$port"
		wargs+=(worker "$(w_addr "$mode" $w):$port")
	done
	agg job del id 1 2> /dev/null
	[ "$mode" = sharded ] && agg2 job del id 1 2> /dev/null
	# host-only traffic is not for the switch: no job there
	if [ "$mode" = esa ]; then
		agg job add id 1 ps "$PS:$port" "${wargs[@]}" priority 1 ||
			die "switch configuration failed"
	elif [ "$mode" = onearmed ]; then
		ps=$(oa_addr ps) psns=$(oa_ns ps) psname=oa-ps
		out=$(agg job add id 1 ps "$ps:$port" "${wargs[@]}" priority 1 token random) ||
			die "switch configuration failed: $out"
		token=$(sed -n 's/^job [0-9]* token \([0-9a-f]\{16\}\)$/\1/p' <<< "$out")
		swargs=(--switch "$OA_SW" --token "$token" --values 361)
		psargs+=(--switch "$OA_SW" --job "1:$n:$token" --values 361)
	elif [ "$mode" = sharded ]; then
		# The job on both servers, one token; --slots is per server.
		ps=$(oa_addr ps) psns=$(oa_ns ps) psname=oa-ps
		token=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
		agg job add id 1 ps "$ps:$port" "${wargs[@]}" priority 1 token "$token" &&
			agg2 job add id 1 ps "$ps:$port" "${wargs[@]}" priority 1 token "$token" ||
			die "switch configuration failed"
		swargs=(--switch "$OA_SW,$OA_SW2" --token "$token" --values 361)
		psargs+=(--switch "$OA_SW,$OA_SW2" --job "1:$n:$token" --values 361)
	fi
	case $mode in onearmed|sharded) ;; *) psargs+=(--job "1:$n@$ws") ;; esac
	rm -f "$TMP"/w*
	ip netns exec "$psns" "$ESA_PS" --bind "$ps:$port" \
		--iterations "$it" --size "$(bytes "$size")" --linger-ms 300 \
		--deadline-s 300 "${psargs[@]}" > "$TMP/ps" 2>&1 &
	psp=$!
	# Workers only after the PS listens: a short run can be over before
	# a late PS exists, and its COMPLETE copies would be lost.
	udp_bound_wait "$psname" "$port" || say "the PS did not bind $ps:$port"
	for ((w = 0; w < n; w++)); do
		ip netns exec "$(w_ns "$mode" $w)" "$ESA_JOB" --job 1 --worker $w \
			--fan-in "$n" --ps "$ps:$port" --bind "$(w_addr "$mode" $w):$port" \
			--slots 4096 --window 256 --iterations "$it" "${swargs[@]}" \
			--size "$(bytes "$size")" $check -j \
			> "$TMP/w$w" 2> "$TMP/w$w.err" &
		pids+=($!)
	done
	for w in "${pids[@]}"; do wait "$w" || ok=0; done
	wait $psp || ok=0
	times > "$TMP/times"
	[ $ok = 1 ] || run_failed "$mode" "$size" "$n"
	echo "$(goodput "$TMP"/w[0-9]) $(cpu_per_mib "$TMP/times" "$(bytes "$size")" "$it")"
}
# run_failed MODE SIZE N: what the endpoints and the switches saw in a
# failed run, read before the next run's `job del` resets the job: the
# workers' and the PS's errors and stats, the switch's counters (every
# job's and the totals) and, one-armed, the neighbour entries its copies
# are addressed by (a missing one: drop_nexthop).
run_failed() {
	say "$1 $2 x$3 failed:"
	cat "$TMP"/w*.err "$TMP/ps" >&2
	say "switch:"
	agg stats >&2
	case $1 in
	onearmed|sharded) ip -d neigh show dev "$OA_PORT" >&2 ;;
	esac
	if [ "$1" = sharded ]; then
		say "second switch:"
		{ agg2 stats; in_ns oa-sv1 ip -d neigh show dev p-sw; } >&2
	fi
}
# Worker i's namespace and address in a mode.
w_ns() { case $1 in onearmed|sharded) oa_ns "w$2" ;; *) ns "$(whost "$2")" ;; esac; }
w_addr() { case $1 in onearmed|sharded) oa_addr "w$2" ;; *) haddr "$(whost "$2")" ;; esac; }

# Whether TCP crosses the switch between two worker hosts as they are.
tcp_crosses() {
	local a b
	a=$(ns "$(whost 0)") b=$(haddr "$(whost 1)")
	ip netns exec "$(ns "$(whost 1)")" timeout 10 "$PY" -c '
import socket, sys
s = socket.socket(); s.bind((sys.argv[1], 29400)); s.listen(1); s.settimeout(8)
c, _ = s.accept(); n = 0
while True:
    d = c.recv(65536)
    if not d:
        break
    n += len(d)
print(n)' "$b" > "$TMP/tcp" 2>&1 &
	sleep 0.5
	ip netns exec "$a" timeout 8 "$PY" -c '
import socket, sys
s = socket.create_connection((sys.argv[1], 29400), timeout=6)
s.sendall(b"x" * 50000); s.close()' "$b" 2> /dev/null
	wait
	[ "$(cat "$TMP/tcp")" = 50000 ]
}

# TX checksum offload of the worker hosts: on (default) or off.
tx_csum() {
	local w
	for ((w = 0; w < max_w; w++)); do
		ip netns exec "$(ns "$(whost $w)")" ethtool -K eth0 tx "$1" > /dev/null
	done
}

# run_gloo SIZE N: one run of N gloo ranks on the worker hosts.
run_gloo() {
	local size=$1 n=$2 it r pids=() ok=1
	it=$(iterations "$size")
	GLOO_PORT=$((GLOO_PORT + 1))	# a fresh rendezvous port each run
	rm -f "$TMP"/g*
	for ((r = 0; r < n; r++)); do
		ip netns exec "$(ns "$(whost $r)")" env GLOO_SOCKET_IFNAME=eth0 \
			"$PY" "$GLOO" --rank $r --world "$n" \
			--master "$(haddr "$(whost 0)"):$GLOO_PORT" \
			--size "$(bytes "$size")" --iterations "$it" \
			> "$TMP/g$r" 2> "$TMP/g$r.err" &
		pids+=($!)
	done
	for r in "${pids[@]}"; do wait "$r" || ok=0; done
	[ $ok = 1 ] || { say "gloo $size x$n failed:"; cat "$TMP"/g*.err >&2; }
	# No CPU figure: starting Python and torch outweighs a run's allreduces.
	echo "$(goodput "$TMP"/g[0-9]) -"
}

mkdir -p "$OUT"
RES=$OUT/goodput.csv
echo "policy,size,bytes,workers,run,gbps,cpu_ms_per_mib" > "$RES"
load0=$(cut -d' ' -f1-3 /proc/loadavg)

dp_line=
if [ "${BENCH_DATAPLANE:-1}" != 0 ]; then
	say "data plane: BPF_PROG_TEST_RUN per packet (about a minute)"
	dp_line=$("$DATAPLANE" | tail -n1)
	[[ "$dp_line" == dataplane* ]] || die "bench_dataplane printed no result"
fi

hosts=(1)
for ((w = 0; w < max_w; w++)); do hosts+=("$(whost $w)"); done
topo_up "${hosts[@]}" > /dev/null && hosts_gro "${hosts[@]}" ||
	die "topology failed"
topo_ping "${hosts[@]}"
case " $POLICIES " in
*" onearmed "*|*" sharded "*) oa_up "$max_w" || die "the one-armed topology failed" ;;
esac
case " $POLICIES " in
*" sharded "*) oa_sv1_up || die "the second switch server failed" ;;
esac
PS=$(haddr 1)
agg policy set esa && agg switch set slots 4096 timeout 20000 ||
	die "switch configuration failed"
gloo_tx=on
case " $POLICIES " in
*" gloo "*)
	if [ "$max_w" -lt 2 ]; then
		die "gloo needs 2 workers at least"
	elif ! tcp_crosses; then
		gloo_tx=off
		say "TCP does not cross the switch with the hosts' default offloads: the gloo runs turn TX checksum offload off"
	fi ;;
esac

for size in $SIZES; do
	for n in $WORKERS; do
		for pol in $POLICIES; do
			case $pol in esa|onearmed|sharded|hostonly) ;; *) continue ;; esac
			read -r g _ <<< "$(run_esa "$pol" "$size" "$n" 1 --verify)"
			[ "$g" = FAIL ] && die "$pol $size x$n: a sum is wrong (esa-job --verify)"
			say "checked: $pol $size x$n, every sum bit-exact"
		done
	done
done

total=$(( RUNS * $(wc -w <<< "$SIZES") * $(wc -w <<< "$WORKERS") * $(wc -w <<< "$POLICIES") ))
k=0
for ((run = 1; run <= RUNS; run++)); do
	for size in $SIZES; do
		for n in $WORKERS; do
			for pol in $POLICIES; do
				k=$((k + 1))
				case $pol in
				esa|onearmed|sharded|hostonly) read -r g c <<< "$(run_esa "$pol" "$size" "$n")" ;;
				gloo)
					[ $gloo_tx = off ] && tx_csum off
					read -r g c <<< "$(run_gloo "$size" "$n")"
					[ $gloo_tx = off ] && tx_csum on ;;
				*) die "BENCH_POLICIES: unknown '$pol'" ;;
				esac
				say "[$k/$total] run $run $size x$n $pol: $g Gbit/s, CPU ms/MiB $c (load $(cut -d' ' -f1 /proc/loadavg))"
				echo "$pol,$size,$(bytes "$size"),$n,$run,$g,$c" >> "$RES"
			done
		done
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

[ $gloo_tx = off ] && echo "# gloo ran with TX checksum offload off on the worker hosts (TCP does not cross the switch with the default)"
"$PY" "$ROOT/bench/allreduce_table.py" "$RES" "$dp_line" \
	"$(uname -r)" "$(nproc)" \
	"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
	"$load0" "$load1" "$OUT"
