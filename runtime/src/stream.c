/*
 * stream.c — the slow path of a compiled loop's stream (foresight_stream_step in
 * foresight.h): which granules to prefetch ahead of a strided reference and which to
 * release behind it.  The compiled loop counts iterations down in a local and calls
 * here once per granule the look-ahead address enters, so the code `foresight cc` adds
 * per reference is one comparison, one decrement and this call.
 *
 * Arithmetic is in uintptr_t and wraps, as addresses of a loop that walks off its
 * object may; nothing is dereferenced.  A step downwards is a two's-complement step.
 */
#include "internal.h"

static bool upward(const struct foresight_stream *st)
{
    return st->fs_step < UINTPTR_MAX / 2;
}

static uintptr_t magnitude(uintptr_t x)
{
    return x > UINTPTR_MAX / 2 ? (uintptr_t)0 - x : x;
}

/* Bytes to prefetch at granule `at & ~(g - 1)`: the granule, or across an outer loop two
 * of them (a block) or the pages of the region. */
static uintptr_t span(const struct foresight_stream *st, uintptr_t at)
{
    const uintptr_t g = st->fs_granule;
    if (!(st->fs_flags & FORESIGHT_STREAM_REGION))
        return g;
    return st->fs_abs >= g ? (at & (g - 1)) + st->fs_region : 2 * g;
}

/* Whether granule b follows the last one hinted: the next step along the stream (a
 * stride of a granule or more moves the granule by the stride rounded up to granules). */
static bool continues(const struct foresight_stream *st, uintptr_t b)
{
    const uintptr_t last = st->fs_last, a = st->fs_abs, g = st->fs_granule;
    const uintptr_t step = a >= g ? (a + g - 1) & ~(g - 1) : g;
    if (last == 1)
        return false;
    return upward(st) ? b > last && b - last <= step : b < last && last - b <= step;
}

/* Granules a restart's window hints at most: a step stays bounded in time whatever
 * `ahead` is (the default look-ahead is 1,024 pages; a window of a stride under a
 * granule takes one call per granule). */
#define WINDOW_MOST 4096

/* A restart: the window from the reference to the look-ahead granule, within the run. */
static void window(struct foresight_stream *st, struct foresight_site *site, uintptr_t now,
                   uintptr_t reach)
{
    const uintptr_t a = st->fs_abs, g = st->fs_granule, s = st->fs_step;
    const uintptr_t inc = a >= g || a == 0 ? 1 : g / a;
    for (uintptr_t t = 0, calls = 0; t <= reach && calls < WINDOW_MOST; t += inc, calls++) {
        foresight_prefetch_at(site, (const void *)((now + t * s) & ~(g - 1)),
                              span(st, now + t * s));
        if (t > UINTPTR_MAX - inc)
            break; /* the next t would wrap */
    }
}

/*
 * A restart whose run of the loop touches less than a block (a few rows of a
 * column, a plane of a stencil) gains nothing from a window along it: the runs that
 * follow matter.  When runs start a constant jump apart, hint the run `n` jumps ahead
 * (n covers the look-ahead bytes, at most 1024); otherwise, for a dense run upwards
 * that begins where an earlier short run at this site ended (in this entry of the
 * nest or an earlier one: runs.c), the stream ahead of it; otherwise this run.  At most
 * one call per run, none when its granule was hinted last.
 */
static void short_run(struct foresight_stream *st, struct foresight_site *site,
                      uintptr_t now, uintmax_t rest)
{
    const uintptr_t a = st->fs_abs, g = st->fs_granule, page = st->fs_page;
    const uintptr_t jj = now - st->fs_run_start;
    uintptr_t q = 0;
    if (st->fs_run_start != 0 && jj == st->fs_jump) {
        if (st->fs_jump_runs == 0) { /* n for this jump, once (it depends on nothing else) */
            const uintptr_t aj = magnitude(jj);
            uintptr_t n = aj == 0 ? 0 : (st->ahead * a + g) / (aj > page ? aj : page);
            st->fs_jump_runs = (n > 1024 ? 1024 : n) + 1;
        }
        q = st->fs_jump_runs - 1;
    } else {
        st->fs_jump_runs = 0;
        uintptr_t from, to;
        if (a < page && upward(st) &&
            fs_run_continues(site, now, ((uintptr_t)rest + 1) * a, foresight__lookahead(), &from,
                             &to)) {
            foresight_prefetch_at(site, (const void *)from, to - from);
            st->fs_short_last = 1;
            st->fs_jump = jj;
            st->fs_run_start = now;
            return;
        }
    }
    const uintptr_t tb = (now + q * jj) & ~(g - 1);
    if (tb != st->fs_short_last) {
        const uintptr_t run = ((uintptr_t)rest + 1) * a;
        foresight_prefetch_at(site, (const void *)tb, a >= g ? g : run + g);
        st->fs_short_last = tb;
    }
    st->fs_jump = jj;
    st->fs_run_start = now;
}

