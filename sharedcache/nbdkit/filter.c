/*
 * filter.c — nbdkit-foresight-filter: the shared I/O-node cache as a real server (paper 3).
 *
 *     nbdkit --filter=foresight.so file FILE cache=none fadvise=random \
 *            iocache-size=64M iocache-policy=fine [iocache-epoch=N|Nms] \
 *            [iocache-trace=T] [iocache-stats=S.jsonl] [iocache-disk-delay=Nus|Nms] ...
 *
 * Every client (one NBD export name: `c3`; nbdfuse's several connections per mount share
 * it) reads and writes through one cache of `iocache-size` bytes in blocks of
 * `iocache-block`, kept in RAM and managed by the policy core of foresight_iocache.h,
 * the one the simulator runs.  NBD_CMD_CACHE is the client's nonbinding prefetch: the
 * server replies at once, and the connection's worker thread reads the block in if the
 * policy admits it.  Writes go through to the plugin before they are acknowledged, and
 * update a cached copy only after the plugin has them, so the plugin always holds
 * everything acknowledged: a FLUSH is the plugin's, and a restart loses nothing.
 *
 * Concurrency: one mutex over the core and the slots' states, never held across plugin
 * I/O or a copy.  A request holds the slots it works on (iocache_hold: no eviction),
 * and a slot being read in or written waits out everyone else on it:
 *   EMPTY    a new block whose data are not in yet (the requester reads them)
 *   LOADING  a read from the plugin into the slot is under way
 *   VALID    the slot holds the block's data
 *   WRITING  a write of the block is going to the plugin; readers and writers wait
 *   INVALID  the data must be read again (a failed read, a partial write of a block not
 *            cached, a trim or zero)
 * A copy out of a VALID slot counts as a reader; a write waits for the readers to leave
 * before it changes the slot.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nbdkit-filter.h>

#include "cli_text.h"
#include "foresight_iocache.h"

enum state { EMPTY, LOADING, VALID, WRITING, INVALID };

static uint64_t cache_bytes = 64u << 20, block_bytes = 64u << 10;
static struct iocache_params params;
static bool prefetching = true;            /* iocache-policy=none: CACHE does nothing */
static uint64_t epoch_requests = 10000, epoch_ms;
/* iocache-disk-delay: a disk model for experiments on a fast device.  Every request to the
 * plugin first holds the one "disk" for this long per block it moves (in proportion for
 * less), so the disk moves a block per delay, one request at a time, as the simulator's
 * device with no seek and a block per delay (whose queue is first come, first served;
 * a mutex's waiters here are served in no promised order). */
static uint64_t disk_delay_ns;
static pthread_mutex_t disk = PTHREAD_MUTEX_INITIALIZER;
static const char *trace_path, *stats_path;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct iocache *cache;
static unsigned char *pool;
static uint8_t *state;
static uint16_t *readers;
static char *names[IOCACHE_MAX_CLIENTS];
static unsigned nnames;
static uint64_t requests, epoch_start_ns;
static FILE *trace, *stats;
static uint64_t last_done[IOCACHE_MAX_CLIENTS];   /* when each client's last request ended */

struct job {
    uint32_t slot;
    uint64_t block;
};

/* One per connection: its client and its worker, which reads admitted prefetches in. */
struct handle {
    unsigned client;
    nbdkit_next *next;
    pthread_t worker;
    bool running, quit;
    struct job *jobs;
    size_t head, len, cap;
    pthread_mutex_t jlock;
    pthread_cond_t jcond;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The policy core's own time (the paper's Table I: its accounting and control as a
 * share of the run), summed over its calls; lock held. */
static uint64_t policy_ns, policy_calls;

/* One call into the core, begun at SINCE, counted. */
static void charge(uint64_t since)   /* lock held */
{
    policy_ns += now_ns() - since;
    policy_calls++;
}

static void timed_access(unsigned client, uint64_t block, bool write,
                         struct iocache_outcome *o)   /* lock held */
{
    uint64_t t = now_ns();
    iocache_access(cache, client, block, write, 0, o);
    charge(t);
}

