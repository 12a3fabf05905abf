/* Shared scaffolding of the out-of-core NAS-style kernels (`foresight bench nas`).
 *
 * Plain C with no hints: the kernels are "unmodified programs" that foresight cc
 * transforms.  Everything a kernel shares lives here: the command line, where the
 * main arrays live (ordinary memory paged to swap, or files mapped MAP_SHARED),
 * phase timers, the NPB-style random number generator and the verdict.
 *
 * Contract with the harness (src/foresight/bench/nas.py):
 *   kernel [--mb N] [--iters K] [--backing anon|file] [--data-dir DIR]
 *   stdout: deterministic result lines only (checksums, residuals), identical with
 *           and without hints, ending with "verification SUCCESSFUL" or
 *           "verification FAILED ...".
 *   stderr: "array NAME BYTES ADDRESS" per main array (the harness matches
 *           faulting pages between runs by array name and offset), "phase NAME SECONDS" per phase,
 *           "footprint BYTES" once, all measured, never compared between runs.
 *   exit:   0 verified, 1 verification failed, 2 bad arguments or no memory.
 */
#ifndef NAS_COMMON_H
#define NAS_COMMON_H
/* POSIX interfaces (clock_gettime, ftruncate) also under -std=c11; include this header
 * before any system header. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct nas_args {
    size_t mb;            /* approximate total size of the main arrays, MiB */
    int iters;            /* iterations / time steps; kernel default when 0 */
    int file_backed;      /* --backing file */
    const char *data_dir; /* where --backing file creates (and unlinks) its files */
};

static struct {
    size_t footprint;
    const char *phase;
    double phase_start;
} nas_state;

static inline double nas_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline void nas_usage(const char *prog, const char *problem)
{
    fprintf(stderr, "%s: %s\nusage: %s [--mb N] [--iters K] [--backing anon|file] "
            "[--data-dir DIR]\n", prog, problem, prog);
    exit(2);
}

static inline long nas_number(const char *prog, const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s wants an integer from %ld to %ld, not '%s'\n",
                prog, opt, lo, hi, s);
        exit(2);
    }
    return v;
}

/* Parse the common options; DEFAULT_MB and DEFAULT_ITERS are the kernel's own. */
static inline struct nas_args nas_parse(int argc, char **argv, size_t default_mb,
                                        int default_iters)
{
    struct nas_args a = { default_mb, default_iters, 0, NULL };
    const char *prog = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (i + 1 >= argc)
            nas_usage(prog, "every option takes a value");
        const char *v = argv[++i];
        if (!strcmp(o, "--mb"))
            a.mb = (size_t)nas_number(prog, o, v, 1, 1L << 22);
        else if (!strcmp(o, "--iters"))
            a.iters = (int)nas_number(prog, o, v, 1, 1L << 20);
        else if (!strcmp(o, "--backing")) {
            if (strcmp(v, "anon") && strcmp(v, "file"))
                nas_usage(prog, "--backing is anon or file");
            a.file_backed = !strcmp(v, "file");
        } else if (!strcmp(o, "--data-dir"))
            a.data_dir = v;
        else
            nas_usage(prog, "unknown option");
    }
    if (!a.data_dir) {
        const char *t = getenv("TMPDIR");
        a.data_dir = t && *t ? t : "/var/tmp";
    }
    return a;
}

/* A main array of BYTES bytes named NAME: malloc'd memory (paged to swap out of
 * core) or, with --backing file, a MAP_SHARED mapping of a fresh file that is
 * unlinked at once so no run leaves data behind.  Contents are undefined (the
 * kernel initializes them).  Exits with status 2 when the memory is not there.
 * Arrays live until the process exits (exit gives them back). */
static inline void *nas_array(const struct nas_args *a, const char *name, size_t bytes)
{
    void *p;
    if (bytes == 0)
        bytes = 1;
    if (a->file_backed) {
        char path[4096];
        snprintf(path, sizeof path, "%s/foresight-nas-%ld-%s.dat", a->data_dir,
                 (long)getpid(), name);
        int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0) {
            fprintf(stderr, "nas: cannot create %s: %s\n", path, strerror(errno));
            exit(2);
        }
        unlink(path);
        if (ftruncate(fd, (off_t)bytes) != 0) {
            fprintf(stderr, "nas: cannot size %s: %s\n", path, strerror(errno));
            exit(2);
        }
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) {
            fprintf(stderr, "nas: cannot map %s: %s\n", path, strerror(errno));
            exit(2);
        }
    } else {
        p = malloc(bytes);
        if (!p) {
            fprintf(stderr, "nas: cannot allocate %zu bytes for %s\n", bytes, name);
            exit(2);
        }
    }
    nas_state.footprint += bytes;
    fprintf(stderr, "array %s %zu %p\n", name, bytes, p);
    return p;
}

/* Phase timers: nas_phase("rank") ends the running phase and starts the next;
 * nas_phase(NULL) only ends it.  Times go to stderr. */
static inline void nas_phase(const char *name)
{
    double t = nas_now();
    if (nas_state.phase)
        fprintf(stderr, "phase %s %.6f\n", nas_state.phase, t - nas_state.phase_start);
    nas_state.phase = name;
    nas_state.phase_start = t;
}

/* The NPB pseudo-random generator: x(k+1) = a * x(k) mod 2^46, returned scaled
 * into (0, 1).  Exact in 64-bit integers (the published generator does the same
 * product in split doubles). */
#define NAS_RAND_A 1220703125ULL /* 5^13 */
#define NAS_RAND_SEED 314159265ULL

static inline double nas_randlc(uint64_t *x, uint64_t a)
{
    const uint64_t mask = (1ULL << 46) - 1;
    *x = (uint64_t)(((unsigned __int128)a * *x) & mask);
    return (double)*x * (1.0 / (double)(1ULL << 46));
}

/* a^n mod 2^46, to jump a generator ahead by n steps. */
static inline uint64_t nas_rand_power(uint64_t a, uint64_t n)
{
    const uint64_t mask = (1ULL << 46) - 1;
    uint64_t r = 1;
    while (n) {
        if (n & 1)
            r = (uint64_t)(((unsigned __int128)r * a) & mask);
        a = (uint64_t)(((unsigned __int128)a * a) & mask);
        n >>= 1;
    }
    return r;
}

/* Print the verdict (after the kernel's own result lines) and return the exit
 * status main() should return. */
static inline int nas_verdict(int verified, const char *fmt, ...)
{
    nas_phase(NULL);
    fprintf(stderr, "footprint %zu\n", nas_state.footprint);
    if (verified) {
        printf("verification SUCCESSFUL\n");
    } else {
        va_list ap;
        printf("verification FAILED ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
    fflush(stdout);
    return verified ? 0 : 1;
}
#endif
