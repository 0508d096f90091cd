// SPDX-License-Identifier: GPL-2.0
/*
 * The parameter server (Documentation/endpoints.rst): per job a ring of
 * (seq -> sum, workers) entries that collects what the switch could not
 * finish (PARTIAL, PREEMPTED, COLLISION, RESEND pieces, or everything in
 * host-only mode), takes COMPLETE sums as final, sends each final sum as a
 * RESULT, and keeps it in the ring to answer late RESENDs.
 *
 * A RESEND from a worker the unfinished sum already holds means that
 * worker waits for the others: the PS pulls them (RESULT | RESEND with
 * the missing workers' bitmap), so a worker whose packet was lost resends
 * now instead of after its own, possibly much longer, timeout.
 *
 * esa_ps_poll() serves a socket; esa_ps_input() takes one datagram from a
 * caller with its own network (a simulator, esa_ps_new()).
 *
 * The ring is indexed by the sequence counted past the 32-bit wrap,
 * modulo cache_entries (ring_slot()). A worker's window of W keeps every
 * sequence still in flight within [m - W, m + W) of the smallest
 * unfinished one m, so 2 W entries answer every resend that can come.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esa_endpoint.h"

#define DEF_CACHE	4096
#define MAX_CACHE	(1u << 20)

struct ps_job {
	struct esa_ps_job_config cfg;
	uint32_t	full;		/* mask of all fan_in workers */
	struct esa_ps_stats st;
	struct esa_entry *ring;
	uint64_t	count_high;	/* highest sequence seen, past the wrap */
};

struct esa_ps {
	struct esa_ps_config cfg;
	int		fd;		/* -1: answers go to tx.sink */
	struct esa_ps_global_stats st;
	struct ps_job	*job[ESA_MAX_JOB_ID + 1];
	struct esa_txq	tx;
	struct esa_rxq	rx;
};

static int ps_alloc(const struct esa_ps_config *cfg, struct esa_ps **out)
{
	struct esa_ps *ps;

	*out = NULL;
	if (cfg->mode != ESA_PS_SWITCH && cfg->mode != ESA_PS_HOST_ONLY)
		return esa_set_error(-EINVAL, "unknown PS mode %d", cfg->mode);
	if (cfg->cache_entries > MAX_CACHE)
		return esa_set_error(-EINVAL, "cache of %u entries above %u",
				     cfg->cache_entries, MAX_CACHE);
	if (cfg->mode == ESA_PS_HOST_ONLY && esa_sw_set(&cfg->sw))
		return esa_set_error(-EINVAL,
				     "a switch address and host-only mode exclude each other");
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return esa_set_error(-ENOMEM, "out of memory");
	ps->cfg = *cfg;
	if (esa_sw_check(&ps->cfg.sw)) {
		free(ps);
		return -EINVAL;
	}
	ps->cfg.bind.sin_family = AF_INET;
	if (!ps->cfg.bind.sin_port)
		ps->cfg.bind.sin_port = htons(ESA_UDP_PORT);
	if (!ps->cfg.cache_entries)
		ps->cfg.cache_entries = DEF_CACHE;
	ps->fd = -1;
	*out = ps;
	return 0;
}

int esa_ps_open(const struct esa_ps_config *cfg, struct esa_ps **out)
{
	struct esa_ps *ps;
	bool gso;
	int fd, err;

	*out = NULL;	/* on every failure */
	err = ps_alloc(cfg, &ps);
	if (err)
		return err;
	/* Through the switch every answer goes to ESA_UDP_PORT (see
	 * queue_packet()); host-only, to the workers' own ports. */
	fd = esa_udp_open(&ps->cfg.bind, ps->cfg.mode == ESA_PS_SWITCH, &gso);
	if (fd < 0) {
		free(ps);
		return fd;
	}
	ps->fd = fd;
	esa_txq_init(&ps->tx, fd, gso);
	err = esa_rxq_init(&ps->rx, fd);
	if (err) {
		esa_ps_close(ps);
		return err;
	}
	*out = ps;
	return 0;
}

int esa_ps_new(const struct esa_ps_config *cfg, esa_tx_fn tx, void *tx_ctx,
	       struct esa_ps **out)
{
	struct esa_ps *ps;
	int err;

