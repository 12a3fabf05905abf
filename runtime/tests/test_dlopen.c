/* test_dlopen.c — the runtime loads with dlopen after the program started (a plugin or an
 * extension module built by foresight cc): its thread-local storage must fit in the
 * static TLS left over for such libraries; started, dlclose leaves it loaded.  usage:
 * test_dlopen LIBRARY */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    if (dlsym(h, "foresight__lookahead_abi10") == NULL) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return 1;
    }
    /* What a hinted unit's constructor does as it loads (foresight.h): the runtime
     * starts, its threads with it. */
    void (*hinted)(const void *) = (void (*)(const void *))dlsym(h, "foresight__hinted_abi10");
    if (hinted == NULL) {
        fprintf(stderr, "dlsym: %s\n", dlerror());
        return 1;
    }
    hinted(NULL);
    /* Closed, it stays: its threads never end, so its code must not be unmapped under
     * them (-z nodelete). */
    dlclose(h);
    if (dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) == NULL) {
        fprintf(stderr, "dlclose unloaded the runtime\n");
        return 1;
    }
    printf("dlopen ok\n");
    return 0;
}
