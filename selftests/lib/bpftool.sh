# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Small bpftool wrappers for shell tests.
#
#   le32 N                 print N as the 4 little-endian bytes bpftool wants
#   map_u64 PIN KEY        print the value (a number) at u32 KEY of the pinned
#                          map PIN (array or hash with BTF, u64 or u32 values)
#   map_set_u32 PIN KEY VALUE   update u32 KEY to u32 VALUE in map PIN

le32() {
	local n=$1
	printf '%d %d %d %d' $((n & 255)) $(((n >> 8) & 255)) \
		$(((n >> 16) & 255)) $(((n >> 24) & 255))
}

map_u64() {
	# shellcheck disable=SC2046
	bpftool -j map lookup pinned "$1" key $(le32 "$2") |
		sed -n 's/.*"value":\([0-9][0-9]*\).*/\1/p'
}

map_set_u32() {
	# shellcheck disable=SC2046
	bpftool map update pinned "$1" key $(le32 "$2") value $(le32 "$3")
}
