/*
 * pt_files.c — inform_open / inform_close and the prefetch library's file table (paper
 * Section 3.1): the prefetch thread's opens, shadow offsets and calls.
 *
 * A handle is the thread's own descriptor (its table is private: pt_thread.c), opened
 * read-only whatever the program asked, so a descriptor the program closes and reuses
 * never redirects a prediction.  Handles are 3 or more (a descriptor the kernel numbers
 * lower is moved up with F_DUPFD_CLOEXEC): the thread's table starts empty, so its first
 * open would be 0, and a slice reading "stdin" (fd 0, which the thread never opened) would
 * read that file; 0, 1, 2 and every number the thread did not open are EBADF.  Per handle:
 * device, inode and size (statx; the size is refreshed when a read reaches past it), the
 * shadow offset that the program's own descriptor will have, and whether its reads are
 * prefetched: a regular file of 2 MiB or more, or one whose path matches
 * FORESIGHT_PT_FILES (smaller files are the paper's configuration files, read once at
 * start).
 *
 * A predicted read (no buffer) transfers nothing: it returns what the program's read will
 * return — the bytes the file has at the offset, at most N — and queues that range
 * (pt_queue.c).  A lead read (a buffer of the thread's) reads the data, which the slice
 * needs to go on (an index, a header).  Each read or pread is one covered call, whatever
 * its outcome, as each of the program's is one tick.
 *
 * Read after write: the data a lead read gets is what the file holds when the thread reads
 * it, ahead of the program; if the program writes the file, that may not be what the
 * program will read.  So a file is *written* when the program opens it with O_WRONLY,
 * O_RDWR, O_CREAT, O_TRUNC or O_APPEND (the flags foresight_pt_open gets are the
 * program's), when another handle of the same (device, inode) was opened so, or when its
 * mtime or size changes between the thread's lead reads (statx before each): from then on
 * each of its lead reads by read, pread or fread waits until the program makes that same
 * call (pt_sched.c: every write the program makes before it is done), and its
 * fgets, getline and fscanf, which read a window ahead, fail with EIO; its predicted reads
 * go on without waiting (a prediction that is wrong costs a read, not a wrong result).
 *
 * Sequential forward predictions are left to the kernel's readahead, which serves them as
 * well without the thread's requests (1 GiB read forward in 4 KiB records: 1.53 s with
 * them, 1.32 s without the thread): per handle, once 32 predictions in a row each start
 * where the previous one ended, the following ones are not queued while that holds
 * (pt_left_to_readahead); any other prediction ends the run.  Backward and strided runs
 * are queued.
 *
 * System calls are made directly (syscall(2)): nothing here may allocate, and a sanitizer's
 * descriptor bookkeeping, which knows one table per process, must not see this thread's
 * descriptors as the program's.  Special files (FIFOs, terminals, devices) are opened
 * O_PATH only, never for reading, which could change what they do for the program (a
 * FIFO's readers, a terminal's control): their predicted reads return 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"

#define PREFETCHABLE_SIZE (2u << 20)  /* the paper's data files, by size */
#define FORWARD_RUN 32                /* predictions in a row left to readahead after */
#define WRITTEN_MAX 64                /* written files remembered (then: every file) */

struct pt_file {
    bool open;
    bool regular;
    bool matched;      /* the path matches FORESIGHT_PT_FILES */
    bool prefetchable;
    bool written;      /* the program writes it: lead reads wait for the program's */
    uint64_t dev, ino, size;
    struct statx_timestamp mtime; /* as described last */
    struct statx_timestamp lead_mtime; /* at the last lead read (or the open) */
    uint64_t lead_size;                /* the size then */
    uint64_t off;      /* the shadow offset */
    uint64_t next;     /* where the last prediction ended (UINT64_MAX: none yet) */
    unsigned run;      /* predictions in a row that started where the previous one ended */
    unsigned serial;   /* which open this is: a stream (pt_stdio.c) never survives a reuse */
    char *later;       /* a placeholder's path (arena), opened once it can be (open_later) */
    int later_flags;   /* the program's flags for it */
};
static struct pt_file files[FS_PT_FILES]; /* a private table: handles from 3 */
static unsigned opens;                    /* opens so far: the next serial */
static struct {
    uint64_t dev, ino;
} written[WRITTEN_MAX];                   /* files the program opened for writing */
static unsigned nwritten;
static bool written_all;                  /* more than WRITTEN_MAX: every file is */

