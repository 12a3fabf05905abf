/* rng.h — the tests' pseudo-random numbers (xorshift64): seeded, so every run of a test
 * makes the same choices. */
#ifndef FORESIGHT_CS_TEST_RNG_H
#define FORESIGHT_CS_TEST_RNG_H

#include <stdint.h>

static uint64_t rng = 1; /* the seed: set it before the first next() */

static inline uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#endif
