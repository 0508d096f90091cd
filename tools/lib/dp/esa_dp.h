/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libesa_dp, the loader of the XDP switch data plane (bpf/esa_switch.bpf.c):
 * load one of its two flavours, pin and re-open its maps and programs,
 * write the config and job records of the module-less flavour (by the
 * rules of lib/esa_rules.c), read the per-CPU counters and aggregators,
 * attach the program to switch ports. A library of its own, apart from
 * the endpoint library (libesa, esa.h). Link with $(DP_LIBS) (libesa_dp.a
 * -lbpf -lelf -lz). Functions return 0 or a negative errno and print
 * nothing; messages are the caller's.
 */
#ifndef _ESA_DP_H
#define _ESA_DP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "esa_switch.h"
#include "esa_dataplane.h"
#include "esa_rules.h"

/* Where aggctl pins the data plane unless told otherwise. */
#define ESA_PIN_DIR_DEFAULT	"/sys/fs/bpf/esa"

enum esa_flavour {
	ESA_FLAVOUR_MAPS = 0,	/* config and jobs in maps (no module) */
	ESA_FLAVOUR_KMOD = 1,	/* config, jobs, arbitration from kmod */
};

struct esa_switch_opts {
	enum esa_flavour flavour;
	/*
	 * Size of the aggregator array map, 1..ESA_MAX_AGGREGATORS (0:
	 * ESA_AGG_CAPACITY_DEFAULT). It is kernel memory taken at load
	 * (esa_switch_agg_bytes()): a size the kernel cannot allocate fails
	 * the load with -ENOMEM.
	 */
	__u32 agg_capacity;
	/*
	 * The data plane reads its clock from the esa_clock map (u64 ns,
	 * mmappable) instead of bpf_ktime_get_ns(): a simulator's virtual
	 * time (tools/esa-sim). Off for every real switch.
	 */
	bool virtual_clock;
	/*
	 * Module flavour: this data plane's generation, passed to the module
	 * with every aggregator claim and release so that it counts each
	 * aggregator array's occupancy apart (Documentation/kmod.rst,
	 * "Occupancy"). Make it the module's current generation before
	 * loading (aggctl: config dp-generation); esa_switch_new_generation()
	 * gives a fresh one. 0: none.
	 */
	__u32 generation;
};

/* A fresh data plane generation: random, never 0. */
__u32 esa_switch_new_generation(void);

struct esa_switch;

/* The aggregators a load with @o makes: its agg_capacity or the default. */
__u32 esa_switch_opts_capacity(const struct esa_switch_opts *o);
/* The aggregators of a loaded or opened data plane (its array map's size). */
__u32 esa_switch_agg_capacity(const struct esa_switch *sw);
/* Kernel memory of an aggregator array of @capacity aggregators (bytes). */
__u64 esa_switch_agg_bytes(__u32 capacity);

/*
 * What a failed esa_switch_load(@o) returning @err says to a user, into
 * @buf (@n bytes; returns @buf): for -ENOMEM the aggregator array it could
 * not allocate ("cannot allocate N aggregators (X MiB of kernel memory):
 * Cannot allocate memory"), else strerror(-@err).
 */
const char *esa_switch_load_strerror(int err, const struct esa_switch_opts *o,
				     char *buf, size_t n);

/* Load the data plane (maps and both programs) into the kernel. */
int esa_switch_load(struct esa_switch **sw, const struct esa_switch_opts *o);
/*
 * Pin every map and program of a data plane loaded here under @dir
 * (created if missing); all or nothing: a failure leaves no pin behind.
 */
int esa_switch_pin(struct esa_switch *sw, const char *dir);
/* Remove the pins under @dir made by esa_switch_pin(). */
int esa_switch_unpin(const char *dir);
/* Open a data plane pinned under @dir by another process. */
int esa_switch_open_pinned(struct esa_switch **sw, const char *dir);
void esa_switch_close(struct esa_switch *sw);

/* True if the data plane has its own config/job maps (module-less). */
bool esa_switch_has_job_maps(const struct esa_switch *sw);
/*
 * Module-less flavour: switch config and job records (get and del:
 * -ENOENT if there is no job @job_id). -EOPNOTSUPP else.
 */
int esa_switch_set_config(struct esa_switch *sw,
			  const struct esa_switch_config *cfg);
int esa_switch_get_config(struct esa_switch *sw,
			  struct esa_switch_config *cfg);
int esa_switch_job_put(struct esa_switch *sw, const struct esa_job_info *job);
int esa_switch_job_get(struct esa_switch *sw, __u32 job_id,
		       struct esa_job_info *job);
int esa_switch_job_del(struct esa_switch *sw, __u32 job_id);
/*
 * Module-less flavour: one change of the jobs and settings, as the module
 * makes it (lib/esa_rules.c decides): @cfg (NULL: unchanged) becomes the
 * switch config, @job (NULL: none) is added or replaces the job of its
 * id, @del_id (0: none) is deleted, and every job's static slice follows
 * the resulting policy and slots. Everything is checked before anything
 * is written; a write that fails puts back what was written before it.
 * 0, or -errno with @err saying why (-ENOSPC: the static quotas do not
 * fit; @err may be NULL).
 */
