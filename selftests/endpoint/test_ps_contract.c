// SPDX-License-Identifier: GPL-2.0
/*
 * The parameter server against the PS rules of
 * Documentation/wire-protocol.rst, over real UDP on loopback: a test socket
 * plays the switch (sending COMPLETE, PARTIAL, PREEMPTED, COLLISION and
 * RESEND pieces) and four sockets play the workers that receive RESULTs.
 * Addresses are 127.X.0.0/24 with X from the pid, so parallel runs do not
 * meet.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "esa.h"
#include "esa_endpoint.h"
#include "loopback.h"

#define JOB	5
#define FAN	4

static struct sockaddr_in addr(int host)
{
	return loopback_addr(0, host);
}

static int udp(int host)
{
	struct sockaddr_in sa = addr(host);

	return esa_udp_open(&sa, false, NULL);
}

/* Send one piece from @fd to the PS: value i = base + i. */
static void send_piece(int fd, uint8_t flags, uint32_t seq, uint32_t bitmap,
		       int32_t base, unsigned n)
{
	struct sockaddr_in ps = addr(1);
	uint8_t buf[ESA_MTU];
	int32_t v[ESA_MAX_VALUES];
	struct esa_meta m = { .flags = flags, .fan_in = FAN, .priority = 3,
			      .job_id = JOB, .value_count = n, .seq = seq,
			      .agg_index = seq + 1000, .bitmap = bitmap };

	esa_wire_put(buf, &m);
	for (unsigned i = 0; i < n; i++)
		v[i] = base + (int32_t)i;
	esa_values_to_be(buf + ESA_HDR_LEN, v, n);
	sendto(fd, buf, ESA_HDR_LEN + 4 * n, 0, (struct sockaddr *)&ps, sizeof(ps));
}

FIXTURE(ps) {
	struct esa_ps *ps;
	int sw;			/* the fake switch */
	int w[FAN];		/* the workers */
};

FIXTURE_VARIANT(ps) {
	enum esa_ps_mode mode;
	bool result_on_complete;
	bool configure_workers;
};

FIXTURE_VARIANT_ADD(ps, switch_mode) {
	.mode = ESA_PS_SWITCH, .result_on_complete = true,
	.configure_workers = true,
};
FIXTURE_VARIANT_ADD(ps, switch_no_result_on_complete) {
	.mode = ESA_PS_SWITCH, .result_on_complete = false,
	.configure_workers = true,
};
FIXTURE_VARIANT_ADD(ps, host_only_learned) {
	.mode = ESA_PS_HOST_ONLY, .result_on_complete = true,
	.configure_workers = false,
};

FIXTURE_SETUP(ps)
{
	struct esa_ps_config cfg = { .bind = addr(1), .mode = variant->mode,
				     .result_on_complete = variant->result_on_complete,
				     .cache_entries = 16 };
	struct esa_ps_job_config jc = { .job_id = JOB, .fan_in = FAN };

	ASSERT_EQ(0, esa_ps_open(&cfg, &self->ps)) TH_LOG("%s", esa_last_error());
	for (int i = 0; i < FAN; i++) {
		self->w[i] = udp(10 + i);
		ASSERT_GE(self->w[i], 0);
		jc.worker[i] = addr(10 + i);
	}
	if (variant->configure_workers)
		jc.worker_known = (1u << FAN) - 1;
	ASSERT_EQ(0, esa_ps_add_job(self->ps, &jc));
	self->sw = udp(2);
	ASSERT_GE(self->sw, 0);
}

FIXTURE_TEARDOWN(ps)
{
	esa_ps_close(self->ps);
	close(self->sw);
	for (int i = 0; i < FAN; i++)
		close(self->w[i]);
}

static void pump(struct esa_ps *ps)
{
	while (esa_ps_poll(ps, 50) > 0)
		;
}

