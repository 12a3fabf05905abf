/* The channel of sync points (pt_chan.c), one scenario per process (a process starts one
 * thread):
 *   values     the program sends 20,000 ints, longs and doubles, lines (fgets) and bytes
 *              (read) while the thread receives them: each arrives, in order, whole;
 *              fscanf's result and each assigning conversion's stores (%d, %ld, %lf, %s,
 *              %c with a width, %[, suppressed ones skipped) reach the thread's own
 *              objects; at EOF none; the program's calls return what libc's would
 *   poison     a scanf with %n: the program's call works as ever, the thread stops at it
 *              ("does not carry")
 *   step       a message from another site than the thread's: it stops ("out of step")
 *   overflow   the thread holds off while the program sends 2 MiB: no send waits or
 *              fails, the thread takes the first megabyte in order, then stops ("lagged")
 *   ended      after the thread ended, sends cost nothing and change nothing; with no
 *              clock (NULL) the calls are libc's
 * No check depends on timing: every wait is for an outcome, with a generous timeout. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "internal.h"

#define N 20000

static int run_done, go, bad, received;
static struct foresight_pt_clock *clk;

static const char *stopped(void)
{
    const char *why = NULL;
    for (int i = 0; i < 20000 && (why = __atomic_load_n(&fs_global_pt_stopped,
                                                         __ATOMIC_ACQUIRE)) == NULL; i++)
        usleep(1000);
    return why;
}

static void miss(void)
{
    __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
}

static void run_values(void)
{
    for (int i = 0; i < N; i++) {
        if (foresight_pt_chan_int(1) != i * 7)
            miss();
        if (foresight_pt_chan_long(2) != (long)i << 33)
            miss();
        if (foresight_pt_chan_double(3) != i / 4.0)
            miss();
        if (i % 100 == 0) {
            char line[64], bytes[16];
            if (foresight_pt_chan_fgets(line, sizeof line, 4) != line)
                miss();
            char want[64];
            snprintf(want, sizeof want, "line %d\n", i);
            if (strcmp(line, want) != 0)
                miss();
            if (foresight_pt_chan_read(5, bytes, sizeof bytes) != 5 ||
                memcmp(bytes, "bytes", 5) != 0)
                miss();
        }
    }
    char line[8];
    if (foresight_pt_chan_fgets(line, sizeof line, 4) != NULL) /* EOF: NULL */
        miss();
    int d = 0;
    long l = 0;
    double f = 0;
    char s[16] = "", c3[3] = "", set[16] = "";
    if (foresight_pt_chan_scanf(6, "%d %*d %ld %lf %15s %3c %15[a-z]", &d, &l, &f, s, c3,
                                set) != 6)
        miss();
    if (d != 12 || l != 1L << 40 || f != 2.5 || strcmp(s, "word") != 0 ||
        memcmp(c3, "xyz", 3) != 0 || strcmp(set, "abc") != 0)
        miss();
    d = -1;
    if (foresight_pt_chan_scanf(6, "%d", &d) != 0 || d != -1) /* nothing stored */
        miss();
    publish(&run_done, 1);
}

static void scenario_values(void)
{
    CHECK((clk = foresight_pt_start(NULL, run_values)) != NULL);
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    CHECK(write(pipefd[1], "bytes", 5) == 5);
    unsigned long sent = 0;
    for (int i = 0; i < N; i++) {
        if (i % 1000 == 0) /* the channel holds a megabyte: let the thread catch up */
            CHECK(wait_counter(&fs_global_pt_received, sent));
        sent += 3 + (i % 100 == 0 ? 2 : 0);
        CHECK_EQ(foresight_pt_send_int(clk, 1, i * 7), i * 7);
        CHECK(foresight_pt_send_long(clk, 2, (long)i << 33) == (long)i << 33);
        CHECK(foresight_pt_send_double(clk, 3, i / 4.0) == i / 4.0);
        if (i % 100 == 0) {
            char text[64], line[64], bytes[16];
            snprintf(text, sizeof text, "line %d\nrest", i);
            FILE *f = fmemopen(text, strlen(text), "r");
            CHECK(f != NULL);
            CHECK(foresight_pt_send_fgets(clk, 4, fgets(line, sizeof line, f)) == line);
            fclose(f);
            CHECK(foresight_pt_send_read(clk, 5, read, pipefd[0], bytes, sizeof bytes) == 5);
            if (i + 100 < N)
                CHECK(write(pipefd[1], "bytes", 5) == 5);
        }
    }
    FILE *empty = fopen("/dev/null", "r");
    char line[8];
    CHECK(empty != NULL);
    CHECK(foresight_pt_send_fgets(clk, 4, fgets(line, sizeof line, empty)) == NULL);
    fclose(empty);
    char text[] = "12 99 1099511627776 2.5 word xyzabc!";
    FILE *f = fmemopen(text, strlen(text), "r");
    int d;
    long l;
    double x;
    char s[16], c3[3], set[16];
    CHECK_EQ(foresight_pt_send_fscanf(clk, 6, f, "%d %*d %ld %lf %15s %3c %15[a-z]", &d, &l,
                                      &x, s, c3, set),
             6);
    CHECK(d == 12 && l == 1L << 40 && x == 2.5 && strcmp(s, "word") == 0);
    CHECK_EQ(foresight_pt_send_fscanf(clk, 6, f, "%d", &d), 0); /* "!" left: no match */
    fclose(f);
    CHECK(wait_flag(&run_done));
    CHECK_EQ(__atomic_load_n(&bad, __ATOMIC_RELAXED), 0);
    CHECK(get(&fs_global_pt_received) == 3 * N + 2 * (N / 100) + 3);
    CHECK(__atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL);
}

