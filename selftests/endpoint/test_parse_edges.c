// SPDX-License-Identifier: GPL-2.0
/*
 * The command-line parsers (tools/lib/esa_parse.c) at their edges, one
 * table row per input: the bounds of each range and one past them, 0,
 * the 64-bit overflow, NULL and empty input, trailing junk, size
 * suffixes and their overflow, what strtod would take but the grammar
 * does not (hex, inf, nan, leading space, out of double's range), and
 * addresses without, with a bad, or with a missing required port.
 * test_endpoint_unit.c checks the common cases; a bound off by one, or
 * a 0 or an empty word taken for "not given", fails here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#include "kselftest_harness.h"
#include "esa_endpoint.h"
#include "esa_parse.h"

#define OK	0
#define BAD	(-EINVAL)

struct u64_row { const char *s; uint64_t min, max; int ret; uint64_t v; };
struct s64_row { const char *s; int64_t min, max; int ret; int64_t v; };
struct dbl_row { const char *s; double min, max; int ret; double v; };
struct addr_row { const char *s; int required; int ret; uint32_t addr; uint16_t port; };

TEST(u64_and_u32)
{
	static const struct u64_row rows[] = {
		{ "0", 0, 10, OK, 0 },
		{ "0", 1, 10, BAD, 0 },
		{ "10", 0, 10, OK, 10 },
		{ "11", 0, 10, BAD, 0 },
		{ "18446744073709551615", 0, UINT64_MAX, OK, UINT64_MAX },
		{ "18446744073709551616", 0, UINT64_MAX, BAD, 0 },	/* 2^64 */
		{ "99999999999999999999", 0, UINT64_MAX, BAD, 0 },
		{ NULL, 0, 10, BAD, 0 },
		{ "", 0, 10, BAD, 0 },
		{ "+1", 0, 10, BAD, 0 },
		{ "1 ", 0, 10, BAD, 0 },
	};
	uint64_t v;
	uint32_t u;

	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct u64_row *r = &rows[i];

		v = 12345;
		EXPECT_EQ(r->ret, esa_parse_u64(r->s, r->min, r->max, &v))
			TH_LOG("row %u '%s'", i, r->s ? r->s : "(null)");
		EXPECT_EQ(r->ret ? 12345 : r->v, v) TH_LOG("row %u", i);
	}
	EXPECT_EQ(OK, esa_parse_u32("4294967295", 0, UINT32_MAX, &u));
	EXPECT_EQ(UINT32_MAX, u);
	EXPECT_EQ(BAD, esa_parse_u32("4294967296", 0, UINT32_MAX, &u));
	EXPECT_NE(NULL, strstr(esa_last_error(), "in 0..4294967295"));
	EXPECT_EQ(OK, esa_parse_port("65535", (uint16_t *)&u));
	EXPECT_EQ(BAD, esa_parse_port("0", (uint16_t *)&u));
}

TEST(s64)
{
	static const struct s64_row rows[] = {
		{ "-9223372036854775808", INT64_MIN, INT64_MAX, OK, INT64_MIN },
		{ "-9223372036854775809", INT64_MIN, INT64_MAX, BAD, 0 },
		{ "9223372036854775807", INT64_MIN, INT64_MAX, OK, INT64_MAX },
		{ "9223372036854775808", INT64_MIN, INT64_MAX, BAD, 0 },
		{ "-0", -5, 5, OK, 0 },
		{ "-5", -5, 5, OK, -5 },
		{ "-6", -5, 5, BAD, 0 },
		{ "6", -5, 5, BAD, 0 },
		{ "-", -5, 5, BAD, 0 },
		{ "--1", -5, 5, BAD, 0 },
		{ "", -5, 5, BAD, 0 },
		{ NULL, -5, 5, BAD, 0 },
		{ "99999999999999999999", INT64_MIN, INT64_MAX, BAD, 0 },
	};
	int64_t v;

	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct s64_row *r = &rows[i];

		v = 12345;
		EXPECT_EQ(r->ret, esa_parse_s64(r->s, r->min, r->max, &v))
			TH_LOG("row %u '%s'", i, r->s ? r->s : "(null)");
		EXPECT_EQ(r->ret ? 12345 : r->v, v) TH_LOG("row %u", i);
	}
	EXPECT_NE(NULL, strstr(esa_last_error(), "is not a decimal integer in"));
}

