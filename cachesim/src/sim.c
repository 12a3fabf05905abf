/*
 * sim.c — the simulator's one path per access: the access split into the lines it
 * touches, each line's page mapped (mapping.c) and so its physical line and set, the
 * CPU's cache (cache.c) and its shadow (shadow.c) referenced, and a miss named and made
 * coherent (coherence.c).  It owns the counters; the rules they follow are in
 * foresight_cachesim.h.
 *
 * Speed is the point of doing this in C (issue 25 asks for 20 M classified accesses per
 * second and core): nothing is allocated per access, every size is a power of two, each
 * CPU keeps its recent pages' translations, the shadow its recent lines in a small
 * array, and a write hit on a line the CPU already holds Modified, with no word history
 * kept, touches nothing but the directory entry.
 *
 * The optional L1 and time (foresight_cachesim.h) are here too: the L1 is one more
 * cs_cache per CPU in front of the L2, and time adds up per access what it stalls, and
 * at each barrier closes the phase (phase_time).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_internal.h"

/* Each CPU's recent translations, direct mapped by a hash of the virtual page: a loop
 * over several arrays goes back and forth between as many pages. */
#define CS_TLB 16u

struct cs_tlb {
    uint64_t vpage; /* UINT64_MAX: empty */
    uint64_t frame;
    uint32_t page;  /* its index in mapping order */
};

/* A CPU's part of the phase still open (time): what phase_time needs. */
struct cs_phase {
    uint64_t cycles;          /* a cycle per access, and the L2 hits' stalls */
    double lat_ns;            /* its stalls but the L2 hits', without bus waits */
    double block_ns;          /* the bus time of its transactions that stall it */
    uint64_t waits[CS_STALLS]; /* its bus transactions that stall it, per class */
};

struct cs_flight { /* a prefetched line on its way (time) */
    uint32_t id;
    double ready; /* on the CPU's clock in the phase (cpu_clock) */
};

struct cs_cpu {
    struct cs_cache cache;
    struct cs_cache l1; /* with an L1 */
    struct cs_flight flight[CS_PREFETCHES_IN_FLIGHT];
    unsigned nflight;
    struct cs_shadow shadow;
    struct cs_tlb tlb[CS_TLB];
    struct cs_cpu_stats st;
    struct cs_phase ph;
};

struct cs_sim {
    struct cs_config cfg;
    unsigned line_shift, lpp_shift; /* log2 line bytes, log2 lines per page */
    uint32_t set_mask, ncolors;
    struct cs_mapping map;
    struct cs_directory dir;
    uint64_t barriers;
    uint32_t l1_mask;       /* with an L1: its sets - 1 */
    double ns_per_cycle;    /* with time: 1000 / mhz; 0 without */
    double line_ns, word_ns; /* the bus's hold of a line and of an upgrade */
    double ph_bus_ns;       /* the open phase's bus busy time */
    uint64_t ph_holds;      /* ... and its bus transactions */
    double time_ns, bus_busy_ns; /* the closed phases' */
    struct cs_cpu cpu[];
};

static bool pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

static unsigned log2u(uint64_t x)
{
    return (unsigned)__builtin_ctzll(x);
}

