#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end over two switch servers (Documentation/endpoints.rst, "Over
# several switch servers"): servers sv0 and sv1, each a namespace with its
# own module-less data plane attached one-armed to its one port, behind a
# Linux bridge playing the ToR with the PS and workers w0..w7
# (selftests/lib/topo_bridge.sh). Jobs go to both servers with one
# `aggctl cluster` command (a cluster file of two "local" servers, each
# its own pin directory); esa-job and esa-ps get --switch S0,S1, so every
# packet goes to the server owning its index. Cases:
#   a job of 8 workers and one of 4 at once, under esa, atp and static:
#     bit-exact (esa-job --verify), and each server completed sums of both;
#   the same under 5 % loss on every worker's cable, resends counted;
#   a job of 4 on S = 1 (server sv0 alone) and S = 2: the sums each worker
#     wrote (allreduce_dump.py, libesa's Python binding) are identical byte
#     for byte;
#   server sv1's data plane detached mid-job: every worker fails by itself
#     (exit 1, before WORKER_TIMEOUT) naming server 1 and its address.
# Host only: the esa module is one per kernel, not per network namespace,
# so two module flavour servers need two kernels.
# WORKER_TIMEOUT (s, 240) bounds each worker.
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
# shellcheck source=../lib/topo_bridge.sh
. "$ROOT/selftests/lib/topo_bridge.sh"
# shellcheck source=one_armed_lib.sh
. "$DIR/one_armed_lib.sh"

DUMP=$DIR/allreduce_dump.py
if [ -d /sys/module/esa ]; then
	skip "two switch servers on one host" "the esa module is loaded: it is one per kernel, not per namespace"
	tap_done
fi
SIZE=512K IT=3 LOSS_SIZE=1M LOSS_IT=3

