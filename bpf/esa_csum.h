/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP and UDP across the switch with the hosts' default offloads.
 *
 * A host stack sending on a device with TX checksum offload (a veth does
 * by default) leaves the L4 checksum to the device: the frame is
 * CHECKSUM_PARTIAL, its checksum field holds the folded pseudo-header sum
 * and nobody has summed the segment. XDP sees the bytes without that state;
 * redirected to another port, the frame reaches the receiver as if complete,
 * its checksum is wrong and it is dropped (TCP SYNs never arrive). A server
 * acting as a switch must not ask its hosts to change their offloads, so
 * the forwarding path completes such checksums as the device would have.
 *
 * Which frames: unfragmented IPv4 TCP or UDP whose checksum field equals
 * the folded pseudo-header sum P. A complete checksum that happens to equal
 * P is left as it is: its segment then sums (with P in the field) to ~P,
 * so completing it writes P again (0 is written as 0xffff, the same value
 * in ones' complement and what UDP requires), hence a correct frame is
 * never changed. UDP with checksum 0 (none, as the ESA endpoints send) has
 * no P of 0, so it is never touched either.
 *
 * Cost: a few instructions for a frame that is not partial; for one that
 * is, bpf_csum_diff() over the segment (see `make bench-dataplane`).
 */
#ifndef _ESA_CSUM_H
#define _ESA_CSUM_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* IPv4 "more fragments" flag and fragment offset (frag_off minus DF). */
#define ESA_IP_MF_OFFSET	0x3fff
/* bpf_csum_diff() sums at most 512 bytes per call. */
#define ESA_CSUM_CHUNK		512
/* Segments up to 4 KiB: more than a veth's MTU under XDP (one page). */
#define ESA_CSUM_MAX_CHUNKS	8

/* The segment's last bytes (< ESA_CSUM_CHUNK), zero-padded to 4. */
struct esa_csum_tail {
	__u8	b[ESA_CSUM_CHUNK + 4];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct esa_csum_tail);
} esa_csum_scratch SEC(".maps");

/* Fold a 32-bit ones' complement sum to 16 bits (never 0 for a sum > 0). */
static __always_inline __u16 esa_csum_fold(__u64 s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)s;
}

/*
 * Ones' complement sum of the @len bytes at frame offset @off (even), as
 * bpf_csum_diff() returns it; -1 if the frame is shorter.
 */
static __always_inline __s64 esa_csum_segment(struct xdp_md *ctx, __u32 off,
					      __u32 len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct esa_csum_tail *tail;
	__u32 zero = 0, k, rest;
	__s64 s = 0;

	/* Whole chunks straight from the frame ... */
	for (k = 0; k < ESA_CSUM_MAX_CHUNKS; k++) {
		void *p = data + off + k * ESA_CSUM_CHUNK;

		if (len < (k + 1) * ESA_CSUM_CHUNK)
			break;
		/*
		 * The caller's own bound makes this test redundant in C, and
		 * clang 19 drops it; the verifier needs it: hide what the
		 * compiler knows of p.
		 */
		asm volatile("" : "+r"(p));
		if (p + ESA_CSUM_CHUNK > data_end)
			return -1;
		s = bpf_csum_diff(NULL, 0, p, ESA_CSUM_CHUNK, s);
		if (s < 0)
			return -1;
	}
	/* ... the rest copied out, so it can be padded to whole words. */
	rest = len - k * ESA_CSUM_CHUNK;
	if (!rest)
		return s;
	if (rest >= ESA_CSUM_CHUNK)
		return -1;
	tail = bpf_map_lookup_elem(&esa_csum_scratch, &zero);
	/*
	 * 1 + a masked value: the 6.1 verifier needs the length's minimum
	 * from arithmetic, it takes none from the tests above.
	 */
	if (!tail ||
	    bpf_xdp_load_bytes(ctx, off + k * ESA_CSUM_CHUNK, tail->b,
			       1 + ((rest - 1) & (ESA_CSUM_CHUNK - 1))))
		return -1;
	/*
	 * rest < ESA_CSUM_CHUNK (tested above), said again as a mask the
	 * compiler cannot drop: the 6.1 verifier loses the test's bound when
	 * rest is spilled across the helper call.
	 */
	asm volatile("" : "+r"(rest));
	rest &= ESA_CSUM_CHUNK - 1;
	tail->b[rest] = 0;
	tail->b[rest + 1] = 0;
	tail->b[rest + 2] = 0;
	return bpf_csum_diff(NULL, 0, (__be32 *)tail->b, (rest + 3) & ~3u, s);
}

