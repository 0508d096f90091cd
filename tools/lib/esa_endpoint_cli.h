/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Argument parsing shared by esa-job and esa-ps: strict numbers (no
 * trailing junk, ranges checked), sizes with binary suffixes. Each returns
 * 0 or -EINVAL with the reason in esa_last_error(), naming the option.
 * Also their statistics output: one field table for text and JSON.
 */
#ifndef _ESA_ENDPOINT_CLI_H
#define _ESA_ENDPOINT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ESA_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* One member of a statistics struct: a uint64_t, or an int if @is_int. */
struct esa_cli_field {
	const char	*name;
	size_t		off;
	bool		is_int;
};
#define ESA_CLI_U64(type, member, name) { name, offsetof(type, member), false }
#define ESA_CLI_INT(type, member, name) { name, offsetof(type, member), true }

/*
 * The fields of @st as " name=value" (text) or ",\"name\":value" (JSON);
 * with @first the first one has no separator.
 */
void esa_cli_print_fields(const struct esa_cli_field *f, size_t n,
			  const void *st, bool json, bool first);

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
