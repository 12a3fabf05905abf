// foresight.h compiles as C++ (-Wall -Wextra -Werror, the project's flags, and
// -Wzero-as-null-pointer-constant on FORESIGHT_SITE) and, linked
// without libforesight, its calls are no-ops: no prefetch thread starts (its init is not
// run), a tick on the NULL clock does nothing, hints do nothing.
#include <cstdio>
#include <cstdlib>

#include "foresight.h"

static int inits;

static void init()
{
    inits++;
}

static void run()
{
}

int main()
{
    struct foresight_pt_clock *c = foresight_pt_start(init, run);
    foresight_pt_tick(c, 1);
    if (c != NULL || inits != 0 || foresight_active()) {
        std::fprintf(stderr, "header_cxx: the runtime acted without the library\n");
        return 1;
    }
    long *a = static_cast<long *>(std::malloc(4096 * sizeof(long)));
    FORESIGHT_SITE(site, "a[i]"); // what the inserted code declares (strict C++ flags)
    foresight_prefetch_at(&site, a, 4096 * sizeof(long));
    foresight_prefetch(a, 4096 * sizeof(long));
    foresight_release(a, 4096 * sizeof(long));
    std::free(a);
    std::puts("header_cxx: ok");
    return 0;
}
