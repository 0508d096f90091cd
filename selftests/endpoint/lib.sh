# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the endpoint end-to-end tests: TAP output, the tool
# paths, and running one job's workers plus its PS while collecting their
# outputs. Sourced, not run.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ESA_JOB=$ROOT/build/tools/esa-job
ESA_PS=$ROOT/build/tools/esa-ps
TMP=$(mktemp -d /tmp/esa-endpoint.XXXXXX)
T_N=0
T_FAIL=0

ok() { T_N=$((T_N + 1)); echo "ok $T_N - $*"; }
nok() { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $*"; }
skip() { T_N=$((T_N + 1)); echo "ok $T_N - $1 # SKIP $2"; }
check() { # description command...
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
diag() { sed 's/^/# /' "$@"; }
finish() { echo "1..$T_N"; exit $((T_FAIL > 0)); }

require_tools() {
	if [ ! -x "$ESA_JOB" ] || [ ! -x "$ESA_PS" ]; then
		nok "esa-job and esa-ps are built (run make)"
		finish
	fi
}

# json_get FILE EXPR: evaluate a python expression on the JSON in FILE (j).
json_get() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
