// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregation header on the wire (uapi/esa_wire.h): encode, and check
 * received packets against the rules of Documentation/wire-protocol.rst
 * before anything trusts their counts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "esa_endpoint.h"

unsigned esa_wire_max_values(uint64_t token)
{
	return token ? ESA_MAX_VALUES_TOKEN : ESA_MAX_VALUES;
}

size_t esa_wire_put(uint8_t *buf, const struct esa_meta *m)
{
	struct esa_hdr h = {
		.version	= m->token ? ESA_WIRE_VERSION_TOKEN
					   : ESA_WIRE_VERSION,
		.flags		= m->flags,
		.fan_in		= m->fan_in,
		.priority	= m->priority,
		.job_id		= htons(m->job_id),
		.value_count	= htons(m->value_count),
		.seq		= htonl(m->seq),
		.agg_index	= htonl(m->agg_index),
		.worker_bitmap	= htonl(m->bitmap),
	};

	memcpy(buf, &h, sizeof(h));
	return ESA_HDR_LEN;
}

size_t esa_wire_end(uint8_t *buf, const struct esa_meta *m)
{
	size_t len = ESA_HDR_LEN + 4u * m->value_count;
	uint64_t be = htobe64(m->token);

	if (!m->token)
		return len;
	memcpy(buf + len, &be, ESA_TOKEN_LEN);
	return len + ESA_TOKEN_LEN;
}

/* The token of a version-2 packet of @len bytes with @n values, or 0. */
static uint64_t trailer_token(const uint8_t *buf, size_t len, unsigned n)
{
	uint64_t be;

	if (n > ESA_MAX_VALUES_TOKEN ||
	    len != ESA_HDR_LEN + 4u * n + ESA_TOKEN_LEN)
		return 0;
	memcpy(&be, buf + ESA_HDR_LEN + 4u * n, ESA_TOKEN_LEN);
	return be64toh(be);
}

int esa_wire_parse(const uint8_t *buf, size_t len, struct esa_meta *m)
{
	struct esa_hdr h;

	if (len < ESA_HDR_LEN)
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if ((h.version != ESA_WIRE_VERSION &&
	     h.version != ESA_WIRE_VERSION_TOKEN) || (h.flags & ~ESA_F_ALL))
		return -EBADMSG;
	m->flags = h.flags;
	m->fan_in = h.fan_in;
	m->priority = h.priority;
	m->job_id = ntohs(h.job_id);
	m->value_count = ntohs(h.value_count);
	m->seq = ntohl(h.seq);
	m->agg_index = ntohl(h.agg_index);
	m->bitmap = ntohl(h.worker_bitmap);
	m->token = 0;
	if (m->value_count == 0)
		return -EBADMSG;
	if (h.version == ESA_WIRE_VERSION_TOKEN) {
		m->token = trailer_token(buf, len, m->value_count);
		if (!m->token)
			return -EBADMSG;
	} else if (m->value_count > ESA_MAX_VALUES ||
		   len != ESA_HDR_LEN + 4u * m->value_count) {
		return -EBADMSG;
	}
	if (m->job_id == 0 || m->job_id > ESA_MAX_JOB_ID)
		return -EBADMSG;
	if (m->fan_in == 0 || m->fan_in > ESA_MAX_WORKERS)
		return -EBADMSG;
	if (m->bitmap == 0 ||
	    (m->fan_in < 32 && (m->bitmap >> m->fan_in)))
		return -EBADMSG;
	return 0;
}

void esa_values_to_be(uint8_t *dst, const int32_t *src, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t v = htonl((uint32_t)src[i]);

		memcpy(dst + 4 * i, &v, 4);
	}
}

void esa_values_from_be(int32_t *dst, const uint8_t *src, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t v;

		memcpy(&v, src + 4 * i, 4);
		dst[i] = (int32_t)ntohl(v);
	}
}
