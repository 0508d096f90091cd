/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause */
/*
 * ESA wire protocol: the one definition of the aggregation packet header,
 * shared by the XDP data plane, the kernel module and user space.
 *
 * An aggregation packet is Ethernet / IPv4 (no options) / UDP to
 * ESA_UDP_PORT / struct esa_hdr / value_count signed 32-bit values.
 * Every multi-byte field, values included, is in network byte order.
 * Documentation/wire-protocol.rst shows the byte layout.
 */
#ifndef _UAPI_ESA_WIRE_H
#define _UAPI_ESA_WIRE_H

#include <linux/types.h>

/* UDP destination port of every aggregation packet (data, result, ACK). */
#define ESA_UDP_PORT		47000

#define ESA_WIRE_VERSION	1

/*
 * Values per packet. 64 is the floor every endpoint must accept; the ceiling
 * is what fits a 1500-byte MTU: 1500 - 20 (IPv4) - 8 (UDP) - 20 (header)
 * = 1452 bytes = 363 values.
 */
#define ESA_MTU			1500
#define ESA_MIN_VALUES		64
#define ESA_MAX_VALUES		363

/* Workers per job: one bit each in worker_bitmap. */
#define ESA_MAX_WORKERS		32
/* The worker_bitmap of a sum of all @fan_in (1..ESA_MAX_WORKERS) workers. */
#define ESA_FULL_BITMAP(fan_in) \
	((fan_in) >= ESA_MAX_WORKERS ? 0xffffffffu : (1u << (fan_in)) - 1)

/* Switch servers one job may span (include/esa_shard.h has the rule). */
#define ESA_MAX_SHARDS		16

/* Job ids are 1..ESA_MAX_JOB_ID; 0 means "no job" (a free aggregator). */
#define ESA_MAX_JOB_ID		1023

/* Priority: 0 lowest .. ESA_MAX_PRIORITY highest. */
#define ESA_MAX_PRIORITY	255

/* flags */
enum esa_flags {
	/* worker -> switch: retransmission; flush any partial sum to the PS */
	ESA_F_RESEND	= 1 << 0,
	/* switch -> PS: aggregator held by another job; values unaggregated */
	ESA_F_COLLISION	= 1 << 1,
	/* switch -> PS: partial sum evicted by a higher-priority job */
	ESA_F_PREEMPTED	= 1 << 2,
	/* PS -> switch -> workers, or switch -> workers: the final aggregate */
	ESA_F_RESULT	= 1 << 3,
	/* congestion experienced (reserved for congestion control) */
	ESA_F_ECN	= 1 << 4,
	/* a value saturated at INT32_MIN/INT32_MAX while being added */
	ESA_F_OVERFLOW	= 1 << 5,
	/* switch -> PS: complete aggregate (all fan_in workers counted) */
	ESA_F_COMPLETE	= 1 << 6,
	/* switch -> PS: a partial sum flushed by a resend */
	ESA_F_PARTIAL	= 1 << 7,
};

#define ESA_F_ALL	0xff

struct esa_hdr {
	__u8	version;	/* ESA_WIRE_VERSION */
	__u8	flags;		/* enum esa_flags */
	__u8	fan_in;		/* workers in the job, 1..ESA_MAX_WORKERS */
	__u8	priority;	/* sender's job priority, 0..ESA_MAX_PRIORITY */
	__be16	job_id;		/* 1..ESA_MAX_JOB_ID */
	__be16	value_count;	/* values after the header, 1..ESA_MAX_VALUES */
	__be32	seq;		/* packet sequence within the job */
	__be32	agg_index;	/* aggregator slot chosen by the worker */
	__be32	worker_bitmap;	/* data: sender's bit; partial/result: bits summed */
} __attribute__((packed));

#define ESA_HDR_LEN	20

/*
 * A job with a token (Documentation/security.rst): every frame of it, in
 * every direction (worker, switch, PS), is version ESA_WIRE_VERSION_TOKEN
 * and carries the job's 64-bit token, in network byte order, in the
 * ESA_TOKEN_LEN bytes right after its values (the UDP and IPv4 lengths
 * count them). A host that never saw the token (one off the path) can
 * neither add to a sum nor feed a worker a result. A job without a token
 * sends version ESA_WIRE_VERSION frames, as before; a token of 0 is none.
 */
#define ESA_WIRE_VERSION_TOKEN	2
#define ESA_TOKEN_LEN		8
/* Values per packet of a job with a token: the trailer takes two. */
#define ESA_MAX_VALUES_TOKEN \
	((ESA_MTU - 20 - 8 - ESA_HDR_LEN - ESA_TOKEN_LEN) / 4)

#ifndef __cplusplus
_Static_assert(sizeof(struct esa_hdr) == ESA_HDR_LEN, "esa_hdr is 20 bytes");
_Static_assert(14 + 20 + 8 + ESA_HDR_LEN + 4 * ESA_MAX_VALUES <= ESA_MTU + 14,
	       "a full packet fits the MTU");
_Static_assert(20 + 8 + ESA_HDR_LEN + 4 * ESA_MAX_VALUES_TOKEN +
	       ESA_TOKEN_LEN <= ESA_MTU, "a full packet with a token fits");
#endif

#endif /* _UAPI_ESA_WIRE_H */
