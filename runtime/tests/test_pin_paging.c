/* The pin's own condition (pin.c, FORESIGHT_PIN unset): with the gate open the process
 * is not pinned until the worker pages memory out; then it is pinned at that page-out,
 * not at the keeper's next look, and on a CPU of the mask that has served no more than
 * twice the interrupts of any other (since boot, as /proc/stat counts them: the library
 * reads them the same way before its keeper's second sample).  Run alone (RUN_SERIAL):
 * other processes' load would refuse the pin. */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"

static int enter(void)
{
    static const struct foresight_nest_stream ns[] = {{0, 0, 0}};
    const struct foresight_nest_pipe np[] = {{0, 0}};
    const struct foresight_nest nest = {ns, np, 1, 1, 4096, 65536};
    const uintptr_t nv[] = {8, 0, 0, 0};
    struct foresight_stream st;
    uintptr_t dist[2] = {0, 0};
    return foresight_nest_enter(&nest, &st, nv, dist);
}

static void sleep_ms(long ms)
{
    const struct timespec s = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&s, NULL);
}

/* The CPUs the process's threads may run on, if they all have the same one CPU (-1 if
 * not, or if any has more). */
static int pinned_cpu(void)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int cpu = -2;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        cpu_set_t m;
        CPU_ZERO(&m);
        CHECK(syscall(SYS_sched_getaffinity, atoi(e->d_name), sizeof m, &m) > 0);
        int one = -1;
        for (int c = 0; c < CPU_SETSIZE && CPU_COUNT(&m) == 1; c++)
            if (CPU_ISSET(c, &m))
                one = c;
        if (one < 0 || (cpu != -2 && one != cpu))
            cpu = -1;
        else if (cpu == -2)
            cpu = one;
    }
    closedir(d);
    return cpu < 0 ? -1 : cpu;
}

/* Interrupt ticks (irq and softirq) per CPU since boot, from /proc/stat. */
static void irq_ticks(unsigned long long *irq, int ncpu)
{
    FILE *f = fopen("/proc/stat", "r");
    CHECK(f != NULL);
    char line[1024];
    while (fgets(line, sizeof line, f) != NULL) {
        int cpu;
        unsigned long long v[7];
        if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6]) == 8 &&
            cpu >= 0 && cpu < ncpu)
            irq[cpu] = v[5] + v[6];
    }
    fclose(f);
}

int main(void)
{
    cpu_set_t first;
    CPU_ZERO(&first);
    CHECK(syscall(SYS_sched_getaffinity, 0, sizeof first, &first) > 0);
#if defined(__SANITIZE_THREAD__)
    puts("pin_paging: skipped (TSan's own thread: the program is never single-threaded)");
    return 0;
#endif
    if (CPU_COUNT(&first) < 2) {
        puts("pin_paging: skipped (one CPU)");
        return 0;
    }
    /* 512 MiB mapped (reserved, never touched) over FORESIGHT_MEM=256M: the gate opens,
     * but nothing is paged out yet: no pin. */
    void *big = mmap(NULL, 512u << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    CHECK(big != MAP_FAILED);
    sleep_ms(20);
    CHECK_EQ(enter(), 1);
    CHECK_EQ(pinned_cpu(), -1);
    CHECK_EQ(fs_global_pins, 0);

    /* 8 MiB written, then released (FORESIGHT_RELEASE=pageout): by the time the worker
     * has carried the release out, the process is pinned (the keeper looks once a second:
     * the test fails if the pin waits for it).  Past the gate's last try by 150 ms: tries
     * to pin are a tenth of a second apart. */
    const size_t len = 8u << 20;
    unsigned char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                              -1, 0);
    CHECK(buf != MAP_FAILED);
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(i * 7);
    sleep_ms(150);
    FORESIGHT_SITE(site, "buf");
    foresight_release_at(&site, buf, len);
    const unsigned long pages = len / 4096;
    for (int i = 0; i < 500; i++) { /* the worker carried it out (paged out or not: no swap) */
        if (site.fs_stat[FS_PAGES_FREED] + site.fs_stat[FS_PAGES_DEACTIVATED] >= pages)
            break;
        sleep_ms(10);
    }
    CHECK(site.fs_stat[FS_PAGES_FREED] + site.fs_stat[FS_PAGES_DEACTIVATED] >= pages);
    const int cpu = pinned_cpu();
    CHECK(cpu >= 0);
    CHECK(CPU_ISSET(cpu, &first));
    CHECK_EQ(fs_global_pins, 1);

    /* On the CPU that served the fewest interrupts, or one within twice of it. */
    unsigned long long irq[CPU_SETSIZE] = {0};
    irq_ticks(irq, CPU_SETSIZE);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &first))
            CHECK(2 * irq[c] >= irq[cpu]);

    /* The data is intact. */
    for (size_t i = 0; i < len; i++)
        CHECK_EQ(buf[i], (unsigned char)(i * 7));
    munmap(buf, len);
    munmap(big, 512u << 20);
    return check_done("pin_paging");
}
