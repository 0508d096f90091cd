// SPDX-License-Identifier: GPL-2.0
/*
 * ESA switch data plane: an XDP program on every switch port that sums
 * aggregation packets (Documentation/wire-protocol.rst) in the aggregator
 * array and forwards all other traffic like an L2 switch, plus the devmap
 * egress program that turns the result multicast into per-worker copies;
 * on a one-armed port (the switch an addressed host behind one port) a TC
 * program makes those copies instead (esa_fanout).
 *
 * One source, two flavours (Documentation/dataplane.rst): by default the
 * config, jobs and arbitration come from maps (esa_flavour_maps.h); built
 * with -DESA_MODULE_FLAVOUR they come from the module's kfuncs
 * (esa_flavour_kmod.h).
 */
#include <linux/bpf.h>
#include <linux/in.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "esa_dataplane.h"
#include "esa_flavour.h"
#include "esa_pkt.h"
#include "esa_csum.h"
#include "esa_agg.h"
#include "esa_lock.h"

char LICENSE[] SEC("license") = "GPL";

/* Counter @c (checked by the caller) grows by @n in esa_stats entry @k. */
static __always_inline void esa_stats_add(__u32 k, __u32 c, __u32 n)
{
	struct esa_counter_block *b = bpf_map_lookup_elem(&esa_stats, &k);

	if (b)
		b->cnt[c] += n;
}

/* Whether @job_id names a job (1..ESA_MAX_JOB_ID; 0 is none). */
static __always_inline int esa_is_job_id(__u32 job_id)
{
	return job_id && job_id <= ESA_MAX_JOB_ID;
}

/*
 * Counter @c grows by @n, switch-wide and for @job_id (if a job), in
 * esa_stats alone (the module is not told: esa_count_n() does that).
 * Whether it counted for a job.
 */
static __always_inline int esa_count_stats(__u32 job_id, __u32 c, __u32 n)
{
	if (c >= __ESA_CNT_MAX)
		return 0;
	esa_stats_add(0, c, n);
	if (!esa_is_job_id(job_id))
		return 0;
	esa_stats_add(job_id, c, n);
	return 1;
}

/*
 * Counter @c grows by @n, switch-wide and for @job_id (if a job), and the
 * module is told (@amount: esa_acct_opts.amount).
 */
static __always_inline void esa_count_n(__u32 job_id, __u32 c, __u32 n,
					__u32 amount)
{
	if (esa_count_stats(job_id, c, n))
		esa_acct(job_id, c, amount);
}

/* One event of counter @c (@bytes: value bytes of an AGGREGATED). */
static __always_inline void esa_count(__u32 job_id, __u32 c, __u32 bytes)
{
	esa_count_n(job_id, c, 1, bytes);
}

/*
 * A partial of @job_id left its slot without completing (resend flush,
 * reclaim) after holding it @held_us.
 */
static __always_inline void esa_count_stranded(__u32 job_id, __u32 held_us)
{
	esa_count(job_id, ESA_CNT_STRANDED, 0);
	esa_count_n(job_id, ESA_CNT_STRANDED_US, held_us, held_us);
}

/* An event of a job whose switch-wide count was already taken. */
static __always_inline void esa_count_job(__u32 job_id, __u32 c)
{
	if (c < __ESA_CNT_MAX && esa_is_job_id(job_id))
		esa_stats_add(job_id, c, 1);
}

/*
 * Drop the frame for @reason, counted for @job_id (0: none known). The
 * module counts a drop of no known job switch-wide (Documentation/
 * kmod.rst, "Events and statistics"); a job's is reported with the job.
 */
static __always_inline int esa_drop(__u32 job_id, __u32 reason)
{
	esa_count(job_id, reason, 0);
	if (!job_id)
		esa_acct(0, reason, 0);
	return XDP_DROP;
}

static __always_inline __u32 esa_popcount(__u32 v)
{
	v = v - ((v >> 1) & 0x55555555);
	v = (v & 0x33333333) + ((v >> 2) & 0x33333333);
	return (((v + (v >> 4)) & 0x0f0f0f0f) * 0x01010101) >> 24;
}

/* Index of the lowest set bit of a non-zero @v. */
static __always_inline __u32 esa_lowbit(__u32 v)
{
	__u32 n = 0;

	if (!(v & 0xffff)) { n += 16; v >>= 16; }
	if (!(v & 0xff)) { n += 8; v >>= 8; }
	if (!(v & 0xf)) { n += 4; v >>= 4; }
	if (!(v & 0x3)) { n += 2; v >>= 2; }
	if (!(v & 0x1)) { n += 1; }
	return n & 31;
}

/*
 * Whether the frame's version and token trailer do not match @token, the
 * token of the job the frame belongs to (0: none): a job without a token
 * takes version ESA_WIRE_VERSION only; a job with one takes version
 * ESA_WIRE_VERSION_TOKEN frames whose trailer is its token, and nothing
 * else (Documentation/security.rst). esa_parse_frame() has checked the
 * version and that the trailer is within the frame. A global function:
 * verified once, not once per way to it.
 */
__attribute__((noinline)) int esa_token_bad(struct xdp_md *ctx, __u64 token)
{
	struct esa_frame f;
	__u64 got;
	__u32 off;

	if (esa_frame_get(ctx, &f))
		return 1;
	if (!token)
		return f.h->version != ESA_WIRE_VERSION;
	if (f.h->version != ESA_WIRE_VERSION_TOKEN)
		return 1;
	off = ESA_OFF_VALS + bpf_ntohs(f.h->value_count) * 4;
	if (bpf_xdp_load_bytes(ctx, off, &got, sizeof(got)))
		return 1;
	return got != bpf_cpu_to_be64(token);
}

/*
 * Make the frame, whose header already has its value count, a frame of a
 * job with token @token (0: none): its version, and the token in the
 * trailer after the values (the lengths must count it). 0 or -1. A
 * global function for the same reason as esa_token_bad().
 */
__attribute__((noinline)) int esa_token_put(struct xdp_md *ctx, __u64 token)
{
	struct esa_frame f;
	__be64 be = bpf_cpu_to_be64(token);
	__u32 off;

	if (esa_frame_get(ctx, &f))
		return -1;
	f.h->version = token ? ESA_WIRE_VERSION_TOKEN : ESA_WIRE_VERSION;
	if (!token)
		return 0;
	off = ESA_OFF_VALS + bpf_ntohs(f.h->value_count) * 4;
	return bpf_xdp_store_bytes(ctx, off, &be, sizeof(be)) ? -1 : 0;
}

/* Bytes after the values of a frame of a job with token @token. */
static __always_inline __u32 esa_trailer_len(__u64 token)
{
	return token ? ESA_TOKEN_LEN : 0;
}

/*
 * The frame leaves for the PS @ps: destination rewritten (the switch, not
 * the sender, decides where a job's sums go), UDP checksum 0, IPv4
 * checksum recomputed.
 */
static __always_inline int esa_readdress_ps(struct xdp_md *ctx, __be32 ps)
{
	struct esa_frame f;

	if (esa_frame_get(ctx, &f))
		return -1;
	f.ip->daddr = ps;
	f.udp->dest = bpf_htons(ESA_UDP_PORT);
	f.udp->check = 0;
	esa_ip_csum(f.ip);
	return 0;
}

