/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF maps of the data plane common to both flavours, and what the
 * flavours are asked. The module-less flavour adds its config, job and
 * occupancy maps in esa_flavour_maps.h.
 */
#ifndef _ESA_MAPS_BPF_H
#define _ESA_MAPS_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "esa_dataplane.h"
#include "esa_rules.h"

/*
 * The two shapes of map declared more than once, each stated here once:
 * an array of one @value_type record per job id (index 0, no job, stays
 * unused), and a one-entry u64 cell that user space mmaps to read or
 * change it without a syscall. A map of either is declared as
 * "ESA_JOB_ARRAY(type) name SEC(".maps");" or "ESA_MMAP_U64_CELL name ...".
 */
#define ESA_JOB_ARRAY(value_type)				\
	struct {						\
		__uint(type, BPF_MAP_TYPE_ARRAY);		\
		__uint(max_entries, ESA_MAX_JOB_ID + 1);	\
		__type(key, __u32);				\
		__type(value, value_type);			\
	}

#define ESA_MMAP_U64_CELL					\
	struct {						\
		__uint(type, BPF_MAP_TYPE_ARRAY);		\
		__uint(max_entries, 1);				\
		__uint(map_flags, BPF_F_MMAPABLE);		\
		__type(key, __u32);				\
		__type(value, __u64);				\
	}

/*
 * The aggregator array. max_entries is the default capacity; the loader
 * (tools/lib/dp/esa_dp.c) sets it before load to the capacity asked, up
 * to ESA_MAX_AGGREGATORS, and agg_slots from the config says how many
 * are in use. Declared at the default, not the maximum, so that an object
 * loaded as it is never takes ~1.6 GB.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ESA_AGG_CAPACITY_DEFAULT);
	__type(key, __u32);
	__type(value, struct esa_agg);
} esa_aggs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ESA_STATS_ENTRIES);
	__type(key, __u32);
	__type(value, struct esa_counter_block);
} esa_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct esa_scratch);
} esa_scratch SEC(".maps");

/*
 * Bound IPv4 address -> (port, MAC, job): every job member's, written by
 * the control plane (esa_switch_bind_jobs()); the data plane only fills
 * in a first-sight port and the member's MAC. A plain hash: nothing
 * evicts a binding.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ESA_NEIGH_ENTRIES);
	__type(key, __be32);
	__type(value, struct esa_neigh);
} esa_neigh SEC(".maps");

/*
 * Learned IPv4 address -> (port, MAC), from IPv4 and ARP frames of
 * addresses not bound. LRU: a full table drops its least recently used
 * entry; entries age and each port's writes are budgeted (esa_dataplane.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ESA_LEARNED_ENTRIES);
	__type(key, __be32);
	__type(value, struct esa_neigh);
} esa_learned SEC(".maps");

/* MAC -> port, the L2 forwarding table; learned as esa_learned is. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ESA_FDB_ENTRIES);
	__type(key, struct esa_mac_key);
	__type(value, struct esa_fdb_entry);
} esa_fdb SEC(".maps");

/* Each port's learning budget (struct esa_learn_port). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ESA_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct esa_learn_port);
} esa_learn_ports SEC(".maps");

/*
 * Bumped by every write to esa_neigh, esa_learned or esa_fdb (an LRU
 * eviction happens only inside a write), the data plane's own
 * learning included (its writers in esa_pkt.h) and user space's
 * (esa_switch_learned_changed()): a per-CPU memo of a frame whose learning
 * changed nothing (esa_learn_memo) is good only while it is unchanged.
 * Mmapable so that user space bumps it atomically, not by a lookup and an
 * update that could set it back to a value a memo was taken at.
 */
ESA_MMAP_U64_CELL esa_learn_gen SEC(".maps");

/*
 * An (ingress port, source MAC, source IPv4) of an IPv4 frame whose
 * learning found nothing to write and no spoof, at esa_learn_gen's value
 * read before its lookups: learning is a function of the two tables and
 * those three, so while the generation stands, the same three learn
 * nothing again and the two lookups are skipped (Documentation/dataplane.rst).
 * Many ways per CPU, picked by address and port, not one: the workers of
 * a job take turns on a CPU (one way would miss every time; 64 hold the
 * 32 workers of bench_dataplane behind one port). A source whose way was
 * taken by another is looked up in full, as without a memo.
 */
#define ESA_LEARN_MEMO_WAYS	64	/* a power of 2 */

struct esa_learn_memo {
	__u64	gen;
	__be32	addr;
	__u32	ifindex;
	__u8	mac[6];
	__u8	valid;
};

struct esa_learn_memos {
	struct esa_learn_memo way[ESA_LEARN_MEMO_WAYS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct esa_learn_memos);
} esa_learn_memo SEC(".maps");

/*
 * Every switch port, each with esa_egress as its devmap program: every
 * frame the switch sends leaves through it (unicast by ifindex, flooded,
 * or the result multicast, whose copies esa_egress keeps only where a
 * member of the job sits). Its keys are the switch's ports: the control
 * plane lists them from here.
 */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, ESA_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct bpf_devmap_val);
} esa_mcast SEC(".maps");

/* The one-armed ports (struct esa_port_role); absent: per-host. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ESA_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct esa_port_role);
} esa_port_roles SEC(".maps");

/*
 * The one-armed ports' addresses (value: the port's ifindex): aggregation
 * traffic to one of them on a per-host port is for the other mode.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ESA_MAX_PORTS);
	__type(key, __be32);
	__type(value, __u32);
} esa_oa_addrs SEC(".maps");

/* Recipients of a one-armed port's copies, by job id (esa_oa_members). */
ESA_JOB_ARRAY(struct esa_oa_members) esa_oa_jobs SEC(".maps");

/*
 * Virtual time for the simulator (tools/esa-sim, Documentation/esa-sim.rst):
 * a loader that sets esa_virtual_clock before load makes the data plane
 * read "now" from esa_clock, which the simulator advances (mmapped, so a
 * store costs no syscall). In every other load the constant is 0, the
 * verifier sees a read-only 0 and removes the branch: the switch reads
 * bpf_ktime_get_ns() as before.
 */
const volatile __u8 esa_virtual_clock = 0;

ESA_MMAP_U64_CELL esa_clock SEC(".maps");

/* The data plane's clock in ns: every time stamp goes through here. */
static __always_inline __u64 esa_now(void)
{
	__u32 zero = 0;
	__u64 *t;

	if (esa_virtual_clock) {
		t = bpf_map_lookup_elem(&esa_clock, &zero);
		return t ? *t : 0;
	}
	return bpf_ktime_get_ns();
}

/*
 * A packet found its aggregator held by another job under esa: what the
 * flavour's esa_arb_ask() decides on, outside the aggregator's lock.
 */
struct esa_clash {
	__u32	slot;
	__u32	owner_id;		/* the holder's job */
	__u32	owner_inc;		/* and its incarnation */
	__u32	owner_workers;		/* workers in the holder's partial */
	__u8	owner_prio;		/* priority recorded by the holder's claim */
	__u8	prio;			/* the packet's (esa_job_prio()) */
};

#endif /* _ESA_MAPS_BPF_H */
