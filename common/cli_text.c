/* cli_text.c: see cli_text.h. */
#include "cli_text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool cli_parse_size(const char *s, uint64_t *out)
{
    if (!*s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    unsigned shift = 0;
    if (*end) {
        const char *units = "KMGT";
        const char *unit = strchr(units, *end >= 'a' ? *end - 32 : *end);
        if (!unit || !*unit)
            return false;
        shift = 10 * (unsigned)(unit - units + 1);
        end++;
        if (*end == 'i')
            end++;
        if (*end == 'B' || *end == 'b')
            end++;
        if (*end)
            return false;
    }
    if (v > (UINT64_MAX >> shift))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

const char *cli_token(const char **p, const char *end, size_t *len)
{
    const char *s = *p;
    while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
        s++;
    if (s == end || *s == '#') {
        *p = end;
        return NULL;
    }
    const char *e = s;
    while (e < end && *e != ' ' && *e != '\t' && *e != '\r' && *e != '#')
        e++;
    *p = e;
    *len = (size_t)(e - s);
    return s;
}

void cli_json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

int cli_write_file(const char *path, const char *prog, void (*write)(FILE *, const void *),
                   const void *arg)
{
    struct stat sb;
    if (!path || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))) {
        FILE *f = path ? fopen(path, "w") : stdout; /* never renamed over */
        if (!f) {
            fprintf(stderr, "%s: error: cannot write %s: %s\n", prog, path, strerror(errno));
            return 2;
        }
        write(f, arg);
        return (ferror(f) | (f == stdout ? fflush(f) : fclose(f))) ? 2 : 0;
    }
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return 2;
    snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    int rc = 0;
    if (!f) {
        if (fd >= 0)
            close(fd);
        rc = 2;
    } else {
        write(f, arg);
        rc = (ferror(f) | fclose(f)) || rename(tmp, path) ? 2 : 0;
    }
    if (rc) {
        fprintf(stderr, "%s: error: cannot write %s: %s\n", prog, path, strerror(errno));
        if (fd >= 0)
            unlink(tmp);
    }
    free(tmp);
    return rc;
}