#define CREATED_MAX 16                /* paths of files the program creates */
static char *created[CREATED_MAX];    /* (arena copies) placeholders' paths */
static unsigned ncreated;

static bool is_created(const char *path)
{
    for (unsigned i = 0; i < ncreated; i++)
        if (strcmp(created[i], path) == 0)
            return true;
    return false;
}

static bool describe(int fd, struct pt_file *f)
{
    struct statx stx;
    if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH,
                STATX_TYPE | STATX_INO | STATX_SIZE | STATX_MTIME, &stx) != 0)
        return false;
    f->regular = S_ISREG(stx.stx_mode);
    f->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
    f->ino = stx.stx_ino;
    f->size = f->regular ? stx.stx_size : 0;
    f->mtime = stx.stx_mtime;
    f->prefetchable = f->regular && (f->size >= PREFETCHABLE_SIZE || f->matched);
    if (f->prefetchable)
        fs_pt_sched_device(stx.stx_dev_major, stx.stx_dev_minor);
    return true;
}

static void close_quietly(int fd)
{
    int e = errno;
    syscall(SYS_close, fd);
    errno = e;
}

static void open_later(int h);

/* Handle H's entry, a placeholder replaced by its file first if that can be opened now;
 * NULL and EBADF for no handle. */
static struct pt_file *handle(int h)
{
    if (h < FS_PT_FIRST_HANDLE || h >= FS_PT_FILES || !files[h].open) {
        errno = EBADF;
        return NULL;
    }
    if (files[h].later != NULL)
        open_later(h);
    return &files[h];
}

static bool is_written(uint64_t dev, uint64_t ino)
{
    for (unsigned i = 0; i < nwritten; i++)
        if (written[i].dev == dev && written[i].ino == ino)
            return true;
    return written_all;
}

/* The program writes (DEV, INO): its open handles and later opens are written. */
static void mark_written(uint64_t dev, uint64_t ino)
{
    if (!is_written(dev, ino)) {
        if (nwritten < WRITTEN_MAX) {
            written[nwritten].dev = dev;
            written[nwritten].ino = ino;
            nwritten++;
        } else {
            written_all = true;
        }
    }
    for (int h = FS_PT_FIRST_HANDLE; h < FS_PT_FILES; h++)
        if (files[h].open && files[h].dev == dev && files[h].ino == ino)
            files[h].written = true;
}

static int open_file(const char *path, int flags);

static int placeholder(const char *path, int flags);

int foresight__pt_open(const char *path, int flags, unsigned site)
{
    (void)site;
    if (!fs_pt_self) {
        errno = EPERM;
        return -1;
    }
    /* A path a placeholder stood for is a file the program creates and writes, whether
     * or not it is there by this open (its writes may still be to come). */
    if (is_created(path))
        flags |= O_CREAT;
    int h = open_file(path, flags);
    if (h < 0 && (flags & (O_WRONLY | O_RDWR | O_CREAT)) && (errno == ENOENT || errno == EACCES))
        h = placeholder(path, flags);
    const int e = errno;
    fs_pt_outcome(h >= 0);
    errno = e;
    return h;
}

static int open_file(const char *path, int flags);

/* A file the program opens to write but the thread cannot open to read: one the program
 * creates (it is not there yet: the thread runs ahead of the program's open) or may only
 * write.  The program's open will most likely succeed, so the thread's does too: a handle
 * on /dev/null (O_PATH), which reads nothing, predicts nothing and takes the program's
 * writes (foresight_pt_write) as the file would, until the file can be opened (open_later):
 * each use of the handle tries again (until the file is there), and a lead read, which
 * waits for the program's own call (the file is written), finds it there once the program
 * has created it.  The path is remembered (CREATED_MAX of them): a later open of it,
 * read-only too, is of the file the program creates and writes, there yet or not
 * (written, so its lead reads wait for the program's). */
static int placeholder(const char *path, int flags)
{
    const int h = open_file("/dev/null", O_WRONLY);
    if (h < 0)
        return h;
    const size_t n = strlen(path) + 1;
    files[h].later = foresight__pt_malloc(n);
    if (files[h].later != NULL) {
        memcpy(files[h].later, path, n);
        if (ncreated < CREATED_MAX && !is_created(path)) {
            created[ncreated] = foresight__pt_malloc(n);
            if (created[ncreated] != NULL)
                memcpy(created[ncreated++], path, n);
        }
    }
    files[h].later_flags = flags;
    errno = 0;
    return h;
}