/* Header flags and values of a sum leaving the switch (s->pkt). */
/*
 * @count values (1..ESA_MAX_VALUES) from @src into the frame after the
 * header; 0 or -1. The length is checked right before the helper and
 * used for nothing else: a length checked earlier, or needed again after
 * the call, may reach the helper from a stack copy spilled before the
 * check, whose bounds the 6.1 verifier does not refine. A "< 4" test it
 * turns into a minimum (not "!= 0").
 */
static __always_inline int esa_store_values(struct xdp_md *ctx, __be32 *src,
					    __u32 count)
{
	__u32 len = count * 4;

	esa_opaque(len);
	if (len < 4 || len > ESA_MAX_VALUES * 4)
		return -1;
	return bpf_xdp_store_bytes(ctx, ESA_OFF_VALS, src, len) ? -1 : 0;
}

static __always_inline int esa_write_sum(struct xdp_md *ctx,
					 struct esa_scratch *s, __u32 count,
					 __u8 flags, int store)
{
	struct esa_frame f;

	if (store && esa_store_values(ctx, s->pkt, count))
		return -1;
	if (esa_frame_get(ctx, &f))
		return -1;
	if (s->out_overflow)
		flags |= ESA_F_OVERFLOW;
	f.h->flags = flags;
	f.h->worker_bitmap = bpf_htonl(s->out_bitmap);
	return 0;
}

/*
 * One-armed ports (Documentation/dataplane.rst, "One-armed ports"): every
 * output leaves by the port it came in on, from the port's address and
 * ESA_UDP_PORT, to its recipient's address, the Ethernet next hop taken
 * from the kernel's routing and neighbour tables (bpf_fib_lookup), so a
 * recipient in another subnet is reached through the router. UDP
 * checksum 0 (IPv4's "none"): the copies differ in addresses only, and a
 * full checksum per copy would cost a pass over the values each.
 */
#ifndef AF_INET
#define AF_INET	2
#endif

/*
 * The next hop of @dst (from @src) on port @ifindex into @fib:
 * BPF_FIB_LKUP_RET_SUCCESS with its MACs in @fib->dmac/smac only when the
 * route leaves by @ifindex itself (a one-armed port sends nothing
 * elsewhere) and its neighbour is resolved. @ctx: an XDP or TC context.
 */
#define esa_oa_nexthop(ctx, fib, ifindex, src, dst, len) ({		\
	int rc_;							\
									\
	__builtin_memset((fib), 0, sizeof(*(fib)));			\
	(fib)->family = AF_INET;					\
	(fib)->l4_protocol = IPPROTO_UDP;				\
	(fib)->tot_len = (len);						\
	(fib)->ipv4_src = (src);					\
	(fib)->ipv4_dst = (dst);					\
	(fib)->ifindex = (ifindex);					\
	rc_ = bpf_fib_lookup((ctx), (fib), sizeof(*(fib)), 0);		\
	rc_ == BPF_FIB_LKUP_RET_SUCCESS && (fib)->ifindex != (ifindex) ? \
		BPF_FIB_LKUP_RET_NOT_FWDED : rc_;			\
})

/*
 * Mark the frame for esa_fanout (struct esa_oa_meta) and pass it up:
 * XDP_PASS, or XDP_ABORTED on a driver without XDP metadata.
 */
static __always_inline int esa_oa_mark(struct xdp_md *ctx, __u32 job_id,
				       __u32 inc, __u32 workers, __u8 to_ps)
{
	struct esa_oa_meta *meta;
	void *data;

	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*meta)))
		return XDP_ABORTED;
	meta = (void *)(long)ctx->data_meta;
	data = (void *)(long)ctx->data;
	if ((void *)(meta + 1) > data)
		return XDP_ABORTED;
	meta->magic = ESA_OA_META_MAGIC;
	meta->job_id = job_id;
	meta->to_ps = to_ps;
	meta->pad = 0;
	meta->incarnation = inc;
	meta->workers = workers;
	return XDP_PASS;
}

/*
 * The frame leaves one-armed port (its ingress) for @dst:@dport, from
 * @src:ESA_UDP_PORT: readdressed, and passed up marked to esa_fanout,
 * which sends it by bpf_redirect_neigh(), the kernel's route and
 * neighbour tables: a next hop not resolved yet (a PS that never sent the
 * switch a frame) is resolved, the frame queued meanwhile. Not XDP_TX:
 * on veth a frame sent back by XDP_TX after it came in as an skb (from
 * the peer's stack or a bridge) did not arrive. A global function:
 * verified once for all its callers.
 */
__attribute__((noinline)) int esa_oa_send(struct xdp_md *ctx, __u32 job_id,
					  __be32 src, __be32 dst, __be16 dport)
{
	struct esa_frame f;

	if (esa_frame_get(ctx, &f))
		return XDP_DROP;
	f.ip->saddr = src;
	f.ip->daddr = dst;
	f.udp->source = bpf_htons(ESA_UDP_PORT);
	f.udp->dest = dport;
	f.udp->check = 0;
	esa_ip_csum(f.ip);
	return esa_oa_mark(ctx, job_id, 0, 0, 1);
}

/* Copy the recipients of @job into @m, for esa_fanout. */
static __always_inline void esa_oa_members_put(struct esa_oa_members *m,
					       const struct esa_job_info *job)
{
	m->job_id = job->job_id;
	m->incarnation = job->incarnation;
	m->fan_in = job->fan_in;
	m->ps_addr = job->ps_addr;
	__builtin_memcpy(m->worker_addr, job->worker_addr,
			 sizeof(m->worker_addr));
	__builtin_memcpy(m->worker_port, job->worker_port,
			 sizeof(m->worker_port));
}

/*
 * A sum of @job_id that goes to several recipients on one-armed port (its
 * destination the PS already): its source becomes @src:ESA_UDP_PORT, the
 * job's recipients are written to esa_oa_jobs and the frame goes up,
 * marked in its XDP metadata, to esa_fanout, which makes one copy per
 * recipient: each worker of the job, or of a pull's bitmap, as RESULT,
 * and the PS (@to_ps) the frame as it is (a COMPLETE). XDP itself cannot: XDP_TX sends the frame once, and
 * a devmap sends one copy per device (Documentation/dataplane.rst). A
 * global function, as esa_oa_send().
 */
__attribute__((noinline)) int esa_oa_fanout(struct xdp_md *ctx, __u32 job_id,
					    __be32 src, __u32 to_ps)
{
	const struct esa_job_info *job;
	struct esa_oa_members *m;
	struct esa_scratch *s;
	struct esa_frame f;
	__u32 zero = 0, key = job_id, workers;

	s = bpf_map_lookup_elem(&esa_scratch, &zero);
	if (!s)
		return XDP_DROP;
	job = esa_get_job(job_id, &s->job);
	m = bpf_map_lookup_elem(&esa_oa_jobs, &key);
	if (!job || !m || esa_frame_get(ctx, &f))
		return XDP_DROP;
	esa_oa_members_put(m, job);
	workers = ESA_FULL_BITMAP(job->fan_in);
	if (f.h->flags & ESA_F_RESEND)		/* a pull: its workers only */
		workers &= bpf_ntohl(f.h->worker_bitmap);
	f.ip->saddr = src;
	f.udp->source = bpf_htons(ESA_UDP_PORT);
	f.udp->check = 0;
	esa_ip_csum(f.ip);
	return esa_oa_mark(ctx, job_id, job->incarnation, workers, !!to_ps);
}

