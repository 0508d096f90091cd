#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# End-to-end through the real XDP switch on veth: hosts in network
# namespaces, the switch program on their ports in the root namespace,
# configured with build/tools/aggctl like an operator would, esa-ps and esa-job
# from the tree. On the host the switch is the module-less flavour (jobs in
# its maps); in the VM, with the esa module loaded, aggctl picks the module
# flavour and jobs live in the module (generic netlink). Every worker
# checks every sum (esa-job --verify). Scenarios:
#   1 job x 4 workers x 1 MiB x 5 iterations, int32 bit-exact, summed in
#     the switch; the same in float32 within the quantisation bound;
#   3 jobs on an aggregator array too small for all, under esa, atp and
#     static: all bit-exact, preemptions under esa, collisions under atp;
#   1% and 5% random loss on every worker link: bit-exact, resends counted;
#   a job whose workers are killed mid-run: the other job finishes and the
#     dead job's aggregators are reclaimed (agg_timeout_us).
# Every case adds its own jobs (ids no other case uses, so no aggregator a
# previous case left can pass for one of them) and deletes them after;
# switch counters are compared as deltas over the case.
#
# The same sizes on the host (20 s to a minute) and in the VM (2 minutes
# under TCG, 3 to 4 with the host busy); ESA_E2E_QUICK=1 runs smaller ones
# for a slower machine (still 1 job x 4 workers x 1 MiB, 2 iterations).
# WORKER_TIMEOUT (s, default 240) bounds every worker, the PS gives up 10 s
# later.
. "$(dirname "$0")/lib.sh"
JOBS=()			# jobs this test added and has not deleted
MODCFG=			# the module's switch settings before the test
cleanup() {
	local j
	for j in "${JOBS[@]}"; do agg job del id "$j" 2>/dev/null; done
	topo_down
	[ -n "$MODCFG" ] && "$AGGCTL" policy set "${MODCFG%% *}" &&
		"$AGGCTL" switch set ${MODCFG#* }
	rm -rf "$TMP"
}
cleanup_add cleanup		# before topo.sh's own (hosts, ports)
require_tools
if [ ! -x "$AGGCTL" ] || [ ! -e "$DROP_DIR/drop_0.bpf.o" ]; then
	not_ok "aggctl and drop programs are built (make; make selftests)"
	tap_done
fi
WORKER_TIMEOUT=${WORKER_TIMEOUT:-240}
PS_DEADLINE=$((WORKER_TIMEOUT + 10))
# The JSON checks, one python3 per question (it starts slowly in the VM).
cat > "$TMP/check.py" <<'PY'
import json, sys

def load(f):
    with open(f) as h:
        return json.load(h)

def records(j, job=None):
    """aggctl -j: one object (maps) or an array of records (module)."""
    rs = j if isinstance(j, list) else [j]
    return [r for r in rs if job is None or r.get("job", r.get("id")) == job]

def verify(tmp, name, fan, it, vals, *jobs):
    """Every worker of every job checked every sum, the PS finished all."""
    seqs = it * -(-vals // 363)
    ps = {x["job"]: x for x in load(f"{tmp}/{name}.ps")["jobs"]}
    ok = True
    for job in jobs:
        for w in range(fan):
            f = f"{tmp}/{name}.j{job}.w{w}"
            try:
                j = load(f)
                good = (j["ok"] and j["verify"]["mismatches"] == 0 and
                        j["verify"]["checked"] == it * vals)
                why = f'ok {j["ok"]} verify {j["verify"]}'
            except (OSError, ValueError, KeyError) as e:
                good, why = False, f"no report ({e.__class__.__name__})"
            if not good:
                print(f"# {name}.j{job}.w{w}: not verified: {why}")
                ok = False
        fin = ps.get(job, {}).get("finished")
        if fin != seqs:
            print(f"# PS: job {job} finished {fin} of {seqs} sequences")
            ok = False
    return ok

def delta(tmp, name, keys, *jobs):
    """Sums over jobs of data plane counters, after minus before."""
    out = []
    for k in keys.split(","):
        t = 0
        for job in jobs:
            a, b = (records(load(f"{tmp}/{name}.c{i}.{job}"), job)[0]["dataplane"]
                    for i in (0, 1))
            t += b[k] - a[k]
        out.append(str(t))
    print(*out)

def wsum(tmp, name, job, fan, key):
    print(sum(load(f"{tmp}/{name}.j{job}.w{w}")["stats"][key] for w in range(fan)))

def held(job):
    print(sum(r["occupancy"] for r in records(json.load(sys.stdin), job)))

def slices():
    for r in records(json.load(sys.stdin)):
        print(r["id"], r["agg_base"], r["agg_slice"])

def switch():
    j = json.load(sys.stdin)
    print(j.get("flavour", "none"), j.get("policy"), j.get("agg_slots"),
          j.get("agg_timeout_us"))

def psdiag(f):
    j = load(f)
    for x in j["jobs"]:
        print(f'# PS (exit {j["exit"]}): job {x["job"]} finished {x["finished"]} '
              f'resend_answers {x["resend_answers"]} pulls {x["pulls"]}')

cmd, args = sys.argv[1], [int(a) if a.isdigit() else a for a in sys.argv[2:]]
r = globals()[cmd](*args)
sys.exit(0 if r is None or r else 1)
PY
check_py() { python3 "$TMP/check.py" "$@"; }
if [ -d /sys/module/esa ]; then
	# The module keeps its settings across tests of one boot: restore them.
	read -r _ pol slots tmo <<< "$("$AGGCTL" -j switch show | check_py switch)"
	[[ $tmo =~ ^[0-9]+$ ]] && MODCFG="$pol slots $slots timeout $tmo"
fi
PSH=1				# the PS host; workers are hosts 10, 11, ...
PS=$(haddr $PSH)
PSP=47000			# the PS's port
if ! topo_up $PSH 10 11 12 13; then
	not_ok "topology: switch loaded and attached to 5 veth ports"
	tap_done
fi
topo_ping $PSH 10 11 12 13
agg switch show 2>/dev/null | diag
read -r FLAVOUR _ <<< "$(agg -j switch show | check_py switch)"
if [ -d /sys/module/esa ]; then
	check "esa module loaded: the data plane is the module flavour ($FLAVOUR)" \
		test "$FLAVOUR" = kmod
else
	check "no esa module: the data plane is the maps flavour ($FLAVOUR)" \
		test "$FLAVOUR" = maps
fi
if [ "${ESA_E2E_QUICK:-0}" = 1 ]; then
	ONE_IT=2 F32_SIZE=256K F32_IT=2 MULTI_SIZE=256K MULTI_IT=2 LOSS_SIZE=256K LOSS_IT=2
else
	ONE_IT=5 F32_SIZE=1M F32_IT=5 MULTI_SIZE=256K MULTI_IT=3 LOSS_SIZE=1M LOSS_IT=5
fi
echo "# flavour $FLAVOUR, ESA_E2E_QUICK=${ESA_E2E_QUICK:-0}"

values() { # SIZE (K/M suffix): int32 values in it
	local s=$1
	case $s in
	*K) s=$((${s%K} * 1024)) ;;
	*M) s=$((${s%M} * 1048576)) ;;
	esac
	echo $((s / 4))
}

