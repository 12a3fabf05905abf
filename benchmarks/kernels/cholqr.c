/* Orthogonalization of the NCOL columns of a tall matrix by Cholesky QR without square
 * roots, blocked by rows: G = A^T A accumulated one block of rows at a time with a ddot
 * helper on column segments, G = L D L^T, then A := A L^-T one block of rows at a time
 * with a daxpy helper (afterwards the columns are orthogonal, column j's squared norm
 * D[j]).  The matrix is column-major as double **, each column malloc'd on its own
 * (paged to swap when larger than memory); a block's segments stay in memory while the
 * helpers are called on them NCOL(NCOL+1)/2 times.  usage: cholqr run - BYTES */
#include "common.h"

#define NCOL 16
#define NB 2048          /* rows per block: 16 KiB segments */

static double ddot(int n, const double *x, const double *y)
{
    int i;
    double s = 0.0;
    for (i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

static void daxpy(int n, double a, const double *x, double *y)
{
    int i;
    for (i = 0; i < n; i++)
        y[i] += a * x[i];
}

/* G += A(r0:r0+nb, :)^T A(r0:r0+nb, :), lower triangle */
static void gram(int m, double **a, double g[NCOL][NCOL])
{
    int r0, i, j;
    for (r0 = 0; r0 < m; r0 += NB) {
        int nb = m - r0 < NB ? m - r0 : NB;
        for (i = 0; i < NCOL; i++)
            for (j = 0; j <= i; j++)
                g[i][j] += ddot(nb, &a[i][r0], &a[j][r0]);
    }
}

/* G = L D L^T, L unit lower triangular */
static void ldlt(double g[NCOL][NCOL], double l[NCOL][NCOL], double d[NCOL])
{
    int i, j, k;
    for (j = 0; j < NCOL; j++) {
        double s = g[j][j];
        for (k = 0; k < j; k++)
            s -= l[j][k] * l[j][k] * d[k];
        d[j] = s;
        l[j][j] = 1.0;
        for (i = j + 1; i < NCOL; i++) {
            double t = g[i][j];
            for (k = 0; k < j; k++)
                t -= l[i][k] * l[j][k] * d[k];
            l[i][j] = t / d[j];
        }
    }
}

/* A := A L^-T: column j -= L[j][i] * column i for i < j, columns in order */
static void solve(int m, double **a, double l[NCOL][NCOL])
{
    int r0, i, j;
    for (r0 = 0; r0 < m; r0 += NB) {
        int nb = m - r0 < NB ? m - r0 : NB;
        for (j = 1; j < NCOL; j++)
            for (i = 0; i < j; i++)
                daxpy(nb, -l[j][i], &a[i][r0], &a[j][r0]);
    }
}

int main(int argc, char **argv)
{
    double g[NCOL][NCOL], l[NCOL][NCOL], d[NCOL];
    double **a;
    int i, j, r, m;
    if (argc != 4) { fprintf(stderr, "usage: cholqr run - BYTES\n"); return 2; }
    if (strcmp(argv[1], "create") == 0) return 0;
    m = (int)(arg_size(argv[3]) / (NCOL * sizeof(double)));
    if (m < NCOL) { fprintf(stderr, "cholqr: BYTES too small\n"); return 2; }
    a = malloc(NCOL * sizeof(double *));
    if (a == NULL) { fprintf(stderr, "cholqr: out of memory\n"); return 2; }
    for (j = 0; j < NCOL; j++) {
        a[j] = malloc(m * sizeof(double));
        if (a[j] == NULL) { fprintf(stderr, "cholqr: out of memory\n"); return 2; }
    }
    for (j = 0; j < NCOL; j++)
        for (r = 0; r < m; r++)
            a[j][r] = (double)(((unsigned)r * 2654435761u + (unsigned)j * 40503u) % 1000003u)
                      / 500001.5 - 1.0 + (j == 0 ? 0.5 : 0.0);
    for (i = 0; i < NCOL; i++)
        for (j = 0; j < NCOL; j++)
            g[i][j] = l[i][j] = 0.0;
    double t0 = now();
    gram(m, a, g);
    ldlt(g, l, d);
    solve(m, a, l);
    double t1 = now();
    /* checks: the squared norms D, and how orthogonal columns 0, 1 and the last are */
    double dsum = 0, off = 0, asum = 0;
    for (j = 0; j < NCOL; j++)
        dsum += d[j];
    for (r = 0; r < m; r++) {
        off += a[0][r] * a[NCOL - 1][r] + a[1][r] * a[NCOL - 1][r];
        asum += a[NCOL - 1][r];
    }
    printf("checksum d %.6e d0 %.6e dlast %.6e\n", dsum, d[0], d[NCOL - 1]);
    printf("orthogonality %.3e sum %.6e\naccess_seconds %.3f\n", off / dsum, asum, t1 - t0);
    for (j = 0; j < NCOL; j++)
        free(a[j]);
    free(a);
    return 0;
}
