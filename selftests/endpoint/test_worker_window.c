// SPDX-License-Identifier: GPL-2.0
/*
 * The worker's send window (Documentation/endpoints.rst): at no time more
 * than `window` packets without a result, whatever order the results come
 * back in, and a resend never counts as a new packet. A fake PS over
 * loopback UDP sees every packet the worker sends and keeps the set of
 * sequences in flight; every packet is checked against the bound. Each
 * window must also be filled at least once, so the check cannot pass
 * because the worker was slow. Between rounds the fake PS waits until the
 * worker is quiet (it has sent all its window allows), then answers:
 * the lowest packet, the highest only (the window must not slide), all
 * of them, or a pull of the lowest (which must come back as a resend).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "esa.h"
#include "esa_endpoint.h"
#include "loopback.h"

#define JOB	5
#define FAN	2
#define ME	0
#define VPP	2		/* values per packet */
#define MAXPKT	64
#define QUIET_MS 60		/* no packet for this long: the worker waits */

struct call {
	struct esa_endpoint *ep;
	int32_t buf[VPP * MAXPKT];
	size_t count;
	int err;
};

static void *run_allreduce(void *arg)
{
	struct call *c = arg;

	c->err = esa_allreduce_i32(c->ep, c->buf, c->count);
	return NULL;
}

/* What the fake PS knows about the worker's packets. */
struct flight {
	int fd;
	unsigned npkt, window;
	bool have_base;
	uint32_t base;		/* sequence of packet 0 */
	bool sent[MAXPKT], answered[MAXPKT];
	unsigned in_flight, max_in_flight, resends;
	unsigned violations;	/* packets beyond the window, or out of place */
};

/* One packet from the worker: account for it and check the bound. */
static void note_packet(struct __test_metadata *_metadata, struct flight *f,
			const struct esa_meta *m)
{
	uint32_t i;

	if (!f->have_base) {
		f->base = m->seq;
		f->have_base = true;
	}
	i = m->seq - f->base;
	if (i >= f->npkt || f->answered[i]) {
		f->violations++;
		TH_LOG("packet %u: not one the worker waits for", i);
		return;
	}
	if (m->flags & ESA_F_RESEND) {
		if (!f->sent[i]) {
			f->violations++;
			TH_LOG("packet %u: resent before it was sent", i);
		}
		f->resends++;
		return;
	}
	if (f->sent[i]) {
		f->violations++;
		TH_LOG("packet %u: sent twice without the RESEND flag", i);
		return;
	}
	f->sent[i] = true;
	f->in_flight++;
	if (f->in_flight > f->max_in_flight)
		f->max_in_flight = f->in_flight;
	if (f->in_flight > f->window) {
		f->violations++;
		TH_LOG("packet %u: %u packets in flight, window %u", i,
		       f->in_flight, f->window);
	}
}

/* Take every packet until the worker is quiet; the number taken. */
static int collect(struct __test_metadata *_metadata, struct flight *f)
{
	struct pollfd p = { .fd = f->fd, .events = POLLIN };
	uint8_t buf[ESA_RX_BUFSZ];
	struct esa_meta m;
	ssize_t len;
	int n = 0;

	while (poll(&p, 1, QUIET_MS) == 1) {
		len = recv(f->fd, buf, sizeof(buf), 0);
		if (len < 0 || esa_wire_parse(buf, len, &m)) {
			f->violations++;
			TH_LOG("an unparsable datagram from the worker");
			continue;
		}
		note_packet(_metadata, f, &m);
		n++;
	}
	return n;
}

/*
 * Take packets until the worker has resent for all @pulls pulls, 10 s at
 * most: how soon it gets to run is the scheduler's, not the worker's, so
 * the next round must not start (and answer the pulled packet) before.
 */
static void wait_resends(struct __test_metadata *_metadata, struct flight *f,
			 unsigned pulls)
{
	for (unsigned t = 0; f->resends < pulls && t < 10000 / QUIET_MS; t++)
		collect(_metadata, f);
}

