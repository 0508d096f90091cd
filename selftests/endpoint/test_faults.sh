#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Faults during a multi-job run through the real switch (Documentation/
# reliability.rst): four jobs of two workers under esa, each with its own
# PS host. Mid-run a worker of job 1 is killed, job 2's PS is killed, and
# the switch is restarted (aggctl switch unload, attach again; the
# module-less switch also gets its settings and jobs again, the module
# kept them). Jobs 3 and 4 must finish bit-exact all the same (what the
# restart lost, their resends recover through their PS); jobs 1 and 2 are
# stopped and deleted, and a job 5 then runs over the whole array: no
# aggregator is left to jobs 1 or 2 (the killed jobs' slots came back).
# At the end nothing of the test is left: no process, namespace, link,
# pin, or module job.
#
# usage: test_faults.sh [ITERATIONS]   (default 30; the figure runs more)
# On the host with the module-less switch, in the VM with the module.
. "$(dirname "$0")/lib.sh"
IT=${1:-30}
SIZE=64K
VALS=$((64 * 1024 / 4))
SLOTS=64
TIMEOUT_US=200000	# agg_timeout_us: a dead job's slots are reclaimed after it
PS_DEADLINE=300		# s: a PS of a job that cannot finish gives up
JOBS_ADDED=()
MODCFG=

