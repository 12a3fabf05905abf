/* FORESIGHT_STATS: 0, 1 and stderr give no file or a table on stderr; a value that looks
 * like a path (containing '/' or ending in .json) gives a JSON file there; anything else
 * (FORESIGHT_STATS=2) is rejected with one line on stderr and statistics stay off, so no
 * file named "2" appears.  Each value is tried in a child run of this program, in a
 * directory of its own, with stderr captured. */
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "check.h"
#include "internal.h"

/* Runs this program as "child" with FORESIGHT_STATS=VALUE in DIR; stderr into ERR. */
static int run_child(const char *self, const char *dir, const char *value, char *err,
                     size_t errlen)
{
    char errpath[4300];
    snprintf(errpath, sizeof errpath, "%s.stderr", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0 || chdir(dir) != 0)
            _exit(99);
        setenv("FORESIGHT_STATS", value, 1);
        execl(self, self, "child", (char *)NULL);
        _exit(98);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    memset(err, 0, errlen);
    int fd = open(errpath, O_RDONLY);
    if (fd >= 0) {
        if (read(fd, err, errlen - 1) < 0)
            err[0] = 0;
        close(fd);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The files DIR holds, as "name name ..." */
static void listing(const char *dir, char *out, size_t len)
{
    out[0] = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') {
            strncat(out, e->d_name, len - strlen(out) - 2);
            strcat(out, " ");
        }
    if (d != NULL)
        closedir(d);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        /* A hint, so there is something to report; the exit code is the setting. */
        static char page[4096] __attribute__((aligned(4096)));
        foresight_prefetch(page, sizeof page);
        return fs_cfg.stats;
    }
    char self[4096], root[4096], dir[4200], err[4096], files[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    self[n > 0 ? n : 0] = 0;
    snprintf(root, sizeof root, "%s/stats_env.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    CHECK(mkdtemp(root) != NULL);

    const struct {
        const char *value;
        int stats;         /* fs_cfg.stats in the child */
        int err_lines;     /* lines it writes on stderr (the table is more) */
        const char *file;  /* the one file it leaves, "" for none */
    } cases[] = {
        {"0", 0, 0, ""},
        {"1", 1, -1, ""},
        {"stderr", 1, -1, ""},
        {"2", 0, 1, ""},
        {"yes", 0, 1, ""},
        {"stats.txt", 0, 1, ""},
        {"stats.json", 2, 0, "stats.json "},
        {"./stats", 2, 0, "stats "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(dir, sizeof dir, "%s/%zu", root, i);
        CHECK(mkdir(dir, 0700) == 0);
        int got = run_child(self, dir, cases[i].value, err, sizeof err);
        listing(dir, files, sizeof files);
        int errs = lines(err);
        bool ok = got == cases[i].stats && strcmp(files, cases[i].file) == 0 &&
                  (cases[i].err_lines < 0 ? errs > 3 : errs == cases[i].err_lines);
        if (cases[i].err_lines == 1)
            ok = ok && strstr(err, "FORESIGHT_STATS=") != NULL;
        if (!ok) {
            fprintf(stderr, "FORESIGHT_STATS=%s: stats %d (want %d), files \"%s\" (want \"%s\"), "
                            "stderr:\n%s\n", cases[i].value, got, cases[i].stats, files,
                    cases[i].file, err);
            check_failures++;
        }
        char path[4400];
        if (cases[i].file[0] != 0) {
            snprintf(path, sizeof path, "%s/%.*s", dir, (int)strlen(cases[i].file) - 1,
                     cases[i].file);
            unlink(path);
        }
        snprintf(path, sizeof path, "%s.stderr", dir);
        unlink(path);
        rmdir(dir);
    }
    rmdir(root);
    return check_done("stats_env");
}