	*out = NULL;	/* on every failure */
	err = ps_alloc(cfg, &ps);
	if (err)
		return err;
	esa_txq_init(&ps->tx, -1, false);
	ps->tx.sink = tx;
	ps->tx.sink_ctx = tx_ctx;
	*out = ps;
	return 0;
}

int esa_ps_add_job(struct esa_ps *ps, const struct esa_ps_job_config *jc)
{
	struct ps_job *j;

	if (jc->job_id == 0 || jc->job_id > ESA_MAX_JOB_ID)
		return esa_set_error(-EINVAL, "job id %u out of range 1..%u",
				     jc->job_id, ESA_MAX_JOB_ID);
	if (jc->fan_in == 0 || jc->fan_in > ESA_MAX_WORKERS)
		return esa_set_error(-EINVAL, "job %u: fan-in %u out of range 1..%u",
				     jc->job_id, jc->fan_in, ESA_MAX_WORKERS);
	if (ps->job[jc->job_id])
		return esa_set_error(-EEXIST, "job %u already served", jc->job_id);
	j = calloc(1, sizeof(*j));
	if (!j)
		return esa_set_error(-ENOMEM, "out of memory");
	j->ring = calloc(ps->cfg.cache_entries, sizeof(*j->ring));
	if (!j->ring) {
		free(j);
		return esa_set_error(-ENOMEM, "out of memory for %u cache entries",
				     ps->cfg.cache_entries);
	}
	j->cfg = *jc;
	j->full = ESA_FULL_BITMAP(jc->fan_in);
	j->cfg.worker_known &= j->full;
	ps->job[jc->job_id] = j;
	return 0;
}

void esa_ps_close(struct esa_ps *ps)
{
	if (!ps)
		return;
	for (unsigned i = 0; i <= ESA_MAX_JOB_ID; i++) {
		if (ps->job[i]) {
			free(ps->job[i]->ring);
			free(ps->job[i]);
		}
	}
	if (ps->fd >= 0)
		close(ps->fd);
	esa_rxq_free(&ps->rx);
	free(ps);
}

int esa_ps_get_job_stats(const struct esa_ps *ps, uint16_t job_id,
			 struct esa_ps_stats *st)
{
	if (job_id > ESA_MAX_JOB_ID || !ps->job[job_id])
		return esa_set_error(-ENOENT, "job %u not served", job_id);
	*st = ps->job[job_id]->st;
	return 0;
}

void esa_ps_get_stats(const struct esa_ps *ps, struct esa_ps_global_stats *st)
{
	*st = ps->st;
	st->tx_drops = ps->tx.drops;
}

/*
 * Where a packet for worker @w goes: false if its address is unknown.
 * To a one-armed switch, which copies it to every worker; through a
 * switch on the path, as an aggregation packet (UDP port ESA_UDP_PORT)
 * for the switch to take and multicast, rewriting each copy to worker
 * i's own address and port; host-only, to the worker itself.
 */
static bool packet_dest(const struct esa_ps *ps, const struct ps_job *j,
			unsigned w, struct sockaddr_in *to)
{
	if (esa_sw_set(&ps->cfg.sw)) {
		*to = ps->cfg.sw;
		return true;
	}
	if (!(j->cfg.worker_known & (1u << w)))
		return false;
	*to = j->cfg.worker[w];
	if (ps->cfg.mode == ESA_PS_SWITCH)
		to->sin_port = htons(ESA_UDP_PORT);
	return true;
}

/*
 * Queue to worker @w the RESULT of @e or, with @pull, the request that
 * the workers in @pull resend e->seq (one ignored value).
 */
