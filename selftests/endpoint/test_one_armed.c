// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoints through a one-armed switch and with a job token
 * (Documentation/endpoints.rst, "Through a one-armed switch" and "Job
 * token"), on the caller's network (esa_endpoint_new, esa_ps_new): no
 * switch runs, the test plays it. Checks that a worker with a switch
 * address sends to (switch, ESA_UDP_PORT) and takes results only from
 * there; that a PS with one takes packets only from there and sends its
 * RESULTs there; that with a token every packet is wire version 2 with the
 * trailer and at most ESA_MAX_VALUES_TOKEN values, and every packet with
 * another token (or none) is ignored and counted; that a silence's cause
 * names the switch and the token; and that two workers and a PS joined by
 * a relay playing the switch get exact sums.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "esa.h"
#include "esa_endpoint.h"
#include "capture.h"
#include "esa_parse.h"

#define JOB	7
#define TOKEN	0x0123456789abcdefull
#define MAXPK	CAPTURE_MAX

static struct sockaddr_in addr(uint32_t host, uint16_t port)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(host),
	};
	return a;
}

#define PS_ADDR		addr(0x0a000001, ESA_UDP_PORT)
#define SW_ADDR		addr(0x0a000063, ESA_UDP_PORT)
#define WORKER(w)	addr(0x0a00000a + (w), ESA_UDP_PORT)

static struct esa_endpoint_config worker_cfg(unsigned w, uint64_t token)
{
	return (struct esa_endpoint_config){
		.job_id = JOB, .worker_id = w, .fan_in = 2,
		.ps = PS_ADDR, .self = WORKER(w), .sw = SW_ADDR,
		.agg_slots = 64, .window = 8, .token = token,
	};
}

/* A packet of job JOB: @n values v..v+n-1, @token's trailer if any. */
static size_t packet(uint8_t *buf, uint8_t flags, uint32_t seq,
		     uint32_t bitmap, unsigned n, int32_t v, uint64_t token)
{
	int32_t vals[ESA_MAX_VALUES];
	struct esa_meta m = {
		.flags = flags, .fan_in = 2, .job_id = JOB, .value_count = n,
		.seq = seq, .bitmap = bitmap, .token = token,
	};

	for (unsigned i = 0; i < n; i++)
		vals[i] = v + (int32_t)i;
	esa_wire_put(buf, &m);
	esa_values_to_be(buf + ESA_HDR_LEN, vals, n);
	return esa_wire_end(buf, &m);
}

/* What esa_endpoint_on_quiet() reported. */
struct quiet_log {
	int	calls;
	char	why[512];
};

static void on_quiet(void *arg, const char *why)
{
	struct quiet_log *q = arg;

	q->calls++;
	snprintf(q->why, sizeof(q->why), "%s", why);
}

static uint64_t trailer_of(const uint8_t *buf, size_t len)
{
	uint64_t be;

	memcpy(&be, buf + len - ESA_TOKEN_LEN, ESA_TOKEN_LEN);
	return be64toh(be);
}

TEST(worker_talks_only_to_the_switch)
{
	struct esa_endpoint_config cfg = worker_cfg(0, 0);
	const struct sockaddr_in ps = PS_ADDR, other_port = addr(0x0a000063, 47001);
	static struct capture cap;
	struct esa_endpoint_stats st;
	struct esa_endpoint *ep;
	int32_t data[64] = { 0 };
	struct esa_values_io io = { .ctx = data };
	const struct sockaddr_in sw = SW_ADDR;
	uint8_t res[ESA_MTU];
	uint64_t dl;
	size_t len;

	cfg.values_per_packet = 64;
	ASSERT_EQ(0, esa_endpoint_new(&cfg, capture_tx, &cap, &ep));
	ASSERT_EQ(0, esa_step_begin(ep, 64, &io));
	ASSERT_EQ(0, esa_step_send(ep, 1, &dl));
	ASSERT_EQ(1, cap.n);
	EXPECT_TRUE(esa_same_addr(&cap.to[0], &sw));
	EXPECT_EQ(ESA_WIRE_VERSION, cap.buf[0][0]);
	EXPECT_EQ(ESA_HDR_LEN + 4 * 64, cap.len[0]);

	len = packet(res, ESA_F_RESULT, 0, 3, 64, 100, 0);
	esa_step_input(ep, res, len, &ps, 2);		/* the PS: not the path */
	esa_step_input(ep, res, len, &other_port, 2);	/* the switch, other port */
	EXPECT_FALSE(esa_step_done(ep));
	esa_endpoint_get_stats(ep, &st);
	EXPECT_EQ(2, st.ignored);
	EXPECT_EQ(0, st.results);
	esa_step_input(ep, res, len, &sw, 3);
	ASSERT_TRUE(esa_step_done(ep));
	EXPECT_EQ(0, esa_step_end(ep));
	EXPECT_EQ(100, data[0]);
	EXPECT_EQ(163, data[63]);
	esa_endpoint_close(ep);
}

