// SPDX-License-Identifier: GPL-2.0
/*
 * The switch completes the L4 checksum of TCP and UDP frames that hosts
 * leave to checksum offload (bpf/esa_csum.h), through BPF_PROG_TEST_RUN:
 * a CHECKSUM_PARTIAL frame (field = pseudo-header sum) of any length leaves
 * with a correct checksum and nothing else changed; correct frames (one
 * whose checksum happens to equal the pseudo-header sum included), UDP
 * without checksum, fragments and short frames leave untouched.
 */
#include <arpa/inet.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include "kselftest_harness.h"
#include "dp_util.h"

static struct esa_switch *g_sw;

/* Payload sizes around the 4-byte and 512-byte steps of the summing. */
static const __u32 sizes[] = { 0, 1, 2, 3, 5, 100, 491, 492, 493, 511, 512,
			       513, 1003, 1024, 1025, 1440, 1460, 1472 };

FIXTURE(csum) {
	struct dp_frame in, out;
};

FIXTURE_SETUP(csum)
{
	ASSERT_EQ(0, dp_reset(g_sw, ESA_POLICY_ESA, DP_SLOTS, 0));
}

FIXTURE_TEARDOWN(csum)
{
}

/* Forward @in; the output frame in @out. */
static int forward(struct dp_frame *in, struct dp_frame *out)
{
	return dp_run(g_sw, in, out);
}

/* Only the two checksum bytes differ between @a and @b. */
static int same_but_csum(const struct dp_frame *a, const struct dp_frame *b)
{
	__u32 c = dp_l4_csum_off(a);

	return a->len == b->len && !memcmp(a->buf, b->buf, c) &&
	       !memcmp(a->buf + c + 2, b->buf + c + 2, a->len - c - 2);
}

TEST_F(csum, partial_tcp_and_udp_completed)
{
	static const __u8 protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	unsigned i, k;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			if (protos[k] == IPPROTO_TCP && sizes[i] > 1460)
				continue;
			dp_build_l4(&self->in, protos[k], sizes[i], 5,
				    DP_CSUM_PARTIAL, i);
			ASSERT_EQ(0, dp_l4_csum_ok(self->in.buf, self->in.len));
			EXPECT_EQ(XDP_REDIRECT, forward(&self->in, &self->out));
			EXPECT_TRUE(dp_l4_csum_ok(self->out.buf, self->out.len))
				TH_LOG("proto %u payload %u: checksum not completed",
				       protos[k], sizes[i]);
			EXPECT_TRUE(same_but_csum(&self->in, &self->out))
				TH_LOG("proto %u payload %u: more than the checksum changed",
				       protos[k], sizes[i]);
		}
	}
	EXPECT_EQ(2 * ARRAY_SIZE(sizes) - 1,
		  dp_cnt(g_sw, 0, ESA_CNT_FORWARDED));
}

TEST_F(csum, ip_options_partial_completed)
{
	dp_build_l4(&self->in, IPPROTO_TCP, 777, 8, DP_CSUM_PARTIAL, 3);
	EXPECT_EQ(XDP_REDIRECT, forward(&self->in, &self->out));
	EXPECT_TRUE(dp_l4_csum_ok(self->out.buf, self->out.len));
	EXPECT_TRUE(same_but_csum(&self->in, &self->out));
}

TEST_F(csum, correct_frames_untouched)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		dp_build_l4(&self->in, IPPROTO_UDP, sizes[i], 5, DP_CSUM_FULL, i);
		ASSERT_TRUE(dp_l4_csum_ok(self->in.buf, self->in.len));
		EXPECT_EQ(XDP_REDIRECT, forward(&self->in, &self->out));
		EXPECT_EQ(self->in.len, self->out.len);
		EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
	}
}

/*
 * A correct TCP frame whose checksum equals the pseudo-header sum (payload
 * word 0 chosen to make it so) looks partial; completing it keeps it.
 */
TEST_F(csum, correct_frame_equal_to_pseudo_sum_kept)
{
	__u32 c, i, s, ihl_end = 14 + 20;
	__u16 pseudo, w;

	dp_build_l4(&self->in, IPPROTO_TCP, 64, 5, DP_CSUM_PARTIAL, 9);
	c = dp_l4_csum_off(&self->in);
	memcpy(&pseudo, self->in.buf + c, 2);
	/* The pseudo header plus the segment (field = pseudo, word 0 = 0) ... */
	memset(self->in.buf + ihl_end + 20, 0, 2);
	s = pseudo;
	for (i = ihl_end; i < self->in.len; i += 2) {
		memcpy(&w, self->in.buf + i, 2);
		s += w;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	/* ... and word 0 makes the total 0xffff: a correct frame. */
	w = (__u16)~s;
	memcpy(self->in.buf + ihl_end + 20, &w, 2);
	ASSERT_TRUE(dp_l4_csum_ok(self->in.buf, self->in.len));
	EXPECT_EQ(XDP_REDIRECT, forward(&self->in, &self->out));
	EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
}

TEST_F(csum, udp_without_checksum_untouched)
{
	dp_build_l4(&self->in, IPPROTO_UDP, 300, 5, DP_CSUM_NONE, 1);
	EXPECT_EQ(XDP_REDIRECT, forward(&self->in, &self->out));
	EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
}

TEST_F(csum, fragments_untouched)
{
	dp_build_l4(&self->in, IPPROTO_UDP, 300, 5, DP_CSUM_PARTIAL, 1);
	self->in.buf[20] = 0x20;		/* MF, offset 0 */
	EXPECT_EQ(XDP_REDIRECT, forward(&self->in, &self->out));
	EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
}

TEST_F(csum, short_frame_untouched)
{
	dp_build_l4(&self->in, IPPROTO_TCP, 300, 5, DP_CSUM_PARTIAL, 1);
	self->in.len -= 10;			/* IP total length beyond it */
	EXPECT_EQ(XDP_REDIRECT, forward(&self->in, &self->out));
	EXPECT_EQ(0, memcmp(self->in.buf, self->out.buf, self->in.len));
}

/* Ethernet padding after the IP datagram is not summed. */
TEST_F(csum, padded_frame_summed_to_ip_length)
{
	dp_build_l4(&self->in, IPPROTO_UDP, 2, 5, DP_CSUM_PARTIAL, 1);
	memset(self->in.buf + self->in.len, 0xa5, 60 - self->in.len);
	self->in.len = 60;
	EXPECT_EQ(XDP_REDIRECT, forward(&self->in, &self->out));
	EXPECT_TRUE(dp_l4_csum_ok(self->out.buf, self->out.len));
	EXPECT_TRUE(same_but_csum(&self->in, &self->out));
}

int main(int argc, char **argv)
{
	struct esa_switch_opts o = { .agg_capacity = DP_SLOTS };
	int err = esa_switch_load(&g_sw, &o);

	if (err) {
		fprintf(stderr, "load the data plane: %s\n", strerror(-err));
		return 1;
	}
	err = test_harness_run(argc, argv);
	esa_switch_close(g_sw);
	return err;
}