/* Placeholder H becomes the file it stands for, if that can be opened now: the same
 * handle number (dup3), its offset (the program's writes moved it) and serial kept. */
static void open_later(int h)
{
    const int e = errno;
    const int real = open_file(files[h].later, files[h].later_flags);
    if (real < 0 && errno != ENOENT) { /* there, but not for the thread: no more tries */
        foresight__pt_free(files[h].later);
        files[h].later = NULL;
    }
    if (real >= 0) {
        struct pt_file f = files[real];
        files[real].open = false;
        const bool moved = syscall(SYS_dup3, real, h, O_CLOEXEC) == h;
        close_quietly(real);
        if (moved) {
            f.off = files[h].off;
            f.serial = files[h].serial;
            foresight__pt_free(files[h].later);
            files[h] = f;
        }
    }
    errno = e;
}

long foresight__pt_write(int h, size_t n)
{
    const int e = errno;
    struct pt_file *f = handle(h);
    if (f != NULL) /* the program's write moves the offset both share */
        f->off += n;
    errno = e;
    return (long)n;
}

static int open_file(const char *path, int flags)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_PATH | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct pt_file f = {.open = true, .next = UINT64_MAX};
    f.matched = fs_cfg.pt_files[0] != 0 && fs_pt_glob(fs_cfg.pt_files, path);
    if (!describe(fd, &f)) {
        close_quietly(fd);
        return -1;
    }
    if (f.regular) {
        /* Now for reading (and failing as the program's open would: no permission).  The
         * thread only reads, whatever FLAGS say. */
        close_quietly(fd);
        fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
                          0);
        if (fd < 0)
            return -1;
        if (!describe(fd, &f)) { /* replaced in between: describe what was opened */
            close_quietly(fd);
            return -1;
        }
    }
    if (fd < FS_PT_FIRST_HANDLE) {
        const int up = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, FS_PT_FIRST_HANDLE);
        close_quietly(fd);
        if (up < 0)
            return -1;
        fd = up;
    }
    if (fd >= FS_PT_FILES) {
        close_quietly(fd);
        errno = EMFILE;
        return -1;
    }
    if (++opens == 0) /* 0 is no open's */
        opens = 1;
    f.serial = opens;
    f.lead_mtime = f.mtime;
    f.lead_size = f.size;
    if (flags & FS_PT_WRITE_FLAGS)
        mark_written(f.dev, f.ino);
    f.written = is_written(f.dev, f.ino);
    files[fd] = f;
    return fd;
}

int foresight__pt_adopt(int fd, int64_t offset)
{
    if (!fs_pt_self) {
        errno = EPERM;
        return -1;
    }
    const pid_t tid = fs_pt_anchor_tid();
    if (fd < 0 || tid <= 0) {
        errno = EBADF;
        return -1;
    }
    /* The anchoring thread's table, which is the program's (this thread's is its own). */
    char proc[64], name[4096];
    char *p = proc;
    __builtin_memcpy(p, "/proc/self/task/", 16);
    p = fs_put_decimal(p + 16, (unsigned long)tid);
    __builtin_memcpy(p, "/fd/", 4);
    *fs_put_decimal(p + 4, (unsigned long)fd) = 0;
    const int h = open_file(proc, O_RDONLY);
    if (h < 0)
        return -1;
    const long n = syscall(SYS_readlinkat, AT_FDCWD, proc, name, sizeof name - 1);
    if (n > 0 && fs_cfg.pt_files[0] != 0) { /* FORESIGHT_PT_FILES matches the file's name */
        name[n] = 0;
        files[h].matched = fs_pt_glob(fs_cfg.pt_files, name);
        files[h].prefetchable = files[h].regular &&
                                (files[h].size >= PREFETCHABLE_SIZE || files[h].matched);
    }
    files[h].off = offset > 0 ? (uint64_t)offset : 0;
    return h;
}

void fs_pt_files_reset(void)
{
    for (int h = FS_PT_FIRST_HANDLE; h < FS_PT_FILES; h++)
        if (files[h].open) {
            fs_pt_flush(h);
            files[h].open = false;
            files[h].later = NULL; /* (the arena's: released with it) */
            close_quietly(h);
        }
    ncreated = 0;
}

unsigned fs_pt_serial(int h)
{
    return h >= FS_PT_FIRST_HANDLE && h < FS_PT_FILES && files[h].open ? files[h].serial : 0;
}

