#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# aggctl's bash completion (tools/aggctl/aggctl.bash-completion, which
# `make install` installs: selftests/python/test_install.py) completes
# objects, commands, keywords, interface names after "dev", modes and
# policies; and every tool of the tree answers --version with the one
# VERSION.
cd "$(dirname "$0")/../.." || exit 1
. selftests/lib/tap.sh
comp=tools/aggctl/aggctl.bash-completion

# complete WORDS...: what the completion offers for the last word.
complete_words() {
	bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_aggctl
		printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@" | sort | tr '\n' ' '
}
offers() { # DESC "WANT" WORDS...
	local desc=$1 want=$2 got
	shift 2
	got=$(complete_words "$@")
	if [ "$got" = "$want " ]; then ok "completion: $desc"; else not_ok "completion: $desc: got '$got', want '$want'"; fi
}
offers "objects" "config help job monitor occupancy policy stats switch" aggctl ''
offers "options" "-V -batch -d -force -h -j -p" aggctl -
offers "objects after -j -d DIR" "switch" aggctl -j -d /tmp sw
offers "switch commands" "attach detach help set show unload" aggctl switch ''
offers "attach keywords" "address capacity dev mode role" aggctl switch attach ''
offers "interfaces after dev" "lo" aggctl switch attach dev lo
offers "modes" "generic native" aggctl switch attach dev lo mode ''
offers "roles" "one-armed per-host" aggctl switch attach dev lo role ''
offers "switch set keywords" "aging occ-restart slots timeout" aggctl switch set ''
offers "job commands" "add change del help show" aggctl job ''
offers "job add keywords" "dev fan-in id priority ps quota token worker" aggctl job add id 1 ''
offers "job change keywords (no token)" "dev fan-in id priority ps quota worker" aggctl job change id 1 ''
offers "priority auto" "auto" aggctl job add id 1 priority a
offers "token random" "random" aggctl job add id 1 token r
offers "policies" "atp esa static" aggctl policy set ''
offers "stats" "help job show" aggctl stats ''
offers "config commands" "help save" aggctl config ''
offers "config save file" "file" aggctl config save ''
offers "a file after -batch" "VERSION" aggctl -batch VERS
# Every tool of the tree answers --version with the one VERSION.
version=$(cat VERSION)
for t in build/tools/aggctl build/tools/esa-job build/tools/esa-ps build/tools/esa-sim \
	 tools/esa-bench/esa-bench p4/tofino/esa-tofino; do
	name=$(basename "$t")
	out=$("$t" --version 2>&1)
	if [[ "$out" == "$name (ESA) $version"* ]]; then
		ok "$name --version: $out"
	else
		not_ok "$name --version: '$out'"
	fi
done
tap_done
