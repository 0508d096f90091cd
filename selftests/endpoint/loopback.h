/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loopback addresses for the endpoint tests that run a PS or a worker
 * against fake peers over real UDP: 127.X.NET.HOST with X from the pid, so
 * parallel runs do not meet, and NET keeping one program's tests apart
 * from another's.
 */
#ifndef _ESA_TEST_LOOPBACK_H
#define _ESA_TEST_LOOPBACK_H

#include <unistd.h>
#include <arpa/inet.h>
#include "esa_wire.h"

static inline struct sockaddr_in loopback_addr(unsigned net, unsigned host)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(ESA_UDP_PORT) };

	sa.sin_addr.s_addr = htonl(0x7f000000u | ((20 + getpid() % 200) << 16) |
				   (net << 8) | host);
	return sa;
}

#endif /* _ESA_TEST_LOOPBACK_H */
