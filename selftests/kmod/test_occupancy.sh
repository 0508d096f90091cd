#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Aggregator occupancy per job with real traffic, either flavour: on this
# host the module-less switch (aggctl counts held slots in the pinned
# aggregator array), in the VM the module flavour (the module counts the
# data plane's ESA_ACCT_CLAIM/RELEASE events). aggctl attaches the switch
# to veth ports in the root namespace; a PS and five workers in namespaces
# send single packets (agg_send.py) so that partials stay held: occupancy
# must follow every claim, completion, atp RESULT, preemption (of a
# complete slot and of partials) and reclaim, return to 0 at the end, and
# the esa quota must cap the slots a job takes by preemption. Both
# flavours decide by the same rules (lib/esa_rules.c) and print the same
# records (checked key by key); where they differ, the module feature is
# named.
# Then jobs hold partials again and the data plane goes (detach, unload):
# a new one starts with an empty aggregator array, so every job's
# occupancy must start at 0 and count again. With the module each data
# plane has its own generation (Documentation/kmod.rst, "Occupancy"):
# what a program of another generation reports changes no count, unload
# stops the old array's counts even while another kfunc program is
# loaded, and nothing is refused or waited for.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
need_root "occupancy with traffic"
if grep -q '^esa ' /proc/modules 2> /dev/null; then
	MODE=kmod
	reset_module
else
	MODE=maps
fi
. selftests/lib/topo.sh	# hosts in namespaces, cleanup at exit
SEND=selftests/kmod/agg_send.py
PIN=$(pin_path occ)
HOLD=$(pin_path occ-hold)	# a kfunc program that holds the module
A="$AGGCTL -d $PIN"
NET="10.$((150 + $$ % 50)).$((($$ / 50) % 250))"
HOSTS=(1 10 11 12 13 14)	# 1: PS; 10, 11: job 1; 12, 13: job 2; 14: job 3
host() { echo "h$1"; }		# topo.sh's name of host K
addr() { echo "$NET.$1"; }
in_host() { local k=$1; shift; in_ns "$(host "$k")" "$@"; }

# at exit, after the hosts (last added, first run): the data plane, the module
[ $MODE = kmod ] && cleanup_add reset_module
cleanup_add "$A switch unload"
devs=()
for k in "${HOSTS[@]}"; do
	host_add "$(host $k)" "$(addr $k)/24" || bail "$MODE: host $k"
	devs+=(dev "$(port "$(host $k)")")
done
cleanup_add "$A switch detach ${devs[*]}"
if out=$($A switch attach "${devs[@]}" capacity 64 2>&1); then
	ok "$MODE: switch attached to ${#HOSTS[@]} veth ports"
else
	not_ok "$MODE: switch attach: $(flat "$out")"
	tap_done
fi
expect "$MODE: the flavour attached is $MODE" 0 "flavour $MODE " $A switch show
# every host speaks once, so the switch learns where each address is
learn() {
	local k
	for k in 10 11 12 13 14; do
		in_host $k ping -c1 -W2 "$(addr 1)" > /dev/null 2>&1
	done
	in_host 1 ping -c1 -W2 "$(addr 10)" > /dev/null 2>&1
}
learn

# settings and jobs (module-less: they live in the data plane's maps)
setup() {
	$A switch set slots 64 timeout 60000000
	$A policy set esa
	$A job add id 1 ps "$(addr 1):47000" worker "$(addr 10):47000" worker "$(addr 11):47000" priority 1
	$A job add id 2 ps "$(addr 1):47000" worker "$(addr 12):47000" worker "$(addr 13):47000" priority 9 quota 2
	$A job add id 3 ps "$(addr 1):47000" worker "$(addr 14):47000" priority 1
}
setup

