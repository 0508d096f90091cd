#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: the default multi-job scenario under esa, atp and static.
#
# Where the switch runs:
#   VM=1                 inside the Debian 6.1 test VM, with the esa module
#                        (scripts/vm-run.sh loads it), module flavour;
#   running kernel = the module's ABI and module loading available:
#                        insmod kmod/esa.ko here, module flavour;
#   otherwise            natively with the module-less flavour (this is said).
# Results (CSV, PNG, table) go to build/demo, or from the VM (whose view of
# the tree is read-only) through scripts/vm-run.sh's ESA_VM_OUT to
# build/demo-vm.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCENARIO=${SCENARIO:-$ROOT/tools/esa-bench/scenarios/default.scn}
# Each policy runs this often, interleaved: one run of a 2-core machine is
# noisy, the mean of three is steadier and still takes a few minutes.
REPEAT=${REPEAT:-3}
cd "$ROOT"

if [ "${1:-}" = --in-vm ]; then
	exec tools/esa-bench/esa-bench --repeat "$REPEAT" \
		-o "${ESA_VM_OUT:-/tmp}/demo" "$SCENARIO"
fi

if [ "${VM:-0}" = 1 ]; then
	echo "demo: running in the Debian 6.1 VM with the esa module (TCG: slower than native);" \
	     "results to build/demo-vm"
	rm -rf "$ROOT/build/demo-vm"
	ESA_VM_OUTDIR=$ROOT/build/demo-vm exec scripts/vm-run.sh "tools/demo.sh --in-vm"
fi

KABI=$(cat .cache/kernel-abi 2>/dev/null)
loaded_here=0
if [ -d /sys/module/esa ]; then
	echo "demo: the esa module is loaded: module flavour"
elif [ -e /proc/modules ] && [ "$(uname -r)" = "$KABI" ] && [ -e kmod/esa.ko ]; then
	echo "demo: loading kmod/esa.ko into the running kernel: module flavour"
	insmod kmod/esa.ko || { echo "demo: insmod failed" >&2; exit 1; }
	loaded_here=1
else
	echo "demo: this kernel ($(uname -r)) cannot load the esa module" \
	     "(built for $KABI): running the module-less flavour natively," \
	     "priorities from the packets (make demo VM=1 runs it with the module)"
fi
tools/esa-bench/esa-bench --repeat "$REPEAT" -o "$ROOT/build/demo" "$SCENARIO"
rc=$?
[ $loaded_here = 1 ] && { rmmod esa || echo "demo: rmmod esa failed" >&2; }
exit $rc
