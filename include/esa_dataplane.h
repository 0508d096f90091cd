/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the XDP data plane stores what it works with: the job record and
 * the switch settings (map values of the module-less flavour, kfunc
 * outputs of the module flavour), the aggregators, counters, learned
 * tables and per-CPU scratch. Shared by the BPF program (bpf/), the
 * module (kmod/), the loader (tools/lib/dp) and the rules
 * (lib/esa_rules.c); not UAPI: it changes with the data plane. The wire
 * header, policies and counter indices are in uapi/. See
 * Documentation/dataplane.rst.
 */
#ifndef _ESA_DATAPLANE_H
#define _ESA_DATAPLANE_H

#include <linux/types.h>
#include "esa_switch.h"

/* Switch ports in the flood and multicast devmaps. */
#define ESA_MAX_PORTS		256
/*
 * Bound member addresses (esa_neigh: every job member's address, never
 * evicted), learned IPv4 neighbours (esa_learned) and MAC addresses
 * (esa_fdb). The learned tables are LRU maps whose entries age: a learned
 * entry is good for ESA_LEARN_AGE_S (802.1D's default ageing time) after
 * it was written, then written again by its host's next frame; a port
 * writes at most ESA_LEARN_PORT_BUDGET entries of each learned table per
 * ESA_LEARN_AGE_S, so one port holds at most twice that many live ones
 * and no host behind it can fill a table (Documentation/dataplane.rst,
 * "Learning").
 */
#define ESA_NEIGH_ENTRIES	4096
#define ESA_LEARNED_ENTRIES	4096
#define ESA_FDB_ENTRIES		4096
#define ESA_LEARN_AGE_S		300
#define ESA_LEARN_PORT_BUDGET	512
/* esa_stats: entry 0 holds the switch-wide totals, entry j job j's. */
#define ESA_STATS_ENTRIES	(ESA_MAX_JOB_ID + 1)

/*
 * A job as the data plane sees it. The module flavour gets it from the
 * esa_job_lookup() kfunc, the module-less flavour reads it from the
 * esa_jobs array indexed by job_id (a record with job_id 0 is none); the
 * module keeps its jobs in the same record. Addresses are IPv4 in network byte order.
 */
struct esa_job_info {
	__u32	job_id;			/* 1..ESA_MAX_JOB_ID */
	__u8	fan_in;			/* workers, 1..ESA_MAX_WORKERS */
	__u8	priority;		/* fixed: the admin's; from esa_job_lookup(): the effective one */
	__u8	prio_mode;		/* enum esa_prio_mode */
	__u8	pad;
	__u32	agg_base;		/* first slot of the job's static slice */
	__u32	agg_slice;		/* slots of the static slice, 0 unless static */
	__be32	ps_addr;		/* the job's parameter server */
	__be16	ps_port;		/* its UDP port */
	__u8	pad2[2];
	__be32	worker_addr[ESA_MAX_WORKERS];	/* worker i has bit i */
	__be16	worker_port[ESA_MAX_WORKERS];	/* worker i's UDP port */
	__u32	quota;			/* aggregators asked for, 0 = none */
	/*
	 * The switch port each member is bound to (Documentation/
	 * security.rst): the administrator's choice, 0 = the first port the
	 * address is seen on. The data plane enforces the binding through
	 * esa_neigh, which the loader fills from these (esa_switch_bind_jobs()).
	 */
	__u32	ps_ifindex;
	__u32	worker_ifindex[ESA_MAX_WORKERS];
	/*
	 * Which life of job_id this record is: a number the control plane
	 * (the module, libesa_dp's esa_switch_job_put()) gives the job when
	 * it is added, never 0, kept by every change, never given to the
	 * id again. An aggregator belongs to (job_id, incarnation, seq): a
	 * job added again under an old id starts from nothing, whatever its
	 * predecessor left in the aggregators (Documentation/dataplane.rst,
	 * "A job's incarnation").
	 */
	__u32	incarnation;
	__u32	pad3;
	/*
	 * The job's secret (Documentation/security.rst), 0 = none: every
	 * frame of a job with one is wire version ESA_WIRE_VERSION_TOKEN and
	 * carries it after its values; the data plane drops any other. Never
	 * reported by the control plane, only whether it is set.
	 */
	__u64	token;
};

/*
 * Switch-wide settings. The module flavour gets them from the
 * esa_config_get() kfunc (the module owns them); the module-less flavour
 * reads them from the one-entry esa_config array map.
 */
