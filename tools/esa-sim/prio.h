/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Job priorities in the simulator: what a control plane would stamp on
 * each job's packets (the module-less switch compares the priorities
 * packets carry). las is the module's least-attained-service rule, from
 * the same source the module compiles; sjf and fixed are static.
 */
#ifndef _ESA_SIM_PRIO_H
#define _ESA_SIM_PRIO_H

#include <stdint.h>
#include "scenario.h"

/* How often the simulator's control plane recomputes LAS priorities at
 * scale 1 (sim.c scales it with the scenario's scale). */
#define PRIO_TICK_US	1000

/*
 * A job's attained service as the module keeps it: value bytes the switch
 * added for it from every worker, aged; its priority is of that over the
 * fan-in (esa_rules_las_service(): bytes of the job's tensor).
 */
struct prio_las {
	uint64_t	attained;
	uint64_t	aggregated_seen;	/* the switch's counter, last tick */
};

/*
 * The switch counted @aggregated packets for the job of @fan_in workers so
 * far, each of @bytes_per_packet value bytes: add what is new; return the
 * priority.
 */
uint8_t prio_las_update(struct prio_las *l, uint64_t aggregated,
			uint32_t bytes_per_packet, uint32_t fan_in);
/* One aging half-life passed. */
void prio_las_age(struct prio_las *l);
/* The priority of job @i at its arrival under @rule (auto jobs only). */
uint8_t prio_initial(const struct scenario *sc, uint32_t i,
		     enum scn_prio_rule rule);

#endif /* _ESA_SIM_PRIO_H */
