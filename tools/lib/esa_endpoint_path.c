// SPDX-License-Identifier: GPL-2.0
/*
 * Where a job's results may come from (Documentation/endpoints.rst,
 * "Where results come from"). An endpoint's socket is not connected and
 * takes datagrams from anyone: the switch forwards frames to a worker's
 * own port like any other traffic, unchecked. So every datagram is held
 * against the job's configuration, not against the socket, and the same
 * rule serves an endpoint without a socket (esa_step_input()).
 */
#define _GNU_SOURCE
#include "esa_endpoint.h"

bool esa_result_path_ok(const struct esa_endpoint_config *c,
			const struct sockaddr_in *from)
{
	/*
	 * The PS's address and UDP port: the switch sends every sum to the
	 * workers as from the PS (its multicast rewrites the source), and
	 * under atp or without a switch the PS sends results and pulls
	 * itself, from the address its workers were given.
	 */
	return from && from->sin_family == AF_INET &&
	       from->sin_addr.s_addr == c->ps.sin_addr.s_addr &&
	       from->sin_port == c->ps.sin_port;
}