/* The configuration's first fault, as a sentence, into ERR; 0 if none. */
static int check(const struct cs_config *cfg, char *err, size_t errlen)
{
    const unsigned long long l2 = cfg->l2_bytes, line = cfg->line, page = cfg->page;
    if (cfg->cpus < 1 || cfg->cpus > CS_MAX_CPUS)
        snprintf(err, errlen, "%u CPUs: must be 1..%d", cfg->cpus, CS_MAX_CPUS);
    else if (!pow2(l2))
        snprintf(err, errlen, "L2 size %llu is not a power of two", l2);
    else if (!pow2(line))
        snprintf(err, errlen, "line size %llu is not a power of two", line);
    else if (line < 8)
        snprintf(err, errlen, "line size %llu is smaller than a word (8 bytes)", line);
    else if (line > l2)
        snprintf(err, errlen, "line size %llu exceeds the L2 size %llu", line, l2);
    else if (l2 / line > (1u << 24))
        snprintf(err, errlen, "L2 of %llu lines: at most %u", l2 / line, 1u << 24);
    else if (!pow2(page))
        snprintf(err, errlen, "page size %llu is not a power of two", page);
    else if (page < line)
        snprintf(err, errlen, "page size %llu is smaller than the line (%llu)", page, line);
    else if (page / line > 65536)
        snprintf(err, errlen, "page size %llu holds %llu lines: at most 65536", page,
                 page / line);
    else if (cfg->assoc < 1 || (l2 / line) % cfg->assoc)
        snprintf(err, errlen, "associativity %u does not divide the cache's %llu lines",
                 cfg->assoc, l2 / line);
    else if ((unsigned)cfg->policy > CS_CDPC_BH)
        snprintf(err, errlen, "unknown page-mapping policy %u", (unsigned)cfg->policy);
    else if (cfg->l1_bytes && (!pow2(cfg->l1_bytes) || cfg->l1_bytes < line))
        snprintf(err, errlen, "L1 size %llu is not a power of two of at least a line (%llu)",
                 (unsigned long long)cfg->l1_bytes, line);
    else if (cfg->l1_bytes && cfg->l1_bytes / line > (1u << 20))
        snprintf(err, errlen, "L1 of %llu lines: at most %u",
                 (unsigned long long)(cfg->l1_bytes / line), 1u << 20);
    else if (cfg->l1_bytes && (cfg->l1_assoc < 1 || (cfg->l1_bytes / line) % cfg->l1_assoc))
        snprintf(err, errlen, "L1 associativity %u does not divide its %llu lines",
                 cfg->l1_assoc, (unsigned long long)(cfg->l1_bytes / line));
    else if (cfg->mhz && cfg->bus_mbs == 0)
        snprintf(err, errlen, "a bus bandwidth of 0: time needs one");
    else if (cfg->mhz && (cfg->mhz > 1000000 || cfg->l2_cycles > 1000000 ||
                          cfg->mem_ns > 100000000 || cfg->remote_ns > 100000000))
        snprintf(err, errlen, "a clock over 1 THz, an L2 hit over a million cycles, or a "
                 "miss over 0.1 s");
    else
        return 0;
    return -1;
}

static uint32_t ncolors_of(const struct cs_config *cfg)
{
    uint64_t way = cfg->l2_bytes / cfg->assoc;
    return way > cfg->page ? (uint32_t)(way / cfg->page) : 1;
}

struct cs_sim *cs_create(const struct cs_config *cfg, char *err, size_t errlen)
{
    char scratch[1];
    if (!err || !errlen) {
        err = scratch;
        errlen = sizeof scratch;
    }
    if (check(cfg, err, errlen))
        return NULL;
    struct cs_sim *s = calloc(1, sizeof *s + cfg->cpus * sizeof s->cpu[0]);
    if (!s)
        goto nomem;
    s->cfg = *cfg;
    s->line_shift = log2u(cfg->line);
    s->lpp_shift = log2u(cfg->page / cfg->line);
    uint32_t lines = (uint32_t)(cfg->l2_bytes / cfg->line);
    uint32_t sets = lines / cfg->assoc;
    s->set_mask = sets - 1;
    s->ncolors = ncolors_of(cfg);
    if (cs_mapping_init(&s->map, cfg->policy, s->ncolors, cfg->seed,
                        CS_MAX_LINE_IDS >> s->lpp_shift) ||
        cs_directory_init(&s->dir, cfg->cpus, cfg->line))
        goto nomem;
    if (cfg->mhz) {
        s->ns_per_cycle = 1000.0 / cfg->mhz;
        s->line_ns = cfg->line * 1000.0 / cfg->bus_mbs;
        s->word_ns = 8 * 1000.0 / cfg->bus_mbs;
    }
    uint32_t l1_sets = cfg->l1_bytes ? (uint32_t)(cfg->l1_bytes / cfg->line / cfg->l1_assoc) : 0;
    s->l1_mask = l1_sets ? l1_sets - 1 : 0;
    for (unsigned i = 0; i < cfg->cpus; i++) {
        struct cs_cpu *c = &s->cpu[i];
        for (unsigned e = 0; e < CS_TLB; e++)
            c->tlb[e].vpage = UINT64_MAX;
        if (cs_cache_init(&c->cache, sets, cfg->assoc) || cs_shadow_init(&c->shadow, lines) ||
            (l1_sets && cs_cache_init(&c->l1, l1_sets, cfg->l1_assoc)))
            goto nomem;
    }
    return s;
nomem:
    snprintf(err, errlen, "out of memory for the simulator's caches");
    cs_free(s);
    errno = ENOMEM;
    return NULL;
}

