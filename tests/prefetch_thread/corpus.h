/* corpus.h: what the prefetch-thread corpus programs share: writing their input files
 * and a checksum.  Plain C; each program includes it and nothing of Foresight. */
#ifndef CORPUS_H
#define CORPUS_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PATH as NREC records of SIZE bytes: record r starts with "PATH:r;" and is filled with
 * bytes that depend on r, SEED and the place in the record. */
static inline void make_records(const char *path, long nrec, long size, unsigned seed)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *buf = malloc((size_t)size);
    if (fd < 0 || buf == NULL) {
        perror(path);
        exit(1);
    }
    for (long r = 0; r < nrec; r++) {
        for (long j = 0; j < size; j++)
            buf[j] = (char)((r * (long)seed + j * 7 + (j >> 5)) & 0xff);
        if (size >= 48)
            snprintf(buf, 48, "%s:%ld;", path, r);
        if (write(fd, buf, (size_t)size) != (ssize_t)size) {
            perror(path);
            exit(1);
        }
    }
    free(buf);
    if (close(fd) != 0) {
        perror(path);
        exit(1);
    }
}

/* FNV-1a over N bytes at P, continuing from H (start with 14695981039346656037). */
static inline uint64_t checksum(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211u;
    return h;
}

#define CHECKSUM_START 14695981039346656037u

#endif
