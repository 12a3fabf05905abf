/*
 * remote.c — prefetches of a file that an I/O node serves go to the node (paper 3,
 * issue 23).
 *
 * With FORESIGHT_NBD=URI and FORESIGHT_NBD_FILE=PATH, PATH is the local view of the NBD
 * export URI (an nbdfuse mount: `foresight cluster run` sets both).  A prefetch of pages
 * of a mapping of PATH that are not resident here is sent to the node as NBD_CMD_CACHE
 * (the protocol's nonbinding prefetch) for the same bytes of the export, instead of a
 * local MADV_WILLNEED: the node decides whether the prefetch is admitted, throttled or
 * kept from evicting pinned blocks, and the program's own read, when it comes, finds
 * the block in the node's cache.  A local prefetch would read the block through FUSE,
 * which the node could not tell from a demand read.  Releases stay local (the kernel's
 * reclaim of the page cache); nothing is ever trimmed, since NBD_CMD_TRIM discards data.
 *
 * Nothing here may hold the program up or change what it computes:
 *   - libnbd is opened with dlopen and the connection made by a thread of its own, so
 *     neither a missing library nor a server that does not answer delays the program's
 *     start.  Until the connection is up, prefetches of PATH are dropped (counted); if
 *     it cannot be made (no libnbd, no server, an export that cannot cache), one line
 *     on stderr says so and they are made locally from then on.
 *   - Requests go to the node only from the worker threads, which are detached and which
 *     the program never waits for (a prefetch made on the program's own thread,
 *     FORESIGHT_INLINE=all, may come from a signal handler, where libnbd's locks and
 *     allocations are not safe: it is dropped and counted).  A CACHE that fails (the
 *     node gone) is counted and dropped.
 *   - Which bytes a page is is read from /proc/self/maps at each request, not from the
 *     mapping cache, which a program that maps another window of a file at the same
 *     address would leave naming the old bytes.
 *   - The connection belongs to the process that made it: a forked child prefetches
 *     locally.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"

#define PIECE_BYTES (4u << 20) /* one CACHE request's most; a server may refuse more */

enum { OFF, CONNECTING, ON };

struct nbd_handle;

static struct {
    int state;
    pid_t pid;
    unsigned long dev[2], inode;
    uint64_t size;
    struct nbd_handle *h;
    int (*cache)(struct nbd_handle *, uint64_t, uint64_t, uint32_t);
    const char *(*error)(void);
} R;

unsigned long fs_global_remote_requests, fs_global_remote_bytes, fs_global_remote_failed,
    fs_global_remote_dropped;

static void give_up(const char *why, const char *detail)
{
    fprintf(stderr, "foresight: FORESIGHT_NBD=%s: %s%s%s; prefetches of %s stay local\n",
            fs_cfg.nbd_uri, why, detail ? ": " : "", detail ? detail : "", fs_cfg.nbd_file);
    __atomic_store_n(&R.state, OFF, __ATOMIC_RELEASE);
}

/* The connecting thread: libnbd loaded, the export connected and asked whether it
 * caches; then requests may go. */
