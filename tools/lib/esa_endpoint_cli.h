/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The statistics output of esa-job and esa-ps: one field table for text
 * and JSON. (Numbers and addresses: esa_parse.h.)
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

#endif /* _ESA_ENDPOINT_CLI_H */
