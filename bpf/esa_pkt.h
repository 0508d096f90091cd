/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frame access for the data plane: the fixed aggregation frame layout,
 * IPv4 header checksum, neighbour/MAC learning and L2 forwarding.
 */
#ifndef _ESA_PKT_H
#define _ESA_PKT_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "esa_maps.bpf.h"

/* Header lengths: IPv4 without options (the only kind aggregated), UDP. */
#define ESA_IP_HLEN	((int)sizeof(struct iphdr))
#define ESA_UDP_HLEN	((int)sizeof(struct udphdr))
/* The fragment offset field and "more fragments" flag of iphdr.frag_off. */
#define ESA_IP_FRAG_OFFSET	0x1fff
#define ESA_IP_MF		0x2000
/*
 * 802.1Q / 802.1ad tags the switch looks through to see what a frame
 * carries: one of each, the stacking that exists (802.1ad outer, 802.1Q
 * inner). A frame with more is one it cannot check (esa_switch_tagged()).
 */
#define ESA_VLAN_MAX_TAGS	2

/* Offsets in an aggregation frame. */
#define ESA_OFF_IP	ETH_HLEN
#define ESA_OFF_UDP	(ESA_OFF_IP + ESA_IP_HLEN)
#define ESA_OFF_HDR	(ESA_OFF_UDP + ESA_UDP_HLEN)
#define ESA_OFF_VALS	(ESA_OFF_HDR + ESA_HDR_LEN)

/* Hide a value from the compiler so a bounds check it could prove stays. */
#define esa_opaque(x) asm volatile("" : "+r"(x))

#define READ_ONCE_U16(x) (*(volatile __u16 *)&(x))

/*
 * The ingress port. The barrier keeps each read a load from the context
 * pointer itself: left to itself clang may compute &ctx->ingress_ifindex
 * once and load through the sum, a modified context pointer the verifier
 * rejects.
 */
static __always_inline __u32 esa_in_port(struct xdp_md *ctx)
{
	esa_opaque(ctx);
	return ctx->ingress_ifindex;
}

struct esa_frame {
	struct ethhdr	*eth;
	struct iphdr	*ip;
	struct udphdr	*udp;
	struct esa_hdr	*h;
};

/* Point @f at the headers; -1 if the frame is shorter than them. */
static __always_inline int esa_frame_get(struct xdp_md *ctx,
					 struct esa_frame *f)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (data + ESA_OFF_VALS > data_end)
		return -1;
	f->eth = data;
	f->ip = data + ESA_OFF_IP;
	f->udp = data + ESA_OFF_UDP;
	f->h = data + ESA_OFF_HDR;
	return 0;
}

/*
 * Part of a fragmented IPv4 datagram, the first part included: an
 * aggregation packet never is one (wire-protocol.rst), and only the first
 * part carries the UDP header a frame is judged by.
 */
static __always_inline int esa_ip_fragment(const struct iphdr *ip)
{
	return !!(ip->frag_off & bpf_htons(ESA_IP_MF | ESA_IP_FRAG_OFFSET));
}

/* A later part of a fragmented datagram: no UDP header, its bytes data. */
static __always_inline int esa_ip_later_fragment(const struct iphdr *ip)
{
	return !!(ip->frag_off & bpf_htons(ESA_IP_FRAG_OFFSET));
}

/* A VLAN tag's EtherType (802.1Q or 802.1ad). */
static __always_inline int esa_vlan_proto(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) ||
	       proto == bpf_htons(ETH_P_8021AD);
}

/*
 * A source MAC with the group bit is no station's: 802.1Q bridges and
 * Linux's bridge discard such frames; a switch that learned or checked
 * nothing from them would pass them unchecked.
 */
static __always_inline int esa_mac_group(const __u8 *mac)
{
	return mac[0] & 1;
}

/* Recompute the checksum of an option-less IPv4 header. */
static __always_inline void esa_ip_csum(struct iphdr *ip)
{
	__u16 *p = (__u16 *)ip;
	__u32 s = 0;
	int i;

	ip->check = 0;
#pragma unroll
	for (i = 0; i < ESA_IP_HLEN / 2; i++)
		s += p[i];
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	ip->check = (__u16)~s;
}