# ---- the switch, through aggctl ----------------------------------------
# switch_config POLICY SLOTS AGG_TIMEOUT_US (no job of ours exists then)
switch_config() {
	agg policy set "$1" && agg switch set slots "$2" timeout "$3"
}
# job_add ID FAN PORT PRIO [aggctl job options]: workers are hosts
# 10.. on PORT, the PS is $PS:$PSP.
job_add() {
	local id=$1 fan=$2 port=$3 prio=$4 w ws=()
	shift 4
	for ((w = 0; w < fan; w++)); do ws+=(worker "$(haddr $((10 + w))):$port"); done
	agg job add id "$id" ps "$PS:$PSP" "${ws[@]}" priority "$prio" "$@" || return 1
	JOBS+=("$id")
}
jobs_del() { # delete every job of ours
	local j
	for j in "${JOBS[@]}"; do agg job del id "$j"; done
	JOBS=()
}
held() { agg -j occupancy job "$1" | check_py held "$1"; }	# ID: aggregators held
# snap FILE ID: job ID's counters (aggctl -j stats) into FILE.
snap() { agg -j stats job "$2" > "$1"; }
# delta NAME KEY[,KEY...] ID...: the counters summed over jobs ID, over
# case NAME (snapshots $TMP/NAME.c0.ID before and $TMP/NAME.c1.ID after).
delta() { check_py delta "$TMP" "$@"; }

