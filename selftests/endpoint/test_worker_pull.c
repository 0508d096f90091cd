// SPDX-License-Identifier: GPL-2.0
/*
 * The worker against a fake PS over loopback UDP: a pull (RESULT | RESEND,
 * Documentation/wire-protocol.rst) that names this worker makes it resend
 * at once, long before its own timeout; a pull for other workers or for a
 * sequence it is not waiting for changes nothing; the RESULT ends the call.
 * A pull for a sequence it has not sent yet (the others are ahead) makes
 * it resend its lowest packet without a result at once. Results and pulls
 * from anywhere but the PS's address and port are not taken.
 * Waits are generous (a pass takes milliseconds, a failure is a timeout),
 * so a loaded machine cannot make the test fail.
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

#define JOB	9
#define FAN	2
#define ME	1
#define NVAL	8

static struct sockaddr_in addr(int host)
{
	return loopback_addr(1, host);
}

/* A worker's allreduce in flight and the fake PS it sends to. */
struct call {
	struct esa_endpoint *ep;
	int32_t buf[NVAL];
	int err;
	pthread_t t;		/* runs the allreduce */
	int ps;			/* the fake PS's socket */
	uint32_t seq;		/* of the worker's first packet */
};

static void *run_allreduce(void *arg)
{
	struct call *c = arg;

	c->err = esa_allreduce_i32(c->ep, c->buf, NVAL);
	return NULL;
}

/*
 * @fd -> worker: a RESULT of @seq (values @base + i) or, with @pull, a
 * pull.
 */
static void answer_with(int fd, uint32_t seq, uint32_t bitmap, bool pull,
			int32_t base)
{
	struct sockaddr_in w = addr(10 + ME);
	uint8_t buf[ESA_MTU];
	int32_t v[NVAL];
	unsigned n = pull ? 1 : NVAL;
	struct esa_meta m = {
		.flags = ESA_F_RESULT | (pull ? ESA_F_RESEND : 0),
		.fan_in = FAN, .job_id = JOB, .value_count = n, .seq = seq,
		.bitmap = bitmap,
	};

	esa_wire_put(buf, &m);
	for (unsigned i = 0; i < n; i++)
		v[i] = pull ? 0 : base + (int32_t)i;
	esa_values_to_be(buf + ESA_HDR_LEN, v, n);
	sendto(fd, buf, ESA_HDR_LEN + 4 * n, 0, (struct sockaddr *)&w, sizeof(w));
}

/* PS -> worker: a RESULT of @seq (values 100 + i) or, with @pull, a pull. */
static void answer(int fd, uint32_t seq, uint32_t bitmap, bool pull)
{
	answer_with(fd, seq, bitmap, pull, 100);
}

/*
 * The fake PS's socket in c->ps and a worker (window @window, 0: the
 * default) whose allreduce of NVAL values runs in c->t; its first packet,
 * a plain data packet of this worker, has sequence c->seq. Its own timeout
 * is a minute: whatever it resends within the test was pulled. 0, or -1
 * (esa_last_error() says why, if libesa failed).
 */
static int start_call(struct call *c, uint32_t window)
{
	struct esa_meta m;
	struct sockaddr_in ps_addr = addr(1);
	struct esa_endpoint_config cfg = {
		.job_id = JOB, .worker_id = ME, .fan_in = FAN,
		.ps = addr(1), .self = addr(10 + ME), .agg_slots = 16,
		.window = window,
		.timeout_us = 60 * 1000 * 1000,
		.max_resends = 5,
	};

	c->ps = esa_udp_open(&ps_addr, false, NULL);
	if (c->ps < 0)
		return -1;
	if (esa_endpoint_open(&cfg, &c->ep)) {
		close(c->ps);
		return -1;
	}
	for (int i = 0; i < NVAL; i++)
		c->buf[i] = i;
	if (pthread_create(&c->t, NULL, run_allreduce, c) ||
	    loopback_recv(c->ps, 20000, &m, NULL) != 1 || m.flags ||
	    m.bitmap != 1u << ME)
		return -1;
	c->seq = m.seq;
	return 0;
}

/*
 * The PS's RESULT ends call @c: it returns 0 with the result's values.
 * Its endpoint's stats into *@st.
 */
