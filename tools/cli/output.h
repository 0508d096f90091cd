/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One output path for humans and machines, shared by aggctl, esa-job and
 * esa-ps, in the spirit of iproute2's json_print: every report prints
 * through these calls; with -j they build JSON (-p: indented), otherwise
 * "key value" text. Objects and arrays nest; a key of NULL is an array
 * element.
 */
#ifndef _ESA_CLI_OUTPUT_H
#define _ESA_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void out_init(bool json, bool pretty);
bool out_is_json(void);
/* Flush a top-level value (JSON) and end the line (text). */
void out_finish(void);

void out_open_object(const char *key);
void out_close_object(void);
void out_open_array(const char *key);
void out_close_array(void);

/*
 * Text mode prints "@label value" (label defaults to the key, "" prints
 * the value alone); JSON uses key. Strings are escaped for JSON.
 */
void out_str(const char *key, const char *label, const char *val);
void out_u64(const char *key, const char *label, uint64_t val);
void out_s64(const char *key, const char *label, int64_t val);
/* A number with @prec digits after the point (%.*f), or %.*g if @prec < 0. */
void out_double(const char *key, const char *label, int prec, double val);
void out_bool(const char *key, const char *label, bool val);

/*
 * A statistics struct printed member by member from a table, in the
 * table's order: the key is the member's name unless given.
 */
struct out_field {
	const char	*key;
	size_t		off;
	bool		is_int;		/* an int; else a uint64_t */
};
#define OUT_U64(type, member) { #member, offsetof(type, member), false }
#define OUT_U64_AS(type, member, key) { key, offsetof(type, member), false }
#define OUT_INT(type, member) { #member, offsetof(type, member), true }
#define OUT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
void out_fields(const struct out_field *f, size_t n, const void *st);
/* Text only: a line break (new record in a listing). */
void out_nl(void);
/* Text only: free text (a heading). */
void out_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* _ESA_CLI_OUTPUT_H */
