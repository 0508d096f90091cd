// SPDX-License-Identifier: GPL-2.0
/*
 * The aggregation header on the wire (uapi/esa_wire.h): encode, and check
 * received packets against the rules of Documentation/wire-protocol.rst
 * before anything trusts their counts.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "esa_endpoint.h"

size_t esa_wire_put(uint8_t *buf, const struct esa_meta *m)
{
	struct esa_hdr h = {
		.version	= ESA_WIRE_VERSION,
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

int esa_wire_parse(const uint8_t *buf, size_t len, struct esa_meta *m)
{
	struct esa_hdr h;

	if (len < ESA_HDR_LEN)
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.version != ESA_WIRE_VERSION || (h.flags & ~ESA_F_ALL))
		return -EBADMSG;
	m->flags = h.flags;
	m->fan_in = h.fan_in;
	m->priority = h.priority;
	m->job_id = ntohs(h.job_id);
	m->value_count = ntohs(h.value_count);
	m->seq = ntohl(h.seq);
	m->agg_index = ntohl(h.agg_index);
	m->bitmap = ntohl(h.worker_bitmap);
	if (m->value_count == 0 || m->value_count > ESA_MAX_VALUES ||
	    len != ESA_HDR_LEN + 4u * m->value_count)
		return -EBADMSG;
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
