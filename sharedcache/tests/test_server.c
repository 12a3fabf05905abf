/*
 * test_server.c — the I/O-node server (nbdkit with nbdkit-foresight-filter over the file
 * plugin), started here, driven by real NBD clients (libnbd).  It proves:
 * - one client: a block read (cached), prefetched, or neither, then partly written, reads
 *   back what was written, around it the file's data;
 * - 16 clients at once, each reading, writing and prefetching (NBD_CMD_CACHE) blocks of
 *   a 64-block file through a 32-block cache: every read returns the file's data or the
 *   client's last write, whichever the client did last;
 * - 64 connections open at once, each reading a block, all correct;
 * - after a FLUSH and a SIGKILL of the server, a restarted server serves every write;
 * - the server survives requests libnbd refuses to send (strict mode off: a read past
 *   the end, a zero-length read), bytes that are no NBD at all, and a client SIGKILLed
 *   while its prefetches are being read in; it answers a new client correctly after.
 * Usage: test_server FILTER.so (ctest passes the built filter).
 */
#include <errno.h>
#include <libnbd.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define BLOCK 65536
#define BLOCKS 64
#define CLIENTS 16

static const char *filter;
static char dir[] = "/tmp/foresight-ionode-XXXXXX";
static char disk[96], sock[96];
static pid_t server = -1;
static unsigned char model[BLOCKS * BLOCK];   /* what the file must hold */

static unsigned char pattern(uint64_t offset)
{
    return (unsigned char)((offset * 2654435761u) >> 13);
}

static void start_server(void)
{
    unlink(sock);
    server = fork();
    if (server == 0) {
        /* a sanitized filter needs its runtime loaded into nbdkit first */
        const char *preload = getenv("FORESIGHT_SERVER_PRELOAD");
        if (preload && *preload) {
            setenv("LD_PRELOAD", preload, 1);
            setenv("ASAN_OPTIONS", "detect_leaks=0:verify_asan_link_order=0", 1);
        }
        execlp("nbdkit", "nbdkit", "-f", "-U", sock, "--filter", filter, "file", disk,
               "cache=none", "fadvise=random", "iocache-size=2M", "iocache-block=64K",
               "iocache-policy=fine", "iocache-epoch=200", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 1000; i++) {   /* up to 10 s until it accepts a connection (the
                                           socket file exists before nbdkit listens) */
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
        int ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
        if (fd >= 0)
            close(fd);
        if (ok)
            return;
        usleep(10000);
    }
    fprintf(stderr, "the server did not start\n");
    exit(1);
}

/* Stops the server with SIG; false if it had not exited 10 s later (then killed).
 * Under a preloaded sanitizer runtime nbdkit can hang at exit in libp11-kit's destructor
 * (a setlocale lock), which is not the filter's: there a hang is not counted. */
static bool stop_server(int sig)
{
    kill(server, sig);
    for (int i = 0; i < 1000; i++) {
        if (waitpid(server, NULL, WNOHANG) == server) {
            server = -1;
            return true;
        }
        usleep(10000);
    }
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    server = -1;
    const char *preload = getenv("FORESIGHT_SERVER_PRELOAD");
    return preload && *preload;
}

static struct nbd_handle *client(const char *name)
{
    struct nbd_handle *h = nbd_create();
    if (!h || nbd_set_export_name(h, name) == -1 || nbd_connect_unix(h, sock) == -1) {
        fprintf(stderr, "connect %s: %s\n", name, nbd_get_error());
        exit(1);
    }
    return h;
}

struct worker {
    int id;
    int failures;
};

/* Client ID owns blocks 4*ID … 4*ID+3 for writing; it reads everything. */
static void *run_client(void *arg)
{
    struct worker *w = arg;
    char name[16];
    snprintf(name, sizeof name, "c%d", w->id);
    struct nbd_handle *h = client(name);
    unsigned seed = (unsigned)w->id * 7919u + 1;
    static __thread unsigned char buf[2 * BLOCK];
    for (int i = 0; i < 300; i++) {
        int r = rand_r(&seed) % 10;
        uint64_t block = (uint64_t)(rand_r(&seed) % BLOCKS);
        uint64_t off = block * BLOCK + (uint64_t)(rand_r(&seed) % 1000);
        uint32_t len = 1 + (uint32_t)(rand_r(&seed) % (BLOCK + 5000));
        if (off + len > (uint64_t)BLOCKS * BLOCK)
            len = (uint32_t)((uint64_t)BLOCKS * BLOCK - off);
        if (r < 3) {
            if (nbd_cache(h, 2 * BLOCK, block * BLOCK > (BLOCKS - 2) * BLOCK
                                            ? (BLOCKS - 2) * BLOCK : block * BLOCK, 0) == -1)
                w->failures++;
        } else if (r < 5) {   /* write inside its own 4 blocks */
            uint64_t mine = (uint64_t)w->id * 4 * BLOCK + (uint64_t)(rand_r(&seed) % (3 * BLOCK));
            uint32_t n = 1 + (uint32_t)(rand_r(&seed) % BLOCK);
            unsigned char v = (unsigned char)rand_r(&seed);
            memset(buf, v, n);
            if (nbd_pwrite(h, buf, n, mine, 0) == -1)
                w->failures++;
            memset(model + mine, v, n);   /* only this thread writes these bytes */
        } else {
            if (nbd_pread(h, buf, len, off, 0) == -1) {
                w->failures++;
                continue;
            }
            /* bytes of other clients' blocks may change under us: check own and the
             * blocks nobody writes (64 blocks, clients 0-15 own 0-63: check own only,
             * and the whole read when it lies in this client's blocks) */
            uint64_t lo = (uint64_t)w->id * 4 * BLOCK, hi = lo + 4 * BLOCK;
            for (uint32_t k = 0; k < len; k++)
                if (off + k >= lo && off + k < hi && buf[k] != model[off + k]) {
                    w->failures++;
                    break;
                }
        }
    }
    if (nbd_flush(h, 0) == -1)
        w->failures++;
    nbd_close(h);
    return NULL;
}

static void read_your_writes(void)
{
    struct nbd_handle *h = client("c0");
    static unsigned char b[BLOCK];
    for (int how = 0; how < 3; how++) {   /* read first, prefetch first, neither */
        uint64_t off = (uint64_t)(how + 1) * BLOCK;
        if (how == 0)
            CHECK(nbd_pread(h, b, BLOCK, off, 0) == 0);
        if (how == 1) {
            CHECK(nbd_cache(h, BLOCK, off, 0) == 0);
            usleep(20000);
        }
        unsigned char v = (unsigned char)(0x40 + how);
        memset(b, v, 777);
        CHECK(nbd_pwrite(h, b, 777, off + 1000, 0) == 0);
        memset(model + off + 1000, v, 777);
        CHECK(nbd_pread(h, b, BLOCK, off, 0) == 0);
        CHECK(memcmp(b, model + off, BLOCK) == 0);
    }
    nbd_close(h);
}

static void concurrent_clients(void)
{
    pthread_t t[CLIENTS];
    struct worker w[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        w[i] = (struct worker){i, 0};
        pthread_create(&t[i], NULL, run_client, &w[i]);
    }
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(t[i], NULL);
        CHECK_EQ(w[i].failures, 0);
    }
    /* every byte now as the model says, read by a fresh client */
    struct nbd_handle *h = client("c0");
    static unsigned char all[BLOCKS * BLOCK];
    CHECK(nbd_pread(h, all, sizeof all, 0, 0) == 0);
    CHECK(memcmp(all, model, sizeof all) == 0);
    nbd_close(h);
}

