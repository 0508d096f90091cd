# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Running jobs through one-armed switch servers behind a ToR
# (selftests/lib/topo_bridge.sh): the PS and the workers of a job, each in
# its own host's namespace, their reports collected and checked. Shared by
# e2e_one_armed.sh (one server) and e2e_shard.sh (a job over several).
# Sourced after topo_bridge.sh, not run; bails out if the tools are not
# built.
#
# It sets: AGGCTL, ESA_JOB, ESA_PS (the built tools), TMP (a directory for
# the reports, removed at exit), WORKER_TIMEOUT (s, each worker's bound;
# 240 unless set), PS_DEADLINE (the PS's), VALUES (values per packet of a
# job with a token), NET (a /24 for the hosts behind the ToR), PS_ADDR and
# PSP (the PS's address, NET.1, and port). The caller sets SW_ADDR (the
# switch's address, or a comma list of the servers a job is spread over)
# and TOKEN[ID] (job ID's token, 16 hex digits) before starting a job.
#
#   tor_hosts_add         the ToR (bridge_add), the PS at PS_ADDR and
#                         workers w0..w7 at NET.10..NET.17 behind it
#   workers_loss PCT      PCT % loss on the cables of w0..w7 (bridge_loss)
#   workers_loss_clear    none any more
#   values SIZE           int32 values in SIZE (K/M suffix)
#   start_ps NAME PS-ARGS...
#                         the PS on host ps, answering through SW_ADDR;
#                         its report in $TMP/NAME.ps
#   ps_job ID FAN         the PS's --job argument of job ID with its token
#   start_workers NAME JOB FAN PORT ESA-JOB-ARGS...
#                         esa-job --verify as workers 0..FAN-1 of JOB on
#                         hosts w0.., UDP PORT, each one's report in
#                         $TMP/NAME.jJOB.wW
#   wait_all NAME         the workers, then the PS; on a failure, how each
#                         ended
#   verified NAME FAN ITER VALUES JOB
#                         every worker checked every sum, the PS finished
#                         every sequence
#   two_jobs NAME POLICY A B FAN_B OFFSET_B SIZE ITER
#                         jobs A (8 workers) and B (FAN_B) at once, see
#                         below; uses the caller's switch_config, job_add,
#                         snap and jobs_del
#   wsum NAME JOB FAN KEY a worker statistic summed over the job
#   counter BEFORE AFTER KEY ID
#                         the growth of the data plane counter KEY of job
#                         ID between `aggctl -j stats job ID` outputs saved
#                         in $TMP/BEFORE.ID and $TMP/AFTER.ID

__oa_tools=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/tools
AGGCTL=$__oa_tools/aggctl
ESA_JOB=$__oa_tools/esa-job
ESA_PS=$__oa_tools/esa-ps
for __t in "$AGGCTL" "$ESA_JOB" "$ESA_PS"; do
	[ -x "$__t" ] || bail "missing $__t (run make)"
done
TMP=$(mktemp -d)
cleanup_add rm -rf "$TMP"
WORKER_TIMEOUT=${WORKER_TIMEOUT:-240}
PS_DEADLINE=$((WORKER_TIMEOUT + 10))
VALUES=361
NET=198.18.$(($$ % 200 + 20))
PS_ADDR=$NET.1
PSP=47000

tor_hosts_add() {
	local w
	bridge_add || return 1
	bridge_host_add ps "$PS_ADDR/24" || return 1
	for w in 0 1 2 3 4 5 6 7; do
		bridge_host_add "w$w" "$NET.$((10 + w))/24" || return 1
	done
}

workers_loss() {
	local w how
	for w in 0 1 2 3 4 5 6 7; do
		how=$(bridge_loss "w$w" "$1") || return 1
	done
	echo "# loss: $how"
}

workers_loss_clear() {
	local w rc=0
	for w in 0 1 2 3 4 5 6 7; do
		bridge_loss_clear "w$w" || rc=1
	done
	return $rc
}

values() {
	local s=$1
	case $s in
	*K) s=$((${s%K} * 1024)) ;;
	*M) s=$((${s%M} * 1048576)) ;;
	esac
	echo $((s / 4))
}

counter() {
	python3 - "$TMP/$1.$4" "$TMP/$2.$4" "$3" "$4" <<'PY'
import json, sys
def rec(f, job):
    j = json.load(open(f))
    rs = j if isinstance(j, list) else [j]
    return [r for r in rs if r.get("job", r.get("id")) == job][0]["dataplane"]
a, b, k, job = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
print(rec(b, job)[k] - rec(a, job)[k])
PY
}