struct esa_switch_config {
	__u32	policy;			/* enum esa_policy */
	__u32	agg_slots;		/* aggregators in use, <= ESA_MAX_AGGREGATORS */
	__u32	agg_timeout_us;		/* a claim older than this may be reclaimed; 0: never */
	__u32	pad;
};

/*
 * Ownership events beyond enum esa_counter (reported to the module with
 * esa_account()), so the aggregators each job holds can be counted
 * (occupancy).
 * CLAIM: a slot became owned by the job (free slot, preemption, reclaim).
 * RELEASE: a slot the job owned stopped being its own (completed and
 * freed, result passed, flushed by a resend, evicted, reclaimed).
 * Counters are not implied: a preemption also sends ESA_CNT_PREEMPTIONS
 * for the winner, ESA_CNT_EVICTIONS and RELEASE for the victim.
 */
enum esa_acct_event {
	ESA_ACCT_CLAIM		= 0x100,
	ESA_ACCT_RELEASE	= 0x101,
};

enum esa_agg_state {
	ESA_AGG_FREE	= 0,
	ESA_AGG_PARTIAL	= 1,	/* summing; not all fan_in workers in */
	ESA_AGG_DONE	= 2,	/* atp: complete, held until the PS's RESULT */
};

/*
 * Where a sum's parts went (Documentation/wire-protocol.rst, "Sums that
 * left the switch in part"): the workers of (job_id, incarnation, seq) whose values
 * left the switch without this aggregator (collision, resend pass-on,
 * eviction, flush), so the PS has them or will. Each aggregator keeps
 * ESA_GONE_WAYS of these, searched as a set: a new record takes a free
 * way, else the ways in turn (gone_next); a record overwritten by another
 * sum's only costs what it would have saved.
 */
#define ESA_GONE_WAYS		8

struct esa_gone {
	__u32	job_id;			/* 0: no record */
	__u32	seq;
	__u32	bitmap;			/* workers whose values left */
	__u32	incarnation;		/* job_id's (esa_job_info) */
};

/*
 * One aggregator (a value of the esa_aggs array). The lock guards every
 * other field; values are kept in host byte order so the add is a plain
 * add. claim_ns is esa_now() at the claim (the reclaim clock).
 */
struct esa_agg {
	/*
	 * 0 free, 1 held: the data plane's own lock (bpf/esa_lock.h), not a
	 * bpf_spin_lock, so the kernel neither hides it from user-space reads
	 * nor keeps it on user-space writes: a write (esa_switch_agg_clear())
	 * sets it free, so clear only while no traffic is summed.
	 */
	__u32	lock;
	__u32	job_id;			/* 0 while free */
	__u32	seq;
	__u32	bitmap;			/* workers summed */
	__u16	value_count;
	__u8	priority;		/* the claimer's (esa_job_prio()) */
	__u8	state;			/* enum esa_agg_state */
	__u8	overflow;		/* a value saturated in this sum */
	__u8	gone_next;		/* the way a new record takes when
					 * none is free */
	__u8	pad[2];
	__u64	claim_ns;
	__u32	gone;			/* workers of this sum that left before
					 * the claim (taken from its record) */
	__u32	incarnation;		/* the owner's (esa_job_info) */
	__s32	values[ESA_MAX_VALUES];
	/* after the values: only claims and collisions read them */
	struct esa_gone gone_rec[ESA_GONE_WAYS];
};

/* Per-CPU counters: a value of the esa_stats per-CPU array. */
struct esa_counter_block {
	__u64	cnt[__ESA_CNT_MAX];	/* indexed by enum esa_counter */
};

/*
 * Where an IPv4 address sits (key: __be32 address), in esa_neigh if it is
 * bound, else in esa_learned. An address of a job's member (worker, PS)
 * is bound to its port (bound_job: the job that bound it;
 * Documentation/security.rst): learning never moves it, and a frame that
 * claims it from another port is dropped as a spoof. A bound entry with
 * ifindex 0 is bound at first sight: the first port a frame of it comes
 * from is its port. A learned entry follows its host.
 */
struct esa_neigh {
	__u32	ifindex;
	__u8	mac[6];
	__u16	bound_job;		/* 0: learned, not bound */
	__u32	learned_s;		/* learned: esa_now() in s when written */
};

/* Key and value of esa_fdb. */
struct esa_mac_key {
	__u8	addr[6];
	__u8	pad[2];
};

struct esa_fdb_entry {
	__u32	ifindex;
	__u32	learned_s;		/* esa_now() in s when written */
};