PIDS=() PNAMES=()
# start_ps NAME ESA-PS-ARGS...: the PS of every job, on host $PSH. It
# serves until wait_all stops it once every worker is done (a worker whose
# last result was lost needs it until then; a PS lingering on its own may
# leave first), or fails at the deadline. It returns once the PS listens:
# under esa and static a sum the switch completes before that is lost to
# the PS, and a worker that also loses its result stalls for good
# (Documentation/endpoints.rst, Known limits); with the workers started
# right after the PS, a busy host made the loss cases fail that way.
start_ps() {
	local name=$1
	shift
	ip netns exec "$(ns $PSH)" "$ESA_PS" --bind "$PS:$PSP" \
		--linger-ms $((PS_DEADLINE * 1000)) --deadline-s "$PS_DEADLINE" -j "$@" \
		> "$TMP/$name.ps" 2> "$TMP/$name.ps.err" &
	PS_PID=$!
	udp_bound_wait $PSH $PSP || echo "# $name: the PS did not bind $PS:$PSP in 10 s"
}
# start_worker NAME JOB W FAN PORT ESA-JOB-ARGS...
start_worker() {
	local name=$1 job=$2 w=$3 fan=$4 port=$5
	shift 5
	# WORKER_TIMEOUT bounds a case that stalls: it fails, it does not hang.
	ip netns exec "$(ns $((10 + w)))" timeout "$WORKER_TIMEOUT" \
		"$ESA_JOB" --job "$job" --worker "$w" \
		--fan-in "$fan" --ps "$PS:$PSP" --bind "$(haddr $((10 + w))):$port" \
		--verify --progress -j "$@" > "$TMP/$name.j$job.w$w" 2> "$TMP/$name.j$job.w$w.err" &
	PIDS+=($!)
	PNAMES+=("$name.j$job.w$w")
}
# wait_all NAME: wait for the workers, then stop the PS; on a failure,
# how each ended (124: stalled, stopped after WORKER_TIMEOUT s), their
# progress and errors, and the PS's view of each job.
wait_all() {
	local i rc=0 st=() f
	for i in "${!PIDS[@]}"; do
		wait "${PIDS[i]}"
		st+=($?)
		[ "${st[i]}" = 0 ] || rc=1
	done
	kill -TERM "$PS_PID" 2>/dev/null
	wait "$PS_PID" || rc=1
	if [ $rc != 0 ]; then
		for i in "${!PIDS[@]}"; do
			f=$TMP/${PNAMES[i]}
			echo "# ${PNAMES[i]}: exit ${st[i]}"
			[ -s "$f.err" ] && diag < "$f.err"
		done
		[ -s "$TMP/$1.ps.err" ] && diag < "$TMP/$1.ps.err"
		check_py psdiag "$TMP/$1.ps" 2>/dev/null
	fi
	PIDS=() PNAMES=()
	return $rc
}
workers_of() { # FAN PORT: the PS's worker list
	local w s=
	for ((w = 0; w < $1; w++)); do s+="${s:+,}$(haddr $((10 + w))):$2"; done
	echo "$s"
}
# verified NAME FAN ITER VALUES JOB...: every worker of the jobs checked
# every sum, and the PS saw every sequence of each job finished.
verified() { check_py verify "$TMP" "$@"; }
sum_stat() { check_py wsum "$TMP" "$@"; }	# NAME JOB FAN KEY: over workers
T0=$SECONDS
took() { echo "# $1: $((SECONDS - T0)) s"; T0=$SECONDS; }