/*
 * Whether a frame of @job may be summed on a one-armed port. Behind one
 * port the ports cannot tell members apart: the job's token
 * (Documentation/security.rst) is what a one-armed port checks here,
 * and a job without one is refused. The one place that decides it.
 */
static __always_inline int esa_oa_job_ok(const struct esa_job_info *job)
{
	return job->token != 0;
}

/*
 * The frame goes to the PS @ps of @job_id (its destination already
 * rewritten): on a one-armed port from the port's address, else to
 * where the PS sits (esa_send_to(): @same_dst as there).
 */
static __always_inline int esa_out_ps(struct xdp_md *ctx,
				      const struct esa_scratch *s,
				      __u32 job_id, __be32 ps, int same_dst)
{
	if (s->oa_addr)
		return esa_oa_send(ctx, job_id, s->oa_addr, ps,
				   bpf_htons(ESA_UDP_PORT));
	return esa_send_to(ctx, ps, same_dst);
}

/*
 * A complete sum: to the PS flagged COMPLETE and, under esa and static,
 * from the same frame to every worker flagged RESULT (the multicast devmap
 * and esa_egress split it per port). Under atp the PS sends the RESULT.
 */
static __always_inline int esa_out_complete(struct xdp_md *ctx,
					    struct esa_scratch *s,
					    const struct esa_req *r, int store)
{
	__be32 ps = r->ps;
	struct esa_neigh *n;
	struct esa_frame f;

	if (esa_write_sum(ctx, s, r->count, ESA_F_COMPLETE, store) ||
	    esa_readdress_ps(ctx, ps))
		return XDP_DROP;
	esa_count(r->job_id, ESA_CNT_COMPLETED, 0);
	if (s->oa_addr) {
		if (r->policy == ESA_POLICY_ATP)
			return esa_out_ps(ctx, s, r->job_id, ps, 1);
		esa_count(r->job_id, ESA_CNT_RESULTS, 0);
		return esa_oa_fanout(ctx, r->job_id, s->oa_addr, 1);
	}
	/* the sum to the PS and, rewritten by esa_egress, to the workers */
	esa_udp_csum_write(ctx);
	if (r->policy == ESA_POLICY_ATP)
		return esa_send_to(ctx, ps, 1);
	n = esa_host(ps);
	if (n && !esa_frame_get(ctx, &f))
		esa_mac_copy(f.eth->h_dest, n->mac);
	esa_count(r->job_id, ESA_CNT_RESULTS, 0);
	return bpf_redirect_map(&esa_mcast, 0, BPF_F_BROADCAST);
}

/* A partial sum (s->pkt, stored if @store) to the PS flagged PARTIAL. */
static __always_inline int esa_out_partial(struct xdp_md *ctx,
					   struct esa_scratch *s,
					   const struct esa_req *r, int store)
{
	if (esa_write_sum(ctx, s, r->count, ESA_F_PARTIAL, store) ||
	    esa_readdress_ps(ctx, r->ps))
		return XDP_DROP;
	return esa_out_ps(ctx, s, r->job_id, r->ps, 1);
}

/*
 * The frame becomes the evicted partial of another job (or sequence):
 * header, addresses and length of the victim, values from s->evict.
 */
static __always_inline int esa_out_evict(struct xdp_md *ctx,
					 struct esa_scratch *s,
					 const struct esa_req *r, __u8 flags)
{
	const struct esa_job_info *owner;
	__u32 job = s->evict_job, n = s->evict_count, idx = r->slot;
	struct esa_frame f;
	__u32 udp_len;
	__be32 ps;
	int delta;

	owner = esa_get_job(job, &s->owner);
	if (!owner || owner->incarnation != s->evict_incarnation) {
		/* job deleted (perhaps added again): nobody to send it to */
		esa_count(0, ESA_CNT_EVICTIONS, 0);
		return XDP_DROP;
	}
	esa_count(job, ESA_CNT_EVICTIONS, 0);
	ps = owner->ps_addr;
	if (r->policy == ESA_POLICY_STATIC)
		idx = r->slot - owner->agg_base;
	if (n < 1 || n > ESA_MAX_VALUES)
		return XDP_DROP;
	/* the victim's values and its own token trailer, if it has one */
	udp_len = ESA_UDP_HLEN + ESA_HDR_LEN + n * 4 +
		  esa_trailer_len(owner->token);
	if (esa_frame_get(ctx, &f))
		return XDP_DROP;
	delta = (int)udp_len - (int)bpf_ntohs(f.udp->len);
	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		return XDP_DROP;
	if (esa_store_values(ctx, s->evict, s->evict_count))
		return XDP_DROP;
	if (esa_frame_get(ctx, &f))
		return XDP_DROP;
	f.h->flags = flags | (s->evict_overflow ? ESA_F_OVERFLOW : 0);
	f.h->fan_in = owner->fan_in;
	f.h->priority = s->evict_priority;
	f.h->job_id = bpf_htons(job);
	f.h->value_count = bpf_htons(n);
	f.h->seq = bpf_htonl(s->evict_seq);
	f.h->agg_index = bpf_htonl(idx);
	f.h->worker_bitmap = bpf_htonl(s->evict_bitmap);
	f.ip->tot_len = bpf_htons(ESA_IP_HLEN + udp_len);
	f.udp->len = bpf_htons(udp_len);
	if (esa_token_put(ctx, owner->token) || esa_readdress_ps(ctx, ps))
		return XDP_DROP;
	return esa_out_ps(ctx, s, job, ps, 0);
}

/*
 * Aggregator ownership for the occupancy count (the module's, or the
 * module-less flavour's own for the quota): the job that lost the slot to
 * a claim (evicted, preempted from a complete slot, reclaimed) releases
 * it, so does the sender's job when the step freed its slot (complete
 * under esa/static, RESULT under atp, flush by a resend); a claim of any
 * kind is the sender's. fan_in 1 never holds a slot: nothing to report.
 */
static __always_inline void esa_acct_owners(const struct esa_scratch *s,
					    const struct esa_req *r)
{
	if (r->lost_job)
		esa_acct_owner(r->lost_job, s->lost_inc, ESA_ACCT_RELEASE);
	if (r->released)
		esa_acct_owner(r->job_id, r->inc, ESA_ACCT_RELEASE);
	if (r->claimed)
		esa_acct_owner(r->job_id, r->inc, ESA_ACCT_CLAIM);
}

/* Set a flag and send the packet on, unaggregated, to its PS. */
static __always_inline int esa_out_unaggregated(struct xdp_md *ctx,
						const struct esa_scratch *s,
						const struct esa_req *r,
						__u8 flag)
{
	struct esa_frame f;

	if (esa_frame_get(ctx, &f))
		return XDP_DROP;
	f.h->flags |= flag;
	if (esa_readdress_ps(ctx, r->ps))
		return XDP_DROP;
	return esa_out_ps(ctx, s, r->job_id, r->ps, 1);
}

