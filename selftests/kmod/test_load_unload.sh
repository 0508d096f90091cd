#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Load and unload the module 20 times, each time with jobs configured
# (and their accounting live); every round must come back empty and
# clean. A module held by a loaded kfunc program must refuse removal.
cd "$(dirname "$0")/../.." || exit 1
. selftests/kmod/lib.sh
need_module
KO=build/kmod/$(uname -r)/esa.ko	# the module for this kernel (kmod/Makefile)

fails=0
for round in $(seq 1 20); do
	err=
	grep -q '^esa ' /proc/modules || insmod "$KO" || err="insmod failed"
	if [ -z "$err" ]; then
		n=$($AGGCTL job show | wc -l)
		[ "$n" = 0 ] || err="fresh module has $n jobs"
	fi
	for id in 1 2 3; do
		[ -z "$err" ] || break
		$AGGCTL job add id $((round * 3 + id)) ps 10.5.0.1:47000 \
			worker 10.5.0.$id:5000 quota 5 || err="job add failed"
	done
	[ -z "$err" ] && $AGGCTL policy set static || err=${err:-"policy set failed"}
	[ -z "$err" ] && [ "$($PROBE account $((round * 3 + 1)) aggregated 4096)" = 0 ] ||
		err=${err:-"kfunc account failed"}
	[ -z "$err" ] && { rmmod_retry || err="rmmod failed"; }
	[ -z "$err" ] && grep -q '^esa ' /proc/modules && err="still loaded after rmmod"
	if [ -n "$err" ]; then
		not_ok "round $round: $err"
		fails=$((fails + 1))
	fi
done
[ "$fails" = 0 ] && ok "20 load/unload rounds with jobs configured"
grep -q '^esa ' /proc/modules || insmod "$KO"
expect "reloaded module answers" 0 '^policy esa$' $AGGCTL policy show
expect "after unload: generic netlink family is gone and back" 0 '^$' $AGGCTL job show

# A program using the kfuncs pins the module: removal is refused
hold=/sys/fs/bpf/esa-kmod-test-$$
mkdir "$hold"
trap 'rm -rf "$hold"' EXIT
if bpftool prog load build/selftests/kmod/kfunc_probe.bpf.o "$hold/p" 2> /dev/null; then
	expect "rmmod refused while a kfunc program is loaded" 1 'in use' rmmod esa
	rm -f "$hold/p"
	expect "rmmod works once the program is gone" 0 '^$' rmmod_retry
	insmod "$KO"
else
	not_ok "bpftool could not load the kfunc program"
fi
tap_done