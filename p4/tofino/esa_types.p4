/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Headers, metadata and the compile-time sizes of the Tofino program.
 * Documentation/tofino.rst explains each choice; the wire header itself is
 * in esa_wire.p4 (checked against uapi/esa_wire.h).
 */
#ifndef _ESA_TYPES_P4_
#define _ESA_TYPES_P4_

#include "esa_wire.p4"
#include "esa_counters.p4"

/*
 * Values aggregated per packet: one 32-bit register per value, four
 * stateful ALUs per stage, eight stages (Documentation/tofino.rst,
 * "Resource estimate"). A data packet with another value_count is sent
 * on unaggregated to its PS (COLLISION), so every count still works.
 * The control plane reads this line (esa_tofino/program.py).
 */
#define ESA_TOFINO_VALUES 32

/* Aggregators; the control plane refuses a switch with more agg_slots. */
#define ESA_TOFINO_SLOTS 16384
typedef bit<14> esa_slot_t;

/*
 * Time unit of claim times and agg_timeout: 2^16 ns (65.536 us), taken
 * from bits 47..16 of the ingress global timestamp; ages up to 2^31 units
 * (39 hours) compare correctly.
 */
#define ESA_TIME_SHIFT 16

/* atp: the bit that keeps a complete slot held until the PS's RESULT. */
const bit<32> ESA_HOLD = 0x80000000;

/* enum esa_policy */
const bit<2> ESA_POLICY_ESA    = 0;
const bit<2> ESA_POLICY_ATP    = 1;
const bit<2> ESA_POLICY_STATIC = 2;

/* The multicast group that floods unknown L2 destinations. */
const MulticastGroupId_t ESA_FLOOD_MGID = 0xffff;
/* Replication id of a job group's copy for the PS (workers use 0..31). */
const bit<16> ESA_RID_PS = 0xffff;

const ResubmitType_t ESA_RESUBMIT_TAKE = 1;

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

header ipv4_opt_word_h {
    bit<32> word;
}

/* ARP for IPv4 over Ethernet: the sender's address is checked (spoofing). */
header arp_h {
    bit<16> htype;
    bit<16> ptype;
    bit<8>  hlen;
    bit<8>  plen;
    bit<16> oper;
    bit<48> sha;
    bit<32> spa;
    bit<48> tha;
    bit<32> tpa;
}

header udp_h {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> length;
    bit<16> checksum;
}

#define ESA_VALUE_LIST(X) \
    X(0)  X(1)  X(2)  X(3)  X(4)  X(5)  X(6)  X(7)  \
    X(8)  X(9)  X(10) X(11) X(12) X(13) X(14) X(15) \
    X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) \
    X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)

#define ESA_VALUE_FIELD(i) bit<32> v##i;
header esa_values_h {
    ESA_VALUE_LIST(ESA_VALUE_FIELD)
}

/* What ingress tells egress about a frame (prepended, removed by egress). */
const bit<8> ESA_OUT_L2       = 0;  /* switched at L2 (unicast or flood) */
const bit<8> ESA_OUT_PS       = 1;  /* unicast to a PS, headers final */
const bit<8> ESA_OUT_COMPLETE = 2;  /* job group: COMPLETE to PS, RESULT to workers */
const bit<8> ESA_OUT_RESULT   = 3;  /* job group: PS's RESULT to the workers */
const bit<8> ESA_OUT_PULL     = 4;  /* job group: a pull, to the workers in pull_bitmap */

header esa_bridge_h {
    bit<8>   out;           /* ESA_OUT_* */
    bit<8>   cnt_flags;     /* ESA_BRIDGE_SUM | ESA_BRIDGE_STRANDED */
    bit<16>  job;           /* counter index of egress events */
    bit<7>   pad;
    PortId_t ingress_port;  /* flood: never back where it came from */
    bit<32>  pull_bitmap;   /* ESA_OUT_PULL: the workers asked to resend */
    bit<32>  held;          /* a stranded partial's time in its slot */
}

/* cnt_flags */
const bit<8> ESA_BRIDGE_SUM      = 1;   /* values are sums: check bounds */
const bit<8> ESA_BRIDGE_STRANDED = 2;   /* a stranded partial: add its held time */

/* Resubmit metadata of a take (64 bits, Tofino's resubmit size). */
const bit<8> ESA_TAKE_PREEMPT = 1;
const bit<8> ESA_TAKE_RECLAIM = 2;

header esa_resubmit_h {
    bit<8>  kind;           /* ESA_TAKE_* */
    bit<8>  res_prio;       /* the resident judged in the first pass */
    bit<16> res_job;
    bit<32> pad;
}

struct esa_headers_t {
    esa_bridge_h  bridge;
    ethernet_h    ethernet;
    arp_h         arp;
    ipv4_h        ipv4;
    ipv4_opt_word_h[10] ipv4_opts;
    udp_h         udp;
    esa_h         esa;
    esa_values_h  vals;
}

/*
 * What the ownership stage did (the second replica's return value, encoded
 * by the compiler in the stateful ALU's predicate output).
 */