void cs_free(struct cs_sim *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->cfg.cpus; i++) {
        cs_cache_free(&s->cpu[i].cache);
        if (s->cfg.l1_bytes)
            cs_cache_free(&s->cpu[i].l1);
        cs_shadow_free(&s->cpu[i].shadow);
    }
    cs_mapping_free(&s->map);
    cs_directory_free(&s->dir);
    free(s);
}

uint32_t cs_ncolors(const struct cs_sim *s)
{
    return s->ncolors;
}

int cs_set_hints(struct cs_sim *s, const struct fs_color_run *runs, size_t n)
{
    return cs_mapping_set_hints(&s->map, runs, n);
}

/* A CPU's mean wait for the bus in the open phase, were the phase T ns long: an M/D/1
 * queue of every transaction but its own stalling ones (it never queues behind those:
 * it stalls on each). */
static double bus_wait(const struct cs_sim *s, const struct cs_phase *p, double t)
{
    if (t <= 0 || s->ph_holds == 0)
        return 0;
    double rho = (s->ph_bus_ns - p->block_ns) / t;
    if (rho > 0.95)
        rho = 0.95;
    return rho > 0 ? s->ph_bus_ns / (double)s->ph_holds * rho / (2 * (1 - rho)) : 0;
}

/* The open phase's length if it were T ns long (foresight_cachesim.h, "Time"):
 * decreasing in T. */
static double phase_f(const struct cs_sim *s, double t)
{
    double f = s->ph_bus_ns;
    for (unsigned i = 0; i < s->cfg.cpus; i++) {
        const struct cs_phase *p = &s->cpu[i].ph;
        uint64_t n = 0;
        for (int k = 0; k < CS_STALLS; k++)
            n += p->waits[k];
        const double own = (double)p->cycles * s->ns_per_cycle + p->lat_ns +
                           (double)n * bus_wait(s, p, t);
        if (own > f)
            f = own;
    }
    return f;
}

/* The open phase's length: the T with T = phase_f(T), by bisection between phase_f
 * without waits and phase_f of that. */
