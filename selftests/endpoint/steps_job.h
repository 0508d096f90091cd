/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One job on a test's own in-memory network, for the tests of the steps
 * API (esa_step_*, esa_ps_input): a host-only PS at host 0 and @fan
 * workers at hosts 1..@fan, every one sending through the test's @tx.
 * The test keeps its network, clock and worker state; this is only the
 * setup they all share.
 */
#ifndef _ESA_TEST_STEPS_JOB_H
#define _ESA_TEST_STEPS_JOB_H

#include "esa.h"
#include "esa_endpoint.h"

/* The address of host @h of the test's network. */
typedef struct sockaddr_in (*steps_addr_fn)(int h);

/* The host-only PS of job @job, its @fan workers known. */
static inline int steps_ps_new(uint32_t job, unsigned fan, steps_addr_fn addr,
			       esa_tx_fn tx, void *net, struct esa_ps **ps)
{
	struct esa_ps_config pc = { .mode = ESA_PS_HOST_ONLY };
	struct esa_ps_job_config jc = { .job_id = job, .fan_in = fan };
	int err;

	for (unsigned w = 0; w < fan; w++) {
		jc.worker[w] = addr(1 + w);
		jc.worker_known |= 1u << w;
	}
	err = esa_ps_new(&pc, tx, net, ps);
	if (!err && (err = esa_ps_add_job(*ps, &jc)))
		esa_ps_close(*ps);
	return err;
}

/*
 * Worker @w of that job: an endpoint configured as @cfg (the test's
 * window, timeouts, sizes) with the job, its fan-in and the addresses
 * set here.
 */
static inline int steps_worker_new(struct esa_endpoint_config cfg,
				   uint32_t job, unsigned fan, unsigned w,
				   steps_addr_fn addr, esa_tx_fn tx, void *net,
				   struct esa_endpoint **ep)
{
	cfg.job_id = job;
	cfg.worker_id = w;
	cfg.fan_in = fan;
	cfg.ps = addr(0);
	cfg.self = addr(1 + w);
	return esa_endpoint_new(&cfg, tx, net, ep);
}

/*
 * A worker's values through struct esa_values_io (steps_io()): worker
 * @w's value i is value(w, i); each sum it takes must be the sum of all
 * @fan workers' values, else it counts a mismatch.
 */
struct steps_values {
	int32_t		(*value)(unsigned w, size_t i);
	unsigned	w, fan;
	size_t		stored, mismatches;
};

static void steps_load(void *ctx, size_t off, unsigned n, int32_t *vals)
{
	const struct steps_values *sv = ctx;

	for (unsigned k = 0; k < n; k++)
		vals[k] = sv->value(sv->w, off + k);
}

static bool steps_store(void *ctx, size_t off, unsigned n,
			const int32_t *sum, uint8_t flags)
{
	struct steps_values *sv = ctx;

	for (unsigned k = 0; k < n; k++) {
		int64_t want = 0;

		for (unsigned w = 0; w < sv->fan; w++)
			want += sv->value(w, off + k);
		if (sum[k] != want)
			sv->mismatches++;
	}
	sv->stored += n;
	return flags & ESA_F_OVERFLOW;
}

static inline struct esa_values_io steps_io(struct steps_values *sv)
{
	return (struct esa_values_io){ .load = steps_load,
				       .store = steps_store, .ctx = sv };
}

#endif /* _ESA_TEST_STEPS_JOB_H */
