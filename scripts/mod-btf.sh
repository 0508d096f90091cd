#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Give an out-of-tree module its BTF, as the kernel's own modfinal step would.
#
# usage: scripts/mod-btf.sh [--check | --pahole-only] MODULE.ko [MODULE.ko ...]
#   --check        only run the checks below on already processed modules
#   --pahole-only  add .BTF but leave .BTF_ids unresolved and skip the
#                  checks (for tests that need such a broken module)
#
# Debian's linux-headers package ships neither vmlinux nor resolve_btfids,
# so kbuild prints "Skipping BTF generation" and the .ko has no .BTF: the
# 6.1 kernel then refuses its kfuncs ("missing module BTF, cannot register
# kfuncs"). This script runs, on each .ko in place:
#   pahole -J --btf_gen_floats -j --lang_exclude=rust --btf_base $VMLINUX
#   resolve_btfids -b $VMLINUX
# (the flags scripts/pahole-flags.sh picks for pahole 1.24) and then fails
# loudly unless the .ko has a .BTF section and every BTF id slot in
# .BTF_ids (symbols __BTF_ID__*) holds a non-zero id. A module without
# .BTF_ids (no kfuncs) only needs the .BTF section.
#
# Environment (defaults from `make deps`, see scripts/common.mk):
#   VMLINUX          .cache/kernel/$KABI/vmlinux (BTF base, same ABI as the VM)
#   RESOLVE_BTFIDS   .cache/resolve_btfids/resolve_btfids
#   PAHOLE           pahole
# Running it again on the same .ko is safe: an old .BTF is dropped first.
# Call it from a Makefile after the kbuild step, e.g.
#   $(ROOT)/scripts/mod-btf.sh $(BUILD)/kmod/esa.ko
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KABI=$(cat "$ROOT/.cache/kernel-abi" 2>/dev/null || true)
VMLINUX=${VMLINUX:-$ROOT/.cache/kernel/$KABI/vmlinux}
RESOLVE_BTFIDS=${RESOLVE_BTFIDS:-$ROOT/.cache/resolve_btfids/resolve_btfids}
PAHOLE=${PAHOLE:-pahole}

die() { echo "mod-btf: error: $*" >&2; exit 1; }

mode=full
case ${1:-} in
--check) mode=check; shift ;;
--pahole-only) mode=pahole; shift ;;
-*) die "unknown option $1" ;;
esac
[ $# -ge 1 ] || die "usage: $0 [--check | --pahole-only] MODULE.ko [MODULE.ko ...]"
[ -s "$VMLINUX" ] || die "no vmlinux at $VMLINUX (run 'make deps')"
[ -x "$RESOLVE_BTFIDS" ] || die "no resolve_btfids at $RESOLVE_BTFIDS (run 'make deps')"
command -v "$PAHOLE" > /dev/null || die "$PAHOLE not found (install dwarves)"

# Offset in the file of section $2 of ELF $1 (empty if absent).
section_offset() {
	readelf -SW "$1" | awk -v s="$2" '
		{ sub(/^ *\[ *[0-9]+\] */, "") }
		$1 == s && !done { print $4; done = 1 }'
}

# Section index of section $2 of ELF $1 (empty if absent).
section_index() {
	readelf -SW "$1" | awk -v s="$2" '
		match($0, /^ *\[ *[0-9]+\]/) {
			idx = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", idx)
			rest = substr($0, RSTART + RLENGTH); split(rest, f, " ")
			if (f[1] == s && !done) { print idx; done = 1 }
		}'
}

# Check every __BTF_ID__ slot of a module's .BTF_ids holds a resolved id.
check_btf_ids() {
	local ko=$1 off idx sym value val bad=0 n=0
	idx=$(section_index "$ko" .BTF_ids)
	[ -n "$idx" ] || return 0
	off=$((16#$(section_offset "$ko" .BTF_ids)))
	while read -r value sym; do
		val=$(od -An -tu4 -j $((off + 16#$value)) -N4 "$ko" | tr -d ' ')
		n=$((n + 1))
		if [ "$val" = 0 ]; then
			echo "mod-btf: $ko: $sym is unresolved (0)" >&2
			bad=1
		fi
	done < <(readelf -sW "$ko" |
		awk -v i="$idx" '$7 == i && $8 ~ /^__BTF_ID__/ { print $2, $8 }')
	[ "$n" -gt 0 ] || die "$ko: .BTF_ids has no __BTF_ID__ symbols (stripped?)"
	[ "$bad" = 0 ] || die "$ko: unresolved .BTF_ids (resolve_btfids failed?)"
}

for ko in "$@"; do
	[ -f "$ko" ] || die "$ko: no such module"
	[[ $(readelf -h "$ko" 2>/dev/null) == *"REL (Relocatable file)"* ]] ||
		die "$ko: not a kernel module (relocatable ELF)"
	if [ "$mode" = check ]; then
		[ -n "$(section_index "$ko" .BTF)" ] ||
			die "$ko: no .BTF section (module kfuncs would be refused)"
		check_btf_ids "$ko"
		continue
	fi
	if [ -n "$(section_index "$ko" .BTF)" ]; then
		objcopy --remove-section=.BTF "$ko"
	fi
	LLVM_OBJCOPY=objcopy "$PAHOLE" -J --btf_gen_floats -j --lang_exclude=rust \
		--btf_base "$VMLINUX" "$ko" ||
		die "$ko: pahole failed"
	[ "$mode" = pahole ] && continue
	log=$("$RESOLVE_BTFIDS" -b "$VMLINUX" "$ko" 2>&1) ||
		{ echo "$log" >&2; die "$ko: resolve_btfids failed"; }
	if grep -qi 'unresolved\|warn\|error' <<< "$log"; then
		echo "$log" >&2
		die "$ko: resolve_btfids reported problems"
	fi
	[ -n "$(section_index "$ko" .BTF)" ] ||
		die "$ko: no .BTF section after pahole (module kfuncs would be refused)"
	check_btf_ids "$ko"
done
