// SPDX-License-Identifier: GPL-2.0
/*
 * The worker side of an allreduce (Documentation/endpoints.rst): the tensor
 * is cut into packets numbered by a job-wide sequence, at most `window` of
 * them outstanding (a sliding window over the lowest packet without a
 * result, so with window <= agg_span no two outstanding packets share an
 * aggregator), each resent with ESA_F_RESEND when its result is late or
 * when the PS pulls it (its sum waits for this worker), and results
 * written back in place as they come.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esa_endpoint.h"

#define DEF_WINDOW	128
#define DEF_TIMEOUT_US	10000
#define DEF_MAX_RESENDS	100
/* Resend backoff: timeout << min(resends, BACKOFF_MAX_SHIFT). */
#define BACKOFF_MAX_SHIFT 3
/* The resend timeout is at least this many smoothed round trips. */
#define RTO_SRTT_MULT	2
#define RTO_INITIAL_NS	(100 * 1000000ull)
/*
 * ... and at most this long: a result also waits for the slowest worker of
 * the job, and one that recovers a loss stretches the round trips the
 * others measure far beyond their own path's (seconds, under load), which
 * would leave a worker whose result was lost waiting that long.
 */
#define RTO_MAX_NS	(500 * 1000000ull)

struct pkt_state {
	uint64_t	sent_ns;
	uint32_t	resends;
	uint32_t	quiet_resends;	/* resends since the pass last progressed */
	uint64_t	progress_seen;	/* st.results at the last resend */
	uint8_t		done;
	uint8_t		overflowed;
	uint8_t		pulled;		/* the PS asked for it: resend now */
};

struct esa_endpoint {
	struct esa_endpoint_config cfg;
	int		fd;
	uint32_t	next_seq;	/* first sequence of the next pass */
	uint64_t	srtt_ns;	/* smoothed result round trip, 0 = none yet */
	uint64_t	rttvar_ns;	/* its mean deviation */
	struct esa_endpoint_stats st;
	struct pkt_state *ps;
	size_t		ps_cap;
	struct esa_txq	tx;
	struct esa_rxq	rx;
};

/* One pass: @n packets; packet i carries chunk chunks[i] (NULL: i). */
struct pass {
	bool		is_f32;
	void		*buf;
	size_t		count;
	const size_t	*chunks;
	size_t		n;
	int		scale_log2;
	uint32_t	seq0;
	bool		overflow;	/* an int32 sum saturated */
};

static int check_config(struct esa_endpoint_config *c)
{
	if (c->job_id == 0 || c->job_id > ESA_MAX_JOB_ID)
		return esa_set_error(-EINVAL, "job id %u out of range 1..%u",
				     c->job_id, ESA_MAX_JOB_ID);
	if (c->fan_in == 0 || c->fan_in > ESA_MAX_WORKERS)
		return esa_set_error(-EINVAL, "fan-in %u out of range 1..%u",
				     c->fan_in, ESA_MAX_WORKERS);
	if (c->worker_id >= c->fan_in)
		return esa_set_error(-EINVAL,
				     "worker id %u not below fan-in %u",
				     c->worker_id, c->fan_in);
	if (c->ps.sin_family != AF_INET || c->ps.sin_addr.s_addr == 0)
		return esa_set_error(-EINVAL, "no parameter server address");
	if (c->agg_slots == 0 || c->agg_slots > ESA_MAX_AGGREGATORS)
		return esa_set_error(-EINVAL,
				     "aggregator slots %u out of range 1..%u",
				     c->agg_slots, ESA_MAX_AGGREGATORS);
	if (c->agg_offset >= c->agg_slots)
		return esa_set_error(-EINVAL,
				     "aggregator offset %u not below slots %u",
				     c->agg_offset, c->agg_slots);
	if (!c->window)
		c->window = DEF_WINDOW;
	if (c->window > 65536)
		return esa_set_error(-EINVAL, "window %u above 65536", c->window);
	if (!c->agg_span)
		c->agg_span = c->window < c->agg_slots ? c->window : c->agg_slots;
	if (c->agg_span > c->agg_slots)
		return esa_set_error(-EINVAL,
				     "aggregator span %u above slots %u",
				     c->agg_span, c->agg_slots);
	if (!c->values_per_packet)
		c->values_per_packet = ESA_MAX_VALUES;
	if (c->values_per_packet > ESA_MAX_VALUES)
		return esa_set_error(-EINVAL,
				     "values per packet %u out of range 1..%u",
				     c->values_per_packet, ESA_MAX_VALUES);
	if (!c->timeout_us)
		c->timeout_us = DEF_TIMEOUT_US;
	if (!c->max_resends)
		c->max_resends = DEF_MAX_RESENDS;
	if (!c->scale_log2_set) {
		c->scale_log2 = ESA_F32_SCALE_LOG2_DEFAULT;
		c->scale_log2_set = true;
	}
	if (c->scale_log2 < ESA_F32_SCALE_LOG2_MIN || c->scale_log2 > 62)
		return esa_set_error(-EINVAL, "float scale 2^%d out of range 2^%d..2^62",
				     c->scale_log2, ESA_F32_SCALE_LOG2_MIN);
	if (!c->ps.sin_port)
		c->ps.sin_port = htons(ESA_UDP_PORT);
	if (!c->self.sin_port)
		c->self.sin_port = htons(ESA_UDP_PORT);
	c->self.sin_family = AF_INET;
	return 0;
}