TEST(worker_without_switch_talks_to_the_ps)
{
	struct esa_endpoint_config cfg = worker_cfg(0, 0);
	const struct sockaddr_in ps = PS_ADDR, sw = SW_ADDR;
	static struct capture cap;
	struct esa_endpoint *ep;
	int32_t data[8] = { 0 };
	struct esa_values_io io = { .ctx = data };
	uint8_t res[ESA_MTU];
	uint64_t dl;
	size_t len;

	memset(&cfg.sw, 0, sizeof(cfg.sw));
	ASSERT_EQ(0, esa_endpoint_new(&cfg, capture_tx, &cap, &ep));
	ASSERT_EQ(0, esa_step_begin(ep, 8, &io));
	ASSERT_EQ(0, esa_step_send(ep, 1, &dl));
	ASSERT_EQ(1, cap.n);
	EXPECT_TRUE(esa_same_addr(&cap.to[0], &ps));
	len = packet(res, ESA_F_RESULT, 0, 3, 8, 5, 0);
	esa_step_input(ep, res, len, &sw, 2);
	EXPECT_FALSE(esa_step_done(ep));
	esa_step_input(ep, res, len, &ps, 2);
	EXPECT_TRUE(esa_step_done(ep));
	esa_endpoint_close(ep);
}

TEST(token_trailer_on_every_packet_and_value_cap)
{
	struct esa_endpoint_config cfg = worker_cfg(1, TOKEN), eff;
	static struct capture cap;
	struct esa_endpoint *ep;
	static int32_t data[1000];
	struct esa_values_io io = { .ctx = data };
	const unsigned want[] = { 361, 361, 278 };
	struct esa_meta m;
	uint64_t dl;

	ASSERT_EQ(361, ESA_MAX_VALUES_TOKEN);
	ASSERT_EQ(0, esa_endpoint_new(&cfg, capture_tx, &cap, &ep));
	esa_endpoint_get_config(ep, &eff);
	EXPECT_EQ(ESA_MAX_VALUES_TOKEN, eff.values_per_packet);
	ASSERT_EQ(0, esa_step_begin(ep, 1000, &io));
	ASSERT_EQ(0, esa_step_send(ep, 1, &dl));
	ASSERT_EQ(3, cap.n);
	for (unsigned i = 0; i < 3; i++) {
		EXPECT_EQ(ESA_WIRE_VERSION_TOKEN, cap.buf[i][0]);
		EXPECT_EQ(ESA_HDR_LEN + 4 * want[i] + ESA_TOKEN_LEN, cap.len[i]);
		EXPECT_EQ(TOKEN, trailer_of(cap.buf[i], cap.len[i]));
		ASSERT_EQ(0, esa_wire_parse(cap.buf[i], cap.len[i], &m));
		EXPECT_EQ(want[i], m.value_count);
		EXPECT_EQ(TOKEN, m.token);
	}
	/* Big-endian on the wire: the first trailer byte is the top one. */
	EXPECT_EQ(0x01, cap.buf[0][cap.len[0] - ESA_TOKEN_LEN]);
	EXPECT_EQ(0xef, cap.buf[0][cap.len[0] - 1]);
	esa_endpoint_close(ep);

	cfg.values_per_packet = ESA_MAX_VALUES_TOKEN + 1;
	EXPECT_EQ(-EINVAL, esa_endpoint_new(&cfg, capture_tx, &cap, &ep));
	EXPECT_NE(NULL, strstr(esa_last_error(), "1..361 for a job with a token"));
	cfg.token = 0;
	ASSERT_EQ(0, esa_endpoint_new(&cfg, capture_tx, &cap, &ep));
	esa_endpoint_close(ep);
}

