/* heat: explicit 2-D heat diffusion on a ROWS x COLS grid.
 *
 * An ordinary C program, as a user writes it: each grid row is malloc'd on its own
 * (double **), a Jacobi sweep per step until the temperature settles or STEPS steps
 * have run, then a summary of the final grid.  No foresight calls, no pragmas.
 *
 * usage: heat ROWS COLS STEPS
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* One explicit step from src into dst; returns the largest change of a point. */
static double step(long rows, long cols, double **dst, double **src)
{
    double change = 0.0;
    for (long i = 1; i < rows - 1; i++)
        for (long j = 1; j < cols - 1; j++) {
            double t = src[i][j] + 0.2 * (src[i - 1][j] + src[i + 1][j] + src[i][j - 1] +
                                          src[i][j + 1] - 4.0 * src[i][j]);
            dst[i][j] = t;
            change = fmax(change, fabs(t - src[i][j]));
        }
    return change;
}

/* ARG as a whole number from MIN to MAX, or -1. */
static long number(const char *arg, long min, long max)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || v < min || v > max)
        return -1;
    return v;
}

static double **grid(long rows, long cols)
{
    double **g = malloc((size_t)rows * sizeof *g);
    if (g == NULL)
        return NULL;
    for (long i = 0; i < rows; i++) {
        g[i] = malloc((size_t)cols * sizeof **g);
        if (g[i] == NULL)
            return NULL;
    }
    return g;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: heat ROWS COLS STEPS\n");
        return 2;
    }
    /* A row of COLS doubles and the ROWS row pointers must each be a size malloc can
     * be asked for. */
    long limit = (long)(PTRDIFF_MAX / (long)sizeof(double));
    long rows = number(argv[1], 3, limit), cols = number(argv[2], 3, limit);
    long steps = number(argv[3], 1, INT_MAX);
    if (rows < 0 || cols < 0 || steps < 0) {
        fprintf(stderr, "heat: ROWS and COLS must be whole numbers from 3 to %ld, STEPS "
                "from 1 to %d\n", limit, INT_MAX);
        return 2;
    }
    double **u = grid(rows, cols), **v = grid(rows, cols);
    if (u == NULL || v == NULL) {
        fprintf(stderr, "heat: out of memory\n");
        return 1;
    }

    /* A hot spot in a cold plate with a warm edge. */
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < cols; j++) {
            u[i][j] = (i == 0 || j == 0) ? 50.0 : (double)((i * 31 + j * 17) % 101);
            v[i][j] = u[i][j];
        }

    long done = 0;
    double change;
    do {
        change = step(rows, cols, v, u);
        double **t = u;
        u = v;
        v = t;
        done++;
    } while (done < steps && change > 1e-3);

    double sum = 0.0, hottest = 0.0;
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < cols; j++) {
            sum += u[i][j];
            hottest = fmax(hottest, u[i][j]);
        }
    printf("steps %ld, last change %.6f\n", done, change);
    printf("mean temperature %.9f, hottest %.6f\n", sum / ((double)rows * (double)cols),
           hottest);
    for (long i = 0; i < rows; i++) {
        free(u[i]);
        free(v[i]);
    }
    free(u);
    free(v);
    return 0;
}
