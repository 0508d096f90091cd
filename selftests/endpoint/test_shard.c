// SPDX-License-Identifier: GPL-2.0
/*
 * A job spread over several one-armed switch servers
 * (Documentation/endpoints.rst, "Over several switch servers"), on the
 * caller's network: no switch runs, the test plays each server. Checks
 * that a worker sends the packet of global index g to server g mod S with
 * local index g / S, takes a result only from that server with that index,
 * that the PS answers each frame to the server it came from, that the
 * sums over S = 1, 2 and 3 servers are bit-identical, that a call given
 * up names the server that did not answer, and that bad switch lists are
 * refused with the entry named.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "esa.h"
#include "esa_endpoint.h"
#include "capture.h"
#include "esa_shard.h"

#define JOB	9
#define FAN	3
#define SLOTS	4		/* per server */
#define COUNT	5000		/* values per worker: 14 packets */
#define MAXPK	CAPTURE_MAX

static struct sockaddr_in addr(uint32_t host)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_port = htons(ESA_UDP_PORT),
		.sin_addr.s_addr = htonl(host),
	};
	return a;
}

#define PS_ADDR		addr(0x0a000001)
#define SERVER(k)	addr(0x0a000050 + (k))
#define WORKER(w)	addr(0x0a00000a + (w))

/* Servers 0..@n-1 into @sw and @more, as the option would set them. */
static void servers(unsigned n, struct sockaddr_in *sw,
		    struct sockaddr_in *more)
{
	memset(more, 0, sizeof(struct sockaddr_in) * (ESA_MAX_SHARDS - 1));
	*sw = SERVER(0);
	for (unsigned k = 1; k < n; k++)
		more[k - 1] = SERVER(k);
}

static struct esa_endpoint_config worker_cfg(unsigned w, unsigned nserv)
{
	struct esa_endpoint_config c = {
		.job_id = JOB, .worker_id = w, .fan_in = FAN,
		.ps = PS_ADDR, .self = WORKER(w),
		.agg_slots = SLOTS, .window = 16,
	};

	servers(nserv, &c.sw, c.sw_more);
	return c;
}

static int server_of(const struct sockaddr_in *a)
{
	for (unsigned k = 0; k < ESA_MAX_SHARDS; k++) {
		struct sockaddr_in s = SERVER(k);

		if (esa_same_addr(a, &s))
			return (int)k;
	}
	return -1;
}

static size_t result(uint8_t *buf, uint32_t seq, uint32_t agg_index,
		     unsigned n)
{
	int32_t vals[ESA_MAX_VALUES] = { 0 };
	struct esa_meta m = {
		.flags = ESA_F_RESULT, .fan_in = FAN, .job_id = JOB,
		.value_count = n, .seq = seq, .agg_index = agg_index,
		.bitmap = (1u << FAN) - 1,
	};

	esa_wire_put(buf, &m);
	esa_values_to_be(buf + ESA_HDR_LEN, vals, n);
	return esa_wire_end(buf, &m);
}

TEST(packets_reach_their_server_with_the_local_index)
{
	struct esa_endpoint_config c = worker_cfg(0, 3);
	static struct capture cap;
	static int32_t data[COUNT];
	struct esa_values_io io = { .ctx = data };
	struct esa_endpoint *ep;
	struct esa_meta m;
	uint64_t dl;

	ASSERT_EQ(0, esa_endpoint_new(&c, capture_tx, &cap, &ep)) TH_LOG("%s", esa_last_error());
	ASSERT_EQ(0, esa_step_begin(ep, COUNT, &io));
	ASSERT_EQ(0, esa_step_send(ep, 1, &dl));
	ASSERT_EQ(14, cap.n);		/* all of them: the window is 16 */
	for (unsigned i = 0; i < cap.n; i++) {
		/* Span min(16, 3 x SLOTS) = 12: global index i mod 12. */
		unsigned g = i % 12;

		ASSERT_EQ(0, esa_wire_parse(cap.buf[i], cap.len[i], &m));
		EXPECT_EQ(i, m.seq);
		EXPECT_EQ((int)(g % 3), server_of(&cap.to[i]));
		EXPECT_EQ(g / 3, m.agg_index);
		EXPECT_GT(SLOTS, m.agg_index);
	}
	esa_endpoint_close(ep);
}

