#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A capacity the kernel cannot allocate: aggctl switch attach ... capacity
# 1048576 (1 << 20 aggregators, ~1.6 GB of kernel memory) in a memory
# cgroup limited to 256 MB, which the aggregator map is charged to. The
# load fails with a message naming the array and its size, loads and pins
# nothing, and exits 1 (not a crash). In the VM (its root mounts cgroup2;
# the host's cgroups are not ours to change).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh	# namespaces and veth links, cleanup at exit
CG_ROOT=/sys/fs/cgroup
CG=$CG_ROOT/esa-nomem-$$
NS=$(ns sw)		# the switch's namespace, with the pair p0/p1
PIN=/sys/fs/bpf/esa-nomem-$$

if [ "$(stat -fc %T $CG_ROOT 2>/dev/null)" != cgroup2fs ] ||
   ! grep -qw memory $CG_ROOT/cgroup.controllers 2>/dev/null; then
	skip "capacity beyond the memory at hand" "needs cgroup2 with the memory controller at $CG_ROOT (the VM)"
	tap_done
fi
cleanup() {
	rm -rf "$PIN"
	rmdir "$CG" 2> /dev/null
}
cleanup_add cleanup
grep -qw memory $CG_ROOT/cgroup.subtree_control ||
	echo +memory > $CG_ROOT/cgroup.subtree_control || bail "cannot enable the memory controller"
mkdir "$CG" && echo 256M > "$CG/memory.max" || bail "cannot make a memory cgroup of 256 MB"
ns_add sw || bail "ip netns add"
veth_add sw p0 sw p1 || bail "a veth pair in $NS"
gen_before=$($AGGCTL -j switch show 2>&1 | grep -o '"dp_generation": *[0-9]*')

# a subshell moved into the cgroup runs aggctl (the map is charged there)
expect "capacity 1 << 20 in 256 MB: cannot allocate, named" 1 \
	'switch attach: loading the XDP data plane: cannot allocate 1048576 aggregators \([0-9]+ MiB of kernel memory\): Cannot allocate memory' \
	bash -c 'echo $BASHPID > "$1/cgroup.procs" && exec ip netns exec "$2" "$3" -d "$4" switch attach dev p0 capacity 1048576' \
	_ "$CG" "$NS" "$AGGCTL" "$PIN"
if [ -e "$PIN" ] && [ -n "$(ls -A "$PIN")" ]; then
	not_ok "nothing pinned after the failed load: $(ls "$PIN" | tr '\n' ' ')"
else
	ok "nothing pinned after the failed load"
fi
if ip -n "$NS" link show p0 | grep -q xdp; then
	not_ok "no XDP program on the port after the failed load"
else
	ok "no XDP program on the port after the failed load"
fi
same "the module's data plane generation is back as it was" \
	"$($AGGCTL -j switch show 2>&1 | grep -o '"dp_generation": *[0-9]*')" "$gen_before"
tap_done
