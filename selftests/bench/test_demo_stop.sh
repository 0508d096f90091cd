#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo` stopped with Ctrl-C stops: esa-bench marks its results
# PARTIAL, the demo says what it was doing and runs nothing more (no
# esa-sim afterwards), exit status 130. Ctrl-C is SIGINT to the demo's
# whole process group, as a terminal sends it. Workers and PS are
# stand-ins that wait; the topology and switch are real.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/lib/tap.sh"
tmp=$(mktemp -d /tmp/esa-demo-stop.XXXXXX)
D=
trap '[ -n "$D" ] && kill -- -$D 2>/dev/null; rm -rf "$tmp"' EXIT
need_root "make demo stopped with Ctrl-C"
printf '#!/bin/sh\nsleep 30\n' > "$tmp/wait"
chmod +x "$tmp/wait"
printf 'switch slots=8 window=8 values=256 policies=esa\njob id=4 workers=2 size=4K iterations=1\n' > "$tmp/s.scn"

# Its own process group (job control), as a shell started from a terminal.
set -m
SCENARIO=$tmp/s.scn REPEAT=1 ESA_DEMO_OUT=$tmp/out ESA_JOB=$tmp/wait ESA_PS=$tmp/wait \
	"$ROOT/tools/demo.sh" > "$tmp/log" 2>&1 &
D=$!
set +m
for _ in $(seq 1 100); do [ -e "$tmp/out/PARTIAL" ] && break; sleep 0.1; done
sleep 1
kill -INT -- -$D
rc=0
wait $D || rc=$?
D=
sed 's/^/# /' "$tmp/log"
check "the demo exits 130" [ "$rc" = 130 ]
check "it says what it stopped and that nothing more runs" \
	grep -q "^demo: stopped by SIGINT during esa-bench (its results in $tmp/out are PARTIAL); nothing more is run$" "$tmp/log"
check "the esa-bench results are marked PARTIAL" grep -q "stopped by SIGINT" "$tmp/out/PARTIAL"
check "esa-sim did not run after it" bash -c "! grep -q 'paper scale' '$tmp/log'"
tap_done