int esa_switch_commit(struct esa_switch *sw,
		      const struct esa_switch_config *cfg,
		      const struct esa_job_info *job, __u32 del_id,
		      struct esa_rules_err *err);

/*
 * Bind the members of @jobs (every job the switch has) to their ports in
 * the data plane's neighbour table (Documentation/security.rst): each
 * member's address to its ps_ifindex/worker_ifindex, or, for 0, to the
 * port it was learned on (else its first frame's); addresses no job uses
 * any more are unbound. The module flavour's job changes call this (the
 * module-less esa_switch_commit() does it itself). 0, or -errno with @err
 * saying why (-EADDRINUSE: one address asked on two ports).
 */
int esa_switch_bind_jobs(struct esa_switch *sw,
			 const struct esa_job_info *jobs, unsigned int n,
			 struct esa_rules_err *err);
/* Whether @jobs' bindings agree (no address on two ports); writes nothing. */
int esa_switch_bind_check(const struct esa_job_info *jobs, unsigned int n,
			  struct esa_rules_err *err);

/* Counters summed over CPUs; @job_id 0 gives the switch-wide totals. */
int esa_switch_counters(struct esa_switch *sw, __u32 job_id,
			__u64 out[__ESA_CNT_MAX]);
/* Zero the counters of every job and the totals. */
int esa_switch_counters_reset(struct esa_switch *sw);
/* Name of counter @c as printed by the tools ("rx", "drop_port", ...). */
const char *esa_counter_name(unsigned int c);

/* Read aggregator @slot (lock-free snapshot of the map value). */
int esa_switch_agg_read(struct esa_switch *sw, __u32 slot,
			struct esa_agg *out);
/*
 * Aggregators held (state not free) among slots [0, @slots) of the array,
 * counted by owner: @per_job[id] for job ids 1..ESA_MAX_JOB_ID (index 0
 * is unused). A batch lookup where the kernel has one, per-slot reads
 * otherwise; a snapshot, not atomic across slots.
 */
int esa_switch_agg_owners(struct esa_switch *sw, __u32 slots,
			  __u32 per_job[ESA_MAX_JOB_ID + 1]);
/* Free every aggregator (e.g. after changing policy or slots). */
int esa_switch_agg_clear(struct esa_switch *sw, __u32 slots);

/*
 * Attach the switch program to port @ifindex (native XDP unless
 * @xdp_flags says otherwise) and add it to the devmap every frame
 * leaves by (esa_mcast, which is also the list of the switch's ports);
 * detach undoes both, and removes only this data plane's program:
 * -EEXIST when the port runs another one (nothing changes); a port that
 * runs none is only taken out of the devmap.
 */
int esa_switch_attach_port(struct esa_switch *sw, int ifindex,
			   __u32 xdp_flags);
int esa_switch_detach_port(struct esa_switch *sw, int ifindex);
/*
 * The two halves of esa_switch_detach_port(), for taking several ports
 * out at once: the program off each port first (a port whose program is
 * off still gets its copies of the sums the others complete), then every
 * port out of the devmap. detach_prog: 0, -EEXIST or -errno, as above.
 */
int esa_switch_detach_prog(struct esa_switch *sw, int ifindex);
void esa_switch_forget_port(struct esa_switch *sw, int ifindex);

/*
 * Attach the switch to port @ifindex as a one-armed port with IPv4
 * address @addr (network order; the server's own address on that port):
 * the XDP program, the TC (clsact ingress) program esa_fanout that makes
 * the per-recipient copies (filter handle ESA_TC_HANDLE, priority
 * ESA_TC_PRIO; the clsact qdisc is made if the port has none), the port's
 * role and address, and its esa_mcast entry with a program that lets
 * nothing switched at L2 out of it. All or nothing. -EADDRINUSE: another
 * port has @addr; -EEXIST: the port runs another XDP program, or another
 * filter holds ESA_TC_HANDLE/ESA_TC_PRIO; -EOPNOTSUPP: a data plane
 * pinned by a build without one-armed ports. esa_switch_detach_port()
 * (or detach_prog + forget_port) undoes it, removing only what is ours:
 * the filter if it still runs esa_fanout; the clsact qdisc stays (another
 * tool's filters may have joined it since).
 */
#define ESA_TC_HANDLE	0xe5a
#define ESA_TC_PRIO	0xe5a
int esa_switch_attach_one_armed(struct esa_switch *sw, int ifindex,
				__u32 xdp_flags, __be32 addr);
/*
 * The role of port @ifindex into @r (ESA_PORT_PER_HOST with address 0 for
 * a port that has no role entry). 0 or -errno.
 */
int esa_switch_port_role(const struct esa_switch *sw, int ifindex,
			 struct esa_port_role *r);

/*
 * Call after writing esa_neigh or esa_fdb by their fds: the data plane's
 * per-CPU learning memos taken before are void, so a binding holds from
 * the next frame on (Documentation/dataplane.rst). 0 or -errno.
 */
int esa_switch_learned_changed(const struct esa_switch *sw);

/* File descriptors, for BPF_PROG_TEST_RUN and the tests. */
int esa_switch_prog_fd(const struct esa_switch *sw);
int esa_switch_map_fd(const struct esa_switch *sw, const char *name);

#endif /* _ESA_DP_H */
