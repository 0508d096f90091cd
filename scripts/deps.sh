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
#  On a host other than Debian 12 (Debian 13: its apt has no 6.1), steps
#  2-5 take 6.1's packages from bookworm through an apt state of its own
#  under .cache/apt/ (as step 6 does), the headers unpacked into
#  .cache/kernel/<abi>/ and linux-source-6.1 into .cache/apt/.
#  6. Debian's 6.12 (`make ... KERNEL=6.12`), from bookworm-backports
#     through an apt state of its own under .cache/apt/ (the host's apt
#     sources stay untouched): its ABI (from linux-image-amd64 there)
#     -> .cache/kernel-abi-6.12; image, headers and kbuild unpacked into
#     .cache/kernel/<abi>/ (the headers ship vmlinux and resolve_btfids,
#     so kbuild adds module BTF itself), and its vmlinux extracted
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=$ROOT/.cache
export DEBIAN_FRONTEND=noninteractive

# gcc-12: the compiler both kernels' headers name (Debian 12's); zstd:
# 6.12's image is zstd-compressed (extract-vmlinux); openssh-client:
# aggctl cluster reaches remote switch servers with ssh.
PACKAGES=(clang llvm libbpf-dev bpftool dwarves libelf-dev zlib1g-dev
	libmnl-dev qemu-system-x86 busybox-static iproute2
	ethtool kmod cpio gcc gcc-12 make pkg-config xz-utils zstd binutils python3
	procps iputils-ping socat libcap2-bin gnuplot-nox python3-numpy
	python3-torch python3-yaml python3-sklearn strace groff-base lcov
	debhelper dh-dkms dh-python lintian openssh-client)
# Where 6.1's packages come from: the host's apt on Debian 12, else
# bookworm through .cache/apt (suite_apt below).
HOST_SUITE=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
if [ "$HOST_SUITE" = bookworm ]; then
	K61_SUITE=
	PACKAGES+=(linux-source-6.1)
	SRC_TAR=/usr/src/linux-source-6.1.tar.xz
else
	K61_SUITE=bookworm
	SRC_TAR=$CACHE/apt/bookworm/linux-source/usr/src/linux-source-6.1.tar.xz
fi

say() { echo "deps: $*"; }
die() { echo "deps: error: $*" >&2; exit 1; }

# (`deps.sh docs` with nothing to install needs no root: see below.)
[ "$(id -u)" = 0 ] || [ "${1:-}" = docs ] ||
	die "must run as root (apt-get, module headers)"

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
	[ -z "$K61_SUITE" ] || suite_update "$K61_SUITE"
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

# `make docs` (Sphinx) only: `scripts/deps.sh docs` installs what it
# needs and nothing else; `make deps`, and so `make check`, leave it out.
# Sphinx, the netlink spec's reader and groff for aggctl's man page.
DOC_PACKAGES=(python3-sphinx python3-yaml groff-base)
if [ "${1:-}" = docs ]; then
	[ -z "$(missing_pkgs "${DOC_PACKAGES[@]}")" ] && exit 0
	[ "$(id -u)" = 0 ] || die "must run as root to install: $(missing_pkgs "${DOC_PACKAGES[@]}" | xargs)"
	apt_install "${DOC_PACKAGES[@]}"
	exit 0
