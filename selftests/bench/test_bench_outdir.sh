#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-bench's output directory belongs to one run at a time: a second run
# on it is refused (two runs used to append to the same CSVs and both
# report the mix); a run starts by clearing an older run's results (plots
# included); a run cut short (Ctrl-C) leaves PARTIAL saying so, and no
# temporary directory or topology behind. Workers and PS are stand-ins
# that wait, so no traffic is needed; the topology and switch are real.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/lib/tap.sh"
tmp=$(mktemp -d /tmp/esa-bench-outdir.XXXXXX)
A=
trap '[ -n "$A" ] && kill $A 2>/dev/null; rm -rf "$tmp"' EXIT
need_root "esa-bench output directory"

printf '#!/bin/sh\nsleep 30\n' > "$tmp/wait"
printf '#!/bin/sh\nexit 0\n' > "$tmp/quit"
chmod +x "$tmp/wait" "$tmp/quit"
printf 'switch slots=8 window=8 values=256\njob id=4 workers=2 size=4K iterations=1\n' > "$tmp/s.scn"
out=$tmp/out
mkdir -p "$out" "$tmp/t"
echo "an older run's plot" > "$out/occupancy.png"
echo "an older run's rows" > "$out/jct.csv"
bench() { "$ROOT/tools/esa-bench/esa-bench" --quiet --policies esa -o "$out" "$tmp/s.scn"; }

# Job control on, so the run in the background keeps SIGINT (a script's
# background jobs ignore it otherwise) and can get it as from Ctrl-C.
set -m
TMPDIR=$tmp/t ESA_JOB=$tmp/wait ESA_PS=$tmp/wait "$ROOT/tools/esa-bench/esa-bench" \
	--quiet --policies esa -o "$out" "$tmp/s.scn" > "$tmp/a.log" 2>&1 &
A=$!
set +m
for _ in $(seq 1 100); do [ -s "$out/.pid" ] && [ -e "$out/PARTIAL" ] && break; sleep 0.1; done
check "a running run marks its directory PARTIAL" [ -e "$out/PARTIAL" ]
check "... and has cleared the older run's plot" [ ! -e "$out/occupancy.png" ]
check "... and rows" bash -c "! grep -qs 'older run' '$out/jct.csv'"
rc=0
ESA_JOB=$tmp/quit ESA_PS=$tmp/quit bench > "$tmp/b.log" 2>&1 || rc=$?
sed 's/^/# /' "$tmp/b.log"
check "a second run on the same directory is refused (exit 2)" [ "$rc" = 2 ]
check "... naming the run that holds it" \
	grep -q "esa-bench: $out is in use by another esa-bench run (pid $A); give another -o DIR" "$tmp/b.log"
sleep 1
kill -INT $A
rc=0
wait $A || rc=$?
pid_a=$A A=
sed 's/^/# /' "$tmp/a.log"
check "Ctrl-C ends the run (exit 130)" [ "$rc" = 130 ]
check "... its directory still says PARTIAL, and why" grep -q 'stopped by SIGINT' "$out/PARTIAL"
check "... it says so on stderr" grep -q "the run did not finish: $out holds partial results" "$tmp/a.log"
check "... its temporary directory is gone" [ -z "$(ls -A "$tmp/t")" ]
check "... and its switch is unloaded" [ ! -e "/sys/fs/bpf/esa-bench-$pid_a" ]

# A run that gets to its end (here with failed steps) is no partial run.
rc=0
TMPDIR=$tmp/t ESA_JOB=$tmp/quit ESA_PS=$tmp/quit bench > "$tmp/c.log" 2>&1 || rc=$?
check "a run that ends, even with failed steps, leaves no PARTIAL" [ ! -e "$out/PARTIAL" ]
check "... and no temporary directory" [ -z "$(ls -A "$tmp/t")" ]
tap_done
