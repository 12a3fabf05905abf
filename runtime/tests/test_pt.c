/* Prefetch threads (pt_*.c), one scenario per process (a process starts one thread):
 *   start       init runs on the caller before start returns; run runs on another thread,
 *               signals blocked; a second start returns NULL; the I/O calls fail (EPERM)
 *               off the prefetch thread
 *   confine     on the thread write(2) and open(O_WRONLY) fail with EPERM (as do
 *               unlink, ftruncate, kill, fork, pthread_create, shared writable mmap, x32
 *               calls; openat2: ENOSYS) while the program still writes;
 *               the thread's opens do not change the number the program's next open gets,
 *               and it holds none of the program's descriptors (a pipe the program closes
 *               reaches end-of-file)
 *   files       shadow offsets, lead reads return the file's bytes, predicted reads the
 *               bytes the file has; only prefetchable files (2 MiB or more, or matching
 *               FORESIGHT_PT_FILES) are issued, the last as foresight_pt_exit ends the
 *               thread; a prediction whose pages are all cached already (cachestat) is
 *               counted, not issued; special files open without reading; the private
 *               arena; the glob matcher
 *   window      predicted 4 KiB reads backward through a cold 8 MiB file: the thread runs
 *               FORESIGHT_PT_QUEUE calls ahead and sleeps; the pages ahead of the program
 *               become resident, the pages further on do not until it moves
 *   expiry      the program is ahead of every prediction: all expire, none is issued
 *   mispredict  sites differing 7 times in 8 keep it going; 8 in a row stop it
 *   disabled    FORESIGHT_PT=0 (or FORESIGHT_DISABLE=1): no thread, and init is not run
 *   fork        the program forks while the thread sleeps: the child's ticks wake nothing
 *               and it exits normally
 *   exit_group  exit_group(2) on the thread ends the thread, not the process
 *   handles     the thread's handles are 3 or more: reads of 1, 2 and of a number it did
 *               not open fail with EBADF, predicted and lead; so do pread, lseek and close
 *               of 0 (its read is the program's standard input, from the channel)
 *   setxid      as root, the program drops to nobody (setgid, setuid) with the thread
 *               running: glibc's broadcast reaches the thread, whose filter lets it through;
 *               the program goes on (skipped when not root)
 *   written     read after write: a file opened with O_RDWR, another handle of the same
 *               file opened for writing, a file that grows and one whose mtime changes
 *               between lead reads: each lead read of it then waits until the program
 *               makes the same call (blocked before it, 20 ms later still) and gets what the
 *               program wrote before that call, by pread and by a stream's fread; where the
 *               program's call came from another site, the read fails (EIO); predicted
 *               reads go on without waiting; an untouched file's lead reads never wait
 *   readahead   forward 4 KiB predictions: the first 33 are issued, the following ones are
 *               left to readahead (counted, never resident); backward and strided runs and
 *               a new forward run after them are issued
 *   cpu         the thread's CPU time, while it runs and after it ended, in the JSON
 *               statistics too
 *   writes      the program's writes on the thread write nothing and predict success (the
 *               shared offset moves); a file the program creates opens before it exists,
 *               reading nothing; a read-only open of a missing file still fails
 *   window (pt_window_uring, pt_fork_uring) the same under FORESIGHT_PT_ISSUE=uring: the
 *               requests go through the thread's io_uring (posix_fadvise where the
 *               library was built without liburing, and the statistics say so)
 *   eq1         FORESIGHT_PT_SCHED=eq1: predictions issued only when the paper's Eq. (1)
 *               says they are due (the program's next 64 calls while its pace is unknown,
 *               a few calls ahead of a program making one every 2 ms), never the whole
 *               window
 *   anchor      runs anchored at a function's entry (foresight_pt_anchor): the program's
 *               descriptor adopted at its offset, each run's first window resident, an
 *               anchor while the thread leads keeps the run, a mispredicted run given up
 *               (not the thread), a lagging run abandoned at its first call, a later run
 *               predicting exactly the program's calls; after foresight_pt_start (start)
 *               an anchor returns NULL
 * No check depends on timing: every wait is for an outcome, with a generous timeout. */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "check.h"
#include "internal.h"

#define FILE_LEN (8u << 20)
#define CALLS (FILE_LEN / 4096)

static char path[4096];
static const char *map;
static int run_done, go;

static void cold_file(const char *name)
{
    int fd;
    map = map_cold_file(name, FILE_LEN, path, &fd);
    CHECK(map != NULL);
    close(fd);
}

static pid_t tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* ---- start ---- */

static int init_calls;
static pid_t init_tid, run_tid;
static int run_blocked_int, off_thread_errno;

static void init_count(void)
{
    init_calls++;
    init_tid = tid();
}

static void run_record(void)
{
    sigset_t set;
    pthread_sigmask(SIG_BLOCK, NULL, &set);
    run_blocked_int = sigismember(&set, SIGINT) && sigismember(&set, SIGTERM);
    __atomic_store_n(&run_tid, tid(), __ATOMIC_RELAXED);
    publish(&run_done, 1);
}

static void scenario_start(void)
{
    struct foresight_pt_clock *c = foresight_pt_start(init_count, run_record);
    CHECK(c != NULL);
    CHECK_EQ(init_calls, 1); /* before start returned */
    CHECK_EQ(init_tid, tid());
    CHECK(wait_flag(&run_done));
    CHECK(__atomic_load_n(&run_tid, __ATOMIC_RELAXED) != tid());
    CHECK(run_blocked_int);
    CHECK(foresight_pt_start(init_count, run_record) == NULL); /* once per process */
    CHECK(foresight_pt_anchor(NULL, run_record, NULL) == NULL); /* main's thread: no anchors */
    CHECK_EQ(init_calls, 1);
    CHECK_EQ(get(&fs_global_pt_started), 1);
    errno = 0;
    CHECK_EQ(foresight_pt_open("/dev/null", O_RDONLY, 1), -1);
    off_thread_errno = errno;
    CHECK_EQ(off_thread_errno, EPERM);
    foresight_pt_tick(c, 1); /* the thread is gone: a tick still just counts */
    CHECK_EQ(c->id, 1);
}

/* ---- confine ---- */

static int pipe_fds[2];
static int e_write_pipe, e_write_stdout, e_open_wronly, e_open_creat, e_openat2, e_mmap_shared,
    e_unlink, e_kill, e_ftruncate, e_fork, e_thread, e_legacy_open, e_x32, ok_open_rdonly,
    ok_mmap_read, ok_legacy_open;
static int handles[3], opened, checked;

static int errno_of(long r)
{
    return r == -1 ? errno : 0;
}

static void *never_run(void *arg)
{
    return arg;
}

static void run_confined(void)
{
    e_write_pipe = errno_of(write(pipe_fds[1], "x", 1));
    e_write_stdout = errno_of(write(1, "x\n", 2));
    e_open_wronly = errno_of(open(path, O_WRONLY));
    e_open_creat = errno_of(open(path, O_RDONLY | O_CREAT, 0600));
    e_openat2 = errno_of(syscall(SYS_openat2, AT_FDCWD, path, NULL, 0));
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    e_mmap_shared = m == MAP_FAILED ? errno : 0;
    e_unlink = errno_of(unlink(path));
    e_kill = errno_of(kill(getpid(), 0));
    pid_t child = fork();
    if (child == 0)
        _exit(0); /* never: fork fails here */
    e_fork = child == -1 ? errno : 0;
    pthread_t t;
    e_thread = pthread_create(&t, NULL, never_run, NULL); /* returns the error */
#ifdef SYS_open
    e_legacy_open = errno_of(syscall(SYS_open, path, O_WRONLY));
    long lfd = syscall(SYS_open, path, O_RDONLY);
    ok_legacy_open = lfd >= 0;
    if (lfd >= 0)
        close((int)lfd);
#else
    e_legacy_open = EPERM;
    ok_legacy_open = 1;
#endif
#ifdef __x86_64__
    e_x32 = errno_of(syscall(0x40000000L | SYS_getpid)); /* an x32 call */
#else
    e_x32 = EPERM;
#endif
    int fd = open(path, O_RDONLY);
    ok_open_rdonly = fd >= 0;
    if (fd >= 0) {
        e_ftruncate = errno_of(ftruncate(fd, 0));
        void *r = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
        ok_mmap_read = r != MAP_FAILED;
        if (r != MAP_FAILED)
            munmap(r, 4096);
        close(fd);
    }
    for (int i = 0; i < 3; i++)
        handles[i] = foresight_pt_open(path, O_RDONLY, 1);
    publish(&opened, 1);
    while (!flag(&checked))
        usleep(1000);
    for (int i = 0; i < 3; i++)
        foresight_pt_close(handles[i], 2);
    publish(&run_done, 1);
}

