// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics output for the endpoint tools (see esa_endpoint_cli.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "esa_endpoint.h"
#include "esa_endpoint_cli.h"

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
