# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Run train_digits.py as a DDP job of N ranks, one network namespace each,
# through the ESA switch on this machine (sourced, bash; make demo-torch
# and selftests/python use it). The topology is esa-bench's
# (tools/esa-bench/topology.sh): the switch's ports in this namespace
# (aggctl; the module flavour when the esa module is loaded), a PS host and
# N worker hosts behind them, the hosts with their default offloads.
#
#   ddp_up N [SLOTS]        topology, switch (policy esa), job DDP_JOB with N
#                           workers (rank r = worker host r, UDP port
#                           47000 + DDP_JOB), the PS at the PS host
#   ddp_run NAME COMM [ARGS...]
#                           start the N ranks (COMM esa: rank 0 serves the PS
#                           in the PS host's namespace; gloo: plain DDP, its
#                           TCP through the switch), wait for them at most
#                           DDP_DEADLINE s (then kill them); rank r's JSON in
#                           $DDP_OUT/NAME.r<r>.json, stderr in .err; status 0
#                           when every rank succeeded
#   ddp_pids                the ranks' pids of the last ddp_run started with &
#   ddp_snap FILE           the switch's counters of the job (aggctl -j stats)
#   ddp_mgmt_up             a second network for gloo (a Linux bridge in a
#                           namespace of its own, eth1 on every worker host),
#                           so gloo goes on while the switch is away; call
#                           after ddp_up
#   ddp_switch_detach, ddp_switch_attach
#                           the data plane off and back on the switch ports
#   ddp_at_step NAME RANK STEP
#                           wait (60 s at most) for the rank's progress line
#                           of STEP (train_digits.py --progress)
#   ddp_fault_run NAME FAULT [ARGS...]
#                           ddp_run of esa with FAULT at step 20, undone at
#                           60; needs ddp_mgmt_up. detach: the data plane
#                           off the switch ports, then on again. ps: the
#                           job's PS an esa-ps process of the PS host under
#                           policy atp (the switch leaves results to the
#                           PS), killed, then started again
#   ddp_down                remove all of it (idempotent)
# Needs AGGCTL, DDP_OUT (a directory) and ROOT.

# Debian 13 builds torch without libuv, which its TCPStore asks for unless
# told otherwise (Documentation/pytorch.rst); older torch ignores this.
export USE_LIBUV=${USE_LIBUV:-0}

ESA_BENCH_DIR=$ROOT/tools/esa-bench
# shellcheck source=/dev/null
. "$ESA_BENCH_DIR/topology.sh"
DDP_JOB=${DDP_JOB:-1}
DDP_DEADLINE=${DDP_DEADLINE:-600}
DDP_PY=/usr/bin/python3
DDP_TRAIN=$ROOT/tools/python/examples/train_digits.py
DDP_MASTER_PORT=$((29500 + $$ % 500))
DDP_N=0
DDP_MGMT=			# the gloo network's namespace, once up
DDP_PS_PID=			# the job's esa-ps process (ddp_fault_run ps)
DDP_MGMT_NET=198.19.$(( $$ % 250 ))
DDP_PIDS=()
declare -A JOB_WORKERS=()
JOB_IDS=()

ddp_agg() { "$AGGCTL" -d "$TOPO_PIN" "$@"; }

ddp_workers() { # the workers' ADDR:PORT, comma separated, in rank order
	local r s=
	for ((r = 0; r < DDP_N; r++)); do
		s+="${s:+,}$(topo_worker_addr $r):$((ESA_UDP_PORT_BASE + DDP_JOB))"
	done
	echo "$s"
}

ddp_up() { # N [SLOTS]
	local r ws=()
	DDP_N=$1
	# shellcheck disable=SC2034 # read by topology.sh
	JOB_IDS=("$DDP_JOB")
	# shellcheck disable=SC2034
	JOB_WORKERS[$DDP_JOB]=$1
	topo_up 1 "$1" 0 && topo_switch_load || return 1
	ddp_agg policy set esa && ddp_agg switch set slots "${2:-1024}" || return 1
	for ((r = 0; r < DDP_N; r++)); do
		ws+=(worker "$(topo_worker_addr $r):$((ESA_UDP_PORT_BASE + DDP_JOB))")
	done
	ddp_agg job add id "$DDP_JOB" ps "$(topo_ps_addr "$DDP_JOB"):$ESA_UDP_PORT" \
		"${ws[@]}" priority 1
}

ddp_mgmt_up() {
	local r
	ns_add mgmt || return 1
	DDP_MGMT=$(ns mgmt)
	in_ns mgmt ip link add br0 type bridge || return 1
	in_ns mgmt ip link set br0 up || return 1
	for ((r = 0; r < DDP_N; r++)); do
		veth_add mgmt "m$r" "w$r" eth1 || return 1	# w$r: topo_worker_ns r
		in_ns mgmt ip link set "m$r" master br0 || return 1
		in_ns "w$r" ip addr add "$DDP_MGMT_NET.$((1 + r))/24" dev eth1 || return 1
	done
}

ddp_ports() { local p devs=(); for p in "${TOPO_PORTS[@]}"; do devs+=(dev "$p"); done; echo "${devs[@]}"; }
# shellcheck disable=SC2046
ddp_switch_detach() { ddp_agg switch detach $(ddp_ports); }
# shellcheck disable=SC2046
ddp_switch_attach() { ddp_agg switch attach $(ddp_ports); }