uint64_t *fs_pt_shadow(int h, unsigned serial)
{
    if (h < FS_PT_FIRST_HANDLE || h >= FS_PT_FILES || !files[h].open || files[h].serial != serial)
        return NULL;
    return &files[h].off;
}

bool fs_pt_written(int h)
{
    return h >= FS_PT_FIRST_HANDLE && h < FS_PT_FILES && files[h].written;
}

bool fs_pt_lead_ok(int h)
{
    struct pt_file *f = handle(h);
    if (f == NULL)
        return false;
    if (!f->written && f->regular) {
        if (!describe(h, f) || f->mtime.tv_sec != f->lead_mtime.tv_sec ||
            f->mtime.tv_nsec != f->lead_mtime.tv_nsec || f->size != f->lead_size)
            mark_written(f->dev, f->ino);
        f->lead_mtime = f->mtime;
        f->lead_size = f->size;
    }
    if (f->written) {
        errno = EIO;
        return false;
    }
    return true;
}

/* Whether call ID may read H's data now: at once where the program does not write the
 * file, else once the program has made the same call (read after write, pt_sched.c);
 * false, errno EIO, where that call came from another site.  errno is left alone
 * otherwise. */
bool fs_pt_lead_now(int h, uint64_t id)
{
    const int e = errno;
    if (fs_pt_lead_ok(h)) {
        errno = e;
        return true;
    }
    if (!fs_pt_wait_for_program(id)) {
        errno = EIO;
        return false;
    }
    handle(h); /* a placeholder: the program has made its open by now */
    errno = e;
    return true;
}

static int64_t seek(int h, int64_t off, int whence);

int64_t foresight__pt_lseek(int h, int64_t off, int whence, unsigned site)
{
    (void)site;
    if (!fs_pt_self) {
        errno = EPERM;
        return -1;
    }
    const int64_t to = seek(h, off, whence);
    if (to < 0) {
        const int e = errno;
        fs_pt_outcome(false);
        errno = e;
    }
    return to;
}

static int64_t seek(int h, int64_t off, int whence)
{
    struct pt_file *f = handle(h);
    if (f == NULL)
        return -1;
    int64_t base;
    switch (whence) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = (int64_t)f->off; break;
    case SEEK_END:
        if (!describe(h, f))
            return -1;
        base = (int64_t)f->size;
        break;
    default: errno = EINVAL; return -1;
    }
    int64_t to;
    if (__builtin_add_overflow(base, off, &to)) {
        errno = EOVERFLOW;
        return -1;
    }
    if (to < 0) {
        errno = EINVAL;
        return -1;
    }
    f->off = (uint64_t)to;
    return to;
}

/* The bytes F (handle H) has at OFF, at most N: its size looked at again when a read of N
 * there would reach past it (the file may have grown). */
static uint64_t avail(struct pt_file *f, int h, uint64_t off, uint64_t n)
{
    if (!f->regular)
        return 0;
    if (off + n > f->size || off + n < off)
        describe(h, f);
    const uint64_t left = off < f->size ? f->size - off : 0;
    return n < left ? n : left;
}

uint64_t fs_pt_avail(int h, uint64_t off)
{
    struct pt_file *f = handle(h);
    return f == NULL ? 0 : avail(f, h, off, 1);
}

/* A predicted read of N bytes at OFF, call ID: what the program's read will return. */
static long predicted(struct pt_file *f, int h, size_t n, uint64_t off, uint64_t id)
{
    const uint64_t r = avail(f, h, off, n);
    if (r > 0 && f->prefetchable) {
        f->run = off == f->next ? f->run + 1 : 0;
        f->next = off + r;
        if (f->run > FORWARD_RUN)
            __atomic_fetch_add(&fs_global_pt_left_to_readahead, 1, __ATOMIC_RELAXED);
        else
            fs_pt_enqueue(h, off, r, id);
    }
    return (long)r;
}

uint64_t fs_pt_predict(int h, uint64_t off, uint64_t n, uint64_t call)
{
    struct pt_file *f = handle(h);
    if (f == NULL)
        return 0;
    return (uint64_t)predicted(f, h, n < (uint64_t)INT64_MAX ? n : (uint64_t)INT64_MAX, off, call);
}

