/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ethernet frames of aggregation traffic as a host sends them, built in
 * user space for the data plane (BPF_PROG_TEST_RUN, packet sockets): an
 * untagged IPv4 header without options, UDP, then the payload. Shared by
 * the simulator's switch (tools/esa-sim) and the data plane tests
 * (selftests/bpf/dp_util.c); header-only, not part of libesa's API.
 * Addresses and ports are in host byte order.
 */
#ifndef _ESA_FRAME_H
#define _ESA_FRAME_H

#include <stdint.h>
#include <string.h>

#define ESA_FRAME_IP		14			/* IPv4 header */
#define ESA_FRAME_UDP		(ESA_FRAME_IP + 20)	/* UDP header */
#define ESA_FRAME_PAYLOAD	(ESA_FRAME_UDP + 8)	/* ESA header */

static inline void esa_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void esa_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline uint16_t esa_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t esa_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/*
 * The one's complement sum (RFC 1071) of @len bytes at @p, as big-endian
 * 16-bit words added to @sum, not folded: partial sums (a pseudo-header,
 * then a segment) add up before esa_csum_fold().
 */
static inline uint32_t esa_csum_add(uint32_t sum, const uint8_t *p,
				    uint32_t len)
{
	for (uint32_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/* The 16-bit checksum of a sum: folded, complemented. */
static inline uint16_t esa_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * Ethernet, IPv4 (TTL 64, its checksum set) and UDP (checksum 0, as the
 * endpoints send with SO_NO_CHECK) headers at @f for @plen payload bytes
 * at f + ESA_FRAME_PAYLOAD, written by the caller before or after. The
 * frame's length.
 */
static inline uint32_t esa_frame_udp(uint8_t *f, const uint8_t dmac[6],
				     const uint8_t smac[6],
				     uint32_t saddr, uint16_t sport,
				     uint32_t daddr, uint16_t dport,
				     uint32_t plen)
{
	uint8_t *ip = f + ESA_FRAME_IP, *udp = f + ESA_FRAME_UDP;

	memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	esa_put16(f + 12, 0x0800);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	esa_put16(ip + 2, 20 + 8 + plen);
	ip[8] = 64;
	ip[9] = 17;			/* UDP */
	esa_put32(ip + 12, saddr);
	esa_put32(ip + 16, daddr);
	esa_put16(ip + 10, esa_csum_fold(esa_csum_add(0, ip, 20)));
	esa_put16(udp, sport);
	esa_put16(udp + 2, dport);
	esa_put16(udp + 4, 8 + plen);
	esa_put16(udp + 6, 0);
	return ESA_FRAME_PAYLOAD + plen;
}

#endif /* _ESA_FRAME_H */
