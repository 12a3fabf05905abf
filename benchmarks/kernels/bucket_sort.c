/* Bucket sort of the paper's Figure 17 (NAS IS): key density (count[key[i]]++), ranking
 * (prefix sums), copying keys into place; keys and output in one mapped file.
 * usage: bucket_sort create|run FILE BYTES */
#include "common.h"

/* IS-style small key range: each key value is one bucket, so copying into buckets sorts,
 * and the buckets' write frontier (MAX_KEY pages) fits in memory under the cap. */
#define MAX_KEY (1 << 10)

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: bucket_sort create|run FILE BYTES\n"); return 2; }
    size_t bytes = arg_size(argv[3]);
    long n = (long)(bytes / 2 / sizeof(int));
    int create = strcmp(argv[1], "create") == 0;
    int fd = open(argv[2], O_RDWR | (create ? O_CREAT : 0), 0644);
    if (fd < 0 || (create && ftruncate(fd, (off_t)bytes) != 0)) { perror(argv[2]); return 2; }
    int *keys = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (keys == MAP_FAILED) { perror("mmap"); return 2; }
    int *out = keys + n;
    if (create) {
        unsigned long x = 271828;
        for (long i = 0; i < n; i++) {
            x = x * 6364136223846793005UL + 1442695040888963407UL;
            keys[i] = (int)((x >> 33) % MAX_KEY);
        }
        msync(keys, bytes, MS_SYNC);
        return 0;
    }
    long *count = calloc(MAX_KEY, sizeof *count), *pos = malloc(MAX_KEY * sizeof *pos);
    double t0 = now();
    for (long i = 0; i < n; i++)
        count[keys[i]]++;
    pos[0] = 0;
    for (long k = 1; k < MAX_KEY; k++)
        pos[k] = pos[k - 1] + count[k - 1];
    for (long i = 0; i < n; i++)
        out[pos[keys[i]]++] = keys[i];
    double t1 = now();
    long bad = 0;
    unsigned long sum = 0;
    for (long i = 0; i < n; i++) {
        bad += i > 0 && out[i - 1] > out[i];
        sum = sum * 31 + (unsigned long)out[i];
    }
    printf("checksum %lu sorted %s\naccess_seconds %.3f\n", sum, bad ? "no" : "yes", t1 - t0);
    free(count);
    free(pos);
    return bad != 0;
}
