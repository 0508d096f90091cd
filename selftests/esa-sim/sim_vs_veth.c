// SPDX-License-Identifier: GPL-2.0
/*
 * The simulator's switch against the live switch, frame by frame
 * (Documentation/esa-sim.rst, "The switch").
 *
 * Two copies of the data plane: the live one attached natively to veth
 * ports P0..Pn (run in a namespace by sim_vs_veth.sh), whose hosts are the
 * peers H0..Hn driven with packet sockets, and the simulator's
 * (tools/esa-sim/simswitch.c: BPF_PROG_TEST_RUN with the virtual clock,
 * the multicast split by the egress step, bpf/esa_egress_port.bpf.c). One random trace of aggregation frames
 * (data, resends, PS results, pulls, malformed frames; three jobs sharing
 * eight aggregators with different value counts and priorities) goes
 * through both under each policy, and every step must give the same
 * frames at the same hosts, byte for byte, and the same counters at the
 * end. A reclaim phase waits out the reclaim timeout, the simulator's
 * clock set to the live clock, and reclaims.
 *
 * usage: sim_vs_veth SEED STEPS P0:H0 P1:H1 ... (9 pairs)
 * Prints TAP.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

#include "simswitch.h"
#include "esa_endpoint.h"
#include "kselftest.h"

#define NHOSTS		9
#define SLOTS		8
#define MAX_OUT		64
#define WAIT_MS		500	/* an expected frame later than this: lost */
#define GRACE_MS	3	/* quiet time that says nothing more comes */
#define RANDOM_TIMEOUT_US 30000000	/* longer than any random phase */
/*
 * Per stranded claim, what two clock reads of one step may differ by
 * beyond the skew measured around the send (step_both()): the live
 * switch's read in a softirq that ran after the send returned.
 */
#define AMOUNT_SLACK_US	500

struct tjob {
	uint32_t	id;
	uint8_t		fan_in;
	uint8_t		prio;
	uint16_t	count;		/* values per packet */
	int		ps;		/* host index */
	int		worker[3];	/* host indices */
	uint32_t	base, slice;	/* static slice */
};

static const struct tjob tjobs[] = {
	{ .id = 11, .fan_in = 3, .prio = 10, .count = 4, .ps = 0,
	  .worker = { 1, 2, 3 }, .base = 0, .slice = 4 },
	{ .id = 12, .fan_in = 2, .prio = 200, .count = 7, .ps = 4,
	  .worker = { 5, 6 }, .base = 4, .slice = 3 },
	{ .id = 13, .fan_in = 1, .prio = 50, .count = 3, .ps = 7,
	  .worker = { 8 }, .base = 7, .slice = 1 },
};
#define NJOBS (sizeof(tjobs) / sizeof(tjobs[0]))

struct frame {
	int		host;
	uint32_t	len;
	uint8_t		b[SIMSW_FRAME_MAX + 64];
};

struct out {
	unsigned	n;
	struct frame	f[MAX_OUT];
};

struct ctx {
	struct esa_switch *live;
	struct simsw	sim;
	int		ifindex[NHOSTS];	/* switch ports */
	int		fd[NHOSTS];		/* packet sockets on the hosts */
	uint64_t	rng;
	unsigned	frames;
	/*
	 * The longest a step's live send returned after the clock read the
	 * simulator was given (ns), since configure(): the live switch
	 * stamps the frame that much later at most, when the process was
	 * descheduled in between on a busy host.
	 */
	uint64_t	max_skew_ns;
};

static uint32_t host_ip(int h)
{
	return 0x0a630000u | (uint32_t)(h + 1);
}

static int host_of_ip(uint32_t ip)
{
	int h = (int)(ip - host_ip(0));

	return h >= 0 && h < NHOSTS ? h : -1;
}

static uint16_t host_port(int h)
{
	return (uint16_t)(41000 + h);
}

