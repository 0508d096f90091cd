// SPDX-License-Identifier: GPL-2.0
/*
 * Random loss on a worker's link for the loss tests (this host's kernel has
 * no netem): drops DROP_PER_10K in 10000 aggregation packets (UDP to
 * ESA_UDP_PORT), in both directions: the XDP program on the worker's veth
 * loses results on the way in, the tc program on its egress loses data on
 * the way out. Everything else passes. With DROP_PER_10K 0 it is the
 * XDP_PASS program a veth peer needs for redirected frames to arrive.
 * Built with DROP_FIRST N instead (XDP only): the first N aggregation
 * packets from each sending host are lost, then none (a PS whose queue
 * dropped the first window of each worker of a job that all went to it),
 * whenever each host starts.
 * Built with DROP_COMPLETE instead (tc only): every COMPLETE is lost, on
 * the egress of a one-armed switch's port the PS's copy of every sum the
 * switch completes, refused at once as a full queue would refuse it.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "esa_wire.h"

#ifndef DROP_PER_10K
#define DROP_PER_10K 0
#endif

char LICENSE[] SEC("license") = "GPL";

/* Frames dropped, per direction (0: in, 1: out). */
__u64 dropped[2];
/* DROP_FIRST: aggregation frames seen per sender (its address' last byte). */
__u64 seen[256];

static __always_inline int lose(void *data, void *data_end, int dir)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct esa_hdr *h = (void *)(udp + 1);

	if ((void *)(h + 1) > data_end)
		return 0;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP || udp->dest != bpf_htons(ESA_UDP_PORT))
		return 0;
#if defined(DROP_COMPLETE)
	if (!(h->flags & ESA_F_COMPLETE))
		return 0;
#elif defined(DROP_FIRST)
	if (__sync_fetch_and_add(&seen[bpf_ntohl(ip->saddr) & 0xff], 1) >= DROP_FIRST)
		return 0;
#else
	if (bpf_get_prandom_u32() % 10000 >= DROP_PER_10K)
		return 0;
#endif
	__sync_fetch_and_add(&dropped[dir], 1);
	return 1;
}

SEC("xdp")
int drop_in(struct xdp_md *ctx)
{
	return lose((void *)(long)ctx->data, (void *)(long)ctx->data_end, 0) ?
	       XDP_DROP : XDP_PASS;
}

SEC("tc")
int drop_out(struct __sk_buff *skb)
{
	return lose((void *)(long)skb->data, (void *)(long)skb->data_end, 1) ?
	       TC_ACT_SHOT : TC_ACT_OK;
}