static int parse_choice(const char *key, const char *value, const char *const *names_,
                        unsigned n, const char *valid)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(value, names_[i]))
            return (int)i;
    nbdkit_error("%s=%s: unknown (valid: %s)", key, value, valid);
    return -1;
}

static int foresight_config(nbdkit_next_config *next, nbdkit_backend *nxdata, const char *key,
                            const char *value)
{
    static const char *const POLICIES[] = {"none", "plain", "coarse", "fine"};
    static const char *const REPLACEMENTS[] = {"lru", "lru-aging"};
    static const char *const METRICS[] = {"ratio", "share"};
    int v;
    if (!strcmp(key, "iocache-size") || !strcmp(key, "iocache-block")) {
        int64_t n = nbdkit_parse_size(value);
        if (n <= 0) {
            if (n == 0)
                nbdkit_error("%s=%s: must be positive", key, value);
            return -1;
        }
        *(!strcmp(key, "iocache-size") ? &cache_bytes : &block_bytes) = (uint64_t)n;
        return 0;
    }
    if (!strcmp(key, "iocache-policy")) {
        if ((v = parse_choice(key, value, POLICIES, 4, "none, plain, coarse, fine")) < 0)
            return -1;
        prefetching = v != 0;
        params.control = v == 2 ? IOCACHE_COARSE : v == 3 ? IOCACHE_FINE : IOCACHE_PLAIN;
        return 0;
    }
    if (!strcmp(key, "iocache-replacement")) {
        if ((v = parse_choice(key, value, REPLACEMENTS, 2, "lru, lru-aging")) < 0)
            return -1;
        params.replacement = v ? IOCACHE_LRU_AGING : IOCACHE_LRU;
        return 0;
    }
    if (!strcmp(key, "iocache-metric")) {
        if ((v = parse_choice(key, value, METRICS, 2, "ratio, share")) < 0)
            return -1;
        params.metric = v ? IOCACHE_METRIC_SHARE : IOCACHE_METRIC_RATIO;
        return 0;
    }
    if (!strcmp(key, "iocache-threshold")) {
        char *end;
        double t = strtod(value, &end);
        if (*end || !*value || !(t > 0 && t <= 1)) {
            nbdkit_error("iocache-threshold=%s: a number in (0, 1]", value);
            return -1;
        }
        params.threshold = t;
        return 0;
    }
    if (!strcmp(key, "iocache-k") || !strcmp(key, "iocache-clients")) {
        unsigned n;
        if (nbdkit_parse_unsigned(key, value, &n) == -1)
            return -1;
        if (!strcmp(key, "iocache-k"))
            params.k = n;
        else
            params.clients = n;
        if (n == 0 || n > (!strcmp(key, "iocache-k") ? 1000000u : IOCACHE_MAX_CLIENTS)) {
            nbdkit_error("%s=%s: out of range", key, value);
            return -1;
        }
        return 0;
    }
    if (!strcmp(key, "iocache-throttle") || !strcmp(key, "iocache-pin")) {
        int b = nbdkit_parse_bool(value);
        if (b == -1)
            return -1;
        *(!strcmp(key, "iocache-pin") ? &params.pin : &params.throttle) = b;
        return 0;
    }
    if (!strcmp(key, "iocache-epoch")) {
        size_t n = strlen(value);
        bool ms = n > 2 && !strcmp(value + n - 2, "ms");
        char buf[32];
        if (n - (ms ? 2 : 0) >= sizeof buf) {
            nbdkit_error("iocache-epoch=%s: N requests or Nms", value);
            return -1;
        }
        memcpy(buf, value, n - (ms ? 2 : 0));
        buf[n - (ms ? 2 : 0)] = 0;
        uint64_t e;
        if (nbdkit_parse_uint64_t(key, buf, &e) == -1)
            return -1;
        if (e == 0 || e > (ms ? UINT64_MAX / 1000000u : UINT64_MAX)) {
            nbdkit_error("iocache-epoch=%s: N requests or Nms, N at least 1", value);
            return -1;
        }
        epoch_ms = ms ? e : 0;
        epoch_requests = ms ? 0 : e;
        return 0;
    }
    if (!strcmp(key, "iocache-disk-delay")) {
        size_t n = strlen(value);
        uint64_t unit = n > 2 && !strcmp(value + n - 2, "ms") ? 1000000u
                        : n > 2 && !strcmp(value + n - 2, "us") ? 1000u : 0;
        char buf[32];
        uint64_t d;
        if (unit == 0 || n - 2 >= sizeof buf) {
            nbdkit_error("iocache-disk-delay=%s: Nus or Nms", value);
            return -1;
        }
        memcpy(buf, value, n - 2);
        buf[n - 2] = 0;
        if (nbdkit_parse_uint64_t(key, buf, &d) == -1)
            return -1;
        if (d == 0 || d > 10000000000ull / unit) {
            nbdkit_error("iocache-disk-delay=%s: from 1 unit to 10 s", value);
            return -1;
        }
        disk_delay_ns = d * unit;
        return 0;
    }
    if (!strcmp(key, "iocache-trace")) {
        trace_path = value;
        return 0;
    }
    if (!strcmp(key, "iocache-stats")) {
        stats_path = value;
        return 0;
    }
    return next(nxdata, key, value);
}