/* A parse step's verdict when the frame goes on to the next step. */
#define ESA_GO_ON	(-1)

/*
 * Frame-level checks, in the order of the wire protocol's drop table
 * (counted switch-wide only: the job is not known yet). Fills r's flags,
 * count and job id; ESA_GO_ON or the verdict of a drop.
 */
static __always_inline int esa_parse_frame(struct xdp_md *ctx,
					   struct esa_req *r)
{
	__u32 len, max, frame = ctx->data_end - ctx->data;
	struct esa_frame f;
	__u8 allowed, fan_in, tokened;

	if (esa_frame_get(ctx, &f))
		return esa_drop(0, ESA_CNT_DROP_TRUNCATED);
	r->flags = f.h->flags;
	r->is_result = !!(r->flags & ESA_F_RESULT);
	r->count = bpf_ntohs(f.h->value_count);
	fan_in = f.h->fan_in;
	/* RESULT | RESEND from the PS is a pull: "workers in the bitmap, resend" */
	allowed = r->is_result ? ESA_F_RESULT | ESA_F_OVERFLOW | ESA_F_ECN |
				 ESA_F_RESEND :
				 ESA_F_RESEND | ESA_F_ECN;
	/* whether the version is right for the job: esa_token_bad() */
	tokened = f.h->version == ESA_WIRE_VERSION_TOKEN;
	max = tokened ? ESA_MAX_VALUES_TOKEN : ESA_MAX_VALUES;
	if ((f.h->version != ESA_WIRE_VERSION && !tokened) ||
	    (r->flags & ~allowed) || r->count < 1 || r->count > max ||
	    fan_in < 1 || fan_in > ESA_MAX_WORKERS)
		return esa_drop(0, ESA_CNT_DROP_MALFORMED);
	len = ESA_UDP_HLEN + ESA_HDR_LEN + r->count * 4 +
	      (tokened ? ESA_TOKEN_LEN : 0);
	if (bpf_ntohs(f.udp->len) != len ||
	    bpf_ntohs(f.ip->tot_len) != ESA_IP_HLEN + len ||
	    frame < ESA_OFF_UDP + len)
		return esa_drop(0, ESA_CNT_DROP_TRUNCATED);
	r->job_id = bpf_ntohs(f.h->job_id);
	if (!esa_is_job_id(r->job_id))
		return esa_drop(0, ESA_CNT_DROP_UNKNOWN_JOB);
	return ESA_GO_ON;
}

/*
 * Job-level checks (drops counted for the job too): fan-in, the sender
 * (a worker of the job, or its PS for a RESULT), the aggregator index.
 * Fills the rest of r; ESA_GO_ON or the verdict of a drop.
 */
static __always_inline int esa_parse_job(struct xdp_md *ctx,
					 const struct esa_job_info *job,
					 const struct esa_switch_config *cfg,
					 struct esa_req *r)
{
	struct esa_frame f;
	__u32 bitmap, w;

	if (esa_frame_get(ctx, &f))
		return XDP_DROP;
	if (f.h->fan_in != job->fan_in)
		return esa_drop(r->job_id, ESA_CNT_DROP_MALFORMED);
	r->full = ESA_FULL_BITMAP(job->fan_in);
	bitmap = bpf_ntohl(f.h->worker_bitmap);
	if (r->is_result) {
		if (f.ip->saddr != job->ps_addr)
			return esa_drop(r->job_id, ESA_CNT_DROP_PORT);
		if (!bitmap || (bitmap & ~r->full))
			return esa_drop(r->job_id, ESA_CNT_DROP_MALFORMED);
	} else {
		if (!bitmap || (bitmap & (bitmap - 1)) || (bitmap & ~r->full))
			return esa_drop(r->job_id, ESA_CNT_DROP_MALFORMED);
		w = esa_lowbit(bitmap);
		if (f.ip->saddr != job->worker_addr[w] ||
		    f.udp->source != job->worker_port[w])
			return esa_drop(r->job_id, ESA_CNT_DROP_PORT);
		r->bit = bitmap;
	}
	r->policy = cfg->policy;
	/* atp is ATP's rule as published: the slot waits for the RESULT */
	r->track_gone = r->policy != ESA_POLICY_ATP;
	r->slot = bpf_ntohl(f.h->agg_index);
	if (r->policy == ESA_POLICY_STATIC) {
		if (r->slot >= job->agg_slice)
			return esa_drop(r->job_id, ESA_CNT_DROP_RANGE);
		r->slot += job->agg_base;
		if (r->slot < job->agg_base)
			return esa_drop(r->job_id, ESA_CNT_DROP_RANGE);
	}
	if (r->slot >= cfg->agg_slots)
		return esa_drop(r->job_id, ESA_CNT_DROP_RANGE);
	r->ps = job->ps_addr;
	r->inc = job->incarnation;
	r->seq = bpf_ntohl(f.h->seq);
	r->prio = esa_job_prio(job, f.h->priority);
	r->timeout_ns = (__u64)cfg->agg_timeout_us * 1000;
	return ESA_GO_ON;
}

/*
 * The locked step on aggregator @a. An esa clash with another job's
 * resident needs what cannot be had under the lock (the module's kfunc,
 * or the maps' job records and counts): the step asks, the flavour's
 * esa_arb_ask() decides unlocked, the step runs again. Ownership changes
 * are reported after the unlock. ESA_ACT_BUSY: the lock stayed held
 * (esa_lock.h), the step did not run (an ask changes nothing either).
 */
static __always_inline int esa_lock_step(struct esa_agg *a,
					 struct esa_scratch *s,
					 struct esa_req *r,
					 const struct esa_job_info *job)
{
	int act;

	if (!esa_agg_lock(a))
		return ESA_ACT_BUSY;
	act = esa_step(a, s, r);
	esa_agg_unlock(a);
	if (act == ESA_ACT_ASK) {
		struct esa_clash c = {
			.slot = r->slot,
			.owner_id = s->own_job,
			.owner_inc = s->own_inc,
			.owner_workers = esa_popcount(s->own_bitmap),
			.owner_prio = s->own_prio,
			.prio = r->prio,
		};

		r->arb_verdict = esa_arb_ask(job, &c);
		r->arb_valid = 1;
		if (!esa_agg_lock(a))
			return ESA_ACT_BUSY;
		act = esa_step(a, s, r);
		esa_agg_unlock(a);
	}
	esa_acct_owners(s, r);
	return act;
}

/* Count what the step did and send what it decided; the frame's verdict. */
static __always_inline int esa_act(struct xdp_md *ctx, struct esa_scratch *s,
				   struct esa_req *r, int act)
{
	__u32 bytes = r->count * 4;

