#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Host test of scripts/vm-run.sh itself: CMD's output and exit status come
# back, the guest kernel log stays out of CMD's output, and a kernel
# warning, a timeout or a bad setting fail the run with a clear message;
# KERNEL=6.12 boots Debian's 6.12 with the module built for it. Boots the
# VM four times. Prints TAP.
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$DIR/../.." && pwd)
. "$ROOT/selftests/lib/topo.sh"	# TAP helpers and cleanup

VMRUN=$ROOT/scripts/vm-run.sh
T=$(mktemp -d)
cleanup_add rm -rf "$T"
export ESA_VM_NO_MODULE=1

# 1. status, output, separation, read-only root, writable scratch.
rc=0
ESA_VM_OUTDIR=$T/handed "$VMRUN" 'echo out-$((6 * 7)); uname -r; touch /tmp/scratch && echo tmp-writable
	touch scripts/ro-probe 2>/dev/null || echo root-read-only
	mkdir -p "$ESA_VM_OUT/d" && echo handed-back > "$ESA_VM_OUT/d/f"
	echo "esa-vm-run-selftest marker" > /dev/kmsg; exit 7' \
	> "$T/out" 2> "$T/err" || rc=$?
sed 's/^/# /' "$T/err"
[ "$rc" = 7 ] && ok "CMD's exit status (7) comes back" || not_ok "CMD's exit status comes back (got $rc)"
grep -qx out-42 "$T/out" && ok "CMD's output comes back" || not_ok "CMD's output comes back"
grep -qx "$(cat "$ROOT/.cache/kernel-abi")" "$T/out" &&
	ok "CMD ran under the Debian 6.1 kernel" || not_ok "CMD ran under the Debian 6.1 kernel"
grep -qx tmp-writable "$T/out" && grep -qx root-read-only "$T/out" &&
	ok "host root read-only, /tmp writable" || not_ok "host root read-only, /tmp writable"
grep -qx handed-back "$T/handed/d/f" 2> /dev/null &&
	ok "files left in \$ESA_VM_OUT come back to ESA_VM_OUTDIR" ||
	not_ok "files left in \$ESA_VM_OUT come back to ESA_VM_OUTDIR"
if ! grep -q 'esa-vm-run-selftest\|Linux version' "$T/out" &&
		grep -q 'esa-vm-run-selftest marker' "$ROOT/build/vm/last-dmesg.log"; then
	ok "kernel log kept apart from CMD's output, saved to build/vm/last-dmesg.log"
else
	not_ok "kernel log kept apart from CMD's output, saved to build/vm/last-dmesg.log"
fi
grep -q 'booted in' "$T/err" && ok "boot time reported" || not_ok "boot time reported"

# 2. a kernel warning in the guest log fails an otherwise passing run.
rc=0
"$VMRUN" 'echo "WARNING: CPU: 0 PID: 1 at esa-vm-run-selftest" > /dev/kmsg; true' \
	> "$T/out" 2> "$T/err" || rc=$?
sed 's/^/# /' "$T/err"
[ "$rc" = 125 ] && grep -q 'FAIL: .*guest kernel log shows errors' "$T/err" &&
	ok "a kernel WARNING fails the run" || not_ok "a kernel WARNING fails the run (exit $rc)"

# 3. timeout.
rc=0
ESA_VM_TIMEOUT=45 "$VMRUN" 'sleep 600' > "$T/out" 2> "$T/err" || rc=$?
sed 's/^/# /' "$T/err"
[ "$rc" = 125 ] && grep -q 'FAIL: timeout' "$T/err" &&
	ok "a command past ESA_VM_TIMEOUT fails the run" ||
	not_ok "a command past ESA_VM_TIMEOUT fails the run (exit $rc)"

# 4. bad settings are refused before booting.
rc=0
ESA_VM_ACCEL=bogus "$VMRUN" true > /dev/null 2> "$T/err" || rc=$?
sed 's/^/# /' "$T/err"
[ "$rc" = 125 ] && grep -q 'ESA_VM_ACCEL must be' "$T/err" &&
	ok "a bad ESA_VM_ACCEL is refused" || not_ok "a bad ESA_VM_ACCEL is refused (exit $rc)"
rc=0
KERNEL=5.4 "$VMRUN" true > /dev/null 2> "$T/err" || rc=$?
sed 's/^/# /' "$T/err"
[ "$rc" = 125 ] && grep -q "unknown kernel series '5.4' (supported: 6.1 6.12)" "$T/err" &&
	ok "an unknown KERNEL is refused" || not_ok "an unknown KERNEL is refused (exit $rc)"

# 5. each kernel after the default boots with its own build of the module
# loaded (make check builds it), which reports the project's version.
for k in $("$ROOT/scripts/kabi.sh" --list | cut -s -d' ' -f2-); do
	rc=0
	KERNEL=$k ESA_VM_NO_MODULE=0 "$VMRUN" 'uname -r; cat /sys/module/esa/version' \
		> "$T/out" 2> "$T/err" || rc=$?
	sed 's/^/# /' "$T/err"
	[ "$rc" = 0 ] && [ "$(head -n1 "$T/out")" = "$("$ROOT/scripts/kabi.sh" "$k")" ] &&
		ok "KERNEL=$k boots Debian's $k ($(head -n1 "$T/out"))" ||
		not_ok "KERNEL=$k boots Debian's $k (exit $rc, $(head -n1 "$T/out"))"
	[ "$(sed -n 2p "$T/out")" = "$(cat "$ROOT/VERSION")" ] &&
		ok "KERNEL=$k: the module is loaded and reports VERSION" ||
		not_ok "KERNEL=$k: the module is loaded and reports VERSION (got '$(sed -n 2p "$T/out")')"
done
tap_done