static int queue_packet(struct esa_ps *ps, struct ps_job *j,
			const struct esa_entry *e, unsigned w, uint32_t pull)
{
	static const int32_t no_value;
	struct esa_meta m = {
		.flags = ESA_F_RESULT | (e->overflow ? ESA_F_OVERFLOW : 0),
		.fan_in = j->cfg.fan_in,
		.priority = e->priority,
		.job_id = j->cfg.job_id,
		.value_count = e->value_count,
		.seq = e->seq,
		.agg_index = e->agg_index,
		.bitmap = j->full,
		.token = j->cfg.token,
	};
	const int32_t *vals = e->sum;
	struct sockaddr_in to;
	uint8_t *buf;
	int err;

	if (pull) {
		m.flags = ESA_F_RESULT | ESA_F_RESEND;
		m.value_count = 1;
		m.bitmap = pull;
		vals = &no_value;
	}
	if (!packet_dest(ps, j, w, &to)) {
		j->st.no_address++;
		return 0;
	}
	err = esa_txq_next(&ps->tx, &to, &buf);
	if (err)
		return err;
	esa_wire_put(buf, &m);
	esa_values_to_be(buf + ESA_HDR_LEN, vals, m.value_count);
	esa_txq_commit(&ps->tx, esa_wire_end(buf, &m));
	if (pull)
		j->st.pulls++;
	else
		j->st.result_packets++;
	return 0;
}

/*
 * Through the switch one packet to any worker reaches them all (the
 * switch multicasts it and rewrites each copy's addresses): the lowest
 * worker whose address is known.
 */
static unsigned switch_dest(const struct ps_job *j)
{
	return j->cfg.worker_known ? __builtin_ctz(j->cfg.worker_known) : 0;
}

/*
 * Send @e's result: through the switch once, or in host-only mode to
 * @only (a worker's resend) or to every worker.
 */
static int send_result(struct esa_ps *ps, struct ps_job *j,
		       const struct esa_entry *e, int only)
{
	int err = 0;

	if (ps->cfg.mode == ESA_PS_SWITCH)
		return queue_packet(ps, j, e, switch_dest(j), 0);
	if (only >= 0)
		return queue_packet(ps, j, e, only, 0);
	for (unsigned w = 0; w < j->cfg.fan_in && !err; w++)
		err = queue_packet(ps, j, e, w, 0);
	return err;
}

/* Ask the workers missing from the unfinished @e to resend it. */
static int send_pull(struct esa_ps *ps, struct ps_job *j,
		     const struct esa_entry *e)
{
	uint32_t missing = j->full & ~e->bitmap;
	int err = 0;

	if (ps->cfg.mode == ESA_PS_SWITCH)
		return queue_packet(ps, j, e, switch_dest(j), missing);
	for (unsigned w = 0; w < j->cfg.fan_in && !err; w++)
		if (missing & (1u << w))
			err = queue_packet(ps, j, e, w, missing);
	return err;
}

static void count_kind(struct ps_job *j, uint8_t flags)
{
	if (flags & ESA_F_COMPLETE)
		j->st.rx_complete++;
	else if (flags & ESA_F_PREEMPTED)
		j->st.rx_preempted++;
	else if (flags & ESA_F_PARTIAL)
		j->st.rx_partial++;
	else if (flags & ESA_F_COLLISION)
		j->st.rx_collision++;
	else if (flags & ESA_F_RESEND)
		j->st.rx_resend++;
	else
		j->st.rx_data++;
	/* A collision of a resend counts as both. */
	if ((flags & ESA_F_RESEND) &&
	    (flags & (ESA_F_COLLISION | ESA_F_PARTIAL)))
		j->st.rx_resend++;
}

/*
 * The ring entry of @seq: its count past the 32-bit wrap (the nearest to
 * the highest seen) modulo the ring. By seq % cache_entries, sequences
 * just before and after the wrap would share entries whenever the ring
 * size does not divide 2^32 (257 entries: 2^32 - 1 and 0), and a piece
 * of one would be dropped as a conflict with the other. Counting starts
 * at 2^32 + the first seq, so that an older one stays above 0.
 */
static struct esa_entry *ring_slot(struct ps_job *j, uint32_t seq,
				   uint32_t entries)
{
	uint64_t count;

	if (!j->count_high)
		j->count_high = (1ull << 32) + seq;
	count = j->count_high + (int64_t)(int32_t)(seq - (uint32_t)j->count_high);
	if (count > j->count_high)
		j->count_high = count;
	return &j->ring[count % entries];
}

