// SPDX-License-Identifier: GPL-2.0
/*
 * The simulation engine (sim.h). Time is virtual, in picoseconds; events
 * are processed in (time, insertion) order, so a scenario and a seed give
 * the same run on any machine. Per event:
 *   EV_ARRIVE    a job arrives: its record goes into the switch, its hosts
 *                announce themselves, its PS and workers start;
 *   EV_COMPUTED  a worker finished an iteration's compute: allreduce;
 *   EV_TIMER     a worker's resend deadline;
 *   EV_AT_SWITCH a frame reached the switch: the data plane runs on it;
 *   EV_AT_HOST   a frame reached a host: it queues for the host's CPU
 *                (cpu_ns per datagram, when the scenario gives one);
 *   EV_INPUT     the host's CPU takes the datagram: its worker or PS;
 *   EV_SAMPLE    occupancy and counters into stats.csv;
 *   EV_PRIO      the control plane's priority tick (LAS);
 *   EV_HOP       a frame reached a ToR, the spine or a switch server's
 *                port: its next link, or the server's queue (net_hop()).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"
#include "simswitch.h"
#include "prio.h"
#include "rng.h"
#include "esa_endpoint.h"
#include "esa_rules.h"
#include "esa_shard.h"

#define PS_PER_NS	1000ull
#define PS_PER_US	1000000ull
/* Preamble 8, FCS 4 and inter-frame gap 12 bytes: the wire's per-frame cost. */
#define WIRE_OVERHEAD	24
#define MIN_FRAME	60
#define NEVER		UINT64_MAX
#define PKT_CHUNK	1024

enum ev_kind {
	EV_ARRIVE, EV_COMPUTED, EV_TIMER, EV_AT_SWITCH, EV_AT_HOST, EV_INPUT,
	EV_SAMPLE, EV_PRIO, EV_HOP,
};

struct ev {
	uint64_t	t;
	uint64_t	seq;
	void		*p;
	uint32_t	kind;
	uint32_t	arg;
};

struct heap {
	struct ev	*v;
	size_t		n, cap;
};

struct pkt {
	struct pkt	*next;		/* free list */
	uint32_t	len;
	uint32_t	host;		/* sender (at the switch), receiver */
	uint32_t	srv;		/* the switch server it goes to or came from */
	uint32_t	hop;		/* enum hop: where it is (EV_HOP) */
	uint8_t		frame[SIMSW_FRAME_MAX];
};

struct link {
	uint64_t	free_at;	/* the last queued frame is out then */
};

/*
 * Where an EV_HOP frame has arrived. Without a ToR tier a host's link
 * ends at every server's port; with one (rack_hosts) it ends at its ToR,
 * whose uplink (the rack's hosts' rate over oversub) ends at the spine,
 * where each server has its own link.
 */
enum hop {
	HOP_TOR_UP,	/* at the ToR from a host: onto the rack's uplink */
	HOP_SPINE_UP,	/* at the spine: onto the server's link */
	HOP_SERVER,	/* at the server's port: into its service queue */
	HOP_SPINE_DOWN,	/* at the spine from a server: onto the downlink */
	HOP_TOR_DOWN,	/* at the ToR: onto the host's link */
};

/* One switch server: its own data plane (array) and its own link. */
struct server {
	struct simsw	sw;
	struct link	in, out;	/* from the spine, to the spine */
	uint64_t	busy_until;	/* its data plane's last frame done */
};

/* One ToR's uplink, both directions. */
struct rack {
	struct link	up, down;
};

enum host_kind { HOST_WORKER, HOST_PS };

struct host {
	uint32_t	ip;		/* host order */
	uint16_t	port;
	uint8_t		mac[6];
	uint8_t		kind;
	uint32_t	job;		/* job index */
	uint32_t	worker;		/* worker index (HOST_WORKER) */
	struct link	up, down;	/* to the switch, from the switch */
	uint64_t	cpu_free_at;	/* its CPU is busy until then */
};

struct worker {
	uint32_t	host;
	uint32_t	job;		/* index */
	uint32_t	job_id;
	uint32_t	w;		/* bit in the job */
	uint32_t	fan_in;
	struct esa_endpoint *ep;
	struct esa_values_io io;
	uint32_t	iter;
	uint64_t	off;		/* bytes of this iteration done */
	uint64_t	call;		/* calls made (values are keyed by it) */
	uint32_t	count;		/* values of the current call */
	uint64_t	timer_at;
	uint64_t	stored;		/* values whose sum arrived */
	uint64_t	mismatches;
	bool		in_call, done, failed;
	uint64_t	end;
};

struct job {
	const struct scn_job *sj;
	uint32_t	index;
	uint32_t	ps_host;
	uint32_t	w0;		/* its first worker in sim.workers */
	struct esa_ps	*ps;
	struct esa_job_info info;
	uint32_t	agg_slots;	/* index space its workers use */
	uint32_t	agg_offset;
	uint32_t	window;
	uint8_t		prio;
	struct prio_las	las;
	uint32_t	done_workers;
	bool		arrived, finished, ok;
	uint64_t	arrival, end;
};

struct sim {
	const struct scenario *sc;
	const struct scn_switch *cfg;
	uint64_t	prio_tick_ps;	/* the control plane's LAS period */
	const struct sim_opts *o;
	struct sim_result *res;
	struct server	*servers;	/* cfg->servers of them */
	uint32_t	nservers;
	uint32_t	cur_srv;	/* whose data plane is running */
	struct rack	*racks;		/* with a ToR tier */
	uint32_t	nracks;
	uint32_t	uplink_mbps;	/* a ToR uplink's rate */
	uint64_t	server_ps;	/* a server's service time per frame */
	struct heap	heap;
	uint64_t	seq;
	uint64_t	now;
	struct host	*hosts;
	uint32_t	nhosts;
	struct worker	*workers;
	uint32_t	nworkers;
	struct job	*jobs;
	uint32_t	njobs;
	uint32_t	jobs_done;
	uint32_t	*job_of_id;	/* 1 + index by job id, 0: none */
	struct pkt	*free_pkts;
	void		**chunks;
	size_t		nchunks;
	uint32_t	cur_host;	/* whose endpoint is sending */
	struct rng	rng;
	uint64_t	delay_ps, switch_ps, buffer_bytes;
	uint64_t	cpu_ps;		/* a host's mean CPU time per datagram */
	uint32_t	mbps;
	uint32_t	*occupancy;	/* by job id, for samples */
	uint64_t	wall0, wall_last;
	bool		progress_shown;
	int		error;
};

