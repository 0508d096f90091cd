# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# The one wait for a UDP socket to bind, behind topo.sh's udp_bound_wait
# and selftests/endpoint/lib.sh's wait_udp_bound (each names its hosts'
# namespaces its own way). Sourced, not run.
#
#   udp_bound_wait_via PORT CMD...
#       until `CMD ss ...` (CMD runs its arguments in a host's namespace)
#       lists a UDP socket bound to PORT, at most 10 s; 1 if none ever was.
#       For a PS started in the background: workers start after it, since
#       a sum the switch completes before the PS binds is lost to the PS
#       (Documentation/endpoints.rst, "Known limits").

udp_bound_wait_via() {
	local port=$1 t
	shift
	for ((t = 0; t < 200; t++)); do
		"$@" ss -Huln "sport = :$port" | grep -q . && return 0
		sleep 0.05
	done
	return 1
}