static int foresight_config_complete(nbdkit_next_config_complete *next, nbdkit_backend *nxdata)
{
    if (block_bytes < 512 || (block_bytes & (block_bytes - 1)) || block_bytes > (32u << 20)) {
        nbdkit_error("iocache-block must be a power of two from 512 to 32M");
        return -1;
    }
    params.capacity = cache_bytes / block_bytes;
    const char *why = iocache_params_error(&params);
    if (why) {
        nbdkit_error("%s", why);
        return -1;
    }
    return next(nxdata);
}

#define foresight_config_help \
    "iocache-size=SIZE        the I/O node's cache (default 64M)\n" \
    "iocache-block=SIZE       its block (default 64K)\n" \
    "iocache-policy=P         none, plain, coarse or fine (default fine)\n" \
    "iocache-epoch=N|Nms      an epoch: N requests or N milliseconds (default 10000)\n" \
    "iocache-trace=FILE       every request, as a foresight sim trace\n" \
    "iocache-stats=FILE       counters per epoch, JSON lines\n" \
    "iocache-disk-delay=Nus|Nms  the plugin's requests hold one disk this long per block"

static void load(void)
{
    iocache_params_default(&params);
    params.clients = 64;
}

static int foresight_get_ready(int thread_model)
{
    (void)thread_model;
    int err = iocache_create(&params, &cache);
    if (err) {
        nbdkit_error("iocache: %s", strerror(err));
        return -1;
    }
    pool = malloc(params.capacity * block_bytes);
    state = calloc(params.capacity, 1);
    readers = calloc(params.capacity, sizeof *readers);
    if (!pool || !state || !readers) {
        nbdkit_error("iocache: cannot allocate the %" PRIu64 "-byte cache", cache_bytes);
        return -1;
    }
    if (trace_path && !(trace = fopen(trace_path, "w"))) {
        nbdkit_error("%s: %m", trace_path);
        return -1;
    }
    if (stats_path && !(stats = fopen(stats_path, "w"))) {
        nbdkit_error("%s: %m", stats_path);
        return -1;
    }
    if (trace) {   /* flushed now: nbdkit forks after this, and the parent exits */
        fprintf(trace, "# foresight ionode trace: CLIENT OP BLOCK THINK_US, block %" PRIu64
                " bytes\n", block_bytes);
        fflush(trace);
    }
    epoch_start_ns = now_ns();
    return 0;
}