/* One covered call: a read of N bytes at OFF into BUF (NULL: predicted). */
static long call(int h, void *buf, size_t n, int64_t off, bool at, unsigned site)
{
    if (!fs_pt_self) {
        errno = EPERM;
        return -1;
    }
    const uint64_t id = fs_pt_call(site);
    struct pt_file *f = handle(h);
    long r;
    if (f == NULL) {
        r = -1;
    } else if (at && off < 0) {
        errno = EINVAL;
        r = -1;
    } else {
        const uint64_t where = at ? (uint64_t)off : f->off;
        if (n > (size_t)INT64_MAX)
            n = (size_t)INT64_MAX;
        if (buf == NULL) {
            r = predicted(f, h, n, where, id);
        } else if (!fs_pt_lead_now(h, id)) {
            r = -1; /* EIO: the program writes the file, and the thread went astray */
        } else {
            r = syscall(SYS_pread64, h, buf, n, (off_t)where);
            __atomic_fetch_add(&fs_global_pt_lead_reads, 1, __ATOMIC_RELAXED);
            if (r > 0)
                __atomic_fetch_add(&fs_global_pt_lead_bytes, (unsigned long)r, __ATOMIC_RELAXED);
        }
        if (r > 0 && !at)
            f->off += (uint64_t)r;
    }
    const int e = errno;
    fs_pt_outcome(r > 0 || (r == 0 && n == 0));
    fs_pt_pace();
    errno = e;
    return r;
}

long foresight__pt_read(int h, void *buf, size_t n, unsigned site)
{
    if (fs_pt_self && h == 0) {
        /* The program's standard input (the thread's handles are 3 and up): its bytes,
         * from the channel (foresight_pt_fd_read). */
        fs_pt_call(site);
        long r = -1;
        foresight__pt_receive(site | FORESIGHT_PT_STDIN_SITE, &r, sizeof r, buf,
                              buf != NULL ? n : 0);
        fs_pt_outcome(r > 0);
        return r;
    }
    return call(h, buf, n, 0, false, site);
}

long foresight__pt_pread(int h, void *buf, size_t n, int64_t off, unsigned site)
{
    return call(h, buf, n, off, true, site);
}

int foresight__pt_fstat(int h, void *st)
{
    if (!fs_pt_self) {
        errno = EPERM;
        return -1;
    }
    if (handle(h) == NULL)
        return -1;
#ifdef SYS_fstat
    return (int)syscall(SYS_fstat, h, st);
#else
    return (int)syscall(SYS_newfstatat, h, "", st, AT_EMPTY_PATH);
#endif
}

int foresight__pt_close(int h, unsigned site)
{
    (void)site;
    if (!fs_pt_self) {
        errno = EPERM;
        return -1;
    }
    if (handle(h) == NULL)
        return -1;
    fs_pt_flush(h);
    files[h].open = false;
    foresight__pt_free(files[h].later);
    files[h].later = NULL;
    const long r = syscall(SYS_close, h);
    const int e = errno;
    fs_pt_check_sites();
    errno = e;
    return r == 0 ? 0 : -1;
}

/* One pattern element at *P against C: true if it matches; *P moves past it. */
static bool match_one(const char **pp, unsigned char c)
{
    const char *p = *pp;
    if (*p == '?') {
        *pp = p + 1;
        return true;
    }
    if (*p == '[') {
        const char *q = p + 1;
        const bool negate = *q == '!' || *q == '^';
        if (negate)
            q++;
        bool hit = false;
        for (bool first = true; *q != 0 && (*q != ']' || first); first = false) {
            unsigned char lo = (unsigned char)*q++;
            if (lo == '\\' && *q != 0)
                lo = (unsigned char)*q++;
            unsigned char hi = lo;
            if (*q == '-' && q[1] != ']' && q[1] != 0) {
                q++;
                hi = (unsigned char)*q++;
                if (hi == '\\' && *q != 0)
                    hi = (unsigned char)*q++;
            }
            if (lo <= c && c <= hi)
                hit = true;
        }
        if (*q == ']') { /* a whole bracket expression */
            *pp = q + 1;
            return hit != negate;
        }
        /* no closing ']': a literal '[' */
    }
    if (*p == '\\' && p[1] != 0)
        p++;
    *pp = p + 1;
    return (unsigned char)*p == c;
}

bool fs_pt_glob(const char *p, const char *s)
{
    const char *star_p = NULL, *star_s = NULL;
    for (;;) {
        if (*p == '*') {
            star_p = ++p;
            star_s = s;
            continue;
        }
        if (*s == 0)
            return *p == 0;
        if (*p != 0 && match_one(&p, (unsigned char)*s)) {
            s++;
            continue;
        }
        if (star_p == NULL)
            return false;
        p = star_p; /* the last '*' takes one more character */
        s = ++star_s;
    }
}
