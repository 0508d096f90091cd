/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The discrete-event simulation of one scenario under one policy
 * (Documentation/esa-sim.rst): hosts with one switch port each, links
 * with a rate, a propagation delay and a FIFO tail-drop queue, the real
 * data plane as the switch (simswitch.h), and libesa's own worker and PS
 * state machines as the endpoints, all in virtual time.
 */
#ifndef _ESA_SIM_SIM_H
#define _ESA_SIM_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "scenario.h"
#include "esa_shard.h"

struct sim_opts {
	uint32_t	policy;		/* enum esa_policy */
	enum scn_prio_rule prio;	/* for jobs with priority=auto */
	uint32_t	run;		/* the run column of the CSV rows */
	uint64_t	seed;		/* link loss */
	bool		progress;	/* a progress line on stderr */
	FILE		*jct_csv;	/* rows appended (no header) */
	FILE		*stats_csv;
	/* the counters of stats.csv's columns after occupancy, in order */
	const unsigned	*stats_counters;
	unsigned	nstats_counters;
	FILE		*trace;		/* every frame in and out of the switch */
};

struct sim_result {
	uint64_t	events;		/* events processed */
	uint64_t	switch_packets;	/* frames run through the data plane */
	uint64_t	wall_ns;
	uint64_t	end_ps;		/* virtual time at the end */
	double		avg_jct_s;
	uint32_t	jobs_ok;
	uint32_t	jobs;
	uint64_t	queue_drops;	/* tail drops on any queue */
	uint64_t	loss_drops;	/* random loss (scenario loss=) */
	uint64_t	unexpected;	/* frames the switch sent nowhere known */
	uint64_t	mismatches;	/* sums that were wrong */
	uint32_t	servers;	/* switch servers (scenario servers=) */
	uint64_t	server_packets[ESA_MAX_SHARDS];	/* frames into each */
};

/* 0 when every job finished with every sum right; 1 if not; -1 on error. */
int sim_run(const struct scenario *sc, const struct sim_opts *o,
	    struct sim_result *res);

#endif /* _ESA_SIM_SIM_H */
