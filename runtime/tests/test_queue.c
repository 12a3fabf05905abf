/* The request queue: FIFO order per kind, prefetches before releases, coalescing of
 * touching requests of one kind and site, drop when a kind's ring is full. */
#include "check.h"
#include "internal.h"

int main(void)
{
    struct foresight_site a = {.file = "a"}, b = {.file = "b"};
    struct fs_queue *q = fs_queue_create(4);
    struct fs_request r = {.page = 100, .npages = 4, .kind = FS_REQ_PREFETCH, .site = &a};
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    r.page = 104; /* contiguous after */
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    r.page = 96;  /* contiguous before (a backward scan) */
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    r.page = 98;  /* overlapping */
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    CHECK_EQ(fs_queue_coalesced(q), 3);
    /* A release between two touching prefetches does not stop them merging. */
    struct fs_request rel = {.page = 10, .npages = 1, .kind = FS_REQ_RELEASE, .site = &a};
    CHECK_EQ(fs_queue_push(q, &rel, 1), 0);
    r.page = 108;
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    CHECK_EQ(fs_queue_coalesced(q), 4);
    r.page = 200; /* not touching: a new slot */
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    r.page = 204; r.site = &b; /* touching but another site */
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    r.page = 300; r.site = &a;
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    /* The prefetch ring is full (4 slots): a bundle of a prefetch and a release drops
     * the prefetch only, reported per request. */
    struct fs_request two[2] = {{.page = 500, .npages = 1, .kind = FS_REQ_PREFETCH, .site = &a},
                                {.page = 600, .npages = 1, .kind = FS_REQ_RELEASE, .site = &a}};
    CHECK_EQ(fs_queue_push(q, two, 2), 1);

    /* Prefetches come out first, in order, then the releases. */
    struct fs_request out;
    CHECK(fs_queue_pop(q, &out));
    CHECK_EQ(out.page, 96);
    CHECK_EQ(out.npages, 16);
    CHECK(fs_queue_pop(q, &out));
    CHECK_EQ(out.page, 200);
    CHECK(fs_queue_pop(q, &out));
    CHECK(out.site == &b);
    CHECK(fs_queue_pop(q, &out));
    CHECK_EQ(out.page, 300);
    CHECK(fs_queue_pop(q, &out));
    CHECK_EQ(out.kind, FS_REQ_RELEASE);
    CHECK_EQ(out.page, 10);
    CHECK(fs_queue_pop(q, &out));
    CHECK_EQ(out.page, 600);

    /* A ring that wraps: four requests, two taken (the window starts at slot 2), two
     * more (slots 0 and 1), one touching the newest merges into slot 1, the ring is
     * full, and all come out in order. */
    for (unsigned k = 0; k < 4; k++) {
        struct fs_request one = {.page = 1000 + 10 * k, .npages = 1, .kind = FS_REQ_PREFETCH,
                                 .site = &a};
        CHECK_EQ(fs_queue_push(q, &one, 1), 0);
    }
    for (unsigned k = 0; k < 2; k++) {
        CHECK(fs_queue_pop(q, &out));
        CHECK_EQ(out.page, 1000 + 10 * k);
    }
    for (unsigned k = 4; k < 6; k++) {
        struct fs_request one = {.page = 1000 + 10 * k, .npages = 1, .kind = FS_REQ_PREFETCH,
                                 .site = &a};
        CHECK_EQ(fs_queue_push(q, &one, 1), 0);
    }
    struct fs_request touch = {.page = 1051, .npages = 1, .kind = FS_REQ_PREFETCH, .site = &a};
    CHECK_EQ(fs_queue_push(q, &touch, 1), 0); /* merged */
    struct fs_request extra = {.page = 5000, .npages = 1, .kind = FS_REQ_PREFETCH, .site = &a};
    CHECK_EQ(fs_queue_push(q, &extra, 1), 1); /* full */
    for (unsigned k = 2; k < 6; k++) {
        CHECK(fs_queue_pop(q, &out));
        CHECK_EQ(out.page, 1000 + 10 * k);
        CHECK_EQ(out.npages, k == 5 ? 2 : 1);
    }
    /* Emptied, the ring starts again at its first slot (queue.c): its whole capacity is
     * there, in order. */
    for (unsigned k = 0; k < 4; k++) {
        struct fs_request one = {.page = 2000 + 10 * k, .npages = 1, .kind = FS_REQ_PREFETCH,
                                 .site = &a};
        CHECK_EQ(fs_queue_push(q, &one, 1), 0);
    }
    CHECK_EQ(fs_queue_push(q, &extra, 1), 1);
    for (unsigned k = 0; k < 4; k++) {
        CHECK(fs_queue_pop(q, &out));
        CHECK_EQ(out.page, 2000 + 10 * k);
    }
    fs_queue_shutdown(q);
    CHECK(!fs_queue_pop(q, &out)); /* empty and shut down: no wait */
    fs_queue_destroy(q);
    return check_done("queue");
}
