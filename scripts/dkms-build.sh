#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the esa module for one kernel, with its BTF: what dkms.conf runs
# (MAKE[0]) in the module source tree, for the running kernel and for every
# kernel installed later.
#
# usage: scripts/dkms-build.sh KERNELVER KERNEL_BUILD_DIR
#
# The module's kfuncs are visible to XDP programs only with module BTF
# built against the BTF of the very kernel that loads it (6.1 otherwise
# logs "missing module BTF" or "failed to validate module BTF", and the
# data plane cannot load). The BTF base, in this order:
#   1. KERNEL_BUILD_DIR/vmlinux: the distribution's own, shipped with the
#      headers (Debian 6.12); kbuild's modfinal step then already added the
#      BTF and this script only checks it.
#   2. /sys/kernel/btf/vmlinux, when KERNELVER is the running kernel (and,
#      where dpkg knows the image, the running build is the one installed):
#      then it is exactly the target's BTF. Debian 6.1's headers ship no
#      vmlinux and no package ships an uncompressed one, so on 6.1 this is
#      the only exact base there is.
# Anything else is refused with what to do: a kernel that is installed but
# not running (the usual kernel upgrade) is built once it runs, by
# `dkms autoinstall`. A base from another kernel would build a module that
# the target refuses to load.
#
# resolve_btfids (fills .BTF_ids): $RESOLVE_BTFIDS, the headers' own
# (6.12), or built here from /usr/src/linux-source-X.Y.tar.xz (6.1).
# The BTF step itself is scripts/mod-btf.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KO=$ROOT/kmod/esa.ko

die() { echo "esa-dkms: error: $*" >&2; exit 1; }

[ $# = 2 ] || die "usage: $0 KERNELVER KERNEL_BUILD_DIR"
kver=$1 ksrc=$2
[ -f "$ksrc/Makefile" ] || die "no kernel headers at $ksrc (install linux-headers-$kver)"

# The kernel's configuration: the kfuncs need BTF for modules.
config=$ksrc/include/config/auto.conf
for opt in CONFIG_DEBUG_INFO_BTF CONFIG_DEBUG_INFO_BTF_MODULES; do
	grep -q "^$opt=y" "$config" 2> /dev/null ||
		die "kernel $kver is built without $opt: the esa module's kfuncs need module BTF; run the switch module-less instead (aggctl switch attach without the module)"
done

# The running kernel's BTF is the target's if the image dpkg installed
# for $kver is the build that runs ("Debian 6.1.158-1" in /proc/version).
running_is_installed() {
	local pkg ver
	for pkg in "linux-image-$kver" "linux-image-$kver-unsigned"; do
		ver=$(dpkg-query -W -f='${Version}' "$pkg" 2> /dev/null) || continue
		[ -n "$ver" ] || continue
		grep -qF "Debian $ver " /proc/version
		return
	done
	return 0	# not installed by dpkg: nothing says otherwise
}

btf_base() {
	if [ -s "$ksrc/vmlinux" ]; then
		echo "$ksrc/vmlinux"
	elif [ "$kver" = "$(uname -r)" ] && [ -r /sys/kernel/btf/vmlinux ]; then
		running_is_installed ||
			die "kernel $kver was upgraded in place and still runs the old build: its /sys/kernel/btf/vmlinux is not the new image's BTF; reboot, then run: dkms autoinstall"
		echo /sys/kernel/btf/vmlinux
	else
		die "cannot give the esa module BTF for kernel $kver: its headers ship no vmlinux and it is not the running kernel ($(uname -r)), whose /sys/kernel/btf/vmlinux would be the base; boot $kver, then run: dkms autoinstall"
	fi
}

# resolve_btfids from linux-source-X.Y (Debian 6.1's packages ship none).
build_resolve_btfids() {
	local series tar src out=$ROOT/.resolve_btfids
	series=$(sed -E 's/^([0-9]+\.[0-9]+).*/\1/' <<< "$kver")
	tar=/usr/src/linux-source-$series.tar.xz
	[ -f "$tar" ] ||
		die "no resolve_btfids for kernel $kver (its headers ship none): install linux-source-$series, libelf-dev and zlib1g-dev, or set RESOLVE_BTFIDS"
	src=$out/src
	rm -rf "$out"
	mkdir -p "$src"
	echo "esa-dkms: building resolve_btfids from $tar" >&2
	tar -xJf "$tar" -C "$src" --strip-components=1 \
		"linux-source-$series/tools/arch/x86" \
		"linux-source-$series/tools/bpf/resolve_btfids" \
		"linux-source-$series/tools/build" \
		"linux-source-$series/tools/include" \
		"linux-source-$series/tools/lib" \
		"linux-source-$series/tools/scripts" \
		"linux-source-$series/include/uapi/linux/bpf.h" \
		"linux-source-$series/scripts/bpf_doc.py" \
		"linux-source-$series/Makefile" >&2 ||
		die "cannot extract resolve_btfids' sources from $tar"
	make -s -C "$src/tools/bpf/resolve_btfids" O="$out" >&2 ||
		die "building resolve_btfids failed (needs libelf-dev, zlib1g-dev and python3)"
	echo "$out/resolve_btfids"
}

find_resolve_btfids() {
	local f
	for f in "${RESOLVE_BTFIDS:-}" \
		 "$ksrc/tools/bpf/resolve_btfids/resolve_btfids"; do
		if [ -n "$f" ] && [ -x "$f" ]; then
			echo "$f"
			return
		fi
	done
	build_resolve_btfids
}

# What the BTF step needs, before the build: refuse early.
base=$(btf_base)
rb=$(find_resolve_btfids)
make -C "$ksrc" M="$ROOT" modules
echo "esa-dkms: module BTF against $base" >&2
VMLINUX=$base RESOLVE_BTFIDS=$rb "$ROOT/scripts/mod-btf.sh" "$KO"