TEST(results_only_from_the_owning_server)
{
	struct esa_endpoint_config c = worker_cfg(0, 3);
	const struct sockaddr_in s0 = SERVER(0), s1 = SERVER(1), ps = PS_ADDR;
	static struct capture cap;
	int32_t data[10] = { 0 };
	struct esa_values_io io = { .ctx = data };
	struct esa_endpoint_stats st;
	struct esa_endpoint *ep;
	uint8_t res[ESA_MTU];
	uint64_t dl;
	size_t len;

	ASSERT_EQ(0, esa_endpoint_new(&c, capture_tx, &cap, &ep));
	ASSERT_EQ(0, esa_step_begin(ep, 10, &io));
	ASSERT_EQ(0, esa_step_send(ep, 1, &dl));
	ASSERT_EQ(1, cap.n);
	len = result(res, 0, 0, 10);
	esa_step_input(ep, res, len, &s1, 2);	/* another server */
	esa_step_input(ep, res, len, &ps, 2);	/* not a server */
	len = result(res, 0, 1, 10);
	esa_step_input(ep, res, len, &s0, 2);	/* its server, another index */
	EXPECT_FALSE(esa_step_done(ep));
	esa_endpoint_get_stats(ep, &st);
	EXPECT_EQ(3, st.ignored);
	EXPECT_EQ(0, st.results);
	len = result(res, 0, 0, 10);
	esa_step_input(ep, res, len, &s0, 3);
	ASSERT_TRUE(esa_step_done(ep));
	EXPECT_EQ(0, esa_step_end(ep));
	esa_endpoint_close(ep);
}

/*
 * Server 1 of 2 never answers, server 0 answers at once: the call fails
 * naming server 1 and its address, the one the job waits for (a message
 * naming server 0, the first of the list, would send the operator to the
 * wrong host).
 */
TEST(give_up_names_the_silent_server)
{
	struct esa_endpoint_config c = worker_cfg(0, 2);
	const struct sockaddr_in s0 = SERVER(0);
	static struct capture cap;
	int32_t data[20] = { 0 };
	struct esa_values_io io = { .ctx = data };
	struct esa_endpoint *ep;
	uint8_t res[ESA_MTU];
	uint64_t now = 1, dl;
	int err = 0;

	c.values_per_packet = 10;	/* packet 0 to server 0, 1 to server 1 */
	c.max_resends = 3;
	ASSERT_EQ(0, esa_endpoint_new(&c, capture_tx, &cap, &ep));
	ASSERT_EQ(0, esa_step_begin(ep, 20, &io));
	ASSERT_EQ(0, esa_step_send(ep, now, &dl));
	ASSERT_EQ(2, cap.n);
	ASSERT_EQ(1, server_of(&cap.to[1]));
	esa_step_input(ep, res, result(res, 0, 0, 10), &s0, now);
	for (unsigned r = 0; !err && r < 100; r++) {
		cap.n = 0;
		now = dl;
		err = esa_step_send(ep, now, &dl);
	}
	ASSERT_EQ(-ETIMEDOUT, err);
	EXPECT_NE(NULL, strstr(esa_last_error(), "no result for seq 1 from switch server 1 (10.0.0.81:47000) of 2 after 3 resends")) TH_LOG("%s", esa_last_error());
	EXPECT_NE(NULL, strstr(esa_last_error(), "or the switch 10.0.0.81:47000 or the PS went away")) TH_LOG("%s", esa_last_error());
	esa_endpoint_close(ep);
}

/*
 * FAN workers, a PS and @nserv servers that pass every worker packet to
 * the PS as a collision and copy every PS packet to all workers, each
 * from its own address. Returns the rounds taken, 0 on a broken rule.
 */
struct net {
	unsigned	nserv;
	struct capture	w[FAN], ps;
	struct esa_endpoint *ep[FAN];
	struct esa_ps	*srv;
	unsigned	misrouted;
};

static void ps_answers(struct net *n, int k, uint64_t now)
{
	struct capture out = n->ps;
	const struct sockaddr_in from = SERVER(k);

	for (unsigned i = 0; i < out.n; i++) {
		if (server_of(&out.to[i]) != k)
			n->misrouted++;
		for (unsigned v = 0; v < FAN; v++)
			esa_step_input(n->ep[v], out.buf[i], out.len[i], &from,
				       now);
	}
}