static void end_call(struct __test_metadata *_metadata, struct call *c,
		     struct esa_endpoint_stats *st)
{
	answer(c->ps, c->seq, 0x3, false);
	ASSERT_EQ(0, pthread_join(c->t, NULL));
	EXPECT_EQ(0, c->err) TH_LOG("%s", esa_last_error());
	for (int i = 0; i < NVAL; i++)
		EXPECT_EQ(100 + i, c->buf[i]);
	esa_endpoint_get_stats(c->ep, st);
}

TEST(pull_makes_the_named_worker_resend_now)
{
	struct esa_endpoint_stats st;
	struct call c = { 0 };
	struct esa_meta m;

	ASSERT_EQ(0, start_call(&c, 0)) TH_LOG("%s", esa_last_error());
	/* a pull for the other worker, one for a sequence not in flight */
	answer(c.ps, c.seq, 1u << (ME ^ 1), true);
	answer(c.ps, c.seq + 1000, 1u << ME, true);
	EXPECT_EQ(0, loopback_recv(c.ps, 300, &m, NULL));
	/* a pull naming this worker: resent now, flagged RESEND */
	answer(c.ps, c.seq, 0x3, true);
	ASSERT_EQ(1, loopback_recv(c.ps, 20000, &m, NULL));
	EXPECT_EQ(ESA_F_RESEND, m.flags);
	EXPECT_EQ(c.seq, m.seq);
	EXPECT_EQ(NVAL, m.value_count);
	end_call(_metadata, &c, &st);
	EXPECT_EQ(3, st.pulls);
	EXPECT_EQ(1, st.resends);
	EXPECT_EQ(1, st.results);
	esa_endpoint_close(c.ep);
	close(c.ps);
}

/*
 * The 5 % loss test's stall (Documentation/endpoints.rst, resends): the
 * others are a window ahead and pull this worker for a packet it has not
 * sent, while its own lowest packet waits out a long timeout because its
 * result was lost. The pull makes it resend that packet now.
 */
TEST(pull_ahead_resends_the_lowest_packet_now)
{
	struct esa_endpoint_stats st;
	struct call c = { 0 };
	struct esa_meta m;

	ASSERT_EQ(0, start_call(&c, 4)) TH_LOG("%s", esa_last_error());
	/* beyond lo + 2 window: not where the others can be */
	answer(c.ps, c.seq + 2 * 4, 1u << ME, true);
	EXPECT_EQ(0, loopback_recv(c.ps, 300, &m, NULL));
	/* a packet not sent yet (the next call's): the lowest is resent now */
	answer(c.ps, c.seq + 5, 1u << ME, true);
	ASSERT_EQ(1, loopback_recv(c.ps, 20000, &m, NULL));
	EXPECT_EQ(ESA_F_RESEND, m.flags);
	EXPECT_EQ(c.seq, m.seq);
	end_call(_metadata, &c, &st);
	EXPECT_EQ(2, st.pulls);
	EXPECT_EQ(1, st.resends);
	esa_endpoint_close(c.ep);
	close(c.ps);
}

/*
 * A host that is not the PS (another address; the PS's address from
 * another port) sends the worker results and pulls of its job while the
 * call waits: none is taken, the PS's RESULT ends the call with its
 * values.
 */
TEST(results_only_from_the_ps)
{
	struct sockaddr_in other = addr(50), ps_other_port = addr(1);
	struct esa_endpoint_stats st;
	struct call c = { 0 };
	struct esa_meta m;
	int fd[2], k;

	ps_other_port.sin_port = htons(ESA_UDP_PORT + 1);
	ASSERT_EQ(0, start_call(&c, 0)) TH_LOG("%s", esa_last_error());
	fd[0] = esa_udp_open(&other, false, NULL);
	fd[1] = esa_udp_open(&ps_other_port, false, NULL);
	ASSERT_LE(0, fd[0]);
	ASSERT_LE(0, fd[1]);
	for (k = 0; k < 2; k++) {
		answer_with(fd[k], c.seq, 0x3, false, 666);
		answer(fd[k], c.seq, 1u << ME, true);
	}
	/* no forged pull made it resend */
	EXPECT_EQ(0, loopback_recv(c.ps, 300, &m, NULL));
	end_call(_metadata, &c, &st);
	EXPECT_EQ(1, st.results);
	EXPECT_EQ(0, st.pulls);
	EXPECT_EQ(0, st.resends);
	EXPECT_EQ(4, st.ignored);
	esa_endpoint_close(c.ep);
	close(fd[0]);
	close(fd[1]);
	close(c.ps);
}

TEST_HARNESS_MAIN
