// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the libesa endpoint logic that needs no network: cutting
 * tensors into packets, aggregator indices, the wire checks, float32 fixed
 * point and its overflow markers, the PS merge rules, argument parsing and
 * the endpoint's configuration errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "esa.h"
#include "esa_endpoint.h"
#include "esa_parse.h"

TEST(chunks_cover_tensor_once)
{
	const unsigned vpps[] = { 1, 64, 363 };
	const size_t counts[] = { 1, 363, 364, 1000, 262144 };

	for (unsigned a = 0; a < 3; a++) {
		for (unsigned b = 0; b < 5; b++) {
			size_t n = esa_chunk_count(counts[b], vpps[a]);
			size_t next = 0, off;
			unsigned len;

			for (size_t i = 0; i < n; i++) {
				esa_chunk_range(i, counts[b], vpps[a], &off, &len);
				ASSERT_EQ(next, off);
				ASSERT_GE(len, 1);
				ASSERT_LE(len, vpps[a]);
				if (i + 1 < n)
					ASSERT_EQ(vpps[a], len);
				next = off + len;
			}
			ASSERT_EQ(counts[b], next);
		}
	}
	ASSERT_EQ(3, esa_chunk_count(1000, 363));
}

TEST(agg_index_in_range_and_distinct_in_window)
{
	/* Any window of `span` consecutive sequences uses distinct slots. */
	uint32_t slots = 100, offset = 90, span = 16;
	uint8_t seen[100];

	for (uint32_t base = 0xfffffff0u; base != 40; base++) {
		memset(seen, 0, sizeof(seen));
		for (uint32_t s = 0; s < span; s++) {
			uint32_t idx = esa_agg_index(slots, offset, span, base + s);

			ASSERT_LT(idx, slots);
			ASSERT_EQ(0, seen[idx]);
			seen[idx] = 1;
		}
	}
	/* Wraps around the end of the index space. */
	ASSERT_EQ(90, esa_agg_index(100, 90, 16, 0));
	ASSERT_EQ(5, esa_agg_index(100, 90, 16, 15));
}

static size_t mkpkt(uint8_t *buf, const struct esa_meta *m)
{
	esa_wire_put(buf, m);
	memset(buf + ESA_HDR_LEN, 0, 4u * m->value_count);
	return ESA_HDR_LEN + 4u * m->value_count;
}

TEST(wire_roundtrip_and_rejects)
{
	struct esa_meta m = { .flags = ESA_F_PARTIAL | ESA_F_RESEND, .fan_in = 4,
			      .priority = 7, .job_id = 1023, .value_count = 363,
			      .seq = 0xdeadbeef, .agg_index = 65535,
			      .bitmap = 0x5 }, r, bad;
	uint8_t buf[ESA_RX_BUFSZ];
	size_t len = mkpkt(buf, &m);

	ASSERT_EQ(ESA_HDR_LEN + 4 * 363, len);
	ASSERT_EQ(0, esa_wire_parse(buf, len, &r));
	/* Field by field: the struct has padding. */
	ASSERT_EQ(m.flags, r.flags);
	ASSERT_EQ(m.fan_in, r.fan_in);
	ASSERT_EQ(m.priority, r.priority);
	ASSERT_EQ(m.job_id, r.job_id);
	ASSERT_EQ(m.value_count, r.value_count);
	ASSERT_EQ(m.seq, r.seq);
	ASSERT_EQ(m.agg_index, r.agg_index);
	ASSERT_EQ(m.bitmap, r.bitmap);
	/* Byte layout of the contract: big-endian seq at offset 8. */
	ASSERT_EQ(0xde, buf[8]);
	ASSERT_EQ(0xef, buf[11]);

	ASSERT_EQ(-EBADMSG, esa_wire_parse(buf, len - 1, &r));
	ASSERT_EQ(-EBADMSG, esa_wire_parse(buf, len + 4, &r));
	ASSERT_EQ(-EBADMSG, esa_wire_parse(buf, 10, &r));
	buf[0] = 2;
	ASSERT_EQ(-EBADMSG, esa_wire_parse(buf, len, &r));

#define REJECT(field, val) do { \
		bad = m; bad.field = (val); \
		len = mkpkt(buf, &bad); \
		EXPECT_EQ(-EBADMSG, esa_wire_parse(buf, len, &r)); \
	} while (0)
	REJECT(value_count, 0);
	REJECT(value_count, 364);
	REJECT(job_id, 0);
	REJECT(job_id, 1024);
	REJECT(fan_in, 0);
	REJECT(fan_in, 33);
	REJECT(bitmap, 0);
	REJECT(bitmap, 0x10);		/* bit 4 with fan_in 4 */
	bad = m;
	bad.fan_in = 32;
	bad.bitmap = 0x80000000u;
	len = mkpkt(buf, &bad);
	EXPECT_EQ(0, esa_wire_parse(buf, len, &r));
}

