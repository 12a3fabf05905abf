/*
 * mapfile.c — reads the color map a program's runtime wrote (the compiler's array
 * partitioning, communication and group summaries, paper 4 Section 5.1) and plans the
 * hints again for the simulated machine's page size and colors with the runtime's own
 * fs_color_plan() (Section 5.2), so the simulator replays exactly what the runtime would
 * ask of an operating system on that machine.  The format, one record a line, numbers
 * decimal or 0x hex, `#` comments:
 *
 *     foresight-color-map 1
 *     page 4096
 *     array BASE BYTES
 *     ref BASE UNIT FIRST COUNT OFFSET CHUNK SCHEDULE NTHREADS LOOP WRAP [ACCESS [CALL]]
 *     group BASE_A BASE_B
 *     run VPAGE NPAGES COLOR
 *
 * SCHEDULE is even, blocked or cyclic, maybe with -reverse.  A `ref` may end with its
 * access, r or w (the loop reads or stores those units: model.c's accesses; r when
 * absent), and the number of the apply call that followed its first sight (the loop's
 * run it came with: model.c walks each run once; 0 when absent).  `page` and `run` are
 * the program's own geometry and plan: checked for form, then ignored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "color_plan.h"
#include "cs_cli.h"


/* Room for one more element of *V (N used of *CAP, SIZE bytes each). */
static bool more(void **v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*v, c * size);
    if (!p)
        return false;
    *v = p;
    *cap = c;
    return true;
}

static bool unsigned_number(const char *s, uint64_t *v)
{
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s || *s == '-' || *s == '+')
        return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, base);
    if (errno || *end)
        return false;
    *v = x;
    return true;
}

static bool signed_number(const char *s, int64_t *v)
{
    bool neg = *s == '-';
    uint64_t x;
    if (!unsigned_number(s + neg, &x) || x > (uint64_t)INT64_MAX + neg)
        return false;
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    return true;
}

static bool schedule_of(const char *s, unsigned *out)
{
    static const char *const NAMES[] = {"even", "blocked", "cyclic"};
    static const unsigned VALUES[] = {FS_COLOR_EVEN, FS_COLOR_BLOCKED, FS_COLOR_CYCLIC};
    for (unsigned i = 0; i < 3; i++) {
        size_t n = strlen(NAMES[i]);
        if (strncmp(s, NAMES[i], n))
            continue;
        if (!s[n]) {
            *out = VALUES[i];
            return true;
        }
        if (!strcmp(s + n, "-reverse")) {
            *out = VALUES[i] | FS_COLOR_REVERSE;
            return true;
        }
    }
    return false;
}

/* The fields of each record, in order: u unsigned, s signed, S schedule, D direction (f
 * forward, v reverse), W access (r or w). */
static const struct {
    const char *name, *fields;
} RECORDS[] = {
    {"page", "u"},  {"array", "uu"}, {"ref", "uusssuSuuu"}, {"group", "uu"},
    {"run", "uuu"}, {"access", "uusssssuuuDW"},
};
enum { PAGE, ARRAY, REF, GROUP, RUN, ACCESS };

/* One of two letters: the field is true for the second. */
static bool letter(const char *w, const char *two, uint64_t *out)
{
    if (w[0] == '\0' || w[1] != '\0' || (w[0] != two[0] && w[0] != two[1]))
        return false;
    *out = w[0] == two[1];
    return true;
}

