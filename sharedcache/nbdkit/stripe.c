/*
 * stripe.c — nbdkit-foresight-stripe-plugin: one client's view of a disk striped over
 * several I/O nodes (paper 3, Section 5's multiple I/O nodes; `foresight cluster run
 * --ionodes M`).
 *
 *     nbdkit -U CLIENT.sock nbdkit-foresight-stripe-plugin.so \
 *            node=nbd+unix:///c3?socket=n0.sock node=nbd+unix:///c3?socket=n1.sock \
 *            block=64K
 *
 * Every node serves the whole disk (the same file) through nbdkit-foresight-filter; block
 * b of the disk (`block` bytes each, the nodes' own block) is node b mod M's, so each node
 * caches and accounts only its blocks, as the simulator's striped nodes do.  A request is
 * cut at block boundaries and each piece sent to its node on this connection's own
 * connection to it (the export name in the node's URI is the client id the node sees).
 * NBD_CMD_CACHE, the client's prefetch, is forwarded the same way without waiting for the
 * nodes (a prefetch is nonbinding); a read, a write, a flush wait for theirs.  The replies
 * to the prefetches are read as they come, at every request (a connection that carries
 * only prefetches, as the runtime's does, never makes a synchronous call that would read
 * them), and at most CACHE_IN_FLIGHT are outstanding per node: past that a prefetch waits
 * for the node's replies (it answers CACHE at once).  Requests on one connection are
 * handled one at a time; multi-conn is advertised when every node does, so nbdfuse opens
 * several connections as it does to one node.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <libnbd.h>

#define NODES_MAX 64
#define CACHE_IN_FLIGHT 64 /* prefetches outstanding per node and connection */

static char *node_uri[NODES_MAX];
static unsigned nodes;
static uint64_t block_bytes = 64u << 10;

struct conn {
    struct nbd_handle *h[NODES_MAX];
};

static void stripe_unload(void)
{
    for (unsigned k = 0; k < nodes; k++)
        free(node_uri[k]);
}

static int stripe_config(const char *key, const char *value)
{
    if (strcmp(key, "node") == 0) {
        if (nodes == NODES_MAX) {
            nbdkit_error("at most %d nodes", NODES_MAX);
            return -1;
        }
        node_uri[nodes] = strdup(value);
        if (node_uri[nodes] == NULL) {
            nbdkit_error("strdup: %m");
            return -1;
        }
        nodes++;
        return 0;
    }
    if (strcmp(key, "block") == 0) {
        int64_t b = nbdkit_parse_size(value);
        if (b < 512 || (b & (b - 1)) != 0) {
            nbdkit_error("block=%s: a power of two, at least 512", value);
            return -1;
        }
        block_bytes = (uint64_t)b;
        return 0;
    }
    nbdkit_error("unknown parameter %s (node=URI ..., block=SIZE)", key);
    return -1;
}

static int stripe_config_complete(void)
{
    if (nodes == 0) {
        nbdkit_error("give the nodes: node=URI, once per node");
        return -1;
    }
    return 0;
}

static void stripe_close(void *handle)
{
    struct conn *c = handle;
    for (unsigned k = 0; k < nodes; k++)
        if (c->h[k] != NULL) {
            /* Prefetches not sent yet are stale now: dropped, not sent at the end. */
            if (nbd_aio_is_ready(c->h[k]) || nbd_aio_is_processing(c->h[k]))
                nbd_shutdown(c->h[k], LIBNBD_SHUTDOWN_ABANDON_PENDING);
            nbd_close(c->h[k]);
        }
    free(c);
}

static void *stripe_open(int readonly)
{
    (void)readonly;
    struct conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        nbdkit_error("calloc: %m");
        return NULL;
    }
    for (unsigned k = 0; k < nodes; k++) {
        c->h[k] = nbd_create();
        if (c->h[k] == NULL || nbd_connect_uri(c->h[k], node_uri[k]) == -1) {
            nbdkit_error("node %u (%s): %s", k, node_uri[k], nbd_get_error());
            stripe_close(c);
            return NULL;
        }
    }
    return c;
}

static int64_t stripe_get_size(void *handle)
{
    struct conn *c = handle;
    int64_t size = -1;
    for (unsigned k = 0; k < nodes; k++) {
        int64_t s = nbd_get_size(c->h[k]);
        if (s < 0) {
            nbdkit_error("node %u: %s", k, nbd_get_error());
            return -1;
        }
        if (k > 0 && s != size) {
            nbdkit_error("node %u serves %" PRId64 " bytes, node 0 %" PRId64, k, s, size);
            return -1;
        }
        size = s;
    }
    return size;
}

/* What every node can do (nbd_can_* is 1, 0 or -1). */
static int all_nodes(void *handle, int (*can)(struct nbd_handle *), const char *what)
{
    struct conn *c = handle;
    for (unsigned k = 0; k < nodes; k++) {
        int r = can(c->h[k]);
        if (r == -1) {
            nbdkit_error("node %u: %s: %s", k, what, nbd_get_error());
            return -1;
        }
        if (r == 0)
            return 0;
    }
    return 1;
}

/* A flush or FUA on one connection reaches every node's disk through that node, and
 * each node's cache is shared by all its connections (write-through): as consistent
 * across our connections as the nodes are across theirs. */
static int stripe_can_multi_conn(void *handle)
{
    return all_nodes(handle, nbd_can_multi_conn, "can_multi_conn");
}

static int stripe_can_fua(void *handle)
{
    int r = all_nodes(handle, nbd_can_fua, "can_fua");
    return r == 1 ? NBDKIT_FUA_NATIVE : r == 0 ? NBDKIT_FUA_EMULATE : -1;
}

