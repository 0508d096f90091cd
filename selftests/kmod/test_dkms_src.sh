#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The module as DKMS gets it: make install-dkms-src installs a source tree
# that builds kmod/esa.ko from its root (the top-level Kbuild, as
# make -C KDIR M=$PWD does); dkms.conf, read as dkms reads it, gives the
# name, VERSION's version and the build script, and skips (not fails) a
# kernel whose module BTF cannot be made now; scripts/dkms-build.sh refuses
# such a kernel, and one built without BTF, before compiling, saying why.
# The build and load for the running kernel: test_dkms_vm.sh in the VM.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
KABI=$(scripts/kabi.sh 6.1)
KHEADERS=$(scripts/kabi.sh --headers 6.1)	# as make kmod builds against
if [ -z "$KABI" ] || [ ! -f "$KHEADERS/Makefile" ]; then
	skip "dkms source" "no kernel headers (make deps)"
	tap_done
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
VERSION=$(cat VERSION)
SRC=$T/usr/src/esa-$VERSION

check "make install-dkms-src" make -s install-dkms-src DESTDIR="$T"
check "the installed tree builds kmod/esa.ko from its root" \
	make -s -C "$KHEADERS" M="$SRC" modules
[ -f "$SRC/kmod/esa.ko" ] && ok "kmod/esa.ko, where dkms.conf says" ||
	not_ok "kmod/esa.ko, where dkms.conf says: missing"

# dkms.conf as dkms reads it: sourced with kernelver and kernel_source_dir.
conf() { # KERNELVER KERNEL_SOURCE_DIR
	bash -c 'kernelver=$1 kernel_source_dir=$2; . "$3/dkms.conf" &&
		echo "$PACKAGE_NAME $PACKAGE_VERSION ${BUILT_MODULE_LOCATION[0]}${BUILT_MODULE_NAME[0]} ${MAKE[0]} exclusive=${BUILD_EXCLUSIVE_KERNEL:-}"' \
		conf "$1" "$2" "$SRC" 2>&1
}
running=$(uname -r)
same "dkms.conf for the running kernel" "$(conf "$running" "$T/headers")" \
	"esa $VERSION kmod/esa scripts/dkms-build.sh '$running' '$T/headers' exclusive="
if [ "$running" != "$KABI" ]; then
	out=$(conf "$KABI" "$KHEADERS")
	grep -q "^esa: kernel $KABI skipped: its module BTF needs its own /sys/kernel/btf/vmlinux" <<< "$out" &&
		grep -q "exclusive=^$running\\$\$" <<< "$out" &&
		ok "dkms.conf skips a kernel without vmlinux that is not running, saying why" ||
		not_ok "dkms.conf skips a kernel without vmlinux that is not running: $(flat "$out")"
	rm -f "$SRC/kmod/esa.ko"
	expect "dkms-build.sh refuses it, naming the kernel and what to do" 1 \
		"cannot give the esa module BTF for kernel $KABI: its headers ship no vmlinux and it is not the running kernel .*; boot $KABI, then run: dkms autoinstall" \
		"$SRC/scripts/dkms-build.sh" "$KABI" "$KHEADERS"
	[ ! -e "$SRC/kmod/esa.ko" ] && ok "refused before compiling" ||
		not_ok "refused before compiling: kmod/esa.ko was built"
else
	skip "a kernel that is not running" "this is the kernel $KABI"
fi
# Headers of a kernel built without BTF (only what the script reads).
mkdir -p "$T/nobtf/include/config"
touch "$T/nobtf/Makefile"
echo "CONFIG_DEBUG_INFO_BTF=y" > "$T/nobtf/include/config/auto.conf"
expect "a kernel without module BTF is refused, naming the option" 1 \
	"kernel 9.9.9 is built without CONFIG_DEBUG_INFO_BTF_MODULES: .*run the switch module-less" \
	"$SRC/scripts/dkms-build.sh" 9.9.9 "$T/nobtf"
expect "no headers: says which package" 1 "no kernel headers at $T/none \\(install linux-headers-9.9.9\\)" \
	"$SRC/scripts/dkms-build.sh" 9.9.9 "$T/none"
tap_done