static void write_stats(const char *what)   /* lock held */
{
    if (!stats)
        return;
    struct iocache_stats *st = malloc(sizeof *st);
    if (!st)
        return;
    iocache_stats(cache, st);
    const struct iocache_epoch *e = iocache_epoch(cache);
    fprintf(stats, "{\"event\": \"%s\", \"epoch\": %u, \"epoch_harmful\": %" PRIu64
            ", \"epoch_harm_misses\": %" PRIu64 ", \"harmful\": %" PRIu64
            ", \"benign\": %" PRIu64 ", \"unresolved\": %" PRIu64 ", \"policy_ns\": %" PRIu64
            ", \"policy_calls\": %" PRIu64 ", \"clients\": [",
            what, iocache_epoch_number(cache), e->harmful, e->harm_misses, st->harmful,
            st->benign, st->unresolved, policy_ns, policy_calls);
    for (unsigned i = 0; i < nnames; i++) {
        const struct iocache_client_stats *c = &st->client[i];
        fprintf(stats, "%s{\"id\": %u, \"name\": ", i ? ", " : "", i);
        cli_json_string(stats, names[i]);
        fprintf(stats, ", \"hits\": %" PRIu64
                ", \"misses\": %" PRIu64 ", \"prefetches\": %" PRIu64 ", \"admitted\": %" PRIu64
                ", \"dropped_throttled\": %" PRIu64 ", \"dropped_pinned\": %" PRIu64
                ", \"harmful\": %" PRIu64 ", \"harm_misses\": %" PRIu64 "}",
                c->hits, c->misses, c->prefetches, c->admitted,
                c->dropped_throttled, c->dropped_pinned, c->harmful, c->harm_misses);
    }
    fprintf(stats, "]}\n");
    fflush(stats);
    free(st);
}

static void foresight_unload(void)
{
    pthread_mutex_lock(&lock);
    if (cache)
        write_stats("exit");
    pthread_mutex_unlock(&lock);
    if (trace)
        fclose(trace);
    if (stats)
        fclose(stats);
    iocache_free(cache);
    free(pool);
    free(state);
    free(readers);
    for (unsigned i = 0; i < nnames; i++)
        free(names[i]);
}

/* Counts a request of CLIENT on BLOCK (traced as OP), ending the epoch when it is due.
 * Lock held. */
static void request(unsigned client, char op, uint64_t block)
{
    uint64_t t = now_ns();
    if (trace) {
        uint64_t think = last_done[client] && t > last_done[client] ? t - last_done[client] : 0;
        fprintf(trace, "%u %c %" PRIu64 " %.3f\n", client, op, block, (double)think / 1e3);
    }
    requests++;
    if ((epoch_requests && requests % epoch_requests == 0) ||
        (epoch_ms && t - epoch_start_ns >= epoch_ms * 1000000u)) {
        write_stats("epoch");
        uint64_t t0 = now_ns();
        iocache_epoch_end(cache);
        charge(t0);
        epoch_start_ns = t;
    }
}

static void done(unsigned client)   /* lock held */
{
    last_done[client] = now_ns();
}

static void *worker(void *arg);

static void *foresight_open(nbdkit_next_open *next, nbdkit_context *nxdata, int readonly,
                            const char *exportname, int is_tls)
{
    (void)is_tls;
    if (next(nxdata, readonly, exportname) == -1)
        return NULL;
    struct handle *h = calloc(1, sizeof *h);
    if (!h) {
        nbdkit_error("calloc: %m");
        return NULL;
    }
    pthread_mutex_lock(&lock);
    unsigned i = 0;
    while (i < nnames && strcmp(names[i], exportname))
        i++;
    if (i == nnames && nnames < params.clients && (names[i] = strdup(exportname)))
        nnames++;
    bool known = i < nnames;
    pthread_mutex_unlock(&lock);
    if (!known) {
        nbdkit_error("iocache: more than %u clients (export names)", params.clients);
        free(h);
        return NULL;
    }
    h->client = i;
    pthread_mutex_init(&h->jlock, NULL);
    pthread_cond_init(&h->jcond, NULL);
    return h;
}