ddp_at_step() { # NAME RANK STEP
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "step $3 " "$DDP_OUT/$1.r$2.err" 2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}

ddp_ps_start() { # the job's PS as an esa-ps process of the PS host
	ip netns exec "$(topo_ps_ns "$DDP_JOB")" "$ROOT/build/tools/esa-ps" \
		--job "$DDP_JOB:$DDP_N@$(ddp_workers)" --idle-s 0 > /dev/null 2>&1 &
	DDP_PS_PID=$!
}

ddp_ps_kill() { [ -n "$DDP_PS_PID" ] && kill -9 "$DDP_PS_PID" 2> /dev/null; wait "$DDP_PS_PID" 2> /dev/null; }

ddp_fault_run() { # NAME FAULT [ARGS...]
	local name=$1 fault=$2 rc
	shift 2
	case $fault in
	detach)
		ddp_start "$name" esa --progress "$@"
		ddp_at_step "$name" 0 20 && ddp_switch_detach
		ddp_at_step "$name" 0 60 && ddp_switch_attach
		ddp_wait
		;;
	ps)
		ddp_agg policy set atp || return 1
		ddp_ps_start
		ddp_start "$name" esa --progress "$@"
		ddp_at_step "$name" 0 20 && ddp_ps_kill
		ddp_at_step "$name" 0 60 && ddp_ps_start
		ddp_wait
		rc=$?
		ddp_ps_kill
		DDP_PS_PID=
		ddp_agg policy set esa
		return $rc
		;;
	*) echo "ddp: unknown fault '$fault' (detach, ps)" >&2; return 1 ;;
	esac
}

ddp_snap() { ddp_agg -j stats job "$DDP_JOB" > "$1"; }

# The environment of rank R (launcher's part: torch's and the job's).
ddp_env() { # R COMM
	local r=$1
	echo "PYTHONPATH=$ROOT/tools/python RANK=$r WORLD_SIZE=$DDP_N"
	# gloo: the address on the switch (or the gloo network), not whatever
	# the hostname resolves to
	if [ -n "$DDP_MGMT" ]; then
		echo "MASTER_ADDR=$DDP_MGMT_NET.1 MASTER_PORT=$DDP_MASTER_PORT GLOO_SOCKET_IFNAME=eth1"
	else
		echo "MASTER_ADDR=$(topo_worker_addr 0) MASTER_PORT=$DDP_MASTER_PORT GLOO_SOCKET_IFNAME=eth0"
	fi
	[ "$2" = esa ] || return 0
	echo "ESA_JOB_ID=$DDP_JOB ESA_PS=$(topo_ps_addr "$DDP_JOB"):$ESA_UDP_PORT"
	echo "ESA_WORKERS=$(ddp_workers) ESA_AGG_SLOTS=$(ddp_agg -j switch show |
		$DDP_PY -c 'import json,sys; print(json.load(sys.stdin)["agg_slots"])')"
	[ -n "$DDP_PS_PID" ] && return 0	# an esa-ps process serves the job
	# Policy esa multicasts completed sums: no second copy from the PS.
	[ "$r" = 0 ] && echo "ESA_PS_START=1 ESA_PS_NETNS=/run/netns/$(topo_ps_ns "$DDP_JOB")" \
		"ESA_PS_RESULT_ON_COMPLETE=0"
}

ddp_start() { # NAME COMM [ARGS...]: the ranks in the background
	local name=$1 comm=$2 r
	shift 2
	DDP_PIDS=()
	for ((r = 0; r < DDP_N; r++)); do
		# shellcheck disable=SC2046
		ip netns exec "$(topo_worker_ns $r)" env $(ddp_env $r "$comm") \
			"$DDP_PY" "$DDP_TRAIN" --comm "$comm" "$@" \
			> "$DDP_OUT/$name.r$r.json" 2> "$DDP_OUT/$name.r$r.err" &
		DDP_PIDS+=($!)
	done
}

# Wait for the ranks at most DDP_DEADLINE s; kill what is left after it.
ddp_wait() {
	local t0=$SECONDS pid rc=0 alive
	while :; do
		alive=0
		for pid in "${DDP_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && break
		if ((SECONDS - t0 > DDP_DEADLINE)); then
			echo "ddp: ranks still running after ${DDP_DEADLINE}s: killed" >&2
			kill -9 "${DDP_PIDS[@]}" 2>/dev/null
			rc=1
			break
		fi
		sleep 0.2
	done
	for pid in "${DDP_PIDS[@]}"; do wait "$pid" || rc=1; done
	return $rc
}

ddp_run() { # NAME COMM [ARGS...]
	ddp_start "$@"
	ddp_wait
}

ddp_pids() { echo "${DDP_PIDS[@]}"; }

ddp_down() {
	local pid
	for pid in "${DDP_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; done
	DDP_PIDS=()
	ddp_ps_kill
	DDP_PS_PID=
	ddp_agg job del id "$DDP_JOB" 2>/dev/null
	if [ -n "$DDP_MGMT" ]; then
		ns_del mgmt 2> /dev/null
		DDP_MGMT=
	fi
	topo_down
	topo_cleanup
}