TEST(values_are_big_endian)
{
	int32_t in[3] = { 1, -2, INT32_MIN }, out[3];
	uint8_t be[12];

	esa_values_to_be(be, in, 3);
	ASSERT_EQ(0x00, be[0]);
	ASSERT_EQ(0x01, be[3]);
	ASSERT_EQ(0xff, be[4]);
	ASSERT_EQ(0xfe, be[7]);
	ASSERT_EQ(0x80, be[8]);
	esa_values_from_be(out, be, 3);
	ASSERT_EQ(0, memcmp(in, out, sizeof(in)));
}

TEST(saturating_add)
{
	bool ovf = false;

	ASSERT_EQ(5, esa_sat_add(2, 3, &ovf));
	ASSERT_FALSE(ovf);
	ASSERT_EQ(INT32_MAX, esa_sat_add(INT32_MAX, 1, &ovf));
	ASSERT_TRUE(ovf);
	ovf = false;
	ASSERT_EQ(INT32_MIN, esa_sat_add(INT32_MIN, -1, &ovf));
	ASSERT_TRUE(ovf);
	ovf = false;
	ASSERT_EQ(-1, esa_sat_add(INT32_MAX, INT32_MIN, &ovf));
	ASSERT_FALSE(ovf);
}

TEST(f32_quantise_error_bound)
{
	float in[256], out[256];
	int32_t q[256];
	int k = 16;

	for (int i = 0; i < 256; i++)
		in[i] = (float)sin(i * 0.37) * 3.0f;
	ASSERT_EQ(0, esa_f32_quantise(in, 256, k, 4, q));
	ASSERT_FALSE(esa_f32_overflowed(q, 256, 4, 0));
	esa_f32_dequantise(q, 256, k, out);
	for (int i = 0; i < 256; i++)
		ASSERT_LE(fabs((double)out[i] - in[i]),
			  ldexp(1, -k - 1) + fabs(in[i]) * 0x1p-23);
	/* Negative scales quantise big values coarsely. */
	in[0] = 1e12f;
	ASSERT_EQ(1, esa_f32_quantise(in, 1, 16, 4, q));
	ASSERT_EQ(INT32_MAX, q[0]);
	ASSERT_EQ(0, esa_f32_quantise(in, 1, -16, 4, q));
	esa_f32_dequantise(q, 1, -16, out);
	ASSERT_LE(fabs((double)out[0] - 1e12), ldexp(1, 15));
}

/*
 * A value beyond the limit quantises to the overflow marker whatever its
 * sign: a large negative one left as it is could cancel another worker's
 * marker back into the legal range, and converting a double beyond the
 * int32 range to int32 is undefined.
 */
TEST(f32_quantise_marks_both_signs)
{
	for (unsigned fan = 1; fan <= 32; fan *= 2) {
		double lim = esa_f32_limit(fan);
		const float in[] = { 1e12f, -1e12f, (float)(1.5 * lim),
				     (float)(-1.5 * lim), (float)(0.5 * lim),
				     (float)(-0.5 * lim), -0.0f };
		int32_t q[7];

		ASSERT_EQ(4, esa_f32_quantise(in, 7, 0, fan, q)) TH_LOG("fan-in %u", fan);
		for (int i = 0; i < 4; i++) {
			EXPECT_EQ(INT32_MAX, q[i]) TH_LOG("fan-in %u, value %d", fan, i);
		}
		EXPECT_EQ((int32_t)nearbyint(in[4]), q[4]);
		EXPECT_EQ((int32_t)nearbyint(in[5]), q[5]);
		EXPECT_EQ(0, q[6]);
		/* one marker among the most negative legal contributions */
		ASSERT_TRUE(esa_f32_overflowed(q, 4, fan, 0));
	}
}