	if (s->saturated)
		esa_count(r->job_id, ESA_CNT_OVERFLOWS, 0);
	switch (act) {
	case ESA_ACT_CLAIMED:
	case ESA_ACT_ADDED:
	case ESA_ACT_RECLAIM:
		esa_count(r->job_id, ESA_CNT_AGGREGATED, bytes);
		return XDP_DROP;
	case ESA_ACT_PREEMPT:
		esa_count(r->job_id, ESA_CNT_AGGREGATED, bytes);
		esa_count(r->job_id, ESA_CNT_PREEMPTIONS, 0);
		return XDP_DROP;
	case ESA_ACT_DUP:
		return esa_drop(r->job_id, ESA_CNT_DUPLICATES);
	case ESA_ACT_COMPLETE:
		esa_count(r->job_id, ESA_CNT_AGGREGATED, bytes);
		return esa_out_complete(ctx, s, r, 1);
	case ESA_ACT_COMPLETE_DUP:
		esa_count(r->job_id, ESA_CNT_DUPLICATES, 0);
		return esa_out_complete(ctx, s, r, 1);
	case ESA_ACT_FLUSH:
	case ESA_ACT_FLUSH_DUP:
		esa_count(r->job_id, act == ESA_ACT_FLUSH ? ESA_CNT_AGGREGATED :
			  ESA_CNT_DUPLICATES, bytes);
		esa_count_stranded(r->job_id, s->out_held_us);
		return esa_out_partial(ctx, s, r, 1);
	case ESA_ACT_EARLY:
	case ESA_ACT_EARLY_PASS:
		esa_count(r->job_id, ESA_CNT_AGGREGATED, bytes);
		esa_count(r->job_id, ESA_CNT_EARLY_PARTIALS, 0);
		if (act == ESA_ACT_EARLY_PASS) {
			s->out_bitmap = r->bit;
			s->out_overflow = 0;
		}
		return esa_out_partial(ctx, s, r, act == ESA_ACT_EARLY);
	case ESA_ACT_PASS_RESEND:
		esa_count(r->job_id, ESA_CNT_COLLISIONS, 0);
		return esa_out_unaggregated(ctx, s, r, 0);
	case ESA_ACT_COLLIDE:
		esa_count(r->job_id, ESA_CNT_COLLISIONS, 0);
		return esa_out_unaggregated(ctx, s, r, ESA_F_COLLISION);
	case ESA_ACT_PREEMPT_EVICT:
		esa_count(r->job_id, ESA_CNT_AGGREGATED, bytes);
		esa_count(r->job_id, ESA_CNT_PREEMPTIONS, 0);
		return esa_out_evict(ctx, s, r, ESA_F_PREEMPTED);
	case ESA_ACT_RECLAIM_EVICT:
		esa_count(r->job_id, ESA_CNT_AGGREGATED, bytes);
		esa_count_stranded(s->evict_job, s->evict_held_us);
		return esa_out_evict(ctx, s, r, ESA_F_PARTIAL);
	case ESA_ACT_RESULT:
	case ESA_ACT_RESULT_RELEASE:
		esa_count(r->job_id, r->flags & ESA_F_RESEND ? ESA_CNT_PULLS :
			  ESA_CNT_RESULTS, 0);
		if (s->oa_addr)
			return esa_oa_fanout(ctx, r->job_id, s->oa_addr, 0);
		return bpf_redirect_map(&esa_mcast, 0, BPF_F_BROADCAST);
	case ESA_ACT_BUSY:
		return esa_drop(r->job_id, ESA_CNT_DROP_BUSY);
	case ESA_ACT_MISMATCH:
	default:
		return esa_drop(r->job_id, ESA_CNT_DROP_MALFORMED);
	}
}

/*
 * An aggregation frame: parse, then the locked step, then act on it.
 * @oa_addr: the ingress port's address if it is one-armed (its outputs
 * leave by it, from that address), else 0. A global function: the
 * per-host and the one-armed paths share one verified copy.
 */
__attribute__((noinline)) int esa_aggregate(struct xdp_md *ctx,
					    __be32 oa_addr)
{
	const struct esa_job_info *job;
	struct esa_switch_config cfg;
	struct esa_req r = {};
	struct esa_scratch *s;
	struct esa_agg *a;
	__u32 zero = 0, len;
	int ret;

	esa_count(0, ESA_CNT_RX, 0);
	ret = esa_parse_frame(ctx, &r);
	if (ret != ESA_GO_ON)
		return ret;
	s = bpf_map_lookup_elem(&esa_scratch, &zero);
	if (!s)
		return XDP_ABORTED;
	s->oa_addr = oa_addr;
	job = esa_get_job_config(r.job_id, &s->job, &cfg);
	if (!job)
		return esa_drop(0, ESA_CNT_DROP_UNKNOWN_JOB);
	esa_count_job(r.job_id, ESA_CNT_RX);
	/* before anything of the job is done: only members know the token */
	if (esa_token_bad(ctx, job->token) ||
	    (oa_addr && !esa_oa_job_ok(job)))
		return esa_drop(r.job_id, ESA_CNT_DROP_TOKEN);
	ret = esa_parse_job(ctx, job, &cfg, &r);
	if (ret != ESA_GO_ON)
		return ret;
	a = bpf_map_lookup_elem(&esa_aggs, &r.slot);
	if (!a)
		return esa_drop(r.job_id, ESA_CNT_DROP_RANGE);
	if ((r.flags & ESA_F_RESEND) && !r.is_result)
		esa_count(r.job_id, ESA_CNT_RESENDS, 0);

	s->saturated = 0;
	if (!r.is_result && r.bit == r.full) {
		/* fan_in 1: complete on arrival, no aggregator needed. */
		s->out_bitmap = r.full;
		s->out_overflow = 0;
		esa_count(r.job_id, ESA_CNT_AGGREGATED, r.count * 4);
		return esa_out_complete(ctx, s, &r, 0);
	}
	if (!r.is_result) {
		len = r.count * 4;
		esa_opaque(len);
		if (len < 4 || len > ESA_MAX_VALUES * 4 ||
		    bpf_xdp_load_bytes(ctx, ESA_OFF_VALS, s->pkt, len))
			return esa_drop(r.job_id, ESA_CNT_DROP_TRUNCATED);
	}
	ret = esa_lock_step(a, s, &r, job);
	return esa_act(ctx, s, &r, ret);
}

/*
 * Learn where the frame's IPv4 sender sits: an ARP frame's sender address,
 * an IPv4 frame's source. 0, or the job that bound that address to another
 * port (esa_learn_neigh()).
 */
static __always_inline __u32 esa_learn_ipv4_sender(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(eth + 1) > data_end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_ARP))
		return esa_learn_arp(ctx, eth + 1);
	if (eth->h_proto != bpf_htons(ETH_P_IP) || (void *)(ip + 1) > data_end)
		return 0;
	return esa_learn_neigh(ip->saddr, esa_in_port(ctx), eth->h_source);
}

/*
 * Learn from any frame but an IPv4 one: the sender's address (ARP) and
 * source MAC. 0, or the job a spoofed address is bound to (unlearned).
 */
static __always_inline __u32 esa_learn_slow(struct xdp_md *ctx)
{
	void *data, *data_end;
	struct ethhdr *eth;
	__u32 spoof = esa_learn_ipv4_sender(ctx);

	if (spoof)
		return spoof;
	/* Re-read: the helper calls above make the compiler reload anyway. */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) <= data_end)
		esa_learn_mac(eth->h_source, esa_in_port(ctx));
	return 0;
}

