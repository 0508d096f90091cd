/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulator's only source of randomness (Poisson arrivals, link loss):
 * xoshiro256** seeded through splitmix64, so a seed gives the same stream
 * on every machine.
 */
#ifndef _ESA_SIM_RNG_H
#define _ESA_SIM_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

static inline uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s, out = rng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return out;
}

/* Uniform in [0, 1). */
static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

#endif /* _ESA_SIM_RNG_H */