TEST(f32_marker_always_detected)
{
	/*
	 * One marker plus the most negative legitimate contributions of
	 * everyone else, in any order of saturating adds, stays beyond the
	 * legitimate range; the largest legitimate sums stay within it.
	 */
	for (unsigned fan = 1; fan <= 32; fan++) {
		int32_t lim = esa_f32_limit(fan), s;
		bool ovf = false;

		s = INT32_MAX;
		for (unsigned w = 1; w < fan; w++)
			s = esa_sat_add(s, -lim, &ovf);
		ASSERT_TRUE(esa_f32_overflowed(&s, 1, fan, 0));
		s = 0;
		for (unsigned w = 1; w < fan; w++)
			s = esa_sat_add(s, -lim, &ovf);
		s = esa_sat_add(s, INT32_MAX, &ovf);
		ASSERT_TRUE(esa_f32_overflowed(&s, 1, fan, 0));
		s = 0;
		for (unsigned w = 0; w < fan; w++)
			s = esa_sat_add(s, -lim, &ovf);
		ASSERT_FALSE(esa_f32_overflowed(&s, 1, fan, 0));
		s = 0;
		for (unsigned w = 0; w < fan; w++)
			s = esa_sat_add(s, lim, &ovf);
		ASSERT_FALSE(esa_f32_overflowed(&s, 1, fan, 0));
		ASSERT_FALSE(ovf);
		ASSERT_TRUE(esa_f32_overflowed(&s, 1, fan, ESA_F_OVERFLOW));
	}
}

TEST(f32_non_finite_is_marker)
{
	/* At any scale, the floor included: NaN and infinities are markers. */
	const float in[4] = { NAN, INFINITY, -INFINITY, 1.0f };
	const int scales[] = { ESA_F32_SCALE_LOG2_DEFAULT, 0,
			       ESA_F32_SCALE_LOG2_MIN };
	int32_t out[4];

	for (unsigned k = 0; k < 3; k++) {
		EXPECT_EQ(3, esa_f32_quantise(in, 4, scales[k], 4, out));
		for (unsigned i = 0; i < 3; i++)
			EXPECT_EQ(INT32_MAX, out[i]);
	}
	/* The largest float still fits at the floor: only these overflow. */
	const float big[2] = { FLT_MAX, -FLT_MAX };

	EXPECT_EQ(0, esa_f32_quantise(big, 2, ESA_F32_SCALE_LOG2_MIN, 32, out));
}

/* A piece of a 4-worker job with workers @bitmap, value i = base + i. */
static void piece(struct esa_meta *m, uint8_t *vals, uint8_t flags,
		  uint32_t bitmap, int32_t base, unsigned n)
{
	int32_t v[ESA_MAX_VALUES];

	*m = (struct esa_meta){ .flags = flags, .fan_in = 4, .job_id = 3,
				.value_count = n, .seq = 77, .agg_index = 9,
				.bitmap = bitmap };
	for (unsigned i = 0; i < n; i++)
		v[i] = base + (int32_t)i;
	esa_values_to_be(vals, v, n);
}

/* esa_entry_merge()'s verdict on a piece() into @e of a 4-worker job. */
static int merge(struct esa_entry *e, uint8_t flags, uint32_t bitmap,
		 int32_t base, unsigned n)
{
	uint8_t vals[4 * ESA_MAX_VALUES];
	struct esa_meta m;

	piece(&m, vals, flags, bitmap, base, n);
	return esa_entry_merge(e, 0xf, &m, vals);
}

