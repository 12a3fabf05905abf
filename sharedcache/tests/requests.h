/* requests.h — the requests the core's tests make: an access or a prefetch by a client,
 * each at the next position (`now`), checked to succeed; the totals so far. */
#ifndef IOCACHE_TEST_REQUESTS_H
#define IOCACHE_TEST_REQUESTS_H

#include "check.h"
#include "foresight_iocache.h"

static uint64_t now;   /* the caller's position, advanced by every request */

static struct iocache_outcome acc(struct iocache *c, unsigned client, uint64_t block)
{
    struct iocache_outcome o;
    CHECK_EQ(iocache_access(c, client, block, false, now++, &o), 0);
    return o;
}

static struct iocache_outcome pf(struct iocache *c, unsigned client, uint64_t block)
{
    struct iocache_outcome o;
    CHECK_EQ(iocache_prefetch(c, client, block, now++, &o), 0);
    return o;
}

static struct iocache_stats stats(const struct iocache *c)
{
    struct iocache_stats st;
    iocache_stats(c, &st);
    return st;
}

#endif