# send JOB W SEQ@IDX...: worker W of JOB (priority as its record) sends
send() {
	local job=$1 w=$2 h prio=1 fan=2
	shift 2
	case $job in
	1) h=$((10 + w)) ;;
	2) h=$((12 + w)); prio=9 ;;
	3) h=14; fan=1 ;;
	esac
	in_host $h $PY $SEND "$(addr $h)" 47000 "$(addr 1)" \
		$job $fan $w $prio "$@"
}
# result JOB SEQ@IDX...: the PS answers with a RESULT (atp)
result() {
	local job=$1
	shift
	in_host 1 $PY $SEND "$(addr 1)" 47010 "$(addr 10)" \
		$job 2 result 1 "$@"
}
occ_of() {
	$A -j occupancy ${1:+job $1} | $PY -c 'import json,sys; print(json.load(sys.stdin)[0]["occupancy"])'
}
# occ DESC N1 N2 N3 TOTAL: the occupancy of jobs 1..3 and the total
occ() {
	local got want="$2 $3 $4 $5"
	sleep 0.1
	got="$(occ_of 1) $(occ_of 2) $(occ_of 3) $(occ_of)"
	same "$MODE: $1 (jobs 1 2 3, total: $want)" "$got" "$want"
}

occ "nothing held before traffic" 0 0 0 0
send 3 0 1@0 2@1
occ "fan_in 1 completes on arrival and holds nothing" 0 0 0 0
r=$($A -j stats job 3 | $PY -c 'import json,sys; d=json.load(sys.stdin); d=d[0] if isinstance(d,list) else d; print(d["dataplane"]["completed"])')
same "$MODE: job 3's two sums completed" "$r" 2

# atp: a complete slot is held until the PS's RESULT passes
$A policy set atp
send 1 0 20@6
send 1 1 20@6
occ "atp: the complete slot stays held" 1 0 0 1
result 1 20@6
occ "atp: the RESULT releases it" 0 0 0 0
send 1 0 21@7
send 1 1 21@7
occ "atp: held again" 1 0 0 1
# esa: a higher priority takes the complete slot (no eviction)
$A policy set esa
send 2 0 0@7
occ "esa: preemption of a complete slot moves it to job 2" 0 1 0 1
send 2 1 0@7
occ "job 2 completes its sum" 0 0 0 0

# partials: job 1's first worker alone on six slots
send 1 0 0@0 1@1 2@2 3@3 4@4 5@5
occ "six partials of job 1 held" 6 0 0 6
send 1 1 0@0 1@1
occ "two of them completed and freed" 4 0 0 4
send 2 0 0@2 1@3 2@4 3@5
occ "job 2 (quota 2) preempts only two of job 1's slots" 2 2 0 4
held=(2 2 1 1)		# owners of slots 2..5
expect "$MODE: preemptions counted for job 2" 0 'preemptions [1-9]' $A stats job 2

# reclaim: every slot is stale with a 1 ms timeout
$A switch set timeout 1000
sleep 0.1
send 1 0 10@2
occ "job 1 reclaims a stale slot of job 2" 3 1 0 4
held[0]=1
out=$($A occupancy job 2)
if grep -qE '^job 2 occupancy [0-9]+ quota 2 agg-base [0-9]+ agg-slice [0-9]+$' <<< "$out"; then
	ok "$MODE: occupancy job 2 (text)"
else
	not_ok "$MODE: occupancy job 2 (text): $(flat "$out")"
fi
out=$($A occupancy)
if grep -qE '^job all occupancy 4 slots 64$' <<< "$out" && [ "$(wc -l <<< "$out")" = 4 ]; then
	ok "$MODE: occupancy of all (text): total then jobs 1..3"
else
	not_ok "$MODE: occupancy (text): $(flat "$out")"
fi
keys=$($A -j occupancy | $PY -c 'import json,sys; print(" ".join(",".join(sorted(r)) for r in json.load(sys.stdin)))')
same "$MODE: occupancy -j records and keys" "$keys" \
	"agg_slots,job,occupancy agg_base,agg_slice,job,occupancy,quota agg_base,agg_slice,job,occupancy,quota agg_base,agg_slice,job,occupancy,quota"
expect "$MODE: occupancy of an unknown job" 1 'no such job' $A occupancy job 7

# complete what is still held: every count back to 0
send 1 1 10@2
seqs=(10 1 4 5)		# job 1's sequences on slots 2..5
for i in 1 2 3; do
	slot=$((2 + i))
	if [ "${held[$i]}" = 1 ]; then
		send 1 1 "${seqs[$i]}@$slot"
	else
		send 2 1 "$((slot - 2))@$slot"
	fi
done
occ "every sum completed: nothing held" 0 0 0 0
$A switch set timeout 60000000

