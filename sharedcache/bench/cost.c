/*
 * cost.c — foresight-iocache-cost: what the policy core costs per request (paper 3's
 * Table I, issue 23's "accounting per request at 64 clients").
 *
 *     foresight-iocache-cost [CLIENTS [REQUESTS [CAPACITY]]]   (default 64 4000000 1024)
 *
 * One request stream, made before the clock starts: each client streams through a region
 * of its own (reading each block after hinting the one 8 ahead) and, one request in four,
 * reads a block of a hot set all share; an epoch ends every REQUESTS/100 requests.  It is
 * run through iocache_access/iocache_prefetch/iocache_epoch_end under each control —
 * plain (harm accounting only), coarse, fine — and once with its hints left out, the
 * four alternating five times, and the CPU time per request (hints counted as requests)
 * is printed, the best of the five.
 * What the I/O-node server runs under its lock per request is this core's call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "foresight_iocache.h"

struct req {
    uint32_t client;
    uint32_t prefetch;
    uint64_t block;
};

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* One run of the stream: CPU nanoseconds per request. */
static double run(const struct req *reqs, size_t n, unsigned clients, uint64_t capacity,
                  enum iocache_control control, bool hints)
{
    {
        struct iocache_params p;
        iocache_params_default(&p);
        p.capacity = capacity;
        p.clients = clients;
        p.replacement = IOCACHE_LRU;
        p.control = control;
        struct iocache *c;
        if (iocache_create(&p, &c) != 0) {
            fprintf(stderr, "foresight-iocache-cost: %s\n", iocache_params_error(&p));
            exit(2);
        }
        /* Epochs by position in the stream, hints left out or not, so every variant
         * ends as many. */
        size_t epoch = n / 100 ? n / 100 : 1, done = 0;
        struct iocache_outcome o;
        double t0 = cpu_seconds();
        for (size_t i = 0; i < n; i++) {
            if (!reqs[i].prefetch) {
                iocache_access(c, reqs[i].client, reqs[i].block, false, i, &o);
                done++;
            } else if (hints) {
                iocache_prefetch(c, reqs[i].client, reqs[i].block, i, &o);
                done++;
            }
            if ((i + 1) % epoch == 0)
                iocache_epoch_end(c);
        }
        double t = (cpu_seconds() - t0) / (double)done;
        iocache_free(c);
        return t * 1e9;
    }
}

int main(int argc, char **argv)
{
    unsigned clients = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 64;
    size_t n = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 4000000;
    uint64_t capacity = argc > 3 ? strtoull(argv[3], NULL, 10) : 1024;
    if (clients < 1 || clients > IOCACHE_MAX_CLIENTS || n < 1000 || capacity < 1) {
        fprintf(stderr, "usage: foresight-iocache-cost [CLIENTS (1-%d) [REQUESTS (>= 1000) "
                "[CAPACITY (>= 1)]]]\n", IOCACHE_MAX_CLIENTS);
        return 2;
    }
    struct req *reqs = malloc(n * sizeof *reqs);
    uint64_t *at = calloc(clients, sizeof *at);
    if (reqs == NULL || at == NULL) {
        fprintf(stderr, "foresight-iocache-cost: out of memory\n");
        return 2;
    }
    uint64_t seed = 88172645463325252ull, hot = capacity / 4 + 1, region = 1u << 20;
    for (size_t i = 0; i < n;) {
        unsigned c = (unsigned)(next_random(&seed) % clients);
        if (next_random(&seed) % 4 == 0) {
            reqs[i++] = (struct req){c, 0, next_random(&seed) % hot};
            continue;
        }
        uint64_t b = hot + (uint64_t)c * region + at[c]++ % region;
        reqs[i++] = (struct req){c, 1, b + 8};
        if (i < n)
            reqs[i++] = (struct req){c, 0, b};
    }
    static const struct {
        enum iocache_control control;
        bool hints;
        const char *name;
    } variants[] = {{IOCACHE_PLAIN, false, "demand-only"}, {IOCACHE_PLAIN, true, "plain"},
                    {IOCACHE_COARSE, true, "coarse"}, {IOCACHE_FINE, true, "fine"}};
    double best[4] = {1e30, 1e30, 1e30, 1e30};
    for (int round = 0; round < 5; round++)   /* the variants alternate; the best of five */
        for (size_t k = 0; k < 4; k++) {
            double t = run(reqs, n, clients, capacity, variants[k].control, variants[k].hints);
            if (t < best[k])
                best[k] = t;
        }
    printf("clients %u requests %zu capacity %llu\n", clients, n, (unsigned long long)capacity);
    for (size_t k = 0; k < 4; k++)
        printf("%s ns/request %.1f\n", variants[k].name, best[k]);
    free(reqs);
    free(at);
    return 0;
}