fi
# apt-get/apt-cache of Debian suite $1 alone, through an apt state of its
# own in .cache/apt/$1 (sources, lists, downloads, an empty dpkg status,
# so that what the host has installed does not pin a version): the host's
# sources stay untouched; the host's configuration as it is.
suite_apt() { # suite apt-get|apt-cache ARGS...
	local d=$CACHE/apt/$1 tool=$2
	shift 2
	"$tool" -o Dir::Etc::sourcelist="$d/sources.list" \
		-o Dir::Etc::sourceparts="$d/sources.list.d" \
		-o Dir::State="$d/state" -o Dir::State::status="$d/status" \
		-o Dir::Cache="$d/cache" -o APT::Sandbox::User=root "$@"
}
# The host's Debian archive (or, with "Debian-Security", its security
# archive), from its own apt sources.
host_archive() { # label
	apt-get indextargets --format '$(REPO_URI)' "Label: $1" 'Component: main' |
		head -n1
}
suite_update() { # suite
	local d=$CACHE/apt/$1 mirror security key
	key="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
	mirror=$(host_archive Debian)
	[ -n "$mirror" ] || die "no Debian archive in the host's apt sources (apt-get indextargets)"
	mkdir -p "$d/sources.list.d" "$d/state/lists/partial" "$d/cache/archives/partial"
	: > "$d/status"
	case $1 in
	*-*)	# bookworm-backports: that suite alone
		echo "deb $key $mirror $1 main" > "$d/sources.list" ;;
	*)	# a release: with its updates and security fixes (6.1's
		# current ABI comes from bookworm-security)
		# (a fresh root may not have fetched its security list yet)
		security=$(host_archive Debian-Security)
		if [ -z "$security" ]; then
			apt_update
			security=$(host_archive Debian-Security)
		fi
		{
			echo "deb $key $mirror $1 main"
			echo "deb $key $mirror $1-updates main"
			[ -z "$security" ] || echo "deb $key $security $1-security main"
		} > "$d/sources.list" ;;
	esac
	say "apt-get update ($1, in .cache/apt)"
	suite_apt "$1" apt-get update -qq || die "apt-get update of $1 failed"
}
# apt for 6.1's packages (K61_SUITE above).
k61_apt() { # apt-get|apt-cache ARGS...
	if [ -z "$K61_SUITE" ]; then
		"$@"
	else
		[ -s "$CACHE/apt/$K61_SUITE/sources.list" ] || suite_update "$K61_SUITE"
		suite_apt "$K61_SUITE" "$@"
	fi
}
k61_update() {
	if [ -z "$K61_SUITE" ]; then apt_update; else suite_update "$K61_SUITE"; fi
}
k61_lists() {
	if [ -z "$K61_SUITE" ]; then
		echo /var/lib/apt/lists
	else
		echo "$CACHE/apt/$K61_SUITE/state/lists"
	fi
}

# Point the arch headers' Makefile of kernel tree $1 (ABI $2), which
# includes the common headers by absolute path (/usr/src/... as packaged),
# at the copy in $1, by the cache's real path. Run on every deps run, not
# only when unpacking: a cache shared by several checkouts (.cache a
# symbolic link) may have been unpacked through a checkout since removed.
point_kernel_headers() { # kdir abi
	local kb=$1/usr/src/linux-headers-$2 real
	[ -e "$kb/Makefile" ] || return 0
	real=$(cd -P "$1" && pwd) || die "cannot resolve $1"
	sed -i "s|^include .*/usr/src/linux-headers-|include $real/usr/src/linux-headers-|" \
		"$kb/Makefile"
	grep -q "^include $real/" "$kb/Makefile" ||
		die "$kb/Makefile: unexpected contents (no include of the common headers)"
}

