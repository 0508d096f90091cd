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
expect "help" 0 'OBJECT := \{ switch \| job \| policy \| stats \| occupancy \| monitor \| config \}' $A help
expect "-h" 0 '^usage: aggctl' $A -h
expect "help: job add binds members to ports (dev IF)" 0 \
	'job add id ID ps ADDR:PORT \[dev IF\] worker ADDR:PORT \[dev IF\]' $A help
expect "help: job change too" 0 \
	'job change id ID \[ps ADDR:PORT \[dev IF\]\] \[worker ADDR:PORT \[dev IF\]\]' $A help
# The man page's synopsis tags render whole, on one line each.
man=$(groff -man -Tascii -P-cbou -rLL=120n Documentation/aggctl.8 2>&1)
for tag in 'job show \[id ID\]' 'stats \[show\] \[job ID\]' 'occupancy \[show\] \[job ID\]'; do
	if grep -qE "^ *aggctl $tag\$" <<< "$man"; then
		ok "aggctl.8 renders 'aggctl ${tag//\\/}' on one line"
	else
		not_ok "aggctl.8 renders 'aggctl ${tag//\\/}' on one line: $(grep -E -A1 "aggctl ${tag%%\\[*}" <<< "$man" | head -2 | tr -s ' ')"
	fi
done
expect "-V" 0 "^aggctl \\(ESA\\) $(cat VERSION)" $A -V
expect "--version" 0 "^aggctl \\(ESA\\) $(cat VERSION)" $A --version
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
expect "job add id not a number" 2 "job id: 'x' is not a decimal integer in 1..1023" $A job add id x ps 1.2.3.4:5 worker 1.2.3.5:6
expect "job add negative id" 2 "job id: '-1' is not a decimal integer" $A job add id -1 ps 1.2.3.4:5 worker 1.2.3.5:6
expect "job add id value missing" 2 '"id" needs a value' $A job add id
expect "ps without port" 2 "ps: '1.2.3.4' has no port" $A job add id 1 ps 1.2.3.4 worker 1.2.3.5:6
expect "ps bad address" 2 "ps: bad IPv4 address '1.2.3'" $A job add id 1 ps 1.2.3:5 worker 1.2.3.5:6
expect "worker port too big" 2 "worker: bad port in '1.2.3.5:65536': '65536' is not a decimal integer in 1..65535" \
	$A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:65536
expect "priority out of range" 2 "priority \\(or auto\\): '256' is not a decimal integer in 0..255" \
	$A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:6 priority 256
expect "fan-in not a number" 2 "fan-in: 'two' is not a decimal integer" $A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:6 fan-in two
expect "quota not a number" 2 "quota: 'lots' is not a decimal integer" $A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:6 quota lots
expect "unknown job argument" 2 'job: unknown argument "color"' \
	$A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:6 color red
expect "job del takes only id" 2 'job delete takes only "id ID"' $A job del id 1 quota 3
expect "job show bad argument" 2 'job: unknown argument "name"' $A job show name x
args=(); for i in $(seq 1 65); do args+=(worker "10.0.0.$i:5"); done
expect "more workers than the command line takes" 2 'more than 64 workers' \
	$A job add id 1 ps 1.2.3.4:5 "${args[@]}"
# One parser for every number: decimal only, in range, or exit 2 (bad
# input; 1 is for the kernel refusing).
expect "job id 0x10 is no number" 2 "job id: '0x10' is not a decimal integer in 1..1023" \
	$A job add id 0x10 ps 1.2.3.4:5 worker 1.2.3.5:6
expect "job id above 1023 is bad input" 2 "job id: '1024' is not a decimal integer in 1..1023" \
	$A job add id 1024 ps 1.2.3.4:5 worker 1.2.3.5:6
expect "job id 0 is bad input" 2 "job id: '0' is not a decimal integer in 1..1023" $A job del id 0
expect "stats of job 5000 is bad input" 2 "job id: '5000' is not" $A stats job 5000
expect "occupancy of job 0 is bad input" 2 "job id: '0' is not" $A occupancy job 0
expect "port 0x10 is no number" 2 "worker: bad port in '1.2.3.5:0x10': '0x10' is not a decimal integer" \
	$A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:0x10
expect "port 0 is bad input" 2 "ps: bad port in '1.2.3.4:0': '0' is not a decimal integer in 1..65535" \
	$A job add id 1 ps 1.2.3.4:0 worker 1.2.3.5:6
expect "fan-in 33 is bad input" 2 "fan-in: '33' is not a decimal integer in 1..32" \
	$A job add id 1 ps 1.2.3.4:5 worker 1.2.3.5:6 fan-in 33
expect "slots above the array's limit" 2 "slots: '1048577' is not a decimal integer in 1..1048576" \
	$A switch set slots 1048577
# 1 << 20 passes the parser: what stops it here is the missing module
expect "slots 1 << 20 is in range" 3 'switch set: the esa kernel module is not loaded' \
	$A switch set slots 1048576
expect "quota above the array's limit" 2 "quota: '1048577' is not a decimal integer in 0..1048576" \
	$A job add id 1 ps 1.2.3.4:47000 worker 1.2.3.5:6 quota 1048577
expect "quota 1 << 20 is in range" 3 'job add: the esa kernel module is not loaded' \
	$A job add id 1 ps 1.2.3.4:47000 worker 1.2.3.5:6 quota 1048576
expect "timeout above its limit" 2 "timeout \\(us\\): '60000001' is not a decimal integer" \
	$A switch set timeout 60000001
expect "aging below its limit" 2 "aging \\(ms\\): '99' is not a decimal integer in 100..600000" \
	$A switch set aging 99
expect "policy without command" 2 '^usage: aggctl policy show' $A policy
expect "policy set unknown" 2 'invalid policy \(esa, atp or static\) "fifo"' $A policy set fifo
expect "policy set without name" 2 '"set" needs a value' $A policy set
expect "policy show extra" 2 'policy: unknown argument "now"' $A policy show now
expect "switch set nothing" 2 'give slots, timeout or aging' $A switch set
expect "switch set bad slots" 2 "slots: 'many' is not a decimal integer in 1..1048576" $A switch set slots many
expect "switch attach without dev" 2 '"dev IF" is required' $A switch attach
expect "switch attach unknown interface" 1 'no such interface "nosuchif0"' $A switch attach dev nosuchif0
expect "switch attach bad mode" 2 'invalid mode \(native or generic\) "turbo"' $A switch attach dev lo mode turbo
expect "switch attach bad role" 2 'invalid role \(one-armed or per-host\) "sideways"' $A switch attach dev lo role sideways
expect "switch attach bad address" 2 'invalid address \(an IPv4 address A.B.C.D\) "10.0.0"' $A switch attach dev lo role one-armed address 10.0.0
expect "switch attach address of a per-host port" 2 'address is a one-armed port' $A switch attach dev lo address 10.0.0.1
expect "switch bad capacity" 2 "capacity: '0' is not a decimal integer in 1..1048576" $A switch attach dev lo capacity 0
expect "capacity above the array's limit" 2 "capacity: '1048577' is not a decimal integer in 1..1048576" \
	$A switch attach dev lo capacity 1048577
# 1 << 20 passes the parser (given first): the unknown device stops it
expect "capacity 1 << 20 is in range" 1 'no such interface "nosuchif1"' \
	$A switch attach capacity 1048576 dev nosuchif1
expect "stats bad argument" 2 'stats: unknown argument "foo"' $A stats foo
expect "stats job not a number" 2 "job id: 'x' is not a decimal integer" $A stats job x
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
		not_ok "missing module: exit $rc, output: $(flat "$out")"
	fi
	expect "missing module: policy" 3 'not loaded' $A policy show
	expect "missing module: occupancy" 3 'not loaded' $A occupancy
	expect "missing module: monitor" 3 'not loaded' $A monitor
	expect "switch show without anything" 0 '^module no dataplane no$' $A switch show
	expect "switch show -j" 0 '^\{"module":false,"dataplane":false\}$' $A -j switch show
fi
tap_done