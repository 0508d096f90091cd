#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every header of bpf/ compiles alone, in each flavour: it includes what
# it uses, so the data plane's sources may include them in any order.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/selftests/lib/tap.sh"

echo "TAP version 13"
for h in "$ROOT"/bpf/*.h; do
	for flavour in maps kmod; do
		mod=; [ $flavour = kmod ] && mod=1
		if out=$(make -s -C "$ROOT/bpf" header-alone HEADER="$h" \
			 ESA_MODULE_FLAVOUR=$mod 2>&1); then
			ok "$(basename "$h") compiles alone ($flavour flavour)"
		else
			not_ok "$(basename "$h") does not compile alone ($flavour flavour)"
			head -5 <<< "$out" | diag
		fi
	done
done
tap_done