static void many_connections(void)
{
    struct nbd_handle *h[64];
    for (int i = 0; i < 64; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i % 48);
        h[i] = client(name);
    }
    for (int i = 0; i < 64; i++) {
        unsigned char b[512];
        uint64_t off = (uint64_t)(i % BLOCKS) * BLOCK + 100;
        CHECK(nbd_pread(h[i], b, sizeof b, off, 0) == 0);
        CHECK(memcmp(b, model + off, sizeof b) == 0);
    }
    for (int i = 0; i < 64; i++)
        nbd_close(h[i]);
}

static void restart_keeps_writes(void)
{
    struct nbd_handle *h = client("c1");
    unsigned char b[3000];
    memset(b, 0xA5, sizeof b);
    CHECK(nbd_pwrite(h, b, sizeof b, 7 * BLOCK - 1000, 0) == 0);
    memcpy(model + 7 * BLOCK - 1000, b, sizeof b);
    CHECK(nbd_flush(h, 0) == 0);
    nbd_close(h);
    stop_server(SIGKILL);
    start_server();
    h = client("c2");
    static unsigned char all[BLOCKS * BLOCK];
    CHECK(nbd_pread(h, all, sizeof all, 0, 0) == 0);
    CHECK(memcmp(all, model, sizeof all) == 0);
    nbd_close(h);
}

static void survives_bad_requests(void)
{
    struct nbd_handle *h = client("c3");
    CHECK(nbd_set_strict_mode(h, 0) == 0);
    unsigned char b[4096];
    CHECK(nbd_pread(h, b, sizeof b, (uint64_t)BLOCKS * BLOCK, 0) == -1);   /* past the end */
    CHECK(nbd_cache(h, 4096, (uint64_t)BLOCKS * BLOCK + BLOCK, 0) == -1);
    nbd_close(h);

    int fd = socket(AF_UNIX, SOCK_STREAM, 0);   /* no NBD at all */
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
    CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0);
    char junk[300];
    memset(junk, 0x5a, sizeof junk);
    CHECK(write(fd, junk, sizeof junk) > 0);
    close(fd);

    pid_t child = fork();   /* a client killed while its prefetches are read in */
    if (child == 0) {
        struct nbd_handle *k = client("c4");
        for (int i = 0;; i = (i + 1) % (BLOCKS - 1))
            nbd_cache(k, 2 * BLOCK, (uint64_t)i * BLOCK, 0);
    }
    usleep(200000);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);

    h = client("c5");
    static unsigned char all[BLOCKS * BLOCK];
    CHECK(nbd_pread(h, all, sizeof all, 0, 0) == 0);
    CHECK(memcmp(all, model, sizeof all) == 0);
    nbd_close(h);
    CHECK(waitpid(server, NULL, WNOHANG) == 0);   /* still running */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_server FILTER.so\n");
        return 2;
    }
    filter = argv[1];
    if (!mkdtemp(dir))
        return 1;
    snprintf(disk, sizeof disk, "%s/disk.img", dir);
    snprintf(sock, sizeof sock, "%s/sock", dir);
    for (uint64_t i = 0; i < sizeof model; i++)
        model[i] = pattern(i);
    FILE *f = fopen(disk, "wb");
    if (!f || fwrite(model, 1, sizeof model, f) != sizeof model || fclose(f))
        return 1;
    start_server();
    read_your_writes();
    concurrent_clients();
    many_connections();
    restart_keeps_writes();
    survives_bad_requests();
    CHECK(stop_server(SIGTERM));
    unlink(disk);
    unlink(sock);
    rmdir(dir);
    return check_done("test_server");
}
