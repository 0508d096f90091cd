# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# What the simulator's shell tests share (sourced, with ROOT set to the
# repository): the simulator in SIM, a scratch directory in tmp removed at
# exit, TAP (selftests/lib/tap.sh) with its header printed, and bad() for
# a scenario the simulator must refuse.
SIM=$ROOT/build/tools/esa-sim
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$ROOT/selftests/lib/tap.sh"
echo "TAP version 13"

# bad EXPECT CONTENT: a scenario file bad.scn of CONTENT (printf %b) is
# refused by `esa-sim check` with a message holding bad.scn EXPECT.
bad() {
	printf '%b' "$2" > "$tmp/bad.scn"
	check_refused "$(printf '%b' "$2" | tr '\n' ';')" "bad.scn$1" \
		"$SIM" check "$tmp/bad.scn"
}
