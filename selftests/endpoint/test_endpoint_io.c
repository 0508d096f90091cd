// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoints' batched UDP (tools/lib/esa_endpoint_sock.c) over
 * loopback: a queue of datagrams to two receivers, interleaved, of mixed
 * sizes, leaves in one sendmmsg as GSO runs (per destination, in queue
 * order; a shorter datagram ends a run; at most 64 KiB a run); a receiver
 * with UDP GRO gets the runs as few messages and esa_rxq_next() hands out
 * every datagram exactly as sent, in order; a receiver without GRO gets
 * them one by one. Empty datagrams come out once, as themselves.
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

#define FULL	(ESA_HDR_LEN + 4 * ESA_MAX_VALUES)	/* 1472 bytes */

static struct sockaddr_in addr(int host)
{
	return loopback_addr(3, host);
}

/* Datagram @i's bytes: its length and a pattern of its index. */
static size_t fill(uint8_t *buf, unsigned i, size_t len)
{
	for (size_t k = 0; k < len; k++)
		buf[k] = (uint8_t)(i * 31 + k);
	return len;
}

struct plan {
	int	to;		/* receiver host */
	size_t	len;
};

/*
 * 64 datagrams, receivers 2 and 3 alternating where both have some:
 * to 2, 50 full ones (a run of 44, the 64 KiB limit, then 6), one of 100
 * bytes (ends that run), four of 24 (a pull's size); to 3, 9 full ones.
 */
static unsigned make_plan(struct plan *p)
{
	unsigned n = 0, a = 0, b = 0;

	while (a < 55 || b < 9) {
		if (a < 55) {
			p[n].to = 2;
			p[n++].len = a < 50 ? FULL : a == 50 ? 100 : 24;
			a++;
		}
		if (b < 9) {
			p[n].to = 3;
			p[n++].len = FULL;
			b++;
		}
	}
	return n;
}

static int wait_in(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, ms);
}

TEST(gso_runs_leave_together_and_arrive_as_sent)
{
	struct sockaddr_in a_tx = addr(1), a_gro = addr(2), a_plain = addr(3);
	struct plan plan[ESA_BATCH];
	static struct esa_txq q;
	struct esa_rxq rq;
	unsigned n = make_plan(plan), got_gro = 0, got_plain = 0, msgs = 0;
	int tx, gro, plain;
	bool gso;

	ASSERT_EQ(ESA_BATCH, n);
	tx = esa_udp_open(&a_tx, true, &gso);
	ASSERT_LE(0, tx);
	ASSERT_TRUE(gso);	/* every kernel we support has UDP GSO */
	gro = esa_udp_open(&a_gro, false, NULL);
	ASSERT_LE(0, gro);
	ASSERT_EQ(0, esa_rxq_init(&rq, gro));
	plain = esa_udp_open(&a_plain, false, NULL);
	ASSERT_LE(0, plain);

	esa_txq_init(&q, tx, gso);
	for (unsigned i = 0; i < n; i++) {
		struct sockaddr_in to = addr(plan[i].to);
		uint8_t *buf;

		ASSERT_EQ(0, esa_txq_next(&q, &to, &buf));
		esa_txq_commit(&q, fill(buf, i, plan[i].len));
	}
	ASSERT_EQ(0, esa_txq_flush(&q));
	EXPECT_EQ(1, q.batches);	/* one sendmmsg */
	EXPECT_EQ(0, q.drops);

	/* Receiver 2 (GRO): its 55 datagrams, in queue order, intact. */
	for (unsigned i = 0; i < n && got_gro < 55; i++) {
		const struct sockaddr_in *from;
		const uint8_t *buf;
		uint8_t want[FULL];
		size_t len;

		if (plan[i].to != 2)
			continue;
		while (!esa_rxq_next(&rq, &buf, &len, &from)) {
			ASSERT_LT(0, esa_rxq_recv(&rq, 5000000000ll));
			msgs += rq.n;
		}
		fill(want, i, plan[i].len);
		ASSERT_EQ(plan[i].len, len);
		ASSERT_EQ(0, memcmp(want, buf, len));
		EXPECT_EQ(a_tx.sin_addr.s_addr, from->sin_addr.s_addr);
		EXPECT_EQ(a_tx.sin_port, from->sin_port);
		got_gro++;
	}
	EXPECT_EQ(55, got_gro);
	/* Runs arrived as runs: 3 here (44, 6 + 1, 4), far fewer than 55. */
	EXPECT_GE(5, msgs);
	ASSERT_EQ(0, wait_in(gro, 100));	/* and nothing else */

	/* Receiver 3 (no GRO): its 9 datagrams one by one, intact. */
	for (unsigned i = 0; i < n; i++) {
		uint8_t want[FULL], buf[ESA_RX_BUFSZ];
		ssize_t len;

		if (plan[i].to != 3)
			continue;
		ASSERT_EQ(1, wait_in(plain, 5000));
		len = recv(plain, buf, sizeof(buf), 0);
		fill(want, i, plan[i].len);
		ASSERT_EQ((ssize_t)plan[i].len, len);
		ASSERT_EQ(0, memcmp(want, buf, len));
		got_plain++;
	}
	EXPECT_EQ(9, got_plain);
	ASSERT_EQ(0, wait_in(plain, 100));

	esa_rxq_free(&rq);
	close(tx);
	close(gro);
	close(plain);
}

TEST(single_and_empty_datagrams_come_out_once)
{
	struct sockaddr_in a_tx = addr(4), a_rx = addr(5);
	const struct sockaddr_in *from;
	static struct esa_txq q;
	struct esa_rxq rq;
	const uint8_t *buf;
	size_t len;
	int tx, rx;
	bool gso;

	/* Without GSO: checksum 0, one datagram per message. */
	tx = esa_udp_open(&a_tx, false, &gso);
	ASSERT_LE(0, tx);
	ASSERT_FALSE(gso);
	rx = esa_udp_open(&a_rx, false, NULL);
	ASSERT_LE(0, rx);
	ASSERT_EQ(0, esa_rxq_init(&rq, rx));
	esa_txq_init(&q, tx, gso);
	for (unsigned i = 0; i < 3; i++) {
		uint8_t *b;

		ASSERT_EQ(0, esa_txq_next(&q, &a_rx, &b));
		esa_txq_commit(&q, fill(b, i, i == 1 ? 0 : 5));
	}
	ASSERT_EQ(0, esa_txq_flush(&q));

	for (unsigned i = 0; i < 3; i++) {
		uint8_t want[5];

		while (!esa_rxq_next(&rq, &buf, &len, &from))
			ASSERT_LT(0, esa_rxq_recv(&rq, 5000000000ll));
		ASSERT_EQ(i == 1 ? 0u : 5u, len);
		fill(want, i, len);
		ASSERT_EQ(0, memcmp(want, buf, len));
	}
	ASSERT_FALSE(esa_rxq_next(&rq, &buf, &len, &from));
	ASSERT_EQ(0, wait_in(rx, 100));
	esa_rxq_free(&rq);
	close(tx);
	close(rx);
}

TEST_HARNESS_MAIN
