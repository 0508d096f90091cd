#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# aggctl's command line on this host, no module needed: usage errors exit
# 2 with a message naming the problem, help exits 0, and a missing module
# gives exit 3 and a one-line hint.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
[ -x "$AGGCTL" ] || { echo "not ok 1 - $AGGCTL not built"; exit 1; }
# An empty pin directory: no module-less switch to fall back to.
PIN=/tmp/aggctl-usage-$$
A="$AGGCTL -d $PIN"

expect "no arguments" 2 '^usage: aggctl' $A
expect "help" 0 'OBJECT := \{ switch \| job \| policy \| stats \| occupancy \| monitor \}' $A help
expect "-h" 0 '^usage: aggctl' $A -h
expect "unknown option" 2 'unknown option "-x"' $A -x job show
expect "-d without a value" 2 '"-d" needs a value' $AGGCTL -d
expect "unknown object" 2 'unknown object "frobnicate"' $A frobnicate
expect "job without command" 2 '^usage: aggctl job add' $A job
expect "job help" 0 '^usage: aggctl job add' $A job help
expect "job unknown command" 2 'job: unknown argument "frob"' $A job frob
expect "job add without id" 2 '"id ID" is required' $A job add ps 1.2.3.4:5 worker 1.2.3.5:6
expect "job add without ps" 2 '"ps ADDR:PORT" and at least one "worker ADDR:PORT" are required' \
	$A job add id 1 worker 1.2.3.5:6
expect "job add without workers" 2 'are required' $A job add id 1 ps 1.2.3.4:5
expect "job add id not a number" 2 'invalid job id "x"' $A job add id x ps 1.2.3.4:5 worker 1.2.3.5:6
expect "job add negative id" 2 'invalid job id "-1"' $A job add id -1 ps 1.2.3.4:5 worker 1.2.3.5:6
expect "job add id value missing" 2 '"id" needs a value' $A job add id
expect "ps without port" 2 'invalid PS ADDR:PORT "1.2.3.4"' $A job add id 1 ps 1.2.3.4 worker 1.2.3.5:6
expect "ps bad address" 2 'invalid PS ADDR:PORT "1.2.3:5"' $A job add id 1 ps 1.2.3:5 worker 1.2.3.5:6
expect "worker port too big" 2 'invalid worker ADDR:PORT "1.2.3.5:65536"' \
	$A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:65536
expect "priority out of range" 2 'invalid priority \(0..255 or auto\) "256"' \
	$A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:6 priority 256
expect "fan-in not a number" 2 'invalid fan-in' $A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:6 fan-in two
expect "quota not a number" 2 'invalid quota "lots"' $A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:6 quota lots
expect "unknown job argument" 2 'job: unknown argument "color"' \
	$A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:6 color red
expect "job del takes only id" 2 'job delete takes only "id ID"' $A job del id 1 quota 3
expect "job show bad argument" 2 'job: unknown argument "name"' $A job show name x
args=(); for i in $(seq 1 65); do args+=(worker "10.0.0.$i:5"); done
expect "more workers than the command line takes" 2 'more than 64 workers' \
	$A job add id 1 ps 1.2.3.4:5 "${args[@]}"
expect "policy without command" 2 '^usage: aggctl policy show' $A policy
expect "policy set unknown" 2 'invalid policy \(esa, atp or static\) "fifo"' $A policy set fifo
expect "policy set without name" 2 '"set" needs a value' $A policy set
expect "policy show extra" 2 'policy: unknown argument "now"' $A policy show now
expect "switch set nothing" 2 'give slots, timeout or aging' $A switch set
expect "switch set bad slots" 2 'invalid slots "many"' $A switch set slots many
expect "switch attach without dev" 2 '"dev IF" is required' $A switch attach
expect "switch attach unknown interface" 1 'no such interface "nosuchif0"' $A switch attach dev nosuchif0
expect "switch attach bad mode" 2 'invalid mode \(native or generic\) "turbo"' $A switch attach dev lo mode turbo
expect "switch bad capacity" 2 'invalid capacity' $A switch attach dev lo capacity 0
expect "stats bad argument" 2 'stats: unknown argument "foo"' $A stats foo
expect "stats job not a number" 2 'invalid job id "x"' $A stats job x
expect "occupancy bad argument" 2 'occupancy: unknown argument "bar"' $A occupancy bar
expect "monitor extra argument" 2 'monitor: unknown argument "now"' $A monitor now

if grep -q '^esa ' /proc/modules 2> /dev/null; then
	skip "missing module hint" "the esa module is loaded here"
else
	out=$($A job show 2>&1); rc=$?
	if [ $rc = 3 ] && [ "$(wc -l <<< "$out")" = 1 ] &&
	   grep -q 'the esa kernel module is not loaded' <<< "$out"; then
		ok "missing module: exit 3, one-line hint"
	else
		nok "missing module: exit $rc, output: $(flat "$out")"
	fi
	expect "missing module: policy" 3 'not loaded' $A policy show
	expect "missing module: occupancy" 3 'not loaded' $A occupancy
	expect "missing module: monitor" 3 'not loaded' $A monitor
	expect "switch show without anything" 0 '^module no dataplane no$' $A switch show
	expect "switch show -j" 0 '^\{"module":false,"dataplane":false\}$' $A -j switch show
fi
finish
