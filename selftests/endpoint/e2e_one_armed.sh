#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end through a one-armed switch: the switch server has one port,
# cabled to a Linux bridge playing the top-of-rack switch, and every
# worker and PS sits behind the bridge (selftests/lib/topo_bridge.sh).
# aggctl attaches the port with role one-armed (the switch's address is
# the port's), jobs get a random token; esa-ps and esa-job address the
# switch (--switch) and carry the token. The module-less flavour on the
# host; in the VM, with the esa module loaded, the module's. Every worker
# checks every sum (esa-job --verify). Cases:
#   a job of 8 workers and one of 3 at once, behind the one port, under
#     esa, atp and static: bit-exact, sums completed by the switch;
#   5 % loss on every worker's cable: bit-exact, resends counted;
#   a job whose workers are killed holding aggregators: the other job
#     finishes and the dead job's aggregators are reclaimed;
#   a mixed switch: the one-armed port and per-host ports at once, a job
#     on each, both bit-exact; aggctl switch show names each port's role.
# ESA_E2E_QUICK=1 (or --quick, as the VM runs it) runs smaller sizes;
# WORKER_TIMEOUT (s, 240) bounds each worker.
set -u
[ "${1:-}" = --quick ] && ESA_E2E_QUICK=1
DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
. "$ROOT/selftests/lib/topo_bridge.sh"
# shellcheck source=one_armed_lib.sh
. "$DIR/one_armed_lib.sh"

PIN=$(pin_path oa)
agg() { "$AGGCTL" -d "$PIN" "$@"; }

if [ "${ESA_E2E_QUICK:-0}" = 1 ]; then
	SIZE=128K IT=2 LOSS_SIZE=256K LOSS_IT=2
else
	SIZE=512K IT=3 LOSS_SIZE=1M LOSS_IT=3
fi

# ---- the topology: behind the ToR the PS (.1), workers w0..w7 (.10..)
# ---- and the switch server (.100); per-host hosts on the switch's own
# ---- ports in a second subnet
PHNET=198.19.$(($$ % 200 + 20))
SW_ADDR=$NET.100
tor_hosts_add || bail "the ToR with the PS and workers w0..w7 behind it"
bridge_switch_add "$SW_ADDR/24" || bail "the switch server on the ToR"
cleanup_add "$AGGCTL" -d "$PIN" switch unload
cleanup_add "$AGGCTL" -d "$PIN" switch detach dev "$(port sw)"
check "aggctl attaches the server's port one-armed" \
	agg switch attach dev "$(port sw)" role one-armed
agg switch show | diag
FLAVOUR=$(agg -j switch show | python3 -c 'import json,sys; print(json.load(sys.stdin).get("flavour"))')
if [ -d /sys/module/esa ]; then
	check "esa module loaded: the module flavour ($FLAVOUR)" test "$FLAVOUR" = kmod
else
	check "no esa module: the maps flavour ($FLAVOUR)" test "$FLAVOUR" = maps