TEST(wire_version_2_parse)
{
	uint8_t buf[ESA_MTU];
	struct esa_meta m;
	size_t len;

	len = packet(buf, 0, 9, 1, ESA_MAX_VALUES_TOKEN, 1, TOKEN);
	ASSERT_EQ(0, esa_wire_parse(buf, len, &m));
	EXPECT_EQ(TOKEN, m.token);
	EXPECT_EQ(-EBADMSG, esa_wire_parse(buf, len - 1, &m));
	EXPECT_EQ(-EBADMSG, esa_wire_parse(buf, len - ESA_TOKEN_LEN, &m));
	/* 362 values with a trailer do not fit the MTU. */
	len = packet(buf, 0, 9, 1, ESA_MAX_VALUES_TOKEN + 1, 1, TOKEN);
	EXPECT_EQ(-EBADMSG, esa_wire_parse(buf, len, &m));
	/* A version-2 packet whose token is 0 carries none. */
	len = packet(buf, 0, 9, 1, 4, 1, TOKEN);
	memset(buf + len - ESA_TOKEN_LEN, 0, ESA_TOKEN_LEN);
	EXPECT_EQ(-EBADMSG, esa_wire_parse(buf, len, &m));
	/* Version 1 has no trailer. */
	len = packet(buf, 0, 9, 1, 4, 1, 0);
	ASSERT_EQ(0, esa_wire_parse(buf, len, &m));
	EXPECT_EQ(0, m.token);
	EXPECT_EQ(-EBADMSG, esa_wire_parse(buf, len + ESA_TOKEN_LEN, &m));
}

/* Worker 0 of job JOB, its 4 values, and the packets it sent. */
struct worker {
	struct capture		cap;
	int32_t			data[4];
	struct esa_values_io	io;
	struct esa_endpoint	*ep;
};

/*
 * @w as worker 0 of JOB with @token that has sent its values, all 0, as
 * seq 0 at time 1 (an assertion failure ends the test).
 */
static void worker_sent(struct __test_metadata *_metadata, struct worker *w,
			uint64_t token)
{
	struct esa_endpoint_config cfg = worker_cfg(0, token);
	uint64_t dl;

	memset(w, 0, sizeof(*w));
	w->io.ctx = w->data;
	ASSERT_EQ(0, esa_endpoint_new(&cfg, capture_tx, &w->cap, &w->ep));
	ASSERT_EQ(0, esa_step_begin(w->ep, 4, &w->io));
	ASSERT_EQ(0, esa_step_send(w->ep, 1, &dl));
}

/* A worker of job JOB with @token; results of seq 0 with @res_token. */
static void result_with_token(struct __test_metadata *_metadata,
			      uint64_t token, uint64_t res_token,
			      bool taken)
{
	const struct sockaddr_in sw = SW_ADDR;
	static struct worker w;
	struct esa_endpoint_stats st;
	uint8_t res[ESA_MTU];
	size_t len;

	worker_sent(_metadata, &w, token);
	len = packet(res, ESA_F_RESULT, 0, 3, 4, 40, res_token);
	esa_step_input(w.ep, res, len, &sw, 2);
	esa_endpoint_get_stats(w.ep, &st);
	EXPECT_EQ(taken, esa_step_done(w.ep));
	EXPECT_EQ(taken ? 40 : 0, w.data[0]);
	EXPECT_EQ(taken ? 0 : 1, st.bad_token);
	EXPECT_EQ(0, st.ignored);
	esa_endpoint_close(w.ep);
}

TEST(worker_ignores_and_counts_wrong_token)
{
	result_with_token(_metadata, TOKEN, TOKEN, true);
	result_with_token(_metadata, TOKEN, TOKEN ^ 1, false);
	result_with_token(_metadata, TOKEN, 0, false);	/* version 1 */
	result_with_token(_metadata, 0, TOKEN, false);	/* job has none */
	result_with_token(_metadata, 0, 0, true);
}