# ---- the topology: behind the ToR the PS (.1), workers w0..w7 (.10..)
# ---- and switch servers sv0 (.100) and sv1 (.101)
SV=("$NET.100" "$NET.101")
PINS=("$(pin_path shard0)" "$(pin_path shard1)")
tor_hosts_add || bail "the ToR with the PS and workers w0..w7 behind it"
# srv K ARGS...: aggctl of server K, in its namespace
srv() {
	local k=$1
	shift
	in_ns "sv$k" "$AGGCTL" -d "${PINS[k]}" "$@"
}
for k in 0 1; do
	bridge_switch_add "${SV[k]}/24" "sv$k" || bail "switch server sv$k on the ToR"
	cleanup_add in_ns "sv$k" "$AGGCTL" -d "${PINS[k]}" switch unload
	cleanup_add in_ns "sv$k" "$AGGCTL" -d "${PINS[k]}" switch detach dev "$(port sw)"
	check "server $k: aggctl attaches its port one-armed" \
		srv "$k" switch attach dev "$(port sw)" role one-armed
	role=$(srv "$k" -j switch show | python3 -c '
import json, sys
j = json.load(sys.stdin)
for p in j.get("port_state", []):
    print(j.get("flavour"), p.get("role"), p.get("address", "-"))')
	check "server $k: the maps flavour, one-armed at ${SV[k]} ($role)" \
		test "$role" = "maps one-armed ${SV[k]}"
done
printf 'sv0 local %s\nsv1 local %s\n' "${PINS[0]}" "${PINS[1]}" > "$TMP/cluster2"
printf 'sv0 local %s\n' "${PINS[0]}" > "$TMP/cluster1"
S2="${SV[0]},${SV[1]}"

# ---- jobs on the servers of a cluster file ------------------------------
# The cluster file of the servers jobs go to: $TMP/cluster2 (sv0 and sv1)
# or $TMP/cluster1 (sv0 alone).
JOBS=() CLUSTER=
declare -A TOKEN=()
# job_add ID FAN WPORT PRIO [aggctl options]: job ID on every server of
# CLUSTER, workers w0.. on UDP WPORT, the PS at PS_ADDR:PSP, one token for
# all (kept in TOKEN[ID]).
job_add() {
	local id=$1 fan=$2 port=$3 prio=$4 w ws=() tok
	shift 4
	for ((w = 0; w < fan; w++)); do ws+=(worker "$NET.$((10 + w)):$port"); done
	tok=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	"$AGGCTL" cluster file "$CLUSTER" job add id "$id" ps "$PS_ADDR:$PSP" "${ws[@]}" \
		priority "$prio" token "$tok" "$@" | diag
	[ "${PIPESTATUS[0]}" = 0 ] || return 1
	TOKEN[$id]=$tok
	JOBS+=("$id")
}
jobs_del() {
	local j
	for j in "${JOBS[@]}"; do "$AGGCTL" cluster file "$CLUSTER" job del id "$j" > /dev/null; done
	JOBS=()
}
cleanup_add 'for j in "${JOBS[@]}"; do "$AGGCTL" cluster file "$CLUSTER" job del id "$j"; done'
# switch_config POLICY SLOTS TIMEOUT_US: on both servers
switch_config() {
	local k
	for k in 0 1; do
		srv "$k" policy set "$1" && srv "$k" switch set slots "$2" timeout "$3" || return 1
	done
}
# snap NAME ID: job ID's counters on each server K of its cluster file
# into $TMP/NAME.sK.ID
snap() {
	local k n
	n=$(grep -c . "$CLUSTER")
	for ((k = 0; k < n; k++)); do
		srv "$k" -j stats job "$2" > "$TMP/$1.s$k.$2" || return 1
	done
}
# both_completed NAME ID: each server completed sums of job ID between
# snapshots NAME.0 and NAME.1 (no sums on one: the job was not sharded)
both_completed() {
	local k c ok=0
	for k in 0 1; do
		c=$(counter "$1.0.s$k" "$1.1.s$k" completed "$2")
		echo "server $k completed $c sums of job $2"
		[ "${c:-0}" -gt 0 ] || ok=1
	done
	return $ok
}

# ---- a job of 8 and one of 4 over both servers, every policy ------------
# two_jobs_case NAME POLICY A B SIZE IT: jobs A of 8 and B of 4 over both
# servers (B from global index 256, local 128 on each), TAP the outcome
two_jobs_case() {
	local name=$1 pol=$2 a=$3 b=$4 size=$5 it=$6
	CLUSTER=$TMP/cluster2 SW_ADDR=$S2
	if two_jobs "$name" "$pol" "$a" "$b" 4 256 "$size" "$it" &&
	   verified "$name" 8 "$it" "$(values "$size")" "$a" &&
	   verified "$name" 4 "$it" "$(values "$size")" "$b"; then
		ok "$name: jobs of 8 and 4 workers over two servers: bit-exact"
		check "$name: both servers completed sums of the 8-worker job" both_completed "$name" "$a"
		check "$name: both servers completed sums of the 4-worker job" both_completed "$name" "$b"
	else
		not_ok "$name: jobs of 8 and 4 workers over two servers: bit-exact"
	fi
}
id=10
for pol in esa atp static; do
	two_jobs_case "$pol" "$pol" $((id + 1)) $((id + 2)) "$SIZE" "$IT"
	id=$((id + 10))
done

# ---- 5 % loss on every worker's cable -------------------------------------
workers_loss 5 || bail "5 % loss on every worker's cable"
two_jobs_case loss esa 41 42 "$LOSS_SIZE" "$LOSS_IT"
for n in 41 42; do
	fan=8
	[ $n = 42 ] && fan=4
	rs=$(wsum loss $n $fan resends)
	check "5 % loss: resends of job $n counted (${rs:-none})" test "${rs:-0}" -gt 0
done
workers_loss_clear || not_ok "loss off the workers' cables"

# ---- the same job on S = 1 and S = 2: the same sums, byte for byte -------
# dump_job NAME FILE SWITCHES: job 51 of 4 workers on the servers of
# cluster FILE, each worker's sums into $TMP/NAME.wW.sums
DUMP_COUNT=50000 DUMP_IT=2
dump_job() {
	local name=$1 file=$2 w rc
	CLUSTER=$file SW_ADDR=$3
	switch_config esa 256 20000 && job_add 51 4 47005 1 || return 1
	# shellcheck disable=SC2046
	start_ps "$name" $(ps_job 51 4) --no-result-on-complete \
		--iterations "$DUMP_IT" --size $((DUMP_COUNT * 4))
	for w in 0 1 2 3; do
		nsenter "$(netns_of "w$w")" timeout "$WORKER_TIMEOUT" python3 "$DUMP" \
			--job 51 --worker "$w" --fan-in 4 --ps "$PS_ADDR:$PSP" \
			--bind "$NET.$((10 + w)):47005" --switch "$SW_ADDR" \
			--token "${TOKEN[51]}" --slots 256 --values "$VALUES" \
			--count "$DUMP_COUNT" --iterations "$DUMP_IT" \
			--out "$TMP/$name.w$w.sums" 2> "$TMP/$name.j51.w$w.err" &
		PIDS+=($!)
		PNAMES+=("$name.j51.w$w")
	done
	snap "$name.0" 51 || return 1
	wait_all "$name"
	rc=$?
	snap "$name.1" 51 || rc=1
	jobs_del
	return $rc
}
if dump_job s1 "$TMP/cluster1" "${SV[0]}" && dump_job s2 "$TMP/cluster2" "$S2"; then
	ok "a job of 4 on S = 1 and on S = 2: every sum right on both"
	check "... S = 2 put sums on both servers" both_completed s2 51
	for w in 0 1 2 3; do
		check "... worker $w's sums on S = 1 and S = 2 identical byte for byte" \
			cmp "$TMP/s1.w$w.sums" "$TMP/s2.w$w.sums"
	done
else
	not_ok "a job of 4 on S = 1 and on S = 2: every sum right on both"
fi

# ---- one server's data plane detached mid-job ----------------------------
# Job 61 of 4 workers runs long over both servers; once server 1 has
# completed sums, its data plane is detached: its host then answers 'port
# unreachable'. No failover (Documentation/endpoints.rst): every worker's
# allreduce fails once its packet owned by server 1 gets no result.
completed_on() { # K ID: sums server K completed of job ID so far
	srv "$1" -j stats job "$2" | python3 -c '
import json, sys
j = json.load(sys.stdin)
rs = j if isinstance(j, list) else [j]
print([r for r in rs if r.get("job", r.get("id")) == int(sys.argv[1])][0]["dataplane"]["completed"])' "$2"
}
kill_case() {
	local i w st
	CLUSTER=$TMP/cluster2 SW_ADDR=$S2
	switch_config esa 256 20000 && job_add 61 4 47006 1 || return 1
	# shellcheck disable=SC2046
	start_ps kill $(ps_job 61 4) --no-result-on-complete --iterations 100000 --size 64K
	start_workers kill 61 4 47006 --slots 256 --window 64 \
		--max-resends 30 --iterations 100000 --size 64K
	for ((i = 0; i < 600; i++)); do
		[ "$(completed_on 1 61)" -gt 0 ] 2> /dev/null && break
		sleep 0.1
	done
	echo "# server 1 completed $(completed_on 1 61) sums of job 61: detaching it"
	srv 1 switch detach dev "$(port sw)" || return 1
	KILL_OK=1
	for i in "${!PIDS[@]}"; do
		wait "${PIDS[i]}"
		st=$?
		diag < "$TMP/${PNAMES[i]}.err"
		if [ $st != 1 ]; then
			echo "# ${PNAMES[i]}: exit $st, not 1 (124: it hung until killed)"
			KILL_OK=0
		elif ! grep -qF "from switch server 1 (${SV[1]}:47000) of 2" "$TMP/${PNAMES[i]}.err"; then
			echo "# ${PNAMES[i]}: its error does not name server 1 (${SV[1]})"
			KILL_OK=0
		fi
	done
	PIDS=() PNAMES=()
	kill -TERM "$PS_PID" 2> /dev/null
	wait "$PS_PID"
	jobs_del
}
KILL_OK=0
kill_case
check "server 1 detached mid-job: every worker fails by itself naming server 1" \
	test "$KILL_OK" = 1
tap_done