static void scenario_confine(void)
{
    cold_file("pt_confine.dat");
    CHECK_EQ(pipe(pipe_fds), 0);
    int expected = open(path, O_RDONLY); /* the number the next open gets */
    CHECK(expected >= 0);
    close(expected);
    CHECK(foresight_pt_start(NULL, run_confined) != NULL);
    CHECK(wait_flag(&opened));
    CHECK_EQ(e_write_pipe, EPERM);
    CHECK_EQ(e_write_stdout, EPERM);
    CHECK_EQ(e_open_wronly, EPERM);
    CHECK_EQ(e_open_creat, EPERM);
    CHECK_EQ(e_openat2, ENOSYS);
    CHECK_EQ(e_mmap_shared, EPERM);
    CHECK_EQ(e_unlink, EPERM);
    CHECK_EQ(e_kill, EPERM);
    CHECK_EQ(e_ftruncate, EPERM);
    CHECK_EQ(e_fork, EPERM);
    CHECK_EQ(e_thread, EPERM);
    CHECK_EQ(e_legacy_open, EPERM);
    CHECK_EQ(e_x32, EPERM);
    CHECK(ok_legacy_open);
    CHECK(ok_open_rdonly);
    CHECK(ok_mmap_read);
    /* Its table started empty: its handles are the lowest numbers from 3 (0, 1 and 2 are
     * the program's stdin, stdout and stderr, never the thread's). */
    CHECK_EQ(handles[0], 3);
    CHECK_EQ(handles[1], 4);
    CHECK_EQ(handles[2], 5);
    /* The program's next open gets the number it would have got without the thread. */
    int fd = open(path, O_RDONLY);
    CHECK_EQ(fd, expected);
    close(fd);
    struct stat st;
    CHECK_EQ(stat(path, &st), 0); /* not unlinked */
    CHECK_EQ(st.st_size, FILE_LEN); /* not truncated */
    /* The program writes; only its byte is in the pipe. */
    CHECK_EQ(write(pipe_fds[1], "y", 1), 1);
    char b[4] = {0};
    CHECK_EQ(read(pipe_fds[0], b, sizeof b), 1);
    CHECK_EQ(b[0], 'y');
    /* The thread holds no copy of the write end: closing ours is end-of-file. */
    close(pipe_fds[1]);
    struct pollfd p = {.fd = pipe_fds[0], .events = POLLIN};
    CHECK_EQ(poll(&p, 1, 20000), 1);
    CHECK_EQ(read(pipe_fds[0], b, sizeof b), 0);
    publish(&checked, 1);
    CHECK(wait_flag(&run_done));
    CHECK(__atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL);
    unlink(path);
}

/* ---- files ---- */

static char small_path[4096], match_path[4096], fifo_path[4096];
static int f_results[32];
enum {
    R_OPEN, R_END, R_NEG, R_NEG_ERRNO, R_SET, R_LEAD, R_LEAD_OK, R_CUR, R_TAIL, R_TAIL_OK,
    R_PRED, R_PRED_EOF, R_BADF, R_BADF_ERRNO, R_CLOSE_BADF, R_ENOENT, R_NULL, R_NULL_LEAD,
    R_FIFO, R_SMALL, R_MATCH, R_ARENA, R_NRESULTS
};

static bool pattern_at(const uint64_t *v, size_t n, uint64_t off)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] != (off / 8) + i)
            return false;
    return true;
}

static bool arena_works(void)
{
    unsigned char *z = foresight_pt_calloc(1000, 8);
    bool ok = z != NULL;
    for (size_t i = 0; ok && i < 8000; i++)
        ok = z[i] == 0;
    foresight_pt_free(z);
    char *small[200];
    for (int i = 0; i < 200; i++) {
        small[i] = foresight_pt_malloc((size_t)(i * 37 + 1));
        ok = ok && small[i] != NULL && ((uintptr_t)small[i] & 15) == 0;
        if (small[i])
            memset(small[i], i, (size_t)(i * 37 + 1));
    }
    for (int i = 0; i < 200; i++) {
        ok = ok && (unsigned char)small[i][i * 37] == (unsigned char)i;
        foresight_pt_free(small[i]);
    }
    unsigned char *z2 = foresight_pt_calloc(1000, 8); /* a reused block, zeroed */
    for (size_t i = 0; z2 && i < 8000; i++)
        ok = ok && z2[i] == 0;
    foresight_pt_free(z2);
    char *g = foresight_pt_malloc(100);
    memcpy(g, "prefetch", 9);
    g = foresight_pt_realloc(g, 1u << 20); /* a mapping of its own */
    ok = ok && g != NULL && strcmp(g, "prefetch") == 0;
    if (g)
        g[(1u << 20) - 1] = 1;
    foresight_pt_free(g);
    ok = ok && foresight_pt_realloc(NULL, 0) != NULL;
    ok = ok && foresight_pt_malloc(SIZE_MAX) == NULL && errno == ENOMEM;
    ok = ok && foresight_pt_calloc(SIZE_MAX / 2, 4) == NULL;
    return ok;
}

static void run_files(void)
{
    int *r = f_results;
    int h = foresight_pt_open(path, O_RDONLY, 1);
    r[R_OPEN] = h >= 0;
    r[R_END] = foresight_pt_lseek(h, 0, SEEK_END, 1) == FILE_LEN;
    errno = 0;
    r[R_NEG] = foresight_pt_lseek(h, -1, SEEK_SET, 1) == -1;
    r[R_NEG_ERRNO] = errno == EINVAL;
    r[R_SET] = foresight_pt_lseek(h, 5 * 4096, SEEK_SET, 1) == 5 * 4096;
    uint64_t *buf = foresight_pt_malloc(4096);
    r[R_LEAD] = foresight_pt_read(h, buf, 4096, 2) == 4096;
    r[R_LEAD_OK] = pattern_at(buf, 512, 5 * 4096);
    r[R_CUR] = foresight_pt_lseek(h, 0, SEEK_CUR, 1) == 6 * 4096;
    r[R_TAIL] = foresight_pt_pread(h, buf, 4096, FILE_LEN - 96, 3) == 96;
    r[R_TAIL_OK] = pattern_at(buf, 12, FILE_LEN - 96) &&
                   foresight_pt_lseek(h, 0, SEEK_CUR, 1) == 6 * 4096;
    foresight_pt_lseek(h, FILE_LEN - 1000, SEEK_SET, 1);
    r[R_PRED] = foresight_pt_read(h, NULL, 4096, 4) == 1000;
    r[R_PRED_EOF] = foresight_pt_read(h, NULL, 4096, 4) == 0;
    errno = 0;
    r[R_BADF] = foresight_pt_read(999, NULL, 10, 5) == -1;
    r[R_BADF_ERRNO] = errno == EBADF;
    r[R_CLOSE_BADF] = foresight_pt_close(998, 6) == -1 && errno == EBADF;
    r[R_ENOENT] = foresight_pt_open("/nonexistent/pt", O_RDONLY, 7) == -1 && errno == ENOENT;
    int n = foresight_pt_open("/dev/null", O_RDONLY, 8);
    r[R_NULL] = n >= 0 && foresight_pt_read(n, NULL, 4096, 9) == 0;
    r[R_NULL_LEAD] = foresight_pt_read(n, buf, 4096, 9) == -1 && errno == EBADF;
    int fifo = foresight_pt_open(fifo_path, O_RDONLY, 10); /* no writer: must not block */
    r[R_FIFO] = fifo >= 0 && foresight_pt_read(fifo, NULL, 4096, 11) == 0;
    int s = foresight_pt_open(small_path, O_RDONLY, 12);
    r[R_SMALL] = foresight_pt_read(s, NULL, 8192, 13) == 4096;
    int m = foresight_pt_open(match_path, O_RDONLY, 14);
    r[R_MATCH] = foresight_pt_read(m, NULL, 8192, 15) == 4096;
    r[R_ARENA] = arena_works();
    foresight_pt_free(buf);
    foresight_pt_close(h, 16); /* issues its predictions (the program never ticked) */
    foresight_pt_close(n, 16);
    foresight_pt_close(fifo, 16);
    foresight_pt_close(s, 16);
    publish(&run_done, 1);
    foresight_pt_exit(); /* M still open: its prediction is issued as the thread ends */
}