static int stripe_can_trim(void *handle)
{
    return all_nodes(handle, nbd_can_trim, "can_trim");
}

static int stripe_can_zero(void *handle)
{
    return all_nodes(handle, nbd_can_zero, "can_zero");
}

static int stripe_can_cache(void *handle)
{
    (void)handle;
    return NBDKIT_CACHE_NATIVE;
}

static int stripe_can_flush(void *handle)
{
    (void)handle;
    return 1;
}

enum op { READ, WRITE, TRIM, ZERO, CACHE };

static int retire(void *user_data, int *error)
{
    (void)user_data;
    (void)error; /* a failed prefetch is dropped */
    return 1;
}

/* Read the replies that have come on H (prefetches' replies, retired by their callback)
 * without blocking; then, while MAX or more commands are outstanding, wait for them.
 * -1: the connection is gone. */
static int drain(struct nbd_handle *h, int64_t max)
{
    for (;;) {
        int64_t n = nbd_aio_in_flight(h);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        int r = nbd_poll(h, n >= max ? -1 : 0);
        if (r == -1)
            return -1;
        if (r == 0)
            return 0;   /* nothing more to read now, and under MAX */
    }
}

/* The pieces of [offset, offset+count) one block each at most, each on its node. */
static int pieces(struct conn *c, enum op op, char *buf, uint32_t count, uint64_t offset,
                  uint32_t flags)
{
    while (count > 0) {
        const uint64_t b = offset / block_bytes, end = (b + 1) * block_bytes;
        const uint32_t n = end - offset < count ? (uint32_t)(end - offset) : count;
        struct nbd_handle *h = c->h[b % nodes];
        int64_t r;
        switch (op) {
        case READ:
            r = nbd_pread(h, buf, n, offset, 0);
            break;
        case WRITE:
            r = nbd_pwrite(h, buf, n, offset, flags & NBDKIT_FLAG_FUA ? LIBNBD_CMD_FLAG_FUA : 0);
            break;
        case TRIM:
            r = nbd_trim(h, n, offset, flags & NBDKIT_FLAG_FUA ? LIBNBD_CMD_FLAG_FUA : 0);
            break;
        case ZERO:
            r = nbd_zero(h, n, offset,
                         (flags & NBDKIT_FLAG_FUA ? LIBNBD_CMD_FLAG_FUA : 0) |
                             (flags & NBDKIT_FLAG_MAY_TRIM ? 0 : LIBNBD_CMD_FLAG_NO_HOLE));
            break;
        default: /* a prefetch: sent, not waited for; its reply retires it, read by a
                  * later drain or synchronous call on the handle */
            if (drain(h, CACHE_IN_FLIGHT) == -1) {
                r = -1;
                break;
            }
            r = nbd_aio_cache(h, n, offset, (nbd_completion_callback){.callback = retire}, 0);
            r = r < 0 ? -1 : 0;
            if (r == 0)
                drain(h, CACHE_IN_FLIGHT + 1);   /* the replies already there */
            break;
        }
        if (r == -1 && op != CACHE) { /* a prefetch the node refuses is dropped */
            nbdkit_error("node %" PRIu64 ": %s", b % nodes, nbd_get_error());
            nbdkit_set_error(nbd_get_errno() ? nbd_get_errno() : EIO);
            return -1;
        }
        if (buf != NULL)
            buf += n;
        offset += n;
        count -= n;
    }
    return 0;
}

static int stripe_pread(void *handle, void *buf, uint32_t count, uint64_t offset,
                        uint32_t flags)
{
    (void)flags;
    return pieces(handle, READ, buf, count, offset, 0);
}

static int stripe_pwrite(void *handle, const void *buf, uint32_t count, uint64_t offset,
                         uint32_t flags)
{
    return pieces(handle, WRITE, (char *)buf, count, offset, flags);
}

static int stripe_trim(void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
    return pieces(handle, TRIM, NULL, count, offset, flags);
}

static int stripe_zero(void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
    return pieces(handle, ZERO, NULL, count, offset, flags);
}

static int stripe_cache(void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
    (void)flags;
    return pieces(handle, CACHE, NULL, count, offset, 0);
}

static int stripe_flush(void *handle, uint32_t flags)
{
    (void)flags;
    struct conn *c = handle;
    for (unsigned k = 0; k < nodes; k++)
        if (nbd_flush(c->h[k], 0) == -1) {
            nbdkit_error("node %u: %s", k, nbd_get_error());
            nbdkit_set_error(nbd_get_errno() ? nbd_get_errno() : EIO);
            return -1;
        }
    return 0;
}

static struct nbdkit_plugin plugin = {
    .name = "foresight-stripe",
    .longname = "one client's view of a disk striped over Foresight I/O nodes",
    .unload = stripe_unload,
    .config = stripe_config,
    .config_complete = stripe_config_complete,
    .config_help = "node=URI   an I/O node (repeat, in stripe order)\n"
                   "block=SIZE the stripe unit, the nodes' block (default 64K)",
    .open = stripe_open,
    .close = stripe_close,
    .get_size = stripe_get_size,
    .can_cache = stripe_can_cache,
    .can_flush = stripe_can_flush,
    .can_multi_conn = stripe_can_multi_conn,
    .can_fua = stripe_can_fua,
    .can_trim = stripe_can_trim,
    .can_zero = stripe_can_zero,
    .pread = stripe_pread,
    .pwrite = stripe_pwrite,
    .trim = stripe_trim,
    .zero = stripe_zero,
    .cache = stripe_cache,
    .flush = stripe_flush,
};

#define THREAD_MODEL NBDKIT_THREAD_MODEL_SERIALIZE_REQUESTS
NBDKIT_REGISTER_PLUGIN(plugin)