fi
role=$(agg -j switch show | python3 -c '
import json, sys
for p in json.load(sys.stdin).get("port_state", []):
    print(p.get("role"), p.get("address", "-"))')
check "switch show: the port is one-armed at $SW_ADDR ($role)" test "$role" = "one-armed $SW_ADDR"

# ---- helpers (the rest in one_armed_lib.sh) -----------------------------
JOBS=()
declare -A TOKEN=()
# job_add ID FAN WPORT PRIO [aggctl options]: workers w0.. on UDP WPORT,
# the PS at PS_ADDR:PSP, a random token (kept in TOKEN[ID]).
job_add() {
	local id=$1 fan=$2 port=$3 prio=$4 w ws=() out
	shift 4
	for ((w = 0; w < fan; w++)); do ws+=(worker "$NET.$((10 + w)):$port"); done
	out=$(agg job add id "$id" ps "$PS_ADDR:$PSP" "${ws[@]}" priority "$prio" \
		token random "$@") || { echo "$out"; return 1; }
	TOKEN[$id]=$(sed -n 's/^job [0-9]* token \([0-9a-f]\{16\}\)$/\1/p' <<< "$out")
	[ -n "${TOKEN[$id]}" ] || { echo "# job $id: no token printed: $out"; return 1; }
	JOBS+=("$id")
}
jobs_del() {
	local j
	for j in "${JOBS[@]}"; do agg job del id "$j"; done
	JOBS=()
}
cleanup_add 'for j in "${JOBS[@]}"; do "$AGGCTL" -d "$PIN" job del id "$j"; done'
switch_config() { agg policy set "$1" && agg switch set slots "$2" timeout "$3"; }
# snap NAME ID: job ID's counters into $TMP/NAME.ID
snap() { agg -j stats job "$2" > "$TMP/$1.$2"; }
held() {
	agg -j occupancy job "$1" | python3 -c '
import json, sys
j = json.load(sys.stdin)
rs = j if isinstance(j, list) else [j]
print(sum(r["occupancy"] for r in rs if r.get("job", r.get("id")) == int(sys.argv[1])))' "$1"
}

# ---- a job of 8 and one of 3 behind the one port, every policy ----------
id=10
for pol in esa atp static; do
	a=$((id + 1)) b=$((id + 2))
	id=$((id + 10))
	if two_jobs "$pol" "$pol" $a $b 3 128 "$SIZE" "$IT" && verified "$pol" 8 "$IT" "$(values $SIZE)" $a &&
	   verified "$pol" 3 "$IT" "$(values $SIZE)" $b; then
		ok "$pol: jobs of 8 and 3 workers behind one one-armed port: bit-exact"
		c=$(counter "$pol.0" "$pol.1" completed $a)
		check "$pol: the switch completed the 8-worker job's sums ($c)" test "$c" -gt 0
	else
		not_ok "$pol: jobs of 8 and 3 workers behind one one-armed port: bit-exact"
	fi
done

# ---- 5 % loss on every worker's cable -------------------------------------
workers_loss 5 || bail "5 % loss on every worker's cable"
loss_job() {
	local rc
	switch_config esa 256 20000 && job_add 41 8 47003 1 || return 1
	# shellcheck disable=SC2046
	start_ps loss $(ps_job 41 8) --no-result-on-complete \
		--iterations "$LOSS_IT" --size "$LOSS_SIZE"
	start_workers loss 41 8 47003 --slots 256 --window 64 \
		--iterations "$LOSS_IT" --size "$LOSS_SIZE"
	wait_all loss
	rc=$?
	jobs_del
	return $rc
}
if loss_job && verified loss 8 "$LOSS_IT" "$(values $LOSS_SIZE)" 41; then
	ok "5 % loss on every worker's cable: bit-exact"
	rs=$(wsum loss 41 8 resends)
	check "5 % loss: resends counted ($rs)" test "${rs:-0}" -gt 0
else
	not_ok "5 % loss on every worker's cable: bit-exact"
fi
workers_loss_clear || not_ok "loss off the workers' cables"

# ---- a sum the port cannot hand to the PS ---------------------------------
# A burst can fill the queue behind the switch's port, and the copies of
# a sum queued last are the ones dropped. If the PS's COMPLETE is among
# them while a worker got its RESULT, the sum is lost for good: that
# worker's values are gone (the result took their place), so the PS can
# finish it neither from the others' resends nor by pulling, and the job
# stalls. The switch sends the PS's copy first and, refused, no worker's.
# Here a tc program on the port's egress (drop.bpf.c, DROP_COMPLETE)
# refuses every COMPLETE: the job must still end bit-exact, every sum
# finished by the PS from the workers' resends.
refused_case() {
	local rc
	tc qdisc replace dev "$(port sw)" clsact &&
		tc filter replace dev "$(port sw)" egress pref 1 bpf da \
			obj "$TOPO_DROP_DIR/drop_complete.bpf.o" sec tc || return 1
	switch_config esa 256 20000 && job_add 42 3 47004 1 || return 1
	# shellcheck disable=SC2046
	start_ps refused $(ps_job 42 3) --no-result-on-complete \
		--iterations 1 --size 64K
	start_workers refused 42 3 47004 --slots 256 --window 16 \
		--iterations 1 --size 64K
	wait_all refused
	rc=$?
	jobs_del
	return $rc
}
if refused_case && verified refused 3 1 "$(values 64K)" 42; then
	ok "every COMPLETE to the PS refused by the port: bit-exact, the PS finished every sum"
else
	not_ok "every COMPLETE to the PS refused by the port: bit-exact, the PS finished every sum"
fi
tc filter del dev "$(port sw)" egress pref 1 || not_ok "the egress program removed"

# ---- a job killed while it holds aggregators ---------------------------
# Job 51 (workers w0, w1) dies with partial sums in the switch (w1 is still
# in its first minute-long compute, so w0's window waits there); job 52
# (w2..w4 as its workers 0..2, on their own port) must finish and reclaim
# every aggregator job 51 left, once older than agg_timeout_us (50 ms).
kill_case() {
	local i k0 k1 w rc
	switch_config esa 32 50000 && job_add 51 2 47004 0 || return 1
	out=$(agg job add id 52 ps "$PS_ADDR:$PSP" worker "$NET.12:47005" \
		worker "$NET.13:47005" worker "$NET.14:47005" priority 0 token random) || return 1
	TOKEN[52]=$(sed -n 's/^job [0-9]* token \([0-9a-f]\{16\}\)$/\1/p' <<< "$out")
	JOBS+=(52)
	# shellcheck disable=SC2046
	start_ps kill $(ps_job 51 2) $(ps_job 52 3) --iterations 20 --size 64K
	nsenter "$(netns_of w0)" "$ESA_JOB" --job 51 --worker 0 --fan-in 2 --ps "$PS_ADDR:$PSP" \
		--bind "$NET.10:47004" --switch "$SW_ADDR" --token "${TOKEN[51]}" \
		--values "$VALUES" --slots 32 --window 32 --iterations 100000 --size 64K \
		> /dev/null 2>&1 &
	k0=$!
	nsenter "$(netns_of w1)" "$ESA_JOB" --job 51 --worker 1 --fan-in 2 --ps "$PS_ADDR:$PSP" \
		--bind "$NET.11:47004" --switch "$SW_ADDR" --token "${TOKEN[51]}" \
		--values "$VALUES" --slots 32 --window 32 --iterations 100000 --size 64K \
		--compute-ms 60000 > /dev/null 2>&1 &
	k1=$!
	for ((i = 0; i < 300; i++)); do
		[ "$(held 51)" -gt 0 ] 2> /dev/null && break
		sleep 0.1
	done
	kill -9 $k0 $k1
	wait $k0 $k1 2> /dev/null
	HELD=$(held 51)
	echo "# job 51 killed holding ${HELD:-0} aggregators"
	sleep 0.2
	for w in 0 1 2; do
		nsenter "$(netns_of "w$((w + 2))")" timeout "$WORKER_TIMEOUT" "$ESA_JOB" --job 52 \
			--worker "$w" --fan-in 3 --ps "$PS_ADDR:$PSP" \
			--bind "$NET.$((12 + w)):47005" --switch "$SW_ADDR" \
			--token "${TOKEN[52]}" --values "$VALUES" --slots 32 --window 32 \
			--iterations 20 --size 64K --verify -j \
			> "$TMP/kill.j52.w$w" 2> "$TMP/kill.j52.w$w.err" &
		PIDS+=($!)
		PNAMES+=("kill.j52.w$w")
	done
	wait_all kill
	rc=$?
	LEFT=$(held 51)
	jobs_del
	return $rc
}
HELD=0 LEFT=
if kill_case; then
	ok "a job killed holding aggregators: the other job finishes"
	check "... job 51 held aggregators when killed (${HELD:-0})" test "${HELD:-0}" -gt 0
	check "... and none once job 52 is done (${LEFT:-?})" test "${LEFT:-1}" = 0
else
	not_ok "a job killed holding aggregators: the other job finishes"
fi

# ---- a copy the switch cannot address -------------------------------------
# Job 71: worker 0 on w0 and a worker at an address nobody answers ARP
# for. The PS's RESULT under atp is fanned out to both; the copy to the
# absent one has no next hop: drop_nexthop, in the data plane's counters
# and, in the module flavour, in the module's statistics as well.
# module_cnt FILE JOB NAME: the module's counter NAME of JOB in a stats
# snapshot, "none" without the module
module_cnt() {
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
e = [r for r in (j if isinstance(j, list) else [j]) if r.get("job") == int(sys.argv[2])][0]
print(e["module"][sys.argv[3]] if "module" in e else "none")' "$TMP/$1.$2" "$2" "$3"
}
nexthop_case() {
	local out i
	switch_config atp 256 20000 || return 1
	out=$(agg job add id 71 ps "$PS_ADDR:$PSP" worker "$NET.10:47008" \
		worker "$NET.99:47008" token random) || return 1
	TOKEN[71]=$(sed -n 's/^job [0-9]* token \([0-9a-f]\{16\}\)$/\1/p' <<< "$out")
	JOBS+=(71)
	snap nh.0 71 || return 1
	in_ns ps python3 -c '
import socket, sys
sys.path.insert(0, sys.argv[1])
import esa_wire as wire
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[2], int(sys.argv[3])))
s.sendto(wire.pack([1] * 8, token=int(sys.argv[5], 16), flags=wire.FLAGS["F_RESULT"],
                   fan_in=2, job_id=71, seq=0, worker_bitmap=3), (sys.argv[4], wire.UDP_PORT))' \
		"$ROOT/selftests/lib" "$PS_ADDR" "$PSP" "$SW_ADDR" "${TOKEN[71]}" || return 1
	for ((i = 0; i < 100; i++)); do
		snap nh.1 71 || return 1
		[ "$(counter nh.0 nh.1 drop_nexthop 71)" -ge 1 ] && break
		sleep 0.1
	done
}
if nexthop_case; then
	check "a copy to a member without a neighbour is drop_nexthop (data plane)" \
		test "$(counter nh.0 nh.1 drop_nexthop 71)" = 1
	m0=$(module_cnt nh.0 71 drop_nexthop) m1=$(module_cnt nh.1 71 drop_nexthop)
	if [ "$m0" = none ]; then
		skip "drop_nexthop in the module's statistics" "no esa module (the maps flavour)"
	else
		check "... and in the module's statistics ($m0 -> $m1)" test $((m1 - m0)) = 1
	fi