/* Worker i should (or not) get a RESULT of @seq with sum base*? */
#define EXPECT_RESULT(i, want_seq, want0) do { \
		struct esa_meta m; int32_t v[ESA_MAX_VALUES]; \
		ASSERT_EQ(1, loopback_recv(self->w[i], 500, &m, v)); \
		EXPECT_EQ(ESA_F_RESULT, m.flags); \
		EXPECT_EQ(want_seq, m.seq); \
		EXPECT_EQ(0xf, m.bitmap); \
		EXPECT_EQ(want_seq + 1000, m.agg_index); \
		EXPECT_EQ(want0, v[0]); \
	} while (0)
/* Worker i should get a pull of @want_seq asking workers @want_bitmap. */
#define EXPECT_PULL(i, want_seq, want_bitmap) do { \
		struct esa_meta m; int32_t v[ESA_MAX_VALUES]; \
		ASSERT_EQ(1, loopback_recv(self->w[i], 500, &m, v)); \
		EXPECT_EQ(ESA_F_RESULT | ESA_F_RESEND, m.flags); \
		EXPECT_EQ(want_seq, m.seq); \
		EXPECT_EQ(want_bitmap, m.bitmap); \
		EXPECT_EQ(1, m.value_count); \
	} while (0)
#define EXPECT_NO_RESULT(i) do { \
		struct esa_meta m; int32_t v[ESA_MAX_VALUES]; \
		EXPECT_EQ(0, loopback_recv(self->w[i], 20, &m, v)); \
	} while (0)

TEST_F(ps, pieces_dedupe_and_finish)
{
	struct esa_ps_stats st;
	int from0 = variant->configure_workers ? self->sw : self->w[0];

	if (!variant->configure_workers) {
		/* Host-only: every piece is a worker's own packet. */
		for (int i = 0; i < FAN - 1; i++)
			send_piece(self->w[i], 0, 1, 1u << i, 10 * (i + 1), 8);
		send_piece(self->w[1], ESA_F_RESEND, 1, 0x2, 999, 8);
		send_piece(self->w[3], 0, 1, 0x8, 40, 8);
		pump(self->ps);
		for (int i = 0; i < FAN; i++)
			EXPECT_RESULT(i, 1u, 100);
		/* The resend came before the end: duplicate, no answer. */
		for (int i = 0; i < FAN; i++)
			EXPECT_NO_RESULT(i);
		send_piece(self->w[2], ESA_F_RESEND, 1, 0x4, 999, 8);
		pump(self->ps);
		EXPECT_RESULT(2, 1u, 100);	/* only to the one asking */
		EXPECT_NO_RESULT(0);
		EXPECT_NO_RESULT(1);
		EXPECT_NO_RESULT(3);
		ASSERT_EQ(0, esa_ps_get_job_stats(self->ps, JOB, &st));
		EXPECT_EQ(4, st.rx_data);
		EXPECT_EQ(2, st.rx_resend);
		EXPECT_EQ(1, st.finished_by_ps);
		EXPECT_EQ(5, st.result_packets);
		EXPECT_EQ(1, st.resend_answers);
		return;
	}
	(void)from0;
	/* seq 1: PARTIAL {0,1} + COLLISION {2} + overlap + PREEMPTED {3}. */
	send_piece(self->sw, ESA_F_PARTIAL, 1, 0x3, 30, 8);
	send_piece(self->sw, ESA_F_PARTIAL, 1, 0x6, 5000, 8);	/* overlap */
	send_piece(self->sw, ESA_F_COLLISION, 1, 0x4, 30, 8);
	send_piece(self->sw, ESA_F_RESEND, 1, 0x1, 5000, 8);	/* dup */
	pump(self->ps);
	/* worker 0 waits for worker 3: the PS pulls it (via worker 0) */
	EXPECT_PULL(0, 1u, 0x8);
	for (int i = 0; i < FAN; i++)
		EXPECT_NO_RESULT(i);
	send_piece(self->sw, ESA_F_PREEMPTED, 1, 0x8, 40, 8);
	pump(self->ps);
	EXPECT_RESULT(0, 1u, 100);	/* to worker 0; the switch multicasts */
	for (int i = 1; i < FAN; i++)
		EXPECT_NO_RESULT(i);
	/* A RESEND of a finished sequence is answered, again via worker 0. */
	send_piece(self->sw, ESA_F_RESEND, 1, 0x4, 5000, 8);
	pump(self->ps);
	EXPECT_RESULT(0, 1u, 100);
	/* seq 2: the switch completed it. */
	send_piece(self->sw, ESA_F_COMPLETE, 2, 0xf, 77, 8);
	pump(self->ps);
	if (variant->result_on_complete)
		EXPECT_RESULT(0, 2u, 77);
	else
		EXPECT_NO_RESULT(0);
	/* ... and a late resend of it still gets its result. */
	send_piece(self->sw, ESA_F_RESEND, 2, 0x2, 1, 8);
	pump(self->ps);
	EXPECT_RESULT(0, 2u, 77);

	ASSERT_EQ(0, esa_ps_get_job_stats(self->ps, JOB, &st));
	EXPECT_EQ(2, st.rx_partial);
	EXPECT_EQ(1, st.rx_collision);
	EXPECT_EQ(1, st.rx_preempted);
	EXPECT_EQ(1, st.rx_complete);
	EXPECT_EQ(3, st.rx_resend);
	EXPECT_EQ(1, st.overlaps);
	EXPECT_EQ(3, st.duplicates);
	EXPECT_EQ(2, st.finished);
	EXPECT_EQ(1, st.finished_by_ps);
	EXPECT_EQ(2, st.resend_answers);
}