TEST(size)
{
	static const struct u64_row rows[] = {
		{ "0", 0, UINT64_MAX, OK, 0 },
		{ "1k", 0, UINT64_MAX, OK, 1024 },
		{ "2K", 0, UINT64_MAX, OK, 2048 },
		{ "3m", 0, UINT64_MAX, OK, 3u << 20 },
		{ "4M", 0, UINT64_MAX, OK, 4u << 20 },
		{ "5g", 0, UINT64_MAX, OK, 5ull << 30 },
		{ "6G", 0, UINT64_MAX, OK, 6ull << 30 },
		{ "17179869183G", 0, UINT64_MAX, OK, 17179869183ull << 30 },
		{ "17179869184G", 0, UINT64_MAX, BAD, 0 },	/* 2^64 */
		{ "1T", 0, UINT64_MAX, BAD, 0 },
		{ "1KB", 0, UINT64_MAX, BAD, 0 },
		{ "1k", 1025, UINT64_MAX, BAD, 0 },
		{ "1k", 0, 1023, BAD, 0 },
		{ "k", 0, UINT64_MAX, BAD, 0 },
		{ "", 0, UINT64_MAX, BAD, 0 },
		{ NULL, 0, UINT64_MAX, BAD, 0 },
		{ "99999999999999999999", 0, UINT64_MAX, BAD, 0 },
	};
	uint64_t v;

	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct u64_row *r = &rows[i];

		v = 12345;
		EXPECT_EQ(r->ret, esa_parse_size(r->s, r->min, r->max, &v))
			TH_LOG("row %u '%s'", i, r->s ? r->s : "(null)");
		EXPECT_EQ(r->ret ? 12345 : r->v, v) TH_LOG("row %u", i);
	}
	EXPECT_NE(NULL, strstr(esa_last_error(), "suffix K, M, G"));
}

TEST(decimal)
{
	static const struct dbl_row rows[] = {
		{ "0", 0, 1, OK, 0 },
		{ "1", 0, 1, OK, 1 },
		{ "0.25", 0, 1, OK, 0.25 },
		{ "1.0001", 0, 1, BAD, 0 },
		{ "-0.5", -1, 1, OK, -0.5 },
		{ "-1.5", -1, 1, BAD, 0 },
		{ "1e400", 0, 1e308, BAD, 0 },
		{ "0x1p3", 0, 100, BAD, 0 },
		{ "inf", 0, 1e308, BAD, 0 },
		{ "nan", 0, 1, BAD, 0 },
		{ " 1", 0, 10, BAD, 0 },
		{ "1 ", 0, 10, BAD, 0 },
		{ "", 0, 1, BAD, 0 },
		{ NULL, 0, 1, BAD, 0 },
	};
	double v;

	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct dbl_row *r = &rows[i];

		v = 12345;
		EXPECT_EQ(r->ret, esa_parse_double(r->s, r->min, r->max, &v))
			TH_LOG("row %u '%s'", i, r->s ? r->s : "(null)");
		EXPECT_EQ(r->ret ? 12345 : r->v, v) TH_LOG("row %u", i);
	}
}

TEST(addresses)
{
	static const struct addr_row rows[] = {
		{ "10.1.2.3", 0, OK, 0x0a010203, 47000 },	/* default port */
		{ "10.1.2.3:1", 0, OK, 0x0a010203, 1 },
		{ "10.1.2.3:65535", 1, OK, 0x0a010203, 65535 },
		{ "10.1.2.3", 1, BAD, 0, 0 },				/* port required */
		{ "10.1.2.3:0", 0, BAD, 0, 0 },
		{ "10.1.2.3:65536", 0, BAD, 0, 0 },
		{ "10.1.2.3:", 0, BAD, 0, 0 },
		{ ":47000", 0, BAD, 0, 0 },
		{ "1234567890.1234567890:1", 0, BAD, 0, 0 },		/* too long */
		{ "10.1.2.256", 0, BAD, 0, 0 },
		{ "010.1.2.3", 0, BAD, 0, 0 },
		{ "", 0, BAD, 0, 0 },
		{ NULL, 0, BAD, 0, 0 },
	};
	struct sockaddr_in sa;

	for (unsigned i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct addr_row *r = &rows[i];
		int ret = r->required ? esa_parse_addr_port(r->s, &sa) :
					esa_parse_addr(r->s, 47000, &sa);

		EXPECT_EQ(r->ret, ret) TH_LOG("row %u '%s'", i, r->s ? r->s : "(null)");
		if (ret || r->ret)
			continue;
		EXPECT_EQ(AF_INET, sa.sin_family) TH_LOG("row %u", i);
		EXPECT_EQ(r->addr, ntohl(sa.sin_addr.s_addr)) TH_LOG("row %u", i);
		EXPECT_EQ(r->port, ntohs(sa.sin_port)) TH_LOG("row %u", i);
	}
	EXPECT_EQ(BAD, esa_parse_addr_port("10.1.2.3:x", &sa));
	EXPECT_NE(NULL, strstr(esa_last_error(), "bad port in '10.1.2.3:x'"));
}

TEST_HARNESS_MAIN
