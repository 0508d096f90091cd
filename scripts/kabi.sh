#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The Debian kernel release (ABI, e.g. "6.1.0-NN-amd64") of a kernel series
# the module and the test VM are built for, as `make deps` resolved it
# from apt. The one list of supported series (the first the default) and
# of where each one's ABI is kept:
#   6.1    Debian 12                       .cache/kernel-abi
#   6.12   Debian 13, bookworm-backports   .cache/kernel-abi-6.12
#
# usage: kabi.sh [SERIES]      print SERIES's ABI (nothing before `make deps`)
#        kabi.sh --file SERIES print the file that holds it
#        kabi.sh --list        print the supported series
#        kabi.sh --headers SERIES
#                              print SERIES's module build tree: the headers
#                              make deps unpacked into .cache/kernel/ (6.12;
#                              6.1 on a host whose apt lacks them, Debian 13),
#                              else the installed linux-headers package
# SERIES defaults to $KERNEL, else the first. An unknown series is an error.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SERIES_ALL="6.1 6.12"
DEFAULT=${SERIES_ALL%% *}

abi_file() {
	case $1 in
	6.1) echo "$ROOT/.cache/kernel-abi" ;;
	6.12) echo "$ROOT/.cache/kernel-abi-6.12" ;;
	*)
		echo "kabi: unknown kernel series '$1' (supported: $SERIES_ALL)" >&2
		exit 2 ;;
	esac
}

case ${1:-} in
--list) echo "$SERIES_ALL" ;;
--file) abi_file "${2:-${KERNEL:-$DEFAULT}}" ;;
--headers)
	f=$(abi_file "${2:-${KERNEL:-$DEFAULT}}") || exit 2
	abi=$(cat "$f" 2>/dev/null)
	cached=$ROOT/.cache/kernel/$abi/usr/src/linux-headers-$abi
	if [ -n "$abi" ] && [ -d "$cached" ]; then echo "$cached"
	else echo "/usr/src/linux-headers-$abi"; fi ;;
*)
	f=$(abi_file "${1:-${KERNEL:-$DEFAULT}}") || exit 2
	cat "$f" 2>/dev/null
	exit 0 ;;
esac
