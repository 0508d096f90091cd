#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A module whose kfuncs could not be registered must not load: without
# module BTF (6.1 would register nothing and return 0) and with an
# unresolved .BTF_ids set, insmod fails and the kernel log says why.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
need_module
KO=build/kmod/$(uname -r)/esa.ko	# the module for this kernel (kmod/Makefile)
TMP=$(mktemp -d)
trap 'grep -q "^esa " /proc/modules || insmod "$KO"; rm -rf "$TMP"' EXIT

reset_module > /dev/null 2>&1
rmmod_retry || { not_ok "rmmod esa"; tap_done; }

# insmod_fails DESC KO LOGLINE: insmod refused, LOGLINE in the kernel log
insmod_fails() {
	local out n log
	# only new kernel log lines (never clear it: vm-run checks it all)
	n=$(dmesg | wc -l)
	if out=$(insmod "$2" 2>&1); then
		not_ok "$1: insmod succeeded"
		rmmod esa
		return
	fi
	log=$(dmesg | tail -n +$((n + 1)))
	if grep -qF "$3" <<< "$log" && grep -q 'Invalid module format' <<< "$out" &&
	   ! grep -q '^esa ' /proc/modules; then
		ok "$1: refused"
	else
		not_ok "$1: want 'Invalid module format' and '$3' in the kernel log: $(flat "$out") / $(flat "$log")"
	fi
}

cp "$KO" "$TMP/nobtf.ko"
objcopy --remove-section=.BTF "$TMP/nobtf.ko"
insmod_fails "module without BTF" "$TMP/nobtf.ko" \
	"esa: module has no BTF (.BTF section); kfuncs cannot be registered"

# Zero the count word of the kfunc set, as if resolve_btfids never ran.
cp "$KO" "$TMP/noids.ko"
sec=$(readelf -SW "$KO" | awk '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 == ".BTF_ids" { print $4 }')
idx=$(readelf -SW "$KO" | sed -n 's/^ *\[ *\([0-9]*\)\] \.BTF_ids .*/\1/p')
val=$(readelf -sW "$KO" | awk -v i="$idx" '$7 == i && $8 == "__BTF_ID__set8__esa_kfunc_ids" { print $2 }')
if [ -n "$sec" ] && [ -n "$val" ]; then
	printf '\0\0\0\0' | dd of="$TMP/noids.ko" bs=1 seek=$((16#$sec + 16#$val)) conv=notrunc 2> /dev/null
	insmod_fails "module with an unresolved kfunc set" "$TMP/noids.ko" \
		"esa: XDP kfunc id set holds 0 of 5 ids: .BTF_ids not resolved"
else
	not_ok "find the kfunc set in $KO (section '$sec', symbol '$val')"
fi

expect "the real module loads again" 0 '^$' insmod "$KO"
expect "and serves netlink" 0 '^policy esa$' $AGGCTL policy show
tap_done