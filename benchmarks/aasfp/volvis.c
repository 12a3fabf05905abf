/* volvis: direct volume rendering over a bricked volume file (the paper's volume
 * visualization, Section 6.1, Table 1: Vol Vis 1-4).
 *
 * An ordinary C program, as a user writes it.  It reads a header file (the volume's
 * size and its brick edge) and a view file (the viewing direction) with stdio first,
 * then renders object-order: every brick whose footprint falls in the image is read
 * with one pread, back to front along the view, and its voxels are composited into the
 * image through a transfer function ("over", back to front).  Looking along x
 * (orthographic), the bricks of one slab lie a row of bricks apart in the file;
 * looking obliquely, the order is a permutation readahead cannot follow.  The image's
 * mean and checksum are printed.  No foresight calls, no pragmas.
 *
 * usage: volvis HEADER VIEW VOLUME
 *   HEADER  "volume NX NY NZ" and "brick EDGE": EDGE^3 one-byte voxels a brick (16: 4 KiB,
 *           32: 32 KiB); each size a multiple of EDGE
 *   VIEW    "direction DX DY DZ": the direction the viewer looks in
 *   VOLUME  the bricks one after another, x fastest, then y, then z (also within a brick)
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct brick_order {
    double depth;   /* along the view: larger is farther */
    long index;     /* in the file */
};

/* Back to front: the farthest brick first, then by place in the file. */
static int farther_first(const void *a, const void *b)
{
    const struct brick_order *p = a, *q = b;
    if (p->depth != q->depth)
        return p->depth < q->depth ? 1 : -1;
    return (p->index > q->index) - (p->index < q->index);
}

