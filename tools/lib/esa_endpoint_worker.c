// SPDX-License-Identifier: GPL-2.0
/*
 * The worker side of an allreduce (Documentation/endpoints.rst): the tensor
 * is cut into packets numbered by a job-wide sequence, at most `window` of
 * them outstanding (a sliding window over the lowest packet without a
 * result, so with window <= agg_span no two outstanding packets share an
 * aggregator), each resent with ESA_F_RESEND when its result is late or
 * when the PS pulls it (its sum waits for this worker), and results
 * written back in place as they come.
 *
 * A pass is a few steps (pass_begin, pass_send, pass_input) on the caller's
 * clock: esa_allreduce_*() drive them with a socket and the monotonic
 * clock, a simulator with its own network and virtual time (the esa_step_*
 * functions of esa_endpoint.h). Packet values come from, and sums go to, a
 * struct esa_values_io: an int32 or float32 buffer here, or the caller's.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "esa_endpoint.h"
#include "esa_shard.h"

#define DEF_WINDOW	128
#define DEF_TIMEOUT_US	10000
#define DEF_MAX_RESENDS	100
/* Resend backoff: timeout << min(resends, BACKOFF_MAX_SHIFT). */
#define BACKOFF_MAX_SHIFT 3
/* The resend timeout is at least this many smoothed round trips. */
#define RTO_SRTT_MULT	2
/*
 * ... and at most this long: a result also waits for the slowest worker of
 * the job, and one that recovers a loss stretches the round trips the
 * others measure far beyond their own path's (seconds, under load), which
 * would leave a worker whose result was lost waiting that long.
 */
#define RTO_MAX_NS	(500 * 1000000ull)
/*
 * Congestion window (packets ahead of the lowest one without a result, at
 * most cfg.window): it starts here, the way TCP's initial window does, so
 * that a job whose first window all goes to its PS (every aggregator taken)
 * brings fan_in x CWND_INITIAL packets to the PS's one link, not
 * fan_in x window; it grows by one per result below ssthresh (doubling per
 * round trip) and by one per window of results above it; slow start also
 * ends when the smoothed round trip passes twice the least one seen (a
 * queue builds: HyStart's delay rule, coarser); a resend timeout sets
 * ssthresh to half the window and the window back here (RFC 5681's
 * response to a retransmission timeout). Documentation/endpoints.rst.
 */
#define CWND_INITIAL	16
#define CWND_MIN	2
/*
 * A delay exit from slow start is taken back once a whole window of
 * results kept the smoothed round trip within 5/4 of the least seen: the
 * queue is gone (the jobs whose packets shared the PS's link left, or
 * this job's sums went back to the switch), and growing by one packet
 * per round trip from there would take hundreds of round trips to refill
 * a 100 Gbit/s path (RFC 9406's resumed slow start after a spurious exit).
 */
#define RESUME_SRTT_NUM	5
#define RESUME_SRTT_DEN	4

struct pkt_state {
	uint64_t	sent_ns;
	uint32_t	resends;
	uint32_t	quiet_resends;	/* resends since the pass last progressed */
	uint64_t	progress_seen;	/* st.results at the last resend */
	uint8_t		done;
	uint8_t		overflowed;
	uint8_t		pulled;		/* the PS asked for it: resend now */
};

/* One pass: @n packets; packet i carries chunk chunks[i] (NULL: i). */
struct pass {
	const struct esa_values_io *io;
	size_t		count;
	const size_t	*chunks;
	size_t		n;
	uint32_t	seq0;
	uint64_t	count0;		/* packet 0's place in the job's count */
	bool		overflow;	/* a sum saturated or must be redone */
	size_t		lo;		/* lowest packet without a result */
	size_t		next;		/* next packet to send for the first time */
	size_t		hi;		/* 1 + the highest packet with a result */
};