# Unpack the .debs of directory $2 into $1 (ABI $3), headers pointed at.
unpack_kernel_debs() { # kdir debdir abi
	local deb
	for deb in "$2"/*.deb; do
		dpkg-deb -x "$deb" "$1" || die "dpkg-deb -x $deb failed"
	done
	point_kernel_headers "$1" "$3"
}

# --- 1. packages ---
apt_install "${PACKAGES[@]}"

# --- 2. kernel ABI ---
resolve_abi() {
	k61_apt apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(6\.1\.[0-9.]*-[0-9]*-amd64\)$/\1/p' |
		head -n1
}
# apt-cache takes seconds here (no pkgcache.bin): reuse the answer while
# the package lists are the ones it was read from.
lists_key=$({ stat -c '%n %Y %s' "$(k61_lists)"/*Packages* 2>/dev/null || true; } |
	sha256sum | cut -c1-16)
abi=
if [ "$(cat "$CACHE/kernel-abi.lists" 2>/dev/null)" = "$lists_key" ]; then
	abi=$(cat "$CACHE/kernel-abi" 2>/dev/null)
fi
[ -n "$abi" ] || abi=$(resolve_abi)
if [ -z "$abi" ]; then
	k61_update
	abi=$(resolve_abi)
fi
[ -n "$abi" ] || die "cannot resolve the Debian 6.1 ABI from 'apt-cache depends linux-image-amd64'"
mkdir -p "$CACHE"
if [ "$(cat "$CACHE/kernel-abi" 2>/dev/null)" != "$abi" ]; then
	echo "$abi" > "$CACHE/kernel-abi"
fi
lists_key=$({ stat -c '%n %Y %s' "$(k61_lists)"/*Packages* 2>/dev/null || true; } |
	sha256sum | cut -c1-16)
echo "$lists_key" > "$CACHE/kernel-abi.lists"
say "kernel ABI $abi"

# --- 3. headers (installed; elsewhere unpacked with the image, step 4) ---
if [ -z "$K61_SUITE" ]; then
	apt_install "linux-headers-$abi"
	[ -e "/usr/src/linux-headers-$abi/Makefile" ] ||
		die "/usr/src/linux-headers-$abi is incomplete"
fi

# --- 4. kernel image and vmlinux ---
KDIR=$CACHE/kernel/$abi
if [ ! -e "$KDIR/.stamp-image" ]; then
	say "downloading linux-image-$abi"
	rm -rf "$KDIR"
	mkdir -p "$KDIR/deb"
	debs=("linux-image-$abi")
	[ -z "$K61_SUITE" ] || debs+=("linux-headers-$abi"
		"linux-headers-${abi%-amd64}-common" linux-kbuild-6.1)
	( cd "$KDIR/deb" && k61_apt apt-get download -qq -o APT::Sandbox::User=root "${debs[@]}" ) ||
		retry_after_update "apt-get download ${debs[*]} failed"
	say "unpacking ${debs[*]}"
	unpack_kernel_debs "$KDIR" "$KDIR/deb" "$abi"
	[ -e "$KDIR/boot/vmlinuz-$abi" ] ||
		die "no boot/vmlinuz-$abi in the image package"
	# The guest's modprobe wants modules.dep; the package ships without
	# it (postinst runs depmod), so make it here.
	depmod -b "$KDIR" "$abi"
	touch "$KDIR/.stamp-image"
fi
point_kernel_headers "$KDIR" "$abi"
# The test VM mounts the guest kernel's modules on the host root's
# /lib/modules (scripts/vm-init.sh: that root is the guest's, read-only).
# Every root with a kernel or kernel headers installed has the directory;
# one with neither (a container, Debian 13 here, whose 6.1 headers live in
# .cache) has not: an empty one, as a kernel package would make it.
[ -d /lib/modules ] || install -d -m 755 /lib/modules

# --- 5. linux-source parts: extract-vmlinux, resolve_btfids, kselftest ---
if [ -n "$K61_SUITE" ] && [ ! -s "$SRC_TAR" ]; then
	src_deb=$CACHE/apt/$K61_SUITE/linux-source
	rm -rf "$src_deb"
	mkdir -p "$src_deb/deb"
	say "downloading linux-source-6.1 ($K61_SUITE)"
	( cd "$src_deb/deb" && k61_apt apt-get download -qq linux-source-6.1 ) ||
		die "apt-get download linux-source-6.1 ($K61_SUITE) failed"
	dpkg-deb -x "$src_deb"/deb/linux-source-6.1_*.deb "$src_deb" ||
		die "cannot unpack linux-source-6.1"
	[ -s "$SRC_TAR" ] || die "no $SRC_TAR in linux-source-6.1"
fi
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

# The uncompressed kernel of image $1 (the BTF base of its modules, and
# what the VM boots) into $2.
extract_vmlinux() { # vmlinuz vmlinux
	local sections
	say "extracting vmlinux from $(basename "$1")"
	"$SRC/scripts/extract-vmlinux" "$1" > "$2.tmp" || die "extract-vmlinux $1 failed"
	# Read the section table once, then match: `readelf | grep -q` under
	# pipefail fails at random when grep exits first and readelf dies of
	# SIGPIPE.
	sections=$(readelf -SW "$2.tmp") ||
		die "readelf cannot read the vmlinux extracted from $1"
	grep -q ' \.BTF_ids ' <<< "$sections" ||
		die "the vmlinux extracted from $1 has no .BTF_ids section"
	grep -q ' \.BTF ' <<< "$sections" ||
		die "the vmlinux extracted from $1 has no .BTF section"
	mv "$2.tmp" "$2"
}
VMLINUX=$KDIR/vmlinux
if [ ! -s "$VMLINUX" ] || [ "$KDIR/.stamp-image" -nt "$VMLINUX" ]; then
	extract_vmlinux "$KDIR/boot/vmlinuz-$abi" "$VMLINUX"
fi

# --- 6. Debian's 6.12 from bookworm-backports ---
BPO_SUITE=bookworm-backports
resolve_abi_612() {
	suite_apt "$BPO_SUITE" apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(6\.12\.[0-9.]*+deb[0-9]*-amd64\)$/\1/p' |
		head -n1
}
# The image, headers (arch and common) and kbuild of ABI $1, unpacked
# into .cache/kernel/$1/ with the kernel's vmlinux extracted.
fetch_kernel_612() { # abi
	local abi=$1 kdir=$CACHE/kernel/$1 ver kb
	ver=${abi%-amd64}
	rm -rf "$kdir"
	mkdir -p "$kdir/deb"
	say "downloading the $abi image, headers and kbuild"
	( cd "$kdir/deb" && suite_apt "$BPO_SUITE" apt-get download -qq "linux-image-$abi" \
		"linux-headers-$abi" "linux-headers-$ver-common" \
		"linux-kbuild-$ver" ) || return 1
	say "unpacking them into .cache/kernel/$abi"
	unpack_kernel_debs "$kdir" "$kdir/deb" "$abi"
	[ -e "$kdir/boot/vmlinuz-$abi" ] || die "no boot/vmlinuz-$abi in linux-image-$abi"
	kb=$kdir/usr/src/linux-headers-$abi
	[ -s "$kb/vmlinux" ] || die "linux-headers-$abi ships no vmlinux"
	[ -x "$kb/tools/bpf/resolve_btfids/resolve_btfids" ] ||
		die "linux-kbuild-$ver ships no resolve_btfids"
	depmod -b "$kdir" "$abi" || die "depmod for $abi failed"
	extract_vmlinux "$kdir/boot/vmlinuz-$abi" "$kdir/vmlinux"
	touch "$kdir/.stamp-image"
}
abi612=$(cat "$CACHE/kernel-abi-6.12" 2>/dev/null || true)
if [ -z "$abi612" ] || [ ! -e "$CACHE/kernel/$abi612/.stamp-image" ]; then
	[ -s "$CACHE/apt/$BPO_SUITE/sources.list" ] || suite_update "$BPO_SUITE"
	abi612=$(resolve_abi_612)
	if [ -z "$abi612" ] || ! fetch_kernel_612 "$abi612"; then
		# Stale lists: Debian moved on to a newer 6.12 ABI.
		suite_update "$BPO_SUITE"
		abi612=$(resolve_abi_612)
		[ -n "$abi612" ] || die "cannot resolve the 6.12 ABI from linux-image-amd64 in $BPO_SUITE"
		fetch_kernel_612 "$abi612" || die "downloading the $abi612 packages from $BPO_SUITE failed"
	fi
	echo "$abi612" > "$CACHE/kernel-abi-6.12"
fi
point_kernel_headers "$CACHE/kernel/$abi612" "$abi612"
say "kernel 6.12: ABI $abi612"

say "ready (ABI $abi, 6.12 ABI $abi612)"