TEST(merge_rules)
{
	static struct esa_entry e;

	esa_entry_reset(&e, 77);
	ASSERT_EQ(ESA_MERGE_ADDED, merge(&e, ESA_F_PARTIAL, 0x3, 100, 8));
	/* Subset of C: duplicate. */
	ASSERT_EQ(ESA_MERGE_DUPLICATE, merge(&e, ESA_F_RESEND, 0x1, 5000, 8));
	/* Partial overlap: ignored, sum untouched. */
	ASSERT_EQ(ESA_MERGE_OVERLAP, merge(&e, ESA_F_PREEMPTED, 0x6, 5000, 8));
	ASSERT_EQ(100, e.sum[0]);
	/* Wrong size for this sequence. */
	ASSERT_EQ(ESA_MERGE_BAD, merge(&e, ESA_F_COLLISION, 0x4, 1, 9));
	/* Worker beyond the job. */
	ASSERT_EQ(ESA_MERGE_BAD, merge(&e, ESA_F_COLLISION, 0x10, 1, 8));
	/* Disjoint: added. */
	ASSERT_EQ(ESA_MERGE_ADDED, merge(&e, ESA_F_COLLISION, 0x4, 10, 8));
	ASSERT_EQ(ESA_MERGE_FINISHED, merge(&e, ESA_F_RESEND, 0x8, 1, 8));
	ASSERT_EQ(ESA_ENTRY_DONE, e.state);
	ASSERT_EQ(0xf, e.bitmap);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(111 + 3 * i, e.sum[i]);
	ASSERT_EQ(0, e.overflow);
	/* Anything after the end is a duplicate. */
	ASSERT_EQ(ESA_MERGE_DUPLICATE, merge(&e, ESA_F_RESEND, 0x8, 1, 8));
	ASSERT_EQ(ESA_MERGE_DUPLICATE, merge(&e, ESA_F_COMPLETE, 0xf, 1, 8));
	ASSERT_EQ(111, e.sum[0]);
}

TEST(merge_complete_is_final)
{
	static struct esa_entry e;

	esa_entry_reset(&e, 77);
	ASSERT_EQ(ESA_MERGE_ADDED, merge(&e, ESA_F_RESEND, 0x1, 1000, 4));
	/* A COMPLETE that does not name every worker is malformed. */
	ASSERT_EQ(ESA_MERGE_BAD, merge(&e, ESA_F_COMPLETE, 0x7, 1, 4));
	ASSERT_EQ(ESA_MERGE_FINISHED,
		  merge(&e, ESA_F_COMPLETE | ESA_F_OVERFLOW, 0xf, 42, 4));
	ASSERT_EQ(42, e.sum[0]);
	ASSERT_EQ(45, e.sum[3]);
	ASSERT_EQ(1, e.overflow);
}

TEST(merge_saturates_and_flags_overflow)
{
	static struct esa_entry e;
	uint8_t vals[4 * ESA_MAX_VALUES];
	struct esa_meta m;

	esa_entry_reset(&e, 77);
	piece(&m, vals, 0, 0x1, INT32_MAX - 1, 1);
	ASSERT_EQ(ESA_MERGE_ADDED, esa_entry_merge(&e, 0x3, &m, vals));
	piece(&m, vals, 0, 0x2, 5, 1);
	m.fan_in = 2;
	ASSERT_EQ(ESA_MERGE_FINISHED, esa_entry_merge(&e, 0x3, &m, vals));
	ASSERT_EQ(INT32_MAX, e.sum[0]);
	ASSERT_EQ(1, e.overflow);
}

