/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one parser of numbers and addresses of every ESA tool (aggctl,
 * esa-job, esa-ps) and of libesa itself.
 *
 * Numbers are decimal. Leading zeros mean nothing ("010" is 10, never 8);
 * a base prefix ("0x10"), a sign where none belongs, blanks and trailing
 * characters are refused. Ports are 1..65535. Each call returns 0, or
 * -EINVAL with a reason that quotes the input in esa_last_error(); the
 * caller puts the option or keyword in front of it ("--job: ...").
 *
 * The address parser, esa_parse_addr(), is public and declared in esa.h.
 */
#ifndef _ESA_PARSE_H
#define _ESA_PARSE_H

#include <stdint.h>
#include "esa.h"

/* A decimal integer within min..max. */
int esa_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int esa_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);
/* The same with an optional leading '-'. */
int esa_parse_s64(const char *s, int64_t min, int64_t max, int64_t *out);
/* "4096", "64K", "1M", "2G" (powers of 1024), within min..max bytes. */
int esa_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A finite decimal number within min..max ("1.5", "2e3"; no hex, no inf). */
int esa_parse_double(const char *s, double min, double max, double *out);
/* A UDP port, 1..65535, in host order. */
int esa_parse_port(const char *s, uint16_t *port);
/* "A.B.C.D:PORT", the port required (esa_parse_addr() makes it optional). */
int esa_parse_addr_port(const char *s, struct sockaddr_in *sa);

#endif /* _ESA_PARSE_H */
