/* video2: the video player of ../video.c with its disk accesses in a file of their own
 * (play.c), as larger programs keep their I/O routines: main here parses the arguments
 * and opens the file, play() there reads the frames with lseek + read.  Each file is
 * compiled on its own (`cc -c`), so a prefetch thread for play()'s reads starts at
 * play()'s entry, not at main.  Its output is video's for the same arguments.
 *
 * usage: video2 FRAMES-FILE [forward|backward] [STRIDE]   (default: backward 1)
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FRAME 4096

/* play.c: frames 0..FRAMES-1 of FD, every STRIDE-th, backward or forward: their checksum
 * (a failed read ends the program). */
uint64_t play(int fd, long frames, int backward, long stride);

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: video2 FRAMES-FILE [forward|backward] [STRIDE]\n");
        return 2;
    }
    int backward = 1;
    if (argc > 2) {
        if (strcmp(argv[2], "forward") == 0)
            backward = 0;
        else if (strcmp(argv[2], "backward") != 0) {
            fprintf(stderr, "video2: direction must be forward or backward, not %s\n",
                    argv[2]);
            return 2;
        }
    }
    long stride = argc > 3 ? atol(argv[3]) : 1;
    if (stride < 1) {
        fprintf(stderr, "video2: the stride must be at least 1 frame\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    if (size < FRAME) {
        fprintf(stderr, "video2: %s holds no whole %d-byte frame\n", argv[1], FRAME);
        return 1;
    }
    long frames = (long)(size / FRAME);
    uint64_t checksum = play(fd, frames, backward, stride);
    close(fd);
    printf("video %s, stride %ld: %ld of %ld frames shown, checksum %016llx\n",
           backward ? "backward" : "forward", stride, (frames + stride - 1) / stride, frames,
           (unsigned long long)checksum);
    return 0;
}