/* One line's record into S; false after saying what is wrong with it. */
static bool record(const char *path, unsigned long lineno, char *line, struct cs_map *s)
{
    char *save, *tok[14];
    unsigned n = 0;
    for (char *w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save))
        if (n < 14)
            tok[n++] = w;
        else
            n++;
    if (n == 0)
        return true;
    unsigned r = 0;
    while (r < sizeof RECORDS / sizeof *RECORDS && strcmp(tok[0], RECORDS[r].name))
        r++;
    if (r == sizeof RECORDS / sizeof *RECORDS) {
        fprintf(stderr, CS_PROG ": error: %s:%lu: unknown record '%.40s' (array, ref, access, "
                "group, page or run)\n", path, lineno, tok[0]);
        return false;
    }
    const char *fields = RECORDS[r].fields;
    bool write = false;
    uint64_t call = 0, again = 0;
    if (r == REF && n == 14) { /* a ref's optional AGAIN: its loop ran more than once */
        if (!letter(tok[13], "01", &again)) {
            fprintf(stderr, CS_PROG ": error: %s:%lu: field 13 of `ref`, '%.40s', is not 0 "
                    "or 1\n", path, lineno, tok[13]);
            return false;
        }
        n--;
    }
    /* the optional call number: a ref's field 12, an access's 13 */
    if ((r == REF && n == 13) || (r == ACCESS && n == 14)) {
        if (!unsigned_number(tok[n - 1], &call) || call > UINT32_MAX) {
            fprintf(stderr, CS_PROG ": error: %s:%lu: field %u of `%s`, '%.40s', is not a "
                    "call number\n", path, lineno, n - 1, tok[0], tok[n - 1]);
            return false;
        }
        n--;
    }
    if (r == REF && n == 12) { /* a ref's optional access, r or w */
        if (strcmp(tok[11], "r") && strcmp(tok[11], "w")) {
            fprintf(stderr, CS_PROG ": error: %s:%lu: field 11 of `ref`, '%.40s', is not r "
                    "or w\n", path, lineno, tok[11]);
            return false;
        }
        write = tok[11][0] == 'w';
        n--;
    }
    if (n - 1 != strlen(fields)) {
        fprintf(stderr, CS_PROG ": error: %s:%lu: `%s` takes %zu fields, not %u\n", path,
                lineno, tok[0], strlen(fields), n - 1);
        return false;
    }
    uint64_t u[12] = {0};
    int64_t v[12] = {0};
    unsigned sched = 0;
    for (unsigned i = 0; fields[i]; i++) {
        const char *w = tok[i + 1];
        bool ok = fields[i] == 'u'   ? unsigned_number(w, &u[i])
                  : fields[i] == 's' ? signed_number(w, &v[i])
                  : fields[i] == 'D' ? letter(w, "fv", &u[i])
                  : fields[i] == 'W' ? letter(w, "rw", &u[i])
                                     : schedule_of(w, &sched);
        if (!ok) {
            fprintf(stderr, CS_PROG ": error: %s:%lu: field %u of `%s`, '%.40s', is not %s\n",
                    path, lineno, i + 1, tok[0], w,
                    fields[i] == 'u'   ? "an unsigned number"
                    : fields[i] == 's' ? "a number"
                    : fields[i] == 'D' ? "f or v"
                    : fields[i] == 'W' ? "r or w"
                                       : "a schedule (even, blocked or cyclic[-reverse])");
            return false;
        }
    }
    switch (r) {
    case PAGE:
        if (!u[0] || (u[0] & (u[0] - 1))) {
            fprintf(stderr, CS_PROG ": error: %s:%lu: page %llu is not a power of two\n", path,
                    lineno, (unsigned long long)u[0]);
            return false;
        }
        return true;
    case ARRAY:
        if (!more((void **)&s->arrays, s->narrays, &s->carrays, sizeof *s->arrays))
            goto nomem;
        s->arrays[s->narrays++] = (struct fs_color_array){.base = u[0], .bytes = u[1]};
        return true;
    case REF:
        if (u[7] < 1 || u[7] > FS_COLOR_MAX_CPUS || u[9] > 1 || u[8] > UINT32_MAX) {
            fprintf(stderr, CS_PROG ": error: %s:%lu: `ref` needs NTHREADS 1..%d, LOOP below "
                    "2^32 and WRAP 0 or 1\n", path, lineno, FS_COLOR_MAX_CPUS);
            return false;
        }
        if (!more((void **)&s->calls, s->nrefs, &s->ccalls, sizeof *s->calls) ||
            !more((void **)&s->again, s->nrefs, &s->cagain, sizeof *s->again) ||
            !more((void **)&s->refs, s->nrefs, &s->crefs, sizeof *s->refs))
            goto nomem;
        s->calls[s->nrefs] = (uint32_t)call;
        s->again[s->nrefs] = again != 0;
        s->refs[s->nrefs++] = (struct fs_color_ref){
            .base = u[0], .unit = u[1], .first = v[2], .count = v[3], .offset = v[4],
            .chunk = u[5], .schedule = sched, .nthreads = (unsigned)u[7],
            .loop = (unsigned)u[8], .wrap = (int)u[9], .write = write};
        return true;
    case GROUP:
        if (!more((void **)&s->groups, s->ngroups, &s->cgroups, sizeof *s->groups))
            goto nomem;
        s->groups[s->ngroups++] = (struct fs_color_group){.a = u[0], .b = u[1]};
        return true;
    case ACCESS:
        if (u[7] > UINT32_MAX || u[8] > UINT32_MAX || u[9] > UINT32_MAX) {
            fprintf(stderr, CS_PROG ": error: %s:%lu: `access` needs LOOP, PHASE and SEQ "
                    "below 2^32\n", path, lineno);
            return false;
        }
        if (!more((void **)&s->access_calls, s->naccesses, &s->caccess_calls,
                  sizeof *s->access_calls) ||
            !more((void **)&s->accesses, s->naccesses, &s->caccesses, sizeof *s->accesses))
            goto nomem;
        s->access_calls[s->naccesses] = (uint32_t)call;
        s->accesses[s->naccesses++] = (struct fs_color_access){
            .base = u[0], .unit = u[1], .first = v[2], .count = v[3], .shift = v[4],
            .within = v[5], .stride = v[6], .loop = (unsigned)u[7], .phase = (unsigned)u[8],
            .seq = (unsigned)u[9], .reverse = (int)u[10], .write = (int)u[11]};
        return true;
    default: /* run: the program's own plan */
        return true;
    }
