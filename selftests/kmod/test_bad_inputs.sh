#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every rejected request gets its own error, its extack text and the
# attribute it blames (or the one missing), and leaves the module's state
# exactly as it was. Requests go through aggctl where it can express them
# and through genl_raw (hand-built netlink) where it cannot: wrong types,
# unknown and read-only attributes, malformed nests, and the numbers out of
# range that aggctl already refuses as bad input (exit 2).
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
need_module
reset_module

$AGGCTL job add id 1 ps 10.2.0.1:47000 worker 10.2.0.2:5000 worker 10.2.0.3:5000 priority 5
$AGGCTL job add id 2 ps 10.2.0.1:47000 worker 10.2.0.4:5000 quota 100
before=$(state)

# bad DESC RC REGEX CMD...: rejected as described, state unchanged.
bad() {
	expect "$@"
	same "$1: state unchanged" "$(state)" "$before"
}

W="worker 10.2.0.9:5000"
P="ps 10.2.0.1:47000"
# Ranges aggctl refuses itself (exit 2) reach the kernel through genl_raw.
RAW_W=('workers:nest{' 'worker:nest{' addr:ip:10.2.0.9 port:be16:5000 '}' '}')
RAW_JOB=(ps-addr:ip:10.2.0.1 ps-port:be16:47000 "${RAW_W[@]}")
bad "duplicate job" 1 'File exists: job already exists \(attribute job-id\)' \
	$AGGCTL job add id 1 $P $W
bad "job id 0" 1 'msg=.*out of range attr=job-id' $RAW job-add job-id:u32:0 "${RAW_JOB[@]}"
bad "job id 1024" 1 'msg=.*out of range attr=job-id' $RAW job-add job-id:u32:1024 "${RAW_JOB[@]}"
bad "unknown job change" 1 'No such file or directory: no such job \(attribute job-id\)' \
	$AGGCTL job change id 3 priority 1
bad "unknown job del" 1 'no such job \(attribute job-id\)' $AGGCTL job del id 3
bad "unknown job show" 1 'no such job \(attribute job-id\)' $AGGCTL job show id 3
bad "unknown job stats" 1 'no such job \(attribute job-id\)' $AGGCTL stats job 3
bad "unknown job occupancy" 1 'no such job \(attribute job-id\)' $AGGCTL occupancy job 3
bad "fan-in differs from workers" 1 'fan-in differs from the number of workers \(attribute fan-in\)' \
	$AGGCTL job add id 3 $P $W fan-in 2
bad "fan-in 0" 1 'msg=.*out of range attr=fan-in' $RAW job-add job-id:u32:3 "${RAW_JOB[@]}" fan-in:u8:0
bad "fan-in 33" 1 'msg=.*out of range attr=fan-in' $RAW job-add job-id:u32:3 "${RAW_JOB[@]}" fan-in:u8:33
bad "duplicate worker" 1 'duplicate worker address and port \(attribute workers/worker\[1\]\)' \
	$AGGCTL job add id 3 $P $W $W
bad "PS address 0.0.0.0" 1 'PS address is not a unicast IPv4 address \(attribute ps-addr\)' \
	$AGGCTL job add id 3 ps 0.0.0.0:47000 $W
bad "PS address multicast" 1 'PS address is not a unicast IPv4 address \(attribute ps-addr\)' \
	$AGGCTL job add id 3 ps 224.0.0.1:47000 $W
bad "PS port 0" 1 'msg=PS port is 0 attr=ps-port' $RAW job-add job-id:u32:3 ps-addr:ip:10.2.0.1 ps-port:be16:0 "${RAW_W[@]}"
bad "PS port other than 47000" 1 'PS port is not 47000: the switch takes only aggregation packets to that port, a PS elsewhere is bypassed \(attribute ps-port\)' \
	$AGGCTL job add id 3 ps 10.2.0.1:47001 $W
bad "worker address broadcast" 1 'worker address is not a unicast IPv4 address \(attribute workers/worker\[0\]/addr\)' \
	$AGGCTL job add id 3 $P worker 255.255.255.255:5000
bad "worker port 0" 1 'msg=worker port is 0 attr=port' \
	$RAW job-add job-id:u32:3 ps-addr:ip:10.2.0.1 ps-port:be16:47000 \
	'workers:nest{' 'worker:nest{' addr:ip:10.2.0.9 port:be16:0 '}' '}'
bad "quota above 1 << 20" 1 'msg=.*out of range attr=quota' $RAW job-add job-id:u32:3 "${RAW_JOB[@]}" quota:u32:1048577
bad "change with nothing to change" 1 'nothing to change for this job \(attribute job-id\)' \
	$AGGCTL job change id 1
bad "slots 0" 1 'msg=.*out of range attr=agg-slots' $RAW config-set agg-slots:u32:0
bad "slots 1 << 20 + 1" 1 'msg=.*out of range attr=agg-slots' $RAW config-set agg-slots:u32:1048577
bad "timeout above 60 s" 1 'msg=.*out of range attr=agg-timeout-us' $RAW config-set agg-timeout-us:u32:60000001
bad "aging 99" 1 'msg=.*out of range attr=aging-ms' $RAW config-set aging-ms:u32:99

# The largest counts the policy takes, ESA_MAX_AGGREGATORS (1 << 20): the
# module keeps no per-aggregator state, so they cost it nothing.
expect "slots 1 << 20 accepted" 0 '' $AGGCTL switch set slots 1048576
expect "slots 1 << 20 kept" 0 '1048576' $AGGCTL -j switch show
expect "quota 1 << 20 accepted" 0 '' $AGGCTL job change id 2 quota 1048576
expect "quota 1 << 20 kept" 0 '"quota": ?1048576' $AGGCTL -j job show id 2

