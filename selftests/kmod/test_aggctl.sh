#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every aggctl object and command against the esa module (in the VM):
# results checked in text and JSON, and the monitor sees each event.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
need_module
reset_module

expect "job add" 0 '^$' $AGGCTL job add id 7 ps 10.1.0.1:47000 \
	worker 10.1.0.2:5000 worker 10.1.0.3:5001 priority 9 quota 10
expect "job add, auto priority, fan-in given" 0 '^$' $AGGCTL job add id 8 \
	ps 10.1.0.1:47000 worker 10.1.0.4:5000 fan-in 1 priority auto
expect "job show lists both" 0 'job 7 .*fan-in 2 prio-mode fixed priority 9 .*quota 10 .*ps 10.1.0.1:47000 dev .* worker 10.1.0.2:5000 dev .* worker 10.1.0.3:5001 dev ' \
	$AGGCTL job show
expect "job show id" 0 '^job 8 state idle fan-in 1 prio-mode auto eff-priority 255 ' \
	$AGGCTL job show id 8
out=$($AGGCTL -j job show)
if json_ok <<< "$out" && [ "$($PY -c 'import json,sys; j=json.load(sys.stdin); print(len(j), j[0]["id"], j[0]["workers"][1], j[1]["prio_mode"])' <<< "$out")" = "2 7 10.1.0.3:5001 auto" ]; then
	ok "job show -j: valid JSON with the same fields"
else
	not_ok "job show -j: $(flat "$out")"
fi
out=$($AGGCTL -j -p job show id 7)
if json_ok <<< "$out" && [ "$(wc -l <<< "$out")" -gt 5 ]; then
	ok "job show -j -p: pretty JSON"
else
	not_ok "job show -j -p: $(flat "$out")"
fi

expect "job change priority" 0 '^$' $AGGCTL job change id 7 priority 200
expect "job change shows" 0 'priority 200 eff-priority 200' $AGGCTL job show id 7
expect "job change workers" 0 '^$' $AGGCTL job change id 7 worker 10.1.0.9:6000
expect "job change workers shows" 0 'fan-in 1 .*worker 10.1.0.9:6000 dev ' $AGGCTL job show id 7
expect "job change to auto" 0 '^$' $AGGCTL job change id 7 priority auto
expect "job change auto shows" 0 'prio-mode auto' $AGGCTL job show id 7
expect "job change ps" 0 '^$' $AGGCTL job change id 7 ps 10.1.0.100:47000
expect "job change ps shows" 0 'ps 10.1.0.100:47000' $AGGCTL job show id 7

for p in atp static esa; do
	expect "policy set $p" 0 '^$' $AGGCTL policy set $p
	expect "policy show $p" 0 "^policy $p$" $AGGCTL policy show
done
expect "policy show -j" 0 '^\{"policy":"esa"\}$' $AGGCTL -j policy show

expect "switch set" 0 '^$' $AGGCTL switch set slots 1000 timeout 5000 aging 200
expect "switch show" 0 'module yes policy esa slots 1000 timeout-us 5000 aging-ms 200' \
	$AGGCTL switch show
expect "switch show -j" 0 '"agg_slots":1000' $AGGCTL -j switch show
expect "timeout 0 (no reclaim, wire-protocol.rst) is accepted" 0 '^$' \
	$AGGCTL switch set timeout 0
expect "timeout 0 shows" 0 'timeout-us 0 ' $AGGCTL switch show
$AGGCTL switch set timeout 5000

# static: job 7 (quota 10) and job 8 (shares the rest) get disjoint slices
$AGGCTL policy set static
expect "occupancy under static: slices" 0 'job 7 occupancy 0 quota 10 agg-base 0 agg-slice 10' \
	$AGGCTL occupancy
expect "occupancy job 8" 0 '^job 8 occupancy 0 quota 0 agg-base 10 agg-slice 990$' \
	$AGGCTL occupancy job 8
expect "occupancy total" 0 '^job all occupancy 0 slots 1000' $AGGCTL occupancy
$AGGCTL policy set esa
expect "slices are 0 again under esa" 0 'agg-base 0 agg-slice 0$' $AGGCTL occupancy job 8
out=$($AGGCTL -j occupancy)
json_ok <<< "$out" && ok "occupancy -j is JSON" || not_ok "occupancy -j: $(flat "$out")"

expect "stats totals" 0 '^job all module: rx [0-9]+ aggregated [0-9]+ ' $AGGCTL stats
expect "stats job" 0 '^job 7 module: rx 0 ' $AGGCTL stats job 7
out=$($AGGCTL -j stats)
json_ok <<< "$out" && ok "stats -j is JSON" || not_ok "stats -j: $(flat "$out")"

# monitor: added, changed, removed, config events, in order
mon=$(mktemp)
$AGGCTL monitor > "$mon" 2>&1 &
mpid=$!
sleep 1
$AGGCTL job add id 9 ps 10.1.0.1:47000 worker 10.1.0.5:5000
$AGGCTL job change id 9 quota 5
$AGGCTL policy set atp
$AGGCTL job del id 9
sleep 1
kill $mpid
wait $mpid 2> /dev/null
same "monitor events" "$(awk '{ print $1, $2, $3 }' "$mon")" \
"job-added job 9
job-changed job 9
config policy atp
job-removed job 9"
jmon=$(mktemp)
$AGGCTL -j monitor > "$jmon" 2>&1 &
mpid=$!
sleep 1
$AGGCTL policy set esa
sleep 1
kill $mpid
wait $mpid 2> /dev/null
grep -q '^{"event":"config","policy":"esa"' "$jmon" && ok "monitor -j" ||
	not_ok "monitor -j: $(flat "$(cat "$jmon")")"
rm -f "$mon" "$jmon"

expect "job del" 0 '^$' $AGGCTL job del id 7
expect "job delete (long form)" 0 '^$' $AGGCTL job delete id 8
expect "no jobs left" 0 '^$' $AGGCTL job show
expect "job show -j with no jobs" 0 '^\[\]$' $AGGCTL -j job show
reset_module
tap_done