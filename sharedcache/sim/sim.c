/*
 * sim.c — closed-loop, trace-driven simulation of clients sharing I/O-node caches
 * (paper 3, Sections III–VI).
 *
 * Each client runs its trace in program order: it thinks (THINK_US), then makes its next
 * request and, for a read or write, waits for the reply.  Clients are interleaved by
 * simulated time (ties by client id), so the run is deterministic.  Blocks are striped
 * over the I/O nodes one block at a time (block b on node b mod N).  Each node has one
 * iocache (its replacement, accounting and control), a disk serving requests first come
 * first served, and a link its replies share; the device model in main.c says what each
 * costs.
 *
 *   read    hit: the reply leaves once the block's data are in (a prefetch still on its
 *           way is late: the client waits for the rest); miss: the disk reads the block
 *           first.  OBL then prefetches the next block of the same disk.
 *   write   write-through: the data cross the link, the disk writes them, the client
 *           waits for the disk.
 *   prefetch  nonbinding and asynchronous: the client pays the cost of sending it; if the
 *           node admits it, the disk reads the block behind the requests before it.
 *   barrier the client waits until every other client of its trace file that has not
 *           finished arrives.
 *
 * Epochs are E equal spans of the trace's R, W and P lines (in the order processed), the
 * same for every policy; at each span's end every node ends its epoch.
 *
 * The optimal control and MIN replacement need the future: it is taken from the same
 * trace run first (with plain prefetching for the optimal control, else with the
 * policy simulated; with lru-aging for MIN), whose order of requests stands for the
 * order they will come in.  What the oracle changes changes the timing, so clients
 * interleave differently the second time: a block's next use is the earliest (in the
 * first run's order) of its reads and writes not served yet, counting only those that
 * reach a node (a client's own cache serves the same reads in both runs).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim.h"

struct node {
    struct iocache *cache;
    uint64_t *ready;           /* per slot: when the block's data are in the cache */
    uint64_t disk_free, net_free, netin_free;
    uint64_t last_local;       /* the disk's last block, for sequential runs */
};

struct client_state {
    struct iocache *own;       /* the client's cache (--client-cache), or NULL */
    uint64_t t;
    size_t next;
    bool waiting, done;
    uint64_t barriers;         /* barriers passed */
};

/* For the oracle: per R/W/P line its position in the first run (LOCAL_HIT: a read its
 * client's own cache served, which never reaches a node); per block the sorted positions
 * of the reads and writes that reach a node, each marked once served. */
#define LOCAL_HIT UINT64_MAX
struct future {
    uint64_t *pos[IOCACHE_MAX_CLIENTS];
    uint64_t *uses;            /* (block, position) pairs sorted */
    size_t nuses;
    bool *served;              /* per use: served in the second run */
    size_t *cursor;            /* at a block's first use: its first use maybe unserved */
};

struct run {
    const struct trace *t;
    const struct config *cfg;
    struct result *r;
    struct node *node;
    unsigned nodes;
    struct client_state c[IOCACHE_MAX_CLIENTS];
    uint64_t processed, epoch_len, epoch_left;   /* epoch_left: lines until its end */
    uint64_t disk_block_ns, net_block_ns;        /* a block's time on the disk, the link */
    struct future *record;     /* the first run records positions here */
    struct future *oracle;
    /* the heap of runnable clients, by (time, id) */
    unsigned heap[IOCACHE_MAX_CLIENTS], nheap;
};

static uint64_t ns_for(uint64_t bytes, double rate)
{
    return (uint64_t)((double)bytes * 1e9 / rate + 0.5);
}

static bool before(const struct run *s, unsigned a, unsigned b)
{
    return s->c[a].t < s->c[b].t || (s->c[a].t == s->c[b].t && a < b);
}

static void heap_push(struct run *s, unsigned id)
{
    unsigned i = s->nheap++;
    s->heap[i] = id;
    while (i > 0 && before(s, s->heap[i], s->heap[(i - 1) / 2])) {
        unsigned p = (i - 1) / 2, x = s->heap[p];
        s->heap[p] = s->heap[i];
        s->heap[i] = x;
        i = p;
    }
}

static unsigned heap_pop(struct run *s)
{
    unsigned top = s->heap[0];
    s->heap[0] = s->heap[--s->nheap];
    for (unsigned i = 0;;) {
        unsigned l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && before(s, s->heap[l], s->heap[m]))
            m = l;
        if (r < s->nheap && before(s, s->heap[r], s->heap[m]))
            m = r;
        if (m == i)
            break;
        unsigned x = s->heap[m];
        s->heap[m] = s->heap[i];
        s->heap[i] = x;
        i = m;
    }
    return top;
}