struct esa_endpoint {
	struct esa_endpoint_config cfg;
	int		fd;		/* -1: packets go to tx.sink */
	/*
	 * The job's packets so far, counted past the 32-bit wrap: the low
	 * 32 bits are the next pass's first seq, the whole picks aggregators
	 * (esa_agg_index()).
	 */
	uint64_t	next_count;
	uint64_t	srtt_ns;	/* smoothed result round trip, 0 = none yet */
	uint64_t	rttvar_ns;	/* its mean deviation */
	uint32_t	cwnd;		/* congestion window, packets */
	uint32_t	ssthresh;	/* slow start below this */
	uint32_t	cwnd_acc;	/* results towards the next +1 above it */
	uint64_t	cwnd_cut_ns;	/* when a timeout last cut it, 0 = never */
	uint64_t	srtt_min_ns;	/* least smoothed round trip seen */
	bool		delay_exit;	/* ssthresh set by the delay rule, not a timeout */
	uint32_t	quiet_results;	/* results since srtt came back near srtt_min */
	struct esa_endpoint_stats st;
	struct pkt_state *ps;
	size_t		ps_cap;
	struct pass	step;		/* the pass of the esa_step_* calls */
	struct esa_diag	diag;		/* answers heard, for a silence's cause */
	uint64_t	quiet_ns;	/* report a silence this long ... */
	esa_quiet_fn	quiet_fn;	/* ... here (NULL: never) */
	void		*quiet_arg;
	bool		cancel;		/* esa_endpoint_cancel(): end the call */
	struct esa_txq	tx;
	struct esa_rxq	rx;
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
	if (esa_sw_list_check(&c->sw, c->sw_more))
		return -EINVAL;
	if (c->agg_slots == 0 || c->agg_slots > ESA_MAX_AGGREGATORS)
		return esa_set_error(-EINVAL,
				     "aggregator slots %u out of range 1..%u",
				     c->agg_slots, ESA_MAX_AGGREGATORS);
	if (c->agg_offset >= esa_worker_index_space(c))
		return esa_set_error(-EINVAL,
				     "aggregator offset %u not below slots %u",
				     c->agg_offset, esa_worker_index_space(c));
	if (!c->window)
		c->window = DEF_WINDOW;
	if (c->window > 65536)
		return esa_set_error(-EINVAL, "window %u above 65536", c->window);
	if (!c->agg_span)
		c->agg_span = c->window < esa_worker_index_space(c) ?
			      c->window : esa_worker_index_space(c);
	if (c->agg_span > esa_worker_index_space(c))
		return esa_set_error(-EINVAL,
				     "aggregator span %u above slots %u",
				     c->agg_span, esa_worker_index_space(c));
	if (!c->values_per_packet)
		c->values_per_packet = esa_wire_max_values(c->token);
	if (c->values_per_packet > esa_wire_max_values(c->token))
		return esa_set_error(-EINVAL,
				     "values per packet %u out of range 1..%u%s",
				     c->values_per_packet,
				     esa_wire_max_values(c->token),
				     c->token ? " for a job with a token (its trailer takes two values' room)" : "");
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

static uint32_t cwnd_initial(const struct esa_endpoint_config *c)
{
	return c->window < CWND_INITIAL ? c->window : CWND_INITIAL;
}

static int endpoint_alloc(const struct esa_endpoint_config *cfg,
			  struct esa_endpoint **out)
{
	struct esa_endpoint *ep;
	int err;

	*out = NULL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return esa_set_error(-ENOMEM, "out of memory");
	ep->cfg = *cfg;
	ep->fd = -1;
	err = check_config(&ep->cfg);
	if (err) {
		free(ep);
		return err;
	}
	ep->st.f32_min_scale_log2 = ep->cfg.scale_log2;
	ep->ssthresh = ep->cfg.window;
	ep->cwnd = cwnd_initial(&ep->cfg);
	*out = ep;
	return 0;
}

int esa_endpoint_open(const struct esa_endpoint_config *cfg,
		      struct esa_endpoint **out)
{
	struct esa_endpoint *ep;
	bool gso;
	int err;