# ---- 1 job, 4 workers, 1 MiB, int32 and float32 ----------------------
# one_job NAME ID TYPE ITER SIZE: job ID (a new id each case); its
# counters are in $TMP/NAME.c0.ID and .c1.ID.
one_job() {
	local name=$1 id=$2 type=$3 it=$4 size=$5 w rc
	switch_config esa 1024 20000 && job_add "$id" 4 47000 1 || return 1
	snap "$TMP/$name.c0.$id" "$id" || return 1
	start_ps "$name" --job "$id:4@$(workers_of 4 47000)" --no-result-on-complete \
		--iterations "$it" --size "$size"
	for w in 0 1 2 3; do
		start_worker "$name" "$id" $w 4 47000 --slots 1024 --iterations "$it" \
			--size "$size" --type "$type"
	done
	wait_all "$name"
	rc=$?
	snap "$TMP/$name.c1.$id" "$id" || rc=1
	jobs_del
	return $rc
}
if one_job one 10 int32 "$ONE_IT" 1M && verified one 4 "$ONE_IT" "$(values 1M)" 10; then
	ok "1 job x 4 workers x 1 MiB x $ONE_IT iterations through the switch: bit-exact"
	c=$(delta one completed 10)
	check "... the switch completed sums itself ($c)" test "$c" -gt 0
else
	not_ok "1 job x 4 workers x 1 MiB x $ONE_IT iterations through the switch: bit-exact"
fi
took "1 job int32"
if one_job onef 11 float32 "$F32_IT" "$F32_SIZE" &&
   verified onef 4 "$F32_IT" "$(values "$F32_SIZE")" 11; then
	ok "float32 $F32_SIZE x $F32_IT through the switch: within the quantisation bound"
else
	not_ok "float32 $F32_SIZE x $F32_IT through the switch: within the quantisation bound"
fi
took "1 job float32"

