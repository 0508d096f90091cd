#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Each policy's decisions on crafted contention sequences, through the
# real kfuncs: kfunc_probe runs a small XDP program calling esa_arbitrate,
# esa_account, esa_job_lookup, esa_config_get and esa_job_config_get under
# BPF_PROG_TEST_RUN.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
need_module
reset_module

arb() { $PROBE arbitrate "$@"; }
acct() { $PROBE account "$@"; }

P="ps 10.4.0.1:47000"
$AGGCTL job add id 1 $P worker 10.4.0.2:5000 priority 10
$AGGCTL job add id 2 $P worker 10.4.0.3:5000 priority 20
$AGGCTL job add id 3 $P worker 10.4.0.4:5000 priority 20

# the program loads at all: the kfuncs are registered and resolvable
out=$($PROBE config 2>&1)
same "esa_config_get" "$out" "policy 0 slots 4096 timeout 100000"
same "esa_job_lookup" "$($PROBE lookup 2)" "prio 20 fan_in 1 base 0 quota 0"
same "esa_job_lookup of an unknown job" "$($PROBE lookup 9)" "-ENOENT"
# both in one call (the data plane's per-packet lookup)
same "esa_job_config_get" "$($PROBE lookup-config 2)" \
	"prio 20 fan_in 1 base 0 quota 0 policy 0 slots 4096 timeout 100000"
same "esa_job_config_get of an unknown job still gives the config" \
	"$($PROBE lookup-config 9)" "-ENOENT policy 0 slots 4096 timeout 100000"

# --- esa, fixed priorities ---
same "esa: higher priority preempts" "$(arb 2 1 5)" preempt
same "esa: lower priority collides" "$(arb 1 2 5)" collide
same "esa: equal priority collides" "$(arb 2 3 5)" collide
same "esa: same job never preempts itself" "$(arb 2 2 5)" collide
same "esa: a deleted holder's slot is taken" "$(arb 1 9 5)" preempt
same "esa: unknown newcomer" "$(arb 9 1 5)" -ENOENT
same "esa: owner 0 (free slot) is not a contention" "$(arb 2 0 5)" -EINVAL
same "esa: index beyond agg_slots" "$(arb 2 1 4096)" -EINVAL
same "esa: last index is fine" "$(arb 2 1 4095)" preempt
$AGGCTL job change id 1 priority 30
same "esa: priority change takes effect at once" "$(arb 1 2 5)" preempt

# quota caps preemption: job 2 (quota 2) holding 2 aggregators collides
$AGGCTL job change id 1 priority 10
$AGGCTL job change id 2 quota 2
acct 2 claim > /dev/null
same "esa: under quota still preempts" "$(arb 2 1 5)" preempt
acct 2 claim > /dev/null
expect "occupancy counts claims" 0 '^job 2 occupancy 2 quota 2' $AGGCTL occupancy job 2
same "esa: at quota collides" "$(arb 2 1 5)" collide
acct 2 release > /dev/null
same "esa: below quota again preempts" "$(arb 2 1 5)" preempt
acct 2 release > /dev/null
acct 2 release > /dev/null
expect "occupancy never below 0" 0 '^job 2 occupancy 0 ' $AGGCTL occupancy job 2

# --- atp: never preempts ---
$AGGCTL policy set atp
same "esa_config_get sees atp" "$($PROBE config)" "policy 1 slots 4096 timeout 100000"
same "esa_job_config_get sees atp" "$($PROBE lookup-config 2)" \
	"prio 20 fan_in 1 base 0 quota 0 policy 1 slots 4096 timeout 100000"
same "atp: higher priority collides" "$(arb 2 1 5)" collide
same "atp: deleted holder collides" "$(arb 1 9 5)" collide

# --- static: disjoint slices, only same-job clashes, which collide ---
$AGGCTL switch set slots 1000
$AGGCTL job change id 1 quota 100
$AGGCTL job change id 2 quota 0
$AGGCTL policy set static
same "static: job 1 slice" "$($PROBE lookup 1)" "prio 10 fan_in 1 base 0 quota 100"
same "static: job 2 slice" "$($PROBE lookup 2)" "prio 20 fan_in 1 base 100 quota 450"
same "static: job 3 slice" "$($PROBE lookup 3)" "prio 20 fan_in 1 base 550 quota 450"
same "static: higher priority collides" "$(arb 2 1 5)" collide
$AGGCTL job del id 2
same "static: slices regrow after a delete" "$($PROBE lookup 3)" "prio 20 fan_in 1 base 100 quota 900"
$AGGCTL policy set esa
same "esa again: no slices" "$($PROBE lookup 3)" "prio 20 fan_in 1 base 0 quota 0"