static __always_inline int esa_mac_eq(const __u8 *a, const __u8 *b)
{
	return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] &&
	       a[3] == b[3] && a[4] == b[4] && a[5] == b[5];
}

static __always_inline void esa_mac_copy(__u8 *dst, const __u8 *src)
{
	dst[0] = src[0]; dst[1] = src[1]; dst[2] = src[2];
	dst[3] = src[3]; dst[4] = src[4]; dst[5] = src[5];
}

/*
 * Say that esa_neigh, esa_learned or esa_fdb changed (or may have: a
 * failed update bumps too): every per-CPU learning memo taken at an older
 * generation is void. Called after the write, as a seqlock's writer: a CPU that read the
 * generation, then missed the write in its lookups, still sees the
 * generation move after its memo was taken, so the memo never matches.
 */
static __always_inline void esa_learned_changed(void)
{
	__u32 zero = 0;
	__u64 *gen = bpf_map_lookup_elem(&esa_learn_gen, &zero);

	if (gen)
		__sync_fetch_and_add(gen, 1);
}

/*
 * The writers of the learned tables: the only code of the data plane that
 * writes or deletes an entry of esa_learned or esa_fdb, or changes a
 * member's entry of esa_neigh (its port at first sight, its MAC). Each
 * bumps the generation after its write, so no write can leave a learning
 * memo standing (esa_learn()); user space's writers bump through
 * esa_switch_learned_changed().
 */
static __always_inline void esa_learned_put(void *table, const void *key,
					    const void *val)
{
	bpf_map_update_elem(table, key, val, BPF_ANY);
	esa_learned_changed();
}

static __always_inline void esa_learned_del(void *table, const void *key)
{
	bpf_map_delete_elem(table, key);
	esa_learned_changed();
}

/*
 * Bound member @n, not seen yet, first seen on port @ifindex: its port
 * from now on, atomically against another CPU's first sight. *@was: the
 * port it was found on by whichever CPU came first (0: this one).
 */
static __always_inline void esa_bound_first_sight(struct esa_neigh *n,
						  __u32 ifindex, __u32 *was)
{
	*was = __sync_val_compare_and_swap(&n->ifindex, 0, ifindex);
	esa_learned_changed();
}

/* Bound member @n now sends with MAC @mac. */
static __always_inline void esa_bound_set_mac(struct esa_neigh *n,
					      const __u8 *mac)
{
	esa_mac_copy(n->mac, mac);
	esa_learned_changed();
}

/* The data plane's clock in seconds: the learned tables' ages. */
static __always_inline __u32 esa_now_s(void)
{
	return esa_now() / 1000000000ull;
}

/* A learned entry written at @learned_s is past its age at @now. */
static __always_inline int esa_learned_aged(__u32 learned_s, __u32 now)
{
	return now - learned_s >= ESA_LEARN_AGE_S;
}

/*
 * Port @ifindex writes one entry of learned table @t at @now: 1 if its
 * budget allows (ESA_LEARN_PORT_BUDGET per ESA_LEARN_AGE_S), else 0. Two
 * CPUs restarting a window at once both zero it: a budget, not a count.
 */
static __always_inline int esa_learn_budget(__u32 ifindex,
					    enum esa_learn_table t, __u32 now)
{
	struct esa_learn_port *p, fresh = { .window_s = now };

	p = bpf_map_lookup_elem(&esa_learn_ports, &ifindex);
	if (!p) {
		fresh.written[t & 1] = 1;
		bpf_map_update_elem(&esa_learn_ports, &ifindex, &fresh,
				    BPF_NOEXIST);
		return 1;
	}
	if (now - p->window_s >= ESA_LEARN_AGE_S) {
		p->window_s = now;
		p->written[0] = 0;
		p->written[1] = 0;
	}
	if (p->written[t & 1] >= ESA_LEARN_PORT_BUDGET)
		return 0;
	__sync_fetch_and_add(&p->written[t & 1], 1);
	return 1;
}

/*
 * Where IPv4 @addr sits: its binding, else what was learned of it, else
 * NULL. Only a binding may have port 0 (bound at first sight, not seen).
 */
