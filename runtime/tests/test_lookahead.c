/* The default look-ahead: 4 MiB, but at most a thirty-second of the memory limit (more in
 * flight and a v1 cgroup's charge can find nothing to reclaim: distance.c); a size
 * given in FORESIGHT_LOOKAHEAD is used as given.  argv[1]: the bytes expected under
 * the environment CMakeLists.txt sets. */
#include "check.h"
#include "internal.h"

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    size_t expect = (size_t)strtoull(argv[1], NULL, 10);
    CHECK(!fs_cfg.lookahead_measured);
    CHECK_EQ(foresight_lookahead_bytes(), expect);
    return check_done("lookahead");
}
