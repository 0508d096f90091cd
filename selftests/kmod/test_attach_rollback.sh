#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# With the module: a switch attach that cannot bind the module's job
# members to their ports (two jobs, added while no data plane was
# attached, bind one address to two ports) leaves nothing behind: no data
# plane pinned, the module's dp-generation as it was. Once the conflict
# is gone, an attach binds every member (Documentation/security.rst).
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh	# veth links, cleanup at exit
if [ ! -d /sys/module/esa ] || [ "$(id -u)" != 0 ]; then
	skip "attach rollback" "needs root and the esa module"
	tap_done
fi
PIN=/sys/fs/bpf/esa-rollback-$$
A="$AGGCTL -d $PIN"
P=$(ifname p)		# ports P0, P1; their peers P0p, P1p
cleanup() {
	$A switch detach dev ${P}0 dev ${P}1 > /dev/null 2>&1
	$A switch unload > /dev/null 2>&1
	$A job del id 41 > /dev/null 2>&1
	$A job del id 42 > /dev/null 2>&1
	rm -rf "$PIN"
}
for i in 0 1; do
	veth_add root ${P}$i root ${P}${i}p || bail "veth pair $i"
done
cleanup_add cleanup
generation() { $A switch show | grep -o 'dp-generation [0-9]*'; }
before=$(generation)
expect "job 41 binds 10.41.0.9 to ${P}0" 0 '^$' \
	$A job add id 41 ps 10.41.0.1:47000 worker 10.41.0.9:5000 dev ${P}0
expect "job 42 binds 10.41.0.9 to ${P}1 (no data plane to check it)" 0 '^$' \
	$A job add id 42 ps 10.42.0.1:47000 worker 10.41.0.9:5001 dev ${P}1
expect "attach that cannot bind the members fails" 1 'Address already in use' \
	$A switch attach dev ${P}0 dev ${P}1
[ ! -e "$PIN" ] && ok "... and leaves no data plane pinned" ||
	not_ok "... a data plane is left pinned under $PIN"
same "... and the module's dp-generation as it was" "$(generation)" "$before"
expect "job 42 deleted" 0 '^$' $A job del id 42
expect "attach again" 0 '' $A switch attach dev ${P}0 dev ${P}1
# esa_neigh key 10.41.0.9: the member bound to its port (no traffic yet)
expect "... binds job 41's worker" 0 '"bound_job": 41' \
	bpftool -j -p map lookup pinned "$PIN/esa_neigh" key 10 41 0 9
tap_done