static void run_poison(void)
{
    int v, used;
    foresight_pt_chan_scanf(1, "%d%n", &v, &used);
    publish(&run_done, 1); /* not reached */
}

static void scenario_poison(void)
{
    CHECK((clk = foresight_pt_start(NULL, run_poison)) != NULL);
    char text[] = "42 rest";
    FILE *f = fmemopen(text, strlen(text), "r");
    int v = 0, used = 0;
    CHECK_EQ(foresight_pt_send_fscanf(clk, 1, f, "%d%n", &v, &used), 1);
    CHECK(v == 42 && used == 2);
    fclose(f);
    const char *why = stopped();
    CHECK(why != NULL && strstr(why, "does not carry") != NULL);
    CHECK(!flag(&run_done));
}

static void run_step(void)
{
    foresight_pt_chan_int(1);
    foresight_pt_chan_int(2); /* the program sends site 3 here */
    publish(&run_done, 1);
}

static void scenario_step(void)
{
    CHECK((clk = foresight_pt_start(NULL, run_step)) != NULL);
    foresight_pt_send_int(clk, 1, 5);
    foresight_pt_send_int(clk, 3, 6);
    const char *why = stopped();
    CHECK(why != NULL && strstr(why, "out of step") != NULL);
    CHECK(!flag(&run_done));
    CHECK_EQ(get(&fs_global_pt_received), 1);
}

static void run_overflow(void)
{
    CHECK(wait_flag(&go));
    for (int i = 0;; i++) {
        char part[1000];
        if (foresight_pt_chan_read(1, part, sizeof part) != (long)sizeof part ||
            memcmp(part, &i, sizeof i) != 0)
            miss();
        __atomic_fetch_add(&received, 1, __ATOMIC_RELAXED);
    }
}

static void scenario_overflow(void)
{
    CHECK((clk = foresight_pt_start(NULL, run_overflow)) != NULL);
    /* 2,000 messages of a kilobyte: twice the channel.  None waits: the thread is held. */
    int pipefd[2];
    CHECK(pipe(pipefd) == 0);
    for (int i = 0; i < 2000; i++) {
        char part[1000] = {0};
        memcpy(part, &i, sizeof i);
        CHECK(write(pipefd[1], part, sizeof part) == (ssize_t)sizeof part);
        char got[1000];
        CHECK(foresight_pt_send_read(clk, 1, read, pipefd[0], got, sizeof got) ==
              (long)sizeof got);
        CHECK(memcmp(got, part, sizeof part) == 0);
    }
    publish(&go, 1);
    const char *why = stopped();
    CHECK(why != NULL && strstr(why, "lagged") != NULL);
    const int n = __atomic_load_n(&received, __ATOMIC_RELAXED);
    CHECK(n > 900 && n < 1100); /* what fit in the megabyte, every one in order */
    CHECK_EQ(__atomic_load_n(&bad, __ATOMIC_RELAXED), 0);
}

static void run_nothing(void)
{
    publish(&run_done, 1);
}

static void scenario_ended(void)
{
    /* No clock: libc's calls, nothing sent. */
    char text[] = "7";
    FILE *f = fmemopen(text, strlen(text), "r");
    int v = 0;
    CHECK_EQ(foresight_pt_send_fscanf(NULL, 1, f, "%d", &v), 1);
    CHECK_EQ(v, 7);
    fclose(f);
    CHECK_EQ(foresight_pt_send_int(NULL, 1, 3), 3);
    CHECK((clk = foresight_pt_start(NULL, run_nothing)) != NULL);
    CHECK(wait_flag(&run_done));
    usleep(50000); /* the thread past its end (the checks hold either way) */
    /* Ended: a million sends go nowhere (the channel would overflow otherwise). */
    for (int i = 0; i < 1000000; i++)
        CHECK_EQ(foresight_pt_send_int(clk, 1, i), i);
    usleep(20000);
    CHECK_EQ(get(&fs_global_pt_received), 0);
    CHECK(__atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } scenarios[] = {
        {"values", scenario_values}, {"poison", scenario_poison}, {"step", scenario_step},
        {"overflow", scenario_overflow}, {"ended", scenario_ended},
    };
    for (size_t i = 0; argc == 2 && i < sizeof scenarios / sizeof scenarios[0]; i++)
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            scenarios[i].fn();
            char name[64];
            snprintf(name, sizeof name, "pt_chan %s", argv[1]);
            return check_done(name);
        }
    fprintf(stderr, "usage: test_pt_chan values|poison|step|overflow|ended\n");
    return 2;
}