/*
 * Learn from the frame where its sender sits (IPv4 address and MAC): 0,
 * or the job that bound its IPv4 source to another port (a spoof, nothing
 * learned). An IPv4 frame whose (port, MAC, address) this CPU last learned
 * nothing from, at a generation that still stands, skips both lookups:
 * nothing was written since, so they would find the same and write nothing
 * again, and the spoof check of that address would pass again. A different
 * address or MAC or port is a miss and is looked up in full. Nothing
 * leaves the tables but through a writer that bumps the generation
 * (esa_learned_put() and the other writers of esa_pkt.h;
 * esa_switch_learned_changed() in user space): the learned
 * tables' LRU evicts only inside a write. An entry past its age is written
 * again at the next miss, not at a hit: its age bounds what a port holds,
 * and a memo holds only while nothing at all was written.
 * A global function: verified once, its result a scalar. Inlined, Linux
 * 6.1's verifier walks the rest of the program once per way through the
 * learning (it does not prune the memo's hit and miss paths into one):
 * the module-less flavour took 867,494 of its 1,000,000 instructions.
 */
__attribute__((noinline)) __u32 esa_learn(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct esa_learn_memos *ms;
	struct esa_learn_memo *m;
	__u32 zero = 0, ifindex, spoof, way;
	__u64 *gen, g;
	__be32 addr;
	__u8 mac[6];

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return esa_learn_slow(ctx);
	gen = bpf_map_lookup_elem(&esa_learn_gen, &zero);
	ms = bpf_map_lookup_elem(&esa_learn_memo, &zero);
	if (!gen || !ms)
		return esa_learn_slow(ctx);
	/* before the lookups: a write after this moves it (seqlock reader) */
	g = *(volatile __u64 *)gen;
	addr = ip->saddr;
	ifindex = esa_in_port(ctx);
	way = bpf_ntohl(addr);
	way ^= (way >> 8) ^ ifindex;
	m = &ms->way[way & (ESA_LEARN_MEMO_WAYS - 1)];
	esa_mac_copy(mac, eth->h_source);
	if (m->valid && m->gen == g && m->addr == addr &&
	    m->ifindex == ifindex && esa_mac_eq(m->mac, mac))
		return 0;
	spoof = esa_learn_neigh(addr, ifindex, mac);
	if (spoof)
		return spoof;
	esa_learn_mac(mac, ifindex);
	if (*(volatile __u64 *)gen != g)
		return 0;	/* written (here or elsewhere): no memo yet */
	m->gen = g;
	m->addr = addr;
	m->ifindex = ifindex;
	esa_mac_copy(m->mac, mac);
	m->valid = 1;
	return 0;
}

/*
 * A frame that is, or may be, aggregation traffic the switch does not
 * take (cannot see into, or must not sum): seen (RX) and dropped for
 * @reason, switch-wide only (no job is known yet).
 */
static __always_inline int esa_drop_rx(__u32 reason)
{
	esa_count(0, ESA_CNT_RX, 0);
	return esa_drop(0, reason);
}

/*
 * A UDP datagram in IPv4 header @ip: whether it is for the aggregator
 * (destination ESA_UDP_PORT). A later fragment has no UDP header (its
 * bytes are data, however they look); a header cut short is none.
 */
static __always_inline int esa_udp_to_switch(struct xdp_md *ctx,
					     struct iphdr *ip)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct udphdr *udp;
	__u32 ihl;

	if ((void *)(ip + 1) > data_end || ip->protocol != IPPROTO_UDP ||
	    esa_ip_later_fragment(ip))
		return 0;
	ihl = ip->ihl * 4;
	if (ihl < ESA_IP_HLEN)
		return 0;
	udp = (void *)ip + ihl;
	if ((void *)(udp + 1) > data_end)
		return 0;
	return udp->dest == bpf_htons(ESA_UDP_PORT);
}

/*
 * A frame with 802.1Q / 802.1ad tags. The switch is VLAN-unaware (one
 * broadcast domain), but a host takes a tagged frame as untagged when the
 * tag's VLAN is its own or VID 0 (a priority tag), so what the tags carry
 * is judged as if untagged: an ARP or IPv4 sender claiming a bound address
 * from another port is a spoof; UDP to the aggregator is dropped (sums
 * are taken from untagged frames only: a tagged one reaching a member
 * would be aggregation traffic nobody checked); the rest is learned and
 * switched as it is. More tags than ESA_VLAN_MAX_TAGS: the switch cannot
 * see what the frame carries, so it does not pass it on. A global
 * function: verified once, on a stack frame of its own (esa_switch_frame()
 * says why).
 */
__attribute__((noinline)) int esa_switch_tagged(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__be16 *proto = data + offsetof(struct ethhdr, h_proto);
	__u32 spoof = 0, i;
	void *l3;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
#pragma unroll
	for (i = 0; i < ESA_VLAN_MAX_TAGS; i++) {
		/* a tag is 4 bytes: its TCI, then the next EtherType */
		if ((void *)(proto + 3) > data_end)
			return esa_drop_rx(ESA_CNT_DROP_TRUNCATED);
		if (!esa_vlan_proto(*proto))
			break;
		proto += 2;
	}
	if (esa_vlan_proto(*proto))
		return esa_drop_rx(ESA_CNT_DROP_MALFORMED);
	l3 = proto + 1;
	if (*proto == bpf_htons(ETH_P_ARP)) {
		spoof = esa_learn_arp(ctx, l3);
	} else if (*proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;

		if ((void *)(ip + 1) > data_end)
			return esa_drop_rx(ESA_CNT_DROP_TRUNCATED);
		spoof = esa_learn_neigh(ip->saddr, esa_in_port(ctx),
					eth->h_source);
		if (!spoof && esa_udp_to_switch(ctx, ip))
			return esa_drop_rx(ESA_CNT_DROP_MALFORMED);
	}
	if (spoof)
		return esa_drop(spoof, ESA_CNT_DROP_SPOOF);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	esa_learn_mac(eth->h_source, esa_in_port(ctx));
	esa_count(0, ESA_CNT_FORWARDED, 0);
	return esa_l2_forward(ctx, eth->h_dest);
}

/*
 * What esa_switch_frame() and esa_one_armed() return for an aggregation
 * frame, which esa_switch then hands to esa_aggregate(): called from the
 * program's own frame, not from theirs, the deepest call chain stays
 * within the verifier's 512 bytes of stack (esa_aggregate()'s frame is
 * 328 bytes in the module flavour). Not an XDP verdict.
 */
#define ESA_AGGREGATE	0x100

/*
 * A frame whose sender esa_learn() checked: an aggregation frame
 * (ESA_AGGREGATE), anything else switched at L2. A global function on a
 * stack frame of its own: the verifier adds a caller's whole frame to each
 * callee's, and this path's is near the 512-byte limit, so it cannot be
 * the frame esa_learn() and the like are called from.
 */
