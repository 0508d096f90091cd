// SPDX-License-Identifier: GPL-2.0
/*
 * Packet source and sink of bench_queues (bench/bench_queues.c).
 *
 * esa_gen runs under BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: it
 * turns the template frame (worker 0, sequence 0 of a job) into the next
 * frame of this CPU's share of the job's workers and redirects it into a
 * veth, whose peer (the switch port) takes it on the receive queue of this
 * CPU, as a NIC's RSS queue would hand it to the switch's XDP program.
 * esa_sink drops what the switch sends back (a veth that receives redirected
 * frames needs an XDP program of its own).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "esa_wire.h"

/* The worker plan, as selftests/bpf/dp_util.h's DP_WORKER_ADDR/PORT. */
#define WORKER_ADDR(j, i)	(0x0a4d0000u | ((j) << 8) | (10 + (i)))
#define WORKER_PORT(j, i)	(40000 + (j) * 100 + (i))

/* Set by the loader before load. */
const volatile __u32 out_ifindex;
const volatile __u32 job_id = 1;
const volatile __u32 window = 1;	/* aggregators the job cycles over */
/*
 * The template's headers (Ethernet to esa_hdr), written back into every
 * frame: a live frame's page comes back from the switch with whatever the
 * switch made of it (a result, a partial), and test_run resets only its
 * pointers, not its bytes.
 */
#define HDRS_LEN	(14 + 20 + 8 + ESA_HDR_LEN)
__u8 template_hdrs[HDRS_LEN];

/* Per CPU: which workers this CPU sends, and how far it got. */
struct gen_cpu {
	__u32 first;	/* workers first, first + step, ... (count of them) */
	__u32 step;
	__u32 count;
	__u32 next;	/* frames sent so far */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_cpu);
} gen_state SEC(".maps");

static __always_inline __u16 ip_csum(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 s = 0;
	int i;

	for (i = 0; i < 10; i++)
		s += w[i];
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

SEC("xdp")
int esa_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	struct esa_hdr *h = (void *)(udp + 1);
	__u32 key = 0, w, seq, addr;
	struct gen_cpu *st;

	if ((void *)(h + 1) > end)
		return XDP_ABORTED;
	__builtin_memcpy(data, template_hdrs, HDRS_LEN);
	st = bpf_map_lookup_elem(&gen_state, &key);
	if (!st || !st->count || !st->step)
		return XDP_ABORTED;
	w = st->first + (st->next % st->count) * st->step;
	seq = st->next / st->count;
	st->next++;
	addr = WORKER_ADDR(job_id, w);
	eth->h_source[2] = addr >> 24;
	eth->h_source[3] = addr >> 16;
	eth->h_source[4] = addr >> 8;
	eth->h_source[5] = addr;
	ip->saddr = bpf_htonl(addr);
	ip->check = 0;
	ip->check = ip_csum(ip);
	udp->source = bpf_htons(WORKER_PORT(job_id, w));
	udp->check = 0;
	h->worker_bitmap = bpf_htonl(1u << (w & 31));
	h->seq = bpf_htonl(seq);
	h->agg_index = bpf_htonl(seq % window);
	return bpf_redirect(out_ifindex, 0);
}

SEC("xdp")
int esa_sink(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
