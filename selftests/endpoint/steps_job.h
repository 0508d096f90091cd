/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One job on a test's own in-memory network, for the tests of the steps
 * API (esa_step_*, esa_ps_input): a host-only PS at host 0 and @fan
 * workers at hosts 1..@fan, every one sending through the test's @tx.
 * The test keeps its network and clock; this is the job's setup and the
 * worker state they all share.
 */
#ifndef _ESA_TEST_STEPS_JOB_H
#define _ESA_TEST_STEPS_JOB_H

#include "esa.h"
#include "esa_endpoint.h"

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

/* The address of host @h of the test's network. */
typedef struct sockaddr_in (*steps_addr_fn)(int h);

/* The job and the test's network it runs on. */
struct steps_job {
	uint32_t	job;
	unsigned	fan;
	steps_addr_fn	addr;
	esa_tx_fn	tx;
	void		*net;		/* @tx's context */
};

/* A worker as the tests drive it: its endpoint, values and progress. */
struct steps_worker {
	struct esa_endpoint	*ep;
	struct esa_values_io	io;
	struct steps_values	vals;		/* .w: this worker's index */
	uint64_t		deadline;	/* of its next send */
	int			err;		/* its first error */
	bool			ended;		/* esa_step_end() returned */
};

/* The host-only PS of the job, its workers known. */
static inline int steps_ps_new(const struct steps_job *j, struct esa_ps **ps)
{
	struct esa_ps_config pc = { .mode = ESA_PS_HOST_ONLY };
	struct esa_ps_job_config jc = { .job_id = j->job, .fan_in = j->fan };
	int err;

	for (unsigned w = 0; w < j->fan; w++) {
		jc.worker[w] = j->addr(1 + w);
		jc.worker_known |= 1u << w;
	}
	err = esa_ps_new(&pc, j->tx, j->net, ps);
	if (!err && (err = esa_ps_add_job(*ps, &jc))) {
		esa_ps_close(*ps);
		*ps = NULL;
	}
	return err;
}

/*
 * Worker @w of the job into @wk: an endpoint configured as @cfg (the
 * test's window, timeouts, sizes) with the job, its fan-in and the
 * addresses set here, its values value(w, i) (struct steps_values).
 */
static inline int steps_worker_new(const struct steps_job *j,
				   struct esa_endpoint_config cfg, unsigned w,
				   int32_t (*value)(unsigned w, size_t i),
				   struct steps_worker *wk)
{
	wk->vals = (struct steps_values){ .value = value, .w = w,
					  .fan = j->fan };
	wk->io = steps_io(&wk->vals);
	cfg.job_id = j->job;
	cfg.worker_id = w;
	cfg.fan_in = j->fan;
	cfg.ps = j->addr(0);
	cfg.self = j->addr(1 + w);
	return esa_endpoint_new(&cfg, j->tx, j->net, &wk->ep);
}

/* The job's PS into @ps and its workers into @wk[0..fan), or an error. */
static inline int steps_job_new(const struct steps_job *j,
				struct esa_endpoint_config cfg,
				int32_t (*value)(unsigned w, size_t i),
				struct esa_ps **ps, struct steps_worker *wk)
{
	int err = steps_ps_new(j, ps);

	for (unsigned w = 0; w < j->fan && !err; w++)
		err = steps_worker_new(j, cfg, w, value, &wk[w]);
	return err;
}

/* Close what steps_job_new() made (workers it did not make are NULL). */
static inline void steps_job_close(const struct steps_job *j,
				   struct esa_ps *ps, struct steps_worker *wk)
{
	for (unsigned w = 0; w < j->fan; w++)
		esa_endpoint_close(wk[w].ep);
	esa_ps_close(ps);
}

#endif /* _ESA_TEST_STEPS_JOB_H */
