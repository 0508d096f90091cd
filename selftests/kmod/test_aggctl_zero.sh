#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# aggctl's values at their 0 edge (this host, module-less switch): 0 is
# a value where the grammar allows it (priority 0 is a fixed priority,
# quota 0 is "no quota", timeout 0 is "never reclaim"), set by add and
# by change over a non-zero value, and refused with the range where it
# is not (slots, fan-in, job id, capacity); and the empty word, which no
# keyword matches. A 0 taken for "not given" passes every test that sets
# only non-zero values.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh	# namespaces and veth links, cleanup at exit
need_no_module "aggctl zero values"
need_root "aggctl zero values"
PIN=/sys/fs/bpf/esa-zero-$$
A="$AGGCTL -d $PIN"
P0=$(ifname p0)
cleanup() {
	$A switch detach dev $P0 > /dev/null 2>&1
	$A switch unload > /dev/null 2>&1
	rm -rf "$PIN"
}
stub_ports_add p0 || bail "switch port"
cleanup_add cleanup

expect "switch attach" 0 '^$' $A switch attach dev $P0 capacity 16
expect "switch set slots 16" 0 '^$' $A switch set slots 16 timeout 700

# 0 where it is a value
expect "job add priority 0 quota 0" 0 '^$' \
	$A job add id 1 ps 10.9.0.1:47000 worker 10.9.0.2:5000 priority 0 quota 0
expect "priority 0 is a fixed priority, quota 0 no quota" 0 \
	'^job 1 fan-in 1 prio-mode fixed priority 0 quota 0 ' $A job show id 1
expect "job change priority 9 quota 7" 0 '^$' $A job change id 1 priority 9 quota 7
expect "... shows" 0 '^job 1 fan-in 1 prio-mode fixed priority 9 quota 7 ' $A job show id 1
expect "job change priority 0 quota 0 over non-zero values" 0 '^$' \
	$A job change id 1 priority 0 quota 0
expect "... shows 0 for both" 0 '^job 1 fan-in 1 prio-mode fixed priority 0 quota 0 ' \
	$A job show id 1
expect "timeout 700 shows" 0 'timeout-us 700 ' $A switch show
expect "switch set timeout 0 over a non-zero timeout" 0 '^$' $A switch set timeout 0
expect "... shows timeout-us 0 (never reclaim)" 0 'slots 16 timeout-us 0 ' $A switch show
expect "switch set slots alone keeps timeout 0" 0 '^$' $A switch set slots 12
expect "... shows" 0 'slots 12 timeout-us 0 ' $A switch show
# static: a job of quota 0 shares what the quotas leave
expect "job add of a quota 0 job" 0 '^$' \
	$A job add id 2 ps 10.9.0.1:47000 worker 10.9.0.3:5000 quota 0
expect "policy set static" 0 '^$' $A policy set static
expect "two quota 0 jobs share the 12 slots" 0 \
	'^job 1 occupancy 0 quota 0 agg-base 0 agg-slice 6$' $A occupancy job 1
expect "... the second half" 0 '^job 2 occupancy 0 quota 0 agg-base 6 agg-slice 6$' \
	$A occupancy job 2
expect "job change quota 4 of job 1" 0 '^$' $A job change id 1 quota 4
expect "... job 2 gets the rest" 0 '^job 2 occupancy 0 quota 0 agg-base 4 agg-slice 8$' \
	$A occupancy job 2
expect "and quota 0 again shares" 0 '^$' $A job change id 1 quota 0
expect "... 6 and 6" 0 '^job 1 occupancy 0 quota 0 agg-base 0 agg-slice 6$' \
	$A occupancy job 1
expect "stats of a job with nothing counted: every counter 0" 0 \
	'^job 1 dataplane: rx 0 aggregated 0 ' $A stats job 1

# 0 where it is no value: refused, the range named, nothing changed
expect "slots 0" 2 "slots: '0' is not a decimal integer in 1\\.\\." $A switch set slots 0
expect "fan-in 0" 2 "fan-in: '0' is not a decimal integer in 1\\.\\.32" \
	$A job add id 3 ps 10.9.0.1:47000 worker 10.9.0.4:5000 fan-in 0
expect "job id 0" 2 "job id: '0' is not a decimal integer in 1\\.\\.1023" \
	$A job change id 0 quota 1
expect "capacity 0" 2 "capacity: '0' is not a decimal integer in 1\\.\\." \
	$A switch attach dev $P0 capacity 0
# an empty word is no keyword: every keyword starts with it
expect "an empty object" 2 'unknown object ""' $A ""
expect "an empty job command" 2 'job: unknown argument ""' $A job ""
expect "an empty switch command" 2 'switch: unknown argument ""' $A switch ""
expect "nothing changed by the refusals" 0 'policy static slots 12 timeout-us 0 ' $A switch show
expect "no job 3" 1 'no such job|No such' $A job show id 3
tap_done