enum esa_owner_class_t {
    CLAIMED,    /* the slot was free: this (job, seq) holds it now */
    MINE,       /* held by this (job, seq): this worker's bit cleared */
    OTHER,      /* held by another (job, seq): untouched */
    TAKEN,      /* second pass: another (job, seq) was displaced */
    FLUSHED,    /* resend: this (job, seq)'s partial left, slot free */
    KEPT,       /* resend or RESULT: the slot was not this sum's to end */
    RELEASED    /* atp: the PS's RESULT freed the held complete slot */
}

/* What to do with the values (the value tables' match key). */
const bit<3> ESA_VOP_NONE  = 0;
const bit<3> ESA_VOP_WRITE = 1;  /* claim: values = packet */
const bit<3> ESA_VOP_ADD   = 2;  /* values += packet, sums into the packet */
const bit<3> ESA_VOP_SWAP  = 3;  /* take: values = packet, old into the packet */
const bit<3> ESA_VOP_FLUSH = 4;  /* resend: add if uncounted, sums out */

/* Owner-stage operation chosen from the packet. */
const bit<2> ESA_OWN_DATA    = 0;
const bit<2> ESA_OWN_TAKE    = 1;
const bit<2> ESA_OWN_RESEND  = 2;
const bit<2> ESA_OWN_RELEASE = 3;

struct esa_ig_meta_t {
    esa_resubmit_h    resub_in;     /* parsed: this is the second pass */
    esa_resubmit_h    resub_out;    /* emitted when asking for one */

    /* esa_bound: the sender's address belongs to a job member */
    bit<1>   bound;
    PortId_t bound_port;            /* ... who sits on this port */
    bit<16>  bound_job;             /* ... of this job (counters) */

    /* esa_config (switch-wide) */
    bit<2>   policy;
    bit<32>  timeout;               /* ESA_TIME_SHIFT units; 0: never reclaim */
    bit<32>  partial_floor;         /* resend flushes when missing > this */
    bit<32>  hold;                  /* ESA_HOLD under atp, else 0 */

    /* esa_job */
    bit<1>   job_known;
    bit<8>   job_fan_in;
    bit<32>  full;                  /* all fan_in bits */
    bit<32>  base;                  /* static: the slice; else 0 */
    bit<32>  quota;                 /* static: the slice; else agg_slots */
    MulticastGroupId_t mgid;

    /* validation */
    bit<1>   hdr_ok;                /* version, flags, counts, fan_in range */
    bit<1>   one_bit;               /* worker_bitmap has exactly one bit */
    bit<1>   member_ok;
    bit<1>   ps_ok;
    bit<1>   is_result;
    bit<1>   is_resend;
    bit<1>   ip_options;            /* parser: IPv4 options were skipped */
    bit<16>  want_udp_len;
    bit<16>  want_ip_len;
    bit<32>  outside;               /* worker_bitmap & ~full */
    bit<32>  index_over;            /* agg_index - quota (sign: in range) */
    bit<1>   drop;
    esa_cnt_t drop_reason;
    bit<16>  cnt_job;               /* job id for counters, 0 if unknown */

    /* the aggregator */
    bit<32>  slot;
    bit<32>  key;                   /* job << 22 | seq[21:0] */
    bit<32>  claim;                 /* missing set of a claim, & mask of a worker */
    bit<32>  owner_word;            /* job ++ priority, the slot record C */
    bit<32>  now;
    bit<2>   own_op;
    bit<1>   own;                   /* this frame runs the ownership stage */
    bit<1>   summing;               /* ... as a data packet the switch sums */
    bit<32>  a_missing;             /* ownership replica 1: old missing set */
    esa_owner_class_t a_class;      /* ownership replica 2: what happened */
    bit<32>  a_rest;                /* old missing ^ bit: complete if == hold */
    bit<32>  b_old;                 /* workers summed before this packet */
    bit<32>  b_hit;                 /* b_old & bit: counted already */
    bit<32>  c_old;                 /* resident job << 8 | priority */
    bit<32>  d_seq;                 /* resident seq (claims), seq ^ S (checks) */
    bit<32>  d_time;                /* resident claim time */
    bit<3>   vop;

    /* the first pass's verdict on another resident */
    bit<16>  prio_diff;             /* resident prio - ours (sign: we win) */
    bit<32>  age;
    bit<32>  slack;                 /* timeout - age (sign: stale) */

    /* output */
    bit<8>   out;                   /* ESA_OUT_*, or absorbed/dropped */
    bit<1>   absorb;                /* the frame ends here (not a drop) */
    bit<1>   has_sum;               /* values are sums: egress checks bounds */
    bit<32>  out_bitmap;
    bit<16>  route_job;             /* whose PS a unicast goes to */
    bit<32>  route_base;            /* that job's static base (0 otherwise) */
    bit<1>   route_known;

    /* counter events of this frame */
    esa_cnt_t outcome;              /* exactly one per aggregation frame */
    bit<1>   ev_completed;
    bit<1>   ev_results;            /* a switch completion's multicast */
    bit<1>   ev_preempted;          /* we took another job's slot */
    bit<1>   ev_evicted;            /* ... and its partial left (victim's) */
    bit<1>   ev_stranded;           /* a partial left by flush or reclaim */
}

struct esa_eg_meta_t {
    bit<32>  worker_bit;            /* the copy's worker (multicast) */
    bit<32>  pulled;                /* pull_bitmap & worker_bit */
    bit<1>   saturated;
    bit<16>  want_len;
}

#endif /* _ESA_TYPES_P4_ */
