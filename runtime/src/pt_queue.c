/*
 * pt_queue.c — the prefetch queue (paper Section 3): predictions {descriptor, byte range,
 * call ID} the prefetch thread made and has not issued yet, at most 64.  At a flush an
 * entry whose call the computation thread has already reached (call ID <= the clock's)
 * is expired: the read it names is being made or was made, so a prefetch could only
 * compete with it; it is dropped, counted, never issued.  The rest are sorted by
 * (descriptor, offset) and merged (touching, overlapping, or across a gap of at most
 * 64 KiB, which is cheaper read than sought over) into requests of at most 4 MiB (a
 * request the device takes whole: max_sectors_kb), each one posix_fadvise(WILLNEED),
 * which starts the reads and returns.
 *
 * Flushed when 64 are pending, before the thread sleeps, at a close (that descriptor's),
 * and when the thread ends.  Only the prefetch thread touches the queue.
 */
#include <fcntl.h>

#include "internal.h"

#define MERGE_GAP (64u << 10)
#define REQUEST_MAX (4u << 20)

struct pt_entry {
    int fd;
    uint64_t off, len, call;
};

static struct pt_entry pending[FS_PT_PENDING];
static unsigned npending;

static void issue(int fd, uint64_t off, uint64_t len)
{
    while (len > 0) {
        const uint64_t n = len < REQUEST_MAX ? len : REQUEST_MAX;
        if (posix_fadvise(fd, (off_t)off, (off_t)n, POSIX_FADV_WILLNEED) == 0) {
            __atomic_fetch_add(&fs_global_pt_issued, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&fs_global_pt_issued_bytes, n, __ATOMIC_RELAXED);
        }
        off += n;
        len -= n;
    }
}

static bool before(const struct pt_entry *a, const struct pt_entry *b)
{
    return a->fd != b->fd ? a->fd < b->fd : a->off < b->off;
}

void fs_pt_flush(int fd)
{
    const uint64_t now = fs_pt_computation_id();
    struct pt_entry live[FS_PT_PENDING];
    unsigned nlive = 0, kept = 0;
    unsigned long expired = 0;
    for (unsigned i = 0; i < npending; i++) {
        const struct pt_entry *e = &pending[i];
        if (fd >= 0 && e->fd != fd)
            pending[kept++] = *e; /* another descriptor's: stays pending */
        else if (e->call <= now)
            expired++;
        else {
            /* insertion sort: at most 64 */
            unsigned j = nlive++;
            for (; j > 0 && before(e, &live[j - 1]); j--)
                live[j] = live[j - 1];
            live[j] = *e;
        }
    }
    npending = kept;
    if (expired)
        __atomic_fetch_add(&fs_global_pt_expired, expired, __ATOMIC_RELAXED);
    if (nlive == 0)
        return;
    int cfd = live[0].fd;
    uint64_t start = live[0].off, end = live[0].off + live[0].len;
    for (unsigned i = 1; i < nlive; i++) {
        const struct pt_entry *e = &live[i];
        const uint64_t e_end = e->off + e->len;
        const uint64_t new_end = e_end > end ? e_end : end;
        if (e->fd == cfd && e->off <= end + MERGE_GAP && new_end - start <= REQUEST_MAX) {
            end = new_end;
            continue;
        }
        issue(cfd, start, end - start);
        cfd = e->fd;
        start = e->off;
        end = e_end;
    }
    issue(cfd, start, end - start);
}

void fs_pt_enqueue(int fd, uint64_t off, uint64_t len, uint64_t call)
{
    pending[npending++] = (struct pt_entry){.fd = fd, .off = off, .len = len, .call = call};
    __atomic_store_n(&fs_pt_clock.queued[call % FORESIGHT_PT_RING], 1, __ATOMIC_RELAXED);
    fs_pt_predicted(len);
    if (npending == FS_PT_PENDING) {
        fs_pt_flush(-1);
        fs_pt_check_sites();
    }
}

void fs_pt_drop_pending(void)
{
    npending = 0;
}