static uint64_t rnd(struct ctx *c)
{
	uint64_t z = (c->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned pick(struct ctx *c, unsigned n)
{
	return (unsigned)(rnd(c) % n);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- trace */

struct step {
	char		desc[96];
	int		from;		/* host */
	uint32_t	len;
	uint8_t		b[SIMSW_FRAME_MAX];
};

/*
 * A frame from host @from (a worker's port, or a PS's ESA_UDP_PORT) to
 * host @to's ESA_UDP_PORT carrying header @m and @vals.
 */
static void build(struct step *st, int from, bool from_ps, int to,
		  const struct esa_meta *m, const int32_t *vals)
{
	uint8_t payload[ESA_HDR_LEN + 4 * ESA_MAX_VALUES];
	struct simsw_addr src = { .ip = host_ip(from),
				  .port = from_ps ? ESA_UDP_PORT :
						    host_port(from) };
	struct simsw_addr dst = { .ip = host_ip(to), .port = ESA_UDP_PORT };

	simsw_mac_of_ip(src.ip, src.mac);
	simsw_mac_of_ip(dst.ip, dst.mac);
	esa_wire_put(payload, m);
	esa_values_to_be(payload + ESA_HDR_LEN, vals, m->value_count);
	st->from = from;
	st->len = simsw_frame_build(st->b, &src, &dst, payload,
				    ESA_HDR_LEN + 4u * m->value_count);
}

static int32_t rand_value(struct ctx *c)
{
	/* now and then near the edge, so sums saturate (OVERFLOW) */
	if (!pick(c, 16))
		return pick(c, 2) ? INT32_MAX - (int32_t)pick(c, 100) :
				    INT32_MIN + (int32_t)pick(c, 100);
	return (int32_t)pick(c, 2001) - 1000;
}

static uint32_t agg_index(const struct tjob *j, uint32_t policy,
			  uint32_t seq)
{
	return policy == ESA_POLICY_STATIC ? seq % j->slice : seq % SLOTS;
}

/* One random step of the trace. */
static void gen_step(struct ctx *c, uint32_t policy, struct step *st)
{
	const struct tjob *j = &tjobs[pick(c, NJOBS)];
	int32_t vals[ESA_MAX_VALUES];
	struct esa_meta m = {
		.fan_in = j->fan_in, .priority = j->prio, .job_id = j->id,
		.value_count = j->count, .seq = pick(c, 6),
	};
	unsigned kind = pick(c, 100), w = pick(c, j->fan_in);
	uint32_t full = (1u << j->fan_in) - 1;

	m.agg_index = agg_index(j, policy, m.seq);
	for (unsigned i = 0; i < ESA_MAX_VALUES; i++)
		vals[i] = rand_value(c);
	if (kind < 70) {		/* data or resend from worker w */
		m.bitmap = 1u << w;
		m.flags = pick(c, 7) ? 0 : ESA_F_RESEND;
		build(st, j->worker[w], false, j->ps, &m, vals);
		snprintf(st->desc, sizeof(st->desc), "job %u w%u seq %u%s",
			 j->id, w, m.seq, m.flags ? " RESEND" : "");
	} else if (kind < 85) {		/* the PS's RESULT */
		m.flags = ESA_F_RESULT | (pick(c, 8) ? 0 : ESA_F_OVERFLOW);
		m.bitmap = full;
		build(st, j->ps, true, j->worker[0], &m, vals);
		snprintf(st->desc, sizeof(st->desc), "job %u PS RESULT seq %u",
			 j->id, m.seq);
	} else if (kind < 92) {		/* a pull */
		m.flags = ESA_F_RESULT | ESA_F_RESEND;
		m.bitmap = 1 + pick(c, full);
		m.value_count = 1;
		build(st, j->ps, true, j->worker[0], &m, vals);
		snprintf(st->desc, sizeof(st->desc), "job %u pull seq %u bitmap 0x%x",
			 j->id, m.seq, m.bitmap);
	} else {			/* malformed: dropped and counted */
		m.bitmap = 1u << w;
		switch (pick(c, 4)) {
		case 0: m.fan_in = j->fan_in + 1; break;
		case 1: m.flags = ESA_F_COMPLETE; break;
		case 2: m.bitmap = full == 1 ? 2 : full; break;
		default: m.agg_index = 1000; break;
		}
		build(st, j->worker[w], false, j->ps, &m, vals);
		snprintf(st->desc, sizeof(st->desc), "job %u malformed", j->id);
	}
}

/* ------------------------------------------------------- the two sides */

static void sim_emit(void *p, uint32_t ip, const uint8_t *f, uint32_t len)
{
	struct out *o = p;
	struct frame *fr;

	if (o->n == MAX_OUT)
		return;
	fr = &o->f[o->n++];
	fr->host = host_of_ip(ip);
	fr->len = len;
	memcpy(fr->b, f, len);
}

static int live_send(struct ctx *c, int host, const uint8_t *b, uint32_t len)
{
	return send(c->fd[host], b, len, 0) == (ssize_t)len ? 0 : -errno;
}

/* Frames arriving at the hosts: at least @want, then a quiet GRACE_MS. */
static void live_collect(struct ctx *c, struct out *o, unsigned want)
{
	struct pollfd p[NHOSTS];
	uint64_t t0 = mono_ns();

	o->n = 0;
	for (int h = 0; h < NHOSTS; h++)
		p[h] = (struct pollfd){ .fd = c->fd[h], .events = POLLIN };
	for (;;) {
		int ms = o->n < want ?
			 WAIT_MS - (int)((mono_ns() - t0) / 1000000) : GRACE_MS;

		if (ms <= 0 || poll(p, NHOSTS, ms) <= 0)
			return;
		for (int h = 0; h < NHOSTS; h++) {
			struct frame *fr = &o->f[o->n < MAX_OUT ? o->n : 0];
			ssize_t r;

			if (!(p[h].revents & POLLIN))
				continue;
			r = recv(c->fd[h], fr->b, sizeof(fr->b), MSG_DONTWAIT);
			if (r <= 0 || o->n == MAX_OUT)
				continue;
			fr->host = h;
			fr->len = (uint32_t)r;
			o->n++;
		}
	}
}

static int cmp_frame(const void *a, const void *b)
{
	const struct frame *x = a, *y = b;

	if (x->host != y->host)
		return x->host - y->host;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->b, y->b, x->len);
}

static void show(const char *side, const struct out *o)
{
	for (unsigned i = 0; i < o->n; i++) {
		const uint8_t *h = o->f[i].b + SIMSW_HDRS;

		printf("#   %s: host %d len %u flags 0x%02x job %u seq %u bitmap 0x%x\n",
		       side, o->f[i].host, o->f[i].len, h[1], h[4] << 8 | h[5],
		       h[11], h[19]);
	}
}

/* One step through both; true if they sent the same frames. */
static bool step_both(struct ctx *c, const struct step *st, uint64_t now)
{
	static struct out s, l;
	uint64_t skew_ns;
	int err;

	s.n = 0;
	if (simsw_packet(&c->sim, now, st->b, st->len, sim_emit, &s) < 0)
		return false;
	err = live_send(c, st->from, st->b, st->len);
	if (err) {
		printf("# send: %s\n", strerror(-err));
		return false;
	}
	skew_ns = mono_ns() - now;
	if (skew_ns > c->max_skew_ns)
		c->max_skew_ns = skew_ns;
	live_collect(c, &l, s.n);
	qsort(s.f, s.n, sizeof(s.f[0]), cmp_frame);
	qsort(l.f, l.n, sizeof(l.f[0]), cmp_frame);
	c->frames += s.n;
	if (s.n == l.n) {
		unsigned i;

		for (i = 0; i < s.n && !cmp_frame(&s.f[i], &l.f[i]); i++)
			;
		if (i == s.n)
			return true;
	}
	printf("# step %s: the simulator and the live switch differ\n",
	       st->desc);
	show("sim ", &s);
	show("live", &l);
	return false;
}

/* ---------------------------------------------------------------- setup */

static void job_info(const struct tjob *j, uint32_t policy,
		     struct esa_job_info *in)
{
	memset(in, 0, sizeof(*in));
	in->job_id = j->id;
	in->fan_in = j->fan_in;
	in->priority = j->prio;
	in->ps_addr = htonl(host_ip(j->ps));
	in->ps_port = htons(ESA_UDP_PORT);
	if (policy == ESA_POLICY_STATIC) {
		in->agg_base = j->base;
		in->agg_slice = j->slice;
	}
	for (unsigned w = 0; w < j->fan_in; w++) {
		in->worker_addr[w] = htonl(host_ip(j->worker[w]));
		in->worker_port[w] = htons(host_port(j->worker[w]));
	}
}

/* Both switches' settings; their aggregators stay as they are. */
static int set_config(struct ctx *c, uint32_t policy, uint32_t timeout_us)
{
	struct esa_switch_config cfg = { .policy = policy, .agg_slots = SLOTS,
					 .agg_timeout_us = timeout_us };
	int err = esa_switch_set_config(c->live, &cfg);

	return err ? err : simsw_config(&c->sim, policy, SLOTS, timeout_us);
}

static int configure(struct ctx *c, uint32_t policy, uint32_t timeout_us)
{
	struct esa_job_info in;
	int err;

	err = set_config(c, policy, timeout_us);
	if (!err)
		err = esa_switch_agg_clear(c->live, SLOTS);
	if (!err)
		err = esa_switch_agg_clear(c->sim.sw, SLOTS);
	if (!err)
		err = esa_switch_counters_reset(c->live);
	if (!err)
		err = esa_switch_counters_reset(c->sim.sw);
	c->max_skew_ns = 0;
	for (unsigned i = 0; !err && i < NJOBS; i++) {
		job_info(&tjobs[i], policy, &in);
		err = esa_switch_job_put(c->live, &in);
		if (!err)
			err = simsw_job_put(&c->sim, &in);
	}
	return err;
}

/* Every host announces itself (gratuitous ARP) to both switches. */
static int announce(struct ctx *c)
{
	static struct out drain;
	uint8_t f[60] = { 0 }, mac[6];

	for (int h = 0; h < NHOSTS; h++) {
		uint32_t ip = host_ip(h);

		simsw_mac_of_ip(ip, mac);
		memset(f, 0xff, 6);
		memcpy(f + 6, mac, 6);
		f[12] = 0x08; f[13] = 0x06;
		f[15] = 1; f[16] = 0x08; f[18] = 6; f[19] = 4; f[21] = 1;
		memcpy(f + 22, mac, 6);
		f[28] = ip >> 24; f[29] = ip >> 16; f[30] = ip >> 8; f[31] = ip;
		memcpy(f + 38, f + 28, 4);
		if (simsw_announce(&c->sim, ip, mac) || live_send(c, h, f, 60))
			return -1;
	}
	live_collect(c, &drain, NHOSTS * (NHOSTS - 1));	/* the floods */
	return 0;
}

static int open_hosts(struct ctx *c, char **pairs)
{
	for (int h = 0; h < NHOSTS; h++) {
		char *colon = strchr(pairs[h], ':');
		struct sockaddr_ll sll = { .sll_family = AF_PACKET,
					   .sll_protocol = htons(ETH_P_ALL) };
		int one = 1;

		if (!colon)
			return -1;
		*colon = 0;
		c->ifindex[h] = if_nametoindex(pairs[h]);
		sll.sll_ifindex = if_nametoindex(colon + 1);
		c->fd[h] = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
		if (!c->ifindex[h] || !sll.sll_ifindex || c->fd[h] < 0 ||
		    setsockopt(c->fd[h], SOL_PACKET, PACKET_IGNORE_OUTGOING,
			       &one, sizeof(one)) ||
		    bind(c->fd[h], (struct sockaddr *)&sll, sizeof(sll)))
			return -1;
	}
	return 0;
}

static bool counters_equal(struct ctx *c, const char *phase)
{
	__u64 a[__ESA_CNT_MAX], b[__ESA_CNT_MAX], slack_us;
	bool same = true;

	for (unsigned j = 0; j <= NJOBS; j++) {
		uint32_t id = j ? tjobs[j - 1].id : 0;

		if (esa_switch_counters(c->live, id, a) ||
		    esa_switch_counters(c->sim.sw, id, b))
			return false;
		for (unsigned k = 0; k < __ESA_CNT_MAX; k++) {
			if (a[k] == b[k] || k == ESA_CNT_FORWARDED)
				continue;
			/*
			 * A time amount: the simulator's clock was read just
			 * before the send, the live one when the frame was
			 * processed, some microseconds apart each time, or
			 * milliseconds when the sender lost its CPU between.
			 */
			slack_us = (AMOUNT_SLACK_US + c->max_skew_ns / 1000) *
				   (a[ESA_CNT_STRANDED] + 1);
			if (ESA_CNT_IS_AMOUNT(k) &&
			    (a[k] > b[k] ? a[k] - b[k] : b[k] - a[k]) <= slack_us)
				continue;
			printf("# %s: job %u counter %s: live %llu sim %llu (time amounts may differ by %llu)\n",
			       phase, id, esa_counter_name(k),
			       (unsigned long long)a[k],
			       (unsigned long long)b[k],
			       (unsigned long long)slack_us);
			same = false;
		}
	}
	return same;
}

/* @steps random steps under @policy; both switches from a clean state. */
static void phase(struct ctx *c, uint32_t policy, unsigned steps)
{
	const char *name = policy == ESA_POLICY_ESA ? "esa" :
			   policy == ESA_POLICY_ATP ? "atp" : "static";
	unsigned frames0 = c->frames, i;
	struct step st;

	/* no reclaim here: a claim's age must not sit near the timeout */
	if (configure(c, policy, RANDOM_TIMEOUT_US) || announce(c)) {
		ksft_test_result_fail("%s: configure both switches\n", name);
		return;
	}
	for (i = 0; i < steps; i++) {
		gen_step(c, policy, &st);
		if (!step_both(c, &st, mono_ns()))
			break;
	}
	ksft_test_result(i == steps, "%s: %u random steps, %u frames out, the same at every host\n",
	    name, steps, c->frames - frames0);
	printf("# %s: a live send returned at most %llu us after the simulator's clock read\n",
	       name, (unsigned long long)(c->max_skew_ns / 1000));
	ksft_test_result(counters_equal(c, name), "%s: the same counters\n", name);
}

/* A data packet of worker @w of job @j with sequence @seq at slot seq % SLOTS. */
static void data_step(struct step *st, const struct tjob *j, unsigned w,
		      uint32_t seq)
{
	int32_t vals[ESA_MAX_VALUES];
	struct esa_meta m = {
		.fan_in = j->fan_in, .priority = j->prio, .job_id = j->id,
		.value_count = j->count, .seq = seq, .agg_index = seq % SLOTS,
		.bitmap = 1u << w,
	};

	for (unsigned i = 0; i < j->count; i++)
		vals[i] = (int32_t)(seq * 7 + i);
	build(st, j->worker[w], false, j->ps, &m, vals);
	snprintf(st->desc, sizeof(st->desc), "job %u w%u seq %u", j->id, w, seq);
}

/*
 * Reclaim, under atp so that every eviction counted is one: from clean
 * switches, job 11's worker 0 leaves a partial in slots 0..3; after 1.2 s
 * of quiet against a 1 s timeout (on both clocks), job 12's packets for
 * those slots reclaim them, each partial going to job 11's PS flagged
 * PARTIAL; then random steps, whose claims are all younger than 1 s.
 */
static void reclaim_phase(struct ctx *c, unsigned steps)
{
	unsigned frames0 = c->frames, i, k;
	__u64 before[__ESA_CNT_MAX], after[__ESA_CNT_MAX];
	bool same = true;
	struct step st;

	if (configure(c, ESA_POLICY_ATP, 1000000)) {
		ksft_test_result_fail("reclaim: configure both switches (timeout 1 s)\n");
		return;
	}
	for (k = 0; k < 4 && same; k++) {
		data_step(&st, &tjobs[0], 0, 1000 * SLOTS + k);
		same = step_both(c, &st, mono_ns());
	}
	usleep(1200000);
	esa_switch_counters(c->sim.sw, 0, before);
	for (k = 0; k < 4 && same; k++) {
		data_step(&st, &tjobs[1], 0, 2000 * SLOTS + k);
		same = step_both(c, &st, mono_ns());
	}
	esa_switch_counters(c->sim.sw, 0, after);
	ksft_test_result(same && after[ESA_CNT_EVICTIONS] - before[ESA_CNT_EVICTIONS] == 4,
	       "reclaim after the timeout: 4 partials reclaimed (%llu), the same frames\n",
	       (unsigned long long)(after[ESA_CNT_EVICTIONS] -
				    before[ESA_CNT_EVICTIONS]));
	for (i = 0; same && i < steps; i++) {
		gen_step(c, ESA_POLICY_ATP, &st);
		same = step_both(c, &st, mono_ns());
	}
	ksft_test_result(same, "then %u random steps, %u frames in all, the same\n", steps,
	       c->frames - frames0);
	ksft_test_result(counters_equal(c, "reclaim"), "the same counters after reclaims\n");
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .agg_capacity = SLOTS };
	static struct ctx c;
	unsigned steps;
	int h;

	ksft_print_header();
	if (argc != 3 + NHOSTS) {
		fprintf(stderr, "usage: sim_vs_veth SEED STEPS P0:H0 ... P%d:H%d\n",
			NHOSTS - 1, NHOSTS - 1);
		return 2;
	}
	c.rng = strtoull(argv[1], NULL, 10);
	steps = (unsigned)strtoul(argv[2], NULL, 10);
	if (open_hosts(&c, argv + 3)) {
		ksft_test_result_fail("host sockets: %s\n", strerror(errno));
		return ksft_exit_fail();
	}
	if (esa_switch_load(&c.live, &o) ||
	    simsw_open(&c.sim, SLOTS)) {
		ksft_test_result_fail("load both data planes\n");
		return ksft_exit_fail();
	}
	for (h = 0; h < NHOSTS; h++)
		if (esa_switch_attach_port(c.live, c.ifindex[h], 0))
			break;
	ksft_test_result(h == NHOSTS, "live switch attached natively to %d veth ports\n", h);
	if (h == NHOSTS) {
		phase(&c, ESA_POLICY_ESA, steps);
		reclaim_phase(&c, steps / 4);
		phase(&c, ESA_POLICY_ATP, steps);
		phase(&c, ESA_POLICY_STATIC, steps);
	}
	while (h-- > 0)
		esa_switch_detach_port(c.live, c.ifindex[h]);
	printf("1..%u\n", ksft_test_num());
	simsw_close(&c.sim);
	esa_switch_close(c.live);
	return ksft_get_fail_cnt() ? 1 : 0;
}