# static: the quotas must fit: job 2 asks 149 of 150 slots, job 1 needs one
$AGGCTL switch set slots 150
before=$(state)
$AGGCTL job change id 2 quota 149
$AGGCTL policy set static
before=$(state)
bad "static: job add without room" 1 'exceed agg_slots \(attribute job-id\)' \
	$AGGCTL job add id 3 $P $W
bad "static: job add quota without room" 1 'exceed agg_slots \(attribute quota\)' \
	$AGGCTL job add id 3 $P $W quota 2
bad "static: quota change without room" 1 'exceed agg_slots \(attribute quota\)' \
	$AGGCTL job change id 2 quota 150
bad "static: shrinking slots below the quotas" 1 'exceed agg_slots \(attribute agg-slots\)' \
	$AGGCTL switch set slots 149
$AGGCTL policy set esa
$AGGCTL job change id 2 quota 150
before=$(state)
bad "policy static when quotas exceed slots" 1 'exceed agg_slots \(attribute policy\)' \
	$AGGCTL policy set static

# hand-built requests
bad "wrong type: job-id as u8" 1 'error EINVAL msg=.*attr=job-id' \
	$RAW job-del job-id:u8:1
bad "wrong type: ps-addr as u16" 1 'error EINVAL msg=.*attr=ps-addr' \
	$RAW job-change job-id:u32:1 ps-addr:u16:5
bad "unknown attribute type" 1 'error EINVAL msg=Unknown attribute type attr=200' \
	$RAW job-del job-id:u32:1 200:u32:1
bad "read-only attribute in a request" 1 'error EINVAL msg=Unsupported attribute attr=state' \
	$RAW job-change job-id:u32:1 state:u8:1
bad "attribute of another command" 1 'error EINVAL msg=Unsupported attribute attr=policy' \
	$RAW job-del job-id:u32:1 policy:u32:1
bad "missing job id" 1 'error EINVAL msg=job delete needs the job id attr= miss=2$' \
	$RAW job-del
bad "job add without workers" 1 'error EINVAL msg=job add needs .* miss=9$' \
	$RAW job-add job-id:u32:3 ps-addr:ip:10.2.0.1 ps-port:be16:47000
bad "empty workers nest" 1 'error EINVAL msg=job has no workers attr=workers miss=1$' \
	$RAW job-add job-id:u32:3 ps-addr:ip:10.2.0.1 ps-port:be16:47000 'workers:nest{' '}'
bad "worker without port" 1 'error EINVAL msg=worker has no port attr=worker miss=2$' \
	$RAW job-add job-id:u32:3 ps-addr:ip:10.2.0.1 ps-port:be16:47000 \
	'workers:nest{' 'worker:nest{' addr:ip:10.2.0.9 '}' '}'
bad "worker without address" 1 'error EINVAL msg=worker has no address attr=worker miss=1$' \
	$RAW job-add job-id:u32:3 ps-addr:ip:10.2.0.1 ps-port:be16:47000 \
	'workers:nest{' 'worker:nest{' port:be16:5000 '}' '}'
bad "unknown attribute in a worker" 1 'error EINVAL msg=Unknown attribute type attr=7' \
	$RAW job-add job-id:u32:3 ps-addr:ip:10.2.0.1 ps-port:be16:47000 \
	'workers:nest{' 'worker:nest{' addr:ip:10.2.0.9 port:be16:5000 7:u32:1 '}' '}'
args=()
for i in $(seq 1 33); do args+=('worker:nest{' "addr:ip:10.3.0.$i" port:be16:5000 '}'); done
bad "33 workers" 1 'error E2BIG msg=more workers than ESA_MAX_WORKERS \(32\) attr=worker' \
	$RAW job-add job-id:u32:3 ps-addr:ip:10.2.0.1 ps-port:be16:47000 'workers:nest{' "${args[@]}" '}'
bad "fixed and auto priority together" 1 'error EINVAL msg=a fixed priority and auto priority exclude each other attr=prio-auto' \
	$RAW job-change job-id:u32:1 priority:u8:3 prio-auto:flag
bad "fan-in change without workers" 1 'error EINVAL msg=fan-in needs the workers list attr=fan-in miss=9$' \
	$RAW job-change job-id:u32:1 fan-in:u8:1
bad "policy 3" 1 'error ERANGE msg=.*out of range attr=policy' $RAW policy-set policy:u32:3
bad "policy set without a policy" 1 'error EINVAL msg=policy set needs the policy attr= miss=21$' \
	$RAW policy-set
bad "config set with nothing" 1 'error EINVAL msg=nothing to set.* miss=18$' $RAW config-set

# callers without CAP_NET_ADMIN: every change refused, and every read
# of a job's members (job records, the events); counters and settings read
np() { capsh --drop=cap_net_admin -- -c "$*"; }
bad "non-admin job add" 1 'Operation not permitted' np $AGGCTL job add id 3 $P $W
bad "non-admin job change" 1 'Operation not permitted' np $AGGCTL job change id 1 priority 9
bad "non-admin job del" 1 'Operation not permitted' np $AGGCTL job del id 1
bad "non-admin policy set" 1 'Operation not permitted' np $AGGCTL policy set atp
bad "non-admin switch set" 1 'Operation not permitted' np $AGGCTL switch set slots 10
bad "non-admin job show" 1 'Operation not permitted' np $AGGCTL job show
bad "non-admin job show id" 1 'Operation not permitted' np $AGGCTL job show id 1
bad "non-admin monitor" 1 'Operation not permitted' np timeout 5 $AGGCTL monitor
expect "non-admin may read stats" 0 '^job all module' np $AGGCTL stats

reset_module
tap_done