/* mgrid: the multigrid solver of SPEC CFP95's 107.mgrid (NAS MG), written from its
 * published description: V-cycles on a periodic cube, each level's residual (a 27-point
 * operator), smoother, restriction to the coarser level and trilinear interpolation
 * back, with OpenMP loops over planes as a parallelizing compiler makes them.  Every
 * level's u and r and the right-hand side v are carved out of one block back to back
 * (the paper's Table 1: N = 64, 7 MB).  The restriction and interpolation index the fine
 * grid at 2k: those loops summarise only their coarse arrays.
 * usage: mgrid [LOG2N [CYCLES]]; prints the residual norm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXLEV 12

static void comm3(int m, double (*a)[m][m])
{
    /* periodic ghost planes, rows and points: the interior is 1..m-2 */
    #pragma omp parallel for
    for (int k = 1; k < m - 1; k++)
        for (int j = 1; j < m - 1; j++) {
            a[k][j][0] = a[k][j][m - 2];
            a[k][j][m - 1] = a[k][j][1];
        }
    #pragma omp parallel for
    for (int k = 1; k < m - 1; k++)
        for (int i = 0; i < m; i++) {
            a[k][0][i] = a[k][m - 2][i];
            a[k][m - 1][i] = a[k][1][i];
        }
    for (int j = 0; j < m; j++)
        for (int i = 0; i < m; i++) {
            a[0][j][i] = a[m - 2][j][i];
            a[m - 1][j][i] = a[1][j][i];
        }
}

/* r = v - A u with A's coefficients by the distance class of the 27 neighbours */
static void resid(int m, double (*u)[m][m], double (*v)[m][m], double (*r)[m][m])
{
    const double a0 = -8.0 / 3.0, a2 = 1.0 / 6.0, a3 = 1.0 / 12.0;
    #pragma omp parallel for
    for (int k = 1; k < m - 1; k++)
        for (int j = 1; j < m - 1; j++)
            for (int i = 1; i < m - 1; i++) {
                double edges = u[k - 1][j][i - 1] + u[k - 1][j][i + 1] + u[k - 1][j - 1][i] +
                               u[k - 1][j + 1][i] + u[k + 1][j][i - 1] + u[k + 1][j][i + 1] +
                               u[k + 1][j - 1][i] + u[k + 1][j + 1][i] + u[k][j - 1][i - 1] +
                               u[k][j - 1][i + 1] + u[k][j + 1][i - 1] + u[k][j + 1][i + 1];
                double corners = u[k - 1][j - 1][i - 1] + u[k - 1][j - 1][i + 1] +
                                 u[k - 1][j + 1][i - 1] + u[k - 1][j + 1][i + 1] +
                                 u[k + 1][j - 1][i - 1] + u[k + 1][j - 1][i + 1] +
                                 u[k + 1][j + 1][i - 1] + u[k + 1][j + 1][i + 1];
                r[k][j][i] = v[k][j][i] - a0 * u[k][j][i] - a2 * edges - a3 * corners;
            }
    comm3(m, r);
}

/* u = u + S r: the smoother */
static void psinv(int m, double (*r)[m][m], double (*u)[m][m])
{
    const double c0 = -3.0 / 8.0, c1 = 1.0 / 32.0, c2 = -1.0 / 64.0;
    #pragma omp parallel for
    for (int k = 1; k < m - 1; k++)
        for (int j = 1; j < m - 1; j++)
            for (int i = 1; i < m - 1; i++) {
                double faces = r[k][j][i - 1] + r[k][j][i + 1] + r[k][j - 1][i] +
                               r[k][j + 1][i] + r[k - 1][j][i] + r[k + 1][j][i];
                double edges = r[k][j - 1][i - 1] + r[k][j - 1][i + 1] + r[k][j + 1][i - 1] +
                               r[k][j + 1][i + 1] + r[k - 1][j - 1][i] + r[k - 1][j + 1][i] +
                               r[k + 1][j - 1][i] + r[k + 1][j + 1][i];
                u[k][j][i] += c0 * r[k][j][i] + c1 * faces + c2 * edges;
            }
    comm3(m, u);
}

/* the coarse residual s from the fine one r: full weighting of the 27 fine points */
static void rprj3(int mf, double (*r)[mf][mf], int mc, double (*s)[mc][mc])
{
    #pragma omp parallel for
    for (int k = 1; k < mc - 1; k++)
        for (int j = 1; j < mc - 1; j++)
            for (int i = 1; i < mc - 1; i++) {
                double sum = 0;
                for (int dk = -1; dk <= 1; dk++)
                    for (int dj = -1; dj <= 1; dj++)
                        for (int di = -1; di <= 1; di++) {
                            double w = (dk ? 0.5 : 1) * (dj ? 0.5 : 1) * (di ? 0.5 : 1);
                            sum += w * r[2 * k - 1 + dk][2 * j - 1 + dj][2 * i - 1 + di];
                        }
                s[k][j][i] = sum / 8;
            }
    comm3(mc, s);
}