static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* The disk of node N reads or writes BLOCK (node-local LOCAL) from time AT: when done. */
static uint64_t disk(struct run *s, struct node *n, uint64_t local, uint64_t at, bool write)
{
    const struct device *d = &s->cfg->device;
    uint64_t busy = s->disk_block_ns;
    if (local != n->last_local + 1)
        busy += d->seek_ns;
    n->last_local = local;
    uint64_t start = max64(at, n->disk_free);
    n->disk_free = start + busy;
    struct node_result *nr = &s->r->node[n - s->node];
    nr->disk_busy_ns += busy;
    if (write)
        nr->disk_writes++;
    else
        nr->disk_reads++;
    return n->disk_free;
}

/* A reply of one block leaves node N once READY and the link are free: when it arrives. */
static uint64_t reply(struct run *s, struct node *n, uint64_t ready)
{
    const struct device *d = &s->cfg->device;
    uint64_t xfer = s->net_block_ns;
    uint64_t start = max64(ready, n->net_free);
    n->net_free = start + xfer;
    s->r->node[n - s->node].net_busy_ns += xfer;
    return n->net_free + d->net_latency_ns;
}

/* The first use of BLOCK at or after (BLOCK, POS) in the sorted uses. */
static size_t lower_bound(const struct future *f, uint64_t block, uint64_t pos)
{
    size_t lo = 0, hi = f->nuses;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint64_t *u = &f->uses[2 * mid];
        if (u[0] < block || (u[0] == block && u[1] < pos))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The use at first-run position POS of BLOCK is being served. */
static void serve(struct future *f, uint64_t block, uint64_t pos)
{
    size_t i = lower_bound(f, block, pos);
    if (i < f->nuses && f->uses[2 * i] == block && f->uses[2 * i + 1] == pos)
        f->served[i] = true;
}

/* When BLOCK is next used: the earliest first-run position among its uses not served
 * yet (UINT64_MAX: none).  Not simply the first after NOW: clients interleave otherwise
 * in the second run, so positions come out of order, and a key naming a use already
 * served would keep its block forever. */
static uint64_t next_use(void *ctx, uint64_t block, uint64_t now)
{
    (void)now;
    struct future *f = ctx;
    size_t start = lower_bound(f, block, 0);
    if (start == f->nuses || f->uses[2 * start] != block)
        return UINT64_MAX;
    size_t i = f->cursor[start];
    while (i < f->nuses && f->uses[2 * i] == block && f->served[i])
        i++;
    f->cursor[start] = i;
    return i < f->nuses && f->uses[2 * i] == block ? f->uses[2 * i + 1] : UINT64_MAX;
}

static int prefetch(struct run *s, unsigned id, uint64_t block, uint64_t at, uint64_t now)
{
    struct node *n = s->nodes == 1 ? s->node : &s->node[block % s->nodes];
    struct iocache_outcome o;
    int err = iocache_prefetch(n->cache, id, block, now, &o);
    if (!err && o.result == IOCACHE_ADMITTED)
        n->ready[o.slot] = disk(s, n, s->nodes == 1 ? block : block / s->nodes,
                                at + s->cfg->device.net_latency_ns, false);
    return err;
}

/* --epoch-log: node I's epoch, its harm matrices as [k, l, count] triples (Figure 5). */
static void log_epoch(const struct run *s, unsigned i)
{
    FILE *f = s->cfg->epoch_log;
    const struct iocache_epoch *e = iocache_epoch(s->node[i].cache);
    unsigned n = s->t->clients;
    fprintf(f, "{\"node\": %u, \"epoch\": %u, \"harmful\": %llu, \"harm_misses\": %llu",
            i, iocache_epoch_number(s->node[i].cache), (unsigned long long)e->harmful,
            (unsigned long long)e->harm_misses);
    const uint64_t *m[2] = {e->harm, e->miss};
    for (int which = 0; which < 2; which++) {
        fprintf(f, which ? ", \"miss\": [" : ", \"harm\": [");
        bool first = true;
        for (unsigned k = 0; k < n; k++)
            for (unsigned l = 0; l < n; l++)
                if (m[which][k * n + l]) {
                    fprintf(f, "%s[%u, %u, %llu]", first ? "" : ", ", k, l,
                            (unsigned long long)m[which][k * n + l]);
                    first = false;
                }
        fputc(']', f);
    }
    fputs("}\n", f);
}

static void epoch_tick(struct run *s)
{
    s->processed++;
    if (--s->epoch_left == 0) {   /* a countdown: no division per line */
        s->epoch_left = s->epoch_len;
        for (unsigned i = 0; i < s->nodes; i++) {
            if (s->cfg->epoch_log && !s->record)
                log_epoch(s, i);
            iocache_epoch_end(s->node[i].cache);
        }
    }
}

/* Every live client of FILE's trace waits at a barrier: release them all. */
static void barrier_check(struct run *s, unsigned file)
{
    uint64_t latest = 0;
    for (unsigned i = 0; i < s->t->clients; i++) {
        const struct client_state *c = &s->c[i];
        if (s->t->client[i].file != file || c->done || !s->t->client[i].present)
            continue;
        if (!c->waiting)
            return;
        latest = max64(latest, c->t);
    }
    for (unsigned i = 0; i < s->t->clients; i++) {
        struct client_state *c = &s->c[i];
        if (s->t->client[i].file == file && c->waiting) {
            c->waiting = false;
            c->t = latest;
            c->barriers++;
            heap_push(s, i);
        }
    }
}

static void finish(struct run *s, unsigned id)
{
    s->c[id].done = true;
    s->r->client[id].finish_ns = s->c[id].t;
    barrier_check(s, s->t->client[id].file);   /* those waiting for it no longer do */
}

/* Client ID makes its request INDEX (not a barrier) at its time. */
static int request(struct run *s, unsigned id, size_t index)
{
    struct client_state *c = &s->c[id];
    const struct request *q = &s->t->client[id].req[index];
    const struct device *d = &s->cfg->device;
    uint64_t now = s->processed;
    if (s->record)
        s->record->pos[id][index] = now;
    else if (s->oracle)
        now = s->oracle->pos[id][index];
    /* One node (the usual case) takes no division. */
    struct node *n = s->nodes == 1 ? s->node : &s->node[q->block % s->nodes];
    uint64_t local = s->nodes == 1 ? q->block : q->block / s->nodes;
    uint64_t arrive = c->t + d->net_latency_ns;
    struct client_result *cr = &s->r->client[id];
    int err = 0;
    if (q->op == OP_PREFETCH) {
        if (s->cfg->policy != POL_NONE && s->cfg->prefetcher == PF_HINTS) {
            if (c->own && iocache_lookup(c->own, q->block) != IOCACHE_NOT_CACHED) {
                cr->local_skips++;
            } else {
                c->t += d->issue_ns;
                err = prefetch(s, id, q->block, c->t, now);
            }
        }
    } else {
        struct iocache_outcome o;
        bool write = q->op == OP_WRITE;
        if (c->own) {   /* the client's own cache: a read hit goes no further */
            err = iocache_access(c->own, 0, q->block, write, now, &o);
            if (!err && !write && o.result == IOCACHE_HIT) {
                cr->local_hits++;
                if (s->record)   /* the same in every run: the client's own order */
                    s->record->pos[id][index] = LOCAL_HIT;
                epoch_tick(s);
                return 0;
            }
        }
        if (!err && s->oracle)
            serve(s->oracle, q->block, now);
        if (!err)
            err = iocache_access(n->cache, id, q->block, write, now, &o);
        if (err)
            return err;
        uint64_t done;
        if (write) {
            uint64_t in = max64(arrive, n->netin_free) + s->net_block_ns;
            n->netin_free = in;
            n->ready[o.slot] = in;
            done = disk(s, n, local, in, true) + d->net_latency_ns;
        } else if (o.result == IOCACHE_HIT) {
            if (n->ready[o.slot] > arrive)
                cr->late_hits++;
            done = reply(s, n, max64(arrive, n->ready[o.slot]));
        } else {
            n->ready[o.slot] = disk(s, n, local, arrive, false);
            done = reply(s, n, n->ready[o.slot]);
            if (s->cfg->prefetcher == PF_OBL && s->cfg->policy != POL_NONE)
                err = prefetch(s, id, q->block + s->nodes, arrive, now);
        }
        cr->stall_ns += done - c->t;
        c->t = done;
    }
    epoch_tick(s);
    return err;
}

/* Client ID makes its next request at its time (closed loop); reschedules it. */
static int step(struct run *s, unsigned id)
{
    struct client_state *c = &s->c[id];
    const struct client_trace *ct = &s->t->client[id];
    if (c->next == ct->n) {
        finish(s, id);
        return 0;
    }
    size_t index = c->next++;
    c->t += ct->req[index].think_ns;
    if (ct->req[index].op == OP_BARRIER) {
        c->waiting = true;
        barrier_check(s, ct->file);
        return 0;
    }
    int err = request(s, id, index);
    heap_push(s, id);
    return err;
}

/* --serial: every line in the files' order, a client's time running on from its last
 * request (barriers are the lines' order itself). */
static int serial(struct run *s)
{
    int err = 0;
    for (size_t i = 0; i < s->t->lines && !err; i++) {
        unsigned id = s->t->order[i];
        struct client_state *c = &s->c[id];
        size_t index = c->next++;
        c->t += s->t->client[id].req[index].think_ns;
        if (s->t->client[id].req[index].op != OP_BARRIER)
            err = request(s, id, index);
    }
    for (unsigned i = 0; i < s->t->clients; i++)
        s->r->client[i].finish_ns = s->c[i].t;
    return err;
}

static enum iocache_control control_of(enum policy p)
{
    switch (p) {
    case POL_COARSE: return IOCACHE_COARSE;
    case POL_FINE: return IOCACHE_FINE;
    case POL_OPTIMAL: return IOCACHE_OPTIMAL;
    default: return IOCACHE_PLAIN;
    }
}

static void add_stats(struct iocache_client_stats *a, const struct iocache_client_stats *b)
{
    uint64_t *x = (uint64_t *)a;
    const uint64_t *y = (const uint64_t *)b;
    for (size_t i = 0; i < sizeof *a / sizeof(uint64_t); i++)
        x[i] += y[i];
}

static int simulate(const struct trace *t, const struct config *cfg, struct result *r,
                    enum policy policy, struct future *record, struct future *oracle)
{
    struct config mine = *cfg;
    mine.policy = policy;
    struct run s = {.t = t, .cfg = &mine, .r = r, .record = record, .oracle = oracle};
    s.nodes = cfg->ionodes;
    memset(r, 0, sizeof *r);
    uint64_t blocks = cfg->cache_bytes / cfg->block_bytes;
    if (!cfg->per_node_cache)
        blocks /= cfg->ionodes;
    if (blocks == 0)
        return EINVAL;
    r->cache_blocks = blocks;
    r->node = calloc(s.nodes, sizeof *r->node);
    s.node = calloc(s.nodes, sizeof *s.node);
    int err = r->node && s.node ? 0 : ENOMEM;
    struct iocache_params p;
    iocache_params_default(&p);
    p.capacity = blocks;
    p.clients = t->clients;
    p.replacement = cfg->replacement;
    p.control = control_of(policy);
    p.throttle = cfg->throttle;
    p.pin = cfg->pin;
    p.threshold = cfg->threshold;
    p.k = cfg->k;
    p.metric = cfg->metric;
    p.shadows = cfg->shadows;
    p.next_use = next_use;
    p.next_use_ctx = (void *)oracle;
    struct iocache_params own;
    iocache_params_default(&own);
    own.capacity = cfg->client_cache_bytes / cfg->block_bytes;
    own.clients = 1;
    own.replacement = IOCACHE_LRU;
    own.control = IOCACHE_PLAIN;
    for (unsigned i = 0; i < t->clients && !err && own.capacity; i++)
        err = iocache_create(&own, &s.c[i].own);
    for (unsigned i = 0; i < s.nodes && !err; i++) {
        s.node[i].last_local = UINT64_MAX - 1;
        err = iocache_create(&p, &s.node[i].cache);
        if (!err && !(s.node[i].ready = calloc(blocks, sizeof *s.node[i].ready)))
            err = ENOMEM;
    }
    s.epoch_len = t->requests / cfg->epochs + (t->requests % cfg->epochs != 0);
    if (s.epoch_len == 0)
        s.epoch_len = 1;
    s.epoch_left = s.epoch_len;
    s.disk_block_ns = ns_for(cfg->block_bytes, cfg->device.disk_rate);
    s.net_block_ns = ns_for(cfg->block_bytes, cfg->device.net_rate);
    if (cfg->serial && !err) {
        err = serial(&s);
    } else {
        for (unsigned i = 0; i < t->clients && !err; i++)
            heap_push(&s, i);
        while (s.nheap && !err)
            err = step(&s, heap_pop(&s));
    }
    for (unsigned i = 0; i < t->clients; i++)
        r->makespan_ns = max64(r->makespan_ns, r->client[i].finish_ns);
    if (!err && cfg->epoch_log && !record && s.processed % s.epoch_len != 0)
        for (unsigned i = 0; i < s.nodes; i++)   /* the last, partial epoch */
            log_epoch(&s, i);
    for (unsigned i = 0; i < s.nodes; i++) {
        if (!s.node[i].cache)
            continue;
        iocache_stats(s.node[i].cache, &r->node[i].cache);
        const struct iocache_stats *ns = &r->node[i].cache;
        r->total.harmful += ns->harmful;
        r->total.benign += ns->benign;
        r->total.unresolved += ns->unresolved;
        r->total.intra += ns->intra;
        r->total.inter += ns->inter;
        r->total.open_shadows += ns->open_shadows;
        r->total.pin_skips += ns->pin_skips;
        r->total.epochs = ns->epochs;
        for (unsigned c = 0; c < t->clients; c++)
            add_stats(&r->client[c].cache, &ns->client[c]);
        iocache_free(s.node[i].cache);
        free(s.node[i].ready);
    }
    r->total.clients = t->clients;
    for (unsigned i = 0; i < t->clients; i++)
        iocache_free(s.c[i].own);
    free(s.node);
    return err;
}

static int cmp_use(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : x[1] > y[1];
}

static void future_free(struct future *f)
{
    for (unsigned i = 0; i < IOCACHE_MAX_CLIENTS; i++)
        free(f->pos[i]);
    free(f->uses);
    free(f->served);
    free(f->cursor);
}

/* The order of requests of a first run (plain prefetching for the optimal control, else
 * the policy simulated; lru-aging for MIN), for the oracle. */
static int foresee(const struct trace *t, const struct config *cfg, struct future *f)
{
    memset(f, 0, sizeof *f);
    size_t refs = 0;
    for (unsigned i = 0; i < t->clients; i++) {
        if (!(f->pos[i] = calloc(t->client[i].n + 1, sizeof *f->pos[i])))
            return ENOMEM;
        for (size_t j = 0; j < t->client[i].n; j++)
            refs += t->client[i].req[j].op == OP_READ || t->client[i].req[j].op == OP_WRITE;
    }
    struct config first = *cfg;
    if (first.replacement == IOCACHE_MIN)
        first.replacement = IOCACHE_LRU_AGING;
    struct result plain;
    int err = simulate(t, &first, &plain, cfg->policy == POL_OPTIMAL ? POL_PLAIN : cfg->policy,
                       f, NULL);
    result_free(&plain);
    if (err)
        return err;
    if (!(f->uses = malloc((refs + 1) * 2 * sizeof *f->uses)) ||
        !(f->served = calloc(refs + 1, sizeof *f->served)) ||
        !(f->cursor = malloc((refs + 1) * sizeof *f->cursor)))
        return ENOMEM;
    for (unsigned i = 0; i < t->clients; i++)
        for (size_t j = 0; j < t->client[i].n; j++) {
            const struct request *q = &t->client[i].req[j];
            if ((q->op == OP_READ || q->op == OP_WRITE) && f->pos[i][j] != LOCAL_HIT) {
                f->uses[2 * f->nuses] = q->block;
                f->uses[2 * f->nuses + 1] = f->pos[i][j];
                f->nuses++;
            }
        }
    qsort(f->uses, f->nuses, 2 * sizeof *f->uses, cmp_use);
    for (size_t i = 0; i < f->nuses; i++)
        f->cursor[i] = i;
    return 0;
}

int sim_run(const struct trace *t, const struct config *cfg, struct result *r)
{
    struct timespec a, b;
    memset(r, 0, sizeof *r);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    int err;
    if (cfg->policy == POL_OPTIMAL || cfg->replacement == IOCACHE_MIN) {
        struct future f;
        err = foresee(t, cfg, &f);
        if (!err)
            err = simulate(t, cfg, r, cfg->policy, NULL, &f);
        future_free(&f);
    } else {
        err = simulate(t, cfg, r, cfg->policy, NULL, NULL);
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    r->seconds = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    return err;
}

void result_free(struct result *r)
{
    free(r->node);
    r->node = NULL;
}