static void net_round(struct net *n, uint64_t now)
{
	struct esa_meta m;
	uint64_t dl;

	for (unsigned w = 0; w < FAN; w++) {
		n->w[w].n = 0;
		esa_step_send(n->ep[w], now, &dl);
		for (unsigned i = 0; i < n->w[w].n; i++) {
			int k = server_of(&n->w[w].to[i]);
			struct sockaddr_in from = SERVER(k);

			if (k < 0 || (unsigned)k >= n->nserv ||
			    esa_wire_parse(n->w[w].buf[i], n->w[w].len[i], &m) ||
			    m.agg_index >= SLOTS) {
				n->misrouted++;
				continue;
			}
			n->w[w].buf[i][1] |= ESA_F_COLLISION;
			n->ps.n = 0;
			esa_ps_input(n->srv, n->w[w].buf[i], n->w[w].len[i], &from);
			ps_answers(n, k, now);
		}
	}
}

static int32_t value(unsigned w, size_t i)
{
	/* Both signs, large magnitudes, no pattern a shift would keep. */
	return (int32_t)((i * 2654435761u) ^ (w * 40503u)) / (FAN + 1);
}

static void run_job(struct __test_metadata *_metadata, unsigned nserv,
		    int32_t out[FAN][COUNT])
{
	static struct net n;
	struct esa_ps_config pc = {
		.mode = ESA_PS_SWITCH, .result_on_complete = true,
	};
	struct esa_ps_job_config jc = { .job_id = JOB, .fan_in = FAN };
	struct esa_values_io io[FAN];
	struct esa_endpoint_stats st;
	uint64_t t;

	memset(&n, 0, sizeof(n));
	n.nserv = nserv;
	servers(nserv, &pc.sw, pc.sw_more);
	ASSERT_EQ(0, esa_ps_new(&pc, capture_tx, &n.ps, &n.srv)) TH_LOG("%s", esa_last_error());
	ASSERT_EQ(0, esa_ps_add_job(n.srv, &jc));
	for (unsigned w = 0; w < FAN; w++) {
		struct esa_endpoint_config c = worker_cfg(w, nserv);

		for (size_t i = 0; i < COUNT; i++)
			out[w][i] = value(w, i);
		io[w] = (struct esa_values_io){ .ctx = out[w] };
		ASSERT_EQ(0, esa_endpoint_new(&c, capture_tx, &n.w[w], &n.ep[w]));
		ASSERT_EQ(0, esa_step_begin(n.ep[w], COUNT, &io[w]));
	}
	for (t = 1; t < 1000; t++) {
		bool all = true;

		for (unsigned w = 0; w < FAN; w++)
			all &= esa_step_done(n.ep[w]);
		if (all)
			break;
		net_round(&n, t * 1000);
	}
	EXPECT_EQ(0, n.misrouted);
	for (unsigned w = 0; w < FAN; w++) {
		ASSERT_TRUE(esa_step_done(n.ep[w]));
		EXPECT_EQ(0, esa_step_end(n.ep[w]));
		esa_endpoint_get_stats(n.ep[w], &st);
		EXPECT_EQ(0, st.ignored);
		EXPECT_EQ(0, st.resends);
		esa_endpoint_close(n.ep[w]);
	}
	esa_ps_close(n.srv);
}

TEST(sums_bit_identical_over_1_2_3_servers)
{
	static int32_t one[FAN][COUNT], many[FAN][COUNT];

	run_job(_metadata, 1, one);
	for (size_t i = 0; i < COUNT; i++) {
		int64_t want = 0;

		for (unsigned w = 0; w < FAN; w++)
			want += value(w, i);
		ASSERT_EQ(want, one[0][i]);
	}
	for (unsigned s = 2; s <= 3; s++) {
		run_job(_metadata, s, many);
		EXPECT_EQ(0, memcmp(one, many, sizeof(one))) TH_LOG("S = %u", s);
	}
}