cleanup() {
	local j
	for j in "${JOBS_ADDED[@]}"; do agg job del id "$j" 2> /dev/null; done
	topo_down
	[ -n "$MODCFG" ] && "$AGGCTL" policy set "${MODCFG%% *}" && "$AGGCTL" switch set ${MODCFG#* }
	rm -rf "$TMP"
}
cleanup_add cleanup		# before topo.sh's own (hosts, ports)
require_tools

if [ -d /sys/module/esa ]; then
	MODCFG="$("$AGGCTL" -j switch show | python3 -c 'import json,sys; j=json.load(sys.stdin)
print(j["policy"], "slots", j["agg_slots"], "timeout", j["agg_timeout_us"])')"
fi
# hosts: PS of job j is host j (1..5), workers are hosts 10 and 11
topo_up 1 2 3 4 5 10 11 || { not_ok "topology"; tap_done; }
for k in 1 2 3 4 5; do topo_ping 10 "$k"; topo_ping 11 "$k"; done

port_of() { echo $((47000 + $1)); }
job_add() { # ID
	agg job add id "$1" ps "$(haddr "$1"):47000" worker "$(haddr 10):$(port_of "$1")" \
		worker "$(haddr 11):$(port_of "$1")" priority 5 || return 1
	[[ " ${JOBS_ADDED[*]} " == *" $1 "* ]] || JOBS_ADDED+=("$1")
}
configure() { # JOB...
	local j
	agg policy set esa && agg switch set slots $SLOTS timeout $TIMEOUT_US || return 1
	for j in "$@"; do job_add "$j" || return 1; done
}
declare -A PS_PID W_PID
# start_job ID ITERATIONS [OFFSET WINDOW]: jobs 1..4 each on 16 slots of
# their own (offset 16 * (ID - 1)), so nobody else reclaims what they hold
start_job() {
	local j=$1 w off=${3:-$((16 * ($1 - 1)))} win=${4:-16}
	ip netns exec "$(ns "$j")" "$ESA_PS" --bind "$(haddr "$j")" --job "$j:2" --size $SIZE \
		--iterations "$2" --no-result-on-complete --deadline-s $PS_DEADLINE -j \
		> "$TMP/ps$j" 2> "$TMP/ps$j.err" &
	PS_PID[$j]=$!
	# listening before the workers send: under esa a sum completed
	# earlier is lost to it (e2e_switch.sh's start_ps says why)
	udp_bound_wait "$j" 47000 || echo "# job $j: its PS did not bind in 10 s"
	for w in 0 1; do
		ip netns exec "$(ns $((10 + w)))" "$ESA_JOB" --job "$j" \
			--worker $w --fan-in 2 --ps "$(haddr "$j")" --bind "$(haddr $((10 + w))):$(port_of "$j")" \
			--slots $SLOTS --agg-offset "$off" --window "$win" --size $SIZE \
			--iterations "$2" --compute-ms 100 \
			--verify -j > "$TMP/j$j.w$w" 2> "$TMP/j$j.w$w.err" &
		W_PID[$j.$w]=$!
	done
}
# completed sums of job ID so far (the data plane's counter)
completed() {
	agg -j stats job "$1" 2> /dev/null | tr -d ' \n' | sed 's/.*"dataplane"://' |
		grep -o '"completed":[0-9]*' | cut -d: -f2
}
wait_completed() { # ID N: until job ID completed N sums (120 s at most)
	local t0=$SECONDS c
	while c=$(completed "$1"); [ "${c:-0}" -lt "$2" ]; do
		[ $((SECONDS - t0)) -lt 120 ] || return 1
		sleep 0.2
	done
}
# held_by JOB...: aggregators of the array that those jobs own, read from
# the pinned array itself (either flavour: the module's occupancy counts
# forget a deleted job, the array does not)
held_by() {
	python3 - "$PIN/esa_aggs" $SLOTS "$@" <<'PY'
import json, subprocess, sys
pin, n, jobs = sys.argv[1], int(sys.argv[2]), {int(j) for j in sys.argv[3:]}
held = 0
for k in range(n):
    key = [str(b) for b in k.to_bytes(4, "little")]
    out = subprocess.run(["bpftool", "-j", "map", "lookup", "pinned", pin, "key"] + key,
                         capture_output=True, text=True, check=True).stdout
    v = json.loads(out)
    v = v.get("formatted", v)["value"]
    held += v["state"] != 0 and v["job_id"] in jobs
print(held)
PY
}
verified() { # ID: both workers exited 0 with every sum checked and right
	local w
	for w in 0 1; do
		grep -q '"ok":true' "$TMP/j$1.w$w" &&
			grep -q "\"verify\":{\"checked\":$((IT * VALS)),\"mismatches\":0" "$TMP/j$1.w$w" ||
			{ sed "s/^/# j$1.w$w: /" "$TMP/j$1.w$w.err" | tail -n 5; return 1; }
	done
}

configure 1 2 3 4 || { not_ok "configure the switch"; tap_done; }
FLAVOUR=maps; [ -d /sys/module/esa ] && FLAVOUR=kmod
echo "# flavour $FLAVOUR, $IT iterations of $SIZE per job"
# jobs 1 and 2 run long enough to be killed whatever the machine's pace
for j in 1 2; do start_job "$j" $((IT * 10)); done
for j in 3 4; do start_job "$j" "$IT"; done
per_it=$(( (VALS + 362) / 363 ))

# 1. the switch restarts under all four jobs, once they are under way:
# the module keeps its settings and jobs, the module-less switch gets them
# again; what the restart lost, the workers' resends recover via their PS
# (as soon as job 3's first sum is in: polling is slow under TCG)
wait_completed 3 1
running=0
kill -0 "${W_PID[3.0]}" 2> /dev/null && kill -0 "${W_PID[4.0]}" 2> /dev/null && running=1
before3=$(completed 3) before4=$(completed 4)
restarted=0
if agg switch detach "${PORTS[@]}" && agg switch unload > /dev/null &&
   agg switch attach "${PORTS[@]}" > /dev/null; then
	restarted=1
	[ $FLAVOUR = maps ] && { configure 1 2 3 4 || restarted=0; }
	for k in 1 2 3 4 5; do topo_ping 10 "$k"; topo_ping 11 "$k"; done
fi
check "the switch restarted mid-run (jobs 3, 4 running, at $before3, $before4 of $((IT * per_it)) sums)" \
	test $restarted = 1 -a $running = 1
# 2. a worker of job 1 dies once job 1 runs again
# (the counters restarted with the switch: any sum completed is progress)
wait_completed 1 1 && { kill -9 "${W_PID[1.1]}"; wait "${W_PID[1.1]}"; } 2> /dev/null
check "job 1 ran on, then its worker 1 was killed" [ "$(completed 1)" -ge 1 ]
# 3. job 2's PS dies once job 2 runs again
wait_completed 2 1 && { kill -9 "${PS_PID[2]}"; wait "${PS_PID[2]}"; } 2> /dev/null
check "job 2 ran on, then its PS was killed" [ "$(completed 2)" -ge 1 ]
# 4. jobs 3 and 4 finish bit-exact
FAILED_JOBS=()
for j in 3 4; do
	for w in 0 1; do wait "${W_PID[$j.$w]}"; done
	check "job $j finishes bit-exact through the faults" verified "$j" || {
		FAILED_JOBS+=("$j")
		{ echo "== stats job $j"; agg -j stats job "$j"; echo "== stats"; agg -j stats
		  echo "== job show"; agg job show; echo "== neigh"
		  bpftool -j map dump pinned "$PIN/esa_neigh"
		  bpftool -j map dump pinned "$PIN/esa_learned"
		  for k in "$j" 10 11; do
		    echo "== switch port of host $k, its eth0, its UDP drops"
		    ethtool -S "$(port "$k")" | grep -v ': 0$'
		    ip netns exec "$(ns "$k")" ethtool -S eth0 | grep -v ': 0$'
		    ip netns exec "$(ns "$k")" nstat -az 2>/dev/null |
			grep -E '^Udp(InDatagrams|NoPorts|InErrors|RcvbufErrors) '
		  done
		  for w in 0 1; do echo "== w$w"; cat "$TMP/j$j.w$w" "$TMP/j$j.w$w.err"; done
		} > "$TMP/diag$j" 2>&1
		diag < "$TMP/diag$j"
	}
done
# 5. the killed jobs are stopped and deleted; their slots come back
for j in 1 2; do
	for w in 0 1; do { kill -9 "${W_PID[$j.$w]}"; wait "${W_PID[$j.$w]}"; } 2> /dev/null; done
done
for j in 1 2 3 4; do kill "${PS_PID[$j]}" 2> /dev/null; wait "${PS_PID[$j]}" 2> /dev/null; done
for j in "${FAILED_JOBS[@]}"; do diag "ps$j:"; diag < "$TMP/ps$j"; diag < "$TMP/ps$j.err"; done
[ -n "${ESA_VM_OUT:-}" ] && cp -R "$TMP" "$ESA_VM_OUT/faults.$$"
held_dead=$(held_by 1 2)
echo "# jobs 1 and 2 held ${held_dead:-?} aggregators when stopped"
for j in 1 2; do agg job del id "$j"; done
sleep $(( TIMEOUT_US / 1000000 + 1 ))	# older than agg_timeout_us
# job 5 cycles through the whole array: every slot a killed job left must
# come back to it (reclaimed once older than agg_timeout_us)
job_add 5 || not_ok "job add 5"
start_job 5 2 0 $SLOTS
for w in 0 1; do wait "${W_PID[5.$w]}"; done
kill "${PS_PID[5]}" 2> /dev/null; wait "${PS_PID[5]}" 2> /dev/null
IT_SAVE=$IT IT=2
check "job 5 runs over the whole array afterwards, bit-exact" verified 5
IT=$IT_SAVE
left=$(held_by 1 2)
if [ "${held_dead:-0}" -gt 0 ]; then
	check "the $held_dead aggregators of the killed jobs came back: none left to them (${left:-?})" \
		[ "${left:-1}" = 0 ]
else
	skip "the killed jobs' aggregators came back" "jobs 1 and 2 held none when stopped"
fi
# 6. nothing left behind
for j in "${JOBS_ADDED[@]}"; do agg job del id "$j" 2> /dev/null; done
JOBS_ADDED=()
topo_down
left=0
for pid in "${PS_PID[@]}" "${W_PID[@]}"; do kill -0 "$pid" 2> /dev/null && left=$((left + 1)); done
left=$((left + $(ip netns list | grep -c "^$(ns '')") + $(ip -o link show | grep -c ": $(ifname '')") +
	$(ls /sys/fs/bpf | grep -c "esa-ep-$$")))
check "nothing of the test left (processes, namespaces, links, pins: $left)" [ "$left" = 0 ]
if [ -d /sys/module/esa ]; then
	check "no job of the test left in the module" \
		bash -c "! '$AGGCTL' job show | grep -Eq '^job [1-5]( |$)'"
fi
tap_done