nomem:
    fprintf(stderr, CS_PROG ": error: %s: out of memory\n", path);
    return false;
}

int cs_map_read(const char *path, struct cs_map *s)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, CS_PROG ": error: %s: cannot read: %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    unsigned long lineno = 0;
    bool header = false, ok = true;
    ssize_t len;
    while (ok && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        char *hash = memchr(line, '#', (size_t)len);
        if (hash)
            *hash = '\0';
        line[strcspn(line, "\n")] = '\0';
        if (!header) {
            if (!line[strspn(line, " \t\r")])
                continue;
            unsigned version;
            char tail;
            if (sscanf(line, " foresight-color-map %u %c", &version, &tail) != 1) {
                fprintf(stderr, CS_PROG ": error: %s:%lu: not a color map (its first record "
                        "must be `foresight-color-map 1`)\n", path, lineno);
                ok = false;
            } else if (version != 1) {
                fprintf(stderr, CS_PROG ": error: %s:%lu: color map version %u (this reads "
                        "version 1)\n", path, lineno, version);
                ok = false;
            }
            header = true;
            continue;
        }
        ok = record(path, lineno, line, s);
    }
    if (ok && ferror(f)) {
        fprintf(stderr, CS_PROG ": error: %s: cannot read: %s\n", path, strerror(errno));
        ok = false;
    }
    if (ok && !header) {
        fprintf(stderr, CS_PROG ": error: %s: empty: not a color map\n", path);
        ok = false;
    }
    free(line);
    fclose(f);
    if (!ok)
        cs_map_free(s);
    return ok ? 0 : -1;
}

void cs_map_free(struct cs_map *m)
{
    free(m->arrays);
    free(m->refs);
    free(m->calls);
    free(m->groups);
    free(m->accesses);
    free(m->access_calls);
    free(m->again);
    memset(m, 0, sizeof *m);
}

void cs_map_threads(struct cs_map *m, unsigned threads)
{
    for (size_t i = 0; i < m->nrefs; i++)
        m->refs[i].nthreads = threads;
}



int cs_map_plan(const char *path, const struct cs_map *m, uint64_t page, uint32_t ncolors,
                struct fs_color_run **runs, size_t *nruns, size_t *bad)
{
    const struct fs_color_input in = {.arrays = m->arrays, .narrays = m->narrays,
                                      .refs = m->refs, .nrefs = m->nrefs,
                                      .groups = m->groups, .ngroups = m->ngroups};
    const struct fs_color_geometry geo = {.page = page, .ncolors = ncolors};
    *bad = 0;
    if (fs_color_plan(&in, &geo, runs, nruns, bad)) {
        fprintf(stderr, CS_PROG ": error: %s: cannot plan the colors: %s\n", path,
                strerror(errno));
        return -1;
    }
    return 0;
}