TEST(worker_pull_with_wrong_token_ignored)
{
	const struct sockaddr_in sw = SW_ADDR;
	static struct worker w;
	struct esa_endpoint_stats st;
	uint8_t pull[ESA_MTU];
	uint64_t dl;
	size_t len;

	worker_sent(_metadata, &w, TOKEN);
	ASSERT_EQ(1, w.cap.n);
	len = packet(pull, ESA_F_RESULT | ESA_F_RESEND, 0, 1, 1, 0, TOKEN + 1);
	esa_step_input(w.ep, pull, len, &sw, 2);
	ASSERT_EQ(0, esa_step_send(w.ep, 2, &dl));
	EXPECT_EQ(1, w.cap.n);		/* not resent */
	len = packet(pull, ESA_F_RESULT | ESA_F_RESEND, 0, 1, 1, 0, TOKEN);
	esa_step_input(w.ep, pull, len, &sw, 3);
	ASSERT_EQ(0, esa_step_send(w.ep, 3, &dl));
	ASSERT_EQ(2, w.cap.n);		/* resent at once */
	EXPECT_EQ(ESA_F_RESEND, w.cap.buf[1][1]);
	esa_endpoint_get_stats(w.ep, &st);
	EXPECT_EQ(1, st.bad_token);
	EXPECT_EQ(1, st.pulls);
	esa_endpoint_close(w.ep);
}

static struct esa_ps *ps_with_switch(struct __test_metadata *_metadata,
				     struct capture *cap, uint64_t token)
{
	struct esa_ps_config cfg = {
		.mode = ESA_PS_SWITCH, .result_on_complete = true, .sw = SW_ADDR,
	};
	struct esa_ps_job_config jc = { .job_id = JOB, .fan_in = 2,
					.token = token };
	struct esa_ps *ps;

	cfg.sw.sin_port = 0;		/* 0 = ESA_UDP_PORT */
	if (esa_ps_new(&cfg, capture_tx, cap, &ps) ||
	    esa_ps_add_job(ps, &jc)) {
		TH_LOG("%s", esa_last_error());
		return NULL;
	}
	return ps;
}

TEST(ps_takes_from_and_answers_to_the_switch)
{
	const struct sockaddr_in sw = SW_ADDR, w0 = WORKER(0);
	static struct capture cap;
	struct esa_ps_global_stats g;
	struct esa_ps_stats st;
	struct esa_meta m;
	uint8_t buf[ESA_MTU];
	struct esa_ps *ps;
	size_t len;

	ps = ps_with_switch(_metadata, &cap, TOKEN);
	ASSERT_NE(NULL, ps);
	/* From a worker, not through the switch: ignored. */
	len = packet(buf, ESA_F_COLLISION, 0, 1, 100, 1, TOKEN);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &w0));
	esa_ps_get_stats(ps, &g);
	EXPECT_EQ(1, g.not_switch);
	ASSERT_EQ(0, esa_ps_get_job_stats(ps, JOB, &st));
	EXPECT_EQ(0, st.rx_packets);
	/* Two collisions through the switch: the PS sums them. */
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &sw));
	len = packet(buf, ESA_F_COLLISION, 0, 2, 100, 10, TOKEN);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &sw));
	ASSERT_EQ(1, cap.n);
	EXPECT_TRUE(esa_same_addr(&cap.to[0], &sw));
	ASSERT_EQ(0, esa_wire_parse(cap.buf[0], cap.len[0], &m));
	EXPECT_EQ(ESA_F_RESULT, m.flags);
	EXPECT_EQ(TOKEN, m.token);
	EXPECT_EQ(3, m.bitmap);
	EXPECT_EQ(ESA_WIRE_VERSION_TOKEN, cap.buf[0][0]);
	EXPECT_EQ(htonl(11), *(uint32_t *)(cap.buf[0] + ESA_HDR_LEN));
	ASSERT_EQ(0, esa_ps_get_job_stats(ps, JOB, &st));
	EXPECT_EQ(0, st.no_address);
	EXPECT_EQ(1, st.result_packets);
	esa_ps_close(ps);
}

