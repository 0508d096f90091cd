// SPDX-License-Identifier: GPL-2.0
/*
 * Where a job's packets go and where its results may come from
 * (Documentation/endpoints.rst, "Where results come from"). An endpoint's
 * socket is not connected and takes datagrams from anyone: the switch
 * forwards frames to a worker's own port like any other traffic,
 * unchecked. So every datagram is held against the job's configuration,
 * not against the socket, and the same rule serves an endpoint without a
 * socket (esa_step_input()).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>

#include "esa_endpoint.h"

bool esa_sw_set(const struct sockaddr_in *sw)
{
	return sw->sin_family == AF_INET;
}

int esa_sw_check(struct sockaddr_in *sw)
{
	char a[INET_ADDRSTRLEN];

	if (!esa_sw_set(sw))
		return sw->sin_family ? esa_set_error(-EINVAL,
				"switch address: not IPv4 (family %u)",
				sw->sin_family) : 0;
	if (!sw->sin_port)
		sw->sin_port = htons(ESA_UDP_PORT);
	if (sw->sin_addr.s_addr == htonl(INADDR_ANY) ||
	    sw->sin_addr.s_addr == htonl(INADDR_BROADCAST))
		return esa_set_error(-EINVAL, "switch address %s is not a host",
				     inet_ntop(AF_INET, &sw->sin_addr, a, sizeof(a)));
	if (sw->sin_port != htons(ESA_UDP_PORT))
		return esa_set_error(-EINVAL,
				     "switch port %u is not %u: a switch takes aggregation packets on that port only",
				     ntohs(sw->sin_port), ESA_UDP_PORT);
	return 0;
}

bool esa_same_addr(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_family == AF_INET && b->sin_family == AF_INET &&
	       a->sin_addr.s_addr == b->sin_addr.s_addr &&
	       a->sin_port == b->sin_port;
}

const struct sockaddr_in *esa_worker_peer(const struct esa_endpoint_config *c)
{
	/*
	 * A one-armed switch is an addressed host: the worker talks to it
	 * alone. Otherwise to the PS: a switch on the path takes the packets
	 * to it, and it rewrites every sum it sends the workers to come from
	 * the PS (its multicast); under atp or without a switch the PS sends
	 * results and pulls itself, from the address its workers were given.
	 */
	return esa_sw_set(&c->sw) ? &c->sw : &c->ps;
}

bool esa_result_path_ok(const struct esa_endpoint_config *c,
			const struct sockaddr_in *from)
{
	return from && esa_same_addr(from, esa_worker_peer(c));
}
