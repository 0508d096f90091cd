#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make deps`: install and prepare everything the build and the tests need.
#
# Idempotent: each step is skipped when its result is already there (stamp
# files keyed by the kernel ABI), so a second run takes seconds and touches
# nothing. `apt-get update` runs only when apt cannot find what we ask for.
#
#  1. Debian packages (toolchain, BPF, qemu, busybox, linux-source-6.1, ...)
#  2. the current Debian 6.1 kernel release (ABI, e.g. "6.1.0-NN-amd64"),
#     read from `apt-cache depends linux-image-amd64` (never hard-coded)
#     -> .cache/kernel-abi, which scripts/common.mk reads as KABI
#  3. linux-headers-<abi> (the module build tree)
#  4. linux-image-<abi> unpacked into .cache/kernel/<abi>/ (VM kernel
#     and module tree) and its vmlinux extracted (the BTF base for modules)
#  5. from /usr/src/linux-source-6.1.tar.xz: resolve_btfids built into
#     .cache/resolve_btfids/, kselftest headers into .cache/kselftest/
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=$ROOT/.cache
export DEBIAN_FRONTEND=noninteractive

PACKAGES=(clang llvm libbpf-dev bpftool dwarves libelf-dev zlib1g-dev
	libmnl-dev qemu-system-x86 busybox-static linux-source-6.1 iproute2
	ethtool kmod cpio gcc make pkg-config xz-utils binutils python3
	procps iputils-ping socat libcap2-bin gnuplot-nox python3-numpy
	python3-torch python3-yaml python3-sklearn strace lcov)
SRC_TAR=/usr/src/linux-source-6.1.tar.xz

say() { echo "deps: $*"; }
die() { echo "deps: error: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get, module headers)"

apt_updated=0
apt_update() {
	[ "$apt_updated" = 1 ] && return 0
	say "apt-get update"
	apt-get update -qq || die "apt-get update failed"
	apt_updated=1
}

# Packages from the arguments that dpkg does not report as installed.
missing_pkgs() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null |
			grep -qx installed || echo "$p"
	done
}

# True when apt knows an installable candidate for every argument.
apt_knows() {
	local p cand
	for p in "$@"; do
		cand=$(apt-cache policy "$p" 2>/dev/null |
			awk '/Candidate:/ { print $2 }')
		[ -n "$cand" ] && [ "$cand" != "(none)" ] || return 1
	done
}

# A failed install or download may mean stale lists (Debian moved on to a
# newer ABI): update once and start over, so the ABI is resolved again.
retry_after_update() { # what-failed
	if [ -n "${ESA_DEPS_RETRIED:-}" ] || [ "$apt_updated" = 1 ]; then
		die "$1"
	fi
	say "$1: updating the package lists and starting over"
	apt_update
	export ESA_DEPS_RETRIED=1
	exec "$0"
}

apt_install() {
	local missing
	missing=$(missing_pkgs "$@")
	[ -z "$missing" ] && return 0
	# shellcheck disable=SC2086
	apt_knows $missing || apt_update
	say "installing:" $missing
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		retry_after_update "apt-get install $missing failed"
}

# --- 1. packages ---
apt_install "${PACKAGES[@]}"