TEST(parse_addr)
{
	struct sockaddr_in sa;

	ASSERT_EQ(0, esa_parse_addr("10.1.2.3", 47000, &sa));
	ASSERT_EQ(47000, ntohs(sa.sin_port));
	ASSERT_EQ(htonl(0x0a010203), sa.sin_addr.s_addr);
	ASSERT_EQ(0, esa_parse_addr("10.1.2.3:9", 47000, &sa));
	ASSERT_EQ(9, ntohs(sa.sin_port));
	/* Decimal ports: leading zeros mean nothing, no base prefix. */
	ASSERT_EQ(0, esa_parse_addr("10.1.2.3:047000", 1, &sa));
	ASSERT_EQ(47000, ntohs(sa.sin_port));
	EXPECT_EQ(-EINVAL, esa_parse_addr("10.1.2.3:0x10", 1, &sa));
	ASSERT_NE(NULL, strstr(esa_last_error(), "bad port in '10.1.2.3:0x10': '0x10' is not a decimal integer in 1..65535"));
	EXPECT_EQ(-EINVAL, esa_parse_addr("10.1.2", 1, &sa));
	ASSERT_NE(NULL, strstr(esa_last_error(), "bad IPv4 address '10.1.2'"));
	EXPECT_EQ(-EINVAL, esa_parse_addr("010.1.2.3", 1, &sa));
	EXPECT_EQ(-EINVAL, esa_parse_addr("10.1.2.3:", 1, &sa));
	EXPECT_EQ(-EINVAL, esa_parse_addr("10.1.2.3:0", 1, &sa));
	EXPECT_EQ(-EINVAL, esa_parse_addr("10.1.2.3:65536", 1, &sa));
	EXPECT_EQ(-EINVAL, esa_parse_addr("10.1.2.3:9x", 1, &sa));
	EXPECT_EQ(-EINVAL, esa_parse_addr("10.1.2.3:-9", 1, &sa));
	EXPECT_EQ(-EINVAL, esa_parse_addr("", 1, &sa));
	ASSERT_NE(NULL, strstr(esa_last_error(), "empty"));
	/* Default port 0: port 0, which the configs read as ESA_UDP_PORT. */
	ASSERT_EQ(0, esa_parse_addr("10.1.2.3", 0, &sa));
	ASSERT_EQ(0, sa.sin_port);
	/* aggctl's: the port is required. */
	EXPECT_EQ(-EINVAL, esa_parse_addr_port("10.1.2.3", &sa));
	ASSERT_NE(NULL, strstr(esa_last_error(), "'10.1.2.3' has no port (ADDR:PORT)"));
	ASSERT_EQ(0, esa_parse_addr_port("10.1.2.3:05", &sa));
	ASSERT_EQ(5, ntohs(sa.sin_port));
}