else
	not_ok "job 71 with a worker nobody answers for: its PS's RESULT sent"
fi
jobs_del

# ---- a mixed switch: per-host ports beside the one-armed one ------------
# Hosts p0 (PS), p1, p2 (workers) on ports of their own (netns.sh's
# host_add on the same switch), job 61 among them without a token, while
# job 62 (3 workers behind the ToR) runs one-armed.
mixed_ok=1
for h in 0 1 2; do
	host_add "p$h" "$PHNET.$((h + 1))/24" || mixed_ok=0
done
if [ $mixed_ok = 1 ] &&
   agg switch attach dev "$(port p0)" dev "$(port p1)" dev "$(port p2)" role per-host; then
	cleanup_add "$AGGCTL" -d "$PIN" switch detach dev "$(port p0)" dev "$(port p1)" dev "$(port p2)"
	roles=$(agg -j switch show | python3 -c '
import json, sys
print(" ".join(sorted(p.get("role", "?") for p in json.load(sys.stdin).get("port_state", []))))')
	check "switch show: one one-armed port and three per-host ($roles)" \
		test "$roles" = "one-armed per-host per-host per-host"
	mixed_case() {
		local w rc
		switch_config esa 256 20000 || return 1
		agg job add id 61 ps "$PHNET.1:$PSP" worker "$PHNET.2:47006" \
			worker "$PHNET.3:47006" priority 1 || return 1
		JOBS+=(61)
		job_add 62 3 47007 1 || return 1
		in_ns p1 ping -c1 -W1 "$PHNET.1" > /dev/null
		in_ns p2 ping -c1 -W1 "$PHNET.1" > /dev/null
		nsenter "$(netns_of p0)" "$ESA_PS" --bind "$PHNET.1:$PSP" --job 61:2 --no-result-on-complete \
			--linger-ms $((PS_DEADLINE * 1000)) --deadline-s "$PS_DEADLINE" \
			--iterations "$IT" --size "$SIZE" -j > "$TMP/mixph.ps" 2> "$TMP/mixph.ps.err" &
		local ph_ps=$!
		udp_bound_wait p0 "$PSP"
		# shellcheck disable=SC2046
		start_ps mix $(ps_job 62 3) --no-result-on-complete --iterations "$IT" --size "$SIZE"
		for w in 0 1; do
			nsenter "$(netns_of "p$((w + 1))")" timeout "$WORKER_TIMEOUT" "$ESA_JOB" --job 61 \
				--worker "$w" --fan-in 2 --ps "$PHNET.1:$PSP" \
				--bind "$PHNET.$((w + 2)):47006" --slots 256 --agg-offset 128 \
				--window 64 --iterations "$IT" --size "$SIZE" --verify -j \
				> "$TMP/mixph.j61.w$w" 2> "$TMP/mixph.j61.w$w.err" &
			PIDS+=($!)
			PNAMES+=("mixph.j61.w$w")
		done
		start_workers mix 62 3 47007 --slots 256 --window 64 \
			--iterations "$IT" --size "$SIZE"
		wait_all mix
		rc=$?
		kill -TERM $ph_ps 2> /dev/null
		wait $ph_ps || rc=1
		jobs_del
		return $rc
	}
	if mixed_case && verified mix 3 "$IT" "$(values $SIZE)" 62 &&
	   VALUES=363 verified mixph 2 "$IT" "$(values $SIZE)" 61; then
		ok "mixed switch: a per-host job and a one-armed job at once, both bit-exact"
	else
		not_ok "mixed switch: a per-host job and a one-armed job at once, both bit-exact"
	fi
else
	not_ok "mixed switch: per-host ports attached beside the one-armed one"
fi
tap_done
