/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What an endpoint sent, in order: a transmit hook for the endpoint step
 * tests (test_one_armed.c, test_shard.c) that keeps every datagram and
 * where it went, so a test can check addressing without a network.
 */
#ifndef _ESA_TEST_CAPTURE_H
#define _ESA_TEST_CAPTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "esa_wire.h"

#define CAPTURE_MAX	64	/* datagrams a capture holds */

struct capture {
	unsigned		n;
	struct sockaddr_in	to[CAPTURE_MAX];
	size_t			len[CAPTURE_MAX];
	uint8_t			buf[CAPTURE_MAX][ESA_MTU];
};

static inline void capture_tx(void *ctx, const struct sockaddr_in *to,
			      const uint8_t *buf, size_t len)
{
	struct capture *c = ctx;

	if (c->n == CAPTURE_MAX || len > ESA_MTU)
		abort();
	c->to[c->n] = *to;
	c->len[c->n] = len;
	memcpy(c->buf[c->n++], buf, len);
}

#endif /* _ESA_TEST_CAPTURE_H */