TEST(parse_numbers)
{
	uint64_t v;
	uint32_t u;
	uint16_t port;
	int64_t s;
	double d;

	/* "010" is ten, never eight; "0x10" is no number at all. */
	ASSERT_EQ(0, esa_parse_u64("010", 0, 100, &v));
	ASSERT_EQ(10, v);
	EXPECT_EQ(-EINVAL, esa_parse_u64("0x10", 0, 100, &v));
	ASSERT_NE(NULL, strstr(esa_last_error(), "'0x10' is not a decimal integer in 0..100"));
	EXPECT_EQ(-EINVAL, esa_parse_u64("1e3", 0, 10000, &v));
	EXPECT_EQ(-EINVAL, esa_parse_u64(" 1", 0, 100, &v));
	EXPECT_EQ(-EINVAL, esa_parse_u64("+1", 0, 100, &v));
	EXPECT_EQ(-EINVAL, esa_parse_u64("", 0, 100, &v));
	EXPECT_EQ(-EINVAL, esa_parse_u64("18446744073709551616", 0, UINT64_MAX, &v));
	ASSERT_EQ(0, esa_parse_u64("18446744073709551615", 0, UINT64_MAX, &v));
	ASSERT_EQ(UINT64_MAX, v);
	EXPECT_EQ(-EINVAL, esa_parse_u64("12abc", 1, 100, &v));
	EXPECT_EQ(-EINVAL, esa_parse_u64("101", 1, 100, &v));
	EXPECT_EQ(-EINVAL, esa_parse_u64("-5", 1, 100, &v));
	EXPECT_EQ(-EINVAL, esa_parse_u32("0", 1, 1023, &u));
	ASSERT_EQ(0, esa_parse_u32("01023", 1, 1023, &u));
	ASSERT_EQ(1023, u);
	ASSERT_EQ(0, esa_parse_s64("-20", -120, 62, &s));
	ASSERT_EQ(-20, s);
	ASSERT_EQ(0, esa_parse_s64("-9223372036854775808", INT64_MIN, 0, &s));
	ASSERT_EQ(INT64_MIN, s);
	EXPECT_EQ(-EINVAL, esa_parse_s64("-0x1", -120, 62, &s));
	EXPECT_EQ(-EINVAL, esa_parse_s64("--1", -120, 62, &s));
	EXPECT_EQ(-EINVAL, esa_parse_s64("-", -120, 62, &s));
	ASSERT_EQ(0, esa_parse_size("64M", 4, 1ull << 40, &v));
	ASSERT_EQ(64ull << 20, v);
	ASSERT_EQ(0, esa_parse_size("4096", 4, 1ull << 40, &v));
	ASSERT_EQ(4096, v);
	ASSERT_EQ(0, esa_parse_size("010K", 4, 1ull << 40, &v));
	ASSERT_EQ(10240, v);
	EXPECT_EQ(-EINVAL, esa_parse_size("0x10K", 4, 1ull << 40, &v));
	EXPECT_EQ(-EINVAL, esa_parse_size("1T", 4, 1ull << 40, &v));
	EXPECT_EQ(-EINVAL, esa_parse_size("-1", 4, 1ull << 40, &v));
	EXPECT_EQ(-EINVAL, esa_parse_size("2", 4, 1ull << 40, &v));
	ASSERT_EQ(0, esa_parse_double("1.5e2", 0, 1e30, &d));
	ASSERT_EQ(150, d);
	EXPECT_EQ(-EINVAL, esa_parse_double("nan", 0, 1e30, &d));
	EXPECT_EQ(-EINVAL, esa_parse_double("inf", 0, 1e30, &d));
	EXPECT_EQ(-EINVAL, esa_parse_double("0x1p3", 0, 1e30, &d));
	EXPECT_EQ(-EINVAL, esa_parse_double("1e31", 0, 1e30, &d));
	ASSERT_EQ(0, esa_parse_port("047000", &port));
	ASSERT_EQ(47000, port);
	EXPECT_EQ(-EINVAL, esa_parse_port("0", &port));
	EXPECT_EQ(-EINVAL, esa_parse_port("65536", &port));
}

static struct esa_endpoint_config good_cfg(void)
{
	struct esa_endpoint_config c = { .job_id = 1, .worker_id = 0,
					 .fan_in = 2, .agg_slots = 64 };

	esa_parse_addr("127.0.0.1", 47000, &c.ps);
	/* An address of its own: port 0 means ESA_UDP_PORT. */
	esa_parse_addr("127.0.83.1", 1, &c.self);
	c.self.sin_port = 0;
	return c;
}

