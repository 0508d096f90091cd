#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# esa-sim scenario files: every shipped scenario (esa-bench's and
# esa-sim's) parses; every kind of bad input is refused with the file,
# the line and the reason. No root needed: `esa-sim check` only parses.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/esa-sim/lib.sh"

[ -x "$SIM" ] || bail "$SIM is not built"
for f in "$ROOT"/tools/esa-bench/scenarios/*.scn "$ROOT"/tools/esa-sim/scenarios/*.scn \
	 "$ROOT"/selftests/esa-sim/*.scn; do
	if out=$("$SIM" check "$f" 2>&1); then
		ok "$(basename "$f") parses: $(head -1 <<< "$out" | cut -d: -f2-)"
	else
		not_ok "$(basename "$f"): $out"
	fi
done

# Read back: templates, scale and Poisson expansion.
printf 'switch slots=64 scale=0.5\njob id=3 workers=8 model=resnet50 iterations=2 priority=9\npoisson jobs=2 first_id=7 mean_ms=5 workers=2 size=8K iterations=1\n' > "$tmp/good.scn"
out=$("$SIM" check --seed 5 "$tmp/good.scn" 2>&1)
if grep -Eq '^ +3 +8 +51114064 +2 +106667 +0 +9 resnet50$' <<< "$out" &&
   grep -Eq '^ +7 +2 +4096 ' <<< "$out" && grep -Eq '^ +8 +2 +4096 ' <<< "$out"; then
	ok "resnet50 at scale 0.5: 25557032 x 4 / 2 bytes, 213333 / 2 us; Poisson ids 7, 8"
else
	not_ok "values read back wrong: $out"
fi
a=$("$SIM" check --seed 5 "$tmp/good.scn" | awk '$1 == 8 { print $6 }')
b=$("$SIM" check --seed 6 "$tmp/good.scn" | awk '$1 == 8 { print $6 }')
if [ -n "$a" ] && [ "$a" != "$b" ]; then
	ok "Poisson arrivals come from the seed ($a us with seed 5, $b with 6)"
else
	not_ok "Poisson arrivals do not depend on the seed ($a, $b)"
fi

S='switch slots=64\n'
J='job id=1 workers=2 size=4K iterations=1\n'
bad ":2: unknown job key 'colour'" "${S}job id=1 workers=2 size=4K iterations=1 colour=red\n"
bad ":1: unknown switch key 'sloths'" "switch sloths=4\n$J"
bad ":2: size must be bytes with an optional K/M/G suffix, not '-4K'" "${S}job id=1 workers=2 size=-4K iterations=1\n"
bad ":2: workers=0 is out of range 1..32" "${S}job id=1 workers=0 size=4K iterations=1\n"
bad ":1: link_gbps=0 is out of range 1..1000" "switch slots=64 link_gbps=0\n$J"
bad ":2: mean_ms=0 is out of range" "${S}poisson jobs=2 mean_ms=0 workers=2 size=4K iterations=1\n"
bad ":1: slots=0 is out of range" "switch slots=0\n$J"
bad ":1: timeout_us must be a whole number, not '-5'" "switch slots=4 timeout_us=-5\n$J"
bad ":1: scale=0 is out of range (0, 1]" "switch slots=4 scale=0\n$J"
bad ":1: scale=2 is out of range (0, 1]" "switch slots=4 scale=2\n$J"
bad ":2: unknown model 'resnet51' (resnet50, efficientnet-b0, bert-large)" "${S}job id=1 workers=2 model=resnet51 iterations=1\n"
bad ":2: size= and model= both given" "${S}job id=1 workers=2 size=4K model=resnet50 iterations=1\n"
bad ":2: poisson needs jobs=N" "${S}poisson mean_ms=3 workers=2 size=4K iterations=1\n"
bad ":2: job needs size=... or model=..." "${S}job id=1 workers=2 iterations=1\n"
bad ":3: job id=1 is defined twice (line 2)" "$S$J$J"
bad ":3: job id=1 is defined twice (line 2)" "$S${J}poisson jobs=2 mean_ms=1 workers=2 size=4K iterations=1\n"
bad ":1: unknown priorities 'fifo' (las, sjf, fixed)" "switch slots=4 priorities=fifo\n$J"
bad ":1: unknown policy 'swml' (esa, atp, static)" "switch slots=4 policies=esa,swml\n$J"
bad ":2: unknown directive 'jobz' (switch, job, poisson)" "${S}jobz id=1\n"
bad ":2: expected KEY=VALUE, not 'workers'" "${S}job id=1 workers\n"
bad ":2: priority=300 is out of range 0..255" "${S}job id=1 workers=2 size=4K iterations=1 priority=300\n"
bad ":3: a second 'switch' line" "$S${J}switch slots=5\n"
bad ":end: no 'switch' line" "$J"
bad ":end: no 'job' line" "$S"
if err=$("$SIM" check "$tmp/missing.scn" 2>&1); then
	not_ok "a missing file accepted"
else
	ok "a missing file: $err"
fi
tap_done
