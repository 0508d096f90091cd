// SPDX-License-Identifier: GPL-2.0
/* Job priorities for the simulator's control plane (prio.h). */
#include "prio.h"

uint8_t prio_initial(const struct scenario *sc, uint32_t i,
		     enum scn_prio_rule rule)
{
	switch (rule) {
	case SCN_PRIO_SJF:
		return scn_sjf_priority(sc, i);
	case SCN_PRIO_FIXED:
	default:
		return 0;
	}
}