/* the fine u plus the trilinear interpolation of the coarse z */
static void interp(int mc, double (*z)[mc][mc], int mf, double (*u)[mf][mf])
{
    #pragma omp parallel for
    for (int k = 0; k < mc - 1; k++)
        for (int j = 0; j < mc - 1; j++)
            for (int i = 0; i < mc - 1; i++)
                for (int a = 0; a < 2; a++)
                    for (int b = 0; b < 2; b++)
                        for (int c = 0; c < 2; c++) {
                            double t = 0;
                            for (int x = 0; x <= a; x++)
                                for (int y = 0; y <= b; y++)
                                    for (int q = 0; q <= c; q++)
                                        t += z[k + x][j + y][i + q];
                            int fk = 2 * k + a, fj = 2 * j + b, fi = 2 * i + c;
                            if (fk < mf && fj < mf && fi < mf)
                                u[fk][fj][fi] += t / ((1 + a) * (1 + b) * (1 + c));
                        }
}

int main(int argc, char **argv)
{
    int lt = argc > 1 ? atoi(argv[1]) : 6, cycles = argc > 2 ? atoi(argv[2]) : 4;
    if (lt < 2 || lt >= MAXLEV || cycles < 1) {
        fprintf(stderr, "usage: mgrid [LOG2N 2..%d [CYCLES >= 1]]\n", MAXLEV - 1);
        return 2;
    }
    size_t off[MAXLEV + 1], total = 0;
    int size[MAXLEV + 1];
    for (int l = 1; l <= lt; l++) { /* level l: (2^l + 2)^3 points; u and r per level */
        size[l] = (1 << l) + 2;
        off[l] = total;
        total += 2 * (size_t)size[l] * size[l] * size[l];
    }
    size_t vat = total;
    total += (size_t)size[lt] * size[lt] * size[lt];
    double *pool = calloc(total, sizeof *pool);
    if (!pool) {
        fprintf(stderr, "mgrid: out of memory\n");
        return 1;
    }
    int m = size[lt];
    double (*v)[m][m] = (double (*)[m][m])(pool + vat);
    double (*uf)[m][m] = (double (*)[m][m])(pool + off[lt]);
    /* the right-hand side: +1 and -1 charges at a few fixed points */
    for (int q = 0; q < 10; q++) {
        int k = 1 + (q * 37) % (m - 2), j = 1 + (q * 53) % (m - 2), i = 1 + (q * 71) % (m - 2);
        v[k][j][i] = q % 2 ? -1.0 : 1.0;
    }
    comm3(m, v);
    for (int c = 0; c < cycles; c++) {
        double (*rf)[m][m] = (double (*)[m][m])(pool + off[lt] + (size_t)m * m * m);
        resid(m, uf, v, rf);
        for (int l = lt; l > 1; l--) { /* down: restrict the residual */
            int mf = size[l], mc = size[l - 1];
            rprj3(mf, (double (*)[mf][mf])(pool + off[l] + (size_t)mf * mf * mf), mc,
                  (double (*)[mc][mc])(pool + off[l - 1] + (size_t)mc * mc * mc));
        }
        { /* the coarsest level: u = S r from zero */
            int mc = size[1];
            double (*uc)[mc][mc] = (double (*)[mc][mc])(pool + off[1]);
            for (size_t x = 0; x < (size_t)mc * mc * mc; x++)
                (&uc[0][0][0])[x] = 0;
            psinv(mc, (double (*)[mc][mc])(pool + off[1] + (size_t)mc * mc * mc), uc);
        }
        for (int l = 2; l <= lt; l++) { /* up: interpolate, then smooth */
            int mf = size[l], mc = size[l - 1];
            double (*u)[mf][mf] = (double (*)[mf][mf])(pool + off[l]);
            double (*r)[mf][mf] = (double (*)[mf][mf])(pool + off[l] + (size_t)mf * mf * mf);
            if (l < lt)
                for (size_t x = 0; x < (size_t)mf * mf * mf; x++)
                    (&u[0][0][0])[x] = 0;
            interp(mc, (double (*)[mc][mc])(pool + off[l - 1]), mf, u);
            if (l < lt)
                resid(mf, u, r, r); /* the correction's residual on this level */
            else
                resid(mf, u, v, r);
            psinv(mf, r, u);
        }
    }
    double (*rf)[m][m] = (double (*)[m][m])(pool + off[lt] + (size_t)m * m * m);
    resid(m, uf, v, rf);
    double norm = 0;
    for (int k = 1; k < m - 1; k++)
        for (int j = 1; j < m - 1; j++)
            for (int i = 1; i < m - 1; i++)
                norm += rf[k][j][i] * rf[k][j][i];
    printf("rnorm %.10e\n", sqrt(norm / ((double)(m - 2) * (m - 2) * (m - 2))));
    free(pool);
    return 0;
}
