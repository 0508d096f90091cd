/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Job priorities in the simulator: what a control plane would stamp on
 * each job's packets (the module-less switch compares the priorities
 * packets carry): sjf and fixed, both static.
 */
#ifndef _ESA_SIM_PRIO_H
#define _ESA_SIM_PRIO_H

#include <stdint.h>
#include "scenario.h"

/* The priority of job @i at its arrival under @rule (auto jobs only). */
uint8_t prio_initial(const struct scenario *sc, uint32_t i,
		     enum scn_prio_rule rule);

#endif /* _ESA_SIM_PRIO_H */
