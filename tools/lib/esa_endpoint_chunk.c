// SPDX-License-Identifier: GPL-2.0
/*
 * How a worker cuts a tensor into packets, picks aggregators, and turns
 * float32 into the int32 the switch can add (Documentation/endpoints.rst,
 * "Float32").
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>

#include "esa_endpoint.h"

size_t esa_chunk_count(size_t count, unsigned vpp)
{
	return (count + vpp - 1) / vpp;
}

void esa_chunk_range(size_t idx, size_t count, unsigned vpp, size_t *off,
		     unsigned *n)
{
	size_t o = idx * vpp;

	*off = o;
	*n = count - o < vpp ? (unsigned)(count - o) : vpp;
}

uint32_t esa_agg_index(uint32_t slots, uint32_t offset, uint32_t span,
		       uint64_t count)
{
	return (uint32_t)(((uint64_t)offset + count % span) % slots);
}

int32_t esa_f32_limit(unsigned fan_in)
{
	/*
	 * Half the int32 range shared by fan_in workers: a legitimate sum stays
	 * within +-INT32_MAX/2, so a sum that includes one INT32_MAX marker is
	 * always beyond it, whatever the other workers added (at least
	 * INT32_MAX - (fan_in - 1) * limit > INT32_MAX / 2).
	 */
	return INT32_MAX / (2 * (int32_t)fan_in);
}

unsigned esa_f32_quantise(const float *in, unsigned n, int scale_log2,
			  unsigned fan_in, int32_t *out)
{
	double scale = ldexp(1.0, scale_log2);
	double lim = esa_f32_limit(fan_in);
	unsigned bad = 0;

	for (unsigned i = 0; i < n; i++) {
		double q = nearbyint((double)in[i] * scale);

		/* NaN compares false: non-finite values are markers too. */
		if (!(q >= -lim && q <= lim)) {
			out[i] = INT32_MAX;
			bad++;
		} else {
			out[i] = (int32_t)q;
		}
	}
	return bad;
}

bool esa_f32_overflowed(const int32_t *sum, unsigned n, unsigned fan_in,
			uint8_t flags)
{
	int64_t lim = (int64_t)esa_f32_limit(fan_in) * fan_in;

	if (flags & ESA_F_OVERFLOW)
		return true;
	for (unsigned i = 0; i < n; i++)
		if (sum[i] > lim || sum[i] < -lim)
			return true;
	return false;
}

void esa_f32_dequantise(const int32_t *sum, unsigned n, int scale_log2,
			float *out)
{
	for (unsigned i = 0; i < n; i++)
		out[i] = (float)ldexp((double)sum[i], -scale_log2);
}
