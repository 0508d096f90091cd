// SPDX-License-Identifier: GPL-2.0
/*
 * Strict number parsing and statistics output for the endpoint tools (see
 * esa_endpoint_cli.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esa_endpoint.h"
#include "esa_endpoint_cli.h"

int esa_cli_uint(const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return esa_set_error(-EINVAL, "%s: '%s' is not an integer in %llu..%llu",
			     opt, s ? s : "", (unsigned long long)min,
			     (unsigned long long)max);
}

int esa_cli_int(const char *opt, const char *s, int64_t min, int64_t max,
		int64_t *out)
{
	long long v;
	char *end;

	if (!s || !*s)
		goto bad;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return esa_set_error(-EINVAL, "%s: '%s' is not an integer in %lld..%lld",
			     opt, s ? s : "", (long long)min, (long long)max);
}

int esa_cli_size(const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
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
			     "%s: '%s' is not a size in %llu..%llu bytes (suffix K, M, G)",
			     opt, s ? s : "", (unsigned long long)min,
			     (unsigned long long)max);
}

int esa_cli_double(const char *opt, const char *s, double min, double max,
		   double *out)
{
	double v;
	char *end;

	if (!s || !*s)
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return esa_set_error(-EINVAL, "%s: '%s' is not a number in %g..%g",
			     opt, s ? s : "", min, max);
}

void esa_cli_print_fields(const struct esa_cli_field *f, size_t n,
			  const void *st, bool json, bool first)
{
	for (size_t i = 0; i < n; i++) {
		const char *sep = i == 0 && first ? "" : json ? "," : " ";
		const char *p = (const char *)st + f[i].off;

		printf(json ? "%s\"%s\":" : "%s%s=", sep, f[i].name);
		if (f[i].is_int) {
			int v;

			memcpy(&v, p, sizeof(v));
			printf("%d", v);
		} else {
			uint64_t v;

			memcpy(&v, p, sizeof(v));
			printf("%llu", (unsigned long long)v);
		}
	}
}
