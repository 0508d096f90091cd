#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host test of scripts/mod-btf.sh on the esa_smoke module's raw kbuild
# output: it adds .BTF and resolves .BTF_ids, and refuses loudly whenever
# either is missing or its inputs are wrong. Prints TAP.
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
. "$ROOT/selftests/lib/topo.sh"	# TAP helpers and cleanup

MODBTF=$ROOT/scripts/mod-btf.sh
# The 6.1 module's: its headers have no vmlinux, so kbuild left it without
# BTF, the case mod-btf.sh is for.
RAW=$ROOT/build/vm/$("$ROOT/scripts/kabi.sh" 6.1)/smoke/esa_smoke.nobtf.ko
[ -f "$RAW" ] || bail "missing $RAW (run make)"
T=$(mktemp -d)
cleanup_add rm -rf "$T"

has_btf() { readelf -SW "$1" | grep -q ' \.BTF '; }

cp "$RAW" "$T/a.ko"
check "mod-btf.sh processes the module" "$MODBTF" "$T/a.ko"
has_btf "$T/a.ko" && ok "module has a .BTF section" || not_ok "module has a .BTF section"
check "--check accepts the processed module" "$MODBTF" --check "$T/a.ko"
cp "$T/a.ko" "$T/a2.ko"
check "running it twice is harmless" "$MODBTF" "$T/a2.ko"
btf_of() { objcopy -O binary --only-section=.BTF "$1" "$2"; }
btf_of "$T/a.ko" "$T/a.btf" && btf_of "$T/a2.ko" "$T/a2.btf" &&
	cmp -s "$T/a.btf" "$T/a2.btf" && "$MODBTF" --check "$T/a2.ko" &&
	ok "second run gives the same, valid BTF" ||
	not_ok "second run gives the same, valid BTF"

check_fails "--check refuses the raw kbuild output (no .BTF)" "$MODBTF" --check "$RAW"
cp "$RAW" "$T/b.ko"
"$MODBTF" --pahole-only "$T/b.ko"
check_fails "--check refuses unresolved .BTF_ids" "$MODBTF" --check "$T/b.ko"
out=$("$MODBTF" --check "$T/b.ko" 2>&1)
[[ $out == *"esa_smoke_count"*"unresolved"* ]] && ok "error names the unresolved kfunc" ||
	not_ok "error names the unresolved kfunc: $out"

cp "$RAW" "$T/c.ko"
check_fails "refuses when resolve_btfids does nothing" \
	env RESOLVE_BTFIDS=/bin/true "$MODBTF" "$T/c.ko"
cp "$RAW" "$T/d.ko"
check_fails "refuses a missing vmlinux" env VMLINUX=/nonexistent "$MODBTF" "$T/d.ko"
check_fails "refuses a missing module" "$MODBTF" "$T/none.ko"
echo "not elf" > "$T/e.ko"
check_fails "refuses a file that is not a module" "$MODBTF" "$T/e.ko"
check_fails "refuses an unknown option" "$MODBTF" --bogus "$T/a.ko"
check_fails "refuses no arguments" "$MODBTF"
tap_done