static void *connect_main(void *arg)
{
    (void)arg;
    fs_thread_lock_stack();
    void *lib = dlopen("libnbd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        give_up("cannot load libnbd", dlerror());
        return NULL;
    }
    struct nbd_handle *(*create)(void) = (struct nbd_handle * (*)(void)) dlsym(lib, "nbd_create");
    int (*connect_uri)(struct nbd_handle *, const char *) =
        (int (*)(struct nbd_handle *, const char *))dlsym(lib, "nbd_connect_uri");
    int (*can_cache)(struct nbd_handle *) = (int (*)(struct nbd_handle *))dlsym(lib, "nbd_can_cache");
    int64_t (*get_size)(struct nbd_handle *) = (int64_t(*)(struct nbd_handle *))dlsym(lib, "nbd_get_size");
    void (*close_h)(struct nbd_handle *) = (void (*)(struct nbd_handle *))dlsym(lib, "nbd_close");
    R.cache = (int (*)(struct nbd_handle *, uint64_t, uint64_t, uint32_t))dlsym(lib, "nbd_cache");
    R.error = (const char *(*)(void))dlsym(lib, "nbd_get_error");
    if (!create || !connect_uri || !can_cache || !get_size || !close_h || !R.cache || !R.error) {
        give_up("libnbd lacks the calls needed", NULL);
        return NULL;
    }
    struct nbd_handle *h = create();
    if (h == NULL) {
        give_up("cannot create an NBD handle", R.error());
        return NULL;
    }
    if (connect_uri(h, fs_cfg.nbd_uri) == -1) {
        give_up("cannot connect", R.error());
        close_h(h);
        return NULL;
    }
    int64_t size = get_size(h);
    if (can_cache(h) != 1 || size < 0) {
        give_up("the export does not take NBD_CMD_CACHE", NULL);
        close_h(h);
        return NULL;
    }
    R.h = h;
    R.size = (uint64_t)size;
    __atomic_store_n(&R.state, ON, __ATOMIC_RELEASE);
    return NULL;
}

void fs_remote_init(void)
{
    if (fs_cfg.nbd_uri[0] == 0)
        return;
    struct stat st;
    if (fs_cfg.nbd_file[0] == 0 || stat(fs_cfg.nbd_file, &st) != 0) {
        give_up("FORESIGHT_NBD_FILE does not name an existing file", NULL);
        return;
    }
    R.dev[0] = major(st.st_dev);
    R.dev[1] = minor(st.st_dev);
    R.inode = (unsigned long)st.st_ino;
    R.pid = getpid();
    R.state = CONNECTING;
    if (!fs_thread_start(connect_main, NULL, "foresight-nbd"))
        give_up("cannot start the thread that connects", NULL);
}

/* PAGE is in a mapping of the served file, from this process, while the node is
 * connected or being connected to: its offset there, and the end of the mapping. */
static bool served(uintptr_t page, uint64_t *offset, uintptr_t *hi)
{
    if (__atomic_load_n(&R.state, __ATOMIC_ACQUIRE) == OFF || getpid() != R.pid)
        return false;
    unsigned long dev[2], inode;
    /* The cached answer first, which is cheap: only a file mapping on the served file's
     * device (an nbdfuse mount has that one file) is worth reading the maps afresh. */
    if (!fs_mapping_device(page, &dev[0], &dev[1]) || dev[0] != R.dev[0] || dev[1] != R.dev[1])
        return false;
    return fs_mapping_file(page, dev, &inode, offset, hi) && inode == R.inode &&
           dev[0] == R.dev[0] && dev[1] == R.dev[1];
}

bool fs_remote_covers(uintptr_t page)
{
    uint64_t offset;
    uintptr_t hi;
    return served(page, &offset, &hi);
}

size_t fs_remote_prefetch(uintptr_t page, size_t npages)
{
    uint64_t offset;
    uintptr_t hi;
    if (!served(page, &offset, &hi))
        return 0;
    if (npages > hi - page)
        npages = hi - page; /* the rest is another mapping's */
    if (!fs_in_worker || __atomic_load_n(&R.state, __ATOMIC_ACQUIRE) != ON) {
        __atomic_add_fetch(&fs_global_remote_dropped, 1, __ATOMIC_RELAXED);
        return npages;
    }
    uint64_t len = (uint64_t)npages << FORESIGHT_PAGE_SHIFT;
    if (offset >= R.size)
        return npages; /* past the export's end (a mapping may outrun its file): nothing */
    if (len > R.size - offset)
        len = R.size - offset;
    while (len > 0) {
        uint64_t n = len < PIECE_BYTES ? len : PIECE_BYTES;
        if (R.cache(R.h, n, offset, 0) == -1) {
            __atomic_add_fetch(&fs_global_remote_failed, 1, __ATOMIC_RELAXED);
        } else {
            __atomic_add_fetch(&fs_global_remote_requests, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&fs_global_remote_bytes, n, __ATOMIC_RELAXED);
        }
        offset += n;
        len -= n;
    }
    return npages;
}