TEST(ps_pull_goes_to_the_switch)
{
	const struct sockaddr_in sw = SW_ADDR;
	static struct capture cap;
	struct esa_meta m;
	uint8_t buf[ESA_MTU];
	struct esa_ps *ps;
	size_t len;

	ps = ps_with_switch(_metadata, &cap, 0);
	ASSERT_NE(NULL, ps);
	len = packet(buf, ESA_F_PARTIAL | ESA_F_RESEND, 5, 1, 8, 1, 0);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &sw));
	EXPECT_EQ(0, cap.n);
	len = packet(buf, ESA_F_RESEND, 5, 1, 8, 1, 0);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &sw));
	ASSERT_EQ(1, cap.n);
	EXPECT_TRUE(esa_same_addr(&cap.to[0], &sw));
	ASSERT_EQ(0, esa_wire_parse(cap.buf[0], cap.len[0], &m));
	EXPECT_EQ(ESA_F_RESULT | ESA_F_RESEND, m.flags);
	EXPECT_EQ(2, m.bitmap);		/* worker 1 is missing */
	EXPECT_EQ(ESA_WIRE_VERSION, cap.buf[0][0]);
	esa_ps_close(ps);
}

TEST(ps_ignores_and_counts_wrong_token)
{
	const struct sockaddr_in sw = SW_ADDR;
	static struct capture cap;
	struct esa_ps_stats st;
	uint8_t buf[ESA_MTU];
	struct esa_ps *ps;
	size_t len;

	ps = ps_with_switch(_metadata, &cap, TOKEN);
	ASSERT_NE(NULL, ps);
	len = packet(buf, ESA_F_COMPLETE, 0, 3, 16, 1, TOKEN - 1);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &sw));
	len = packet(buf, ESA_F_COMPLETE, 0, 3, 16, 1, 0);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &sw));
	EXPECT_EQ(0, cap.n);
	ASSERT_EQ(0, esa_ps_get_job_stats(ps, JOB, &st));
	EXPECT_EQ(2, st.bad_token);
	EXPECT_EQ(0, st.rx_packets);
	EXPECT_EQ(0, st.finished);
	len = packet(buf, ESA_F_COMPLETE, 0, 3, 16, 1, TOKEN);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &sw));
	ASSERT_EQ(0, esa_ps_get_job_stats(ps, JOB, &st));
	EXPECT_EQ(1, st.finished);
	EXPECT_EQ(1, cap.n);
	esa_ps_close(ps);

	/* A job without a token takes no version-2 packet. */
	cap.n = 0;
	ps = ps_with_switch(_metadata, &cap, 0);
	ASSERT_NE(NULL, ps);
	len = packet(buf, ESA_F_COMPLETE, 0, 3, 16, 1, TOKEN);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &sw));
	ASSERT_EQ(0, esa_ps_get_job_stats(ps, JOB, &st));
	EXPECT_EQ(1, st.bad_token);
	EXPECT_EQ(0, cap.n);
	esa_ps_close(ps);
}

TEST(switch_address_errors)
{
	struct esa_ps_config pc = { .mode = ESA_PS_HOST_ONLY, .sw = SW_ADDR };
	struct esa_endpoint_config c = worker_cfg(0, 0);
	static struct capture cap;
	struct esa_endpoint *ep;
	struct esa_ps *ps;

	EXPECT_EQ(-EINVAL, esa_ps_new(&pc, capture_tx, &cap, &ps));
	EXPECT_NE(NULL, strstr(esa_last_error(), "host-only"));
	pc.mode = ESA_PS_SWITCH;
	pc.sw.sin_port = htons(47001);
	EXPECT_EQ(-EINVAL, esa_ps_new(&pc, capture_tx, &cap, &ps));
	EXPECT_NE(NULL, strstr(esa_last_error(), "switch port 47001"));
	c.sw.sin_port = htons(47001);
	EXPECT_EQ(-EINVAL, esa_endpoint_new(&c, capture_tx, &cap, &ep));
	EXPECT_NE(NULL, strstr(esa_last_error(), "switch port 47001"));
	c.sw = addr(0, 0);
	EXPECT_EQ(-EINVAL, esa_endpoint_new(&c, capture_tx, &cap, &ep));
	EXPECT_NE(NULL, strstr(esa_last_error(), "switch address 0.0.0.0"));
	c.sw.sin_family = AF_INET6;
	EXPECT_EQ(-EINVAL, esa_endpoint_new(&c, capture_tx, &cap, &ep));
	EXPECT_NE(NULL, strstr(esa_last_error(), "not IPv4"));
}