TEST(ps_keeps_one_seq_on_one_server)
{
	struct esa_ps_config pc = {
		.mode = ESA_PS_SWITCH, .result_on_complete = true,
	};
	struct esa_ps_job_config jc = { .job_id = JOB, .fan_in = FAN };
	const struct sockaddr_in s1 = SERVER(1), s2 = SERVER(2), s3 = SERVER(3);
	struct esa_meta m = {
		.flags = ESA_F_COLLISION, .fan_in = FAN, .job_id = JOB,
		.value_count = 4, .seq = 5, .agg_index = 1, .bitmap = 1,
	};
	int32_t vals[4] = { 1, 2, 3, 4 };
	static struct capture cap;
	struct esa_ps_global_stats g;
	struct esa_ps_stats st;
	uint8_t buf[ESA_MTU];
	struct esa_ps *ps;
	size_t len;

	servers(3, &pc.sw, pc.sw_more);
	ASSERT_EQ(0, esa_ps_new(&pc, capture_tx, &cap, &ps));
	ASSERT_EQ(0, esa_ps_add_job(ps, &jc));
	esa_wire_put(buf, &m);
	esa_values_to_be(buf + ESA_HDR_LEN, vals, 4);
	len = esa_wire_end(buf, &m);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &s3));	/* not the job's */
	esa_ps_get_stats(ps, &g);
	EXPECT_EQ(1, g.not_switch);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &s1));
	buf[ESA_HDR_LEN - 1] = 0;	/* keep the size; another worker */
	m.bitmap = 2;
	esa_wire_put(buf, &m);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &s2));	/* seq 5 is s1's */
	ASSERT_EQ(0, esa_ps_get_job_stats(ps, JOB, &st));
	EXPECT_EQ(1, st.bad);
	m.bitmap = 6;
	esa_wire_put(buf, &m);
	ASSERT_EQ(0, esa_ps_input(ps, buf, len, &s1));
	ASSERT_EQ(1, cap.n);
	EXPECT_EQ(1, server_of(&cap.to[0]));
	esa_ps_close(ps);
}

static void expect_refused(struct __test_metadata *_metadata,
			   const char *list, const char *why)
{
	struct sockaddr_in sw, more[ESA_MAX_SHARDS - 1];

	EXPECT_EQ(-EINVAL, esa_parse_switches(list, &sw, more));
	EXPECT_NE(NULL, strstr(esa_last_error(), why)) TH_LOG("%s: %s", list, esa_last_error());
}

TEST(bad_lists_refused)
{
	struct esa_endpoint_config c = worker_cfg(0, 2);
	struct sockaddr_in sw, more[ESA_MAX_SHARDS - 1];
	static struct capture cap;
	struct esa_endpoint *ep;
	char many[512] = "";

	ASSERT_EQ(0, esa_parse_switches("10.0.0.80,10.0.0.81:47000,10.0.0.82", &sw, more));
	EXPECT_EQ(3, esa_sw_count(&sw, more));
	EXPECT_EQ(2, esa_sw_find(&sw, more, &(struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(ESA_UDP_PORT), .sin_addr.s_addr = htonl(0x0a000052) }));
	expect_refused(_metadata, "10.0.0.80,10.0.0.x",
		       "switch list '10.0.0.80,10.0.0.x': entry 2 '10.0.0.x': bad IPv4 address");
	expect_refused(_metadata, "10.0.0.80,,10.0.0.81", "entry 2 '' is not an address");
	expect_refused(_metadata, "10.0.0.80,", "entry 2 '' is not an address");
	expect_refused(_metadata, "10.0.0.80,10.0.0.81:1", "entry 2 '10.0.0.81:1': switch port 1 is not 47000");
	expect_refused(_metadata, "10.0.0.80,0.0.0.0", "entry 2 '0.0.0.0': switch address 0.0.0.0 is not a host");
	expect_refused(_metadata, "10.0.0.80,10.0.0.81,10.0.0.80", "switch address 10.0.0.80 listed twice");
	for (unsigned k = 0; k <= ESA_MAX_SHARDS; k++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 "%s10.0.1.%u", k ? "," : "", k + 1);
	expect_refused(_metadata, many, "more than 16 servers");
	/* One address: its own error, as before lists. */
	expect_refused(_metadata, "sw", "bad IPv4 address 'sw'");
	EXPECT_EQ(NULL, strstr(esa_last_error(), "switch list"));
	/* A gap in a configuration. */
	c.sw_more[1] = SERVER(5);
	memset(&c.sw_more[0], 0, sizeof(c.sw_more[0]));
	EXPECT_EQ(-EINVAL, esa_endpoint_new(&c, capture_tx, &cap, &ep));
	EXPECT_NE(NULL, strstr(esa_last_error(), "switch address 3 of the list set after an empty one")) TH_LOG("%s", esa_last_error());
}

TEST_HARNESS_MAIN