/* Release from the frontier up to the granule `lag` iterations behind `trail`, while the
 * stream moves on within its window; a stride of a granule or more releases only what
 * the reference touched one iteration behind. */
static void release_behind(struct foresight_stream *st, struct foresight_site *site,
                           uintptr_t trail)
{
    const uintptr_t a = st->fs_abs, g = st->fs_granule, s = st->fs_step, mask = ~(g - 1);
    const uintptr_t ru = trail - st->fs_low - st->fs_lag * s, r = ru & mask;
    const uintptr_t rel = st->fs_released, win = st->ahead * a + 2 * g;
    const bool up = upward(st);
    if (rel != 0 && (up ? r > rel && r - rel <= win : r < rel && rel - r <= win)) {
        if (a >= g) {
            const uintptr_t q = up ? ru - a : ru + a;
            const uintptr_t bytes =
                st->fs_flags & FORESIGHT_STREAM_REGION ? (g - 1 + (q & (g - 1)) + st->fs_region) & mask
                                                       : g;
            foresight_release_at(site, (const void *)(q & mask), bytes);
        } else if (up) {
            foresight_release_at(site, (const void *)rel, r - rel);
        } else {
            foresight_release_at(site, (const void *)(r + g), rel - r);
        }
    }
    st->fs_released = r;
}

/*
 * FORESIGHT_STREAM_SWEEP: the compiler could not evaluate at nest entry whether one
 * iteration of the loop that reuses the stream's data touches more than memory (its
 * inner bounds are loads, as CSR rows' are), so the stream measures it as it runs: the
 * bytes it moves one way (within a run of its loop all of them; a run that begins
 * within its window, as abutting rows do, continues the sweep, one that jumps forward
 * adds nothing, one that jumps back starts a new sweep).  Once one sweep passes the
 * memory limit (the streams a loop steps together: their sweeps' sum, as one iteration
 * touches them all), the data behind it cannot stay until the reuse, and it is released
 * behind from then on, as when the volume is known to exceed memory at entry.  NAS CG,
 * 192 MiB under a 64 MiB cap, its matrix's a[k] and colidx[k] released so (three
 * alternating runs each): 6.9-7.4 s against 9.4-10.0 s unreleased and 20.1-22.0 s
 * unhinted; swap-in 3.8 against 4.8 GiB.
 */
static void measure_sweep(struct foresight_stream *st, uintptr_t now, uintptr_t cnt)
{
    const uintptr_t at = st->fs_sweep_at, a = st->fs_abs, page = st->fs_page;
    st->fs_sweep_at = now;
    if (at == 0 || now == at)
        return;
    if (upward(st) ? now < at : now > at) {
        st->fs_sweep_bytes = 0; /* back to the start: a new sweep */
        return;
    }
    const uintptr_t moved = upward(st) ? now - at : at - now;
    /* Within a run of the loop every byte passed was passed by the loop (steps skip
     * granules found resident); a run that starts past the window jumped there. */
    if (cnt == 0 && moved > st->ahead * a + 2 * st->fs_granule)
        return;
    /* A stride over a page touches a page per element, not the bytes between. */
    st->fs_sweep_bytes += a > page ? moved / a * page : moved;
}

static bool sweeping(const struct foresight_stream *st)
{
    return (st->fs_flags & (FORESIGHT_STREAM_SWEEP | FORESIGHT_STREAM_RELEASE)) ==
           FORESIGHT_STREAM_SWEEP;
}

