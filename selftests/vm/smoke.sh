#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# VM smoke test of the kernel toolchain (runs in the Debian 6.1 VM, root):
# the esa_smoke module (built by selftests/vm/Makefile, BTF by
# scripts/mod-btf.sh) loads and exposes its BTF and genl family; an XDP
# program calling its kfunc loads and runs on a veth port while a host in
# a namespace pings through it; the kfunc count seen over netlink rises;
# the program pins the module; after detach the module unloads cleanly.
# A copy without BTF must be refused at load. Prints TAP.
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
. "$ROOT/selftests/lib/topo.sh"
. "$ROOT/selftests/lib/bpftool.sh"

B=$ROOT/build/vm
SMOKE=$B/$(uname -r)/smoke	# built for this kernel (selftests/vm/Makefile)
KO=$SMOKE/esa_smoke.ko
GENL=$B/smoke_genl
OBJ=$B/smoke_kfunc.bpf.o
for f in "$KO" "$SMOKE/esa_smoke.nobtf.ko" "$SMOKE/esa_smoke.noids.ko" \
	 "$GENL" "$OBJ"; do
	[ -f "$f" ] || bail "missing $f (run make)"
done
[ -d /sys/module/esa_smoke ] && bail "esa_smoke is already loaded"
cleanup_add rmmod esa_smoke

# Modules from a broken BTF pipeline must not load (6.1 would otherwise
# load them with no kfunc). The kernel logs the refusals on purpose here.
refused() { # desc module expected-log-text
	echo "esa-vm-allow-begin: cannot register" > /dev/kmsg
	check_fails "$1 is refused" insmod "$2"
	echo "esa-vm-allow-end" > /dev/kmsg
	if dmesg | tail -n 20 | grep -qF "esa_smoke: cannot register the XDP kfunc: $3"; then
		ok "$1: refusal explained in the kernel log"
	else
		not_ok "$1: refusal explained in the kernel log"
	fi
}
refused "module without BTF" "$SMOKE/esa_smoke.nobtf.ko" "the module has no BTF"
refused "module with unresolved .BTF_ids" "$SMOKE/esa_smoke.noids.ko" ".BTF_ids unresolved"

check "insmod esa_smoke.ko" insmod "$KO" || tap_done
if [ -e /sys/kernel/btf/esa_smoke ]; then
	ok "/sys/kernel/btf/esa_smoke exists"
else
	not_ok "/sys/kernel/btf/esa_smoke exists"
fi
if bpftool btf dump file /sys/kernel/btf/esa_smoke 2>/dev/null |
		grep -q "FUNC 'esa_smoke_count'"; then
	ok "module BTF describes esa_smoke_count"
else
	not_ok "module BTF describes esa_smoke_count"
fi

calls0=$("$GENL" calls)
if [ "$calls0" = 0 ]; then
	ok "genl GET: no kfunc calls yet"
else
	not_ok "genl GET: no kfunc calls yet (got '${calls0}')"
fi
check "genl GET with a forbidden attribute is rejected" "$GENL" bad-attr

switch_add root
host_add h1 198.18.1.1/24 || bail "create host h1"
P=$(port h1)
ip addr add 198.18.1.254/24 dev "$P" || bail "address on $P"

PROG=$(pin_path smoke)
MAPS=$(pin_path smokemaps)
check "XDP program calling the kfunc loads" \
	bpftool prog load "$OBJ" "$PROG" type xdp pinmaps "$MAPS" || tap_done
check "attach native XDP to $P" bpftool net attach xdpdrv pinned "$PROG" dev "$P" ||
	tap_done
ip -d link show dev "$P" | grep -q 'prog/xdp id' &&
	ok "$P runs the program in native mode" ||
	not_ok "$P runs the program in native mode"

check "ping from h1 crosses the XDP port" in_ns h1 ping -c 5 -i 0.2 -W 2 198.18.1.254

# Map first: later packets can only raise the module's count.
last=$(map_u64 "$MAPS/smoke_last" 0)
calls1=$("$GENL" calls)
diag "kfunc calls: genl $calls0 -> $calls1, last value the program saw: $last"
if [ -n "$calls1" ] && [ "$calls1" -ge $((calls0 + 5)) ]; then
	ok "kfunc count rose with the traffic"
else
	not_ok "kfunc count rose with the traffic (${calls0:-?} -> ${calls1:-?})"
fi
if [ -n "$last" ] && [ "$last" -ge 5 ] && [ "$last" -le "$calls1" ]; then
	ok "program saw the module's count ($last)"
else
	not_ok "program saw the module's count (${last:-?} vs ${calls1:-?})"
fi

check_fails "rmmod esa_smoke fails while the program is attached" rmmod esa_smoke

check "detach XDP" bpftool net detach xdpdrv dev "$P"
rm -rf "$PROG" "$MAPS"
# The program is freed after an RCU grace period: allow a moment.
for _ in $(seq 50); do
	rmmod esa_smoke 2>/dev/null && break
	sleep 0.1
done
if [ ! -d /sys/module/esa_smoke ]; then
	ok "esa_smoke unloads after detach"
else
	not_ok "esa_smoke unloads after detach ($(rmmod esa_smoke 2>&1))"
fi
[ ! -e /sys/kernel/btf/esa_smoke ] && ok "module BTF gone after unload" ||
	not_ok "module BTF gone after unload"
check_fails "genl family gone after unload" "$GENL" calls
tap_done
