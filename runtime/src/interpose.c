/*
 * The definitions behind the functions the library interposes (pin.c, pt_limits.c,
 * pt_thread.c): libc's, found by dlsym(RTLD_NEXT) once per function and kept, so a call
 * made where dlsym may not be (a signal handler, a child after fork) finds it without a
 * lookup.  Each file looks its names up from a constructor (fs_next_all); a call before
 * that (a sanitizer's start-up) looks its one up then.
 */
#include <dlfcn.h>

#include "internal.h"

FS_EARLY void *fs_next_fn(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}

void fs_next_all(void **slots, const char *const *names, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        (void)fs_next_fn(&slots[i], names[i]);
}