# ---- 3 jobs on 48 aggregators, each wanting 32 -------------------------
# three_jobs POLICY BASE: jobs BASE+1..BASE+3 (priority 1..3)
three_jobs() {
	local pol=$1 b=$2 j id base n slots quota ps_flag=--no-result-on-complete rc
	[ "$pol" = atp ] && ps_flag=
	switch_config "$pol" 48 20000 || return 1
	for j in 1 2 3; do
		quota=()
		[ "$pol" = static ] && quota=(quota 16)
		job_add $((b + j)) 3 $((47000 + j)) $j "${quota[@]}" || return 1
		snap "$TMP/$pol.c0.$((b + j))" $((b + j)) || return 1
	done
	start_ps "$pol" --job "$((b + 1)):3" --job "$((b + 2)):3" --job "$((b + 3)):3" \
		$ps_flag --iterations "$MULTI_IT" --size "$MULTI_SIZE"
	# Under static the tool (or the module) lays the slices out in id
	# order; a worker indexes within its job's slice.
	declare -A slice=()
	if [ "$pol" = static ]; then
		while read -r id base n; do
			slice[$id]=$n
			echo "# static: job $id slice $base + $n"
		done <<< "$(agg -j job show | check_py slices)"
	fi
	for j in 1 2 3; do
		id=$((b + j))
		if [ "$pol" = static ]; then
			slots="--slots ${slice[$id]} --window ${slice[$id]}"
		else	# overlapping ranges: job j starts at 8 (j - 1)
			slots="--slots 48 --agg-offset $((8 * (j - 1))) --window 32"
		fi
		for w in 0 1 2; do
			start_worker "$pol" $id $w 3 $((47000 + j)) $slots \
				--priority $j --iterations "$MULTI_IT" --size "$MULTI_SIZE"
		done
	done
	wait_all "$pol"
	rc=$?
	for j in 1 2 3; do snap "$TMP/$pol.c1.$((b + j))" $((b + j)) || rc=1; done
	jobs_del
	return $rc
}
b=20
for pol in esa atp static; do
	b=$((b + 10))
	v=$(values "$MULTI_SIZE")
	if three_jobs $pol $b &&
	   verified $pol 3 "$MULTI_IT" "$v" $((b + 1)) $((b + 2)) $((b + 3)); then
		ok "$pol: 3 jobs on 48 aggregators, every sum bit-exact"
	else
		not_ok "$pol: 3 jobs on 48 aggregators, every sum bit-exact"
		took "3 jobs $pol"
		continue
	fi
	read -r pre col <<< "$(delta $pol preemptions,collisions $((b + 1)) $((b + 2)) $((b + 3)))"
	echo "# $pol: preemptions $pre collisions $col"
	case $pol in
	esa) check "esa: preemptions counted ($pre)" test $pre -gt 0 ;;
	atp) check "atp: collisions counted ($col), no preemption" test $col -gt 0 -a $pre = 0 ;;
	static) check "static: no preemption ($pre)" test $pre = 0 ;;
	esac
	took "3 jobs $pol"
done

# ---- loss on every worker link -----------------------------------------
id=60
for loss in 100 500; do
	id=$((id + 1))
	for w in 10 11 12 13; do set_loss $w $loss; done
	pct=$((loss / 100))
	if one_job loss$loss $id int32 "$LOSS_IT" "$LOSS_SIZE" &&
	   verified loss$loss 4 "$LOSS_IT" "$(values "$LOSS_SIZE")" $id; then
		rs=$(sum_stat loss$loss $id 4 resends)
		ok "$pct% loss on worker links: bit-exact"
		check "$pct% loss: resends counted ($rs)" test "$rs" -gt 0
	else
		not_ok "$pct% loss on worker links: bit-exact"
	fi
	took "$pct% loss"
done
for w in 10 11 12 13; do set_loss $w 0; done

# ---- a job killed mid-run ---------------------------------------------
# Jobs 1 and 2 share 32 aggregators under esa at equal priority (nobody
# preempts); job 1's workers die with partial sums in the switch (worker 1
# is still computing its first iteration, a minute long, so worker 0's
# first window waits there: however late the kill comes, nothing of job 1
# completes meanwhile); job 2 starts once they are older than
# agg_timeout_us (50 ms), must finish, and its packets must reclaim every
# aggregator job 1 left (evicting the partials to job 1's PS).
kill_case() {
	local w i k0 k1 rc
	switch_config esa 32 50000 && job_add 1 2 47001 0 && job_add 2 2 47002 0 || return 1
	snap "$TMP/kill.c0.1" 1 || return 1
	start_ps kill --job "1:2" --job "2:2" --iterations 20 --size 64K
	ip netns exec "$(ns 10)" "$ESA_JOB" --job 1 --worker 0 --fan-in 2 --ps "$PS:$PSP" \
		--bind "$(haddr 10):47001" --slots 32 --window 32 --iterations 100000 --size 64K \
		> /dev/null 2>&1 &
	k0=$!
	ip netns exec "$(ns 11)" "$ESA_JOB" --job 1 --worker 1 --fan-in 2 --ps "$PS:$PSP" \
		--bind "$(haddr 11):47001" --slots 32 --window 32 --iterations 100000 --size 64K \
		--compute-ms 60000 \
		> /dev/null 2>&1 &
	k1=$!
	# Both die at once while job 1 holds aggregators, leaving the sums
	# they were building in the switch.
	for ((i = 0; i < 300; i++)); do
		[ "$(held 1)" -gt 0 ] 2>/dev/null && break
		sleep 0.1
	done
	kill -9 $k0 $k1
	wait $k0 $k1 2>/dev/null
	HELD=$(held 1)
	HELD=${HELD:-0}
	echo "# job 1 killed holding $HELD aggregators"
	sleep 0.2
	for w in 0 1; do
		start_worker kill 2 $w 2 47002 --slots 32 --window 32 --iterations 20 --size 64K
	done
	# Job 1 never finishes: the PS stops once job 2's workers are done.
	wait_all kill
	rc=$?
	AFTER=$(held 1)
	snap "$TMP/kill.c1.1" 1 || rc=1
	return $rc
}
HELD=0
if kill_case && verified kill 2 20 16384 2; then
	ok "job 1 killed mid-run: job 2 finishes bit-exact"