int esa_endpoint_open(const struct esa_endpoint_config *cfg,
		      struct esa_endpoint **out)
{
	struct esa_endpoint *ep;
	int err;

	*out = NULL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return esa_set_error(-ENOMEM, "out of memory");
	ep->cfg = *cfg;
	err = check_config(&ep->cfg);
	if (err)
		goto fail;
	err = esa_udp_open(&ep->cfg.self);
	if (err < 0)
		goto fail;
	ep->fd = err;
	esa_txq_init(&ep->tx, ep->fd);
	esa_rxq_init(&ep->rx, ep->fd);
	ep->st.f32_min_scale_log2 = ep->cfg.scale_log2;
	*out = ep;
	return 0;
fail:
	free(ep);
	return err;
}

void esa_endpoint_close(struct esa_endpoint *ep)
{
	if (!ep)
		return;
	close(ep->fd);
	free(ep->ps);
	free(ep);
}

void esa_endpoint_get_stats(const struct esa_endpoint *ep,
			    struct esa_endpoint_stats *st)
{
	*st = ep->st;
	st->tx_drops = ep->tx.drops;
	st->send_batches = ep->tx.batches;
	st->recv_batches = ep->rx.batches;
}

void esa_endpoint_get_config(const struct esa_endpoint *ep,
			     struct esa_endpoint_config *cfg)
{
	*cfg = ep->cfg;
}

static size_t chunk_of(const struct pass *p, size_t i)
{
	return p->chunks ? p->chunks[i] : i;
}

static int send_packet(struct esa_endpoint *ep, struct pass *p, size_t i,
		       bool resend)
{
	const struct esa_endpoint_config *c = &ep->cfg;
	int32_t vals[ESA_MAX_VALUES];
	struct esa_meta m;
	uint8_t *buf;
	size_t off;
	unsigned n;
	int err;

	esa_chunk_range(chunk_of(p, i), p->count, c->values_per_packet, &off, &n);
	err = esa_txq_next(&ep->tx, &c->ps, &buf);
	if (err)
		return err;
	m = (struct esa_meta){
		.flags = resend ? ESA_F_RESEND : 0,
		.fan_in = c->fan_in,
		.priority = c->priority,
		.job_id = c->job_id,
		.value_count = n,
		.seq = p->seq0 + (uint32_t)i,
		.agg_index = esa_agg_index(c->agg_slots, c->agg_offset,
					   c->agg_span, p->seq0 + (uint32_t)i),
		.bitmap = 1u << c->worker_id,
	};
	esa_wire_put(buf, &m);
	if (p->is_f32)
		esa_f32_quantise((const float *)p->buf + off, n, p->scale_log2,
				 c->fan_in, vals);
	else
		memcpy(vals, (const int32_t *)p->buf + off, 4 * n);
	esa_values_to_be(buf + ESA_HDR_LEN, vals, n);
	esa_txq_commit(&ep->tx, ESA_HDR_LEN + 4 * n);
	ep->st.packets_sent++;
	ep->st.bytes_sent += ESA_HDR_LEN + 4 * n;
	if (resend)
		ep->st.resends++;
	return 0;
}

/*
 * Take one received datagram; 1 + the packet it completed, or 0. @hi is
 * 1 + the highest packet with a result so far.
 */