	*out = NULL;	/* on every failure */
	err = endpoint_alloc(cfg, &ep);
	if (err)
		return err;
	/* Data goes to one peer: GSO if that is the switch's port. */
	err = esa_udp_open(&ep->cfg.self,
			   esa_worker_peer(&ep->cfg)->sin_port == htons(ESA_UDP_PORT),
			   &gso);
	if (err < 0) {
		free(ep);
		return err;
	}
	ep->fd = err;
	esa_txq_init(&ep->tx, ep->fd, gso);
	err = esa_rxq_init(&ep->rx, ep->fd);
	/* ICMP errors are evidence of why nothing answers (diag). */
	if (!err)
		err = esa_udp_recverr(ep->fd);
	if (err) {
		esa_endpoint_close(ep);
		return err;
	}
	*out = ep;
	return 0;
}

int esa_endpoint_new(const struct esa_endpoint_config *cfg, esa_tx_fn tx,
		     void *tx_ctx, struct esa_endpoint **out)
{
	struct esa_endpoint *ep;
	int err;

	*out = NULL;	/* on every failure */
	err = endpoint_alloc(cfg, &ep);
	if (err)
		return err;
	esa_txq_init(&ep->tx, -1, false);
	ep->tx.sink = tx;
	ep->tx.sink_ctx = tx_ctx;
	*out = ep;
	return 0;
}

void esa_endpoint_on_quiet(struct esa_endpoint *ep, unsigned quiet_ms,
			   esa_quiet_fn fn, void *arg)
{
	ep->quiet_ns = (uint64_t)quiet_ms * 1000000;
	ep->quiet_fn = fn;
	ep->quiet_arg = arg;
}

void esa_endpoint_cancel(struct esa_endpoint *ep)
{
	__atomic_store_n(&ep->cancel, true, __ATOMIC_RELEASE);
}

uint32_t esa_endpoint_next_seq(const struct esa_endpoint *ep)
{
	return (uint32_t)ep->next_count;
}

void esa_endpoint_set_next_seq(struct esa_endpoint *ep, uint32_t seq)
{
	/*
	 * Forward to the next count whose low 32 bits are @seq: every worker
	 * of the job sets the same seq at most 2^31 ahead of where it stands,
	 * so all reach the same count, whatever each had used.
	 */
	ep->next_count += (uint32_t)(seq - (uint32_t)ep->next_count);
}

void esa_endpoint_close(struct esa_endpoint *ep)
{
	if (!ep)
		return;
	if (ep->fd >= 0)
		close(ep->fd);
	esa_rxq_free(&ep->rx);
	free(ep->ps);
	free(ep);
}

void esa_endpoint_set_priority(struct esa_endpoint *ep, uint8_t priority)
{
	ep->cfg.priority = priority;
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

/* The values io of a float32 buffer (struct f32_io). */
/* The int32 tensor behind @io, or NULL (see struct esa_values_io). */
static int32_t *io_i32(const struct esa_values_io *io)
{
	return io->load ? NULL : io->ctx;
}

struct f32_io {
	float		*buf;
	int		scale_log2;
	unsigned	fan_in;
};

static void f32_load(void *ctx, size_t off, unsigned n, int32_t *vals)
{
	const struct f32_io *f = ctx;

	esa_f32_quantise(f->buf + off, n, f->scale_log2, f->fan_in, vals);
}

/* An overflowed sum leaves the input in place: the chunk is redone smaller. */
static bool f32_store(void *ctx, size_t off, unsigned n, const int32_t *sum,
		      uint8_t flags)
{
	const struct f32_io *f = ctx;

	if (esa_f32_overflowed(sum, n, f->fan_in, flags))
		return true;
	esa_f32_dequantise(sum, n, f->scale_log2, f->buf + off);
	return false;
}

/* The job's global aggregator index of packet @i of pass @p. */
static uint32_t packet_index(const struct esa_endpoint_config *c,
			     const struct pass *p, size_t i)
{
	return esa_agg_index(esa_worker_index_space(c), c->agg_offset,
			     c->agg_span, p->count0 + i);
}

static int send_packet(struct esa_endpoint *ep, struct pass *p, size_t i,
		       bool resend)
{
	const struct esa_endpoint_config *c = &ep->cfg;
	int32_t vals[ESA_MAX_VALUES];
	struct esa_meta m;
	uint8_t *buf;
	size_t off, len;
	uint32_t wire_index;
	const struct sockaddr_in *to;
	unsigned n;
	int err;

	to = esa_worker_dest(c, packet_index(c, p, i), &wire_index);
	esa_chunk_range(chunk_of(p, i), p->count, c->values_per_packet, &off, &n);
	err = esa_txq_next(&ep->tx, to, &buf);
	if (err)
		return err;
	m = (struct esa_meta){
		.flags = resend ? ESA_F_RESEND : 0,
		.fan_in = c->fan_in,
		.priority = c->priority,
		.job_id = c->job_id,
		.value_count = n,
		.seq = p->seq0 + (uint32_t)i,
		.agg_index = wire_index,
		.bitmap = 1u << c->worker_id,
		.token = c->token,
	};
	esa_wire_put(buf, &m);
	if (io_i32(p->io)) {
		esa_values_to_be(buf + ESA_HDR_LEN, io_i32(p->io) + off, n);
	} else {
		p->io->load(p->io->ctx, off, n, vals);
		esa_values_to_be(buf + ESA_HDR_LEN, vals, n);
	}
	len = esa_wire_end(buf, &m);
	esa_txq_commit(&ep->tx, len);
	ep->st.packets_sent++;
	ep->st.bytes_sent += len;
	if (resend)
		ep->st.resends++;
	return 0;
}

/*
 * A pull naming this worker for packet @i of the pass (wrapped: one of an
 * earlier pass is huge). One sent and still without a result is resent
 * now. One not sent yet, beyond the window but short of lo + 2 window
 * (the farthest the other workers can be while they wait for this one),
 * says they are ahead: the result of this worker's lowest packet was lost,
 * and that packet is resent now instead of after its backed-off timeout
 * (up to RTO_MAX_NS << BACKOFF_MAX_SHIFT, long enough for a worker waiting
 * on it to use up its resends and give up).
 */
static void take_pull(struct esa_endpoint *ep, struct pass *p, size_t i)
{
	if (p->lo >= p->next)
		return;		/* nothing sent yet */
	if (i < p->next) {
		if (!ep->ps[i].done)
			ep->ps[i].pulled = 1;
	} else if (i - p->lo < 2 * (size_t)ep->cfg.window) {
		ep->ps[p->lo].pulled = 1;
	}
}

/*
 * Take one received datagram; 1 + the packet it completed, or 0. @hi is
 * 1 + the highest packet with a result so far.
 */
static size_t take_result(struct esa_endpoint *ep, struct pass *p,
			  const uint8_t *buf, size_t len,
			  const struct sockaddr_in *from, uint64_t now,
			  size_t hi)
{
	const struct esa_endpoint_config *c = &ep->cfg;
	int32_t vals[ESA_MAX_VALUES];
	struct pkt_state *s;
	struct esa_meta m;
	size_t i, off;
	unsigned n;
	bool ovf;

	if (esa_wire_parse(buf, len, &m) || m.job_id != c->job_id) {
		ep->st.ignored++;
		return 0;
	}
	if (m.token != c->token) {
		ep->st.bad_token++;
		ep->diag.bad_token++;
		return 0;
	}
	if (!(m.flags & ESA_F_RESULT)) {
		ep->st.ignored++;
		return 0;
	}
	i = (uint32_t)(m.seq - p->seq0);
	if (i < p->n &&
	    !esa_shard_result_ok(c, from, packet_index(c, p, i), m.agg_index)) {
		ep->st.ignored++;	/* another server's index */
		return 0;
	}
	esa_diag_reply(&ep->diag, now);
	if (m.flags & ESA_F_RESEND) {
		ep->st.pulls++;
		if (m.bitmap & (1u << c->worker_id))
			take_pull(ep, p, i);
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
	if (io_i32(p->io)) {
		esa_values_from_be(io_i32(p->io) + off, buf + ESA_HDR_LEN, n);
		ovf = m.flags & ESA_F_OVERFLOW;
	} else {
		esa_values_from_be(vals, buf + ESA_HDR_LEN, n);
		ovf = p->io->store(p->io->ctx, off, n, vals, m.flags);
	}
	if (ovf) {
		s->overflowed = 1;
		p->overflow = true;
		ep->st.overflow_results++;
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

/*
 * The resend timeout of the path: the configured timeout_us (the caller's
 * round trip bound for its path), and once results measured the path
 * never less than 2 smoothed round trips nor srtt + 4 rttvar (RFC 6298: a
 * loaded path is no loss), capped at RTO_MAX_NS. Before the first sample
 * it is timeout_us alone: the first window cannot queue far behind itself
 * (CWND_INITIAL), and backoff covers a path slower than configured.
 */
static uint64_t path_rto(const struct esa_endpoint *ep)
{
	uint64_t rto = (uint64_t)ep->cfg.timeout_us * 1000;
	uint64_t est = ep->srtt_ns + 4 * ep->rttvar_ns;

	if (ep->srtt_ns * RTO_SRTT_MULT > est)
		est = ep->srtt_ns * RTO_SRTT_MULT;
	if (est > RTO_MAX_NS)
		est = RTO_MAX_NS;
	return est > rto ? est : rto;
}

/* When packet @s is late: the path's timeout, doubled per resend. */
static uint64_t deadline(const struct esa_endpoint *ep,
			 const struct pkt_state *s)
{
	unsigned sh = s->resends < BACKOFF_MAX_SHIFT ? s->resends
						      : BACKOFF_MAX_SHIFT;

	return s->sent_ns + (path_rto(ep) << sh);
}

/*
 * Slow start ends when a queue builds (the smoothed round trip above twice
 * the least) and resumes when a window of results saw it gone.
 */
static void cwnd_follow_delay(struct esa_endpoint *ep)
{
	if (ep->cwnd < ep->ssthresh && ep->srtt_ns > 2 * ep->srtt_min_ns) {
		ep->ssthresh = ep->cwnd;
		ep->delay_exit = true;
		ep->quiet_results = 0;
	} else if (ep->delay_exit && RESUME_SRTT_DEN * ep->srtt_ns <=
		   RESUME_SRTT_NUM * ep->srtt_min_ns) {
		if (++ep->quiet_results >= ep->cwnd) {
			ep->ssthresh = ep->cfg.window;
			ep->delay_exit = false;
		}
	} else {
		ep->quiet_results = 0;
	}
}

/* A result arrived: open the window (slow start, then one per window). */
static void cwnd_grow(struct esa_endpoint *ep)
{
	if (ep->srtt_ns && (!ep->srtt_min_ns || ep->srtt_ns < ep->srtt_min_ns))
		ep->srtt_min_ns = ep->srtt_ns;
	cwnd_follow_delay(ep);
	if (ep->cwnd >= ep->cfg.window)
		return;
	if (ep->cwnd < ep->ssthresh) {
		ep->cwnd++;
	} else if (++ep->cwnd_acc >= ep->cwnd) {
		ep->cwnd_acc = 0;
		ep->cwnd++;
	}
}

/*
 * A packet timed out at @now: halve ssthresh from the window and restart
 * from CWND_INITIAL, once per path timeout (the packets of one window
 * that time out together are one congestion event, not many).
 */
static void cwnd_timeout(struct esa_endpoint *ep, uint64_t now)
{
	uint32_t half = ep->cwnd / 2;

	if (ep->cwnd_cut_ns && now - ep->cwnd_cut_ns < path_rto(ep))
		return;
	ep->cwnd_cut_ns = now;
	ep->delay_exit = false;		/* a loss: no resumed slow start */
	ep->ssthresh = half > CWND_MIN ? half : CWND_MIN;
	ep->cwnd = cwnd_initial(&ep->cfg);
	ep->cwnd_acc = 0;
}

static int pass_begin(struct esa_endpoint *ep, struct pass *p)
{
	if (p->n > ep->ps_cap) {
		struct pkt_state *ns = realloc(ep->ps, p->n * sizeof(*ns));

		if (!ns)
			return esa_set_error(-ENOMEM, "out of memory");
		ep->ps = ns;
		ep->ps_cap = p->n;
	}
	memset(ep->ps, 0, p->n * sizeof(*ep->ps));
	/* A cancel meant for an earlier call does not end this one. */
	__atomic_store_n(&ep->cancel, false, __ATOMIC_RELEASE);
	p->seq0 = (uint32_t)ep->next_count;
	p->count0 = ep->next_count;
	ep->next_count += p->n;
	p->lo = p->next = p->hi = 0;
	return 0;
}

static bool pass_done(const struct pass *p)
{
	return p->lo >= p->n;
}

/* The server packet @i of @p went to (its index's, with several). */
static const struct sockaddr_in *packet_dest(const struct esa_endpoint_config *c,
					     const struct pass *p, size_t i)
{
	uint32_t wire_index;

	return esa_worker_dest(c, packet_index(c, p, i), &wire_index);
}

/*
 * A silence of quiet_ns: the likely cause, once, to the caller's report,
 * about the server of the lowest packet without a result (the one the
 * call waits for).
 */
static void report_quiet(struct esa_endpoint *ep, const struct pass *p,
			 uint64_t now)
{
	char why[512];

	if (!ep->quiet_fn || !esa_diag_silent(&ep->diag, now, ep->quiet_ns))
		return;
	ep->diag.reported = true;
	esa_diag_cause_sw(&ep->diag, &ep->rx.icmp, &ep->cfg,
			  packet_dest(&ep->cfg, p, p->lo), why, sizeof(why));
	ep->quiet_fn(ep->quiet_arg, why);
}

/*
 * The call ends: no result for packet @i of @p after @resends, nothing
 * else either. Over several switch servers the error names the one the
 * packet went to: the others may be fine, that one is the cause.
 */
static int give_up(struct esa_endpoint *ep, const struct pass *p, size_t i,
		   uint32_t resends)
{
	const struct esa_endpoint_config *c = &ep->cfg;
	unsigned nsw = esa_sw_count(&c->sw, c->sw_more);
	const struct sockaddr_in *to = packet_dest(c, p, i);
	char why[512], server[80] = "", a[INET_ADDRSTRLEN];

	ep->st.timeouts++;
	esa_txq_flush(&ep->tx);
	esa_diag_cause_sw(&ep->diag, &ep->rx.icmp, c, to, why, sizeof(why));
	if (nsw > 1)
		snprintf(server, sizeof(server), " from switch server %u (%s:%u) of %u",
			 esa_shard_of(packet_index(c, p, i), nsw),
			 inet_ntop(AF_INET, &to->sin_addr, a, sizeof(a)),
			 ntohs(to->sin_port), nsw);
	return esa_set_error(-ETIMEDOUT,
		"job %u worker %u: no result for seq %u%s after %u resends, none for any other packet meanwhile: %s",
		c->job_id, c->worker_id, p->seq0 + (uint32_t)i, server, resends, why);
}

/* esa_endpoint_cancel() was called: the call ends, naming the silence. */
static int cancelled(struct esa_endpoint *ep, uint64_t now)
{
	char why[512];

	esa_txq_flush(&ep->tx);
	esa_diag_cause(&ep->diag, &ep->rx.icmp, &ep->cfg, why, sizeof(why));
	return esa_set_error(-ECANCELED,
		"job %u worker %u: cancelled after %llu ms without an answer: %s",
		ep->cfg.job_id, ep->cfg.worker_id,
		(unsigned long long)(ep->diag.wait_since && now > ep->diag.wait_since ?
				     (now - ep->diag.wait_since) / 1000000 : 0),
		why);
}

/*
 * At @now: send what the window allows and resend what is late, then
 * flush. *@first: the earliest resend deadline (UINT64_MAX: none).
 */
static int pass_send(struct esa_endpoint *ep, struct pass *p, uint64_t now,
		     uint64_t *first)
{
	const uint32_t win = ep->cwnd;
	size_t i;
	int err;

	if (!p->next)		/* the pass starts: nothing was owed before */
		esa_diag_wait(&ep->diag, now);
	for (; p->next < p->n && p->next < p->lo + win; p->next++) {
		err = send_packet(ep, p, p->next, false);
		if (err)
			return err;
		ep->ps[p->next].sent_ns = now;
	}
	/*
	 * Resend what is late and presumed lost: the lowest packet without a
	 * result, or one below a packet that has its result (results come
	 * back roughly in order, like SACK evidence). A late packet with no
	 * such evidence is more likely waiting for a slow worker of the job;
	 * resending it would only flush the partial sum out of the switch.
	 * Only within the congestion window, which a timeout has just closed:
	 * a whole window resent at once by every worker of a job is the
	 * incast that lost it. Find the earliest deadline.
	 */
	*first = UINT64_MAX;
	for (i = p->lo; i < p->next; i++) {
		struct pkt_state *s = &ep->ps[i];
		uint64_t d;

		if (s->done)
			continue;
		d = deadline(ep, s);
		if (s->pulled)
			d = now;
		else if (d <= now && i != p->lo && i >= p->hi)
			continue;	/* woken by the next result */
		else if (d <= now && i - p->lo >= ep->cwnd)
			continue;	/* resent once the window reaches it */
		if (d <= now) {
			/*
			 * Give up only when the job stopped making progress: a
			 * packet may wait long for a slow worker while results
			 * keep coming.
			 */
			if (s->progress_seen != ep->st.results) {
				s->progress_seen = ep->st.results;
				s->quiet_resends = 0;
			}
			if (s->quiet_resends >= ep->cfg.max_resends)
				return give_up(ep, p, i, s->quiet_resends);
			if (!s->pulled) {
				cwnd_timeout(ep, now);
				if (!ep->st.first_timeout_us)
					ep->st.first_timeout_us =
						(d - s->sent_ns) / 1000;
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
		if (d < *first)
			*first = d;
	}
	report_quiet(ep, p, now);
	if (__atomic_load_n(&ep->cancel, __ATOMIC_ACQUIRE))
		return cancelled(ep, now);
	/* Wake for the report too, not only for the next resend. */
	if (ep->quiet_fn && !ep->diag.reported && ep->diag.wait_since &&
	    ep->diag.wait_since + ep->quiet_ns < *first)
		*first = ep->diag.wait_since + ep->quiet_ns;
	return esa_txq_flush(&ep->tx);
}

/* One datagram from @from received at @now. */
static void pass_input(struct esa_endpoint *ep, struct pass *p,
		       const uint8_t *buf, size_t len,
		       const struct sockaddr_in *from, uint64_t now)
{
	size_t got;

	if (!esa_result_path_ok(&ep->cfg, from)) {
		ep->st.ignored++;
		return;
	}
	got = take_result(ep, p, buf, len, from, now, p->hi);
	if (got)
		cwnd_grow(ep);
	if (got > p->hi)
		p->hi = got;
	while (p->lo < p->n && ep->ps[p->lo].done)
		p->lo++;
}

/* A pass on the endpoint's socket and the monotonic clock. */
static int run_pass(struct esa_endpoint *ep, struct pass *p)
{
	const struct sockaddr_in *from;
	uint64_t now, first;
	const uint8_t *buf;
	size_t len;
	int err, r;

	err = pass_begin(ep, p);
	if (err)
		return err;
	while (!pass_done(p)) {
		now = esa_now_ns();
		err = pass_send(ep, p, now, &first);
		if (err)
			return err;
		r = esa_rxq_recv(&ep->rx, first == UINT64_MAX ? 0 :
				 (int64_t)(first > now ? first - now : 0));
		if (r == -EINTR)
			continue;
		if (r < 0)
			return r;
		now = esa_now_ns();
		while (esa_rxq_next(&ep->rx, &buf, &len, &from))
			pass_input(ep, p, buf, len, from, now);
	}
	return 0;
}

static int check_count(size_t count, unsigned vpp, size_t *n)
{
	*n = 0;
	if (!count)
		return esa_set_error(-EINVAL, "empty tensor");
	*n = esa_chunk_count(count, vpp);
	if (*n > UINT32_MAX / 2)
		return esa_set_error(-E2BIG, "tensor of %zu values too large", count);
	return 0;
}

int esa_step_begin(struct esa_endpoint *ep, size_t count,
		   const struct esa_values_io *io)
{
	struct pass *p = &ep->step;
	size_t n;
	int err;

	err = check_count(count, ep->cfg.values_per_packet, &n);
	if (err)
		return err;
	*p = (struct pass){ .io = io, .count = count, .n = n };
	return pass_begin(ep, p);
}

int esa_step_send(struct esa_endpoint *ep, uint64_t now, uint64_t *deadline)
{
	return pass_send(ep, &ep->step, now, deadline);
}

void esa_step_input(struct esa_endpoint *ep, const uint8_t *buf, size_t len,
		    const struct sockaddr_in *from, uint64_t now)
{
	pass_input(ep, &ep->step, buf, len, from, now);
}

bool esa_step_done(const struct esa_endpoint *ep)
{
	return pass_done(&ep->step);
}

int esa_step_end(struct esa_endpoint *ep)
{
	if (!pass_done(&ep->step))
		return esa_set_error(-EBUSY, "the call has packets without a result");
	ep->st.allreduces++;
	if (ep->step.overflow)
		return esa_set_error(-EOVERFLOW, "a sum saturated at the int32 range");
	return 0;
}

int esa_allreduce_i32(struct esa_endpoint *ep, int32_t *buf, size_t count)
{
	const struct esa_values_io io = {
		.ctx = buf,	/* no load/store: the tensor in place */
	};
	struct pass p = { .io = &io, .count = count };
	int err;

	err = check_count(count, ep->cfg.values_per_packet, &p.n);
	if (err)
		return err;
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
 * overflows or the scale would go below ESA_F32_SCALE_LOG2_MIN. At that
 * scale every finite float fits, so only a non-finite value (sent as the
 * marker at every scale) ends the call with -ERANGE, on every worker alike.
 */
int esa_allreduce_f32(struct esa_endpoint *ep, float *buf, size_t count)
{
	struct f32_io f = {
		.buf = buf, .scale_log2 = ep->cfg.scale_log2,
		.fan_in = ep->cfg.fan_in,
	};
	const struct esa_values_io io = {
		.load = f32_load, .store = f32_store, .ctx = &f,
	};
	struct pass p = { .io = &io, .count = count };
	size_t n_all, *redo = NULL, n_redo;
	int err;

	err = check_count(count, ep->cfg.values_per_packet, &n_all);
	if (err)
		return err;
	ep->st.f32_min_scale_log2 = f.scale_log2;
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
		if (f.scale_log2 - ESA_F32_SCALE_STEP < ESA_F32_SCALE_LOG2_MIN) {
			err = esa_set_error(-ERANGE,
					    "%zu packets overflow even at scale 2^%d: a worker's values there are not finite",
					    n_redo, f.scale_log2);
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
		f.scale_log2 -= ESA_F32_SCALE_STEP;
		ep->st.f32_redo_packets += n_redo;
		ep->st.f32_min_scale_log2 = f.scale_log2;
	}
	free(redo);
	if (!err)
		ep->st.allreduces++;
	return err;
}