TEST(endpoint_config_errors)
{
	struct esa_endpoint_config c;
	struct esa_endpoint *ep;

#define BAD_CFG(stmt, what) do { \
		c = good_cfg(); stmt; \
		EXPECT_EQ(-EINVAL, esa_endpoint_open(&c, &ep)); \
		EXPECT_EQ(NULL, ep); \
		EXPECT_NE(NULL, strstr(esa_last_error(), what)); \
	} while (0)
	BAD_CFG(c.job_id = 0, "job id");
	BAD_CFG(c.job_id = 1024, "job id");
	BAD_CFG(c.fan_in = 0, "fan-in");
	BAD_CFG(c.fan_in = 33, "fan-in");
	BAD_CFG(c.worker_id = 2, "worker id");
	BAD_CFG(memset(&c.ps, 0, sizeof(c.ps)), "parameter server");
	BAD_CFG(c.agg_slots = 0, "slots");
	BAD_CFG(c.agg_slots = ESA_MAX_AGGREGATORS + 1, "slots");
	BAD_CFG(c.agg_offset = 64, "offset");
	BAD_CFG(c.agg_span = 65, "span");
	BAD_CFG(c.values_per_packet = 364, "values per packet");
	BAD_CFG((c.scale_log2 = 63, c.scale_log2_set = true), "scale");

	/* Binding an address this host does not have fails cleanly. */
	c = good_cfg();
	esa_parse_addr("192.0.2.1:47000", 1, &c.self);
	EXPECT_EQ(-EADDRNOTAVAIL, esa_endpoint_open(&c, &ep));
	EXPECT_NE(NULL, strstr(esa_last_error(), "bind 192.0.2.1:47000"));

	/* Defaults are filled in. */
	c = good_cfg();
	ASSERT_EQ(0, esa_endpoint_open(&c, &ep));
	struct esa_endpoint_config eff;

	esa_endpoint_get_config(ep, &eff);
	EXPECT_EQ(128, eff.window);
	EXPECT_EQ(64, eff.agg_span);
	EXPECT_EQ(ESA_MAX_VALUES, eff.values_per_packet);
	EXPECT_EQ(ESA_F32_SCALE_LOG2_DEFAULT, eff.scale_log2);
	/* Empty tensors are refused before anything is sent. */
	float nanv[2] = { 1.0f, NAN };
	struct esa_endpoint_stats st;

	EXPECT_EQ(-EINVAL, esa_allreduce_f32(ep, nanv, 0));
	EXPECT_NE(NULL, strstr(esa_last_error(), "empty"));
	EXPECT_EQ(-EINVAL, esa_allreduce_i32(ep, (int32_t *)nanv, 0));
	esa_endpoint_get_stats(ep, &st);
	EXPECT_EQ(0, st.packets_sent);
	esa_endpoint_close(ep);
}

/* The likely cause of a silence, strongest evidence first. */
TEST(diag_causes)
{
	struct esa_endpoint_config c = good_cfg();
	struct esa_icmp_seen icmp = { 0 };
	struct esa_diag d = { 0 };
	char why[512];

	esa_parse_addr_port("10.1.0.9:47000", &c.ps);
	esa_parse_addr_port("10.1.0.1:47001", &c.self);
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	ASSERT_NE(NULL, strstr(why, "nothing of job 1 came back since its first packet: the switch may not know this worker as 10.1.0.1:47001"));
	d.replies = 5;
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	ASSERT_NE(NULL, strstr(why, "results of job 1 stopped coming: another worker of the job stopped sending"));
	esa_parse_addr_port("10.1.0.9:47010", &c.ps);
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	ASSERT_NE(NULL, strstr(why, "the PS port 47010 is not 47000"));
	icmp.host_unreachable = 1;
	inet_pton(AF_INET, "10.1.0.254", &icmp.from);
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	ASSERT_NE(NULL, strstr(why, "no path to the PS 10.1.0.9:47010 ('host unreachable' from 10.1.0.254)"));
	/* Port unreachable counts only from the PS's own host. */
	icmp.port_unreachable = 1;
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	ASSERT_EQ(NULL, strstr(why, "is not running"));
	icmp.from = c.ps.sin_addr;
	esa_diag_cause(&d, &icmp, &c, why, sizeof(why));
	ASSERT_NE(NULL, strstr(why, "the PS 10.1.0.9:47010 is not running: its host answers 'port unreachable'"));
}

static void drop_all(void *ctx, const struct sockaddr_in *to,
		     const uint8_t *buf, size_t len)
{
}

struct quiet_log {
	int	calls;
	char	why[512];
};

static void on_quiet(void *arg, const char *why)
{
	struct quiet_log *l = arg;

	l->calls++;
	snprintf(l->why, sizeof(l->why), "%s", why);
}

static void i32_nop_load(void *ctx, size_t off, unsigned n, int32_t *vals)
{
	memset(vals, 0, n * sizeof(*vals));
}

static bool i32_nop_store(void *ctx, size_t off, unsigned n,
			  const int32_t *sum, uint8_t flags)
{
	return false;
}

/*
 * A worker that hears nothing reports it once per silence, after the
 * time it was given, and again after a packet of its job ended the last.
 */