static int foresight_prepare(nbdkit_next *next, void *handle, int readonly)
{
    (void)readonly;
    struct handle *h = handle;
    h->next = next;
    int err = pthread_create(&h->worker, NULL, worker, h);
    if (err) {
        errno = err;
        nbdkit_error("pthread_create: %m");
        return -1;
    }
    h->running = true;
    return 0;
}

/* A slot's read-in ended (OK: its data are in): wake its waiters, drop the hold. */
static void loaded(uint32_t s, bool ok)   /* lock held */
{
    state[s] = ok ? VALID : INVALID;
    iocache_unhold(cache, s);
    pthread_cond_broadcast(&changed);
}

/* Stops the connection's worker and drops the prefetches it had not read in (from
 * .finalize, or from .close when a failed handshake skipped .finalize). */
static void stop_worker(struct handle *h)
{
    if (!h->running)
        return;
    pthread_mutex_lock(&h->jlock);
    h->quit = true;
    pthread_cond_signal(&h->jcond);
    pthread_mutex_unlock(&h->jlock);
    pthread_join(h->worker, NULL);
    h->running = false;
    pthread_mutex_lock(&lock);   /* prefetches not read in: hints, dropped */
    for (; h->len; h->len--, h->head = (h->head + 1) % h->cap)
        loaded(h->jobs[h->head].slot, false);
    pthread_mutex_unlock(&lock);
}

static int foresight_finalize(nbdkit_next *next, void *handle)
{
    (void)next;
    stop_worker(handle);
    return 0;
}

static void foresight_close(void *handle)
{
    struct handle *h = handle;
    stop_worker(h);
    free(h->jobs);
    pthread_mutex_destroy(&h->jlock);
    pthread_cond_destroy(&h->jcond);
    free(h);
}

static uint32_t block_len(nbdkit_next *next, uint64_t block)
{
    int64_t size = next->get_size(next);
    uint64_t start = block * block_bytes;
    if (size < 0 || start >= (uint64_t)size)
        return 0;
    return (uint32_t)((uint64_t)size - start < block_bytes ? (uint64_t)size - start
                                                           : block_bytes);
}

/* The disk model's time for a plugin request moving BYTES (iocache-disk-delay), in turn. */
static void disk_time(uint64_t bytes)
{
    if (disk_delay_ns == 0 || bytes == 0)
        return;
    uint64_t ns = (uint64_t)((double)disk_delay_ns * (double)bytes / (double)block_bytes);
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    pthread_mutex_lock(&disk);
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
    pthread_mutex_unlock(&disk);
}

/* Reads BLOCK from the plugin into slot S (held, LOADING); true when done. */
static bool read_in(nbdkit_next *next, uint32_t s, uint64_t block)
{
    uint32_t len = block_len(next, block);
    int err = 0;
    disk_time(len);
    return len > 0 && next->pread(next, pool + (size_t)s * block_bytes, len, block * block_bytes,
                                  0, &err) == 0;
}

static void *worker(void *arg)
{
    struct handle *h = arg;
    for (;;) {
        pthread_mutex_lock(&h->jlock);
        while (!h->len && !h->quit)
            pthread_cond_wait(&h->jcond, &h->jlock);
        if (h->quit) {
            pthread_mutex_unlock(&h->jlock);
            return NULL;
        }
        struct job j = h->jobs[h->head];
        h->head = (h->head + 1) % h->cap;
        h->len--;
        pthread_mutex_unlock(&h->jlock);
        bool ok = read_in(h->next, j.slot, j.block);
        pthread_mutex_lock(&lock);
        loaded(j.slot, ok);
        pthread_mutex_unlock(&lock);
    }
}

static bool enqueue(struct handle *h, uint32_t slot, uint64_t block)
{
    pthread_mutex_lock(&h->jlock);
    if (h->len == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        struct job *j = malloc(cap * sizeof *j);
        if (!j) {
            pthread_mutex_unlock(&h->jlock);
            return false;
        }
        for (size_t i = 0; i < h->len; i++)
            j[i] = h->jobs[(h->head + i) % h->cap];
        free(h->jobs);
        h->jobs = j;
        h->cap = cap;
        h->head = 0;
    }
    h->jobs[(h->head + h->len++) % h->cap] = (struct job){slot, block};
    pthread_cond_signal(&h->jcond);
    pthread_mutex_unlock(&h->jlock);
    return true;
}