/* The streams of ST[0..n) still measuring release behind them from their next step on
 * once their sweeps together pass the memory limit.  Streams sweeping the same bytes a
 * little apart (a[t], a[t - d]: the same step, each within the other's sweep) count the
 * bytes once and the distance between them: seismo's running sums read its 40 MiB
 * common average at t, t - 512 and t - 16384 for each of 16 channels, and counted
 * three times it passed a 64 MiB limit and was paged out and read back every channel. */
static void sweeps_passed(struct foresight_stream *st, unsigned n)
{
    uintmax_t total = 0;
    for (unsigned k = 0; k < n; k++) {
        if (!sweeping(&st[k]))
            continue;
        uintmax_t add = st[k].fs_sweep_bytes;
        for (unsigned j = 0; j < k; j++) {
            if (!sweeping(&st[j]) || st[j].fs_step != st[k].fs_step)
                continue;
            const uintptr_t x = st[j].fs_sweep_at, y = st[k].fs_sweep_at;
            const uintptr_t d = x > y ? x - y : y - x;
            if (d < st[j].fs_sweep_bytes && d < st[k].fs_sweep_bytes && d < add)
                add = d;
        }
        total += add;
    }
    if (total <= fs_budget_limit_bytes())
        return;
    for (unsigned k = 0; k < n; k++)
        if (sweeping(&st[k])) {
            st[k].fs_flags |= FORESIGHT_STREAM_RELEASE;
            st[k].fs_released = 0; /* its next step starts releasing from where it is */
        }
}

/* Granules skip_marked() passes over at most per step. */
#define SKIP_MOST 256

/*
 * The iterations after this one the loop may skip before its next step, `cnt` being
 * those until the look-ahead address leaves granule b: as long as the granules the
 * look-ahead address enters next are already marked resident, their hints would all
 * be filtered, so the loop counts down over them too and the stream carries on from
 * the last (st->fs_last).  Each granule passed counts as a filtered call, and no more
 * are passed than the site's filtered calls left before its next verification
 * (foresight__filtered_check), so stale marks are found as often as without skipping.
 * A run passes at most as many granules as it has seen so far (st->fs_streak, from 0
 * where the loop starts), so a short run of a loop whose end is not known costs a few
 * table lookups, not SKIP_MOST; none past a known end (`rest`).  Releases must see
 * every granule a stride of a granule or more touches: no skipping there; with a
 * smaller stride the skipped granules are released by the next step, so a stream that
 * releases skips only where that step falls within the run (its end known), and by no
 * more than the release window.
 */
static uintptr_t skip_marked(struct foresight_stream *st, struct foresight_site *site,
                             uintptr_t cnt, uintptr_t la, uintmax_t rest)
{
    const uintptr_t a = st->fs_abs, g = st->fs_granule, s = st->fs_step;
    const bool release = st->fs_flags & FORESIGHT_STREAM_RELEASE;
    st->fs_streak++;
    const bool runs = st->fs_flags & FORESIGHT_STREAM_RUNS;
    if (a == 0 || (release && (a >= g || !runs)))
        return cnt;
    uint64_t *const *dir = foresight__directory();
    unsigned long left = __atomic_load_n(&site->fs_countdown, __ATOMIC_RELAXED);
    unsigned long most = left < SKIP_MOST ? left : SKIP_MOST;
    if (st->fs_streak - 1 < most)
        most = st->fs_streak - 1;
    if (release && st->ahead * a / g < most)
        most = st->ahead * a / g;
    unsigned long passed = 0;
    uintptr_t at = la + cnt * s; /* the look-ahead address on the iteration after cnt */
    while (passed < most && (!runs || cnt <= rest)) {
        const uintptr_t nb = at & ~(g - 1);
        if (dir == NULL || !foresight__marked(dir, (const void *)nb, span(st, at)))
            break;
        /* The iterations the look-ahead address stays in granule nb. */
        const uintptr_t stay = a >= g ? 1 : upward(st) ? (nb + g - at + a - 1) / a
                                                        : (at - nb) / a + 1;
        if (release && cnt + stay > rest)
            break; /* the next step, which releases what was skipped, would not come */
        cnt += stay;
        at += stay * s;
        st->fs_last = nb;
        passed++;
    }
    if (passed != 0)
        __atomic_store_n(&site->fs_countdown, left - passed, __ATOMIC_RELAXED);
    st->fs_streak += passed;
    return cnt;
}

