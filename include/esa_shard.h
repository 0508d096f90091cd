/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which switch server owns an aggregator index when a job spans several
 * (Documentation/esa-sim.rst, "Several switch servers"): one definition
 * for everything that shards, the simulator now and the endpoints later.
 *
 * The rule is index mod S: a job's index space of S x N slots is dealt
 * out round robin, global index g lives on server g mod S as that
 * server's local index g / S. A worker's packets take consecutive
 * indices, so any S consecutive packets of any job, whatever its window,
 * offset or slice, reach every server once: the load is even from the
 * first window on. Contiguous ranges would put a job whose window is
 * smaller than one range entirely on one server. Each server sees local
 * indices 0..N-1 only, so it is an ordinary switch of N aggregators.
 *
 * Pure C, no libc, static inline: the XDP data plane may use it too.
 */
#ifndef _ESA_SHARD_H
#define _ESA_SHARD_H

#include <linux/types.h>
#include "esa_wire.h"	/* ESA_MAX_SHARDS */

/* The server that owns global index @g of a job spread over @nshards. */
static inline __u32 esa_shard_of(__u32 g, __u32 nshards)
{
	return g % nshards;
}

/* Global index @g as its server's local index. */
static inline __u32 esa_shard_local(__u32 g, __u32 nshards)
{
	return g / nshards;
}

/* Local index @local of server @shard as the job's global index. */
static inline __u32 esa_shard_global(__u32 local, __u32 shard,
				     __u32 nshards)
{
	return local * nshards + shard;
}

/* How many of global indices 0..@slots-1 server @shard owns. */
static inline __u32 esa_shard_share(__u32 slots, __u32 shard, __u32 nshards)
{
	return slots / nshards + (shard < slots % nshards);
}

#endif /* _ESA_SHARD_H */