static void wait_settled(uint32_t s)   /* lock held, S held */
{
    while (state[s] == LOADING || state[s] == WRITING)
        pthread_cond_wait(&changed, &lock);
}

static int foresight_pread(nbdkit_next *next, void *handle, void *buf, uint32_t count,
                           uint64_t offset, uint32_t flags, int *err)
{
    struct handle *h = handle;
    unsigned char *out = buf;
    while (count > 0) {
        uint64_t block = offset / block_bytes, in = offset % block_bytes;
        uint32_t n = (uint32_t)(block_bytes - in < count ? block_bytes - in : count);
        struct iocache_outcome o;
        pthread_mutex_lock(&lock);
        request(h->client, 'R', block);
        timed_access(h->client, block, false, &o);
        if (o.result == IOCACHE_BYPASS) {
            pthread_mutex_unlock(&lock);
            disk_time(n);
            if (next->pread(next, out, n, offset, flags, err) == -1)
                return -1;
        } else {
            uint32_t s = o.slot;
            iocache_hold(cache, s);
            if (o.result == IOCACHE_MISS)
                state[s] = EMPTY;
            wait_settled(s);
            if (state[s] != VALID) {   /* this request reads the block in */
                state[s] = LOADING;
                pthread_mutex_unlock(&lock);
                bool ok = read_in(next, s, block);
                pthread_mutex_lock(&lock);
                state[s] = ok ? VALID : INVALID;
                pthread_cond_broadcast(&changed);
                if (!ok) {
                    iocache_unhold(cache, s);
                    pthread_mutex_unlock(&lock);
                    disk_time(n);
                    if (next->pread(next, out, n, offset, flags, err) == -1)
                        return -1;
                    goto next_block;
                }
            }
            readers[s]++;
            pthread_mutex_unlock(&lock);
            memcpy(out, pool + (size_t)s * block_bytes + in, n);
            pthread_mutex_lock(&lock);
            readers[s]--;
            iocache_unhold(cache, s);
            pthread_cond_broadcast(&changed);
            pthread_mutex_unlock(&lock);
        }
    next_block:
        pthread_mutex_lock(&lock);
        done(h->client);
        pthread_mutex_unlock(&lock);
        out += n;
        offset += n;
        count -= n;
    }
    return 0;
}

/* A write-like request on one block's part: through to the plugin by DO_IO, then the
 * cached copy updated from DATA (NULL: the slot must be read again). */
static int write_block(struct handle *h, uint64_t block, uint64_t in, uint32_t n,
                       const unsigned char *data, char op,
                       int (*do_io)(void *ctx, int *err), void *ctx, int *err)
{
    struct iocache_outcome o;
    pthread_mutex_lock(&lock);
    request(h->client, op, block);
    /* A write never goes around the cache: a read-in of the block beside it could cache
     * the data it replaces.  With every slot held it waits for one (holders never wait
     * for a write that holds nothing); each try counts as an access. */
    while (timed_access(h->client, block, true, &o), o.result == IOCACHE_BYPASS)
        pthread_cond_wait(&changed, &lock);
    uint32_t s = o.slot;
    iocache_hold(cache, s);
    if (o.result == IOCACHE_MISS)
        state[s] = EMPTY;
    wait_settled(s);
    enum state before = (enum state)state[s];
    state[s] = WRITING;
    pthread_mutex_unlock(&lock);
    int r = do_io(ctx, err);
    pthread_mutex_lock(&lock);
    while (readers[s])
        pthread_cond_wait(&changed, &lock);
    if (r == 0 && data && (before == VALID || (in == 0 && n == block_bytes))) {
        memcpy(pool + (size_t)s * block_bytes + in, data, n);
        state[s] = VALID;
    } else {
        state[s] = INVALID;
    }
    iocache_unhold(cache, s);
    done(h->client);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
    return r;
}

