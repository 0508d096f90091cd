#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A step of an esa-bench run that fails names itself: a worker or a PS
# exiting non-zero is reported with its job, its role, its exit status and
# its last words, at once and again after the table, and the run exits
# non-zero (issue 17: `make demo VM=1` ended with status 1 and nothing said
# why). The workers and PS are stand-ins that fail at once, so no traffic
# is needed; the topology and the switch are real.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/lib/tap.sh"
tmp=$(mktemp -d /tmp/esa-bench-fail.XXXXXX); trap 'rm -rf "$tmp"' EXIT

printf '#!/bin/sh\necho "stand-in worker: no route to the PS" >&2\nexit 3\n' > "$tmp/job"
printf '#!/bin/sh\necho "stand-in PS: address in use" >&2\nexit 5\n' > "$tmp/ps"
chmod +x "$tmp/job" "$tmp/ps"
printf 'switch slots=8 window=8 values=256\njob id=4 workers=2 size=4K iterations=1\n' > "$tmp/s.scn"

rc=0
ESA_JOB=$tmp/job ESA_PS=$tmp/ps "$ROOT/tools/esa-bench/esa-bench" --quiet --policies esa \
	-o "$tmp/out" "$tmp/s.scn" > "$tmp/log" 2>&1 || rc=$?
sed 's/^/# /' "$tmp/log"
check "the run exits non-zero" [ "$rc" != 0 ]
check "a failing worker is named with its exit status" \
	grep -q '^esa-bench: FAILED: esa run 1: job 4 worker 1 (esa-job) exited with status 3$' "$tmp/log"
check "... and its last words" grep -q '^esa-bench:   stand-in worker: no route to the PS$' "$tmp/log"
check "a failing PS is named with its exit status" \
	grep -q '^esa-bench: FAILED: esa run 1: job 4 PS (esa-ps) exited with status 5$' "$tmp/log"
check "... and its last words" grep -q '^esa-bench:   stand-in PS: address in use$' "$tmp/log"
check "the failed steps are listed again after the table" \
	grep -q '^esa-bench: [0-9]* step(s) failed:$' "$tmp/log"
check "the list is the last thing printed" \
	grep -q '^esa-bench:   esa run 1: ' <(tail -n 1 "$tmp/log")
check "the summary's own failure is not a step of its own" \
	bash -c "! grep -q 'summary.py' '$tmp/log'"

# A PS that never sees its job end (as when the last completed sum's copy
# to it is lost) is stopped once the workers are done, not waited for
# until its deadline; it is not a failed step.
printf '#!/bin/sh\nexit 0\n' > "$tmp/job"
printf '#!/bin/bash\ntrap "exit 0" TERM\nsleep 1000 & wait\n' > "$tmp/ps"
SECONDS=0 rc=0
ESA_JOB=$tmp/job ESA_PS=$tmp/ps "$ROOT/tools/esa-bench/esa-bench" --quiet --policies esa \
	-o "$tmp/out2" "$tmp/s.scn" > "$tmp/log" 2>&1 || rc=$?
took=$SECONDS
sed 's/^/# /' "$tmp/log"
check "a PS still waiting 15 s after its workers ended is stopped (run took ${took} s)" \
	[ "$took" -lt 120 ]
check "... with a note" grep -q "^esa-bench: note: esa run 1: job 4's PS had not seen the job's last sequence" \
	"$tmp/log"
check_fails "... and is not a failed step" grep -q 'PS (esa-ps) exited' "$tmp/log"
tap_done
