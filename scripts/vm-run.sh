#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run a command as root in the Debian test VM (`make vm-run CMD='...'`,
# `make vm-run KERNEL=6.12 CMD='...'`).
#
# usage: [KERNEL=SERIES] scripts/vm-run.sh "CMD"     (default CMD: uname -a)
#
# KERNEL picks the kernel series (scripts/kabi.sh: 6.1, the default, or
# 6.12). Boots .cache/kernel/$KABI/boot/vmlinuz-$KABI (from `make deps`) in
# qemu-system-x86_64 with a busybox initramfs (scripts/vm-init.sh) that
# mounts this host's root read-only over 9p and chroots into it, so every
# host tool and build output is there. /tmp, /run, /var/tmp are fresh tmpfs;
# /sys/fs/bpf is a bpffs. scripts/vm-guest.sh then loads veth (and
# sch_netem, ...), inserts the project's module (build/kmod/$KABI/esa.ko,
# `make kmod KERNEL=SERIES`, or $ESA_VM_MODULE) unless ESA_VM_NO_MODULE=1, and runs
# CMD under bash from the repository root. CMD's output is printed here;
# the exit status is CMD's.
#
# The run fails (status 125, with a "vm-run: FAIL" line on stderr) when
# the VM does not boot, CMD does not finish within ESA_VM_TIMEOUT seconds
# (default 1500), or the guest kernel log shows an oops, BUG, WARNING,
# panic, lockup, "cannot register kfuncs" or "failed to validate module
# BTF". A test that provokes such a message on purpose brackets it in the
# kernel log with "esa-vm-allow-begin: TEXT" / "esa-vm-allow-end" (write
# them to /dev/kmsg); lines containing TEXT in between are not failures.
# The guest kernel log is kept apart from CMD's output and saved to
# build/vm/last-dmesg.log (the serial console: build/vm/last-console.log).
#
# CMD finds a writable directory in $ESA_VM_OUT; with ESA_VM_OUTDIR=DIR set
# here, what CMD left there is copied to DIR on this host when it ends.
#
# Environment: ESA_VM_TIMEOUT, ESA_VM_NO_MODULE, ESA_VM_MODULE, ESA_VM_ACCEL
# (kvm|tcg, default: kvm if a probe shows it works, else tcg), ESA_VM_MEM
# (default 2G), ESA_VM_SMP (default 2), ESA_VM_PVH=0 (boot the compressed
# vmlinuz instead of the same kernel's vmlinux). Every ESA_* variable is passed on
# to CMD.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=$ROOT/.cache
LOGDIR=$ROOT/build/vm
CMD=${1:-uname -a}
TIMEOUT=${ESA_VM_TIMEOUT:-1500}

say() { echo "vm-run: $*" >&2; }
die() { echo "vm-run: FAIL: $*" >&2; exit 125; }

SERIES=${KERNEL:-$("$ROOT/scripts/kabi.sh" --list | cut -d" " -f1)}
KABI=$("$ROOT/scripts/kabi.sh" "$SERIES" 2>&1) || die "$KABI"
[ -n "$KABI" ] || die "the ABI of kernel $SERIES is unknown: run 'make deps'"
KDIR=$CACHE/kernel/$KABI
KIMAGE=$KDIR/boot/vmlinuz-$KABI
MODS=$KDIR/lib/modules/$KABI
[ -f "$KIMAGE" ] || die "no $KIMAGE: run 'make deps'"
# The same kernel, uncompressed (extracted by `make deps`): qemu boots it
# directly through its PVH entry point, which skips the xz decompression
# that takes TCG about 15 s.
if [ -s "$KDIR/vmlinux" ] && [ "${ESA_VM_PVH:-1}" = 1 ]; then
	KIMAGE=$KDIR/vmlinux
