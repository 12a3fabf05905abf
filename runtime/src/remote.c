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
 * libnbd is opened with dlopen, so the runtime has no link-time dependency on it: no
 * libnbd, no server, a refused connection or an export that cannot cache leaves every
 * prefetch local, with one line on stderr.  A failed CACHE is counted and dropped.  The
 * connection belongs to the process that opened it: a forked child prefetches locally.
 * Requests go from the worker threads (FORESIGHT_INLINE=none, the default); libnbd's
 * handle takes its own lock, and the node replies to CACHE at once.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"

#define PIECE_BYTES (4u << 20) /* one CACHE request's most; a server may refuse more */

struct nbd_handle;

static struct {
    bool on;
    pid_t pid;
    unsigned long dev[2], inode;
    uint64_t size;
    struct nbd_handle *h;
    int (*cache)(struct nbd_handle *, uint64_t, uint64_t, uint32_t);
    const char *(*error)(void);
} R;

unsigned long fs_global_remote_requests, fs_global_remote_bytes, fs_global_remote_failed;

static void give_up(const char *why, const char *detail)
{
    fprintf(stderr, "foresight: FORESIGHT_NBD=%s: %s%s%s; prefetches of %s stay local\n",
            fs_cfg.nbd_uri, why, detail ? ": " : "", detail ? detail : "", fs_cfg.nbd_file);
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
    void *lib = dlopen("libnbd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        give_up("cannot load libnbd", dlerror());
        return;
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
        return;
    }
    struct nbd_handle *h = create();
    if (h == NULL) {
        give_up("cannot create an NBD handle", R.error());
        return;
    }
    if (connect_uri(h, fs_cfg.nbd_uri) == -1) {
        give_up("cannot connect", R.error());
        close_h(h);
        return;
    }
    int64_t size = get_size(h);
    if (can_cache(h) != 1 || size < 0) {
        give_up("the export does not take NBD_CMD_CACHE", NULL);
        close_h(h);
        return;
    }
    R.h = h;
    R.size = (uint64_t)size;
    R.dev[0] = major(st.st_dev);
    R.dev[1] = minor(st.st_dev);
    R.inode = (unsigned long)st.st_ino;
    R.pid = getpid();
    __atomic_store_n(&R.on, true, __ATOMIC_RELEASE);
}

/* PAGE is in a mapping of the served file, from this process: its offset there, and the
 * end of the mapping. */
static bool served(uintptr_t page, uint64_t *offset, uintptr_t *hi)
{
    if (!__atomic_load_n(&R.on, __ATOMIC_ACQUIRE) || getpid() != R.pid)
        return false;
    unsigned long dev[2], inode;
    return fs_mapping_file(page, dev, &inode, offset, hi) && inode == R.inode &&
           dev[0] == R.dev[0] && dev[1] == R.dev[1];
}

bool fs_remote_covers(uintptr_t page)
{
    uint64_t offset;
    uintptr_t hi;
    return served(page, &offset, &hi);
}

bool fs_remote_prefetch(uintptr_t page, size_t npages)
{
    uint64_t offset;
    uintptr_t hi;
    if (!served(page, &offset, &hi))
        return false;
    if (npages > hi - page)
        npages = hi - page;
    uint64_t len = (uint64_t)npages << FORESIGHT_PAGE_SHIFT;
    if (offset >= R.size)
        return true; /* past the export's end (a mapping may outrun its file): nothing */
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
    return true;
}