/*
 * A RESEND from a worker already in an unfinished sum: the PS asks the
 * missing workers to resend (through the switch one packet the switch
 * multicasts, host-only one per missing worker); a RESEND that adds its
 * worker asks nobody.
 */
TEST_F(ps, counted_resend_pulls_missing_workers)
{
	struct esa_ps_stats st;

	if (variant->configure_workers) {
		send_piece(self->sw, ESA_F_PARTIAL, 7, 0x3, 1, 8);
		send_piece(self->sw, ESA_F_RESEND, 7, 0x4, 1, 8); /* adds */
		pump(self->ps);
		for (int i = 0; i < FAN; i++)
			EXPECT_NO_RESULT(i);
		send_piece(self->sw, ESA_F_RESEND, 7, 0x2, 1, 8); /* counted */
		pump(self->ps);
		EXPECT_PULL(0, 7u, 0x8);
		for (int i = 0; i < FAN; i++)
			EXPECT_NO_RESULT(i);
		ASSERT_EQ(0, esa_ps_get_job_stats(self->ps, JOB, &st));
		EXPECT_EQ(1, st.pulls);
		EXPECT_EQ(0, st.result_packets);
		return;
	}
	/* host-only: workers 2 and 3 become known from packets of seq 8 */
	send_piece(self->w[2], 0, 8, 0x4, 1, 8);
	send_piece(self->w[3], 0, 8, 0x8, 1, 8);
	send_piece(self->w[0], 0, 7, 0x1, 1, 8);
	send_piece(self->w[1], 0, 7, 0x2, 1, 8);
	pump(self->ps);
	send_piece(self->w[1], ESA_F_RESEND, 7, 0x2, 1, 8);
	pump(self->ps);
	EXPECT_PULL(2, 7u, 0xc);
	EXPECT_PULL(3, 7u, 0xc);
	for (int i = 0; i < FAN; i++)
		EXPECT_NO_RESULT(i);
	ASSERT_EQ(0, esa_ps_get_job_stats(self->ps, JOB, &st));
	EXPECT_EQ(2, st.pulls);
}