/* ----------------------------------------------------------------- heap */

static bool ev_before(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int push(struct sim *s, uint64_t t, uint32_t kind, uint32_t arg,
		void *p)
{
	struct heap *h = &s->heap;
	struct ev e = { .t = t, .seq = s->seq++, .p = p, .kind = kind,
			.arg = arg };
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 4096;
		struct ev *v = realloc(h->v, cap * sizeof(*v));

		if (!v) {
			s->error = -ENOMEM;
			return -ENOMEM;
		}
		h->v = v;
		h->cap = cap;
	}
	for (i = h->n++; i > 0; i = (i - 1) / 2) {
		struct ev *parent = &h->v[(i - 1) / 2];

		if (!ev_before(&e, parent))
			break;
		h->v[i] = *parent;
	}
	h->v[i] = e;
	return 0;
}

static bool pop(struct sim *s, struct ev *out)
{
	struct heap *h = &s->heap;
	struct ev last;
	size_t i = 0, c;

	if (!h->n)
		return false;
	*out = h->v[0];
	last = h->v[--h->n];
	for (;;) {
		c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && ev_before(&h->v[c + 1], &h->v[c]))
			c++;
		if (!ev_before(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return true;
}

/* -------------------------------------------------------------- packets */

static struct pkt *pkt_get(struct sim *s)
{
	struct pkt *p = s->free_pkts;

	if (!p) {
		struct pkt *c = malloc(PKT_CHUNK * sizeof(*c));
		void **nc = realloc(s->chunks, (s->nchunks + 1) * sizeof(*nc));

		if (!c || !nc) {
			free(c);
			if (nc)
				s->chunks = nc;
			s->error = -ENOMEM;
			return NULL;
		}
		s->chunks = nc;
		s->chunks[s->nchunks++] = c;
		for (size_t i = 0; i < PKT_CHUNK; i++) {
			c[i].next = s->free_pkts;
			s->free_pkts = &c[i];
		}
		p = s->free_pkts;
	}
	s->free_pkts = p->next;
	return p;
}

static void pkt_put(struct sim *s, struct pkt *p)
{
	p->next = s->free_pkts;
	s->free_pkts = p;
}

/* ------------------------------------------------------------ addresses */

/* Job id J: its PS at 10.0.J.1 (J < 1024 spans two octets), worker w at 10 + w. */
static uint32_t job_ip(uint32_t id, uint32_t octet)
{
	return 0x0a000000u | id << 8 | octet;
}

/* The host with address @ip, or -1. */
static int64_t host_of_ip(const struct sim *s, uint32_t ip)
{
	uint32_t id = (ip >> 8) & 0xffff, octet = ip & 0xff, j;
	const struct job *job;

	if ((ip >> 24) != 10 || id > ESA_MAX_JOB_ID || !s->job_of_id[id])
		return -1;
	j = s->job_of_id[id] - 1;
	job = &s->jobs[j];
	if (octet == 1)
		return job->ps_host;
	if (octet >= 10 && octet - 10 < job->sj->workers)
		return s->workers[job->w0 + octet - 10].host;
	return -1;
}

/* ---------------------------------------------------------------- links */

static uint64_t wire_ps(uint32_t mbps, uint32_t len)
{
	uint64_t bytes = (len < MIN_FRAME ? MIN_FRAME : len) + WIRE_OVERHEAD;

	return bytes * 8000000 / mbps;	/* 1 bit = 10^6 / mbps ps */
}

/*
 * Queue a frame of @len bytes on @l, a link of @mbps, at @t: false if the
 * queue's buffer is full (tail drop), else true and *@arrive = when its
 * last bit reaches the other end.
 */
static bool link_send_rate(struct sim *s, struct link *l, uint32_t mbps,
			   uint64_t t, uint32_t len, uint64_t *arrive)
{
	uint64_t start = l->free_at > t ? l->free_at : t;
	uint64_t queued = (start - t) * mbps / 8000000;

	if (queued + len > s->buffer_bytes) {
		s->res->queue_drops++;
		return false;
	}
	l->free_at = start + wire_ps(mbps, len);
	*arrive = l->free_at + s->delay_ps;
	return true;
}

/* The same on a link of the scenario's rate (every host's and server's). */
static bool link_send(struct sim *s, struct link *l, uint64_t t, uint32_t len,
		      uint64_t *arrive)
{
	return link_send_rate(s, l, s->mbps, t, len, arrive);
}

/*
 * One datagram's CPU time at host @h from now on (the host's CPU works
 * through its datagrams in order): exponential around cpu_ns, so hosts of
 * one job drift apart as software endpoints on a busy machine do. 0
 * without cpu_ns. Returns when the CPU is done with it.
 */
static uint64_t cpu_take(struct sim *s, struct host *h)
{
	uint64_t start = h->cpu_free_at > s->now ? h->cpu_free_at : s->now;

	if (!s->cpu_ps)
		return s->now;
	h->cpu_free_at = start + (uint64_t)(-log(1.0 - rng_unit(&s->rng)) *
					    (double)s->cpu_ps);
	return h->cpu_free_at;
}

static uint64_t now_ns(const struct sim *s)
{
	return s->now / PS_PER_NS;
}

/* ---------------------------------------------------------------- trace */

static void trace_frame(struct sim *s, const char *dir, const uint8_t *f,
			uint32_t len, uint32_t ip)
{
	const uint8_t *h = f + SIMSW_HDRS;

	if (!s->o->trace || len < SIMSW_HDRS + ESA_HDR_LEN)
		return;
	fprintf(s->o->trace,
		"%llu %s %u.%u.%u.%u flags=0x%02x job=%u seq=%u idx=%u bitmap=0x%x prio=%u n=%u\n",
		(unsigned long long)now_ns(s), dir, ip >> 24, (ip >> 16) & 255,
		(ip >> 8) & 255, ip & 255, h[1], h[4] << 8 | h[5],
		(uint32_t)h[8] << 24 | h[9] << 16 | h[10] << 8 | h[11],
		(uint32_t)h[12] << 24 | h[13] << 16 | h[14] << 8 | h[15],
		(uint32_t)h[16] << 24 | h[17] << 16 | h[18] << 8 | h[19],
		h[3], h[6] << 8 | h[7]);
}

/* ------------------------------------- switch servers and the ToR tier */

/* Where the ESA header's aggregator index sits in a frame (big endian). */
#define FRAME_IDX_OFF	(SIMSW_HDRS + 12)

static uint32_t frame_idx(const uint8_t *f)
{
	const uint8_t *b = f + FRAME_IDX_OFF;

	return (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

static void frame_set_idx(uint8_t *f, uint32_t idx)
{
	uint8_t *b = f + FRAME_IDX_OFF;

	b[0] = idx >> 24;
	b[1] = idx >> 16;
	b[2] = idx >> 8;
	b[3] = idx;
}

/*
 * A host's frame goes to the server that owns its index (esa_shard_of())
 * with that server's local index, as a sharding endpoint would send it:
 * libesa's endpoint and PS number a job's indices over all servers
 * (setup_shards()), so the simulated network makes the split, and
 * shard_from_server() undoes it. One server: frames are left alone.
 */
static uint32_t shard_to_server(const struct sim *s, struct pkt *p)
{
	uint32_t g;

	if (s->nservers == 1 || p->len < FRAME_IDX_OFF + 4)
		return 0;
	g = frame_idx(p->frame);
	frame_set_idx(p->frame, esa_shard_local(g, s->nservers));
	return esa_shard_of(g, s->nservers);
}

static void shard_from_server(const struct sim *s, struct pkt *p)
{
	if (s->nservers > 1 && p->len >= FRAME_IDX_OFF + 4)
		frame_set_idx(p->frame,
			      esa_shard_global(frame_idx(p->frame), p->srv,
					       s->nservers));
}

static struct rack *rack_of(struct sim *s, uint32_t host)
{
	return &s->racks[host / s->cfg->rack_hosts];
}

/* The host's own port, the end of a frame's way down. */
#define HOP_HOST	UINT32_MAX

/* Frame @p reaches @hop at @t: its event there. */
static void net_next(struct sim *s, struct pkt *p, uint64_t t, uint32_t hop)
{
	if (hop == HOP_HOST) {
		push(s, t, EV_AT_HOST, 0, p);
		return;
	}
	if (hop == HOP_SERVER && !s->server_ps) {
		push(s, t, EV_AT_SWITCH, 0, p);	/* no service queue */
		return;
	}
	p->hop = hop;
	push(s, t, EV_HOP, 0, p);
}

/* Onto link @l of @mbps now, on to @hop; a tail drop frees it. */
static void net_forward(struct sim *s, struct pkt *p, struct link *l,
			uint32_t mbps, uint32_t hop)
{
	uint64_t arrive;

	if (!link_send_rate(s, l, mbps, s->now, p->len, &arrive)) {
		pkt_put(s, p);
		return;
	}
	net_next(s, p, arrive, hop);
}

/*
 * A server's data plane takes one frame at a time, server_ns each (its
 * cost per packet over the cores it runs on), in arrival order: the
 * frame is run when its turn is done.
 */
static void server_queue(struct sim *s, struct pkt *p)
{
	struct server *sv = &s->servers[p->srv];
	uint64_t start = sv->busy_until > s->now ? sv->busy_until : s->now;

	sv->busy_until = start + s->server_ps;
	push(s, sv->busy_until, EV_AT_SWITCH, 0, p);
}

static void net_hop(struct sim *s, struct pkt *p)
{
	struct server *sv = &s->servers[p->srv];

	switch (p->hop) {
	case HOP_TOR_UP:
		net_forward(s, p, &rack_of(s, p->host)->up, s->uplink_mbps,
			    HOP_SPINE_UP);
		break;
	case HOP_SPINE_UP:
		net_forward(s, p, &sv->in, s->mbps, HOP_SERVER);
		break;
	case HOP_SERVER:
		server_queue(s, p);
		break;
	case HOP_SPINE_DOWN:
		net_forward(s, p, &rack_of(s, p->host)->down, s->uplink_mbps,
			    HOP_TOR_DOWN);
		break;
	case HOP_TOR_DOWN:
		net_forward(s, p, &s->hosts[p->host].down, s->mbps, HOP_HOST);
		break;
	}
}

/* ------------------------------------------------------- the endpoints' tx */

/* A datagram from the endpoint of s->cur_host: a frame to the switch. */
static void host_tx(void *ctx, const struct sockaddr_in *to,
		    const uint8_t *buf, size_t len)
{
	struct sim *s = ctx;
	struct host *h = &s->hosts[s->cur_host];
	struct simsw_addr src = { .ip = h->ip, .port = h->port };
	struct simsw_addr dst = { .ip = ntohl(to->sin_addr.s_addr),
				  .port = ntohs(to->sin_port) };
	uint64_t arrive;
	struct pkt *p;

	if (h->kind == HOST_WORKER && s->cfg->loss_pct &&
	    rng_next(&s->rng) % 100 < s->cfg->loss_pct) {
		s->res->loss_drops++;
		return;
	}
	p = pkt_get(s);
	if (!p)
		return;
	memcpy(src.mac, h->mac, 6);
	simsw_mac_of_ip(dst.ip, dst.mac);
	p->len = simsw_frame_build(p->frame, &src, &dst, buf, (uint32_t)len);
	p->host = s->cur_host;
	p->srv = shard_to_server(s, p);
	if (!link_send(s, &h->up, cpu_take(s, h), p->len, &arrive)) {
		pkt_put(s, p);
		return;
	}
	net_next(s, p, arrive, s->racks ? HOP_TOR_UP : HOP_SERVER);
}

/* ------------------------------------------------------- values and sums */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/*
 * Worker w's value i of call c of job j: a + (w + 1) m with a and m from
 * a hash of (j, c, i). The sum over fan_in workers is then F a + m F (F+1)
 * / 2, checked in O(1); a missing or doubled worker changes it.
 */
static void value_parts(uint32_t job, uint64_t call, uint64_t i,
			int64_t *a, int64_t *m)
{
	uint64_t h = mix64(mix64((uint64_t)job << 40 ^ call) ^ i);

	*a = (int64_t)(h & 0xfffff) - 0x80000;
	*m = (int64_t)((h >> 20) & 0x3ff);
}

static void worker_load(void *ctx, size_t off, unsigned n, int32_t *vals)
{
	const struct worker *wk = ctx;
	int64_t a, m;

	for (unsigned k = 0; k < n; k++) {
		value_parts(wk->job_id, wk->call, off + k, &a, &m);
		vals[k] = (int32_t)(a + (int64_t)(wk->w + 1) * m);
	}
}

static bool worker_store(void *ctx, size_t off, unsigned n,
			 const int32_t *sum, uint8_t flags)
{
	struct worker *wk = ctx;
	int64_t a, m, f = wk->fan_in;

	for (unsigned k = 0; k < n; k++) {
		value_parts(wk->job_id, wk->call, off + k, &a, &m);
		if (sum[k] != f * a + m * f * (f + 1) / 2)
			wk->mismatches++;
	}
	wk->stored += n;
	return flags & ESA_F_OVERFLOW;
}

/* -------------------------------------------------------------- workers */

/*
 * One iteration's compute of one worker: the job's compute time, up to
 * jitter % longer (uniform, from the seed): GPUs of one job do not finish
 * an iteration at the same instant, and a sum waits for the last worker.
 */
static uint64_t compute_ps(struct sim *s, const struct scn_job *sj)
{
	uint64_t t = sj->compute_us * PS_PER_US;

	if (s->cfg->jitter_pct && t)
		t += (uint64_t)(rng_unit(&s->rng) * (double)t *
				s->cfg->jitter_pct / 100.0);
	return t;
}

static void job_worker_done(struct sim *s, struct job *j);

static void worker_fail(struct sim *s, struct worker *wk, int err)
{
	if (s->o->progress || err != -ETIMEDOUT)
		fprintf(stderr, "\nesa-sim: job %u worker %u: %s\n", wk->job_id,
			wk->w, esa_last_error());
	wk->failed = true;
	wk->in_call = false;
	wk->end = s->now;
	job_worker_done(s, &s->jobs[wk->job]);
}

/* Send what is due now and arm the timer for the next deadline. */
static void worker_kick(struct sim *s, struct worker *wk)
{
	uint64_t deadline, t;
	int err;

	s->cur_host = wk->host;
	err = esa_step_send(wk->ep, now_ns(s), &deadline);
	if (err) {
		worker_fail(s, wk, err);
		return;
	}
	if (deadline == NEVER)
		return;
	t = deadline * PS_PER_NS;
	if (t < s->now)
		t = s->now;
	if (t < wk->timer_at) {
		wk->timer_at = t;
		push(s, t, EV_TIMER, 0, wk);
	}
}

/* The next allreduce call: one partition of this iteration's gradient. */
static void worker_call(struct sim *s, struct worker *wk)
{
	const struct scn_job *sj = s->jobs[wk->job].sj;
	uint64_t left = sj->size - wk->off;
	uint64_t bytes = left < s->cfg->partition ? left : s->cfg->partition;
	int err;

	wk->count = (uint32_t)(bytes / 4);
	err = esa_step_begin(wk->ep, wk->count, &wk->io);
	if (err) {
		worker_fail(s, wk, err);
		return;
	}
	wk->in_call = true;
	worker_kick(s, wk);
}

static void worker_call_done(struct sim *s, struct worker *wk)
{
	const struct scn_job *sj = s->jobs[wk->job].sj;
	int err = esa_step_end(wk->ep);

	wk->in_call = false;
	if (err) {
		worker_fail(s, wk, err);
		return;
	}
	wk->call++;
	wk->off += (uint64_t)wk->count * 4;
	if (wk->off < sj->size) {
		worker_call(s, wk);
		return;
	}
	wk->off = 0;
	if (++wk->iter < sj->iterations) {
		push(s, s->now + compute_ps(s, sj), EV_COMPUTED, 0, wk);
		return;
	}
	wk->done = true;
	wk->end = s->now;
	job_worker_done(s, &s->jobs[wk->job]);
}

static void worker_input(struct sim *s, struct worker *wk, const uint8_t *buf,
			 uint32_t len, const struct sockaddr_in *from)
{
	if (!wk->in_call)
		return;		/* between calls: an old result, nothing waits */
	esa_step_input(wk->ep, buf, len, from, now_ns(s));
	if (esa_step_done(wk->ep))
		worker_call_done(s, wk);
	else
		worker_kick(s, wk);
}

static void worker_timer(struct sim *s, struct worker *wk, uint64_t t)
{
	if (t != wk->timer_at)
		return;		/* superseded by an earlier deadline */
	wk->timer_at = NEVER;
	if (wk->in_call)
		worker_kick(s, wk);
}

/* ----------------------------------------------------------------- jobs */

static void job_set_priority(struct sim *s, struct job *j, uint8_t prio)
{
	j->prio = prio;
	for (uint32_t w = 0; w < j->sj->workers; w++)
		esa_endpoint_set_priority(s->workers[j->w0 + w].ep, prio);
}

static void write_jct(struct sim *s, const struct job *j)
{
	const struct scn_job *sj = j->sj;

	if (!s->o->jct_csv)
		return;
	fprintf(s->o->jct_csv, "%s,%u,%u,%u,%llu,%u,%.3f,%d,%.6f\n",
		scn_policy_name(s->o->policy), s->o->run, sj->id, sj->workers,
		(unsigned long long)sj->size, sj->iterations,
		(double)sj->arrival_us / 1000.0, j->ok,
		(double)(j->end - j->arrival) / 1e12);
}

static void job_worker_done(struct sim *s, struct job *j)
{
	uint64_t want = j->sj->size / 4 * j->sj->iterations;

	if (++j->done_workers < j->sj->workers)
		return;
	j->finished = true;
	j->ok = true;
	j->end = 0;
	for (uint32_t w = 0; w < j->sj->workers; w++) {
		struct worker *wk = &s->workers[j->w0 + w];

		if (wk->end > j->end)
			j->end = wk->end;
		if (wk->failed || wk->mismatches || wk->stored != want)
			j->ok = false;
		s->res->mismatches += wk->mismatches;
	}
	s->jobs_done++;
	if (j->ok)
		s->res->jobs_ok++;
	s->res->avg_jct_s += (double)(j->end - j->arrival) / 1e12;
	write_jct(s, j);
}

static int job_start_ps(struct sim *s, struct job *j)
{
	struct esa_ps_config pc = {
		.mode = ESA_PS_SWITCH,
		.result_on_complete = s->o->policy == ESA_POLICY_ATP,
		.cache_entries = 256,
	};
	struct esa_ps_job_config jc = { .job_id = j->sj->id,
					.fan_in = j->sj->workers };

	while (pc.cache_entries < 2 * j->window)
		pc.cache_entries *= 2;
	for (uint32_t w = 0; w < j->sj->workers; w++) {
		const struct host *h = &s->hosts[s->workers[j->w0 + w].host];

		jc.worker[w].sin_family = AF_INET;
		jc.worker[w].sin_addr.s_addr = htonl(h->ip);
		jc.worker[w].sin_port = htons(h->port);
		jc.worker_known |= 1u << w;
	}
	if (esa_ps_new(&pc, host_tx, s, &j->ps) ||
	    esa_ps_add_job(j->ps, &jc)) {
		fprintf(stderr, "esa-sim: job %u: PS: %s\n", j->sj->id,
			esa_last_error());
		return -1;
	}
	return 0;
}

static int job_start_workers(struct sim *s, struct job *j)
{
	const struct host *ps = &s->hosts[j->ps_host];

	for (uint32_t w = 0; w < j->sj->workers; w++) {
		struct worker *wk = &s->workers[j->w0 + w];
		const struct host *h = &s->hosts[wk->host];
		struct esa_endpoint_config c = {
			.job_id = j->sj->id, .worker_id = w,
			.fan_in = j->sj->workers, .priority = j->prio,
			.agg_slots = j->agg_slots, .agg_offset = j->agg_offset,
			.window = j->window,
			.values_per_packet = s->cfg->values,
			.timeout_us = s->cfg->rto_us,
		};

		c.ps.sin_family = c.self.sin_family = AF_INET;
		c.ps.sin_addr.s_addr = htonl(ps->ip);
		c.ps.sin_port = htons(ps->port);
		c.self.sin_addr.s_addr = htonl(h->ip);
		c.self.sin_port = htons(h->port);
		if (esa_endpoint_new(&c, host_tx, s, &wk->ep)) {
			fprintf(stderr, "esa-sim: job %u worker %u: %s\n",
				j->sj->id, w, esa_last_error());
			return -1;
		}
		push(s, s->now + compute_ps(s, j->sj), EV_COMPUTED, 0, wk);
	}
	return 0;
}

/* One server learns job @j and its hosts. */
static int job_put_on_server(struct sim *s, struct job *j, struct simsw *sw)
{
	if (simsw_job_put(sw, &j->info)) {
		fprintf(stderr, "esa-sim: job %u: cannot write its record\n",
			j->sj->id);
		return -1;
	}
	if (simsw_announce(sw, s->hosts[j->ps_host].ip,
			   s->hosts[j->ps_host].mac))
		return -1;
	for (uint32_t w = 0; w < j->sj->workers; w++) {
		const struct host *h = &s->hosts[s->workers[j->w0 + w].host];

		if (simsw_announce(sw, h->ip, h->mac))
			return -1;
	}
	return 0;
}

/* A job arrives: every server learns it and its hosts, its endpoints start. */
static int job_arrive(struct sim *s, struct job *j)
{
	j->arrived = true;
	j->arrival = s->now;
	for (uint32_t k = 0; k < s->nservers; k++)
		if (job_put_on_server(s, j, &s->servers[k].sw))
			return -1;
	if (job_start_ps(s, j) || job_start_workers(s, j))
		return -1;
	return 0;
}

/* ------------------------------------------------------------ the switch */

static void switch_emit(void *ctx, uint32_t dst_ip, const uint8_t *frame,
			uint32_t len)
{
	struct sim *s = ctx;
	int64_t h = host_of_ip(s, dst_ip);
	uint64_t arrive;
	struct pkt *p;

	trace_frame(s, "out", frame, len, dst_ip);
	if (h < 0) {
		s->res->unexpected++;
		return;
	}
	p = pkt_get(s);
	if (!p)
		return;
	memcpy(p->frame, frame, len);
	p->len = len;
	p->host = (uint32_t)h;
	p->srv = s->cur_srv;
	shard_from_server(s, p);
	if (!link_send(s, s->racks ? &s->servers[p->srv].out :
			 &s->hosts[h].down, s->now + s->switch_ps, len,
		       &arrive)) {
		pkt_put(s, p);
		return;
	}
	net_next(s, p, arrive, s->racks ? HOP_SPINE_DOWN : HOP_HOST);
}

static void at_switch(struct sim *s, struct pkt *p)
{
	int verdict;

	trace_frame(s, "in", p->frame, p->len, s->hosts[p->host].ip);
	s->res->switch_packets++;
	s->cur_srv = p->srv;
	s->res->server_packets[p->srv]++;
	verdict = simsw_packet(&s->servers[p->srv].sw, now_ns(s), p->frame,
			       p->len, switch_emit, s);
	if (verdict < 0) {
		fprintf(stderr, "esa-sim: BPF_PROG_TEST_RUN: %s\n",
			strerror(-verdict));
		s->error = verdict;
	}
	pkt_put(s, p);
}

/* The host's CPU takes a datagram: its worker or its PS. */
static void host_input(struct sim *s, struct pkt *p)
{
	struct host *h = &s->hosts[p->host];
	struct sockaddr_in from = { .sin_family = AF_INET };
	const uint8_t *payload;
	uint32_t plen, src;
	uint16_t sport;

	if (simsw_frame_payload(p->frame, p->len, &payload, &plen, &src,
				&sport)) {
		s->res->unexpected++;
		pkt_put(s, p);
		return;
	}
	from.sin_addr.s_addr = htonl(src);
	from.sin_port = htons(sport);
	if (h->kind == HOST_WORKER) {
		worker_input(s, &s->workers[h->worker], payload, plen, &from);
	} else {
		s->cur_host = p->host;
		esa_ps_input(s->jobs[h->job].ps, payload, plen, &from);
	}
	pkt_put(s, p);
}

/* A frame reached its host: at once, or after the host's CPU got to it. */
static void at_host(struct sim *s, struct pkt *p)
{
	uint64_t t = cpu_take(s, &s->hosts[p->host]);

	if (t == s->now)
		host_input(s, p);
	else
		push(s, t, EV_INPUT, 0, p);
}

/* ------------------------------------------- samples and priority ticks */

/* Job @id's data plane counters summed over every server. */
static int job_counters(struct sim *s, uint32_t id, __u64 c[__ESA_CNT_MAX])
{
	__u64 one[__ESA_CNT_MAX];

	memset(c, 0, sizeof(one));
	for (uint32_t k = 0; k < s->nservers; k++) {
		if (esa_switch_counters(s->servers[k].sw.sw, id, one))
			return -1;
		for (unsigned i = 0; i < __ESA_CNT_MAX; i++)
			c[i] += one[i];
	}
	return 0;
}

/* Aggregators each job holds on every server together: s->occupancy. */
static int occupancy_all(struct sim *s)
{
	uint32_t one[ESA_MAX_JOB_ID + 1];

	memset(s->occupancy, 0, (ESA_MAX_JOB_ID + 1) * sizeof(*s->occupancy));
	for (uint32_t k = 0; k < s->nservers; k++) {
		if (esa_switch_agg_owners(s->servers[k].sw.sw, s->cfg->slots,
					  one))
			return -1;
		for (uint32_t id = 0; id <= ESA_MAX_JOB_ID; id++)
			s->occupancy[id] += one[id];
	}
	return 0;
}

static void sample(struct sim *s)
{
	__u64 c[__ESA_CNT_MAX];

	if (!s->o->stats_csv)
		return;
	if (occupancy_all(s))
		return;
	for (uint32_t i = 0; i < s->njobs; i++) {
		uint32_t id = s->jobs[i].sj->id;

		if (job_counters(s, id, c))
			memset(c, 0, sizeof(c));
		fprintf(s->o->stats_csv, "%s,%u,%.6f,%u,%u",
			scn_policy_name(s->o->policy), s->o->run,
			(double)s->now / 1e12, id, s->occupancy[id]);
		for (unsigned k = 0; k < s->o->nstats_counters; k++)
			fprintf(s->o->stats_csv, ",%llu",
				(unsigned long long)c[s->o->stats_counters[k]]);
		fputc('\n', s->o->stats_csv);
	}
}

/*
 * The control plane's tick: each auto job's LAS priority from the bytes
 * of its tensor the switch aggregated for it (its counter over its
 * workers), aged every aging_ms as the module's work ages attained service.
 */
static void prio_tick(struct sim *s, uint32_t tick)
{
	uint32_t ticks_per_half = s->cfg->aging_ms * 1000 * PS_PER_US /
				  s->prio_tick_ps;
	bool age = ticks_per_half && tick % ticks_per_half == 0;
	__u64 c[__ESA_CNT_MAX];

	for (uint32_t i = 0; i < s->njobs; i++) {
		struct job *j = &s->jobs[i];
		uint8_t p;

		if (age)
			prio_las_age(&j->las);
		if (!j->arrived || j->finished || j->sj->priority >= 0)
			continue;
		if (job_counters(s, j->sj->id, c))
			continue;
		p = prio_las_update(&j->las, c[ESA_CNT_AGGREGATED],
				    4 * s->cfg->values, j->sj->workers);
		if (p != j->prio)
			job_set_priority(s, j, p);
	}
}

/* ----------------------------------------------------------------- setup */

static int setup_hosts(struct sim *s)
{
	uint32_t nw = 0, h = 0;

	for (uint32_t i = 0; i < s->njobs; i++)
		nw += s->sc->jobs[i].workers;
	s->nworkers = nw;
	s->nhosts = nw + s->njobs;
	s->hosts = calloc(s->nhosts, sizeof(*s->hosts));
	s->workers = calloc(nw ? nw : 1, sizeof(*s->workers));
	if (!s->hosts || !s->workers)
		return -ENOMEM;
	nw = 0;
	for (uint32_t i = 0; i < s->njobs; i++) {
		struct job *j = &s->jobs[i];
		struct host *ps = &s->hosts[h];

		j->ps_host = h++;
		ps->kind = HOST_PS;
		ps->job = i;
		ps->ip = job_ip(j->sj->id, 1);
		ps->port = ESA_UDP_PORT;
		simsw_mac_of_ip(ps->ip, ps->mac);
		j->w0 = nw;
		for (uint32_t w = 0; w < j->sj->workers; w++, nw++, h++) {
			struct worker *wk = &s->workers[nw];
			struct host *wh = &s->hosts[h];

			wh->kind = HOST_WORKER;
			wh->job = i;
			wh->worker = nw;
			wh->ip = job_ip(j->sj->id, 10 + w);
			wh->port = 40000 + w;
			simsw_mac_of_ip(wh->ip, wh->mac);
			wk->host = h;
			wk->job = i;
			wk->job_id = j->sj->id;
			wk->w = w;
			wk->fan_in = j->sj->workers;
			wk->timer_at = NEVER;
			wk->io = (struct esa_values_io){ .load = worker_load,
				.store = worker_store, .ctx = wk };
		}
	}
	return 0;
}

/*
 * Where each job's aggregators are. esa and atp: the whole array, each
 * job's window of indices starting `window` slots after the previous
 * job's, as esa-bench does (ATP spreads jobs by hashing for the same end).
 * static: the module's layout (esa_rules_layout(), every job without a
 * quota: equal slices in job id order, SwitchML's pool), the window no
 * larger than the slice.
 */
static int setup_slots(struct sim *s)
{
	const struct scn_switch *c = s->cfg;
	struct esa_rules_slice *sl;
	uint32_t need, *order;
	int err;

	for (uint32_t i = 0; i < s->njobs; i++) {
		struct job *j = &s->jobs[i];

		j->window = c->window;
		j->agg_slots = c->slots;
		j->agg_offset = (uint32_t)((uint64_t)i * c->window % c->slots);
	}
	if (s->o->policy != ESA_POLICY_STATIC)
		return 0;
	sl = calloc(s->njobs, sizeof(*sl));
	order = calloc(s->njobs, sizeof(*order));
	err = sl && order ? 0 : -ENOMEM;
	/* the layout takes the jobs in job id order */
	for (uint32_t id = 1, n = 0; !err && id <= ESA_MAX_JOB_ID; id++)
		if (s->job_of_id[id])
			order[n++] = s->job_of_id[id] - 1;
	if (!err)
		err = esa_rules_layout(ESA_POLICY_STATIC, c->slots, sl,
				       s->njobs, &need);
	if (err == -ENOSPC)
		fprintf(stderr, "esa-sim: static: %u jobs need at least %u slots, not %u\n",
			s->njobs, need, c->slots);
	for (uint32_t k = 0; !err && k < s->njobs; k++) {
		struct job *j = &s->jobs[order[k]];

		j->info.agg_base = sl[k].base;
		j->info.agg_slice = sl[k].slice;
		j->agg_slots = sl[k].slice;
		j->agg_offset = 0;
		if (j->window > sl[k].slice)
			j->window = sl[k].slice;
	}
	free(sl);
	free(order);
	return err;
}

/*
 * A job over S servers: libesa's endpoint numbers its indices across all
 * of them, S times a server's space, dealt out mod S (esa_shard.h), so a
 * server's share is laid out as the job's whole space is at S = 1. The
 * window is per server: each server sees a worker's `window` packets
 * outstanding, as from a job on it alone.
 */
static int setup_shards(struct sim *s)
{
	uint32_t n = s->nservers;

	if ((uint64_t)n * s->cfg->slots > ESA_MAX_AGGREGATORS) {
		fprintf(stderr, "esa-sim: servers=%u x slots=%u is above a job's index space of %u aggregators\n",
			n, s->cfg->slots, ESA_MAX_AGGREGATORS);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < s->njobs; i++) {
		struct job *j = &s->jobs[i];

		j->agg_slots *= n;
		j->agg_offset *= n;
		j->window *= n;
	}
	return 0;
}

/*
 * The servers and, with rack_hosts, the ToRs: hosts in index order,
 * rack_hosts to a ToR, whose uplink runs at rack_hosts x link / oversub.
 */
static int setup_network(struct sim *s)
{
	const struct scn_switch *c = s->cfg;
	uint64_t up;

	s->nservers = c->servers;
	s->servers = calloc(s->nservers, sizeof(*s->servers));
	if (!s->servers)
		return -ENOMEM;
	s->server_ps = (uint64_t)c->server_ns * PS_PER_NS;
	if (!c->rack_hosts)
		return 0;
	s->nracks = (s->nhosts + c->rack_hosts - 1) / c->rack_hosts;
	s->racks = calloc(s->nracks, sizeof(*s->racks));
	if (!s->racks)
		return -ENOMEM;
	up = (uint64_t)c->rack_hosts * c->link_mbps / c->oversub;
	s->uplink_mbps = up > UINT32_MAX ? UINT32_MAX : up ? (uint32_t)up : 1;
	return 0;
}

/* Load one server's data plane with the run's policy. */
static int setup_server(struct sim *s, struct simsw *sw)
{
	int err = simsw_open(sw, s->cfg->slots);

	if (err) {
		const struct esa_switch_opts o = { .agg_capacity = s->cfg->slots };
		char msg[160];

		fprintf(stderr, "esa-sim: cannot load the data plane: %s\n",
			esa_switch_load_strerror(err, &o, msg, sizeof(msg)));
		return err;
	}
	return simsw_config(sw, s->o->policy, s->cfg->slots,
			    s->cfg->timeout_us);
}

static void setup_job_info(struct sim *s, struct job *j)
{
	struct esa_job_info *in = &j->info;

	in->job_id = j->sj->id;
	in->fan_in = (uint8_t)j->sj->workers;
	in->priority = j->prio;
	/*
	 * An auto job's priority is the LAS tick's, which the simulated
	 * control plane hands its workers to stamp (job_set_priority()): the
	 * module-less switch takes a dynamic job's from its packets, a fixed
	 * one's from this record.
	 */
	in->prio_mode = j->sj->priority >= 0 ? ESA_PRIO_FIXED :
		       ESA_PRIO_DYNAMIC;
	in->ps_addr = htonl(s->hosts[j->ps_host].ip);
	in->ps_port = htons(ESA_UDP_PORT);
	for (uint32_t w = 0; w < j->sj->workers; w++) {
		const struct host *h = &s->hosts[s->workers[j->w0 + w].host];

		in->worker_addr[w] = htonl(h->ip);
		in->worker_port[w] = htons(h->port);
	}
}

static int setup(struct sim *s)
{
	const struct scenario *sc = s->sc;
	int err;

	s->njobs = sc->njobs;
	s->jobs = calloc(s->njobs, sizeof(*s->jobs));
	s->job_of_id = calloc(ESA_MAX_JOB_ID + 1, sizeof(*s->job_of_id));
	s->occupancy = calloc(ESA_MAX_JOB_ID + 1, sizeof(*s->occupancy));
	if (!s->jobs || !s->job_of_id || !s->occupancy)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->njobs; i++) {
		struct job *j = &s->jobs[i];

		j->sj = &sc->jobs[i];
		j->index = i;
		j->prio = j->sj->priority >= 0 ? (uint8_t)j->sj->priority :
			  prio_initial(sc, i, s->o->prio);
		s->job_of_id[j->sj->id] = i + 1;
	}
	err = setup_hosts(s);
	if (err)
		return err;
	if (setup_network(s) || setup_slots(s) || setup_shards(s))
		return -EINVAL;
	for (uint32_t i = 0; i < s->njobs; i++)
		setup_job_info(s, &s->jobs[i]);
	for (uint32_t k = 0; k < s->nservers; k++) {
		err = setup_server(s, &s->servers[k].sw);
		if (err)
			return err;
	}
	for (uint32_t i = 0; i < s->njobs; i++)
		push(s, s->jobs[i].sj->arrival_us * PS_PER_US, EV_ARRIVE, i,
		     NULL);
	push(s, 0, EV_SAMPLE, 0, NULL);
	/*
	 * The module ranks on each job's current service at every
	 * arbitration; the simulated control plane re-stamps priorities
	 * every PRIO_TICK_US of a full-size run, scaled with the jobs' lengths
	 * so that a smaller copy of the workload is ranked as often per job.
	 */
	s->prio_tick_ps = (uint64_t)llround(PRIO_TICK_US * PS_PER_US *
					    s->cfg->scale);
	if (!s->prio_tick_ps)
		s->prio_tick_ps = 1;
	if (s->o->policy == ESA_POLICY_ESA && s->o->prio == SCN_PRIO_LAS)
		push(s, s->prio_tick_ps, EV_PRIO, 1, NULL);
	return 0;
}

static void teardown(struct sim *s)
{
	for (uint32_t i = 0; i < s->nworkers; i++)
		esa_endpoint_close(s->workers[i].ep);
	for (uint32_t i = 0; i < s->njobs; i++)
		esa_ps_close(s->jobs[i].ps);
	for (uint32_t k = 0; s->servers && k < s->nservers; k++)
		simsw_close(&s->servers[k].sw);
	free(s->servers);
	free(s->racks);
	for (size_t i = 0; i < s->nchunks; i++)
		free(s->chunks[i]);
	free(s->chunks);
	free(s->heap.v);
	free(s->hosts);
	free(s->workers);
	free(s->jobs);
	free(s->job_of_id);
	free(s->occupancy);
}

/* --------------------------------------------------------------- the run */

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void progress(struct sim *s, bool last)
{
	uint64_t w = wall_ns();
	double secs = (double)(w - s->wall0) / 1e9;

	if (!s->o->progress || (!last && w - s->wall_last < 1000000000ull))
		return;
	s->wall_last = w;
	s->progress_shown = true;
	fprintf(stderr,
		"\resa-sim: %s: virtual %.4f s, %.2f M events, %.2f M events/s, %u/%u jobs done   %s",
		scn_policy_name(s->o->policy), (double)s->now / 1e12,
		(double)s->res->events / 1e6,
		secs > 0 ? (double)s->res->events / secs / 1e6 : 0.0,
		s->jobs_done, s->njobs, last ? "\n" : "");
}

static void dispatch(struct sim *s, const struct ev *e)
{
	switch (e->kind) {
	case EV_ARRIVE:
		if (job_arrive(s, &s->jobs[e->arg]))
			s->error = -EINVAL;
		break;
	case EV_COMPUTED:
		worker_call(s, e->p);
		break;
	case EV_TIMER:
		worker_timer(s, e->p, e->t);
		break;
	case EV_AT_SWITCH:
		at_switch(s, e->p);
		break;
	case EV_AT_HOST:
		at_host(s, e->p);
		break;
	case EV_INPUT:
		host_input(s, e->p);
		break;
	case EV_SAMPLE:
		sample(s);
		if (s->jobs_done < s->njobs)
			push(s, s->now + s->cfg->interval_us * PS_PER_US,
			     EV_SAMPLE, 0, NULL);
		break;
	case EV_HOP:
		net_hop(s, e->p);
		break;
	case EV_PRIO:
		prio_tick(s, e->arg);
		if (s->jobs_done < s->njobs)
			push(s, s->now + s->prio_tick_ps, EV_PRIO,
			     e->arg + 1, NULL);
		break;
	}
}

int sim_run(const struct scenario *sc, const struct sim_opts *o,
	    struct sim_result *res)
{
	struct sim s = { .sc = sc, .cfg = &sc->sw, .o = o, .res = res };
	struct ev e;
	int err;

	memset(res, 0, sizeof(*res));
	rng_seed(&s.rng, o->seed ^ 0x5eedull);
	s.mbps = sc->sw.link_mbps;
	s.delay_ps = (uint64_t)sc->sw.delay_ns * PS_PER_NS;
	s.switch_ps = (uint64_t)sc->sw.switch_ns * PS_PER_NS;
	s.buffer_bytes = (uint64_t)sc->sw.buffer_kb * 1024;
	s.cpu_ps = (uint64_t)sc->sw.cpu_ns * PS_PER_NS;
	s.wall0 = s.wall_last = wall_ns();
	err = setup(&s);
	while (!err && !s.error && s.jobs_done < s.njobs && pop(&s, &e)) {
		s.now = e.t;
		res->events++;
		dispatch(&s, &e);
		if (!(res->events & 0x3fff))
			progress(&s, false);
	}
	if (!err && !s.error) {
		sample(&s);
		if (s.jobs_done < s.njobs) {
			fprintf(stderr, "esa-sim: %s: nothing left to do with %u of %u jobs unfinished\n",
				scn_policy_name(o->policy),
				s.njobs - s.jobs_done, s.njobs);
			err = -EDEADLK;
		}
	}
	res->end_ps = s.now;
	res->jobs = s.njobs;
	res->servers = s.nservers;
	for (uint32_t k = 0; s.servers && k < s.nservers; k++)
		res->unexpected += s.servers[k].sw.unexpected;
	if (s.njobs)
		res->avg_jct_s /= s.njobs;
	res->wall_ns = wall_ns() - s.wall0;
	progress(&s, true);
	teardown(&s);
	if (err || s.error)
		return -1;
	return res->jobs_ok == res->jobs ? 0 : 1;
}