# --- 2. kernel ABI ---
resolve_abi() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(6\.1\.[0-9.]*-[0-9]*-amd64\)$/\1/p' |
		head -n1
}
# apt-cache takes seconds here (no pkgcache.bin): reuse the answer while
# the package lists are the ones it was read from.
lists_key=$(stat -c '%n %Y %s' /var/lib/apt/lists/*Packages* 2>/dev/null | sha256sum | cut -c1-16)
abi=
if [ "$(cat "$CACHE/kernel-abi.lists" 2>/dev/null)" = "$lists_key" ]; then
	abi=$(cat "$CACHE/kernel-abi" 2>/dev/null)
fi
[ -n "$abi" ] || abi=$(resolve_abi)
if [ -z "$abi" ]; then
	apt_update
	abi=$(resolve_abi)
fi
[ -n "$abi" ] || die "cannot resolve the Debian 6.1 ABI from 'apt-cache depends linux-image-amd64'"
mkdir -p "$CACHE"
if [ "$(cat "$CACHE/kernel-abi" 2>/dev/null)" != "$abi" ]; then
	echo "$abi" > "$CACHE/kernel-abi"
fi
lists_key=$(stat -c '%n %Y %s' /var/lib/apt/lists/*Packages* 2>/dev/null | sha256sum | cut -c1-16)
echo "$lists_key" > "$CACHE/kernel-abi.lists"
say "kernel ABI $abi"

# --- 3. headers ---
apt_install "linux-headers-$abi"
[ -e "/usr/src/linux-headers-$abi/Makefile" ] ||
	die "/usr/src/linux-headers-$abi is incomplete"

# --- 4. kernel image and vmlinux ---
KDIR=$CACHE/kernel/$abi
if [ ! -e "$KDIR/.stamp-image" ]; then
	say "downloading linux-image-$abi"
	rm -rf "$KDIR"
	mkdir -p "$KDIR/deb"
	( cd "$KDIR/deb" && apt-get download -qq -o APT::Sandbox::User=root "linux-image-$abi" ) ||
		retry_after_update "apt-get download linux-image-$abi failed"
	say "unpacking linux-image-$abi"
	dpkg-deb -x "$KDIR"/deb/linux-image-*.deb "$KDIR"
	[ -e "$KDIR/boot/vmlinuz-$abi" ] ||
		die "no boot/vmlinuz-$abi in the image package"
	# The guest's modprobe wants modules.dep; the package ships without
	# it (postinst runs depmod), so make it here.
	depmod -b "$KDIR" "$abi"
	touch "$KDIR/.stamp-image"
fi

# --- 5. linux-source parts: extract-vmlinux, resolve_btfids, kselftest ---
SRC=$CACHE/linux-source
src_stamp=$SRC/.stamp-$(stat -c %Y-%s "$SRC_TAR")
if [ ! -e "$src_stamp" ]; then
	say "extracting tools from $(basename "$SRC_TAR")"
	rm -rf "$SRC"
	mkdir -p "$SRC"
	tar -xJf "$SRC_TAR" -C "$SRC" --strip-components=1 --wildcards \
		'linux-source-6.1/Makefile' \
		'linux-source-6.1/scripts/extract-vmlinux' \
		'linux-source-6.1/scripts/bpf_doc.py' \
		'linux-source-6.1/include/uapi/linux/bpf.h' \
		'linux-source-6.1/tools/arch/x86' \
		'linux-source-6.1/tools/bpf/resolve_btfids' \
		'linux-source-6.1/tools/build' \
		'linux-source-6.1/tools/include' \
		'linux-source-6.1/tools/lib' \
		'linux-source-6.1/tools/scripts' \
		'linux-source-6.1/tools/testing/selftests/kselftest*'
	touch "$src_stamp"
fi

KST=$CACHE/kselftest
if [ ! -e "$KST/.stamp" ] || [ "$src_stamp" -nt "$KST/.stamp" ]; then
	say "installing kselftest headers into .cache/kselftest"
	rm -rf "$KST"
	mkdir -p "$KST"
	cp "$SRC"/tools/testing/selftests/kselftest*.h "$KST/"
	touch "$KST/.stamp"
fi

RB=$CACHE/resolve_btfids
if [ ! -x "$RB/resolve_btfids" ] || [ "$src_stamp" -nt "$RB/resolve_btfids" ]; then
	say "building resolve_btfids"
	rm -rf "$RB"
	mkdir -p "$RB"
	make -s -C "$SRC/tools/bpf/resolve_btfids" O="$RB" -j"$(nproc)" \
		> "$RB/build.log" 2>&1 ||
		{ tail -20 "$RB/build.log"; die "resolve_btfids build failed (log: $RB/build.log)"; }
	[ -x "$RB/resolve_btfids" ] || die "resolve_btfids was not built"
fi

VMLINUX=$KDIR/vmlinux
if [ ! -s "$VMLINUX" ] || [ "$KDIR/.stamp-image" -nt "$VMLINUX" ]; then
	say "extracting vmlinux from vmlinuz-$abi"
	"$SRC/scripts/extract-vmlinux" "$KDIR/boot/vmlinuz-$abi" \
		> "$VMLINUX.tmp" || die "extract-vmlinux failed"
	# Read the section table once, then match: `readelf | grep -q` under
	# pipefail fails at random when grep exits first and readelf dies of
	# SIGPIPE.
	sections=$(readelf -SW "$VMLINUX.tmp") ||
		die "readelf cannot read the extracted vmlinux"
	grep -q ' \.BTF_ids ' <<< "$sections" ||
		die "extracted vmlinux has no .BTF_ids section"
	grep -q ' \.BTF ' <<< "$sections" ||
		die "extracted vmlinux has no .BTF section"
	mv "$VMLINUX.tmp" "$VMLINUX"
fi

say "ready (ABI $abi)"