/* fs_flags bit (beyond the public FORESIGHT_STREAM_* flags): the stream's memory was
 * looked at (kernel_reads_ahead). */
#define CHECKED (1u << 8)
/* fs_flags bit: the current run of the loop touches less than a block (step). */
#define SHORT_RUN (1u << 9)
/* fs_flags bit: left to the kernel's readahead (kernel_reads_ahead; with IDLE), its
 * first address in fs_last. */
#define KERNEL (1u << 10)
/* fs_flags bit: a stream over the page cache that may be in the sweep of one left to the
 * kernel (swept): looked at on its next step. */
#define SWEEPABLE FORESIGHT__STREAM_STEP_DUE
/* fs_flags bits 16-23 and 24-31: the stream's index in its nest's array and the nest's
 * number of streams (foresight__nest_enter; 0 for a stream set up alone). */
#define NEST_INDEX(f) (((f) >> 16) & 0xffu)
#define NEST_COUNT(f) ((f) >> 24)

/*
 * A dense stream upwards (one that touches every page it passes) over file-backed
 * memory is left to the kernel: its fault-time readahead reads such a stream ahead asynchronously, and hints on
 * top of it cost more than they save.  Measured (NAS kernels, --backing file, 192 MiB
 * of data under a 64 MiB cap, read_ahead_kb 128): MG 6.4 s unhinted, 8.7 s with these
 * hints (system time 2.9 -> 7.7 s: the worker's WILLNEED reads reclaim from the full
 * cgroup and unmap the main thread's pages, a TLB shootdown on the other CPU each
 * time), 6.6 s without them; CG 4.2, 5.6, 4.2 s; IS 17.9, 19.0, 8.9 s (its gathers
 * keep their hints).  Strides of a page or more, streams downwards, anonymous memory
 * (swap-in reads no more than 8 pages ahead) and private writable file mappings (a
 * program's data and bss: its pages may be copies) keep their hints, and
 * FORESIGHT_FILE_STREAMS=hint keeps them for all (a device without readahead,
 * read_ahead_kb 0).  Looked at once per set-up of the stream; rows reached through row
 * pointers one row at a time (long_row).
 */
static bool dense_up_the_page_cache(const struct foresight_stream *st, uintptr_t now)
{
    /* Dense: it touches every page it passes: a stride under a page, or across an outer
     * loop a region per iteration leaving gaps under a page (a stencil's rows, one plane
     * after another, without their boundary points). */
    const bool dense = st->fs_abs < st->fs_page ||
                       ((st->fs_flags & FORESIGHT_STREAM_REGION) &&
                        st->fs_region + st->fs_page > st->fs_abs);
    return !fs_cfg.file_streams_hinted && st->fs_abs != 0 && dense && upward(st) &&
           fs_mapping_page_cache(now >> FORESIGHT_PAGE_SHIFT) &&
           !fs_remote_covers(now >> FORESIGHT_PAGE_SHIFT); /* its prefetches go to the node */
}

static bool kernel_reads_ahead(struct foresight_stream *st, struct foresight_site *site,
                               uintptr_t now)
{
    st->fs_flags |= CHECKED;
    if (st->fs_flags & FORESIGHT_STREAM_ROWS)
        return false;
    if (!dense_up_the_page_cache(st, now)) {
        if (NEST_COUNT(st->fs_flags) > 1 && st->fs_abs != 0 && upward(st) &&
            !fs_cfg.file_streams_hinted && fs_mapping_page_cache(now >> FORESIGHT_PAGE_SHIFT) &&
            !fs_remote_covers(now >> FORESIGHT_PAGE_SHIFT)) {
            if (!(__atomic_load_n(&site->fs_state, __ATOMIC_RELAXED) & FS_SITE_SWEPT)) {
                st->fs_flags |= SWEEPABLE;
                return false;
            }
            /* Found in a sibling's sweep before: left to the kernel from the start. */
            st->fs_flags |= FORESIGHT_STREAM_IDLE;
            fs_count(site, FS_KERNEL_READAHEAD, 1);
            return true;
        }
        return false;
    }
    st->fs_flags |= FORESIGHT_STREAM_IDLE | KERNEL;
    st->fs_last = now - st->fs_low;
    fs_site_register(site);
    fs_count(site, FS_KERNEL_READAHEAD, 1);
    return true;
}

