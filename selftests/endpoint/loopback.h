/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loopback addresses for the endpoint tests that run a PS or a worker
 * against fake peers over real UDP: 127.X.NET.HOST with X from the pid, so
 * parallel runs do not meet, and NET keeping one program's tests apart
 * from another's; and what a fake peer receives.
 */
#ifndef _ESA_TEST_LOOPBACK_H
#define _ESA_TEST_LOOPBACK_H

#include <poll.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "esa_wire.h"
#include "esa_endpoint.h"

static inline struct sockaddr_in loopback_addr(unsigned net, unsigned host)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(ESA_UDP_PORT) };

	sa.sin_addr.s_addr = htonl(0x7f000000u | ((20 + getpid() % 200) << 16) |
				   (net << 8) | host);
	return sa;
}

/*
 * The next packet at @fd within @ms: 1 with its header in *@m and, if @v,
 * its values in @v; 0 if none came; -1 if what came is no ESA packet.
 */
static inline int loopback_recv(int fd, int ms, struct esa_meta *m,
				int32_t *v)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t buf[ESA_RX_BUFSZ];
	ssize_t len;

	if (poll(&p, 1, ms) != 1)
		return 0;
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < 0 || esa_wire_parse(buf, len, m))
		return -1;
	if (v)
		esa_values_from_be(v, buf + ESA_HDR_LEN, m->value_count);
	return 1;
}

#endif /* _ESA_TEST_LOOPBACK_H */