# --- esa, dynamic priority: least attained service with aging ---
reset_module
# no aging until the aging part: exact priorities first
$AGGCTL switch set aging 600000
$AGGCTL job add id 1 $P worker 10.4.0.2:5000 priority auto
$AGGCTL job add id 2 $P worker 10.4.0.3:5000 priority auto
same "dynamic: new jobs have top priority" "$($PROBE lookup 1)" "prio 255 fan_in 1 base 0 quota 0"
same "dynamic: equal service collides" "$(arb 2 1 5)" collide
# job 1 aggregates 1 MiB (fls64 = 21: 255 - 84 = 171)
acct 1 aggregated 1048576 > /dev/null
same "dynamic: priority falls with service" "$($PROBE lookup 1)" "prio 171 fan_in 1 base 0 quota 0"
same "dynamic: the less served job preempts" "$(arb 2 1 5)" preempt
same "dynamic: the more served job collides" "$(arb 1 2 5)" collide
# job 2 aggregates 2 KiB: still far less served than job 1
acct 2 aggregated 2048 > /dev/null
same "dynamic: small service, higher priority" "$($PROBE lookup 2)" "prio 207 fan_in 1 base 0 quota 0"
same "dynamic: less served still wins" "$(arb 2 1 5)" preempt
# job 2 overtakes: 8 MiB -> it is now the more served one
acct 2 aggregated 8388608 > /dev/null
same "dynamic: roles swap when service swaps" "$(arb 1 2 5)" preempt
expect "job show reports attained bytes" 0 'prio-mode auto eff-priority 159 .*attained 8390656' \
	$AGGCTL job show id 2
# aging: with a 100 ms half-life, 24 halvings in ~3 s bring both to 0
$AGGCTL switch set aging 100
sleep 4
same "aging: attained service decays to nothing" "$($PROBE lookup 2)" "prio 255 fan_in 1 base 0 quota 0"
same "aging: equal again, nobody preempts" "$(arb 1 2 5)" collide
# starvation freedom: job 1 is starved (served nothing) while job 2 is
# served; job 1's priority stays above job 2's, so job 1 wins
acct 2 aggregated 65536 > /dev/null
same "aging: a starved job outranks a served one" "$(arb 1 2 5)" preempt
# an admin priority overrides the rule
$AGGCTL job change id 2 priority 255
same "admin priority overrides dynamic" "$(arb 1 2 5)" collide

# priority by job: jobs 5 (4 workers) and 6 (32) get the same 1 MiB
# tensor aggregated, reported as every worker's value bytes; service is
# tensor bytes (fls64 = 21: 255 - 84 = 171) for both, so neither preempts
$AGGCTL switch set aging 600000
workers() { local i; for i in $(seq 1 "$1"); do echo "worker 10.5.$2.$i:5000"; done; }
$AGGCTL job add id 5 $P $(workers 4 5) priority auto
$AGGCTL job add id 6 $P $(workers 32 6) priority auto
acct 5 aggregated $((4 * 1048576)) > /dev/null
acct 6 aggregated $((32 * 1048576)) > /dev/null
same "by job: 4 workers, 1 MiB tensor" "$($PROBE lookup 5)" "prio 171 fan_in 4 base 0 quota 0"
same "by job: 32 workers, same tensor, same priority" "$($PROBE lookup 6)" "prio 171 fan_in 32 base 0 quota 0"
same "by job: the wide job does not preempt" "$(arb 5 6 5)" collide
same "by job: nor is it preempted" "$(arb 6 5 5)" collide
expect "job show reports tensor bytes" 0 'fan-in 32 .*attained 1048576' $AGGCTL job show id 6

# --- accounting and events ---
reset_module
$AGGCTL job add id 1 $P worker 10.4.0.2:5000
# switch-wide counters may hold other tests' traffic: compare deltas
total() { $AGGCTL -j stats | $PY -c "import json,sys; print(json.load(sys.stdin)[0]['module']['$1'])"; }
rx0=$(total rx)
mal0=$(total drop_malformed)
same "account rx" "$(acct 1 rx 0 5)" 0
expect "job state becomes active" 0 '^job 1 state active ' $AGGCTL job show id 1
same "account unknown job" "$(acct 9 rx)" -ENOENT
same "account job 0 (switch-wide)" "$(acct 0 drop_malformed)" 0
same "account unknown event" "$(acct 1 999)" -EINVAL
expect "stats count per job" 0 '^job 1 module: rx 5 ' $AGGCTL stats job 1
same "stats totals include unknown jobs" "$(($(total rx) - rx0)) $(($(total drop_malformed) - mal0))" "6 1"
# stranded_us grows by the amount reported, stranded by one per event
acct 1 stranded 0 2 > /dev/null
acct 1 stranded_us 1500 2 > /dev/null
expect "stats: an amount counter adds its amount" 0 ' stranded 2 stranded_us 3000( |$)' \
	$AGGCTL stats job 1
mon=$(mktemp)
$AGGCTL monitor > "$mon" 2>&1 &
mpid=$!
sleep 1
acct 1 evictions 0 3 > /dev/null
acct 1 completed 0 4 > /dev/null
sleep 1
kill $mpid
wait $mpid 2> /dev/null
expect "monitor: preempted event with count" 0 '^job-preempted job 1 count 3$' cat "$mon"
expect "monitor: completed event with count" 0 '^job-completed job 1 count 4$' cat "$mon"
rm -f "$mon"
reset_module
tap_done