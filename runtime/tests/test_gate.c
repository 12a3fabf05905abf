/* The in-core gate (gate.c): a nest entered while the program's address space fits in
 * the memory limit runs without hints (foresight_nest_enter returns 0, sets nothing,
 * and counts the entry); once the program maps more than the limit, nests entered a
 * clock tick later are hinted; FORESIGHT_INCORE=hint keeps hints on.  Under ASan or
 * TSan the shadow memory they reserve (terabytes) counts in the address space: there
 * the program never fits, and nests are always hinted. */
#include "check.h"
#include "internal.h"

static int enter(void)
{
    static const struct foresight_nest_stream ns[] = {{0, 0, 0}};
    static const struct foresight_nest_pipe np[] = {{0, 0}};
    static const struct foresight_nest nest = {ns, np, 1, 1, 4096, 65536};
    const uintptr_t nv[] = {8, 0, 0, 0};
    struct foresight_stream st;
    uintptr_t dist[2] = {0, 0};
    int on = foresight_nest_enter(&nest, &st, nv, dist);
    CHECK(on ? dist[0] != 0 : dist[0] == 0);
    return on;
}

static void next_tick(void)
{
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC_COARSE, &res);
    nanosleep(&res, NULL);
    nanosleep(&res, NULL);
}

int main(void)
{
    /* FORESIGHT_MEM=256M (CMakeLists.txt): the budget is 192 MiB, and this program's
     * address space far less. */
    CHECK_EQ(fs_budget_pages(), (192u << 20) >> FORESIGHT_PAGE_SHIFT);
    CHECK(foresight_active());
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    CHECK_EQ(enter(), 1);
    CHECK_EQ(fs_global_gate_closed, 0);
    return check_done("gate");
#endif
    CHECK_EQ(enter(), 0);
    CHECK_EQ(enter(), 0);
    CHECK_EQ(fs_global_gate_closed, 2);

    /* 512 MiB mapped (reserved, never touched): the program no longer fits. */
    size_t len = 512u << 20;
    void *big = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(big != MAP_FAILED);
    next_tick();
    CHECK_EQ(enter(), 1);
    munmap(big, len);
    next_tick();
    CHECK_EQ(enter(), 0);

    fs_cfg.incore_hinted = true; /* FORESIGHT_INCORE=hint */
    CHECK_EQ(enter(), 1);
    CHECK_EQ(fs_global_gate_closed, 3);
    return check_done("gate");
}