/* The learned tables, each with its budget per port (esa_learn_port). */
enum esa_learn_table {
	ESA_LEARN_NEIGH,		/* esa_learned */
	ESA_LEARN_FDB,			/* esa_fdb */
	__ESA_LEARN_TABLES,
};

/*
 * A port's learning budget (esa_learn_ports, key: ifindex): entries
 * written to each learned table since window_s, which restarts every
 * ESA_LEARN_AGE_S.
 */
struct esa_learn_port {
	__u32	window_s;
	__u32	written[__ESA_LEARN_TABLES];
};

/*
 * A one-armed port (Documentation/dataplane.rst, "One-armed ports"): the
 * switch is an addressed host on it, its aggregation traffic is UDP to
 * ESA_UDP_PORT at @addr (the port's IPv4 address), everything else goes
 * to the server's own stack, and every output leaves by the port itself.
 * The value of esa_port_roles (key: ifindex); a port without an entry is
 * per-host (a port per host, switched at L2).
 */
enum esa_port_role_kind {
	ESA_PORT_PER_HOST	= 0,
	ESA_PORT_ONE_ARMED	= 1,
};

struct esa_port_role {
	__u32	role;			/* enum esa_port_role_kind */
	__be32	addr;
};

/*
 * Who gets a one-armed port's copies of a sum of job job_id (esa_oa_jobs,
 * indexed by job id): written by the XDP program from the job record
 * (either flavour's) each time it hands a sum to the fan-out, read by the
 * TC program esa_fanout, which has none of the module's job lookups (its
 * one kfunc is esa_account).
 */
struct esa_oa_members {
	__u32	job_id;			/* 0: none */
	__u32	incarnation;
	__u8	fan_in;
	__u8	pad[3];
	__be32	ps_addr;
	__be32	worker_addr[ESA_MAX_WORKERS];
	__be16	worker_port[ESA_MAX_WORKERS];
};

/*
 * The XDP metadata a one-armed port's sum carries from the XDP program to
 * esa_fanout (bpf_xdp_adjust_meta: only XDP writes it, a frame from the
 * wire has none): the copies to make. @workers: worker i gets a copy as
 * RESULT if bit i is set; @to_ps: the PS gets the frame as it is.
 */
#define ESA_OA_META_MAGIC	0xe5a0a4edu

struct esa_oa_meta {
	__u32	magic;
	__u16	job_id;
	__u8	to_ps;
	__u8	pad;
	__u32	incarnation;
	__u32	workers;
};

/*
 * Per-CPU scratch (one entry): the packet's values as loaded from the
 * frame, the evicted partial, and job-record buffers for the module
 * flavour, so none of it sits on the 512-byte BPF stack.
 */
struct esa_scratch {
	__be32	pkt[ESA_MAX_VALUES];	/* big-endian, as on the wire */
	__be32	evict[ESA_MAX_VALUES];	/* big-endian, ready to store */
	__u32	evict_job;
	__u32	evict_seq;
	__u32	evict_bitmap;
	__u16	evict_count;
	__u8	evict_priority;
	__u8	evict_overflow;
	__u32	evict_held_us;		/* how long the evicted partial held */
	__u32	evict_incarnation;	/* of evict_job */
	__u32	out_bitmap;		/* bitmap of an output sum */
	__u32	out_held_us;		/* how long the output sum held */
	__u8	out_overflow;
	__u8	saturated;		/* this packet's add saturated */
	__u8	own_prio;		/* see own_job */
	__u8	pad;
	/*
	 * The resident the locked step saw when it asked for a verdict
	 * (ESA_ACT_ASK, bpf/esa_agg.h): the verdict holds while that resident
	 * does. Here, not in the step's request on the stack: the module
	 * flavour's stack is at the 6.1 verifier's limit.
	 */
	__u32	own_job;
	__u32	own_inc;
	__u32	own_seq;
	__u32	own_bitmap;
	/*
	 * The rest of what the locked step leaves for its end and for after
	 * it (its request holds note_job and lost_job), here for the same
	 * reason: workers note_bits of (note_job, note_inc, note_seq) left
	 * the switch without the aggregator (note_full: all of that job's
	 * workers, 0 if not known), and lost_job's incarnation.
	 */
	__u32	note_inc;
	__u32	note_seq;
	__u32	note_bits;
	__u32	note_full;
	__u32	lost_inc;
	/* the ingress port's address if it is one-armed, else 0 */
	__be32	oa_addr;
	struct esa_job_info job;	/* module flavour: esa_job_lookup() */
	struct esa_job_info owner;	/* module flavour: the evicted job */
};

#endif /* _ESA_DATAPLANE_H */