else
	not_ok "job 1 killed mid-run: job 2 finishes bit-exact"
fi
if [ "$HELD" -gt 0 ]; then
	ev=$(delta kill evictions 1)
	check "job 1's $HELD aggregators reclaimed after agg_timeout_us (left $AFTER, evicted $ev)" \
		test "$AFTER" = 0 -a "$ev" -gt 0
else
	skip "job 1's aggregators reclaimed" "job 1 held none when killed"
fi
jobs_del
took "killed job"

# ---- a PS started after its workers still completes their job ---------
# Under atp every sum needs the PS (it releases the held aggregator): the
# workers start alone, resend while nothing answers, and the PS, started
# 2 s later, completes the job, which is bit-exact.
late_ps_case() {
	local w rc
	switch_config atp 64 20000 && job_add 80 2 47000 1 || return 1
	for w in 0 1; do
		start_worker late 80 $w 2 47000 --slots 64 --window 32 --iterations 2 --size 64K
	done
	sleep 2
	start_ps late --job "80:2@$(workers_of 2 47000)" --iterations 2 --size 64K
	wait_all late
	rc=$?
	jobs_del
	return $rc
}
if late_ps_case && verified late 2 2 16384 80; then
	ok "atp: a PS started 2 s after its workers completes the job bit-exact"
else
	nok "atp: a PS started 2 s after its workers completes the job bit-exact"
fi
took "late PS"

# ---- a worker the job record does not list: it says so in seconds -----
# The record lists port 47001; the worker binds 47002 (esa-job's --bind
# default is 47000, a README once said 47001): the switch drops its
# packets as drop_port and nothing ever answers. The worker names the
# likely cause after --silence-s instead of failing silently ~80 s later.
misconfig_case() {
	switch_config esa 64 20000 && job_add 70 2 47001 1 || return 1
	snap "$TMP/mis.c0.70" 70 || return 1
	ip netns exec "$(ns 10)" timeout 6 "$ESA_JOB" --job 70 --worker 0 --fan-in 2 \
		--ps "$PS:$PSP" --bind "$(haddr 10):47002" --slots 64 --size 4K \
		--silence-s 2 > /dev/null 2> "$TMP/mis.err"
	snap "$TMP/mis.c1.70" 70
	jobs_del
}
misconfig_case
if grep -q "job 70 worker 0: nothing back for 2 s: nothing of job 70 came back since its first packet: the switch may not know this worker as $(haddr 10):47002 (a job record with another address or port" "$TMP/mis.err"; then
	ok "a worker on a port the job record does not list names the likely cause within seconds"
else
	not_ok "a worker on a port the job record does not list: no word of the cause"
	diag < "$TMP/mis.err"
fi
d=$(delta mis drop_port 70)
check "... and the switch dropped its packets as drop_port ($d)" test "${d:-0}" -gt 0
took "misconfigured worker"
tap_done