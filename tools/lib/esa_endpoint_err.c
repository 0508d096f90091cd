// SPDX-License-Identifier: GPL-2.0
/*
 * Error reporting of libesa: calls return a negative errno and keep a
 * per-thread reason for esa_last_error(); the library itself never prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esa_endpoint.h"

static __thread char last_error[1024];

const char *esa_last_error(void)
{
	return last_error[0] ? last_error : "no error";
}

int esa_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err;
}

int esa_error_context(int err, const char *fmt, ...)
{
	char ctx[128], why[sizeof(last_error)];
	va_list ap;

	snprintf(why, sizeof(why), "%s", esa_last_error());
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	return esa_set_error(err, "%s: %s", ctx, why);
}