# A deleted job's partial has no future: the next job that finds its slot
# takes it, whatever the priorities (aggctl.8, job del), instead of
# colliding with it until agg_timeout.
send 2 0 50@30
occ "job 2 (priority 9) holds a partial" 0 1 0 1
$A job del id 2
send 1 0 50@30
same "$MODE: job 1 (priority 1) takes the slot of deleted job 2 (job 1, total)" \
	"$(occ_of 1) $(occ_of)" "1 1"
expect "$MODE: job 1 took it by preemption, no collision" 0 'collisions 0 preemptions [1-9]' \
	$A stats job 1
send 1 1 50@30
$A job add id 2 ps "$(addr 1):47000" worker "$(addr 12):47000" worker "$(addr 13):47000" priority 9 quota 2
occ "job 1 completed on it; job 2 back" 0 0 0 0

# The data plane goes while jobs hold partials: its aggregator array goes
# with it. A new data plane starts with an empty array, and every job's
# occupancy with 0.
send 1 0 30@10 31@11 32@12
send 2 0 30@20 31@21
occ "partials held before the data plane goes" 3 2 0 5
expect "$MODE: switch detach every port" 0 '^$' $A switch detach "${devs[@]}"
# module feature: the module's occupancy outlives a data plane, so it is
# kept per data plane generation (kmod.rst "Occupancy"); without the
# module the counts live in the data plane's maps and go with them.
if [ $MODE = kmod ]; then
	gen=$($A -j switch show | $PY -c 'import json,sys; print(json.load(sys.stdin)["dp_generation"])')
	if [ -n "$gen" ] && [ "$gen" != 0 ]; then
		ok "kmod: the data plane is the module's current generation ($gen)"
	else
		not_ok "kmod: no current data plane generation: '$gen'"
	fi
	# the probe passes no generation: generation 0, not the current one
	expect "kmod: a claim of another generation is accepted" 0 '^0$' $PROBE account 1 claim
	expect "kmod: releases of another generation are accepted" 0 '^0$' \
		$PROBE account 2 release 0 2
	occ "claims and releases of another generation change no count" 3 2 0 5
	expect "kmod: dp-generation needs CAP_NET_ADMIN" 1 '^error EPERM ' \
		capsh --drop=cap_net_admin -- -c "$RAW config-set dp-generation:u32:7"
	expect "kmod: dp-generation takes a u32" 1 '^error EINVAL msg=invalid attribute length attr=dp-generation ' \
		$RAW config-set dp-generation:flag
	# another program that calls the kfuncs stays loaded while the data
	# plane goes: the old array's counts stop all the same
	mkdir -p "$HOLD"
	bpftool prog load build/selftests/kmod/kfunc_probe.bpf.o "$HOLD/p" 2> /dev/null ||
		not_ok "kmod: bpftool could not load the kfunc program"
	expect "kmod: unload with another kfunc program loaded" 0 '^$' $A switch unload
	occ "the counts of the array that went are gone" 0 0 0 0
	expect "kmod: no data plane is current" 0 'dp-generation 0 ' $A switch show
	rm -f "$HOLD/p"
else
	expect "maps: switch unload" 0 '^$' $A switch unload
fi
t0=$(date +%s.%N)
expect "$MODE: switch attach loads a new data plane" 0 '^$' \
	$A switch attach "${devs[@]}" capacity 64
t1=$(date +%s.%N)
echo "# attach took $($PY -c "print(round($t1 - $t0, 1))") s"
learn
# module feature: jobs outlive the data plane; without it they lived in
# the old data plane's maps
[ $MODE = maps ] && setup
occ "a new data plane: every job starts at 0" 0 0 0 0
send 1 0 40@1
send 2 0 40@2
occ "and counts again" 1 1 0 2
send 1 1 40@1
send 2 1 40@2
occ "completions release again" 0 0 0 0
send 3 0 41@3
send 1 0 41@4 42@5
occ "partials held on the new data plane" 2 0 0 2
expect "$MODE: switch detach again" 0 '^$' $A switch detach "${devs[@]}"
t0=$(date +%s.%N)
expect "$MODE: switch unload again" 0 '^$' $A switch unload
t1=$(date +%s.%N)
echo "# unload took $($PY -c "print(round($t1 - $t0, 1))") s"
# module feature: occupancy is readable with no data plane at all
if [ $MODE = kmod ]; then
	occ "unload: nothing is held in an array that is gone" 0 0 0 0
	expect "kmod: no module references left" 0 'module-refs 0 dataplane no' $A switch show
fi
tap_done