TEST(quiet_reported_once_per_silence)
{
	const struct esa_values_io io = { i32_nop_load, i32_nop_store, NULL };
	struct esa_endpoint_config c = good_cfg();
	struct quiet_log log = { 0 };
	const uint64_t t0 = 1000000000ull, quiet = 2000000000ull;
	struct esa_endpoint *ep;
	uint8_t pull[ESA_HDR_LEN + 4] = { 0 };
	struct esa_meta m = {
		.flags = ESA_F_RESULT | ESA_F_RESEND, .fan_in = 2, .job_id = 1,
		.value_count = 1, .seq = 0, .bitmap = 0x2,
	};
	uint64_t dl;

	c.max_resends = 1000;
	ASSERT_EQ(0, esa_endpoint_new(&c, drop_all, NULL, &ep));
	esa_endpoint_on_quiet(ep, 2000, on_quiet, &log);
	ASSERT_EQ(0, esa_step_begin(ep, 64, &io));
	ASSERT_EQ(0, esa_step_send(ep, t0, &dl));
	/* It wakes for the report, not only for its resends. */
	ASSERT_LE(dl, t0 + quiet);
	ASSERT_EQ(0, esa_step_send(ep, t0 + quiet - 1, &dl));
	ASSERT_EQ(0, log.calls);
	ASSERT_EQ(0, esa_step_send(ep, t0 + quiet, &dl));
	ASSERT_EQ(1, log.calls);
	ASSERT_NE(NULL, strstr(log.why, "nothing of job 1 came back"));
	ASSERT_EQ(0, esa_step_send(ep, t0 + 3 * quiet, &dl));
	ASSERT_EQ(1, log.calls);
	/* A pull for another worker is a packet of the job: a new silence. */
	esa_wire_put(pull, &m);
	esa_step_input(ep, pull, sizeof(pull), &c.ps, t0 + 4 * quiet);
	ASSERT_EQ(0, esa_step_send(ep, t0 + 5 * quiet - 1, &dl));
	ASSERT_EQ(1, log.calls);
	ASSERT_EQ(0, esa_step_send(ep, t0 + 5 * quiet, &dl));
	ASSERT_EQ(2, log.calls);
	ASSERT_NE(NULL, strstr(log.why, "results of job 1 stopped coming"));
	esa_endpoint_close(ep);
}

static void cancel_on_quiet(void *arg, const char *why)
{
	esa_endpoint_cancel(arg);
}

/*
 * A call cancelled from its silence report ends at once with -ECANCELED
 * and the cause; the next call is not cancelled; the sequence it starts
 * at is the caller's to set (the job agrees on one after a cancel).
 */
TEST(cancel_from_quiet_report)
{
	const struct esa_values_io io = { i32_nop_load, i32_nop_store, NULL };
	struct esa_endpoint_config c = good_cfg();
	const uint64_t t0 = 1000000000ull, quiet = 2000000000ull;
	struct esa_endpoint *ep;
	uint64_t dl;

	c.max_resends = 1000;
	ASSERT_EQ(0, esa_endpoint_new(&c, drop_all, NULL, &ep));
	esa_endpoint_on_quiet(ep, 2000, cancel_on_quiet, ep);
	ASSERT_EQ(0, esa_step_begin(ep, 64, &io));
	ASSERT_EQ(0, esa_step_send(ep, t0, &dl));
	ASSERT_EQ(0, esa_step_send(ep, t0 + quiet - 1, &dl));
	ASSERT_EQ(-ECANCELED, esa_step_send(ep, t0 + quiet, &dl));
	ASSERT_NE(NULL, strstr(esa_last_error(), "cancelled after 2000 ms"));
	ASSERT_NE(NULL, strstr(esa_last_error(), "nothing of job 1 came back"));
	ASSERT_EQ(1, esa_endpoint_next_seq(ep));
	esa_endpoint_set_next_seq(ep, 1000);
	ASSERT_EQ(0, esa_step_begin(ep, 64, &io));
	ASSERT_EQ(1001, esa_endpoint_next_seq(ep));
	ASSERT_EQ(0, esa_step_send(ep, 5 * quiet, &dl));
	esa_endpoint_close(ep);
}

TEST_HARNESS_MAIN