/*
 * A stream over the page cache whose pages a sibling of its nest left to the kernel's
 * readahead (kernel_reads_ahead) sweeps is left to it too: upwards, in the same file
 * mapping, and on its first step after the sibling's (SWEEPABLE) within a stride of
 * where the sibling began, so the readahead that follows the sibling's faults reads its
 * pages within an iteration of its own look-ahead.  Its hints would only put single pages in
 * the readahead's way: measured, NAS MG over files (192 MiB under 64 MiB, read_ahead_kb
 * 128), rows 0, 1, n2 and n2+1 of each plane prefetched across k in the boundary
 * exchange (comm3) beside the column walk over the whole plane.  The site remembers
 * it: the nest's next entries leave the stream to the kernel from its first step.
 */
static bool swept(struct foresight_stream *st, struct foresight_site *site, uintptr_t now)
{
    st->fs_flags &= ~SWEEPABLE;
    const unsigned f = st->fs_flags, n = NEST_COUNT(f);
    struct foresight_stream *const nest = st - NEST_INDEX(f);
    const uintptr_t at = now - st->fs_low, a = st->fs_abs;
    uintptr_t lo, hi;
    if (fs_mapping_of(at >> FORESIGHT_PAGE_SHIFT, &lo, &hi) != FS_MEM_FILE)
        return false;
    for (unsigned j = 0; j < n; j++) {
        const struct foresight_stream *o = &nest[j];
        const uintptr_t from = o->fs_last, page = from >> FORESIGHT_PAGE_SHIFT;
        if (o == st || !(o->fs_flags & KERNEL) || page < lo || page >= hi ||
            at + a < from || at > from + 2 * a)
            continue;
        st->fs_flags |= FORESIGHT_STREAM_IDLE;
        __atomic_fetch_or(&site->fs_state, FS_SITE_SWEPT, __ATOMIC_RELAXED);
        fs_site_register(site);
        fs_count(site, FS_KERNEL_READAHEAD, 1);
        return true;
    }
    return false;
}

/*
 * Rows reached through row pointers are separate objects, so they are looked at one run
 * (row) at a time: a row of LONG_ROW or more, dense upwards over the page cache, is left
 * to the kernel's readahead, which then loses one fault per row, and the run goes
 * unhinted; a shorter row keeps its hints (readahead would read past its end into
 * another row's memory).  seismo's channels, 16 MiB each through a pointer per channel:
 * 0.525 s hinted against 0.481 s with hints off (median of 5), 3,297 MADV_WILLNEED calls
 * and 4,064 releases beside the kernel's readahead.
 */
#define LONG_ROW ((uintmax_t)4 << 20)

static bool long_row(struct foresight_stream *st, struct foresight_site *site, uintptr_t now,
                     uintmax_t rest)
{
    const uintptr_t a = st->fs_abs;
    if ((st->fs_flags & (FORESIGHT_STREAM_ROWS | FORESIGHT_STREAM_RUNS)) !=
            (FORESIGHT_STREAM_ROWS | FORESIGHT_STREAM_RUNS) ||
        a == 0 || rest < (LONG_ROW + a - 1) / a - 1 || !dense_up_the_page_cache(st, now))
        return false;
    fs_site_register(site);
    fs_count(site, FS_KERNEL_READAHEAD, 1);
    return true;
}

