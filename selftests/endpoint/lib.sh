# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the endpoint end-to-end tests (TAP from
# selftests/lib/tap.sh): the tool paths, and running one job's workers
# plus its PS while collecting their outputs. Sourced, not run.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ESA_JOB=$ROOT/build/tools/esa-job
ESA_PS=$ROOT/build/tools/esa-ps
TMP=$(mktemp -d /tmp/esa-endpoint.XXXXXX)
. "$ROOT/selftests/lib/topo.sh"	# namespaces and veth links, cleanup at exit

require_tools() {
	if [ ! -x "$ESA_JOB" ] || [ ! -x "$ESA_PS" ]; then
		not_ok "esa-job and esa-ps are built (run make)"
		tap_done
	fi
}

# json_get FILE EXPR: evaluate a python expression on the JSON in FILE (j).
json_get() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# ---- a switch topology: the XDP switch on veth ports in the root netns,
# ---- one network namespace per host behind each port, driven by aggctl
# ---- (the module flavour when the esa module is loaded, else the maps one).
AGGCTL=$ROOT/build/tools/aggctl
DROP_DIR=$ROOT/build/selftests/endpoint
PIN=/sys/fs/bpf/esa-ep-$$
NET="10.$((160 + $$ % 90)).$((($$ / 90) % 250))"
HOSTS=()
PORTS=()			# switch ports attached

# Host K lives in namespace $(ns K) (topo.sh), its switch port is $(port K).
haddr() { echo "$NET.$1"; }		# its address
agg() { "$AGGCTL" -d "$PIN" "$@"; }	# aggctl on this topology's switch

# topo_up K...: create hosts K (addresses $NET.K) and attach the switch
# to their ports (aggctl loads and pins it under $PIN).
topo_up() {
	local k ports=()
	for k in "$@"; do
		ns_add "$k" || return 1
		HOSTS+=("$k")
		veth_add root "$(port $k)" "$k" eth0 || return 1
		in_ns "$k" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
		sysctl -qw "net.ipv6.conf.$(port $k).disable_ipv6=1"
		ip -n "$(ns $k)" addr add "$(haddr $k)/24" dev eth0
		# A redirect into a veth needs an XDP program on the peer.
		ip -n "$(ns $k)" link set dev eth0 xdp obj "$DROP_DIR/drop_0.bpf.o" sec xdp || return 1
		ports+=(dev "$(port $k)")
	done
	PORTS+=("${ports[@]}")
	agg switch attach "${ports[@]}"
}

# set_loss K PER10K: random loss of aggregation packets on host K's link.
set_loss() {
	local n
	n=$(ns "$1")
	ip -n "$n" link set dev eth0 xdp off
	ip -n "$n" link set dev eth0 xdp obj "$DROP_DIR/drop_$2.bpf.o" sec xdp || return 1
	tc -n "$n" qdisc replace dev eth0 clsact || return 1
	tc -n "$n" filter replace dev eth0 egress pref 1 bpf da obj "$DROP_DIR/drop_$2.bpf.o" sec tc
}

# hosts_gro K...: hosts K take redirected frames with GRO instead of
# topo_up's XDP program (either gives the veth the NAPI a redirect needs;
# an XDP program turns GRO off, GRO is what a host's NIC does): for
# benchmarks, which need no loss program.
hosts_gro() {
	local k
	for k in "$@"; do
		ip -n "$(ns "$k")" link set dev eth0 xdp off || return 1
		ip netns exec "$(ns "$k")" ethtool -K eth0 gro on || return 1
	done
}

# Detach and unload the switch (before the ports go), then remove hosts.
topo_down() {
	local k
	for k in "${HOSTS[@]}"; do
		ip netns pids "$(ns $k)" 2>/dev/null | xargs -r kill 2>/dev/null
	done
	# All at once; if that fails (a port was never attached), one by one.
	if [ ${#PORTS[@]} -gt 0 ] && ! agg switch detach "${PORTS[@]}" 2>/dev/null; then
		for ((k = 1; k < ${#PORTS[@]}; k += 2)); do
			agg switch detach dev "${PORTS[k]}" 2>/dev/null
		done
	fi
	[ -d "$PIN" ] && agg switch unload
	for k in "${HOSTS[@]}"; do
		ns_del "$k" 2>/dev/null
	done
	rmdir "$PIN" 2>/dev/null
	HOSTS=() PORTS=()
}

# Let ARP settle so the switch has learned every host before a test.
topo_ping() {
	local k
	for k in "$@"; do
		ip netns exec "$(ns "$1")" ping -c1 -W1 "$(haddr $k)" > /dev/null 2>&1
	done
}
