#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the VM: the module source that esa-dkms ships (make install-dkms-src)
# built by dkms.conf's build script for the running kernel, whose headers
# (Debian 6.1) ship no vmlinux: its BTF against /sys/kernel/btf/vmlinux
# loads (the module refuses to load without valid module BTF and resolved
# kfunc ids: test_kfunc_registration.sh), and a kfunc data plane attaches.
# resolve_btfids is the one make deps built (building it from
# linux-source, as a fresh machine does, takes minutes under TCG).
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh
need_module
kver=$(uname -r)
if [ ! -f "/usr/src/linux-headers-$kver/Makefile" ]; then
	skip "DKMS build for $kver" "no linux-headers-$kver on the host root"
	tap_done
fi
KO=build/kmod/$kver/esa.ko	# the module the VM loaded, put back at exit
T=$(mktemp -d)
PIN=$(pin_path dkms)
PORT=$(ifname dk)
cleanup() {
	$AGGCTL -d $PIN switch detach dev $PORT > /dev/null 2>&1
	$AGGCTL -d $PIN switch unload > /dev/null 2>&1
	grep -q '^esa ' /proc/modules && rmmod_retry
	# the tests after this one need the project's module loaded
	insmod "$KO" || echo "# test_dkms_vm: cannot put $KO back" >&2
	rm -rf "$T"
}
rmmod_retry() {
	local i
	for i in $(seq 1 50); do
		rmmod esa 2> /dev/null && return 0
		sleep 0.1
	done
	rmmod esa
}
cleanup_add cleanup
SRC=$T/usr/src/esa-$(cat VERSION)
check "make install-dkms-src" make -s install-dkms-src DESTDIR="$T"
check "dkms-build.sh for the running kernel $kver" env \
	RESOLVE_BTFIDS="$PWD/.cache/resolve_btfids/resolve_btfids" \
	"$SRC/scripts/dkms-build.sh" "$kver" "/usr/src/linux-headers-$kver"
reset_module > /dev/null 2>&1
rmmod_retry || bail "rmmod esa"
check "insmod the DKMS-built module" insmod "$SRC/kmod/esa.ko"
[ -e /sys/kernel/btf/esa ] && ok "its BTF is the kernel's (/sys/kernel/btf/esa)" ||
	not_ok "its BTF is the kernel's: no /sys/kernel/btf/esa"
stub_ports_add dk || bail "the port"
expect "a kfunc data plane attaches with it" 0 '"flavour":"kmod"' \
	bash -c "$AGGCTL -d $PIN switch attach dev $PORT mode generic 2>&1 && $AGGCTL -d $PIN -j switch show"
tap_done