fi
command -v qemu-system-x86_64 > /dev/null || die "qemu-system-x86_64 missing: run 'make deps'"
BUSYBOX=$(command -v busybox) || die "busybox missing: run 'make deps'"
case $ROOT in
/dev/*|/proc/*|/sys/*)
	die "the repository ($ROOT) must not live under /dev, /proc or /sys" ;;
esac

# --- initramfs: rebuilt only when one of its inputs changed ---
# What mounting the host root over 9p needs: these modules and, before
# each, the modules it depends on, in an order that loads (modules.dep
# lists a module's dependencies with the deepest last). Those built into
# the kernel are not in modules.dep and need nothing; 6.12 builds virtio
# in and has no fscache module (merged into netfs in 6.8, commit
# 915cd30cdea8).
INITRD_MODS="virtio_pci 9pnet_virtio 9p"
initrd_paths() {
	local m
	for m in $INITRD_MODS; do
		grep -q "/$m\.ko[.a-z]*\$" "$MODS/modules.builtin" && continue
		awk -v m="/$m.ko" '
			{ p = $1; sub(/:$/, "", p); n = p; sub(/\.ko(\.[a-z]+)?$/, ".ko", n) }
			substr(n, length(n) - length(m) + 1) == m {
				for (i = NF; i >= 2; i--) print $i
				print p; found = 1; exit
			}
			END { if (!found) print "MISSING:" m }' "$MODS/modules.dep"
	done | awk '!seen[$0]++'
}
initrd_inputs() {
	echo "$KABI $BUSYBOX $(stat -c %Y-%s "$BUSYBOX")"
	sha256sum "$ROOT/scripts/vm-init.sh"
	initrd_paths
}
# Named by its inputs: trees with different scripts/vm-init.sh sharing
# one .cache each keep their own.
key=$(initrd_inputs | sha256sum | cut -c1-16)
INITRD=$CACHE/vm/initramfs-$KABI-$key.cpio.gz
if [ ! -s "$INITRD" ]; then
	say "building initramfs"
	stage=$(mktemp -d)
	mkdir -p "$stage"/{bin,modules,proc,sys,dev,newroot}
	cp "$BUSYBOX" "$stage/bin/busybox"
	cp "$ROOT/scripts/vm-init.sh" "$stage/init"
	chmod 755 "$stage/init"
	paths=$(initrd_paths)
	for path in $paths; do
		case $path in MISSING:*)
			rm -rf "$stage"; die "module ${path#MISSING:/} not in the $KABI image" ;;
		esac
		# busybox insmod takes plain modules: uncompress here.
		m=$(basename "$path"); m=${m%%.ko*}
		case $path in
		*.ko) cp "$MODS/$path" "$stage/modules/$m.ko" ;;
		*.ko.xz) xz -dc "$MODS/$path" > "$stage/modules/$m.ko" ;;
		*.ko.zst) zstd -qdc "$MODS/$path" > "$stage/modules/$m.ko" ;;
		*.ko.gz) gzip -dc "$MODS/$path" > "$stage/modules/$m.ko" ;;
		*) rm -rf "$stage"; die "$path: unknown module compression" ;;
		esac || { rm -rf "$stage"; die "cannot unpack $path"; }
		echo "$m" >> "$stage/modules/order"
	done
	mkdir -p "$CACHE/vm"
	( cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$INITRD.tmp.$$"
	rm -rf "$stage"
	mv "$INITRD.tmp.$$" "$INITRD"
fi

# --- accelerator: KVM only if it really runs a guest, else TCG ---
# /dev/kvm may exist and even initialise while guests never get to run
# (seen here with nested virtualisation), so the probe boots the kernel
# for a few seconds and wants its banner on the console. The answer is
# cached per host kernel and qemu version.
kvm_probe() {
	local out
	out=$(mktemp)
	timeout 8 qemu-system-x86_64 -accel kvm -cpu host -m 256M -nodefaults \
		-display none -no-reboot -nic none -serial "file:$out" \
		-kernel "$KIMAGE" -append "console=ttyS0 panic=-1" \
		> /dev/null 2>&1 < /dev/null
	grep -q 'Linux version' "$out"
	local rc=$?
	rm -f "$out"
	return $rc
}
accel=${ESA_VM_ACCEL:-}
if [ -z "$accel" ]; then
	probe=$CACHE/vm/kvm-probe
	qemu_version=$(qemu-system-x86_64 --version) # whole, not `| head` (pipefail)
	probe_key="$(uname -r) ${qemu_version%%$'\n'*}"
	if [ "$(head -n1 "$probe" 2>/dev/null)" != "$probe_key" ]; then
		result=tcg
		[ -w /dev/kvm ] && kvm_probe && result=kvm
		mkdir -p "$CACHE/vm"
		printf '%s\n%s\n' "$probe_key" "$result" > "$probe"
		say "KVM probe: using $result"
	fi
	accel=$(sed -n 2p "$probe")
fi
case $accel in
kvm) ACCEL=(-accel kvm -cpu host) ;;
tcg) ACCEL=(-accel tcg,thread=multi -cpu max) ;;
*) die "ESA_VM_ACCEL must be kvm or tcg, not '$accel'" ;;
esac

# --- run directory shared read-write with the guest ---
# Remove run directories of runs that were killed (their vm-run is gone).
for d in /tmp/esa-vm.*; do
	[ -f "$d/pid" ] || continue
	kill -0 "$(cat "$d/pid")" 2>/dev/null || rm -rf "$d"
done
RUN=$(mktemp -d /tmp/esa-vm.XXXXXX)
echo $$ > "$RUN/pid"
QEMU_PID=
TAIL_PID=
cleanup() {
	[ -n "$TAIL_PID" ] && kill "$TAIL_PID" 2>/dev/null
	[ -n "$QEMU_PID" ] && kill -9 "$QEMU_PID" 2>/dev/null
	rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

printf '%s\n' "$CMD" > "$RUN/cmd"
: > "$RUN/output"
env | awk -F= '/^ESA_[A-Za-z0-9_]*=/ { print $1 }' | while read -r v; do
	printf 'export %s=%q\n' "$v" "${!v}"
done > "$RUN/env"

mkdir -p "$LOGDIR"
# Logs live in the run directory (several runs may overlap) and are
# copied to build/vm/ when the run ends.
CONSOLE=$RUN/console.log
DMESG=$RUN/dmesg.log

say "booting $KABI ($accel), timeout ${TIMEOUT}s"
t0=$(date +%s.%N)
qemu-system-x86_64 "${ACCEL[@]}" -m "${ESA_VM_MEM:-2G}" -smp "${ESA_VM_SMP:-2}" \
	-nodefaults -display none -no-reboot -nic none \
	-serial "file:$CONSOLE" \
	-kernel "$KIMAGE" -initrd "$INITRD" \
	-append "console=ttyS0,115200 ignore_loglevel panic=-1 rdinit=/init esa_repo=$ROOT esa_abi=$KABI" \
	-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$RUN,mount_tag=esavm,security_model=none" \
	> "$RUN/qemu.log" 2>&1 < /dev/null &
QEMU_PID=$!

# Stream CMD's output while it runs.
tail -n +1 -f "$RUN/output" &
TAIL_PID=$!

timed_out=0 boot_s=
while kill -0 "$QEMU_PID" 2>/dev/null; do
	if [ -z "$boot_s" ] && [ -e "$RUN/started" ]; then
		boot_s=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')
		say "booted in ${boot_s}s; running: $CMD"
	fi
	if awk -v a="$(date +%s)" -v b="$t0" -v t="$TIMEOUT" 'BEGIN { exit !(a - b > t) }'; then
		timed_out=1
		kill -9 "$QEMU_PID" 2>/dev/null
		break
	fi
	sleep 0.2
done
qemu_rc=0
wait "$QEMU_PID" 2>/dev/null || qemu_rc=$?
QEMU_PID=
sleep 0.3	# let tail print the last lines
kill "$TAIL_PID" 2>/dev/null; wait "$TAIL_PID" 2>/dev/null || true
TAIL_PID=

# The kernel log: the guest's own dmesg if it got that far, else the
# serial console (which has every message: ignore_loglevel).
if [ -s "$RUN/dmesg" ]; then
	cp "$RUN/dmesg" "$DMESG"
else
	tr -d '\r' < "$CONSOLE" > "$DMESG" 2>/dev/null || : > "$DMESG"
fi
tr -d '\r' < "$CONSOLE" > "$CONSOLE.tmp" 2>/dev/null && mv "$CONSOLE.tmp" "$CONSOLE"
cp "$CONSOLE" "$LOGDIR/last-console.log.$$" && mv "$LOGDIR/last-console.log.$$" "$LOGDIR/last-console.log"
cp "$DMESG" "$LOGDIR/last-dmesg.log.$$" && mv "$LOGDIR/last-dmesg.log.$$" "$LOGDIR/last-dmesg.log"
CONSOLE=$LOGDIR/last-console.log
DMESG=$LOGDIR/last-dmesg.log

if [ -n "${ESA_VM_OUTDIR:-}" ] && [ -d "$RUN/out" ]; then
	mkdir -p "$ESA_VM_OUTDIR" && cp -R "$RUN/out/." "$ESA_VM_OUTDIR/" ||
		say "cannot copy the guest's \$ESA_VM_OUT to $ESA_VM_OUTDIR"
fi

# Kernel trouble: lines matching BAD, unless inside an allow bracket
# whose TEXT they contain.
BAD='Oops|BUG:|WARNING:|Kernel panic|general protection fault|Call Trace:|soft lockup|hard LOCKUP|rcu_sched detected stall|rcu: INFO|blocked for more than|cannot register kfuncs|failed to validate module BTF|UBSAN:|KASAN:|vm-init: FAILED'
trouble=$(cat "$DMESG" "$CONSOLE" 2>/dev/null | awk -v bad="$BAD" '
	/esa-vm-allow-begin: / { allow = $0; sub(/.*esa-vm-allow-begin: /, "", allow); next }
	/esa-vm-allow-end/ { allow = ""; next }
	$0 ~ bad && !(allow != "" && index($0, allow)) { print }' | sort -u | awk 'NR <= 20')

fail=
if [ "$timed_out" = 1 ]; then
	fail="timeout: CMD did not finish within ${TIMEOUT}s (ESA_VM_TIMEOUT)"
elif [ -z "$boot_s" ] && [ ! -e "$RUN/status" ]; then
	fail="the VM did not boot to the command (qemu exit $qemu_rc): see $CONSOLE"
	sed 's/^/vm-run: qemu: /' "$RUN/qemu.log" >&2
elif [ ! -s "$RUN/status" ]; then
	fail="the guest stopped without reporting CMD's status (crash or panic?): see $CONSOLE"
fi
if [ -n "$trouble" ]; then
	echo "$trouble" | sed 's/^/vm-run: guest kernel: /' >&2
	fail="${fail:+$fail; }the guest kernel log shows errors (full log: $DMESG)"
fi
if [ -n "$fail" ]; then
	tail -n 20 "$CONSOLE" 2>/dev/null | sed 's/^/vm-run: console: /' >&2
	die "$fail"
fi

rc=$(cat "$RUN/status")
t1=$(date +%s.%N)
say "done in $(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.1f", a - b }')s, status $rc (kernel log: $DMESG)"
exit "$rc"