static int handle(struct esa_ps *ps, const uint8_t *buf, size_t len,
		  const struct sockaddr_in *from)
{
	struct esa_entry *e;
	struct ps_job *j;
	struct esa_meta m;
	int single;

	ps->st.rx_packets++;
	if (esa_sw_set(&ps->cfg.sw) && !esa_same_addr(from, &ps->cfg.sw)) {
		ps->st.not_switch++;
		return 0;
	}
	if (esa_wire_parse(buf, len, &m)) {
		ps->st.malformed++;
		return 0;
	}
	if (m.flags & ESA_F_RESULT) {
		ps->st.unexpected++;
		return 0;
	}
	j = ps->job[m.job_id];
	if (!j) {
		ps->st.unknown_job++;
		return 0;
	}
	if (m.token != j->cfg.token) {
		j->st.bad_token++;
		return 0;
	}
	j->st.rx_packets++;
	count_kind(j, m.flags);
	if ((uint64_t)m.seq + 1 > j->st.seq_high)
		j->st.seq_high = (uint64_t)m.seq + 1;
	if (m.fan_in != j->cfg.fan_in || (m.bitmap & ~j->full)) {
		j->st.bad++;
		return 0;
	}
	single = __builtin_popcount(m.bitmap) == 1 ? __builtin_ctz(m.bitmap) : -1;
	/* Learn a worker's address from a packet it sent itself (through a
	 * one-armed switch every packet comes from the switch). */
	if (single >= 0 && !esa_sw_set(&ps->cfg.sw) &&
	    !(j->cfg.worker_known & m.bitmap) &&
	    !(m.flags & (ESA_F_COMPLETE | ESA_F_PARTIAL | ESA_F_PREEMPTED))) {
		j->cfg.worker[single] = *from;
		j->cfg.worker_known |= m.bitmap;
	}

	e = ring_slot(j, m.seq, ps->cfg.cache_entries);
	if (e->state == ESA_ENTRY_EMPTY ||
	    (e->seq != m.seq && e->state == ESA_ENTRY_DONE &&
	     (int32_t)(m.seq - e->seq) > 0)) {
		esa_entry_reset(e, m.seq);
	} else if (e->seq != m.seq) {
		if (e->state == ESA_ENTRY_ACTIVE &&
		    (int32_t)(m.seq - e->seq) > 0)
			j->st.conflicts++;
		else
			j->st.stale++;
		return 0;
	}

	switch (esa_entry_merge(e, j->full, &m, buf + ESA_HDR_LEN)) {
	case ESA_MERGE_ADDED:
		j->st.merged++;
		return 0;
	case ESA_MERGE_FINISHED:
		j->st.finished++;
		if (e->overflow)
			j->st.overflows++;
		if (m.flags & ESA_F_COMPLETE) {
			if (!ps->cfg.result_on_complete)
				return 0;
		} else {
			j->st.merged++;
			j->st.finished_by_ps++;
		}
		return send_result(ps, j, e, -1);
	case ESA_MERGE_DUPLICATE:
		j->st.duplicates++;
		if (!(m.flags & ESA_F_RESEND))
			return 0;
		if (e->state == ESA_ENTRY_DONE) {
			j->st.resend_answers++;
			return send_result(ps, j, e, single);
		}
		return send_pull(ps, j, e);
	case ESA_MERGE_OVERLAP:
		j->st.overlaps++;
		return 0;
	case ESA_MERGE_BAD:
	default:
		j->st.bad++;
		return 0;
	}
}

int esa_ps_input(struct esa_ps *ps, const uint8_t *buf, size_t len,
		 const struct sockaddr_in *from)
{
	int err = handle(ps, buf, len, from);

	if (err)
		return err;
	return esa_txq_flush(&ps->tx);
}

int esa_ps_poll(struct esa_ps *ps, int timeout_ms)
{
	const struct sockaddr_in *from;
	const uint8_t *buf;
	int r, total = 0, err;
	size_t len;
	int64_t t = timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000;

	/* Drain what is queued (bounded), then answer in batches. */
	for (int round = 0; round < 64; round++) {
		r = esa_rxq_recv(&ps->rx, round ? 0 : t);
		if (r < 0) {
			esa_txq_flush(&ps->tx);
			return r;
		}
		if (r == 0)
			break;
		while (esa_rxq_next(&ps->rx, &buf, &len, &from)) {
			err = handle(ps, buf, len, from);
			if (err)
				return err;
			total++;
		}
		err = esa_txq_flush(&ps->tx);
		if (err)
			return err;
	}
	return total;
}
