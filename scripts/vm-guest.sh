#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Second stage of the test VM, run by scripts/vm-init.sh as root under the
# host's bash, chrooted into the host's (read-only) root.
#
# usage: vm-guest.sh RUNDIR
# RUNDIR (shared read-write with scripts/vm-run.sh) holds:
#   in:  cmd (the command, run with bash), env (exported variables)
#   out: started (written just before cmd runs), output (its stdout and
#        stderr), status (its exit status), dmesg (the kernel log at the end),
#        out/ (files cmd leaves in $ESA_VM_OUT, handed back to the host)
# Loads the modules tests need, then the project's module unless
# ESA_VM_NO_MODULE=1, runs cmd from the repository root.
set -u
RUN=$1
REPO=$(cd "$(dirname "$0")/.." && pwd)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8
# shellcheck source=/dev/null
. "$RUN/env"

finish() { # status
	echo "$1" > "$RUN/status.tmp" && mv "$RUN/status.tmp" "$RUN/status"
	dmesg > "$RUN/dmesg" 2>&1
	sync
	exit 0
}
setup_fail() {
	echo "vm-guest: $*" | tee -a "$RUN/output" > /dev/kmsg
	finish 125
}

echo "vm-guest: setting up" > /dev/kmsg
ip link set lo up

# veth for every network test; the rest only if this kernel has them
# (bridge: a segment of several hosts behind one switch port).
# (one modprobe process: every exec costs over 9p under TCG)
modprobe -a -q veth sch_netem sch_tbf ifb cls_bpf sch_ingress bridge 2> /dev/null
[ -d /sys/module/veth ] || setup_fail "modprobe veth failed"

if [ "${ESA_VM_NO_MODULE:-0}" != 1 ]; then
	# The module built for this kernel (kmod/Makefile).
	ko=${ESA_VM_MODULE:-build/kmod/$(uname -r)/esa.ko}
	case $ko in /*) ;; *) ko=$REPO/$ko ;; esac
	[ -f "$ko" ] || setup_fail "no $ko: build the module for $(uname -r) with 'make kmod KERNEL=SERIES' (scripts/kabi.sh --list), or set ESA_VM_NO_MODULE=1"
	insmod "$ko" || setup_fail "insmod $ko failed (see the kernel log)"
	echo "vm-guest: loaded $ko" > /dev/kmsg
fi

cd "$REPO" || setup_fail "cannot cd to $REPO"
mkdir -p "$RUN/out" || setup_fail "cannot create $RUN/out"
export ESA_VM_OUT=$RUN/out
date +%s.%N > "$RUN/started"
bash "$RUN/cmd" >> "$RUN/output" 2>&1 < /dev/null
finish $?
