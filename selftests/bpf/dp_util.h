/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the data plane tests: a loaded switch, aggregation
 * frame builder and parser, BPF_PROG_TEST_RUN wrapper, standard jobs.
 */
#ifndef _DP_UTIL_H
#define _DP_UTIL_H

#include <stdint.h>
#include <linux/types.h>
#include "esa_dp.h"

#define DP_FRAME_MAX	2048
#define DP_SLOTS	64

/* Addresses of the test jobs: job j, worker i / PS (host byte order). */
#define DP_PS_ADDR(j)		(0x0a4d0000u | ((j) << 8) | 1)
#define DP_WORKER_ADDR(j, i)	(0x0a4d0000u | ((j) << 8) | (10 + (i)))
#define DP_WORKER_PORT(j, i)	(40000 + (j) * 100 + (i))

struct dp_frame {
	__u8	buf[DP_FRAME_MAX];
	__u32	len;
};

struct dp_pkt {			/* a frame to build (host byte order) */
	__u32	job_id;
	__u32	seq;
	__u32	agg_index;
	__u32	bitmap;
	__u8	fan_in;
	__u8	priority;
	__u8	flags;
	__u16	count;
	const __s32 *values;	/* count values */
	__u32	saddr, daddr;
	__u16	sport;
	__u64	token;		/* 0: version 1; else version 2, this trailer */
};

struct dp_out {			/* a parsed output frame (host order) */
	struct esa_hdr h;	/* fields converted to host order */
	__u32	saddr, daddr;
	__u16	sport, dport, udp_len, udp_csum, ip_len;
	int	ip_csum_ok;
	__u8	dmac[6], smac[6];
	__s32	values[ESA_MAX_VALUES];
	__u64	token;		/* version 2: the trailer; 0 otherwise */
};

/* Build an aggregation frame from worker w of job j (w < 0: from its PS). */
void dp_build(struct dp_frame *f, const struct dp_pkt *p);
void dp_pkt_worker(struct dp_pkt *p, __u32 job, __u8 fan_in, int w,
		   __u32 seq, __u32 idx, const __s32 *vals, __u16 count);
void dp_pkt_result(struct dp_pkt *p, __u32 job, __u8 fan_in, __u32 seq,
		   __u32 idx, const __s32 *vals, __u16 count);
/* Parse an output frame; -1 if it is not a whole aggregation frame. */
int dp_parse(const __u8 *buf, __u32 len, struct dp_out *o);

/*
 * An IPv4 TCP or UDP frame that is not for the aggregator (destination port
 * 9000) between two hosts, @payload bytes of a pattern from @seed, @ihl
 * 32-bit words of IP header (5: none; options are NOPs), its L4 checksum:
 */
enum dp_csum {
	DP_CSUM_FULL,		/* complete and correct */
	DP_CSUM_PARTIAL,	/* the pseudo-header sum, as CHECKSUM_PARTIAL */
	DP_CSUM_NONE,		/* 0 (UDP: no checksum) */
};
void dp_build_l4(struct dp_frame *f, __u8 proto, __u32 payload, __u8 ihl,
		 enum dp_csum csum, __u32 seed);
/* Offset of the L4 checksum field of such a frame. */
__u32 dp_l4_csum_off(const struct dp_frame *f);
/* Whether its L4 checksum verifies (over the IP total length). */
int dp_l4_csum_ok(const __u8 *buf, __u32 len);
/* Set the TCP/UDP checksum of frame @f (IPv4) as @csum says. */
void dp_l4_csum_set(struct dp_frame *f, enum dp_csum csum);

/* Run the switch program on @in; output in @out; returns the verdict. */
int dp_run(struct esa_switch *sw, const struct dp_frame *in,
	   struct dp_frame *out);
/* The same, as if @in came in on port @ifindex (0: lo, as dp_run()). */
int dp_run_on(struct esa_switch *sw, const struct dp_frame *in,
	      struct dp_frame *out, __u32 ifindex);

/*
 * Job j: fan_in workers at DP_WORKER_ADDR, PS at DP_PS_ADDR, fixed
 * priority prio, static slice [base, base + slice).
 */
void dp_job(struct esa_job_info *job, __u32 j, __u8 fan_in, __u8 prio,
	    __u32 base, __u32 slice);
/* Clear jobs, aggregators, counters, learned tables; set config. */
int dp_reset(struct esa_switch *sw, __u32 policy, __u32 slots,
	     __u32 timeout_us);
/* Counter c of job (0: totals). */
__u64 dp_cnt(struct esa_switch *sw, __u32 job, unsigned int c);
/* Aggregators @a and @b hold the same resident sum (gone records aside). */
/* Module-less: aggregators job @job holds (esa_occupancy); INT_MIN: unread. */
__s32 dp_occupancy(struct esa_switch *sw, __u32 job);
int dp_same_resident(const struct esa_agg *a, const struct esa_agg *b);

#endif /* _DP_UTIL_H */