static double dot(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void cross(const double *a, const double *b, double *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

static void normalize(double *v)
{
    double n = sqrt(dot(v, v));
    v[0] /= n;
    v[1] /= n;
    v[2] /= n;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: volvis HEADER VIEW VOLUME\n");
        return 2;
    }
    long nx, ny, nz, edge;
    FILE *hf = fopen(argv[1], "r");
    if (hf == NULL) {
        perror(argv[1]);
        return 1;
    }
    if (fscanf(hf, " volume %ld %ld %ld brick %ld", &nx, &ny, &nz, &edge) != 4 || edge < 1 ||
        nx < edge || ny < edge || nz < edge || nx % edge || ny % edge || nz % edge) {
        fprintf(stderr, "volvis: %s: expected \"volume NX NY NZ brick EDGE\", sizes "
                "multiples of EDGE\n", argv[1]);
        return 1;
    }
    fclose(hf);
    double dir[3];
    FILE *vf = fopen(argv[2], "r");
    if (vf == NULL) {
        perror(argv[2]);
        return 1;
    }
    if (fscanf(vf, " direction %lf %lf %lf", &dir[0], &dir[1], &dir[2]) != 3 ||
        dot(dir, dir) == 0) {
        fprintf(stderr, "volvis: %s: expected \"direction DX DY DZ\", not all zero\n", argv[2]);
        return 1;
    }
    fclose(vf);

    /* The image plane: e1, e2 across the view, an S x S image centred on the volume. */
    normalize(dir);
    double up[3] = {0, 0, 1}, e1[3], e2[3];
    if (fabs(dir[2]) > 0.9) {
        up[1] = 1;
        up[2] = 0;
    }
    cross(up, dir, e1);
    normalize(e1);
    cross(dir, e1, e2);
    long size = nx > ny ? (nx > nz ? nx : nz) : (ny > nz ? ny : nz);
    double centre[3] = {nx / 2.0, ny / 2.0, nz / 2.0};
    double u0 = size / 2.0 - dot(centre, e1), v0 = size / 2.0 - dot(centre, e2);

    /* The bricks in the image, farthest first. */
    long nbx = nx / edge, nby = ny / edge, nbz = nz / edge, nbricks = nbx * nby * nbz;
    struct brick_order *order = malloc((size_t)nbricks * sizeof *order);
    if (order == NULL) {
        fprintf(stderr, "volvis: out of memory\n");
        return 1;
    }
    long visible = 0;
    for (long bz = 0; bz < nbz; bz++)
        for (long by = 0; by < nby; by++)
            for (long bx = 0; bx < nbx; bx++) {
                double lo_u = 1e300, hi_u = -1e300, lo_v = 1e300, hi_v = -1e300;
                for (int c = 0; c < 8; c++) {
                    double p[3] = {(double)(bx + (c & 1)) * edge, (double)(by + (c >> 1 & 1)) * edge,
                                   (double)(bz + (c >> 2)) * edge};
                    double u = dot(p, e1) + u0, v = dot(p, e2) + v0;
                    lo_u = u < lo_u ? u : lo_u;
                    hi_u = u > hi_u ? u : hi_u;
                    lo_v = v < lo_v ? v : lo_v;
                    hi_v = v > hi_v ? v : hi_v;
                }
                if (hi_u <= 0 || lo_u >= size || hi_v <= 0 || lo_v >= size)
                    continue;
                double mid[3] = {(bx + 0.5) * edge, (by + 0.5) * edge, (bz + 0.5) * edge};
                order[visible].depth = dot(mid, dir);
                order[visible].index = (bz * nby + by) * nbx + bx;
                visible++;
            }
    qsort(order, (size_t)visible, sizeof *order, farther_first);

    /* The transfer function: air is transparent, denser matter brighter and more opaque. */
    float colour[256], alpha[256];
    for (int v = 0; v < 256; v++) {
        colour[v] = (float)v / 255.0f;
        alpha[v] = v < 32 ? 0.0f : 0.02f + 0.3f * (float)(v - 32) / 223.0f;
    }
    float *image = calloc((size_t)(size * size), sizeof *image);
    size_t brick_bytes = (size_t)(edge * edge * edge);
    unsigned char *brick = malloc(brick_bytes);
    if (image == NULL || brick == NULL) {
        fprintf(stderr, "volvis: out of memory\n");
        return 1;
    }

    int fd = open(argv[3], O_RDONLY);
    if (fd < 0) {
        perror(argv[3]);
        return 1;
    }
    float du = (float)e1[0], dv = (float)e2[0];
    int x_first = dir[0] >= 0 ? (int)edge - 1 : 0, x_step = dir[0] >= 0 ? -1 : 1;
    for (long k = 0; k < visible; k++) {
        long b = order[k].index;
        if (pread(fd, brick, brick_bytes, (off_t)b * (off_t)brick_bytes) != (ssize_t)brick_bytes) {
            fprintf(stderr, "volvis: short read of brick %ld\n", b);
            return 1;
        }
        long bx = b % nbx, by = b / nbx % nby, bz = b / (nbx * nby);
        for (long z = 0; z < edge; z++)
            for (long y = 0; y < edge; y++) {
                double p[3] = {bx * edge + 0.5, by * edge + y + 0.5, bz * edge + z + 0.5};
                float ru = (float)(dot(p, e1) + u0), rv = (float)(dot(p, e2) + v0);
                const unsigned char *row = brick + (z * edge + y) * edge;
                for (int x = x_first; x >= 0 && x < edge; x += x_step) {
                    float a = alpha[row[x]];
                    float u = ru + du * (float)x, v = rv + dv * (float)x;
                    if (a == 0.0f || u < 0.0f || v < 0.0f || u >= (float)size || v >= (float)size)
                        continue;
                    float *px = &image[(long)v * size + (long)u];
                    *px = colour[row[x]] * a + *px * (1.0f - a);
                }
            }
    }
    close(fd);

    double total = 0;
    uint64_t checksum = 14695981039346656037u;
    for (long i = 0; i < size * size; i++) {
        float c = image[i] < 0 ? 0 : image[i] > 1 ? 1 : image[i];
        total += c;
        checksum = (checksum ^ (uint64_t)(c * 255.0f + 0.5f)) * 1099511628211u;
    }
    printf("volvis: %ld of %ld bricks of %ld^3 voxels read, direction (%.3f, %.3f, %.3f), "
           "image %ldx%ld, mean %.6f, checksum %016llx\n", visible, nbricks, edge, dir[0],
           dir[1], dir[2], size, size, total / (double)(size * size),
           (unsigned long long)checksum);
    free(image);
    free(brick);
    free(order);
    return 0;
}