# Processes started in the background run under nsenter itself, not
# through in_ns (a function: $! would be the subshell running it, and a
# signal would stop the subshell and leave the process behind).
netns_of() { echo "--net=/run/netns/$(ns "$1")"; }
PIDS=() PNAMES=() PS_PID=
start_ps() {
	local name=$1
	shift
	nsenter "$(netns_of ps)" "$ESA_PS" --bind "$PS_ADDR:$PSP" --switch "$SW_ADDR" \
		--linger-ms $((PS_DEADLINE * 1000)) --deadline-s "$PS_DEADLINE" \
		--values "$VALUES" -j "$@" > "$TMP/$name.ps" 2> "$TMP/$name.ps.err" &
	PS_PID=$!
	udp_bound_wait ps "$PSP" || echo "# $name: the PS did not bind in 10 s"
}
ps_job() { echo "--job $1:$2:${TOKEN[$1]}"; }
start_workers() {
	local name=$1 job=$2 fan=$3 port=$4 w
	shift 4
	for ((w = 0; w < fan; w++)); do
		nsenter "$(netns_of "w$w")" timeout "$WORKER_TIMEOUT" "$ESA_JOB" --job "$job" \
			--worker "$w" --fan-in "$fan" --ps "$PS_ADDR:$PSP" \
			--bind "$NET.$((10 + w)):$port" --switch "$SW_ADDR" \
			--token "${TOKEN[$job]}" --values "$VALUES" --verify -j "$@" \
			> "$TMP/$name.j$job.w$w" 2> "$TMP/$name.j$job.w$w.err" &
		PIDS+=($!)
		PNAMES+=("$name.j$job.w$w")
	done
}
wait_all() {
	local i rc=0 st
	for i in "${!PIDS[@]}"; do
		wait "${PIDS[i]}"
		st=$?
		if [ $st != 0 ]; then
			rc=1
			echo "# ${PNAMES[i]}: exit $st"
			diag < "$TMP/${PNAMES[i]}.err"
		fi
	done
	kill -TERM "$PS_PID" 2> /dev/null
	wait "$PS_PID" || { rc=1; diag < "$TMP/$1.ps.err"; }
	PIDS=() PNAMES=()
	return $rc
}
verified() {
	python3 - "$TMP" "$@" "$VALUES" <<'PY'
import json, sys
tmp, name, fan, it, vals, job, per = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
ok = True
for w in range(fan):
    f = f"{tmp}/{name}.j{job}.w{w}"
    try:
        j = json.load(open(f))
        good = j["ok"] and j["verify"]["mismatches"] == 0 and j["verify"]["checked"] == it * vals
        why = f'ok {j["ok"]} verify {j["verify"]}'
    except (OSError, ValueError, KeyError) as e:
        good, why = False, f"no report ({e.__class__.__name__})"
    if not good:
        print(f"# {name}.j{job}.w{w}: not verified: {why}")
        ok = False
ps = {x["job"]: x for x in json.load(open(f"{tmp}/{name}.ps"))["jobs"]}
fin = ps.get(job, {}).get("finished")
if fin != it * -(-vals // per):
    print(f"# PS: job {job} finished {fin} of {it * -(-vals // per)} sequences")
    ok = False
sys.exit(0 if ok else 1)
PY
}
wsum() {
	local w t=0 v
	for ((w = 0; w < $3; w++)); do
		v=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stats"][sys.argv[2]])' \
			"$TMP/$1.j$2.w$w" "$4") || return 1
		t=$((t + v))
	done
	echo $t
}

# two_jobs NAME POLICY A B FAN_B OFFSET_B SIZE ITER: under POLICY, 256
# aggregators a server, job A of 8 workers (UDP 47001, priority 1, from
# index 0) and job B of FAN_B (47002, priority 2, from OFFSET_B of the
# job's index space), ITER allreduces of SIZE each; under static a quota
# of 128 each instead. Through the caller's switch_config POLICY SLOTS
# TIMEOUT_US, job_add ID FAN PORT PRIO [aggctl options] (sets TOKEN[ID]),
# snap NAME ID (job ID's counters into $TMP/NAME.ID or per server) and
# jobs_del; counters before in NAME.0, after in NAME.1.
two_jobs() {
	local name=$1 pol=$2 a=$3 b=$4 fb=$5 ob=$6 size=$7 it=$8 ps_flag=--no-result-on-complete rc
	local sa=(--slots 256 --window 64) sb=(--slots 256 --agg-offset "$ob" --window 64)
	[ "$pol" = atp ] && ps_flag=
	switch_config "$pol" 256 20000 || return 1
	if [ "$pol" = static ]; then
		job_add "$a" 8 47001 1 quota 128 && job_add "$b" "$fb" 47002 2 quota 128 || return 1
		sa=(--slots 128 --window 64) sb=(--slots 128 --window 64)
	else
		job_add "$a" 8 47001 1 && job_add "$b" "$fb" 47002 2 || return 1
	fi
	snap "$name.0" "$a" && snap "$name.0" "$b" || return 1
	# shellcheck disable=SC2046
	start_ps "$name" $(ps_job "$a" 8) $(ps_job "$b" "$fb") $ps_flag \
		--iterations "$it" --size "$size"
	start_workers "$name" "$a" 8 47001 "${sa[@]}" --priority 1 \
		--iterations "$it" --size "$size"
	start_workers "$name" "$b" "$fb" 47002 "${sb[@]}" --priority 2 \
		--iterations "$it" --size "$size"
	wait_all "$name"
	rc=$?
	snap "$name.1" "$a" && snap "$name.1" "$b" || rc=1
	jobs_del
	return $rc
}
