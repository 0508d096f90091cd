// SPDX-License-Identifier: GPL-2.0
/*
 * Numbers and addresses from the command line (esa_parse.h): decimal
 * only, so that "010" can never mean 8 and "0x10" never 16, whichever tool
 * reads it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esa_endpoint.h"
#include "esa_parse.h"

/* Decimal digits up to the first non-digit; -ERANGE past UINT64_MAX. */
static int digits(const char *s, uint64_t *v, const char **end)
{
	uint64_t x = 0;

	for (; isdigit((unsigned char)*s); s++) {
		if (__builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(*s - '0'), &x))
			return -ERANGE;
	}
	*v = x;
	*end = s;
	return 0;
}

static int bad_uint(const char *s, uint64_t min, uint64_t max)
{
	return esa_set_error(-EINVAL, "'%s' is not a decimal integer in %llu..%llu",
			     s ? s : "", (unsigned long long)min,
			     (unsigned long long)max);
}

int esa_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	uint64_t v;

	if (!s || !isdigit((unsigned char)*s) || digits(s, &v, &end) || *end ||
	    v < min || v > max)
		return bad_uint(s, min, max);
	*out = v;
	return 0;
}

int esa_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;
	int err = esa_parse_u64(s, min, max, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

int esa_parse_s64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	const char *p = s && *s == '-' ? s + 1 : s, *end;
	uint64_t mag;
	int64_t v;

	if (!p || !isdigit((unsigned char)*p) || digits(p, &mag, &end) || *end ||
	    mag > (uint64_t)INT64_MAX + (p != s))
		goto bad;
	v = p != s ? (int64_t)(0 - mag) : (int64_t)mag;
	if (v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return esa_set_error(-EINVAL, "'%s' is not a decimal integer in %lld..%lld",
			     s ? s : "", (long long)min, (long long)max);
}

int esa_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;
	unsigned shift = 0;
	uint64_t v;

	if (!s || !isdigit((unsigned char)*s) || digits(s, &v, &end))
		goto bad;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end || (v << shift) >> shift != v)
		goto bad;
	v <<= shift;
	if (v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return esa_set_error(-EINVAL,
			     "'%s' is not a size in %llu..%llu bytes (decimal, suffix K, M, G)",
			     s ? s : "", (unsigned long long)min,
			     (unsigned long long)max);
}

int esa_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	/* strtod would also take hex floats, "inf" and "nan": not here. */
	if (!s || !*s || strpbrk(s, "xXiInN") || isspace((unsigned char)*s))
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return esa_set_error(-EINVAL, "'%s' is not a decimal number in %g..%g",
			     s ? s : "", min, max);
}

int esa_parse_port(const char *s, uint16_t *port)
{
	uint64_t v;
	int err = esa_parse_u64(s, 1, 65535, &v);

	if (!err)
		*port = (uint16_t)v;
	return err;
}

/* "A.B.C.D[:PORT]"; without ":PORT" @default_port, or an error if @required. */
static int parse_addr(const char *s, bool required, uint16_t default_port,
		      struct sockaddr_in *sa)
{
	char host[INET_ADDRSTRLEN], why[160];
	const char *colon;
	uint16_t port = default_port;
	size_t len;

	if (!s || !*s)
		return esa_set_error(-EINVAL, "empty address");
	colon = strchr(s, ':');
	len = colon ? (size_t)(colon - s) : strlen(s);
	if (len == 0 || len >= sizeof(host))
		return esa_set_error(-EINVAL, "bad IPv4 address '%s' (A.B.C.D%s)",
				     s, required ? ":PORT" : "[:PORT]");
	memcpy(host, s, len);
	host[len] = '\0';
	if (colon && esa_parse_port(colon + 1, &port)) {
		snprintf(why, sizeof(why), "%s", esa_last_error());
		return esa_set_error(-EINVAL, "bad port in '%s': %s", s, why);
	}
	if (!colon && required)
		return esa_set_error(-EINVAL, "'%s' has no port (ADDR:PORT)", s);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	/* inet_pton: four decimal parts, no leading zeros, no shorthand. */
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return esa_set_error(-EINVAL, "bad IPv4 address '%s' (A.B.C.D)",
				     host);
	return 0;
}

int esa_parse_addr(const char *s, uint16_t default_port, struct sockaddr_in *sa)
{
	return parse_addr(s, false, default_port, sa);
}

int esa_parse_addr_port(const char *s, struct sockaddr_in *sa)
{
	return parse_addr(s, true, 0, sa);
}

int esa_parse_token(const char *s, uint64_t *token)
{
	uint64_t v = 0;
	size_t i;

	/* Exactly 16 digits: a token cut short or run on is a typo, not a
	 * smaller number. */
	for (i = 0; s && isxdigit((unsigned char)s[i]); i++)
		v = v << 4 | (uint64_t)(isdigit((unsigned char)s[i]) ?
			s[i] - '0' : tolower((unsigned char)s[i]) - 'a' + 10);
	if (!s || i != 16 || s[i])
		return esa_set_error(-EINVAL, "'%s' is not a token of 16 hexadecimal digits",
				     s ? s : "");
	if (!v)
		return esa_set_error(-EINVAL, "token '%s': 0 means no token", s);
	*token = v;
	return 0;
}