static uintptr_t step(struct foresight_stream *st, struct foresight_site *site, uintptr_t cnt,
                      uintptr_t now, uintmax_t rest, uintptr_t trail)
{
    if (st->fs_flags & FORESIGHT_STREAM_IDLE)
        return UINTPTR_MAX;
    if (!(st->fs_flags & CHECKED)) {
        if (kernel_reads_ahead(st, site, now))
            return UINTPTR_MAX;
        /* Exempt from the budget (issue.c) while the bytes it keeps in flight (its
         * volume per iteration, the pages of its region for a stride of a page or
         * more, times its look-ahead) are within a sixteenth of the limit (twice the
         * default look-ahead's cap: room for a region wider than its stride): not
         * when a look-ahead set by hand (FORESIGHT_LOOKAHEAD) or the paper preset's
         * fixed distance puts more in flight.  Counted by the stride, NAS SP's z_solve (a plane per iteration, a
         * page or two of it touched) had 26,120 of its 32,226 pages dropped. */
        if ((uintmax_t)st->ahead * st->volume <= fs_budget_limit_bytes() / 16 &&
            !(__atomic_load_n(&site->fs_state, __ATOMIC_RELAXED) & FS_SITE_STREAM))
            __atomic_fetch_or(&site->fs_state, FS_SITE_STREAM, __ATOMIC_RELAXED);
    } else if ((st->fs_flags & SWEEPABLE) && swept(st, site, now)) {
        return UINTPTR_MAX;
    }
    if (sweeping(st)) {
        measure_sweep(st, now, cnt);
        sweeps_passed(st, 1);
    }
    if (cnt == 0 && long_row(st, site, now, rest)) {
        st->fs_last = 1; /* the next row abuts nothing hinted */
        return (uintptr_t)rest + 1;
    }
    const unsigned flags = st->fs_flags;
    const uintptr_t a = st->fs_abs, g = st->fs_granule, s = st->fs_step, ahead = st->ahead;
    now -= st->fs_low;
    const uintptr_t la = now + ahead * s, b = la & ~(g - 1);
    const bool runs = flags & FORESIGHT_STREAM_RUNS;
    /* A run of rows through row pointers: on its first iteration, whether it began
     * where the last one ended (only then do hints pass a run's end). */
    if (cnt == 0) {
        st->fs_streak = 0; /* a run of the loop starts */
        /* A run touching less than a block is hinted past its end only by short_run
         * (the run a constant jump ahead, or its stream ahead when it continues an
         * earlier run: runs.c), which shares the look-ahead among the streams; its own
         * steps stay within it. */
        const uintptr_t unit = a >= st->fs_page ? st->fs_page : a;
        if (runs && !(flags & FORESIGHT_STREAM_REGION) && rest < st->fs_block &&
            ((uintptr_t)rest + 1) * unit < st->fs_block)
            st->fs_flags |= SHORT_RUN;
        else
            st->fs_flags &= ~SHORT_RUN;
    }
    if ((flags & FORESIGHT_STREAM_ROWS) && cnt == 0)
        st->fs_abut = st->fs_last != 1 && (b == st->fs_last || continues(st, b));
    const bool beyond = flags & FORESIGHT_STREAM_ROWS ? st->fs_abut
                                                      : a < g && !(st->fs_flags & SHORT_RUN);
    /* No hint may pass the run's end, and the look-ahead address is past it. */
    const bool held = runs && !beyond && (uintmax_t)ahead > rest;
    if (b != st->fs_last) {
        /* A run that continues the last one but whose hints were held at its end
         * starts with a window over itself, as a run that does not. */
        if (continues(st, b) && !(cnt == 0 && held)) {
            if (!held)
                foresight_prefetch_at(site, (const void *)b, span(st, la));
        } else if (!foresight_site_quiet(site)) {
            /* A restart costs a window of calls: skipped while the site is quiet (its
             * recent hints all found their pages resident). */
            const uintptr_t page = st->fs_page;
            const uintptr_t touched = ((uintptr_t)rest + 1) * (a >= page ? page : a);
            if (runs && !(flags & FORESIGHT_STREAM_REGION) && touched < st->fs_block)
                short_run(st, site, now, rest);
            else
                window(st, site, now, runs && (uintmax_t)ahead > rest ? (uintptr_t)rest : ahead);
        }
        if (flags & FORESIGHT_STREAM_RELEASE)
            release_behind(st, site, trail);
        st->fs_last = b;
    }
    /* Iterations until the look-ahead address leaves granule b (a stride of a granule
     * or more leaves it every iteration). */
    if (a == 0)
        return 1;
    if (held && !(flags & FORESIGHT_STREAM_RELEASE)) {
        /* The rest of the run would only move the stream on: its pages were hinted by
         * the run's first step (a window up to its end) or by the steps before this
         * one (the look-ahead reached its end).  A short run's stride of a page or
         * more: NAS SP's `u[k+o]` made 88 million such calls at 128 MiB. */
        st->fs_last = (la + (uintptr_t)rest * s) & ~(g - 1);
        return (uintptr_t)rest + 1;
    }
    return skip_marked(st, site, a >= g ? 1 : upward(st) ? (b + g - la + a - 1) / a
                                                         : (la - b) / a + 1, la, rest);
}

