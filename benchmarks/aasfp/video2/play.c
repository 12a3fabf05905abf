/* video2's I/O routine (see main.c): the frames of a file, read one at a time with
 * lseek + read, each given a player's per-frame work as in ../video.c. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FRAME 4096

/* The frame's brightness, its edge energy along a sampled scan line and a coarse
 * thumbnail, as one number. */
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

uint64_t play(int fd, long frames, int backward, long stride)
{
    unsigned char frame[FRAME];
    uint64_t checksum = 0;
    for (long k = 0; k < frames; k += stride) {
        long i = backward ? frames - 1 - k : k;
        if (lseek(fd, (off_t)i * FRAME, SEEK_SET) < 0) {
            perror("lseek");
            exit(1);
        }
        if (read(fd, frame, FRAME) != FRAME) {
            fprintf(stderr, "video2: short read at frame %ld\n", i);
            exit(1);
        }
        checksum = checksum * 1099511628211u + show_frame(frame, i);
    }
    return checksum;
}
