/* test_color.c — the page-coloring calls (color.c) under FORESIGHT_COLOR=sim: summaries
 * passed again and again are kept once; foresight_color_apply writes the map file whole
 * (summaries and the runs for FORESIGHT_COLOR_CACHE), and rewrites it only when a
 * summary is new, at most once a second; bad summaries are counted in it, never an
 * error; a summary passed again is marked AGAIN (by its first thread, or more often than
 * its team has threads). */
#include "internal.h" /* before check.h: its helpers need foresight.h */
#include "check.h"

static int count_lines(const char *path, const char *prefix, unsigned long long *pages)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int n = 0;
    *pages = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, prefix, strlen(prefix)) != 0)
            continue;
        n++;
        unsigned long long v, np;
        unsigned c;
        if (strcmp(prefix, "run ") == 0 && sscanf(line, "run %llu %llu %u", &v, &np, &c) == 3)
            *pages += np;
    }
    fclose(f);
    return n;
}

/* AGAIN (the map's last field of a `ref`) of the summary of loop LOOP; -1: none. */
static int again_of(const char *path, unsigned loop)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int again = -1;
    while (fgets(line, sizeof line, f)) {
        char *w[16];
        int n = 0;
        for (char *t = strtok(line, " \n"); t && n < 16; t = strtok(NULL, " \n"))
            w[n++] = t;
        if (n == 14 && strcmp(w[0], "ref") == 0 && strtoul(w[9], NULL, 10) == loop)
            again = atoi(w[13]);
    }
    fclose(f);
    return again;
}

static double team_data[64][512] __attribute__((aligned(4096)));
static pthread_barrier_t team_met;
static unsigned team_loop, team_size;

/* One thread of a team passing an orphaned `omp for`'s summary once; the team's threads
 * all live until each has passed it (no thread's identity is reused among them). */
static void *team_member(void *unused)
{
    (void)unused;
    foresight_color_partition(team_data, sizeof team_data[0], 0, 64, FORESIGHT_COLOR_EVEN, 0,
                              team_size, team_loop);
    pthread_barrier_wait(&team_met);
    return NULL;
}

static void team_pass(unsigned threads, unsigned loop, unsigned size)
{
    pthread_t t[8];
    team_loop = loop;
    team_size = size;
    CHECK(pthread_barrier_init(&team_met, NULL, threads) == 0);
    for (unsigned i = 0; i < threads; i++)
        CHECK(pthread_create(&t[i], NULL, team_member, NULL) == 0);
    for (unsigned i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&team_met);
}

int main(void)
{
    const char *map = getenv("FORESIGHT_COLOR_MAP");
    CHECK(map != NULL && fs_cfg.color == 1);
    if (!map)
        return 1;
    unlink(map);
    enum { N = 256 };
    static double a[N][512] __attribute__((aligned(4096))), b[N][512] __attribute__((aligned(4096)));
    for (int rep = 0; rep < 1000; rep++) { /* a nest entered a thousand times */
        foresight_color_array(a, sizeof a);
        foresight_color_array(b, sizeof b);
        foresight_color_partition(a, sizeof a[0], 1, N - 2, FORESIGHT_COLOR_EVEN, 0, 4, 7);
        foresight_color_comm(a, sizeof a[0], 1, N - 2, 1, FORESIGHT_COLOR_EVEN, 0, 4, 7);
        foresight_color_partition(b, sizeof b[0], 1, N - 2, FORESIGHT_COLOR_EVEN, 0, 4, 7);
        foresight_color_apply();
    }
    unsigned long long pages;
    CHECK_EQ(count_lines(map, "array ", &pages), 2);
    CHECK_EQ(count_lines(map, "ref ", &pages), 3);
    CHECK(count_lines(map, "run ", &pages) > 0);
    CHECK_EQ(pages, 2 * sizeof a / 4096); /* every page of both arrays, once */
    /* nothing new: no rewrite */
    unlink(map);
    foresight_color_partition(b, sizeof b[0], 1, N - 2, FORESIGHT_COLOR_EVEN, 0, 4, 7);
    foresight_color_apply();
    CHECK(access(map, F_OK) != 0);
    /* a new summary (and a bad one: no such array) rewrites it, counting the bad one, but
     * not within a second of the last write (a loop with new bounds each time it runs
     * brings a new summary each time) */
    foresight_color_group(a, b);
    foresight_color_partition((char *)a + 8, 64, 0, 10, FORESIGHT_COLOR_BLOCKED, 0, 2, 8);
    foresight_color_apply();
    CHECK(access(map, F_OK) != 0);
    struct timespec pause = {1, 100000000};
    nanosleep(&pause, NULL);
    foresight_color_apply();
    CHECK_EQ(count_lines(map, "group ", &pages), 1);
    CHECK_EQ(count_lines(map, "# ncolors 16 bad_input 1 ", &pages), 1);
    /* Passed again: by the thread that passed it first, or more often than its team has
     * threads.  A team of 3 passing an orphaned `omp for`'s summary once each is one run,
     * a fourth pass (here the main thread's) another; a summary of a team of 1 passed by
     * two threads (a parallel loop inside an enclosing team) is not a repeat. */
    team_pass(3, 20, 3);
    team_pass(2, 21, 1);
    foresight_color_apply();
    nanosleep(&pause, NULL);
    foresight_color_apply();
    CHECK_EQ(again_of(map, 20), 0);
    CHECK_EQ(again_of(map, 21), 0);
    foresight_color_partition(team_data, sizeof team_data[0], 0, 64, FORESIGHT_COLOR_EVEN, 0, 3,
                              20);
    nanosleep(&pause, NULL);
    foresight_color_apply();
    CHECK_EQ(again_of(map, 20), 1);
    CHECK_EQ(again_of(map, 21), 0);
    /* at exit (its own process here) the map is written with whatever is new */
    foresight_color_partition(b, sizeof b[0], 0, 2, FORESIGHT_COLOR_EVEN, 0, 4, 9);
    foresight_color_apply();
    unlink(map);
    if (check_failures)
        return 1;
    puts("color: ok");
    return 0;
}
