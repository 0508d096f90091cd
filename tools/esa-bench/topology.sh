# SPDX-License-Identifier: GPL-2.0
# esa-bench topology (sourced, bash): the switch's ports in this network
# namespace, one namespace per host behind each port, made with the
# tests' topology library (selftests/lib/topo.sh; the caller runs
# topo_cleanup at exit, after topo_down); with SW_MODE one-armed (the
# scenario's switch mode=one-armed) the hosts are cabled to a Linux bridge
# in a namespace of its own (the ToR) and the switch has one port on it,
# at TOPO_SW_ADDR, attached with role one-armed (Documentation/
# deployment.rst).
#
#   topo_up NJOBS NWORKERS LOSS_PCT   hosts: a PS per job, NWORKERS worker
#                                     hosts shared by the jobs (job J's
#                                     worker w binds port ESA_UDP_PORT_BASE+J)
#   topo_switch_load                  attach the data plane to every port
#   topo_switch_unload                detach it and drop its pins
#   topo_down                         remove everything (idempotent)
#   topo_ps_ns J, topo_ps_addr J, topo_worker_ns W, topo_worker_addr W
#
#   topo_one_armed                    whether the switch is one-armed
#   topo_switch_args J                esa-job options that address the
#                                     switch with job J's token
#   topo_ps_switch_args               esa-ps's, which take the token in
#   topo_job_token_suffix J           the job's --job ID:FANIN[:TOKEN]
#   topo_job_token J TOKEN            remember job J's token
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
TOPO_NS=()			# topo.sh's names of the hosts and the ToR
TOPO_SW_ADDR=$TOPO_NET.250
declare -A TOPO_TOKEN=()

topo_one_armed() { [ "${SW_MODE:-per-host}" = one-armed ]; }
topo_job_token() { TOPO_TOKEN[$1]=$2; }
topo_switch_args() {
	topo_one_armed && echo "--switch $TOPO_SW_ADDR --token ${TOPO_TOKEN[$1]}"
	return 0
}
topo_ps_switch_args() {
	topo_one_armed && echo "--switch $TOPO_SW_ADDR"
	return 0
}
topo_job_token_suffix() {
	topo_one_armed && echo ":${TOPO_TOKEN[$1]}"
	return 0
}

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
	if topo_one_armed; then	# cabled to the ToR, not to a switch port
		veth_add tor "$port" "$name" eth0 || return 1
		ip -n "$(ns tor)" link set "$port" master br0 up || return 1
	else
		veth_add root "$port" "$name" eth0 || return 1
		TOPO_PORTS+=("$port")
		ethtool -K "$port" gro on > /dev/null 2>&1
	fi
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$ns" addr add "$addr/24" dev eth0 || return 1
	ip netns exec "$ns" ethtool -K eth0 gro on > /dev/null 2>&1 || return 1
	if [ "$loss" != 0 ]; then
		ip netns exec "$ns" tc qdisc replace dev eth0 root netem loss "$loss%" 2> /dev/null || {
			echo "esa-bench: loss=$loss needs sch_netem, which this kernel lacks" \
			     "(run in the VM: make demo VM=1, or loss=0)" >&2
			return 1
		}
	fi
}

# topo_tor: the ToR, and the switch server's one port on it.
topo_tor() {
	local sw=$TOPO_TAG-sw tor
	tor=$(ns tor)
	ns_add tor || return 1
	TOPO_NS+=(tor)
	ip -n "$tor" link add br0 type bridge stp_state 0 forward_delay 0 || return 1
	ip -n "$tor" link set br0 up || return 1
	veth_add root "$sw" tor sw || return 1
	TOPO_PORTS+=("$sw")
	sysctl -qw "net.ipv6.conf.$sw.disable_ipv6=1"
	ip addr add "$TOPO_SW_ADDR/24" dev "$sw" || return 1
	# The switch finds next hops with bpf_fib_lookup(), which needs it.
	sysctl -qw "net.ipv4.conf.$sw.forwarding=1" || return 1
	ip -n "$tor" link set sw master br0 up
}

topo_up() { # NJOBS NWORKERS LOSS_PCT
	local j w
	if topo_one_armed; then
		topo_tor || return 1
	fi
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
	topo_one_armed && devs+=(role one-armed)
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