struct io {
    nbdkit_next *next;
    const void *buf;
    uint32_t count, flags;
    uint64_t offset;
    char op;
};

static int do_io(void *ctx, int *err)
{
    struct io *x = ctx;
    disk_time(x->count);
    switch (x->op) {
    case 'W': return x->next->pwrite(x->next, x->buf, x->count, x->offset, x->flags, err);
    case 'T': return x->next->trim(x->next, x->count, x->offset, x->flags, err);
    default: return x->next->zero(x->next, x->count, x->offset, x->flags, err);
    }
}

static int write_like(nbdkit_next *next, struct handle *h, const void *buf, uint32_t count,
                      uint64_t offset, uint32_t flags, char op, int *err)
{
    const unsigned char *data = buf;
    while (count > 0) {
        uint64_t block = offset / block_bytes, in = offset % block_bytes;
        uint32_t n = (uint32_t)(block_bytes - in < count ? block_bytes - in : count);
        struct io x = {next, data, n, flags, offset, op};
        if (write_block(h, block, in, n, data, 'W', do_io, &x, err) == -1)
            return -1;
        if (data)
            data += n;
        offset += n;
        count -= n;
    }
    return 0;
}

static int foresight_pwrite(nbdkit_next *next, void *handle, const void *buf, uint32_t count,
                            uint64_t offset, uint32_t flags, int *err)
{
    return write_like(next, handle, buf, count, offset, flags, 'W', err);
}

static int foresight_trim(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset,
                          uint32_t flags, int *err)
{
    return write_like(next, handle, NULL, count, offset, flags, 'T', err);
}

static int foresight_zero(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset,
                          uint32_t flags, int *err)
{
    return write_like(next, handle, NULL, count, offset, flags, 'Z', err);
}

static int foresight_can_cache(nbdkit_next *next, void *handle)
{
    (void)next;
    (void)handle;
    return NBDKIT_CACHE_NATIVE;
}

/* NBD_CMD_CACHE: the client's prefetch hint.  Replied at once; the connection's worker
 * reads in the blocks the policy admits. */
static int foresight_cache(nbdkit_next *next, void *handle, uint32_t count, uint64_t offset,
                           uint32_t flags, int *err)
{
    (void)next;
    (void)flags;
    (void)err;
    struct handle *h = handle;
    uint64_t first = offset / block_bytes;
    uint64_t last = count ? (offset + count - 1) / block_bytes : first;
    for (uint64_t block = first; count && block <= last; block++) {
        struct iocache_outcome o;
        pthread_mutex_lock(&lock);
        request(h->client, 'P', block);
        if (prefetching && h->running) {
            uint64_t t = now_ns();
            iocache_prefetch(cache, h->client, block, 0, &o);
            charge(t);
            if (o.result == IOCACHE_ADMITTED) {
                state[o.slot] = LOADING;
                iocache_hold(cache, o.slot);
                if (!enqueue(h, o.slot, block))
                    loaded(o.slot, false);
            }
        }
        done(h->client);   /* answered at once */
        pthread_mutex_unlock(&lock);
    }
    return 0;
}

static struct nbdkit_filter filter = {
    .name = "foresight",
    .longname = "Foresight shared I/O-node cache (paper 3)",
    .load = load,
    .unload = foresight_unload,
    .config = foresight_config,
    .config_complete = foresight_config_complete,
    .config_help = foresight_config_help,
    .get_ready = foresight_get_ready,
    .open = foresight_open,
    .prepare = foresight_prepare,
    .finalize = foresight_finalize,
    .close = foresight_close,
    .pread = foresight_pread,
    .pwrite = foresight_pwrite,
    .trim = foresight_trim,
    .zero = foresight_zero,
    .can_cache = foresight_can_cache,
    .cache = foresight_cache,
};

NBDKIT_REGISTER_FILTER(filter)
