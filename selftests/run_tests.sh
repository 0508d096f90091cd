#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The test runner of `make check`.
#
# Tests are commands listed one per line (relative to the repository root)
# in selftests/*/host.tests (run on this host) and selftests/*/vm.tests (run
# inside the Debian 6.1 VM, all in one boot). Each prints TAP result lines
# ("ok N desc", "not ok N desc", "ok N desc # SKIP why"). This runner
# renumbers them into one TAP stream and ends with the closing line
# "N passed, N failed, N skipped" that CI reads. A test that exits non-zero
# without a failing result line, or prints no result at all, counts as one
# failure: a crash never passes silently.
#
# usage: run_tests.sh [--host-only | --vm-only | --inner LISTKIND] [FILTER]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

TEST_TIMEOUT=${ESA_TEST_TIMEOUT:-900}
mode=all
case "${1:-}" in
--host-only) mode=host; shift ;;
--vm-only) mode=vm; shift ;;
--inner) mode=inner; kind=$2; shift 2 ;;
esac
filter=${1:-}

n=0 pass=0 fail=0 skip=0

# A "not ok ... # TODO reason" is a known, documented bug (TAP's TODO): it
# is shown and counted with the skips, not as a failure.
result() { # status("ok"|"not ok") description
	n=$((n + 1))
	echo "$1 $n - $2"
	if [ "$1" = "not ok" ] && [[ "$2" == *"# TODO"* ]]; then
		skip=$((skip + 1))
	elif [ "$1" = "not ok" ]; then
		fail=$((fail + 1))
	elif [[ "$2" == *"# SKIP"* ]]; then
		skip=$((skip + 1))
	else
		pass=$((pass + 1))
	fi
}

# Feed TAP lines of one test program into result(); echo diagnostics.
tally() { # name output-file exit-status
	local name=$1 out=$2 rc=$3 seen=0 failed=0 line st desc
	while IFS= read -r line; do
		if [[ "$line" =~ ^(not\ ok|ok)\ +[0-9]+\ *-?\ *(.*)$ ]]; then
			st=${BASH_REMATCH[1]} desc=${BASH_REMATCH[2]}
			seen=1
			[ "$st" = "not ok" ] && [[ "$desc" != *"# TODO"* ]] && failed=1
			result "$st" "$name: $desc"
		elif [[ "$line" =~ ^(TAP version|1\.\.) ]]; then
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

run_list() { # kind: host | vm
	local list cmd out rc t0
	out=$(mktemp)
	for list in selftests/*/"$1".tests; do
		[ -e "$list" ] || continue
		while IFS= read -r cmd; do
			case "$cmd" in ''|'#'*) continue ;; esac
			[ -n "$filter" ] && [[ "$cmd" != *"$filter"* ]] && continue
			t0=$SECONDS
			timeout --kill-after=10 "$TEST_TIMEOUT" bash -c "$cmd" > "$out" 2>&1 < /dev/null
			rc=$?
			echo "# $cmd: exit $rc after $((SECONDS - t0)) s"
			[ "$rc" = 124 ] && echo "not ok 1 timed out after ${TEST_TIMEOUT}s" >> "$out"
			tally "$cmd" "$out" "$rc"
		done < "$list"
	done
	rm -f "$out"
}

run_vm() {
	local out rc
	out=$(mktemp)
	# One boot runs the whole VM list; vm-run fails on boot errors and on
	# any oops/BUG/WARN in the guest log.
	# The whole VM list under TCG takes minutes; allow for a loaded machine.
	ESA_VM_TIMEOUT=${ESA_VM_TIMEOUT:-3600} \
		"$ROOT/scripts/vm-run.sh" "selftests/run_tests.sh --inner vm $filter" > "$out" 2>&1
	rc=$?
	tally "vm" "$out" "$rc"
	rm -f "$out"
}

echo "TAP version 13"
case $mode in
inner) run_list "$kind" ;;
host) run_list host ;;
vm) run_vm ;;
all) run_list host; run_vm ;;
esac
echo "1..$n"
[ "$mode" = inner ] && exit $((fail > 0))
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ] && [ "$n" -gt 0 ]
