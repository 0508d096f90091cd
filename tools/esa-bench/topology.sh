# SPDX-License-Identifier: GPL-2.0
# esa-bench topology (sourced, bash): the switch's ports in this network
# namespace, one namespace per host behind each port, made with the
# tests' topology library (selftests/lib/topo.sh; the caller runs
# topo_cleanup at exit, after topo_down).
#
#   topo_up NJOBS NWORKERS LOSS_PCT   hosts: a PS per job, NWORKERS worker
#                                     hosts shared by the jobs (job J's
#                                     worker w binds port ESA_UDP_PORT_BASE+J)
#   topo_switch_load                  attach the data plane to every port
#   topo_switch_unload                detach it and drop its pins
#   topo_down                         remove everything (idempotent)
#   topo_ps_ns J, topo_ps_addr J, topo_worker_ns W, topo_worker_addr W
#
# Addresses come from 198.18.0.0/15 (the benchmarking range) and exist only
# in the namespaces made here. Hosts keep their default offloads except
# GRO, which is on: a veth that receives XDP-redirected frames needs NAPI.

# shellcheck source=/dev/null
TOPO_TRAP=no . "$(dirname "${BASH_SOURCE[0]}")/../../selftests/lib/topo.sh"

ESA_UDP_PORT=47000
ESA_UDP_PORT_BASE=47000		# + job id: a worker's own UDP port
TOPO_TAG=eb$$			# for the caller's own names (ddp_netns.sh)
TOPO_PIN=/sys/fs/bpf/esa-bench-$$
TOPO_NET=198.18.$(( $$ % 250 ))
TOPO_PORTS=()
TOPO_NS=()			# topo.sh's names of the hosts

topo_ps_ns() { ns "ps$1"; }
topo_worker_ns() { ns "w$1"; }
topo_ps_addr() { echo "$TOPO_NET.$(( 100 + $1 % 100 ))"; }
topo_worker_addr() { echo "$TOPO_NET.$(( 1 + $1 ))"; }

# topo_host NAME ADDR LOSS_PCT: host NAME behind switch port $(ifname NAME)
topo_host() {
	local name=$1 addr=$2 loss=$3 ns port
	ns=$(ns "$name") port=$(ifname "$name")
	ns_add "$name" || return 1
	TOPO_NS+=("$name")
	veth_add root "$port" "$name" eth0 || return 1
	TOPO_PORTS+=("$port")
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	sysctl -qw "net.ipv6.conf.$port.disable_ipv6=1"
	ip -n "$ns" addr add "$addr/24" dev eth0 || return 1
	ip netns exec "$ns" ethtool -K eth0 gro on > /dev/null 2>&1 || return 1
	ethtool -K "$port" gro on > /dev/null 2>&1
	if [ "$loss" != 0 ]; then
		ip netns exec "$ns" tc qdisc replace dev eth0 root netem loss "$loss%" 2> /dev/null || {
			echo "esa-bench: loss=$loss needs sch_netem, which this kernel lacks" \
			     "(run in the VM: make demo VM=1, or loss=0)" >&2
			return 1
		}
	fi
}

topo_up() { # NJOBS NWORKERS LOSS_PCT
	local j w
	for j in "${JOB_IDS[@]}"; do
		topo_host "ps$j" "$(topo_ps_addr "$j")" 0 || return 1
	done
	for ((w = 0; w < $2; w++)); do
		topo_host "w$w" "$(topo_worker_addr "$w")" "$3" || return 1
	done
}

topo_switch_load() {
	local devs=() p j w
	for p in "${TOPO_PORTS[@]}"; do devs+=(dev "$p"); done
	"$AGGCTL" -d "$TOPO_PIN" switch attach "${devs[@]}" || return 1
	# Every host speaks once so the switch learns where each address is.
	for j in "${JOB_IDS[@]}"; do
		for ((w = 0; w < ${JOB_WORKERS[$j]}; w++)); do
			ip netns exec "$(topo_worker_ns "$w")" ping -c1 -W1 "$(topo_ps_addr "$j")" > /dev/null 2>&1
		done
	done
}

topo_switch_unload() {
	local devs=() p
	for p in "${TOPO_PORTS[@]}"; do devs+=(dev "$p"); done
	[ ${#devs[@]} -gt 0 ] && "$AGGCTL" -d "$TOPO_PIN" switch detach "${devs[@]}" 2> /dev/null
	"$AGGCTL" -d "$TOPO_PIN" switch unload 2> /dev/null
	rmdir "$TOPO_PIN" 2> /dev/null
	return 0
}

topo_down() {
	local name
	topo_switch_unload
	for name in "${TOPO_NS[@]}"; do ns_del "$name" 2> /dev/null; done
	TOPO_PORTS=() TOPO_NS=()
}
