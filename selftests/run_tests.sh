#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test runner of `make check`.
#
# Every area selftests/<area>/ declares its tests in its Makefile, as
# kselftest does (selftests/lib.mk): TEST_GEN_PROGS (built programs) and
# TEST_PROGS (scripts) run on this host, TEST_GEN_PROGS_VM and
# TEST_PROGS_VM inside the Debian VM (all in one boot) on the kernel
# $KERNEL selects (scripts/kabi.sh; the default 6.1), and those of them
# in TEST_VM_EVERY_KERNEL, the module's, once more in one boot of each
# other kernel (6.12); a VM result's name starts with its kernel
# ("vm 6.12: selftests/kmod/..."). A test's arguments, if any, are
# <name>_ARGS (or <name>_VM_ARGS). Each prints TAP /
# KTAP result lines ("ok N desc", "not ok N desc", "ok N desc # SKIP why",
# "ok N desc # XFAIL issue N: what"). This runner renumbers them into one
# TAP stream and ends with the closing line "N passed, N failed, N skipped"
# that CI reads.
#
# Counting: a SKIP is skipped; an XFAIL (a check failing because of a
# known bug) is passed only if its reason names the tracked issue
# ("issue N"), else failed, and every XFAIL is listed again before the
# closing line; an XPASS or any "not ok" is failed, "# TODO" included. A
# test that exits non-zero without a failing result line, prints no result,
# or runs past its timeout counts as one failure: a crash never passes.
#
# Timeout of each test: ESA_TEST_TIMEOUT if set, else timeout=SECONDS from
# selftests/<area>/settings (kselftest's file), else 900 s.
#
# usage: run_tests.sh [--host-only | --vm-only | --inner LIST] [FILTER]
#        --vm-only: the whole VM list, on $KERNEL's kernel only
#        --inner LIST: run LIST (host, vm, vm-every-kernel) here, no VM
#        FILTER: only tests whose command line contains it
# ESA_SELFTESTS=DIR scans DIR/*/ instead of selftests/ (the runner's own
# test, selftests/runner/test_run_tests.sh).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
AREAS=${ESA_SELFTESTS:-selftests}

DEFAULT_TIMEOUT=900
mode=all
case "${1:-}" in
--host-only) mode=host; shift ;;
--vm-only) mode=vm; shift ;;
--inner) mode=inner; kind=$2; shift 2 ;;
esac
filter=${1:-}

n=0 pass=0 fail=0 skip=0
xfails=()

result() { # status("ok"|"not ok") description
	local desc=$2
	n=$((n + 1))
	if [ "$1" = "not ok" ]; then
		fail=$((fail + 1))
	elif [[ "$desc" == *"# SKIP"* ]]; then
		skip=$((skip + 1))
	elif [[ "$desc" == *"# XFAIL"* ]]; then
		if [[ "${desc##*# XFAIL}" =~ [Ii]ssue\ [0-9]+ ]]; then
			pass=$((pass + 1))
			xfails+=("$desc")
		else
			echo "not ok $n - $desc (an XFAIL must name its tracked issue)"
			fail=$((fail + 1))
			return
		fi
	else
		pass=$((pass + 1))
	fi
	echo "$1 $n - $desc"
}

# Feed the TAP lines of one test program into result(); echo diagnostics.
tally() { # name output-file exit-status
	local name=$1 out=$2 rc=$3 seen=0 failed=0 line st desc
	while IFS= read -r line; do
		if [[ "$line" =~ ^(not\ ok|ok)\ +[0-9]+\ *-?\ *(.*)$ ]]; then
			st=${BASH_REMATCH[1]} desc=${BASH_REMATCH[2]}
			seen=1
			[ "$st" = "not ok" ] && failed=1
			result "$st" "$name: $desc"
		elif [[ "$line" =~ ^(TAP version|KTAP version|1\.\.) ]]; then
			:
		else
			echo "# $line"
		fi
	done < "$out"
	if [ "$seen" = 0 ]; then
		result "not ok" "$name: printed no test result (exit $rc)"
	elif [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
		result "not ok" "$name: exited with status $rc"
	fi
}

# area_timeout DIR: the timeout of DIR's tests in seconds.
area_timeout() {
	local t
	t=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$1/settings" 2>/dev/null | tail -n1)
	echo "${ESA_TEST_TIMEOUT:-${t:-$DEFAULT_TIMEOUT}}"
}

# The test command lines of one area (kind host or vm), from its Makefile.
area_tests() { # DIR KIND
	make -s --no-print-directory -C "$1" "print-tests-$2" 2>/dev/null
}

run_list() { # kind: host | vm | vm-every-kernel
	local dir cmd out rc t0 tmo tests
	out=$(mktemp)
	for dir in "$AREAS"/*/; do
		dir=${dir%/}
		[ -f "$dir/Makefile" ] || continue
		tmo=$(area_timeout "$dir")
		# (a here-string, not process substitution: the VM has no /dev/fd)
		tests=$(area_tests "$dir" "$1")
		while IFS= read -r cmd; do
			[ -n "$cmd" ] || continue
			[ -n "$filter" ] && [[ "$cmd" != *"$filter"* ]] && continue
			t0=$SECONDS
			timeout --kill-after=10 "$tmo" bash -c "$cmd" > "$out" 2>&1 < /dev/null
			rc=$?
			echo "# $cmd: exit $rc after $((SECONDS - t0)) s"
			[ "$rc" = 124 ] && echo "not ok 1 timed out after ${tmo}s ($dir/settings)" >> "$out"
			tally "$cmd" "$out" "$rc"
		done <<< "$tests"
	done
	rm -f "$out"
}

run_vm() { # kernel-series list(vm | vm-every-kernel)
	local out rc
	out=$(mktemp)
	# One boot runs the whole list; vm-run fails on boot errors and on
	# any oops/BUG/WARN in the guest log.
	# The whole VM list under TCG takes minutes; allow for a loaded machine.
	KERNEL=$1 ESA_VM_TIMEOUT=${ESA_VM_TIMEOUT:-3600} \
		"$ROOT/scripts/vm-run.sh" "selftests/run_tests.sh --inner $2 $filter" > "$out" 2>&1
	rc=$?
	tally "vm $1" "$out" "$rc"
	rm -f "$out"
}

# The whole VM list on $KERNEL's kernel (the default: the first series),
# the module's VM tests on each other one.
KERNELS=$("$ROOT/scripts/kabi.sh" --list)
VM_KERNEL=${KERNEL:-${KERNELS%% *}}
run_vm_all() {
	local k
	run_vm "$VM_KERNEL" vm
	for k in $KERNELS; do
		[ "$k" = "$VM_KERNEL" ] || run_vm "$k" vm-every-kernel
	done
}

echo "TAP version 13"
case $mode in
inner) run_list "$kind" ;;
host) run_list host ;;
vm) run_vm "$VM_KERNEL" vm ;;
all) run_list host; run_vm_all ;;
esac
echo "1..$n"
[ "$mode" = inner ] && exit $((fail > 0))
if [ ${#xfails[@]} -gt 0 ]; then
	echo "# ${#xfails[@]} known bug(s), counted as passed while their issue is open:"
	printf '#   %s\n' "${xfails[@]}"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ] && [ "$n" -gt 0 ]
