#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make coverage` (Documentation/testing.rst): line and branch coverage of
# the user-space C (lib/, tools/lib/ and its loader tools/lib/dp/ apart,
# tools/aggctl/, tools/esa-sim/) under the host tests that run it. The
# working tree is copied to build/coverage/tree and built there with gcc
# --coverage at -O0 (the module is not built: it is no user space); the
# host tests of the areas below run there (root for the BPF and netns
# ones), then lcov/genhtml write
#   build/coverage/html/index.html    the report, line by line
#   build/coverage/untaken.txt        every branch no test takes (file:line)
#   build/coverage/summary.txt        the figures per directory
# and the summary is printed. COVERAGE_AREAS overrides the test areas.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/coverage
TREE=$OUT/tree
AREAS=${COVERAGE_AREAS:-"rules endpoint kmod esa-sim bpf"}
DIRS=(lib tools/lib tools/lib/dp tools/aggctl tools/esa-sim)

die() { echo "coverage: $*" >&2; exit 1; }
command -v lcov > /dev/null || die "lcov is not installed (make deps)"

rm -rf "$TREE" "$OUT/html"
mkdir -p "$TREE"
tar -C "$ROOT" --exclude=./.git --exclude=./.cache --exclude=./build \
	--exclude='*.o' --exclude='*.ko' -cf - . | tar -C "$TREE" -xf -
ln -s "$(readlink -f "$ROOT/.cache")" "$TREE/.cache"

# -O0 so that branches are the source's (absolute paths: the sources are
# compiled from their own directories); CC carries --coverage to every
# compile and link of the sub-makes (the module is left out: kbuild would
# take CC too); scripts/coverage_exit.h makes the harness's children
# write their counters.
export CFLAGS="-O0 -g"
MK=(make -s CC="gcc --coverage -fprofile-abs-path -include $ROOT/scripts/coverage_exit.h")
echo "coverage: building $TREE with gcc --coverage" >&2
"${MK[@]}" -C "$TREE/bpf"
"${MK[@]}" -C "$TREE/tools"
for a in $AREAS; do
	"${MK[@]}" -C "$TREE/selftests/$a"
done

lcov_q() { lcov --quiet --rc lcov_branch_coverage=1 "$@"; }
lcov_q --zerocounters --directory "$TREE/build"
rc=0
for a in $AREAS; do
	echo "coverage: selftests/$a (host)" >&2
	(cd "$TREE" && selftests/run_tests.sh --host-only "selftests/$a/") \
		> "$OUT/tests-$a.log" 2>&1 || rc=1
	tail -1 "$OUT/tests-$a.log" | sed "s|^|coverage: selftests/$a: |" >&2
done

lcov_q --capture --directory "$TREE/build" \
	--output-file "$OUT/all.info" > /dev/null
patterns=()
for d in "${DIRS[@]}"; do patterns+=("$TREE/$d/*"); done
lcov_q --extract "$OUT/all.info" "${patterns[@]}" --output-file "$OUT/user.info" > /dev/null
genhtml --quiet --branch-coverage --output-directory "$OUT/html" "$OUT/user.info" \
	> /dev/null

# Figures per directory, and each untaken branch (lcov's BRDA lines with
# a count of "-" (never reached) or 0).
python3 - "$OUT/user.info" "$TREE" "$OUT/summary.txt" "$OUT/untaken.txt" "${DIRS[@]}" <<'PY'
import sys
info, tree, summary, untaken, dirs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
stats = {d: [0, 0, 0, 0] for d in dirs}	# lines hit, lines, branches hit, branches
miss = []
cur = None
def dir_of(path):
    rel = path[len(tree) + 1:]
    best = None
    for d in dirs:
        if rel.startswith(d + "/") and (best is None or len(d) > len(best)):
            best = d
    return best, rel
for line in open(info):
    line = line.strip()
    if line.startswith("SF:"):
        cur = dir_of(line[3:])
    elif line.startswith("DA:") and cur[0]:
        n = line[3:].split(",")
        stats[cur[0]][1] += 1
        stats[cur[0]][0] += int(n[1]) > 0
    elif line.startswith("BRDA:") and cur[0]:
        ln, block, br, taken = line[5:].split(",")
        stats[cur[0]][3] += 1
        if taken not in ("-", "0"):
            stats[cur[0]][2] += 1
        else:
            miss.append("%s:%s branch %s.%s %s" % (cur[1], ln, block, br,
                        "never reached" if taken == "-" else "not taken"))
pct = lambda a, b: "%5.1f %%" % (100.0 * a / b) if b else "    - "
with open(summary, "w") as f:
    f.write("%-16s %14s %20s\n" % ("directory", "lines", "branches"))
    for d in dirs:
        lh, l, bh, b = stats[d]
        f.write("%-16s %s %6d/%-6d %s %6d/%-6d\n" % (d + "/", pct(lh, l), lh, l,
                                                    pct(bh, b), bh, b))
with open(untaken, "w") as f:
    f.write("\n".join(miss) + "\n")
PY
cat "$OUT/summary.txt"
echo "coverage: $(wc -l < "$OUT/untaken.txt") untaken branches in $OUT/untaken.txt; report $OUT/html/index.html"
[ $rc = 0 ] || echo "coverage: some tests failed (build/coverage/tests-*.log): the figures undercount" >&2
exit $rc