__attribute__((noinline)) int esa_switch_frame(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__be32 daddr;
	__u32 ihl;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		goto l2;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		goto l2;
	/* a later fragment carries no UDP header: data, switched as it is */
	if (ip->protocol != IPPROTO_UDP || esa_ip_later_fragment(ip))
		goto l2;
	ihl = ip->ihl * 4;
	if (ihl < ESA_IP_HLEN)
		goto l2;
	udp = (void *)ip + ihl;
	if ((void *)(udp + 1) > data_end) {
		/*
		 * Cut inside the UDP header while IPv4 says more follows: it
		 * cannot be told from an aggregation frame, and a switch
		 * should not pass on what it knows is cut short.
		 */
		if (ETH_HLEN + bpf_ntohs(ip->tot_len) >
		    ctx->data_end - ctx->data)
			return esa_drop_rx(ESA_CNT_DROP_TRUNCATED);
		goto l2;
	}
	if (udp->dest != bpf_htons(ESA_UDP_PORT))
		goto l2;
	/*
	 * Options, or the first part of a fragmented datagram: not an
	 * aggregation packet, and not passed on either (reassembled behind
	 * a member's port it would be one nobody checked).
	 */
	if (ihl != ESA_IP_HLEN || esa_ip_fragment(ip))
		return esa_drop_rx(ESA_CNT_DROP_MALFORMED);
	daddr = ip->daddr;
	if (bpf_map_lookup_elem(&esa_oa_addrs, &daddr))
		return esa_drop_rx(ESA_CNT_DROP_MODE);	/* for a one-armed port */
	return ESA_AGGREGATE;
l2:
	esa_l4_csum_complete(ctx);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	esa_count(0, ESA_CNT_FORWARDED, 0);
	return esa_l2_forward(ctx, eth->h_dest);
}

/*
 * A frame on one-armed port @addr: the switch is a host there. Untagged
 * IPv4 UDP to ESA_UDP_PORT at @addr, without options, not a fragment, is
 * aggregation traffic; UDP to ESA_UDP_PORT at any other address is for
 * the other mode (counted); everything else is the server's own traffic
 * and goes to its stack. Nothing is learned or switched at L2 here.
 * ESA_AGGREGATE for aggregation traffic. A global function, as
 * esa_switch_frame().
 */
__attribute__((noinline)) int esa_one_armed(struct xdp_md *ctx, __be32 addr)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    !esa_udp_to_switch(ctx, ip))
		return XDP_PASS;
	if (ip->daddr != addr)
		return esa_drop_rx(ESA_CNT_DROP_MODE);
	if (ip->ihl * 4 != ESA_IP_HLEN || esa_ip_fragment(ip))
		return esa_drop_rx(ESA_CNT_DROP_MALFORMED);
	return ESA_AGGREGATE;
}

SEC("xdp")
int esa_switch(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct esa_port_role *role;
	__u32 spoof, ifindex;
	__be32 oa_addr = 0;
	int ret;

	if ((void *)(eth + 1) > data_end)
		return XDP_DROP;
	ifindex = esa_in_port(ctx);
	role = bpf_map_lookup_elem(&esa_port_roles, &ifindex);
	if (role && role->role == ESA_PORT_ONE_ARMED) {
		oa_addr = role->addr;
		ret = esa_one_armed(ctx, oa_addr);
		goto out;
	}
	/* from no station: nothing to learn or check it by (switch-wide) */
	if (esa_mac_group(eth->h_source))
		return esa_drop(0, ESA_CNT_DROP_SPOOF);
	if (esa_vlan_proto(eth->h_proto))
		return esa_switch_tagged(ctx);
	/*
	 * Where the sender's IPv4 address sits, before anything else is
	 * learned from the frame: one claiming a bound address from another
	 * port is a spoof, dropped unlearned (Documentation/security.rst).
	 */
	spoof = esa_learn(ctx);
	if (spoof)
		return esa_drop(spoof, ESA_CNT_DROP_SPOOF);
	ret = esa_switch_frame(ctx);
out:
	return ret == ESA_AGGREGATE ? esa_aggregate(ctx, oa_addr) : ret;
}

/*
 * A frame the multicast copied to every port: a sum (COMPLETE, RESULT,
 * a pull) of the ESA wire protocol. Everything else leaves by esa_mcast
 * too (esa_redirect_port()), but only towards its one port or flooded.
 */
static __always_inline int esa_is_multicast(const struct esa_frame *f)
{
	return f->eth->h_proto == bpf_htons(ETH_P_IP) &&
	       f->ip->ihl * 4 == ESA_IP_HLEN &&
	       f->ip->protocol == IPPROTO_UDP && !esa_ip_fragment(f->ip) &&
	       f->udp->dest == bpf_htons(ESA_UDP_PORT) &&
	       (f->h->version == ESA_WIRE_VERSION ||
		f->h->version == ESA_WIRE_VERSION_TOKEN) &&
	       (f->h->flags & (ESA_F_COMPLETE | ESA_F_RESULT));
}

/*
 * The frame leaving by port @out. A multicast sum: the PS's port keeps a
 * COMPLETE as it is; a port where worker i of the job sits gets it as
 * RESULT addressed to worker i (a pull only if worker i is in its bitmap);
 * others drop it. Any other frame was sent to this port alone, or flooded
 * (a unicast to the PS, L2 traffic): it leaves as it is. A function of
 * the port rather than of the devmap context, so esa_egress_port.bpf.c
 * can run it under BPF_PROG_TEST_RUN, which refuses devmap programs.
 */
static __always_inline int esa_egress_port(struct xdp_md *ctx, __u32 out)
{
	const struct esa_job_info *job;
	struct esa_neigh *n, *psn;
	struct esa_scratch *s;
	struct esa_frame f;
	__u32 zero = 0, i, fan_in, csum;
	__be32 ps, addr;
	__u16 hdr0;
	__u8 flags;

	if (esa_frame_get(ctx, &f) || !esa_is_multicast(&f))
		return XDP_PASS;
	flags = f.h->flags;
	s = bpf_map_lookup_elem(&esa_scratch, &zero);
	if (!s)
		return XDP_DROP;
	job = esa_get_job(bpf_ntohs(f.h->job_id), &s->job);
	if (!job)
		return XDP_DROP;
	ps = job->ps_addr;
	psn = esa_host(ps);
	if ((flags & ESA_F_COMPLETE) && psn && psn->ifindex == out)
		return XDP_PASS;
	fan_in = job->fan_in;
	for (i = 0; i < ESA_MAX_WORKERS; i++) {
		if (i >= fan_in)
			return XDP_DROP;
		addr = job->worker_addr[i];
		n = esa_host(addr);
		if (n && n->ifindex == out)
			break;
	}
	if (i >= ESA_MAX_WORKERS || !n)
		return XDP_DROP;
	if (esa_frame_get(ctx, &f))
		return XDP_DROP;
	if ((flags & ESA_F_RESEND) &&
	    !(bpf_ntohl(f.h->worker_bitmap) & (1u << (i & 31))))
		return XDP_DROP;	/* a pull for other workers */
	hdr0 = *(__u16 *)f.h;		/* version and flags */
	f.h->flags = ESA_F_RESULT |
		     (flags & (ESA_F_OVERFLOW | ESA_F_ECN | ESA_F_RESEND));
	esa_mac_copy(f.eth->h_dest, n->mac);
	if (psn)
		esa_mac_copy(f.eth->h_source, psn->mac);
	/*
	 * A switch's sum (COMPLETE) carries a valid UDP checksum: it follows
	 * the rewrite. A RESULT the PS sent may carry a partial one (a host's
	 * offload): none.
	 */
	csum = esa_csum_replace16((__u16)~f.udp->check, hdr0, *(__u16 *)f.h);
	csum = esa_csum_replace32(csum, f.ip->saddr, ps);
	csum = esa_csum_replace32(csum, f.ip->daddr, job->worker_addr[i]);
	csum = esa_csum_replace16(csum, f.udp->source, bpf_htons(ESA_UDP_PORT));
	csum = esa_csum_replace16(csum, f.udp->dest, job->worker_port[i]);
	f.udp->check = (flags & ESA_F_COMPLETE) && f.udp->check ?
		       esa_csum_finish(csum) : 0;
	f.ip->saddr = ps;
	f.ip->daddr = job->worker_addr[i];
	f.udp->source = bpf_htons(ESA_UDP_PORT);
	f.udp->dest = job->worker_port[i];
	esa_ip_csum(f.ip);
	return XDP_PASS;
}