/* PS -> worker: the RESULT of packet @i (values 1000 * i + k), or a pull. */
static void answer(struct flight *f, unsigned i, bool pull)
{
	struct sockaddr_in w = loopback_addr(2, 10 + ME);
	uint8_t buf[ESA_MTU];
	int32_t v[VPP];
	struct esa_meta m = {
		.flags = ESA_F_RESULT | (pull ? ESA_F_RESEND : 0),
		.fan_in = FAN, .job_id = JOB, .value_count = pull ? 1 : VPP,
		.seq = f->base + i, .bitmap = pull ? 1u << ME : (1u << FAN) - 1,
	};

	esa_wire_put(buf, &m);
	for (unsigned k = 0; k < VPP; k++)
		v[k] = pull ? 0 : (int32_t)(1000 * i + k);
	esa_values_to_be(buf + ESA_HDR_LEN, v, m.value_count);
	sendto(f->fd, buf, ESA_HDR_LEN + 4 * m.value_count, 0,
	       (struct sockaddr *)&w, sizeof(w));
	if (pull)
		return;
	f->answered[i] = true;
	f->in_flight--;
}

/* Packets sent and without an answer, lowest and highest; false if none. */
static bool flying(const struct flight *f, unsigned *lo, unsigned *hi)
{
	bool any = false;

	for (unsigned i = 0; i < f->npkt; i++) {
		if (!f->sent[i] || f->answered[i])
			continue;
		if (!any)
			*lo = i;
		*hi = i;
		any = true;
	}
	return any;
}

static bool all_answered(const struct flight *f)
{
	for (unsigned i = 0; i < f->npkt; i++)
		if (!f->answered[i])
			return false;
	return f->npkt > 0;
}

/* One allreduce of @npkt packets with @window; the fake PS's rounds. */
static void run_window(struct __test_metadata *_metadata, unsigned window,
		       unsigned npkt)
{
	struct sockaddr_in ps_addr = loopback_addr(2, 1);
	struct esa_endpoint_config cfg = {
		.job_id = JOB, .worker_id = ME, .fan_in = FAN,
		.ps = loopback_addr(2, 1), .self = loopback_addr(2, 10 + ME),
		.agg_slots = 64, .window = window, .values_per_packet = VPP,
		.timeout_us = 60 * 1000 * 1000,	/* resends only when pulled */
		.max_resends = 5,
	};
	static struct flight f;
	static struct call c;
	unsigned round, idle, lo = 0, hi = 0, i, pulls = 0;
	pthread_t t;

	memset(&f, 0, sizeof(f));
	memset(&c, 0, sizeof(c));
	f.npkt = npkt;
	f.window = window;
	f.fd = esa_udp_open(&ps_addr, false, NULL);
	ASSERT_GE(f.fd, 0) TH_LOG("%s", esa_last_error());
	ASSERT_EQ(0, esa_endpoint_open(&cfg, &c.ep)) TH_LOG("%s", esa_last_error());
	c.count = (size_t)VPP * npkt;
	ASSERT_EQ(0, pthread_create(&t, NULL, run_allreduce, &c));

	/* until every packet has its result, or 20 s without progress */
	for (round = 0, idle = 0; !all_answered(&f) && idle < 20000 / QUIET_MS; ) {
		if (!collect(_metadata, &f) && !flying(&f, &lo, &hi)) {
			idle++;	/* a slow worker: nothing sent yet */
			continue;
		}
		idle = 0;
		if (!flying(&f, &lo, &hi))
			continue;
		switch (round++ % 4) {
		case 0:
			answer(&f, lo, false);
			break;
		case 1:		/* the window must not slide past lo */
			if (hi != lo)
				answer(&f, hi, false);
			break;
		case 2:
			answer(&f, lo, true);
			pulls++;
			wait_resends(_metadata, &f, pulls);
			break;
		default:
			for (i = lo; i <= hi; i++)
				if (f.sent[i] && !f.answered[i])
					answer(&f, i, false);
		}
	}
	ASSERT_TRUE(all_answered(&f)) TH_LOG("the worker stopped sending");
	ASSERT_EQ(0, pthread_join(t, NULL));
	close(f.fd);
	EXPECT_EQ(0, c.err) TH_LOG("%s", esa_last_error());
	esa_endpoint_close(c.ep);
	EXPECT_EQ(0, f.violations);
	for (i = 0; i < npkt; i++) {
		ASSERT_TRUE(f.answered[i]) TH_LOG("packet %u never answered", i);
		EXPECT_EQ((int32_t)(1000 * i), c.buf[VPP * i]);
	}
	EXPECT_EQ(0, f.in_flight);
	/* the bound was reached, so the check above can fail */
	EXPECT_EQ(window < npkt ? window : npkt, f.max_in_flight);
	EXPECT_EQ(pulls, f.resends);
}

TEST(window_1)
{
	run_window(_metadata, 1, 6);
}

TEST(window_4)
{
	run_window(_metadata, 4, 19);
}

TEST(window_16)
{
	run_window(_metadata, 16, 50);
}

TEST_HARNESS_MAIN
