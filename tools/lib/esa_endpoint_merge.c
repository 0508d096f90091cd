// SPDX-License-Identifier: GPL-2.0
/*
 * The parameter server's rule for one (job, seq), from
 * Documentation/wire-protocol.rst: keep a sum and the set C of workers in
 * it; a COMPLETE sum is final; any other piece with workers B is ignored if
 * B is within C, added if B and C are disjoint, and ignored on a partial
 * overlap (its workers keep resending single-worker packets, so each
 * missing worker eventually arrives on its own).
 */
#define _GNU_SOURCE
#include <string.h>

#include "esa_endpoint.h"

void esa_entry_reset(struct esa_entry *e, uint32_t seq)
{
	e->seq = seq;
	e->bitmap = 0;
	e->agg_index = 0;
	e->value_count = 0;
	e->state = ESA_ENTRY_ACTIVE;
	e->overflow = 0;
	e->priority = 0;
	e->shard = 0;
}

enum esa_merge_verdict esa_entry_merge(struct esa_entry *e, uint32_t full,
				       const struct esa_meta *m,
				       const uint8_t *vals)
{
	int32_t v[ESA_MAX_VALUES];
	bool ovf = false;

	if ((m->bitmap & ~full) || !m->bitmap)
		return ESA_MERGE_BAD;
	if (e->bitmap && m->value_count != e->value_count)
		return ESA_MERGE_BAD;
	if ((m->flags & ESA_F_COMPLETE) && m->bitmap != full)
		return ESA_MERGE_BAD;
	if (e->state == ESA_ENTRY_DONE)
		return ESA_MERGE_DUPLICATE;
	if ((m->bitmap & e->bitmap) == m->bitmap)
		return ESA_MERGE_DUPLICATE;

	esa_values_from_be(v, vals, m->value_count);
	e->agg_index = m->agg_index;
	e->priority = m->priority;
	if (m->flags & ESA_F_COMPLETE) {
		/* The switch counted every worker once: take it as it is. */
		memcpy(e->sum, v, sizeof(v[0]) * m->value_count);
		e->value_count = m->value_count;
		e->bitmap = full;
		e->overflow = !!(m->flags & ESA_F_OVERFLOW);
		e->state = ESA_ENTRY_DONE;
		return ESA_MERGE_FINISHED;
	}
	if (m->bitmap & e->bitmap)
		return ESA_MERGE_OVERLAP;
	if (!e->bitmap) {
		memcpy(e->sum, v, sizeof(v[0]) * m->value_count);
		e->value_count = m->value_count;
	} else {
		for (unsigned i = 0; i < m->value_count; i++)
			e->sum[i] = esa_sat_add(e->sum[i], v[i], &ovf);
	}
	if (ovf || (m->flags & ESA_F_OVERFLOW))
		e->overflow = 1;
	e->bitmap |= m->bitmap;
	if (e->bitmap == full) {
		e->state = ESA_ENTRY_DONE;
		return ESA_MERGE_FINISHED;
	}
	return ESA_MERGE_ADDED;
}