static __always_inline struct esa_neigh *esa_host(__be32 addr)
{
	struct esa_neigh *n = bpf_map_lookup_elem(&esa_neigh, &addr);

	return n ? n : bpf_map_lookup_elem(&esa_learned, &addr);
}

/*
 * A frame claiming bound address @n came in on port @ifindex with sender
 * MAC @mac: 0, or the job that bound it to another port (a spoof). First
 * sight fixes the port, atomically against another CPU's first sight; the
 * member's MAC follows it. A group @mac (an ARP sender's; an Ethernet
 * source's never gets here) teaches nothing: it neither binds at first
 * sight (a spoof then) nor is taken as the member's MAC.
 */
static __always_inline __u32 esa_check_bound(struct esa_neigh *n,
					     __u32 ifindex, const __u8 *mac)
{
	__u32 was = n->ifindex;

	if (esa_mac_group(mac))
		return was == ifindex ? 0 : n->bound_job;
	if (!was)
		esa_bound_first_sight(n, ifindex, &was);
	if (was && was != ifindex)
		return n->bound_job;
	if (!esa_mac_eq(n->mac, mac))
		esa_bound_set_mac(n, mac);
	return 0;
}

/*
 * Learn that unbound @addr sits behind port @ifindex at @mac (esa_learned):
 * a new, moved or aged entry is written if the port's budget allows; one
 * it does not allow is dropped rather than kept past its age.
 */
static __always_inline void esa_learn_host(__be32 addr, __u32 ifindex,
					   const __u8 *mac)
{
	struct esa_neigh *n = bpf_map_lookup_elem(&esa_learned, &addr);
	struct esa_neigh v = { .ifindex = ifindex };
	__u32 now = esa_now_s();

	if (n && n->ifindex == ifindex && esa_mac_eq(n->mac, mac) &&
	    !esa_learned_aged(n->learned_s, now))
		return;
	if (!esa_learn_budget(ifindex, ESA_LEARN_NEIGH, now)) {
		if (n)
			esa_learned_del(&esa_learned, &addr);
		return;
	}
	esa_mac_copy(v.mac, mac);
	v.learned_s = now;
	esa_learned_put(&esa_learned, &addr, &v);
}

/*
 * A frame from IPv4 @addr came in on port @ifindex with source MAC @mac:
 * check it against @addr's binding, or learn where @addr sits. 0, or the
 * job that bound @addr to another port: the frame is a spoof and must not
 * be learned or passed on.
 */
static __always_inline __u32 esa_learn_neigh(__be32 addr, __u32 ifindex,
					     const __u8 *mac)
{
	struct esa_neigh *n;

	if (!addr || addr == 0xffffffff)
		return 0;
	n = bpf_map_lookup_elem(&esa_neigh, &addr);
	if (n && n->bound_job)
		return esa_check_bound(n, ifindex, mac);
	if (!esa_mac_group(mac))
		esa_learn_host(addr, ifindex, mac);
	return 0;
}

/*
 * Source MAC learning, as any L2 switch does: a new, moved or aged entry
 * is written if the port's budget allows, else dropped.
 */
static __always_inline void esa_learn_mac(const __u8 *mac, __u32 ifindex)
{
	struct esa_fdb_entry *e, v = { .ifindex = ifindex };
	struct esa_mac_key k = {};
	__u32 now;

	if (esa_mac_group(mac))
		return;
	esa_mac_copy(k.addr, mac);
	e = bpf_map_lookup_elem(&esa_fdb, &k);
	now = esa_now_s();
	if (e && e->ifindex == ifindex && !esa_learned_aged(e->learned_s, now))
		return;
	if (!esa_learn_budget(ifindex, ESA_LEARN_FDB, now)) {
		if (e)
			esa_learned_del(&esa_fdb, &k);
		return;
	}
	v.learned_s = now;
	esa_learned_put(&esa_fdb, &k, &v);
}

/*
 * An ARP packet for IPv4 over Ethernet, up to the sender's addresses
 * (linux/if_arp.h drags in libc headers).
 */