static double phase_time(const struct cs_sim *s)
{
    double lo = phase_f(s, 0), hi = phase_f(s, lo);
    for (int it = 0; it < 200 && hi - lo > 1e-9 * hi; it++) {
        const double mid = lo + (hi - lo) / 2;
        if (mid - phase_f(s, mid) < 0)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* Adds the open phase (time) to the counters in ST (per CPU) and *TIME, *BUS. */
static void phase_add(const struct cs_sim *s, struct cs_cpu_stats *st, double *time,
                      double *bus)
{
    const double t = phase_time(s);
    for (unsigned i = 0; i < s->cfg.cpus; i++) {
        const struct cs_phase *p = &s->cpu[i].ph;
        const double w = bus_wait(s, p, t);
        double own = (double)p->cycles * s->ns_per_cycle + p->lat_ns;
        for (int k = 0; k < CS_STALLS; k++) {
            st[i].stall_ns[k] += (double)p->waits[k] * w;
            own += (double)p->waits[k] * w;
        }
        st[i].idle_ns += t - own > 0 ? t - own : 0;
    }
    *time += t;
    *bus += s->ph_bus_ns;
}

static void phase_clear(struct cs_sim *s)
{
    for (unsigned i = 0; i < s->cfg.cpus; i++) {
        memset(&s->cpu[i].ph, 0, sizeof s->cpu[i].ph);
        s->cpu[i].nflight = 0; /* a barrier ends every flight */
    }
    s->ph_bus_ns = 0;
    s->ph_holds = 0;
}

void cs_barrier(struct cs_sim *s)
{
    s->barriers++;
    if (!s->cfg.mhz)
        return;
    struct cs_cpu_stats st[CS_MAX_CPUS];
    for (unsigned i = 0; i < s->cfg.cpus; i++)
        st[i] = s->cpu[i].st;
    phase_add(s, st, &s->time_ns, &s->bus_busy_ns);
    for (unsigned i = 0; i < s->cfg.cpus; i++)
        s->cpu[i].st = st[i];
    phase_clear(s);
}

/* A transaction holds the bus for HOLD ns, stalling nobody (time). */
static inline void bus_hold(struct cs_sim *s, double hold)
{
    s->ph_bus_ns += hold;
    s->ph_holds++;
}

/* CPU stalls on a bus transaction of class K with latency LAT ns, holding the bus HOLD
 * ns (time). */
static inline void bus_stall(struct cs_sim *s, struct cs_cpu *c, int k, double lat, double hold)
{
    bus_hold(s, hold);
    c->ph.block_ns += hold;
    c->ph.lat_ns += lat;
    c->ph.waits[k]++;
    c->st.stall_ns[k] += lat;
}

/* CPU C's clock in the open phase (time): its cycles and stalls, without bus waits. */
static inline double cpu_clock(const struct cs_sim *s, const struct cs_cpu *c)
{
    return (double)c->ph.cycles * s->ns_per_cycle + c->ph.lat_ns;
}

/* CPU C stalls D ns for a prefetched line (time). */
static inline void late(struct cs_cpu *c, double d)
{
    if (d > 0) {
        c->ph.lat_ns += d;
        c->st.stall_ns[CS_STALL_LATE] += d;
    }
}

/* A reference of CPU C to line ID in its L2 (HIT) or not: a prefetch of it still in
 * flight stalls a hit until it arrives, and is over either way (time). */
static void flight_end(const struct cs_sim *s, struct cs_cpu *c, uint32_t id, bool hit)
{
    for (unsigned k = 0; k < c->nflight; k++)
        if (c->flight[k].id == id) {
            if (hit)
                late(c, c->flight[k].ready - cpu_clock(s, c));
            c->flight[k] = c->flight[--c->nflight];
            return;
        }
}

/* The virtual line of line id ID (its page is mapped). */
static inline uint64_t vline_of(const struct cs_sim *s, uint32_t id)
{
    const uint32_t low = (UINT32_C(1) << s->lpp_shift) - 1;
    return (s->map.vpage[id >> s->lpp_shift] << s->lpp_shift) | (id & low);
}

/* VPAGE's translation into E, from the mapping (which maps the page now if no CPU
 * touched it yet). */
static int translate(struct cs_sim *s, struct cs_tlb *e, uint64_t vpage)
{
    /* the directory has room for one more page before the mapping can add it */
    if (cs_directory_grow(&s->dir, ((size_t)s->map.npages + 1) << s->lpp_shift))
        return -1;
    uint32_t page;
    bool fresh;
    if (cs_mapping_page(&s->map, vpage, &page, &fresh))
        return -1;
    *e = (struct cs_tlb){.vpage = vpage, .frame = s->map.frame[page], .page = page};
    return 0;
}

/* Takes line ID (in SET, at virtual line VLINE) out of the caches of the CPUs in MASK. */
static void invalidate(struct cs_sim *s, uint64_t mask, uint32_t set, uint32_t id,
                       uint64_t vline)
{
    for (; mask; mask &= mask - 1) {
        struct cs_cpu *c = &s->cpu[__builtin_ctzll(mask)];
        cs_cache_remove(&c->cache, set, id);
        if (s->cfg.l1_bytes)
            cs_cache_remove(&c->l1, (uint32_t)(vline & s->l1_mask), id);
    }
}

/* One reference by CPU to virtual line VLINE, accessing its words WLO..WHI. */
static int reference(struct cs_sim *s, unsigned cpu, uint64_t vline, unsigned wlo,
                     unsigned whi, bool write)
{
    struct cs_cpu *c = &s->cpu[cpu];
    uint64_t vpage = vline >> s->lpp_shift;
    struct cs_tlb *e = &c->tlb[(vpage * UINT64_C(0x9E3779B97F4A7C15)) >> 60];
    if (e->vpage != vpage && translate(s, e, vpage))
        return -1;
    uint32_t in_page = (uint32_t)(vline & ((UINT64_C(1) << s->lpp_shift) - 1));
    uint32_t id = (e->page << s->lpp_shift) | in_page;
    uint32_t set = (uint32_t)(((e->frame << s->lpp_shift) | in_page) & s->set_mask);
    if (s->map.cpus)
        s->map.cpus[e->page] |= UINT64_C(1) << cpu;
    struct cs_cpu_stats *st = &c->st;
    st->refs++;
    const bool l1 = s->cfg.l1_bytes != 0;
    const uint32_t l1_set = (uint32_t)(vline & s->l1_mask);
    const bool in_l1 = l1 && cs_cache_lookup(&c->l1, l1_set, id);
    if (in_l1) {
        const struct cs_line *l = &s->dir.line[id];
        if (!write || (l->dirty && l->excl == (int)cpu && !l->record)) {
            st->l1_hits++;
            return 0;
        }
    }
    bool in_shadow = cs_shadow_touch(&c->shadow, id);
    uint64_t inv;
    bool upgrade;

    const bool hit = cs_cache_lookup(&c->cache, set, id);
    if (c->nflight)
        flight_end(s, c, id, hit);
    if (hit) {
        st->hits++;
        if (l1 && !in_l1) { /* (in it: a write that must reach the L2) */
            cs_cache_insert(&c->l1, l1_set, id);
            if (s->ns_per_cycle) {
                c->ph.cycles += s->cfg.l2_cycles;
                st->stall_ns[CS_STALL_L2] += s->cfg.l2_cycles * s->ns_per_cycle;
            }
        }
        if (!write)
            return 0;
        const struct cs_line *l = &s->dir.line[id];
        if (l->dirty && l->excl == (int)cpu && !l->record)
            return 0; /* Modified here, no history to keep */
        if (cs_coherence_write(&s->dir, id, cpu, true, wlo, whi, &inv, &upgrade))
            return -1;
        st->upgrades += upgrade;
        st->invalidations += (uint64_t)__builtin_popcountll(inv);
        invalidate(s, inv, set, id, vline);
        if (upgrade && s->ns_per_cycle)
            bus_stall(s, c, CS_STALL_UPGRADE, s->word_ns, s->word_ns);
        return 0;
    }

    int kind;
    switch (cs_coherence_miss_kind(&s->dir, id, cpu, wlo, whi)) {
    case CS_COLD:
        st->cold++;
        kind = CS_STALL_COLD;
        break;
    case CS_TRUE_SHARING:
        st->true_sharing++;
        kind = CS_STALL_TRUE_SHARING;
        break;
    case CS_FALSE_SHARING:
        st->false_sharing++;
        kind = CS_STALL_FALSE_SHARING;
        break;
    default: /* CS_REPLACED */
        if (in_shadow) {
            st->conflict++;
            kind = CS_STALL_CONFLICT;
        } else {
            st->capacity++;
            kind = CS_STALL_CAPACITY;
        }
        break;
    }
    bool remote; /* another CPU held it Modified: its cache sends the line */
    if (write) {
        const struct cs_line *l = &s->dir.line[id];
        remote = l->dirty && l->excl >= 0 && l->excl != (int)cpu;
        if (cs_coherence_write(&s->dir, id, cpu, false, wlo, whi, &inv, &upgrade))
            return -1;
        st->invalidations += (uint64_t)__builtin_popcountll(inv);
        invalidate(s, inv, set, id, vline);
    } else {
        int wb = cs_coherence_read_miss(&s->dir, id, cpu);
        remote = wb >= 0;
        if (wb >= 0) {
            s->cpu[wb].st.writebacks++;
            if (s->ns_per_cycle)
                bus_hold(s, s->line_ns);
        }
    }
    if (s->ns_per_cycle)
        bus_stall(s, c, kind, remote ? s->cfg.remote_ns : s->cfg.mem_ns, s->line_ns);
    uint32_t victim = cs_cache_insert(&c->cache, set, id);
    if (victim != CS_NONE) {
        if (cs_coherence_evict(&s->dir, victim, cpu)) {
            st->writebacks++;
            if (s->ns_per_cycle)
                bus_hold(s, s->line_ns);
        }
        if (l1)
            cs_cache_remove(&c->l1, (uint32_t)(vline_of(s, victim) & s->l1_mask), victim);
    }
    if (l1)
        cs_cache_insert(&c->l1, l1_set, id);
    return 0;
}

int cs_access(struct cs_sim *s, unsigned cpu, uint64_t vaddr, uint32_t size, int write)
{
    if (cpu >= s->cfg.cpus || size == 0 || vaddr + (size - 1) < vaddr) {
        errno = EINVAL;
        return -1;
    }
    struct cs_cpu_stats *st = &s->cpu[cpu].st;
    st->accesses++;
    if (s->ns_per_cycle) {
        s->cpu[cpu].ph.cycles++;
        st->busy_ns += s->ns_per_cycle;
    }
    if (write)
        st->writes++;
    else
        st->reads++;
    const unsigned ls = s->line_shift;
    const uint64_t end = vaddr + (size - 1); /* the last byte */
    const uint64_t first = vaddr >> ls, last = end >> ls;
    const unsigned wlo = (unsigned)((vaddr & (s->cfg.line - 1)) >> 3);
    const unsigned whi = (unsigned)((end & (s->cfg.line - 1)) >> 3);
    const unsigned wmax = (s->cfg.line >> 3) - 1;
    if (first == last)
        return reference(s, cpu, first, wlo, whi, write);
    for (uint64_t l = first;; l++) {
        if (reference(s, cpu, l, l == first ? wlo : 0, l == last ? whi : wmax, write))
            return -1;
        if (l == last)
            return 0;
    }
}

int cs_prefetch(struct cs_sim *s, unsigned cpu, uint64_t vaddr)
{
    if (cpu >= s->cfg.cpus) {
        errno = EINVAL;
        return -1;
    }
    struct cs_cpu *c = &s->cpu[cpu];
    struct cs_cpu_stats *st = &c->st;
    st->prefetches++;
    if (s->ns_per_cycle) {
        c->ph.cycles++;
        st->busy_ns += s->ns_per_cycle;
    }
    const uint64_t vline = vaddr >> s->line_shift, vpage = vline >> s->lpp_shift;
    const uint32_t *page = cs_linemap_find(&s->map.pages, vpage);
    if (!page) { /* no CPU has touched it: dropped */
        st->prefetch_drops++;
        return 0;
    }
    const uint32_t in_page = (uint32_t)(vline & ((UINT64_C(1) << s->lpp_shift) - 1));
    const uint32_t id = (*page << s->lpp_shift) | in_page;
    const uint32_t set =
        (uint32_t)(((s->map.frame[*page] << s->lpp_shift) | in_page) & s->set_mask);
    if (cs_cache_lookup(&c->cache, set, id))
        return 0;
    if (s->ns_per_cycle) { /* room in flight: the fifth waits for the oldest */
        const double now = cpu_clock(s, c);
        unsigned k = 0;
        while (k < c->nflight)
            if (c->flight[k].ready <= now)
                c->flight[k] = c->flight[--c->nflight];
            else
                k++;
        if (c->nflight == CS_PREFETCHES_IN_FLIGHT) {
            unsigned old = 0;
            for (k = 1; k < c->nflight; k++)
                if (c->flight[k].ready < c->flight[old].ready)
                    old = k;
            late(c, c->flight[old].ready - now);
            c->flight[old] = c->flight[--c->nflight];
        }
    }
    (void)cs_coherence_miss_kind(&s->dir, id, cpu, 0, 0); /* it holds the line now */
    const int wb = cs_coherence_read_miss(&s->dir, id, cpu);
    if (wb >= 0) {
        s->cpu[wb].st.writebacks++;
        if (s->ns_per_cycle)
            bus_hold(s, s->line_ns);
    }
    st->prefetch_fills++;
    if (s->ns_per_cycle) {
        bus_hold(s, s->line_ns);
        for (unsigned k = 0; k < c->nflight; k++)
            if (c->flight[k].id == id) { /* its earlier fill left the L2 on the way */
                c->flight[k] = c->flight[--c->nflight];
                break;
            }
        c->flight[c->nflight++] = (struct cs_flight){
            .id = id,
            .ready = cpu_clock(s, c) + (wb >= 0 ? s->cfg.remote_ns : s->cfg.mem_ns)};
    }
    const uint32_t victim = cs_cache_insert(&c->cache, set, id);
    if (victim != CS_NONE) {
        if (cs_coherence_evict(&s->dir, victim, cpu)) {
            st->writebacks++;
            if (s->ns_per_cycle)
                bus_hold(s, s->line_ns);
        }
        if (s->cfg.l1_bytes)
            cs_cache_remove(&c->l1, (uint32_t)(vline_of(s, victim) & s->l1_mask), victim);
    }
    return 0;
}

static void add(struct cs_cpu_stats *to, const struct cs_cpu_stats *x)
{
    to->accesses += x->accesses;
    to->reads += x->reads;
    to->writes += x->writes;
    to->refs += x->refs;
    to->l1_hits += x->l1_hits;
    to->hits += x->hits;
    to->cold += x->cold;
    to->capacity += x->capacity;
    to->conflict += x->conflict;
    to->true_sharing += x->true_sharing;
    to->false_sharing += x->false_sharing;
    to->misses += x->misses;
    to->writebacks += x->writebacks;
    to->upgrades += x->upgrades;
    to->invalidations += x->invalidations;
    to->prefetches += x->prefetches;
    to->prefetch_fills += x->prefetch_fills;
    to->prefetch_drops += x->prefetch_drops;
    to->bus_bytes += x->bus_bytes;
    for (int k = 0; k < CS_STALLS; k++)
        to->stall_ns[k] += x->stall_ns[k];
    to->busy_ns += x->busy_ns;
    to->idle_ns += x->idle_ns;
}

void cs_reset_stats(struct cs_sim *s)
{
    for (unsigned i = 0; i < s->cfg.cpus; i++)
        memset(&s->cpu[i].st, 0, sizeof s->cpu[i].st);
    s->barriers = 0;
    phase_clear(s);
    s->time_ns = 0;
    s->bus_busy_ns = 0;
    if (s->map.cpus)
        memset(s->map.cpus, 0, (size_t)s->map.npages * sizeof *s->map.cpus);
}

int cs_track_pages(struct cs_sim *s)
{
    if (s->map.cpus)
        return 0;
    uint64_t *t = calloc(s->map.cap ? s->map.cap : 1, sizeof *t);
    if (!t) {
        errno = ENOMEM;
        return -1;
    }
    s->map.cpus = t;
    return 0;
}

int cs_page(const struct cs_sim *s, uint32_t i, uint64_t *vpage, uint64_t *frame,
            uint64_t *cpus)
{
    if (i >= s->map.npages) {
        errno = ERANGE;
        return -1;
    }
    *vpage = s->map.vpage[i];
    *frame = s->map.frame[i];
    *cpus = s->map.cpus ? s->map.cpus[i] : 0;
    return 0;
}

void cs_stats(const struct cs_sim *s, struct cs_stats *out)
{
    memset(out, 0, sizeof *out);
    out->cpus = s->cfg.cpus;
    out->ncolors = s->ncolors;
    for (unsigned i = 0; i < s->cfg.cpus; i++)
        out->cpu[i] = s->cpu[i].st;
    if (s->ns_per_cycle) { /* the closed phases and the open one */
        out->time_ns = s->time_ns;
        out->bus_busy_ns = s->bus_busy_ns;
        phase_add(s, out->cpu, &out->time_ns, &out->bus_busy_ns);
    }
    for (unsigned i = 0; i < s->cfg.cpus; i++) {
        struct cs_cpu_stats *c = &out->cpu[i];
        c->misses = c->cold + c->capacity + c->conflict + c->true_sharing + c->false_sharing;
        c->bus_bytes = (c->misses + c->prefetch_fills + c->writebacks) * s->cfg.line;
        add(&out->total, c);
    }
    out->barriers = s->barriers;
    out->pages = s->map.npages;
    out->pages_per_color = s->map.per_color;
}