static size_t take_result(struct esa_endpoint *ep, struct pass *p,
			  const uint8_t *buf, size_t len, uint64_t now,
			  size_t hi)
{
	const struct esa_endpoint_config *c = &ep->cfg;
	int32_t vals[ESA_MAX_VALUES];
	struct pkt_state *s;
	struct esa_meta m;
	size_t i, off;
	unsigned n;

	if (esa_wire_parse(buf, len, &m) || !(m.flags & ESA_F_RESULT) ||
	    m.job_id != c->job_id) {
		ep->st.ignored++;
		return 0;
	}
	i = (uint32_t)(m.seq - p->seq0);
	if (m.flags & ESA_F_RESEND) {
		/* A pull: resend if we are asked and still wait for it. */
		ep->st.pulls++;
		if (i < p->n && !ep->ps[i].done &&
		    (m.bitmap & (1u << c->worker_id)))
			ep->ps[i].pulled = 1;
		return 0;
	}
	if (i >= p->n) {
		/* A result of an earlier pass arriving again. */
		ep->st.duplicate_results++;
		return 0;
	}
	s = &ep->ps[i];
	if (s->done) {
		ep->st.duplicate_results++;
		return 0;
	}
	esa_chunk_range(chunk_of(p, i), p->count, c->values_per_packet, &off, &n);
	if (m.value_count != n) {
		ep->st.ignored++;
		return 0;
	}
	esa_values_from_be(vals, buf + ESA_HDR_LEN, n);
	if (p->is_f32) {
		if (esa_f32_overflowed(vals, n, c->fan_in, m.flags)) {
			/* Keep the input: the chunk is redone smaller. */
			s->overflowed = 1;
			ep->st.overflow_results++;
		} else {
			esa_f32_dequantise(vals, n, p->scale_log2,
					   (float *)p->buf + off);
		}
	} else {
		memcpy((int32_t *)p->buf + off, vals, 4 * n);
		if (m.flags & ESA_F_OVERFLOW) {
			p->overflow = true;
			ep->st.overflow_results++;
		}
	}
	s->done = 1;
	ep->st.results++;
	/*
	 * Karn: only packets sent once give a round-trip sample, and only
	 * results not overtaken by a later packet's: one that comes after
	 * was held back by another worker's loss recovery, not by the path.
	 */
	if (!s->resends && i >= hi && now > s->sent_ns) {
		uint64_t rtt = now - s->sent_ns;

		/* RFC 6298 estimators (alpha 1/8, beta 1/4). */
		if (!ep->srtt_ns) {
			ep->srtt_ns = rtt;
			ep->rttvar_ns = rtt / 2;
		} else {
			uint64_t d = rtt > ep->srtt_ns ? rtt - ep->srtt_ns
						       : ep->srtt_ns - rtt;

			ep->rttvar_ns = ep->rttvar_ns - ep->rttvar_ns / 4 + d / 4;
			ep->srtt_ns = ep->srtt_ns - ep->srtt_ns / 8 + rtt / 8;
		}
	}
	return i + 1;
}

static uint64_t deadline(const struct esa_endpoint *ep,
			 const struct pkt_state *s)
{
	unsigned sh = s->resends < BACKOFF_MAX_SHIFT ? s->resends
						      : BACKOFF_MAX_SHIFT;
	uint64_t rto = (uint64_t)ep->cfg.timeout_us * 1000;

	uint64_t est = ep->srtt_ns + 4 * ep->rttvar_ns;

	/*
	 * A loaded path is no loss: never resend before 2 smoothed RTTs nor
	 * before srtt + 4 rttvar (RFC 6298), and before the first sample (the
	 * first window queues behind itself) not before RTO_INITIAL_NS.
	 */
	if (ep->srtt_ns * RTO_SRTT_MULT > est)
		est = ep->srtt_ns * RTO_SRTT_MULT;
	if (!ep->srtt_ns)
		est = RTO_INITIAL_NS;
	if (est > RTO_MAX_NS)
		est = RTO_MAX_NS;
	if (est > rto)
		rto = est;
	return s->sent_ns + (rto << sh);
}