#define ESA_ARPHRD_ETHER	1	/* ar_hrd: Ethernet */
#define ESA_ARPHRD_IEEE802	6	/* ar_hrd: IEEE 802, which Linux takes as Ethernet */
struct esa_arp {
	__be16	ar_hrd;
	__be16	ar_pro;
	__u8	ar_hln;
	__u8	ar_pln;
	__be16	ar_op;
	__u8	ar_sha[ETH_ALEN];	/* sender MAC */
	__u8	ar_spa[4];		/* sender IPv4 address */
} __attribute__((packed));

/*
 * ARP: the sender's IPv4 address sits behind the ingress port. 0, or the
 * job that bound the sender's address to another port (a spoof).
 */
static __always_inline __u32 esa_learn_arp(struct xdp_md *ctx, void *l3)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct esa_arp *arp = l3;
	__be32 spa;

	if ((void *)(arp + 1) > data_end)
		return 0;
	/* what a Linux host on Ethernet would not take (arp_process()) */
	if ((arp->ar_hrd != bpf_htons(ESA_ARPHRD_ETHER) &&
	     arp->ar_hrd != bpf_htons(ESA_ARPHRD_IEEE802)) ||
	    arp->ar_pro != bpf_htons(ETH_P_IP) ||
	    arp->ar_hln != ETH_ALEN || arp->ar_pln != sizeof(spa))
		return 0;
	__builtin_memcpy(&spa, arp->ar_spa, sizeof(spa));
	return esa_learn_neigh(spa, esa_in_port(ctx), arp->ar_sha);
}

/*
 * Forward at L2 by destination MAC: known unicast to its port (filtered
 * if that is the ingress port), everything else flooded to every other
 * port.
 */
/*
 * Every frame leaves through esa_mcast, never by bpf_redirect() or another
 * devmap: the kernel queues the frames a NAPI poll redirects to one port
 * together and runs them all through the devmap program of the first
 * (kernel/bpf/devmap.c, bq_enqueue()), so a frame sent without esa_egress
 * behind a multicast copy that has it would be judged by esa_egress, and a
 * multicast copy behind it would leave without it. esa_egress passes what
 * is not a multicast sum. A port missing from esa_mcast (detached
 * meanwhile): dropped.
 */
static __always_inline int esa_redirect_port(__u32 ifindex)
{
	return bpf_redirect_map(&esa_mcast, ifindex, XDP_DROP);
}

static __always_inline int esa_l2_forward(struct xdp_md *ctx,
					  const __u8 *dst)
{
	struct esa_fdb_entry *e;
	struct esa_mac_key k = {};

	if (!(dst[0] & 1)) {
		esa_mac_copy(k.addr, dst);
		e = bpf_map_lookup_elem(&esa_fdb, &k);
		if (e) {
			if (e->ifindex == esa_in_port(ctx))
				return XDP_DROP;
			return esa_redirect_port(e->ifindex);
		}
	}
	return bpf_redirect_map(&esa_mcast, 0,
				BPF_F_BROADCAST | BPF_F_EXCLUDE_INGRESS);
}

/*
 * Send the frame to IPv4 @addr: to the port and MAC learned for it. If
 * @addr is unknown, a frame that was already addressed to it (@same_dst)
 * goes by its destination MAC like any frame; a re-addressed one is
 * flooded with the broadcast MAC (the host owning @addr takes it). An
 * address bound at first sight and not seen yet (port 0, no MAC) is as
 * unknown: a PS answers only what reaches it, so after a data plane is
 * attached (the module keeping its jobs) it would never be seen, and
 * every resend its job's recovery needs would be dropped.
 */
static __always_inline int esa_send_to(struct xdp_md *ctx, __be32 addr,
				       int same_dst)
{
	static const __u8 bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct esa_frame f;
	struct esa_neigh *n = esa_host(addr);

	if (esa_frame_get(ctx, &f))
		return XDP_DROP;
	if (!n || !n->ifindex) {
		if (!same_dst)
			esa_mac_copy(f.eth->h_dest, bcast);
		return esa_l2_forward(ctx, f.eth->h_dest);
	}
	esa_mac_copy(f.eth->h_dest, n->mac);
	if (n->ifindex == esa_in_port(ctx))
		return XDP_TX;
	return esa_redirect_port(n->ifindex);
}

#endif /* _ESA_PKT_H */
