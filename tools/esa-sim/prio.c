// SPDX-License-Identifier: GPL-2.0
/* Job priorities for the simulator's control plane (prio.h). */
#include "prio.h"
#include "esa_rules.h"

uint8_t prio_las_update(struct prio_las *l, uint64_t aggregated,
			uint32_t bytes_per_packet, uint32_t fan_in)
{
	if (aggregated > l->aggregated_seen)
		l->attained += (aggregated - l->aggregated_seen) *
			       bytes_per_packet;
	l->aggregated_seen = aggregated;
	return esa_rules_las_priority(esa_rules_las_service(l->attained,
							    fan_in));
}

void prio_las_age(struct prio_las *l)
{
	l->attained = esa_rules_age(l->attained);
}

uint8_t prio_initial(const struct scenario *sc, uint32_t i,
		     enum scn_prio_rule rule)
{
	switch (rule) {
	case SCN_PRIO_LAS:
		return esa_rules_las_priority(0);
	case SCN_PRIO_SJF:
		return scn_sjf_priority(sc, i);
	case SCN_PRIO_FIXED:
	default:
		return 0;
	}
}