TEST(parse_token)
{
	uint64_t t = 0;

	ASSERT_EQ(0, esa_parse_token("0123456789abcdef", &t));
	EXPECT_EQ(TOKEN, t);
	ASSERT_EQ(0, esa_parse_token("FEDCBA9876543210", &t));
	EXPECT_EQ(0xfedcba9876543210ull, t);
	EXPECT_EQ(-EINVAL, esa_parse_token("0123456789abcde", &t));
	EXPECT_EQ(-EINVAL, esa_parse_token("0123456789abcdef0", &t));
	EXPECT_EQ(-EINVAL, esa_parse_token("0x23456789abcdef", &t));
	EXPECT_EQ(-EINVAL, esa_parse_token("0123456789abcdeg", &t));
	EXPECT_EQ(-EINVAL, esa_parse_token("", &t));
	EXPECT_EQ(-EINVAL, esa_parse_token(NULL, &t));
	EXPECT_EQ(-EINVAL, esa_parse_token("0000000000000000", &t));
	EXPECT_NE(NULL, strstr(esa_last_error(), "0 means no token"));
}

/*
 * Two workers and a PS through a relay that plays a one-armed switch
 * without aggregating: it passes every worker packet to the PS as a
 * collision and copies every PS packet to both workers, all from its own
 * address. The sums are exact and every packet carried the token.
 */
struct relay {
	struct capture	w[2], ps;
	struct esa_endpoint *ep[2];
	struct esa_ps	*srv;
	unsigned	tokened, seen;
};

static void relay_round(struct relay *r, uint64_t now)
{
	const struct sockaddr_in sw = SW_ADDR;
	struct capture ps_out;
	uint64_t dl;

	for (unsigned w = 0; w < 2; w++) {
		r->w[w].n = 0;
		esa_step_send(r->ep[w], now, &dl);
		for (unsigned i = 0; i < r->w[w].n; i++) {
			r->seen++;
			r->tokened += trailer_of(r->w[w].buf[i], r->w[w].len[i]) == TOKEN;
			r->w[w].buf[i][1] |= ESA_F_COLLISION;
			r->ps.n = 0;
			esa_ps_input(r->srv, r->w[w].buf[i], r->w[w].len[i], &sw);
			ps_out = r->ps;
			for (unsigned k = 0; k < ps_out.n; k++)
				for (unsigned v = 0; v < 2; v++)
					esa_step_input(r->ep[v], ps_out.buf[k],
						       ps_out.len[k], &sw, now);
		}
	}
}

TEST(two_workers_and_ps_through_a_relay)
{
	static struct relay r;
	static int32_t data[2][2000];
	struct esa_values_io io[2] = { { .ctx = data[0] }, { .ctx = data[1] } };
	struct esa_endpoint_stats st;

	r.srv = ps_with_switch(_metadata, &r.ps, TOKEN);
	ASSERT_NE(NULL, r.srv);
	for (unsigned w = 0; w < 2; w++) {
		struct esa_endpoint_config c = worker_cfg(w, TOKEN);

		for (unsigned i = 0; i < 2000; i++)
			data[w][i] = (int32_t)(i * 7 + w * 100000) - 5000;
		ASSERT_EQ(0, esa_endpoint_new(&c, capture_tx, &r.w[w], &r.ep[w]));
		ASSERT_EQ(0, esa_step_begin(r.ep[w], 2000, &io[w]));
	}
	for (uint64_t t = 1; t < 100 && !(esa_step_done(r.ep[0]) &&
					  esa_step_done(r.ep[1])); t++)
		relay_round(&r, t * 1000);
	for (unsigned w = 0; w < 2; w++) {
		ASSERT_TRUE(esa_step_done(r.ep[w]));
		EXPECT_EQ(0, esa_step_end(r.ep[w]));
		esa_endpoint_get_stats(r.ep[w], &st);
		EXPECT_EQ(0, st.bad_token);
		EXPECT_EQ(0, st.ignored);
		for (unsigned i = 0; i < 2000; i++)
			if (data[w][i] != (int32_t)(2 * (i * 7) + 100000 - 10000))
				ASSERT_EQ(2 * (i * 7) + 100000 - 10000, data[w][i]);
		esa_endpoint_close(r.ep[w]);
	}
	EXPECT_EQ(12, r.seen);		/* 6 packets of 361 or fewer values each */
	EXPECT_EQ(r.seen, r.tokened);
	esa_ps_close(r.srv);
}

