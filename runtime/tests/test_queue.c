/* The request queue: FIFO order, coalescing of touching requests, drop when full. */
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
    r.page = 200; /* not touching: a new slot */
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    r.page = 204; r.site = &b; /* touching but another site */
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    r.page = 208; r.kind = FS_REQ_RELEASE; /* another kind */
    CHECK_EQ(fs_queue_push(q, &r, 1), 0);
    /* Full (4 slots): a bundle of two new requests is dropped whole, reported per request. */
    struct fs_request two[2] = {{.page = 500, .npages = 1, .site = &a},
                                {.page = 600, .npages = 1, .site = &a}};
    CHECK_EQ(fs_queue_push(q, two, 2), 3);

    struct fs_request out;
    CHECK(fs_queue_pop(q, &out));
    CHECK_EQ(out.page, 96);
    CHECK_EQ(out.npages, 12);
    CHECK(fs_queue_pop(q, &out));
    CHECK_EQ(out.page, 200);
    CHECK(fs_queue_pop(q, &out));
    CHECK(out.site == &b);
    CHECK(fs_queue_pop(q, &out));
    CHECK_EQ(out.kind, FS_REQ_RELEASE);
    fs_queue_shutdown(q);
    CHECK(!fs_queue_pop(q, &out)); /* empty and shut down: no wait */
    fs_queue_destroy(q);
    return check_done("queue");
}