/*
 * The UDP checksum of the aggregation frame in @ctx (IPv4 without
 * options), written into it: the pseudo header's sum goes into the field
 * first, so the segment's sum is the whole sum, as for a partial checksum.
 * Receivers' UDP GRO merges only datagrams with a checksum
 * (Documentation/wire-protocol.rst, "Addressing"). 0, or -1 with the field
 * left 0 (none) if the frame is short.
 */
static __always_inline int esa_udp_csum_write(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct iphdr *ip = data + ETH_HLEN;
	struct udphdr *udp = data + ETH_HLEN + sizeof(*ip);
	__u32 len;
	__u64 pseudo;
	__u16 p;
	__s64 s;

	if ((void *)(udp + 1) > data_end)
		return -1;
	len = bpf_ntohs(udp->len);
	pseudo = (ip->saddr & 0xffff) + (ip->saddr >> 16) +
		 (ip->daddr & 0xffff) + (ip->daddr >> 16) +
		 bpf_htons(IPPROTO_UDP) + udp->len;
	udp->check = esa_csum_fold(pseudo);
	s = esa_csum_segment(ctx, ETH_HLEN + sizeof(*ip), len);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	udp = data + ETH_HLEN + sizeof(*ip);
	if ((void *)(udp + 1) > data_end)
		return -1;
	if (s < 0) {
		udp->check = 0;
		return -1;
	}
	p = ~esa_csum_fold(s);
	udp->check = p ? p : 0xffff;
	return 0;
}

/*
 * A checksum HC through rewrites, RFC 1624 eqn. 3 (HC' = ~(~HC + ~m + m')):
 * start from ~HC, add each 16-bit word @old that became @new, then
 * esa_csum_finish().
 */
static __always_inline __u32 esa_csum_replace16(__u32 acc, __u16 old,
						__u16 new)
{
	return acc + (__u16)~old + new;
}

static __always_inline __u32 esa_csum_replace32(__u32 acc, __u32 old,
						__u32 new)
{
	acc = esa_csum_replace16(acc, old & 0xffff, new & 0xffff);
	return esa_csum_replace16(acc, old >> 16, new >> 16);
}

/* The rewritten checksum from what esa_csum_replace*() accumulated. */
static __always_inline __u16 esa_csum_finish(__u32 acc)
{
	__u16 c = ~esa_csum_fold(acc);

	return c ? c : 0xffff;
}

/* Complete the L4 checksum of a CHECKSUM_PARTIAL TCP/UDP frame (above). */
static __always_inline void esa_l4_csum_complete(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + ETH_HLEN;
	__u32 ihl, len, off, field, min;
	__u16 *check, p;
	__u64 pseudo;
	__s64 s;

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    (ip->frag_off & bpf_htons(ESA_IP_MF_OFFSET)))
		return;
	if (ip->protocol == IPPROTO_TCP) {
		field = offsetof(struct tcphdr, check);
		min = sizeof(struct tcphdr);
	} else if (ip->protocol == IPPROTO_UDP) {
		field = offsetof(struct udphdr, check);
		min = sizeof(struct udphdr);
	} else {
		return;
	}
	ihl = ip->ihl * 4;
	len = bpf_ntohs(ip->tot_len);
	if (ihl < sizeof(*ip) || len < ihl + min ||
	    len - ihl > ESA_CSUM_CHUNK * ESA_CSUM_MAX_CHUNKS)
		return;
	len -= ihl;
	off = ETH_HLEN + ihl;
	check = data + off + field;
	if ((void *)(check + 1) > data_end || data + off + len > data_end)
		return;
	/* The pseudo header (RFC 793/768), summed as the stack does. */
	pseudo = (ip->saddr & 0xffff) + (ip->saddr >> 16) +
		 (ip->daddr & 0xffff) + (ip->daddr >> 16) +
		 bpf_htons(ip->protocol) + bpf_htons(len);
	if (*check != esa_csum_fold(pseudo))
		return;
	s = esa_csum_segment(ctx, off, len);
	if (s < 0)
		return;
	/* Helper calls ended the pointers' validity: derive them again. */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	check = data + off + field;
	if ((void *)(check + 1) > data_end)
		return;
	p = ~esa_csum_fold(s);
	*check = p ? p : 0xffff;
}

#endif /* _ESA_CSUM_H */
