/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One output path for humans and machines, in the spirit of iproute2's
 * json_print: every command prints through these calls; with -j they
 * build JSON (-p: indented), otherwise "key value" text. Objects and
 * arrays nest; a key of NULL is an array element.
 */
#ifndef _AGGCTL_OUTPUT_H
#define _AGGCTL_OUTPUT_H

#include <stdbool.h>
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
void out_bool(const char *key, const char *label, bool val);
/* Text only: a line break (new record in a listing). */
void out_nl(void);
/* Text only: free text (a heading). */
void out_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