TEST_F(ps, cache_is_bounded)
{
	struct esa_ps_stats st;

	/* 16 entries: seq 3 is evicted once seq 19 finished ... */
	send_piece(self->sw, ESA_F_COMPLETE, 3, 0xf, 3, 4);
	send_piece(self->sw, ESA_F_COMPLETE, 19, 0xf, 19, 4);
	send_piece(self->sw, ESA_F_RESEND, 3, 0x1, 0, 4);	/* stale */
	/* ... but an unfinished seq 4 is never overwritten by seq 20. */
	send_piece(self->sw, ESA_F_PARTIAL, 4, 0x1, 1, 4);
	send_piece(self->sw, ESA_F_PARTIAL, 20, 0x1, 0, 4);	/* conflict */
	pump(self->ps);
	ASSERT_EQ(0, esa_ps_get_job_stats(self->ps, JOB, &st));
	EXPECT_EQ(2, st.finished);
	EXPECT_EQ(1, st.stale);
	EXPECT_EQ(1, st.conflicts);
	EXPECT_EQ(0, st.resend_answers);
}

TEST_F(ps, bad_packets_counted_not_answered)
{
	struct sockaddr_in ps = addr(1);
	struct esa_ps_global_stats g;
	struct esa_ps_stats st;
	uint8_t junk[64] = { 9 };

	sendto(self->sw, junk, sizeof(junk), 0, (struct sockaddr *)&ps, sizeof(ps));
	send_piece(self->sw, ESA_F_RESULT, 1, 0xf, 0, 4);
	pump(self->ps);
	{
		/* Unknown job, and a fan-in that is not the job's. */
		uint8_t buf[ESA_MTU];
		struct esa_meta m = { .fan_in = 4, .job_id = JOB + 1,
				      .value_count = 1, .bitmap = 1 };

		esa_wire_put(buf, &m);
		sendto(self->sw, buf, ESA_HDR_LEN + 4, 0, (struct sockaddr *)&ps, sizeof(ps));
		m.job_id = JOB;
		m.fan_in = 3;
		esa_wire_put(buf, &m);
		sendto(self->sw, buf, ESA_HDR_LEN + 4, 0, (struct sockaddr *)&ps, sizeof(ps));
	}
	pump(self->ps);
	esa_ps_get_stats(self->ps, &g);
	EXPECT_EQ(4, g.rx_packets);
	EXPECT_EQ(1, g.malformed);
	EXPECT_EQ(1, g.unexpected);
	EXPECT_EQ(1, g.unknown_job);
	ASSERT_EQ(0, esa_ps_get_job_stats(self->ps, JOB, &st));
	EXPECT_EQ(1, st.bad);
	for (int i = 0; i < FAN; i++)
		EXPECT_NO_RESULT(i);
}

TEST(ps_config_errors)
{
	struct esa_ps_config cfg = { .bind = addr(3) };
	struct esa_ps_job_config jc = { .job_id = 1, .fan_in = 2 };
	struct esa_ps_stats st;
	struct esa_ps *ps;

	cfg.cache_entries = (1u << 20) + 1;
	EXPECT_EQ(-EINVAL, esa_ps_open(&cfg, &ps));
	cfg.cache_entries = 0;
	cfg.mode = 7;
	EXPECT_EQ(-EINVAL, esa_ps_open(&cfg, &ps));
	cfg.mode = ESA_PS_SWITCH;
	ASSERT_EQ(0, esa_ps_open(&cfg, &ps));
	struct esa_ps *ps2;

	EXPECT_EQ(-EADDRINUSE, esa_ps_open(&cfg, &ps2));
	EXPECT_NE(NULL, strstr(esa_last_error(), "bind"));
	ASSERT_EQ(0, esa_ps_add_job(ps, &jc));
	EXPECT_EQ(-EEXIST, esa_ps_add_job(ps, &jc));
	jc.job_id = 0;
	EXPECT_EQ(-EINVAL, esa_ps_add_job(ps, &jc));
	jc.job_id = 2;
	jc.fan_in = 33;
	EXPECT_EQ(-EINVAL, esa_ps_add_job(ps, &jc));
	EXPECT_EQ(-ENOENT, esa_ps_get_job_stats(ps, 2, &st));
	esa_ps_close(ps);
}

TEST_HARNESS_MAIN