static int run_pass(struct esa_endpoint *ep, struct pass *p)
{
	const uint32_t win = ep->cfg.window;
	size_t lo = 0, next = 0, hi = 0, i;
	uint64_t now, first;
	int err, r;

	if (p->n > ep->ps_cap) {
		struct pkt_state *ns = realloc(ep->ps, p->n * sizeof(*ns));

		if (!ns)
			return esa_set_error(-ENOMEM, "out of memory");
		ep->ps = ns;
		ep->ps_cap = p->n;
	}
	memset(ep->ps, 0, p->n * sizeof(*ep->ps));
	p->seq0 = ep->next_seq;
	ep->next_seq += (uint32_t)p->n;

	while (lo < p->n) {
		now = esa_now_ns();
		for (; next < p->n && next < lo + win; next++) {
			err = send_packet(ep, p, next, false);
			if (err)
				return err;
			ep->ps[next].sent_ns = now;
		}
		/*
		 * Resend what is late and presumed lost: the lowest packet
		 * without a result, or one below a packet that has its result
		 * (results come back roughly in order, like SACK evidence). A
		 * late packet with no such evidence is more likely waiting for
		 * a slow worker of the job; resending it would only flush the
		 * partial sum out of the switch. Find the earliest deadline.
		 */
		first = UINT64_MAX;
		for (i = lo; i < next; i++) {
			struct pkt_state *s = &ep->ps[i];
			uint64_t d;

			if (s->done)
				continue;
			d = deadline(ep, s);
			if (s->pulled)
				d = now;
			else if (d <= now && i != lo && i >= hi)
				continue;	/* woken by the next result */
			if (d <= now) {
				/*
				 * Give up only when the job stopped making
				 * progress: a packet may wait long for a slow
				 * worker while results keep coming.
				 */
				if (s->progress_seen != ep->st.results) {
					s->progress_seen = ep->st.results;
					s->quiet_resends = 0;
				}
				if (s->quiet_resends >= ep->cfg.max_resends) {
					ep->st.timeouts++;
					esa_txq_flush(&ep->tx);
					return esa_set_error(-ETIMEDOUT,
						"job %u worker %u: no result for seq %u after %u resends, none for any other packet meanwhile",
						ep->cfg.job_id, ep->cfg.worker_id,
						p->seq0 + (uint32_t)i, s->quiet_resends);
				}
				err = send_packet(ep, p, i, true);
				if (err)
					return err;
				s->resends++;
				s->quiet_resends++;
				s->sent_ns = now;
				s->pulled = 0;
				d = deadline(ep, s);
			}
			if (d < first)
				first = d;
		}
		err = esa_txq_flush(&ep->tx);
		if (err)
			return err;

		r = esa_rxq_recv(&ep->rx, first == UINT64_MAX ? 0 :
				 (int64_t)(first > now ? first - now : 0));
		if (r == -EINTR)
			continue;
		if (r < 0)
			return r;
		now = esa_now_ns();
		for (int k = 0; k < r; k++) {
			size_t got = take_result(ep, p, ep->rx.buf[k],
						 ep->rx.msg[k].msg_len, now, hi);

			if (got > hi)
				hi = got;
		}
		while (lo < p->n && ep->ps[lo].done)
			lo++;
	}
	return 0;
}

int esa_allreduce_i32(struct esa_endpoint *ep, int32_t *buf, size_t count)
{
	struct pass p = {
		.buf = buf,
		.count = count,
		.n = esa_chunk_count(count, ep->cfg.values_per_packet),
	};
	int err;

	if (!count)
		return esa_set_error(-EINVAL, "empty tensor");
	if (p.n > UINT32_MAX / 2)
		return esa_set_error(-E2BIG, "tensor of %zu values too large", count);
	err = run_pass(ep, &p);
	if (err)
		return err;
	ep->st.allreduces++;
	if (p.overflow)
		return esa_set_error(-EOVERFLOW, "a sum saturated at the int32 range");
	return 0;
}

/*
 * Float32: pass 1 at the configured scale; every chunk whose result says
 * overflow (all workers see the same result, so they agree which) is redone
 * at a scale ESA_F32_SCALE_STEP bits smaller, as new sequences, until none
 * overflows or the scale would go below ESA_F32_SCALE_LOG2_MIN.
 */
int esa_allreduce_f32(struct esa_endpoint *ep, float *buf, size_t count)
{
	struct pass p = {
		.is_f32 = true,
		.buf = buf,
		.count = count,
		.scale_log2 = ep->cfg.scale_log2,
	};
	size_t n_all = esa_chunk_count(count, ep->cfg.values_per_packet);
	size_t *redo = NULL, n_redo;
	int err;

	if (!count)
		return esa_set_error(-EINVAL, "empty tensor");
	if (n_all > UINT32_MAX / 2)
		return esa_set_error(-E2BIG, "tensor of %zu values too large", count);
	for (size_t i = 0; i < count; i++)
		if (!isfinite(buf[i]))
			return esa_set_error(-EINVAL,
					     "value %zu is not finite", i);
	ep->st.f32_min_scale_log2 = p.scale_log2;
	p.n = n_all;
	for (;;) {
		err = run_pass(ep, &p);
		if (err)
			break;
		n_redo = 0;
		for (size_t i = 0; i < p.n; i++)
			if (ep->ps[i].overflowed)
				n_redo++;
		if (!n_redo)
			break;
		if (p.scale_log2 - ESA_F32_SCALE_STEP < ESA_F32_SCALE_LOG2_MIN) {
			err = esa_set_error(-ERANGE,
					    "%zu packets overflow even at scale 2^%d",
					    n_redo, p.scale_log2);
			break;
		}
		size_t *nr = malloc(n_redo * sizeof(*nr)), k = 0;

		if (!nr) {
			err = esa_set_error(-ENOMEM, "out of memory");
			break;
		}
		for (size_t i = 0; i < p.n; i++)
			if (ep->ps[i].overflowed)
				nr[k++] = chunk_of(&p, i);
		free(redo);
		redo = nr;
		p.chunks = redo;
		p.n = n_redo;
		p.scale_log2 -= ESA_F32_SCALE_STEP;
		ep->st.f32_redo_packets += n_redo;
		ep->st.f32_min_scale_log2 = p.scale_log2;
	}
	free(redo);
	if (!err)
		ep->st.allreduces++;
	return err;
}