/* Devmap egress program of esa_mcast: one copy per port. */
SEC("xdp/devmap")
int esa_egress(struct xdp_md *ctx)
{
	return esa_egress_port(ctx, ctx->egress_ifindex);
}

/*
 * Devmap egress program of a one-armed port's esa_mcast entry: nothing
 * switched at L2 (a flood, a result multicast) leaves by a one-armed
 * port; its own outputs leave by XDP_TX and esa_fanout.
 */
SEC("xdp/devmap")
int esa_egress_none(struct xdp_md *ctx)
{
	return XDP_DROP;
}

/* What esa_fanout_copy() made of a copy. */
enum esa_copy {
	ESA_COPY_SENT,		/* the port took it */
	ESA_COPY_NO_NEXTHOP,	/* the next hop is not resolved: not sent */
	ESA_COPY_REFUSED,	/* the port dropped it (its peer's queue full) */
};

/*
 * One copy of the frame on @skb's port to @dst:@dport (as RESULT if
 * @as_result, else as it is; its source is the port's already), next hop
 * by the kernel's tables; the frame itself stays for the next copy. An
 * enum esa_copy: the port's transmit says at once whether it took the
 * copy (a veth hands it to its peer's queue, or drops it). A global
 * function: verified once, not once per recipient.
 */
__attribute__((noinline)) int esa_fanout_copy(struct __sk_buff *skb,
					      __be32 dst, __be16 dport,
					      __u32 as_result)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + ESA_OFF_IP;
	struct udphdr *udp = data + ESA_OFF_UDP;
	struct esa_hdr *h = data + ESA_OFF_HDR;
	struct bpf_fib_lookup fib;
	__u32 ifindex = skb->ifindex;
	__u16 len;

	if (data + ESA_OFF_VALS > data_end)
		return ESA_COPY_REFUSED;
	if (as_result)
		h->flags = ESA_F_RESULT | (h->flags & (ESA_F_OVERFLOW |
			   ESA_F_ECN | ESA_F_RESEND));
	ip->daddr = dst;
	udp->dest = dport;
	esa_ip_csum(ip);
	len = bpf_ntohs(ip->tot_len);
	if (esa_oa_nexthop(skb, &fib, ifindex, ip->saddr, dst, len) !=
	    BPF_FIB_LKUP_RET_SUCCESS)
		return ESA_COPY_NO_NEXTHOP;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	eth = data;
	if ((void *)(eth + 1) > data_end)
		return ESA_COPY_REFUSED;
	esa_mac_copy(eth->h_dest, fib.dmac);
	esa_mac_copy(eth->h_source, fib.smac);
	return bpf_clone_redirect(skb, ifindex, 0) ? ESA_COPY_REFUSED :
						     ESA_COPY_SENT;
}

/*
 * TC (clsact ingress) program of a one-armed port: a frame esa_oa_fanout()
 * marked is a sum to copy, one copy per recipient out of the same port
 * (bpf_clone_redirect), then dropped; anything else goes on to the stack
 * untouched. A frame from the wire cannot carry the mark: only XDP writes
 * metadata. Documentation/dataplane.rst says why copies are made here.
 */
/*
 * The copies to the workers in @workers of job @job_id (incarnation
 * @inc): one per worker, by esa_fanout_copy(). -1: the port is no longer
 * one-armed, or the job changed since the XDP program wrote its members.
 */
static __always_inline int esa_fanout_workers(struct __sk_buff *skb,
					      __u32 job_id, __u32 inc,
					      __u32 workers)
{
	const struct esa_oa_members *m;
	__u32 ifindex = skb->ifindex, i;

	m = bpf_map_lookup_elem(&esa_oa_jobs, &job_id);
	if (!bpf_map_lookup_elem(&esa_port_roles, &ifindex) || !m ||
	    m->job_id != job_id || m->incarnation != inc)
		return -1;
	for (i = 0; i < ESA_MAX_WORKERS; i++)
		if ((workers & (1u << i)) &&
		    esa_fanout_copy(skb, m->worker_addr[i], m->worker_port[i],
				    1) == ESA_COPY_NO_NEXTHOP)
			esa_count(job_id, ESA_CNT_DROP_NEXTHOP, 0);
	return 0;
}

/*
 * The frame to the recipient it is addressed to (the PS), first and as
 * the XDP program left it; TC_ACT_OK: sent, the workers' copies may
 * follow. A sum the PS does not get must reach no worker either: a
 * worker that has its result no longer has its own values to resend
 * (the result took their place), so the PS, lacking them, could finish
 * the sum neither from the other workers' resends nor by pulling; the
 * job would stall for good. Without a copy for anyone, every worker
 * resends and the PS sums those. So: a copy the port refused (a burst
 * filled its peer's queue; the copies behind it would be refused too)
 * ends the fan-out. A PS whose neighbour entry is missing (under esa it
 * never sends the switch a frame) gets the frame itself by
 * bpf_redirect_neigh(), which resolves it, and no worker a copy.
 */
static __always_inline int esa_fanout_ps(struct __sk_buff *skb, __be32 dst,
					 __be16 dport)
{
	switch (esa_fanout_copy(skb, dst, dport, 0)) {
	case ESA_COPY_SENT:
		return TC_ACT_OK;
	case ESA_COPY_NO_NEXTHOP:
		return bpf_redirect_neigh(skb->ifindex, NULL, 0, 0);
	default:
		return TC_ACT_SHOT;
	}
}

SEC("tc")
int esa_fanout(struct __sk_buff *skb)
{
	struct esa_oa_meta *meta = (void *)(long)skb->data_meta;
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct iphdr *ip = data + ESA_OFF_IP;
	struct udphdr *udp = data + ESA_OFF_UDP;
	__u32 job_id, inc, workers;
	__be16 dport;
	__be32 dst;
	__u8 to_ps;
	int ret;

	if ((void *)(meta + 1) > data || meta->magic != ESA_OA_META_MAGIC)
		return TC_ACT_OK;
	job_id = meta->job_id;
	inc = meta->incarnation;
	workers = meta->workers;
	to_ps = meta->to_ps;
	if (data + ESA_OFF_VALS > data_end)
		return TC_ACT_SHOT;
	dst = ip->daddr;
	dport = udp->dest;
	if (to_ps) {
		ret = esa_fanout_ps(skb, dst, dport);
		if (ret != TC_ACT_OK)
			return ret;
	}
	/* a port detached, a job changed meanwhile: nobody to copy to */
	if (workers)
		esa_fanout_workers(skb, job_id, inc, workers);
	return TC_ACT_SHOT;
}
