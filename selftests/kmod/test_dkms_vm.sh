#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# In the VM: the module source that esa-dkms ships (make install-dkms-src)
# built by dkms.conf's build script for the running kernel against its
# headers at the paths linux-headers-<kver> installs them, loads (the
# module refuses to load without valid module BTF and resolved kfunc ids:
# test_kfunc_registration.sh), and a kfunc data plane attaches.
# Debian 6.1's headers ship no vmlinux: the BTF base is
# /sys/kernel/btf/vmlinux. Debian 6.12's ship vmlinux and resolve_btfids,
# and the build uses them, as on a user's machine.
# resolve_btfids for 6.1 is the one make deps built (building it from
# linux-source, as a fresh machine does, takes minutes under TCG).
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
. selftests/lib/topo.sh
need_module
kver=$(uname -r)
HEADERS=/usr/src/linux-headers-$kver
# The guest shares the host's root, which has the headers of the host's
# kernel series (6.1) from apt; make deps unpacks the other kernels'
# (6.12) into .cache/kernel/<kver>/ instead, that root's usr/src and
# usr/lib being what the packages install in /usr/src and /usr/lib.
CACHED=$(readlink -f ".cache/kernel/$kver")
if [ -f "$HEADERS/Makefile" ]; then
	HEADERS_ROOT=
elif [ -f "$CACHED$HEADERS/Makefile" ]; then
	HEADERS_ROOT=$CACHED
else
	skip "DKMS build for $kver" "no linux-headers-$kver on the host root nor in $CACHED (make deps)"
	tap_done
fi
# with_headers CMD...: run CMD on a root with linux-headers-$kver
# installed. Headers from the cache are layered under the root's /usr/src
# and /usr/lib (read-only overlayfs) in a mount namespace of CMD's own:
# the build sees the packaged paths (/usr/src/linux-headers-$kver, its
# -common sibling, /usr/lib/linux-kbuild-*), and nothing changes outside.
with_headers() {
	if [ -z "$HEADERS_ROOT" ]; then
		"$@"
		return
	fi
	modprobe overlay || return
	unshare --mount --propagation private bash -c '
		root=$1; shift
		for d in /usr/src /usr/lib; do
			mount -t overlay -o "ro,lowerdir=$d:$root$d" esa-headers "$d" ||
				exit
		done
		exec "$@"' with_headers "$HEADERS_ROOT" "$@"
}
# resolve_btfids: the headers' own where they ship one (6.12), as dkms
# uses it; else the one make deps built.
RESOLVE_BTFIDS=$PWD/.cache/resolve_btfids/resolve_btfids
[ -x "$HEADERS_ROOT$HEADERS/tools/bpf/resolve_btfids/resolve_btfids" ] &&
	RESOLVE_BTFIDS=
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
cleanup_add cleanup
SRC=$T/usr/src/esa-$(cat VERSION)
check "make install-dkms-src" make -s install-dkms-src DESTDIR="$T"
check "dkms-build.sh for the running kernel $kver" with_headers env \
	RESOLVE_BTFIDS="$RESOLVE_BTFIDS" "$SRC/scripts/dkms-build.sh" "$kver" "$HEADERS"
reset_module > /dev/null 2>&1
rmmod_retry || bail "rmmod esa"
check "insmod the DKMS-built module" insmod "$SRC/kmod/esa.ko"
[ -e /sys/kernel/btf/esa ] && ok "its BTF is the kernel's (/sys/kernel/btf/esa)" ||
	not_ok "its BTF is the kernel's: no /sys/kernel/btf/esa"
stub_ports_add dk || bail "the port"
expect "a kfunc data plane attaches with it" 0 '"flavour":"kmod"' \
	bash -c "$AGGCTL -d $PIN switch attach dev $PORT mode generic 2>&1 && $AGGCTL -d $PIN -j switch show"
tap_done
