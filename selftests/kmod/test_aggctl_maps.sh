#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# aggctl without the esa module (this host): switch attach loads the
# module-less data plane and pins it; job, policy and switch set then work
# on its maps through the loader (tools/lib/dp), which judges and lays out
# jobs by the module's rules (lib/esa_rules.c): the records and refusals
# below are the module's (selftests/kmod/test_aggctl.sh,
# test_bad_inputs.sh); what needs the module says so.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh	# namespaces and veth links, cleanup at exit
need_no_module "module-less aggctl"
need_root "module-less aggctl"
PIN=/sys/fs/bpf/esa-aggctl-$$
A="$AGGCTL -d $PIN"
P0=$(ifname p0)
P1=$(ifname p1)
cleanup() {
	$A switch detach dev $P0 dev $P1 > /dev/null 2>&1
	$A switch unload > /dev/null 2>&1
	rm -rf "$PIN"
}
stub_ports_add p0 p1 || bail "switch ports"
cleanup_add cleanup

expect "job show without a switch: hint, exit 3" 3 'not loaded' $A job show
expect "switch attach (module-less flavour)" 0 '^$' $A switch attach dev $P0 dev $P1 capacity 128
expect "switch show" 0 "^module no dataplane yes flavour maps policy esa slots 128 timeout-us 100000 ports $P0 $P1|^module no dataplane yes flavour maps policy esa slots 128 timeout-us 100000 ports $P1 $P0" \
	$A switch show
expect "switch attach again is harmless" 0 '^$' $A switch attach dev $P0
P2=$(ifname p2)
stub_ports_add p2 || bail "port p2"
if foreign_xdp_add $P2; then
	expect "switch attach over another XDP program is refused" 1 'runs another XDP program [0-9]+ \(xdp_pass\), not ESA.s; left alone \(remove it first if it is not needed: ip link set dev '$P2' xdp off\)' \
		$A switch attach dev $P2
else
	not_ok "switch attach over another XDP program: cannot attach xdp_pass to $P2"
fi
ip link del $P2
expect "job add" 0 '^$' $A job add id 4 ps 10.6.0.1:47000 worker 10.6.0.2:5000 worker 10.6.0.3:5000 priority 9 quota 16
expect "job add second" 0 '^$' $A job add id 6 ps 10.6.0.1:47000 worker 10.6.0.4:5000 quota 8
expect "job show" 0 '^job 4 fan-in 2 prio-mode fixed priority 9 quota 16 agg-base 0 agg-slice 0 token no ps 10.6.0.1:47000 dev - [(]first sight[)] worker 10.6.0.2:5000 dev - [(]first sight[)] worker 10.6.0.3:5000 dev - [(]first sight[)]$' \
	$A job show id 4
expect "priority omitted is auto, as with the module" 0 '^job 6 fan-in 1 prio-mode auto quota 8 agg-base 0 agg-slice 0 ' \
	$A job show id 6
out=$($A -j job show)
json_ok <<< "$out" && ok "job show -j is JSON" || not_ok "job show -j: $(flat "$out")"
expect "duplicate job" 1 'File exists: job already exists' $A job add id 4 ps 10.6.0.1:47000 worker 10.6.0.2:5000
expect "priority auto is accepted" 0 '^$' \
	$A job add id 5 ps 10.6.0.1:47000 worker 10.6.0.2:5000 priority auto
expect "priority auto shows" 0 '^job 5 fan-in 1 prio-mode auto ' $A job show id 5
expect "job del of the auto job" 0 '^$' $A job del id 5
expect "the same worker twice is refused, as by the module" 1 \
	'^aggctl: job add: Invalid argument: duplicate worker address and port$' \
	$A job add id 5 ps 10.6.0.1:47000 worker 10.6.0.2:5000 worker 10.6.0.2:5000
expect "PS port 0 is bad input" 2 "ps: bad port in '10.6.0.1:0': '0' is not a decimal integer in 1..65535" \
	$A job add id 5 ps 10.6.0.1:0 worker 10.6.0.2:5000
expect "a multicast worker is refused, as by the module" 1 \
	'worker address is not a unicast IPv4 address$' \
	$A job add id 5 ps 10.6.0.1:47000 worker 224.0.0.9:5000
expect "a PS port other than 47000 is refused: the switch would bypass it" 1 \
	'PS port is not 47000: the switch takes only aggregation packets to that port, a PS elsewhere is bypassed$' \
	$A job add id 5 ps 10.6.0.1:47001 worker 10.6.0.2:5000
expect "fan-in mismatch" 1 'fan-in differs from the number of workers' \
	$A job add id 5 ps 10.6.0.1:47000 worker 10.6.0.2:5000 fan-in 2
expect "job id out of range is bad input" 2 "job id: '1024' is not a decimal integer in 1..1023" \
	$A job add id 1024 ps 10.6.0.1:47000 worker 10.6.0.2:5000
