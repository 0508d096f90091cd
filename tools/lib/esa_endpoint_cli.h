/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Argument parsing shared by esa-job and esa-ps: strict numbers (no
 * trailing junk, ranges checked), sizes with binary suffixes. Each returns
 * 0 or -EINVAL with the reason in esa_last_error(), naming the option.
 */
#ifndef _ESA_ENDPOINT_CLI_H
#define _ESA_ENDPOINT_CLI_H

#include <stdint.h>

int esa_cli_uint(const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out);
int esa_cli_int(const char *opt, const char *s, int64_t min, int64_t max,
		int64_t *out);
/* "4096", "64K", "1M", "2G" (powers of 1024), within min..max. */
int esa_cli_size(const char *opt, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out);
/* A finite double within min..max. */
int esa_cli_double(const char *opt, const char *s, double min, double max,
		   double *out);

#endif /* _ESA_ENDPOINT_CLI_H */
