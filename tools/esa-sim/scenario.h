/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scenario files (Documentation/esa-bench.rst, "Scenario files", and
 * Documentation/esa-sim.rst for the keys only the simulator reads): one
 * directive per line, '#' starts a comment. esa-bench's format, extended
 * with the network, model templates and Poisson arrivals.
 */
#ifndef _ESA_SIM_SCENARIO_H
#define _ESA_SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "esa_switch.h"

#define SCN_MAX_JOBS		ESA_MAX_JOB_ID
#define SCN_MAX_POLICIES	3
/* libesa's default timeout_us, the resend floor of a scenario at scale 1 */
#define SCN_RTO_US_DEFAULT	10000

/* How jobs whose priority is "auto" are ranked (a run may override it). */
enum scn_prio_rule {
	SCN_PRIO_LAS,		/* the module's least-attained-service rule */
	SCN_PRIO_SJF,		/* shortest job first by size x iterations */
	SCN_PRIO_FIXED,		/* no rule: every auto job has the same priority */
	__SCN_PRIO_MAX,
};

struct scn_switch {
	uint32_t	slots;
	uint32_t	timeout_us;
	uint32_t	loss_pct;	/* on every worker's link to the switch */
	uint32_t	interval_us;	/* sampling period */
	uint32_t	values;		/* values per packet */
	uint32_t	window;		/* packets each worker keeps outstanding */
	uint32_t	npolicies;
	uint32_t	policies[SCN_MAX_POLICIES];	/* enum esa_policy, in order */
	/*
	 * mode=one-armed: the switch server has one port behind a ToR and
	 * every host addresses it (esa-bench only; the simulator models a
	 * port per host). Jobs then carry a token: at most
	 * ESA_MAX_VALUES_TOKEN values per packet.
	 */
	bool		one_armed;
	/* the simulator's network and control plane */
	uint32_t	link_mbps;	/* every link, both directions */
	uint32_t	delay_ns;	/* propagation delay of every link */
	uint32_t	buffer_kb;	/* every FIFO egress queue, tail drop */
	uint32_t	switch_ns;	/* the switch's processing delay */
	uint32_t	cpu_ns;		/* a host's mean CPU time per datagram */
	uint32_t	rto_us;		/* workers' resend timeout floor; 0 until
					 * scn_expand: SCN_RTO_US_DEFAULT x scale */
	uint64_t	partition;	/* bytes per allreduce call */
	enum scn_prio_rule prio_rule;
	uint32_t	aging_ms;	/* LAS: attained service half-life */
	double		scale;		/* every job's size and compute times this */
	uint32_t	jitter_pct;	/* a worker's compute: up to this % longer */
	/* several switch servers and a two-tier network (esa-sim.rst) */
	uint32_t	servers;	/* S, every job sharded over all of them */
	uint32_t	server_ns;	/* a server's service time per frame */
	uint32_t	rack_hosts;	/* hosts per ToR; 0: no ToR tier */
	uint32_t	oversub;	/* ToR uplink: rack_hosts x link / this */
};

struct scn_job {
	uint32_t	id;
	uint32_t	workers;
	uint64_t	size;		/* bytes per iteration (int32 values) */
	uint32_t	iterations;
	uint64_t	compute_us;	/* per iteration, before the allreduce */
	uint64_t	arrival_us;
	int		priority;	/* 0..255, -1 = auto */
	const char	*model;		/* template name or NULL */
	unsigned	line;		/* where it was defined */
};

/* A Poisson arrival process of identical jobs (expanded by scn_expand). */
struct scn_poisson {
	uint32_t	count;
	uint32_t	first_id;
	uint64_t	mean_us;	/* mean inter-arrival time */
	uint64_t	start_us;
	struct scn_job	tmpl;
};

struct scenario {
	const char	*file;
	const struct scn_limits *lim;	/* what it was read within */
	struct scn_switch sw;
	uint32_t	njobs;
	struct scn_job	*jobs;		/* listed jobs, then expanded ones */
	uint32_t	npoisson;
	struct scn_poisson *poisson;
	/* which keys only the simulator understands were used (line, key) */
	unsigned	sim_only_line;
	const char	*sim_only_key;
};

/* A model template: gradient and per-iteration compute on a stated GPU. */
struct scn_model {
	const char	*name;
	uint64_t	params;		/* parameters: 4 bytes each on the wire */
	uint64_t	compute_us;	/* one iteration (forward + backward) */
	const char	*gpu;		/* where compute_us was measured */
};

extern const struct scn_model scn_models[];
extern const unsigned scn_nmodels;

/*
 * What a scenario may ask for. The simulator's limits are the switch's;
 * esa-bench's are its testbed's: every worker and PS a network namespace
 * and real processes on one host, the switch attached with aggctl's
 * default capacity, and none of the simulator's own keys (network, model
 * templates, Poisson arrivals).
 */
struct scn_limits {
	const char	*who;		/* whose limits, for the messages */
	uint32_t	max_jobs;
	uint32_t	max_workers;
	uint32_t	max_slots;
	uint64_t	max_size;	/* bytes per iteration */
	bool		sim_keys;	/* the simulator's own keys allowed */
};

extern const struct scn_limits scn_sim_limits;
extern const struct scn_limits scn_bench_limits;

/*
 * Parse @path within @lim. 0, or -1 after printing "PROG: FILE:LINE:
 * reason" to stderr. @sc must be freed with scn_free().
 */
int scn_load(struct scenario *sc, const char *path,
	     const struct scn_limits *lim);
/*
 * Turn the Poisson lines into jobs (exponential gaps drawn from @seed),
 * apply the scale to every job's size and compute time, and divide every
 * arrival time by @load. Jobs stay in file order, the Poisson
 * jobs after the listed ones. -1 with a message if ids collide.
 */
int scn_expand(struct scenario *sc, uint64_t seed, double load);
void scn_free(struct scenario *sc);

const char *scn_policy_name(uint32_t policy);
int scn_policy_parse(const char *s, uint32_t *policy);
const char *scn_prio_name(enum scn_prio_rule r);
int scn_prio_parse(const char *s, enum scn_prio_rule *r);
/* Parse "esa,atp" into @sw's policy list; a message on error. */
int scn_policies_parse(struct scn_switch *sw, const char *list, char *why,
		       size_t whylen);

/*
 * Shortest job first: a job with less data to aggregate in total (size x
 * iterations) ranks higher; the priority of job @i among @sc's jobs.
 */
uint8_t scn_sjf_priority(const struct scenario *sc, uint32_t i);

#endif /* _ESA_SIM_SCENARIO_H */