uintptr_t foresight__stream_step(struct foresight_stream *st, struct foresight_site *site,
                                 uintptr_t cnt, uintptr_t now, uintmax_t rest, uintptr_t trail)
{
    if (fs_hint_refused())
        return UINTPTR_MAX; /* no hint from here (thread_guard.c): the loop runs on */
    return step(st, site, cnt, now, rest, trail);
}

uintptr_t foresight__streams_step(struct foresight_stream *st, unsigned n,
                                  struct foresight_site *const *sites, uintptr_t cnt,
                                  const uintptr_t *at, uintmax_t rest)
{
    /* fs_due: iterations until stream k is due, counted from the last call. */
    uintptr_t next = UINTPTR_MAX;
    if (fs_hint_refused())
        return next; /* no hint from here (thread_guard.c): the loop runs on */
    for (unsigned k = 0; k < n; k++) {
        struct foresight_stream *s = &st[k];
        if (s->fs_flags & FORESIGHT_STREAM_IDLE)
            continue;
        if (cnt == 0 || s->fs_due == 0)
            s->fs_due = step(s, sites[k], cnt == 0 ? 0 : 1, at[2 * k], rest, at[2 * k + 1]);
        if (s->fs_due < next)
            next = s->fs_due;
    }
    for (unsigned k = 0; k < n; k++)
        if (!(st[k].fs_flags & FORESIGHT_STREAM_IDLE))
            st[k].fs_due -= next;
    sweeps_passed(st, n);
    return next;
}

/* ceil(bytes / per), at least 1. */
static uintptr_t iterations_for(uintptr_t bytes, uintptr_t per)
{
    if (per == 0)
        per = 1;
    const uintptr_t d = bytes / per + (bytes % per != 0);
    return d == 0 ? 1 : d;
}

int foresight__nest_enter(const struct foresight_nest *nest, struct foresight_stream *st,
                          const uintptr_t *val, uintptr_t *dist)
{
    if (fs_hint_refused()) { /* a short signal stack, seccomp (thread_guard.c) */
        __atomic_add_fetch(&fs_global_refused, 1, __ATOMIC_RELAXED);
        return 0;
    }
    if (!fs_gate_open(nest))
        return 0; /* the program fits in memory: this run of the nest goes unhinted */
    const uintptr_t ahead = foresight__lookahead();
    for (unsigned k = 0; k < nest->n_streams; k++) {
        const struct foresight_nest_stream *s = &nest->streams[k];
        foresight_stream_init(&st[k], val[4 * k], nest->page, nest->block, val[4 * k + 1],
                              val[4 * k + 2], s->flags | (unsigned)val[4 * k + 3]);
        if (nest->n_streams <= 0xff)
            st[k].fs_flags |= k << 16 | nest->n_streams << 24;
    }
    for (unsigned p = 0; p < nest->n_pipes; p++) {
        const struct foresight_nest_pipe *pipe = &nest->pipes[p];
        uintptr_t volume = 0;
        bool streams = false;
        for (unsigned k = 0; k < nest->n_streams; k++) {
            if (nest->streams[k].pipe != p)
                continue;
            streams = true;
            if (!(st[k].fs_flags & FORESIGHT_STREAM_IDLE))
                volume += st[k].volume;
        }
        if (pipe->indirect != 0)
            fs_pin_indirect(); /* (pin.c: such a nest's worker runs beside it) */
        if (pipe->fixed != 0) {
            dist[2 * p] = dist[2 * p + 1] = pipe->fixed;
            continue;
        }
        /* With streams and indirect references in one loop each kind gets half the
         * look-ahead bytes, so the bytes in flight stay within it. */
        const bool both = streams && pipe->indirect != 0;
        const uintptr_t share = both ? ahead / 2 : ahead;
        dist[2 * p] = iterations_for(share, volume);
        dist[2 * p + 1] = iterations_for(share, (uintptr_t)pipe->indirect * nest->page);
    }
    for (unsigned k = 0; k < nest->n_streams; k++) {
        const struct foresight_nest_stream *s = &nest->streams[k];
        const uintptr_t ds = dist[2 * s->pipe], di = dist[2 * s->pipe + 1];
        st[k].ahead = s->lead == 1 ? ds + di : s->lead == 2 ? 2 * ds : ds;
    }
    return 1;
}
