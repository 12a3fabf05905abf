/* video: a video player's disk accesses (the paper's micro-benchmark, Section 6.1,
 * Table 1: Forward 1/2, Backward 1/2).
 *
 * An ordinary C program, as a user writes it: the file is an array of 4 KiB frames,
 * read one at a time with lseek + read, forward (play, fast forward) or backward
 * (rewind), every frame (stride 1) or every other one (stride 2).  Each frame gets a
 * little work, as a player's would: its brightness, its edges and a thumbnail,
 * folded into a checksum printed at the end.  No foresight calls, no pragmas.
 *
 * usage: video FRAMES-FILE [forward|backward] [STRIDE]   (default: backward 1)
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FRAME 4096

/* The frame's brightness, its edge energy along a sampled scan line and a coarse
 * thumbnail, as one number: a player's per-frame statistics. */
static uint64_t show_frame(const unsigned char *px, long number)
{
    uint64_t bright = 0, edges = 0, thumb = 0;
    for (int j = 0; j < FRAME; j++)
        bright += px[j];
    for (int j = 8; j < FRAME; j += 8)
        edges += (uint64_t)(px[j] > px[j - 8] ? px[j] - px[j - 8] : px[j - 8] - px[j]);
    for (int j = 0; j < FRAME; j += 256)
        thumb = thumb * 31 + (uint64_t)(px[j] + px[j + 1] + px[j + 2] + px[j + 3]) / 4;
    return (bright << 20) ^ (edges << 3) ^ thumb ^ (uint64_t)number;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: video FRAMES-FILE [forward|backward] [STRIDE]\n");
        return 2;
    }
    int backward = 1;
    if (argc > 2) {
        if (strcmp(argv[2], "forward") == 0)
            backward = 0;
        else if (strcmp(argv[2], "backward") != 0) {
            fprintf(stderr, "video: direction must be forward or backward, not %s\n", argv[2]);
            return 2;
        }
    }
    long stride = argc > 3 ? atol(argv[3]) : 1;
    if (stride < 1) {
        fprintf(stderr, "video: the stride must be at least 1 frame\n");
        return 2;
    }

    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < FRAME) {
        fprintf(stderr, "video: %s holds no whole %d-byte frame\n", argv[1], FRAME);
        return 1;
    }
    long frames = (long)(size / FRAME);

    unsigned char frame[FRAME];
    uint64_t checksum = 0;
    long shown = 0;
    for (long k = 0; k < frames; k += stride) {
        long i = backward ? frames - 1 - k : k;
        if (lseek(fd, (off_t)i * FRAME, SEEK_SET) < 0) {
            perror("lseek");
            return 1;
        }
        if (read(fd, frame, FRAME) != FRAME) {
            fprintf(stderr, "video: short read at frame %ld\n", i);
            return 1;
        }
        checksum = checksum * 1099511628211u + show_frame(frame, i);
        shown++;
    }
    close(fd);
    printf("video %s, stride %ld: %ld of %ld frames shown, checksum %016llx\n",
           backward ? "backward" : "forward", stride, shown, frames,
           (unsigned long long)checksum);
    return 0;
}