expect "job id 010 is ten, never eight" 0 '^$' $A job add id 010 ps 10.6.0.1:47000 worker 10.6.0.7:047001
expect "job 10 with port 47001" 0 '^job 10 .*worker 10.6.0.7:47001 dev ' $A job show id 10
expect "no job 8" 1 'no such job' $A job show id 8
expect "job del 10" 0 '^$' $A job del id 10
expect "job change" 0 '^$' $A job change id 4 priority 77 quota 20
expect "job change shows" 0 '^job 4 .*priority 77 quota 20 agg-base 0 agg-slice 0 ' $A job show id 4
expect "unknown job change" 1 'No such file or directory: no such job' $A job change id 5 priority 1
expect "policy set static" 0 '^$' $A policy set static
expect "policy show" 0 '^policy static$' $A policy show
expect "static: slices laid out in id order" 0 '^job 6 .*quota 8 agg-base 20 agg-slice 8 ' $A job show id 6
expect "static: quotas over slots refused" 1 \
	'No space left on device: static policy: the quotas \(plus one slot per job without a quota\) exceed agg_slots$' \
	$A switch set slots 20
expect "switch set" 0 '^$' $A switch set slots 100 timeout 5000
expect "switch set aging needs the module, the module-less switch has none" 1 \
	'aging .* needs the esa kernel module \(insmod build/kmod/\$\(uname -r\)/esa.ko\); the module-less data plane under '"$PIN"' has none' \
	$A switch set aging 500
expect "monitor needs the module, the module-less switch has none" 1 \
	'monitor: the event channel needs the esa kernel module .*; the module-less data plane under '"$PIN"' has none' \
	$A monitor
expect "switch show after set" 0 'policy static slots 100 timeout-us 5000' $A switch show
expect "static: a job without a quota shares what the quotas leave" 0 '^$' \
	$A job add id 7 ps 10.6.0.1:47000 worker 10.6.0.5:5000
expect "static: its slice is the rest of the slots" 0 '^job 7 .*quota 0 agg-base 28 agg-slice 72 ' \
	$A job show id 7
expect "static: the job without a quota" 0 '^$' $A job del id 7
expect "timeout 0 (no reclaim) is accepted" 0 '^$' $A switch set timeout 0
expect "timeout 0 shows" 0 'timeout-us 0 ' $A switch show
expect "timeout above 60 s is bad input" 2 "timeout \\(us\\): '60000001' is not a decimal integer in 0..60000000" \
	$A switch set timeout 60000001
$A switch set timeout 5000
expect "stats from the data plane" 0 '^job all dataplane: rx 0 ' $A stats
expect "stats of a job" 0 '^job 4 dataplane: rx 0 ' $A stats job 4
out=$($A stats)
[ "$(grep -c '^job [46] dataplane: rx 0 ' <<< "$out")" = 2 ] &&
	ok "stats: the totals, then a record per job" ||
	nok "stats: the totals, then a record per job: $(flat "$out")"
expect "stats of a job that is not there" 1 'stats: no such job 5' $A stats job 5
expect "stats -j: an array of records, as with the module" 0 '^\[\{"job":"all","dataplane":\{.*\},\{"job":4,.*\},\{"job":6,' \
	$A -j stats
expect "occupancy from the aggregator array" 0 '^job all occupancy 0 slots 100$' $A occupancy
expect "occupancy of a job" 0 '^job 4 occupancy 0 quota 20 agg-base 0 agg-slice 20$' $A occupancy job 4
expect "occupancy of an unknown job" 1 'occupancy: No such file or directory: no such job' $A occupancy job 5
# Without root the pins cannot be read: say so, not "no data plane".
if command -v setpriv > /dev/null; then
	NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	expect "non-root: switch show says permission denied" 1 \
		"switch show: the data plane under $PIN: Permission denied \\(reaching it takes root" \
		"${NOBODY[@]}" $A switch show
	expect "non-root: job show says permission denied" 1 \
		"job show: the data plane under $PIN: Permission denied" "${NOBODY[@]}" $A job show
	expect "non-root: stats says permission denied" 1 \
		"stats: the data plane under $PIN: Permission denied" "${NOBODY[@]}" $A stats
else
	skip "non-root messages" "no setpriv"
fi
expect "job del" 0 '^$' $A job del id 4
expect "job del unknown" 1 'no such job' $A job del id 4
expect "job show after del: the slices follow" 0 '^job 6 .*agg-base 0 agg-slice 8 ' $A job show
expect "unload refused with ports attached" 1 '2 port\(s\) still attached' $A switch unload
expect "switch detach" 0 '^$' $A switch detach dev $P0 dev $P1
expect "switch unload" 0 '^$' $A switch unload
expect "nothing pinned any more" 0 '^module no dataplane no$' $A switch show

# A fresh machine may have no bpffs on /sys/fs/bpf: attach mounts one, as
# bpftool does. Shown in a private mount namespace with it unmounted.
out=$(unshare -m bash -c "
	while mountpoint -q /sys/fs/bpf; do umount /sys/fs/bpf || exit 9; done
	$A switch attach dev $P0 && stat -f -c %T /sys/fs/bpf &&
	$A switch detach dev $P0 && $A switch unload" 2>&1)
[ "$out" = bpf_fs ] && ok "switch attach mounts a missing bpffs on /sys/fs/bpf" ||
	not_ok "switch attach mounts a missing bpffs on /sys/fs/bpf: $(flat "$out")"
tap_done