static void small_file(char *out, const char *name)
{
    snprintf(out, 4096, "%s/%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    int fd = make_cold_file(out, 65536);
    CHECK(fd >= 0);
    CHECK_EQ(ftruncate(fd, 4096), 0);
    close(fd);
}

static void scenario_files(void)
{
    cold_file("pt_files.dat");
    small_file(small_path, "pt_files_small.dat");
    small_file(match_path, "pt_files_small_match.dat"); /* FORESIGHT_PT_FILES=*_match.dat */
    snprintf(fifo_path, sizeof fifo_path, "%s/pt_files.fifo",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    unlink(fifo_path);
    CHECK_EQ(mkfifo(fifo_path, 0600), 0);
    CHECK(foresight_pt_start(NULL, run_files) != NULL);
    CHECK(wait_flag(&run_done));
    for (int i = 0; i < R_NRESULTS; i++)
        if (!f_results[i]) {
            fprintf(stderr, "files: result %d failed\n", i);
            check_failures++;
        }
    /* Two requests: the big file's predicted 1000 bytes and the matching small file's
     * 4096; not the small file's, nor anything for /dev/null or the FIFO.  The first lies
     * in the page the lead read of the file's tail brought in: with cachestat (Linux 6.5)
     * it is found cached and not issued. */
    const int e = errno;
    const bool cachestat = syscall(451, -1, NULL, NULL, 0) == -1 && errno != ENOSYS;
    errno = e;
    CHECK(wait_counter(&fs_global_pt_issued, cachestat ? 1 : 2));
    CHECK(wait_counter(&fs_global_pt_cached, cachestat ? 1 : 0));
    CHECK_EQ(get(&fs_global_pt_issued), cachestat ? 1 : 2);
    CHECK_EQ(get(&fs_global_pt_issued_bytes), cachestat ? 4096 : 1000 + 4096);
    CHECK_EQ(get(&fs_global_pt_cached), cachestat ? 1 : 0);
    CHECK_EQ(get(&fs_global_pt_cached_bytes), cachestat ? 1000 : 0);
    CHECK_EQ(get(&fs_global_pt_lead_reads), 3);
    CHECK_EQ(get(&fs_global_pt_lead_bytes), 4096 + 96);
    CHECK_EQ(get(&fs_global_pt_expired), 0);
    CHECK(__atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL); /* a normal end */
    /* fnmatch(3) without flags. */
    CHECK(fs_pt_glob("*.dat", "/a/b.dat"));
    CHECK(fs_pt_glob("/data/*", "/data/x/y"));
    CHECK(!fs_pt_glob("*.dat", "/a/b.dat2"));
    CHECK(fs_pt_glob("v?l[0-9][!a-c]*", "vol7d.raw"));
    CHECK(!fs_pt_glob("v?l[0-9][!a-c]*", "vol7b.raw"));
    CHECK(fs_pt_glob("a\\*b", "a*b"));
    CHECK(!fs_pt_glob("a\\*b", "axb"));
    CHECK(fs_pt_glob("[]x]*", "]"));
    CHECK(fs_pt_glob("a[b", "a[b"));
    CHECK(fs_pt_glob("**a*", "xxa"));
    CHECK(!fs_pt_glob("", "a"));
    CHECK(fs_pt_glob("", ""));
    unlink(path);
    unlink(small_path);
    unlink(match_path);
    unlink(fifo_path);
}

/* ---- window, expiry, mispredict, fork: predicted 4 KiB reads backward ---- */

static unsigned run_calls;

static void run_backward(void)
{
    while (!flag(&go))
        usleep(1000);
    int h = foresight_pt_open(path, O_RDONLY, 1);
    for (unsigned k = 0; k < CALLS; k++) {
        foresight_pt_lseek(h, (int64_t)(FILE_LEN - (k + 1) * 4096u), SEEK_SET, 2);
        foresight_pt_read(h, NULL, 4096, 3);
        __atomic_store_n(&run_calls, k + 1, __ATOMIC_RELAXED);
    }
    foresight_pt_close(h, 4);
    publish(&run_done, 1);
}

/* The bytes the calls FROM..TO (1-based) of run_backward read. */
static const char *calls_at(unsigned from, unsigned to, size_t *len)
{
    *len = (size_t)(to - from + 1) * 4096;
    return map + FILE_LEN - (size_t)to * 4096;
}

static void scenario_window(void)
{
    cold_file("pt_window.dat");
    const unsigned q = FS_PT_QUEUE_MAX; /* the default window */
    publish(&go, 1);
    struct foresight_pt_clock *c = foresight_pt_start(NULL, run_backward);
    CHECK(c != NULL);
    /* The program has made no call: the thread goes q calls ahead and sleeps. */
    CHECK(wait_counter(&fs_global_pt_sleeps, 1));
    CHECK_EQ(get(&fs_global_pt_calls), q);
    size_t len;
    const char *a = calls_at(1, q, &len);
    CHECK(wait_fraction(a, len, 1.0, 0, 20));
    CHECK(resident_fraction(map, 4u << 20) == 0); /* calls past the window: not yet */
    /* The program makes 512 calls: the thread wakes and runs q calls ahead of it again. */
    for (unsigned i = 0; i < 512; i++)
        foresight_pt_tick(c, 3);
    CHECK(wait_counter(&fs_global_pt_calls, 512 + q));
    a = calls_at(q + 1, 512 + q, &len);
    CHECK(wait_fraction(a, len, 1.0, 0, 20));
    CHECK_EQ(get(&fs_global_pt_calls), 512 + q);
    for (unsigned i = 512; i < CALLS; i++)
        foresight_pt_tick(c, 3);
    CHECK(wait_flag(&run_done));
    CHECK_EQ(get(&fs_global_pt_mispredicts), 0);
    CHECK(get(&fs_global_pt_issued) > 0);
    CHECK_EQ(get(&fs_global_pt_issue_failed), 0);
    /* How the requests went (pt_window_uring): the ring, or posix_fadvise and why not. */
    const char *want = getenv("TEST_PT_ISSUE");
    const char *how = __atomic_load_n(&fs_global_pt_issue, __ATOMIC_ACQUIRE);
    static const char off[] = "fadvise (FORESIGHT_PT_ISSUE=uring: io_uring is off";
    if (want != NULL && strncmp(how, off, sizeof off - 1) == 0)
        fprintf(stderr, "pt window: %s: the ring not checked\n", how); /* (a sandbox) */
    else if (want != NULL)
        CHECK(strncmp(how, want, strlen(want)) == 0);
    unlink(path);
}

/* The program's writes as the thread makes them: nothing written, each predicted whole;
 * a file the program creates opens on the thread before it exists, as a handle reading
 * nothing, and so does a read-only open of that path; once the program has made the file,
 * a lead read (which waits for the program's call) reads it; a file opened only to read
 * and never created still fails. */
static int writes_ok, created_ok, writes_checked;
static const char created_text[] = "made by the program";

static void run_writes(void)
{
    char created[4096 + 16], never[4096 + 16];
    snprintf(created, sizeof created, "%s.new", path);
    snprintf(never, sizeof never, "%s.none", path);
    const int c = foresight_pt_open(created, O_WRONLY | O_CREAT | O_TRUNC, 1);
    const int r = foresight_pt_open(created, O_RDONLY, 2);
    const int n = foresight_pt_open(never, O_RDONLY, 2);
    const int n_errno = errno;
    const int h = foresight_pt_open(path, O_RDWR, 3);
    char b[16];
    writes_ok = c >= 3 && r >= 3 && n == -1 && n_errno == ENOENT && h >= 3 &&
                foresight_pt_write(c, 4096) == 4096 &&
                foresight_pt_read(c, NULL, 4096, 4) == 0 && /* reads nothing */
                foresight_pt_write(h, 100) == 100 &&
                foresight_pt_lseek(h, 0, SEEK_CUR, 5) == 100 && /* the shared offset */
                foresight_pt_read(h, NULL, sizeof b, 6) == (long)sizeof b && /* predicted */
                foresight_pt_pwrite(h, 7, 1 << 20) == 7 &&
                foresight_pt_fwrite(8, 3, NULL) == 3 && foresight_pt_fputc(0x1ff, NULL) == 0xff;
    foresight_pt_close(c, 7);
    foresight_pt_close(h, 8);
    publish(&writes_checked, 1);
    /* Call 3: waits for the program's third, after which the file is there. */
    char got[sizeof created_text] = {0};
    created_ok = foresight_pt_pread(r, got, sizeof got, 0, 9) == (long)sizeof got &&
                 memcmp(got, created_text, sizeof got) == 0;
    foresight_pt_close(r, 10);
    publish(&run_done, 1);
}

static void scenario_writes(void)
{
    cold_file("pt_writes.dat");
    struct stat before;
    CHECK(stat(path, &before) == 0);
    char created[4096 + 16];
    snprintf(created, sizeof created, "%s.new", path);
    unlink(created);
    struct foresight_pt_clock *clock = foresight_pt_start(NULL, run_writes);
    CHECK(clock != NULL);
    CHECK(wait_flag(&writes_checked));
    CHECK(writes_ok);
    CHECK(access(created, F_OK) != 0); /* the thread created nothing */
    const int fd = open(created, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, created_text, sizeof created_text) == (ssize_t)sizeof created_text);
    close(fd);
    foresight_pt_tick(clock, 4);
    foresight_pt_tick(clock, 6);
    foresight_pt_tick(clock, 9);
    CHECK(wait_flag(&run_done));
    CHECK(created_ok);
    unlink(created);
    struct stat after;
    CHECK(stat(path, &after) == 0);
    CHECK(after.st_size == before.st_size && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    unlink(path);
}

/* FORESIGHT_PT_SCHED=eq1: the thread still runs the window ahead, but its predictions go to
 * the disk only when Eq. (1) says they are due: with the program's pace unknown, its next 64
 * calls; with the program at 2 ms a call, a few calls ahead, not the window's 960. */
static void scenario_eq1(void)
{
    CHECK(fs_cfg.pt_eq1);
    cold_file("pt_eq1.dat");
    const unsigned q = FS_PT_QUEUE_MAX;
    publish(&go, 1);
    struct foresight_pt_clock *c = foresight_pt_start(NULL, run_backward);
    CHECK(c != NULL);
    CHECK(wait_counter(&fs_global_pt_sleeps, 5)); /* q calls ahead, asleep, woken 5 times */
    CHECK_EQ(get(&fs_global_pt_calls), q);
    size_t len;
    const char *a = calls_at(1, 64, &len);
    CHECK(wait_fraction(a, len, 1.0, 0, 20));
    a = calls_at(100, q, &len);
    CHECK(resident_fraction(a, len) == 0); /* not due: never issued while nothing moves */
    for (unsigned i = 0; i < 100; i++) {
        foresight_pt_tick(c, 3);
        usleep(2000);
    }
    /* 2 ms away from the program, due (5 ms); call 102 (4 ms) is due too at the pace
     * asked, but a loaded machine stretches the 2 ms sleeps, and at a measured 8 ms a
     * call it is not (a helper's finding: 1 run in 3 under load, ASan) */
    a = calls_at(101, 101, &len);
    CHECK(wait_fraction(a, len, 1.0, 0, 20));
    a = calls_at(400, q, &len);
    CHECK(resident_fraction(a, len) == 0); /* 300 calls (0.6 s) ahead: not due */
    for (unsigned i = 100; i < CALLS; i++)
        foresight_pt_tick(c, 3);
    CHECK(wait_flag(&run_done));
    CHECK_EQ(get(&fs_global_pt_mispredicts), 0);
    unlink(path);
}

static void run_forward(void)
{
    while (!flag(&go))
        usleep(1000);
    int h = foresight_pt_open(path, O_RDONLY, 1);
    for (unsigned k = 0; k < CALLS; k++)
        foresight_pt_read(h, NULL, 4096, 3);
    foresight_pt_close(h, 4);
    publish(&run_done, 1);
}

/* Calls left to the kernel's readahead since the last sleep, none issued (a forward run
 * after its first 32 predictions): the thread wakes at half the window, not at 64 free
 * (pt_sched.c: each wake is the program's futex wake). */
static void scenario_idle(void)
{
    cold_file("pt_idle.dat");
    const unsigned q = FS_PT_QUEUE_MAX;
    publish(&go, 1);
    struct foresight_pt_clock *c = foresight_pt_start(NULL, run_forward);
    CHECK(c != NULL);
    /* The first window issued its first predictions: asleep until the program's call 64. */
    CHECK(wait_counter(&fs_global_pt_sleeps, 1));
    CHECK_EQ(__atomic_load_n(&c->wake_at, __ATOMIC_RELAXED), 64);
    CHECK(get(&fs_global_pt_issued) > 0);
    const unsigned long issued = get(&fs_global_pt_issued), left = get(&fs_global_pt_left_to_readahead);
    for (unsigned i = 0; i < 64; i++)
        foresight_pt_tick(c, 3);
    /* Its next 64 calls were all left to readahead: asleep until half the window is free. */
    bool half = false;
    for (int i = 0; i < 20000 && !half; i++) {
        half = __atomic_load_n(&c->wake_at, __ATOMIC_RELAXED) == 64 + q / 2;
        if (!half)
            usleep(1000);
    }
    CHECK(half);
    CHECK(get(&fs_global_pt_left_to_readahead) > left);
    CHECK_EQ(get(&fs_global_pt_issued), issued);
    for (unsigned i = 64; i < CALLS; i++)
        foresight_pt_tick(c, 3);
    CHECK(wait_flag(&run_done));
    CHECK_EQ(get(&fs_global_pt_mispredicts), 0);
    unlink(path);
}

static void scenario_expiry(void)
{
    cold_file("pt_expiry.dat");
    struct foresight_pt_clock *c = foresight_pt_start(NULL, run_backward);
    CHECK(c != NULL);
    for (unsigned i = 0; i < CALLS; i++) /* the program is ahead of every prediction */
        foresight_pt_tick(c, 3);
    publish(&go, 1);
    CHECK(wait_flag(&run_done));
    CHECK(wait_counter(&fs_global_pt_expired, CALLS));
    CHECK_EQ(get(&fs_global_pt_expired), CALLS);
    CHECK_EQ(get(&fs_global_pt_issued), 0);
    CHECK_EQ(get(&fs_global_pt_sleeps), 0);
    CHECK(resident_fraction(map, FILE_LEN) == 0);
    unlink(path);
}

static void scenario_mispredict(void)
{
    cold_file("pt_mispredict.dat");
    struct foresight_pt_clock *c = foresight_pt_start(NULL, run_backward);
    CHECK(c != NULL);
    /* The thread reads at site 3.  Calls 1..512: every eighth at site 3, the others at 5
     * (7 mispredictions, then a match); from 513 on, all at 5. */
    for (unsigned id = 1; id <= 1024; id++)
        foresight_pt_tick(c, id <= 512 && id % 8 == 0 ? 3 : 5);
    publish(&go, 1);
    for (int i = 0; i < 20000 && __atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL;
         i++)
        usleep(1000);
    const char *why = __atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE);
    CHECK(why != NULL && strcmp(why, "mispredicted") == 0);
    /* Compared after each flush of 64: 56 per 64 calls up to 512, then 513..520. */
    CHECK_EQ(get(&fs_global_pt_mispredicts), 512 / 8 * 7 + 8);
    CHECK_EQ(get(&fs_global_pt_calls), 576);
    CHECK(__atomic_load_n(&run_calls, __ATOMIC_RELAXED) < CALLS);
    CHECK(!flag(&run_done));
    unlink(path);
}

static int disabled_init_calls;

static void init_disabled(void)
{
    disabled_init_calls++;
}

static void run_disabled(void)
{
    publish(&run_done, 1);
}

static void scenario_disabled(void)
{
    struct foresight_pt_clock *c = foresight_pt_start(init_disabled, run_disabled);
    CHECK(c == NULL);
    CHECK_EQ(disabled_init_calls, 0);
    foresight_pt_tick(c, 1); /* no thread: a no-op */
    CHECK_EQ(get(&fs_global_pt_started), 0);
    CHECK(!flag(&run_done));
}

static void scenario_fork(void)
{
    cold_file("pt_fork.dat");
    publish(&go, 1);
    struct foresight_pt_clock *c = foresight_pt_start(NULL, run_backward);
    CHECK(c != NULL);
    CHECK(wait_counter(&fs_global_pt_sleeps, 1)); /* asleep until the program's call 64 */
    pid_t pid = fork();
    if (pid == 0) {
        int bad = __atomic_load_n(&c->wake_at, __ATOMIC_RELAXED) != 0;
        for (unsigned i = 0; i < CALLS; i++)
            foresight_pt_tick(c, 3);
        exit(bad ? 3 : 0); /* a normal exit: atexit handlers, the runtime's destructor */
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    for (unsigned i = 0; i < CALLS; i++)
        foresight_pt_tick(c, 3);
    CHECK(wait_flag(&run_done)); /* the parent's thread carried on */
    unlink(path);
}

static int survived;

static void run_exit_group(void)
{
    __atomic_store_n(&run_tid, tid(), __ATOMIC_RELEASE);
    syscall(SYS_exit_group, 3);
    publish(&survived, 1);
}

static void scenario_exit_group(void)
{
    CHECK(foresight_pt_start(NULL, run_exit_group) != NULL);
    pid_t t = 0;
    for (int i = 0; i < 20000 && (t = __atomic_load_n(&run_tid, __ATOMIC_ACQUIRE)) == 0; i++)
        usleep(1000);
    CHECK(t != 0);
    char task[64];
    snprintf(task, sizeof task, "/proc/self/task/%d", (int)t);
    bool gone = false;
    for (int i = 0; i < 20000 && !gone; i++) {
        gone = access(task, F_OK) != 0;
        if (!gone)
            usleep(1000);
    }
    CHECK(gone);
    CHECK(!flag(&survived));
}

/* ---- handles: 3 and up ---- */

static int h_ok[8];
enum { H_OPEN, H_LOW, H_UNOPENED, H_RAW, H_OWN, H_N };

static bool ebadf(long r)
{
    return r == -1 && errno == EBADF;
}

static void run_handles(void)
{
    uint64_t buf[2];
    int h = foresight_pt_open(path, O_RDONLY, 1);
    h_ok[H_OPEN] = h >= 3;
    h_ok[H_LOW] = 1;
    for (int fd = 0; fd < 3; fd++) /* stdin, stdout, stderr: the program's, not the thread's */
        h_ok[H_LOW] &= (fd == 0 || (ebadf(foresight_pt_read(fd, NULL, 10, 2)) &&
                                    ebadf(foresight_pt_read(fd, buf, 10, 2)))) &&
                       ebadf(foresight_pt_pread(fd, NULL, 10, 0, 2)) &&
                       ebadf(foresight_pt_pread(fd, buf, 10, 0, 2)) &&
                       ebadf(foresight_pt_lseek(fd, 0, SEEK_SET, 2)) &&
                       ebadf(foresight_pt_close(fd, 2));
    h_ok[H_UNOPENED] = ebadf(foresight_pt_read(h + 1, NULL, 10, 2)) &&
                       ebadf(foresight_pt_read(h + 1, buf, 10, 2));
    h_ok[H_RAW] = ebadf(read(0, buf, 1)); /* its table has no 0 */
    h_ok[H_OWN] = foresight_pt_read(h, buf, sizeof buf, 3) == sizeof buf &&
                  pattern_at(buf, 2, 0);
    foresight_pt_close(h, 4);
    publish(&run_done, 1);
}

static void scenario_handles(void)
{
    cold_file("pt_handles.dat");
    CHECK(foresight_pt_start(NULL, run_handles) != NULL);
    CHECK(wait_flag(&run_done));
    for (int i = 0; i < H_N; i++)
        if (!h_ok[i]) {
            fprintf(stderr, "handles: result %d failed\n", i);
            check_failures++;
        }
    unlink(path);
}

/* ---- setxid: the program drops to nobody ---- */

static int thread_uid = -1, thread_gid = -1, confined;

static void run_until_go(void)
{
    publish(&confined, 1); /* the slice runs: the filter is in place */
    while (!flag(&go))
        usleep(1000);
    thread_uid = (int)syscall(SYS_getuid); /* its own credentials (per thread in Linux) */
    thread_gid = (int)syscall(SYS_getgid);
    publish(&run_done, 1);
}

static void scenario_setxid(void)
{
    if (geteuid() != 0) {
        printf("pt setxid: skipped (not root)\n");
        exit(0);
    }
    CHECK(foresight_pt_start(NULL, run_until_go) != NULL);
    CHECK(wait_flag(&confined));
    CHECK_EQ(setgroups(0, NULL), 0);
    CHECK_EQ(setgid(65534), 0);
    CHECK_EQ(setuid(65534), 0); /* glibc aborted here when the thread's setuid failed */
    CHECK_EQ(getuid(), 65534);
    CHECK_EQ(getgid(), 65534);
    publish(&go, 1);
    CHECK(wait_flag(&run_done));
    CHECK_EQ(thread_uid, 65534);
    CHECK_EQ(thread_gid, 65534);
    CHECK(__atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL);
}

/* ---- written: read after write ---- */

static char w_paths[5][4096];
enum { W_RDWR, W_LATER, W_GROWS, W_TOUCHED, W_CLEAN };
#define W_MARK_A 0x5a5a5a5a01ULL /* what the program writes before its call 3 */
#define W_MARK_B 0x5a5a5a5a02ULL /* ... before its call 6 */
#define W_MARK_C 0x5a5a5a5a03ULL /* ... and before its call 13 (a stream's fread) */
static int w_ok[32], w_phase, w_done; /* w_done: the thread's calls made so far */
static struct foresight_pt_clock *w_clock;

/* A lead read of H at OFF, call number CALL: its first word, and whether the thread
 * waited for the program there (one more sync wait). */
static bool lead_word(int h, int64_t off, int call, uint64_t *word, bool *waited)
{
    uint64_t buf[4];
    const unsigned long before = get(&fs_global_pt_sync_waits);
    const bool ok = foresight_pt_pread(h, buf, sizeof buf, off, 2) == sizeof buf;
    *waited = get(&fs_global_pt_sync_waits) == before + 1;
    *word = buf[0];
    publish(&w_done, call);
    return ok;
}

/* A lead read of H's second 4 KiB: the file's own pattern, read without waiting. */
static bool lead_reads(int h, int call)
{
    uint64_t buf[4];
    const unsigned long before = get(&fs_global_pt_sync_waits);
    const bool ok = foresight_pt_pread(h, buf, sizeof buf, 4096, 2) == sizeof buf &&
                    pattern_at(buf, 4, 4096) && get(&fs_global_pt_sync_waits) == before;
    publish(&w_done, call);
    return ok;
}

/* A predicted read of H's third 4 KiB: no wait, whether the file is written or not. */
static bool predicts(int h, int call)
{
    const unsigned long before = get(&fs_global_pt_sync_waits);
    const bool ok = foresight_pt_pread(h, NULL, 4096, 8192, 3) == 4096 &&
                    get(&fs_global_pt_sync_waits) == before;
    publish(&w_done, call);
    return ok;
}

static void run_written(void)
{
    int *r = w_ok, n = 0;
    uint64_t word;
    bool waited;
    int e = foresight_pt_open(w_paths[W_CLEAN], O_RDONLY, 1);
    r[n++] = lead_reads(e, 1);
    /* The program opens it for writing: a prediction goes on at once; a lead read waits
     * for the program's call and gets what the program wrote before it. */
    int a = foresight_pt_open(w_paths[W_RDWR], O_RDWR | O_CREAT, 1);
    r[n++] = predicts(a, 2);
    publish(&w_phase, 1);
    r[n++] = lead_word(a, 0, 3, &word, &waited) && waited && word == W_MARK_A;
    /* Read first (no wait), then another handle of the file opened for writing. */
    int b = foresight_pt_open(w_paths[W_LATER], O_RDONLY, 1);
    r[n++] = lead_reads(b, 4);
    int b2 = foresight_pt_open(w_paths[W_LATER], O_WRONLY | O_APPEND, 1);
    r[n++] = b2 >= 0 && predicts(b, 5);
    foresight_pt_close(b2, 4);
    publish(&w_phase, 2);
    r[n++] = lead_word(b, 4096, 6, &word, &waited) && waited && word == W_MARK_B;
    /* Files the program changes between two lead reads: one grows, one's mtime is set. */
    int c = foresight_pt_open(w_paths[W_GROWS], O_RDONLY, 1);
    int d = foresight_pt_open(w_paths[W_TOUCHED], O_RDONLY, 1);
    r[n++] = lead_reads(c, 7) && lead_reads(d, 8);
    publish(&w_phase, 3);
    while (flag(&w_phase) != 4)
        usleep(1000);
    r[n++] = foresight_pt_pread(c, NULL, 1u << 20, 0, 3) == 65536 + 4096; /* 9: its new size */
    publish(&w_done, 9);
    r[n++] = lead_word(d, 4096, 10, &word, &waited) && waited && word == 4096 / 8;
    r[n++] = lead_word(c, 4096, 11, &word, &waited) && waited && word == 4096 / 8;
    r[n++] = lead_reads(e, 12); /* an untouched file: no wait */
    /* A lead fread of a stream the program writes waits as read does. */
    FILE *s = foresight_pt_fopen(w_paths[W_RDWR], "r+", 1);
    uint64_t got = 0;
    const unsigned long before = get(&fs_global_pt_sync_waits);
    r[n++] = s != NULL && foresight_pt_fread(&got, sizeof got, 1, s, 2) == 1 &&
             got == W_MARK_C && get(&fs_global_pt_sync_waits) == before + 1;
    publish(&w_done, 13);
    /* The program's call of that ID came from another site: the thread went astray, and
     * its lead read fails (EIO) after the wait. */
    uint64_t buf[4];
    errno = 0;
    r[n++] = foresight_pt_pread(a, buf, sizeof buf, 0, 5) == -1 && errno == EIO;
    publish(&w_done, 14);
    foresight_pt_fclose(s, 1);
    r[n] = -1;
    publish(&run_done, 1);
}

/* The program's side: waits until the thread has made SINCE calls, makes its own calls
 * up to SINCE (the thread's made so far, none waited for), then, at the thread's Kth
 * wait, checks that the thread is blocked before call CALL. */
static void w_blocked(int k, int since, int call, unsigned long *ticked)
{
    for (int i = 0; i < 20000 && flag(&w_done) < since; i++)
        usleep(1000);
    while (*ticked + 1 < (unsigned long)call) {
        foresight_pt_tick(w_clock, 2);
        ++*ticked;
    }
    CHECK(wait_counter(&fs_global_pt_sync_waits, (unsigned long)k));
    usleep(20000);
    CHECK_EQ(flag(&w_done), call - 1); /* still waiting */
}

/* ... then the program makes call CALL (after what it writes before it). */
static void w_call(unsigned long *ticked)
{
    foresight_pt_tick(w_clock, 2);
    ++*ticked;
}

static void w_write(int which, uint64_t value, off_t off)
{
    int fd = open(w_paths[which], O_WRONLY);
    CHECK(fd >= 0);
    CHECK_EQ(pwrite(fd, &value, sizeof value, off), sizeof value);
    close(fd);
}

static void scenario_written(void)
{
    static const char *const names[] = {"pt_w_rdwr.dat", "pt_w_later.dat", "pt_w_grows.dat",
                                        "pt_w_touched.dat", "pt_w_clean.dat"};
    for (int i = 0; i < 5; i++)
        small_file(w_paths[i], names[i]);
    for (int i = 0; i < 5; i++) { /* 64 KiB each: small_file's 4096 is too short here */
        int fd = open(w_paths[i], O_RDWR);
        CHECK(fd >= 0);
        uint64_t v[512];
        for (uint64_t off = 0; off < 65536; off += sizeof v) {
            for (size_t k = 0; k < 512; k++)
                v[k] = off / 8 + k;
            CHECK_EQ(pwrite(fd, v, sizeof v, (off_t)off), sizeof v);
        }
        close(fd);
    }
    unsigned long ticked = 0;
    CHECK((w_clock = foresight_pt_start(NULL, run_written)) != NULL);
    w_blocked(1, 2, 3, &ticked); /* the lead read of the file opened O_RDWR */
    w_write(W_RDWR, W_MARK_A, 0);
    w_call(&ticked);
    w_blocked(2, 5, 6, &ticked); /* the file another handle opened for writing */
    w_write(W_LATER, W_MARK_B, 4096);
    w_call(&ticked);
    CHECK(wait_counter(&fs_global_pt_sync_waits, 2) && flag(&w_phase) >= 2);
    for (int i = 0; i < 20000 && flag(&w_phase) != 3; i++)
        usleep(1000);
    /* The program appends to one file and sets the other's mtime (its data unchanged). */
    int fd = open(w_paths[W_GROWS], O_WRONLY | O_APPEND);
    char more[4096] = {0};
    CHECK_EQ(write(fd, more, sizeof more), sizeof more);
    close(fd);
    struct timespec t[2] = {{.tv_sec = 1000000000, .tv_nsec = 0}, {.tv_sec = 1000000000, .tv_nsec = 0}};
    CHECK_EQ(utimensat(AT_FDCWD, w_paths[W_TOUCHED], t, 0), 0);
    publish(&w_phase, 4);
    w_blocked(3, 9, 10, &ticked); /* the touched file */
    w_call(&ticked);
    w_blocked(4, 10, 11, &ticked); /* the grown file */
    w_call(&ticked);
    w_blocked(5, 12, 13, &ticked); /* the stream's fread */
    w_write(W_RDWR, W_MARK_C, 0);
    w_call(&ticked);
    w_blocked(6, 13, 14, &ticked); /* a call of another site */
    w_call(&ticked);
    CHECK(wait_flag(&run_done));
    CHECK_EQ(get(&fs_global_pt_sync_waits), 6);
    for (int i = 0; w_ok[i] != -1 && i < 32; i++)
        if (w_ok[i] != 1) {
            fprintf(stderr, "written: result %d failed\n", i);
            check_failures++;
        }
    CHECK(get(&fs_global_pt_lead_reads) > 0);
    for (int i = 0; i < 5; i++)
        unlink(w_paths[i]);
}

/* ---- readahead: forward runs left to the kernel ---- */

static void run_readahead(void)
{
    int h = foresight_pt_open(path, O_RDONLY, 1);
    for (unsigned k = 0; k < 100; k++) /* forward from 0: 33 issued, 67 left */
        foresight_pt_pread(h, NULL, 4096, (int64_t)k * 4096, 2);
    for (unsigned k = 0; k < 50; k++) /* backward below 6 MiB */
        foresight_pt_pread(h, NULL, 4096, (6 << 20) - (int64_t)(k + 1) * 4096, 2);
    for (unsigned k = 0; k < 50; k++) /* strided from 3 MiB */
        foresight_pt_pread(h, NULL, 4096, (3 << 20) + (int64_t)k * 8192, 2);
    foresight_pt_lseek(h, 7 << 20, SEEK_SET, 2);
    for (unsigned k = 0; k < 40; k++) /* forward again, read(): 33 issued, 7 left */
        foresight_pt_read(h, NULL, 4096, 2);
    foresight_pt_close(h, 3);
    publish(&run_done, 1);
}

static void scenario_readahead(void)
{
    cold_file("pt_readahead.dat");
    CHECK(foresight_pt_start(NULL, run_readahead) != NULL);
    CHECK(wait_flag(&run_done));
    CHECK_EQ(get(&fs_global_pt_left_to_readahead), 67 + 7);
    CHECK_EQ(get(&fs_global_pt_expired), 0);
    CHECK(wait_fraction(map, 33 * 4096, 1.0, 0, 20));
    CHECK(resident_fraction(map + 33 * 4096, 67 * 4096) == 0);
    CHECK(wait_fraction(map + (6 << 20) - 50 * 4096, 50 * 4096, 1.0, 0, 20));
    for (unsigned k = 0; k < 50; k++)
        CHECK(wait_fraction(map + (3 << 20) + k * 8192, 4096, 1.0, 0, 20));
    CHECK(wait_fraction(map + (7 << 20), 33 * 4096, 1.0, 0, 20));
    CHECK(resident_fraction(map + (7 << 20) + 33 * 4096, 7 * 4096) == 0);
    unlink(path);
}

/* ---- advice: the program's readahead off while the thread leads ---- */

static void run_advice(void)
{
    int h = foresight_pt_open(path, O_RDONLY, 1);
    for (unsigned k = 0; k < 100; k++) /* backward from the end: queued */
        foresight_pt_pread(h, NULL, 4096, FILE_LEN - (int64_t)(k + 1) * 4096, 2);
    foresight_pt_close(h, 3);
    publish(&run_done, 1);
}

static void scenario_advice(void)
{
    cold_file("pt_advice.dat");
    struct foresight_pt_clock *c = foresight_pt_start(NULL, run_advice);
    CHECK(c != NULL);
    CHECK(wait_flag(&run_done));
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    static char buf[4096];
    /* Calls 1-100, which the thread queued: readahead off, so 100 sequential 4 KiB reads
     * of the program cache exactly their 100 pages (with readahead, more). */
    for (unsigned k = 0; k < 100; k++)
        CHECK_EQ(pread(foresight_pt_tick_fd(c, 2, fd), buf, 4096, (off_t)k * 4096), 4096);
    CHECK_EQ(get(&fs_global_pt_readahead_off), 1);
    CHECK_EQ(get(&fs_global_pt_readahead_on), 0);
    CHECK(resident_fraction(map, 100 * 4096) == 1.0);
    CHECK(resident_fraction(map + 100 * 4096, 64 * 4096) == 0);
    /* Past the thread's last call: readahead on again, and two sequential reads bring
     * in pages after them. */
    for (unsigned k = 0; k < 2; k++)
        CHECK_EQ(pread(foresight_pt_tick_fd(c, 2, fd), buf, 4096, (2 << 20) + (off_t)k * 4096),
                 4096);
    CHECK_EQ(get(&fs_global_pt_readahead_on), 1);
    CHECK(resident_fraction(map + (2 << 20) + 8192, 64 * 4096) > 0);
    /* A descriptor past the table, and one that takes no advice (a pipe): no harm. */
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK_EQ(foresight_pt_tick_fd(c, 2, p[0]), p[0]);
    CHECK_EQ(foresight_pt_tick_fd(c, 2, FORESIGHT_PT_FDS + 5), FORESIGHT_PT_FDS + 5);
    CHECK_EQ(foresight_pt_tick_fd(NULL, 2, 7), 7);
    close(p[0]);
    close(p[1]);
    close(fd);
    unlink(path);
}

/* ---- cpu: the thread's CPU time ---- */

static int spun;

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_spin(void)
{
    __atomic_store_n(&run_tid, tid(), __ATOMIC_RELEASE);
    while (thread_cpu() < 0.05)
        ;
    publish(&spun, 1);
    while (!flag(&go))
        usleep(1000);
}

static void scenario_cpu(void)
{
    CHECK(fs_pt_cpu_seconds() == 0); /* no thread yet */
    CHECK(foresight_pt_start(NULL, run_spin) != NULL);
    CHECK(wait_flag(&spun));
    const double running = fs_pt_cpu_seconds();
    CHECK(running >= 0.05 && running < 60);
    CHECK(running < thread_cpu() + 0.05 || thread_cpu() < 0.05); /* not the caller's own */
    publish(&go, 1);
    bool ended_yet = false; /* (then parked: fs_pt_retire alone has it go) */
    for (int i = 0; i < 20000 && !(ended_yet = fs_pt_ended()); i++)
        usleep(1000);
    CHECK(ended_yet);
    const double ended = fs_pt_cpu_seconds();
    CHECK(ended >= running && ended < 60);
    CHECK(fs_pt_cpu_seconds() == ended); /* what the thread recorded as it ended */
    /* In the JSON statistics. */
    fs_cfg.stats = 2;
    snprintf(fs_cfg.stats_path, sizeof fs_cfg.stats_path, "%s/pt_cpu.json",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    fs_stats_report();
    fs_cfg.stats = 0;
    FILE *f = fopen(fs_cfg.stats_path, "r");
    CHECK(f != NULL);
    static char json[1 << 16];
    size_t n = f ? fread(json, 1, sizeof json - 1, f) : 0;
    if (f)
        fclose(f);
    json[n] = 0;
    const char *at = strstr(json, "\"pt_cpu_seconds\": ");
    CHECK(at != NULL);
    double v = at ? strtod(at + strlen("\"pt_cpu_seconds\": "), NULL) : -1;
    CHECK(v > ended - 1e-5 && v < ended + 1e-5);
    CHECK(strstr(json, "\"pt_left_to_readahead\": 0") != NULL);
    CHECK(strstr(json, "\"pt_unguarded\": 0") != NULL);
    unlink(fs_cfg.stats_path);
    /* Retired (as a program's setrlimit or unshare has it), the parked thread is counted
     * out as it goes, though pthread_exit skips the rest of its start routine: what
     * fs_threads_retire waits for. */
    const unsigned before = fs_library_threads_running();
    CHECK(fs_pt_retire("test: retired"));
    unsigned after = fs_library_threads_running();
    for (int i = 0; i < 2000 && after != before - 1; i++) {
        usleep(1000);
        after = fs_library_threads_running();
    }
    CHECK(before >= 1 && after == before - 1);
}

/* ---- spinning: a loop of failing opens (the program slept between them) ---- */

static void run_poll(void)
{
    for (;;) /* the program's loop waits for the file to appear; the slice lost the sleep */
        if (foresight_pt_open("/nonexistent/foresight-test-file", O_RDONLY, 1) >= 0)
            break;
    publish(&run_done, 1);
}

/* Starts RUN on the thread and waits (20 s at most) for it to stop; its reason. */
static const char *stopped(void (*run)(void))
{
    CHECK(foresight_pt_start(NULL, run) != NULL);
    const char *why = NULL;
    for (int i = 0; i < 20000 && (why = __atomic_load_n(&fs_global_pt_stopped,
                                                         __ATOMIC_ACQUIRE)) == NULL; i++)
        usleep(1000);
    return why != NULL ? why : "";
}

static void scenario_spin(void)
{
    CHECK(strncmp(stopped(run_poll), "spinning", 8) == 0);
    CHECK(!flag(&run_done));
}

/* A loop on data the thread could not read, with no I/O call in it: the watchdog stops it
 * after a second or two of its CPU. */
static volatile unsigned long spins;
static void run_compute(void)
{
    for (unsigned long k = 0; k < ~0ul; k++)
        spins = spins * 31 + k;
    publish(&run_done, 1);
}

static void scenario_compute(void)
{
    CHECK(strncmp(stopped(run_compute), "spun a second", 13) == 0);
    CHECK(!flag(&run_done));
    CHECK(fs_pt_cpu_seconds() < 3.5);
}

/* A store past one of the thread's blocks into a freed one's free-list link: the next
 * allocation of that size would be wherever the link says (the program's memory, in a
 * helper's probe); the arena stops the thread instead. */
static void run_arena(void)
{
    char *a = foresight_pt_malloc(16), *b = foresight_pt_malloc(16);
    foresight_pt_free(b);
    memset(a, 0x41, 64); /* over b's header and link */
    (void)foresight_pt_malloc(16);
    publish(&run_done, 1);
}

static void scenario_arena(void)
{
    CHECK(strncmp(stopped(run_arena), "its arena is corrupted", 22) == 0);
    CHECK(!flag(&run_done));
}

/* ---- retire_early: the library's threads told to end just after the thread is made ---- */

static void run_nothing(void)
{
}

/* One process: a prefetch thread made and the library's threads ended at once, often
 * before the new thread has begun (it must still end, and be waited for, not for 2 s
 * in vain). */
static void scenario_retire_once(void)
{
    CHECK(foresight_pt_start(NULL, run_nothing) != NULL);
    CHECK(fs_pt_address_space() > 0); /* its reservation */
    CHECK(fs_threads_retire("test: retired at once"));
    CHECK_EQ(fs_pt_address_space(), 0); /* ended and waited for: its memory given back */
}

static void scenario_retire_early(void)
{
    for (int i = 0; i < 8; i++) {
        const pid_t pid = fork();
        if (pid == 0) {
            execl("/proc/self/exe", "test_pt", "retire_once", (char *)NULL);
            _exit(127);
        }
        int status = 0;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

/* ---- anchor: runs anchored at a function's entry (foresight_pt_anchor) ---- */

static int a_fd, a_inits, a_hold;
static int64_t a_off;

static void anchor_init(const void *args) /* on the program's thread, as the compiler's */
{
    CHECK(args == &a_fd);
    a_inits++;
    a_off = lseek(a_fd, 0, SEEK_CUR);
}

static void run_anchor(void) /* predicted 4 KiB preads backward from the program's offset */
{
    while (flag(&a_hold))
        usleep(1000);
    const int h = foresight_pt_adopt(a_fd, a_off);
    if (h < 0)
        return;
    const int64_t off = foresight_pt_lseek(h, 0, SEEK_CUR, 2);
    for (int64_t o = off - 4096; o >= 0; o -= 4096)
        foresight_pt_pread(h, NULL, 4096, o, 3);
}

/* Anchors until one starts a run (the thread had finished the last one): the count of
 * inits reaching WANT. */
static bool anchor_until(struct foresight_pt_clock *c, int want)
{
    for (int i = 0; i < 20000; i++) {
        CHECK(foresight_pt_anchor(anchor_init, run_anchor, &a_fd) == c);
        if (a_inits >= want)
            return a_inits == want;
        usleep(1000);
    }
    return false;
}

static void scenario_anchor(void)
{
    cold_file("pt_anchor.dat");
    a_fd = open(path, O_RDONLY);
    CHECK(a_fd >= 0);
    const unsigned q = FS_PT_QUEUE_MAX, half = FILE_LEN / 2 / 4096;
    /* Run 1 from the middle of the file: its handle is the program's descriptor reopened,
     * at the program's offset; q calls ahead it sleeps, their pages resident. */
    lseek(a_fd, FILE_LEN / 2, SEEK_SET);
    struct foresight_pt_clock *c = foresight_pt_anchor(anchor_init, run_anchor, &a_fd);
    CHECK(c != NULL);
    CHECK_EQ(a_inits, 1);
    CHECK(wait_counter(&fs_global_pt_sleeps, 1));
    CHECK_EQ(get(&fs_global_pt_calls), q);
    CHECK(wait_fraction(map + FILE_LEN / 2 - (size_t)q * 4096, (size_t)q * 4096, 1.0, 0, 20));
    CHECK(resident_fraction(map + FILE_LEN / 2, FILE_LEN / 2) == 0);
    /* Anchored again while it leads the program: the run goes on, no new one. */
    CHECK(foresight_pt_anchor(anchor_init, run_anchor, &a_fd) == c);
    CHECK_EQ(a_inits, 1);
    for (unsigned i = 0; i < half; i++)
        foresight_pt_tick(c, 3);
    CHECK(wait_counter(&fs_global_pt_calls, half));
    /* Run 2, once run 1 is over, from the end of the file: the program's calls after its
     * first half predicted from there. */
    lseek(a_fd, FILE_LEN, SEEK_SET);
    CHECK(anchor_until(c, 2));
    CHECK(wait_counter(&fs_global_pt_calls, half + q));
    CHECK(wait_fraction(map + FILE_LEN - (size_t)q * 4096, (size_t)q * 4096, 1.0, 0, 20));
    CHECK(resident_fraction(map + FILE_LEN / 2, FILE_LEN / 2 - (size_t)q * 4096 - 64 * 4096) == 0);
    CHECK_EQ(get(&fs_global_pt_mispredicts), 0);
    /* The program goes another way (its calls from another site): the run is given up,
     * not the thread. */
    for (unsigned i = 0; i < 2 * half; i++)
        foresight_pt_tick(c, 5);
    CHECK(wait_counter(&fs_global_pt_gave_up, 1));
    CHECK(__atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL);
    /* Run 3 is held before its first call while the program passes all of its calls: the
     * next anchor finds it lagging and has it given up; run 4 then starts. */
    publish(&a_hold, 1);
    lseek(a_fd, FILE_LEN / 4, SEEK_SET);
    CHECK(anchor_until(c, 3));
    for (unsigned i = 0; i < FILE_LEN / 4 / 4096; i++)
        foresight_pt_tick(c, 3);
    CHECK(foresight_pt_anchor(anchor_init, run_anchor, &a_fd) == c);
    CHECK_EQ(a_inits, 3);
    CHECK_EQ(__atomic_load_n(&fs_pt_abandon, __ATOMIC_ACQUIRE), 1);
    publish(&a_hold, 0);
    CHECK(wait_counter(&fs_global_pt_gave_up, 2));
    const unsigned long before = get(&fs_global_pt_calls); /* run 3 made none */
    CHECK(anchor_until(c, 4));
    CHECK(wait_counter(&fs_global_pt_runs, 4));
    for (unsigned i = 0; i < FILE_LEN / 4 / 4096; i++)
        foresight_pt_tick(c, 3);
    CHECK(wait_counter(&fs_global_pt_calls, before + FILE_LEN / 4 / 4096));
    CHECK_EQ(get(&fs_global_pt_calls), before + FILE_LEN / 4 / 4096);
    CHECK_EQ(get(&fs_global_pt_gave_up), 2);
    CHECK(__atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL);
    /* A descriptor the thread cannot reopen as a file: no handle. */
    CHECK(foresight_pt_adopt(a_fd, 0) == -1); /* (off the thread: EPERM) */
    CHECK_EQ(foresight_pt_offset(a_fd), FILE_LEN / 4);
    close(a_fd);
    unlink(path);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } scenarios[] = {
        {"start", scenario_start},         {"confine", scenario_confine},
        {"files", scenario_files},         {"window", scenario_window},
        {"idle", scenario_idle},
        {"expiry", scenario_expiry},       {"mispredict", scenario_mispredict},
        {"disabled", scenario_disabled},   {"fork", scenario_fork},
        {"exit_group", scenario_exit_group}, {"handles", scenario_handles},
        {"setxid", scenario_setxid},       {"written", scenario_written},
        {"readahead", scenario_readahead}, {"advice", scenario_advice},
        {"cpu", scenario_cpu},
        {"spin", scenario_spin},           {"eq1", scenario_eq1},
        {"writes", scenario_writes},       {"compute", scenario_compute},
        {"arena", scenario_arena},
        {"retire_once", scenario_retire_once}, {"retire_early", scenario_retire_early},
        {"anchor", scenario_anchor},
    };
    for (size_t i = 0; argc == 2 && i < sizeof scenarios / sizeof scenarios[0]; i++)
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            scenarios[i].fn();
            char name[64];
            snprintf(name, sizeof name, "pt %s", argv[1]);
            return check_done(name);
        }
    fprintf(stderr, "usage: test_pt start|confine|files|window|expiry|mispredict|disabled|"
                    "fork|exit_group|handles|setxid|written|readahead|advice|cpu|spin|eq1|writes|compute|"
                    "arena|retire_early|anchor\n");
    return 2;
}