/* Why a worker behind a one-armed switch hears nothing. */
TEST(diag_names_the_switch_and_the_token)
{
	struct esa_endpoint_config c = worker_cfg(0, TOKEN);
	struct esa_icmp_seen icmp = { 0 };
	struct esa_diag d = { 0 };
	char why[512];

	c.ps.sin_port = htons(47010);	/* no matter: packets go to the switch */
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	EXPECT_NE(NULL, strstr(why, "the switch 10.0.0.99:47000 may not know this worker as 10.0.0.10:47000, or hold another token for the job")) TH_LOG("%s", why);
	c.token = 0;
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	EXPECT_NE(NULL, strstr(why, "expect a token of the job, which this worker lacks")) TH_LOG("%s", why);
	d.bad_token = 3;
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	EXPECT_NE(NULL, strstr(why, "packets of job 7 came back with a token: this worker's token (--token, ESA_TOKEN) is not the job's")) TH_LOG("%s", why);
	d.bad_token = 0;
	icmp.port_unreachable = 1;
	icmp.from = c.sw.sin_addr;
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	EXPECT_NE(NULL, strstr(why, "the switch 10.0.0.99:47000 takes no aggregation packets: its host answers 'port unreachable'")) TH_LOG("%s", why);
	icmp.port_unreachable = 0;
	icmp.host_unreachable = 1;
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	EXPECT_NE(NULL, strstr(why, "no path to the switch 10.0.0.99:47000")) TH_LOG("%s", why);
	icmp.host_unreachable = 0;
	/* On the path, the token is a cause too. */
	memset(&c.sw, 0, sizeof(c.sw));
	c.ps.sin_port = htons(ESA_UDP_PORT);
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	EXPECT_NE(NULL, strstr(why, "or expect a token of the job, which this worker lacks (--token, ESA_TOKEN) (aggctl job show id 7; aggctl stats job 7 counts drop_port, drop_token and drop_unknown_job)")) TH_LOG("%s", why);
	c.sw = SW_ADDR;
	d.replies = 4;
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	EXPECT_NE(NULL, strstr(why, "or the switch 10.0.0.99:47000 or the PS went away")) TH_LOG("%s", why);
}

/* A wrong token's results leave their trace for the diagnosis. */
TEST(wrong_token_results_reach_the_diagnosis)
{
	const struct sockaddr_in sw = SW_ADDR;
	struct quiet_log q = { 0 };
	static struct worker w;
	uint8_t res[ESA_MTU];
	uint64_t dl;
	size_t len;

	worker_sent(_metadata, &w, TOKEN);
	/* a setting read at each send: taken now as before the first */
	esa_endpoint_on_quiet(w.ep, 1, on_quiet, &q);
	len = packet(res, ESA_F_RESULT, 0, 3, 4, 40, TOKEN + 2);
	esa_step_input(w.ep, res, len, &sw, 2);
	ASSERT_EQ(0, esa_step_send(w.ep, 2000000, &dl));
	ASSERT_EQ(1, q.calls);
	EXPECT_NE(NULL, strstr(q.why, "came back with another token")) TH_LOG("%s", q.why);
	esa_endpoint_close(w.ep);
}

TEST_HARNESS_MAIN
