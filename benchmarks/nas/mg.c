/* MG: V-cycle multigrid on a periodic 3-D grid, after the NAS Parallel Benchmarks' MG.
 *
 * Solves the discrete Poisson problem A u = v on an N1 x N2 x N3 periodic grid, where A
 * is the 27-point operator of the NPB description (coefficients -8/3 at the centre, 0 on
 * the 6 faces, 1/6 on the 12 edges, 1/12 on the 8 corners) and v is zero except +1 at
 * ten and -1 at ten points drawn from the NPB generator (so v sums to zero, as the
 * singular periodic problem needs).  Each iteration is one V-cycle: the residual is
 * restricted (full weighting, 1/2, 1/4, 1/8, 1/16) level by level down to a grid of 2
 * to 5 points a side, smoothed there with the 27-point smoother S (-3/8, 1/32, -1/64,
 * 0), then on the way up each level takes the trilinear prolongation of the coarser
 * correction, its own residual and one smoothing step; at the top u += Q z, r = v - A u.
 *
 * Every grid carries one ghost layer on each side, refreshed by the periodic exchange
 * (comm3) after every update.  Grid sizes: each side c * 2^L with c in 2..5, chosen so
 * the finest u, v, r plus the coarser u and r fill --mb.  Main arrays: v, and u.L, r.L
 * per level L (0 is the finest).
 *
 * Verification (no NPB tables): the residual's L2 norm must drop by at least a factor
 * MIN_DROP in every V-cycle (until it reaches rounding level, FLOOR times the initial one),
 * and the mean of u must stay zero (A's kernel is the
 * constants, which the cycle must not excite). */
#include "nas_common.h"
#include <math.h>

#define MAXLEV 24
#define MIN_DROP 1.8
#define FLOOR 1e-11 /* a residual this far below the initial one is at rounding level */
#define NPOINTS 10

static const double A_COEF[4] = { -8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0 };
static const double S_COEF[4] = { -3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0 };
static const double P_COEF[4] = { 1.0 / 2.0, 1.0 / 4.0, 1.0 / 8.0, 1.0 / 16.0 };

struct level {
    long n1, n2, n3; /* interior points per side */
    double *u, *r;
};

static size_t grid_bytes(long n1, long n2, long n3)
{
    return (size_t)(n1 + 2) * (size_t)(n2 + 2) * (size_t)(n3 + 2) * sizeof(double);
}

/* Bytes of all main arrays for sides c1, c2, c3 times 2^nlev-1. */
static double total_bytes(long c1, long c2, long c3, int nlev)
{
    double t = 0.0;
    for (int l = 0; l < nlev; l++) {
        long s = 1L << (nlev - 1 - l);
        t += (l == 0 ? 3.0 : 2.0) * (double)grid_bytes(c1 * s, c2 * s, c3 * s);
    }
    return t;
}

/* Periodic exchange: ghost layers take the opposite interior faces. */
static void comm3(long n1, long n2, long n3, double u[][n2 + 2][n1 + 2])
{
    for (long k = 1; k <= n3; k++) {
        for (long j = 1; j <= n2; j++) {
            u[k][j][0] = u[k][j][n1];
            u[k][j][n1 + 1] = u[k][j][1];
        }
        for (long i = 0; i <= n1 + 1; i++) {
            u[k][0][i] = u[k][n2][i];
            u[k][n2 + 1][i] = u[k][1][i];
        }
    }
    for (long j = 0; j <= n2 + 1; j++)
        for (long i = 0; i <= n1 + 1; i++) {
            u[0][j][i] = u[n3][j][i];
            u[n3 + 1][j][i] = u[1][j][i];
        }
}

/* r = v - A u.  s1 and s2 hold, per column i, the sums of the four face and the four
 * corner neighbours in the (j, k) plane, so each point's 26 neighbours cost 8 adds. */
static void resid(long n1, long n2, long n3, double u[][n2 + 2][n1 + 2],
                  double v[][n2 + 2][n1 + 2], double r[][n2 + 2][n1 + 2])
{
    double s1[n1 + 2], s2[n1 + 2];
    for (long k = 1; k <= n3; k++)
        for (long j = 1; j <= n2; j++) {
            for (long i = 0; i <= n1 + 1; i++) {
                s1[i] = u[k][j - 1][i] + u[k][j + 1][i] + u[k - 1][j][i] + u[k + 1][j][i];
                s2[i] = u[k - 1][j - 1][i] + u[k - 1][j + 1][i] + u[k + 1][j - 1][i] +
                        u[k + 1][j + 1][i];
            }
            for (long i = 1; i <= n1; i++) {
                double faces = s1[i] + u[k][j][i - 1] + u[k][j][i + 1];
                double edges = s2[i] + s1[i - 1] + s1[i + 1];
                double corners = s2[i - 1] + s2[i + 1];
                r[k][j][i] = v[k][j][i] - A_COEF[0] * u[k][j][i] - A_COEF[1] * faces -
                             A_COEF[2] * edges - A_COEF[3] * corners;
            }
        }
    comm3(n1, n2, n3, r);
}

/* u = u + S r (one smoothing step). */
static void psinv(long n1, long n2, long n3, double r[][n2 + 2][n1 + 2],
                  double u[][n2 + 2][n1 + 2])
{
    double s1[n1 + 2], s2[n1 + 2];
    for (long k = 1; k <= n3; k++)
        for (long j = 1; j <= n2; j++) {
            for (long i = 0; i <= n1 + 1; i++) {
                s1[i] = r[k][j - 1][i] + r[k][j + 1][i] + r[k - 1][j][i] + r[k + 1][j][i];
                s2[i] = r[k - 1][j - 1][i] + r[k - 1][j + 1][i] + r[k + 1][j - 1][i] +
                        r[k + 1][j + 1][i];
            }
            for (long i = 1; i <= n1; i++) {
                double faces = s1[i] + r[k][j][i - 1] + r[k][j][i + 1];
                double edges = s2[i] + s1[i - 1] + s1[i + 1];
                double corners = s2[i - 1] + s2[i + 1];
                u[k][j][i] += S_COEF[0] * r[k][j][i] + S_COEF[1] * faces +
                              S_COEF[2] * edges + S_COEF[3] * corners;
            }
        }
    comm3(n1, n2, n3, u);
}

/* Coarse s = P r: full weighting around fine point (2i-1, 2j-1, 2k-1) of coarse (i, j, k). */
static void rprj3(long n1, long n2, long n3, double r[n3 + 2][n2 + 2][n1 + 2], long m1, long m2,
                  long m3, double s[][m2 + 2][m1 + 2])
{
    double s1[n1 + 2], s2[n1 + 2];
    for (long kc = 1; kc <= m3; kc++) {
        long k = 2 * kc - 1;
        for (long jc = 1; jc <= m2; jc++) {
            long j = 2 * jc - 1;
            for (long i = 0; i <= n1 + 1; i++) {
                s1[i] = r[k][j - 1][i] + r[k][j + 1][i] + r[k - 1][j][i] + r[k + 1][j][i];
                s2[i] = r[k - 1][j - 1][i] + r[k - 1][j + 1][i] + r[k + 1][j - 1][i] +
                        r[k + 1][j + 1][i];
            }
            for (long ic = 1; ic <= m1; ic++) {
                long i = 2 * ic - 1;
                double faces = s1[i] + r[k][j][i - 1] + r[k][j][i + 1];
                double edges = s2[i] + s1[i - 1] + s1[i + 1];
                double corners = s2[i - 1] + s2[i + 1];
                s[kc][jc][ic] = P_COEF[0] * r[k][j][i] + P_COEF[1] * faces +
                                P_COEF[2] * edges + P_COEF[3] * corners;
            }
        }
    }
    comm3(m1, m2, m3, s);
}

/* Fine u = u + Q z: trilinear prolongation of the coarse correction z. */
static void interp(long m1, long m2, long m3, double z[][m2 + 2][m1 + 2], long n1, long n2,
                   long n3, double u[n3 + 2][n2 + 2][n1 + 2])
{
    for (long kc = 1; kc <= m3; kc++)
        for (long jc = 1; jc <= m2; jc++)
            for (long ic = 1; ic <= m1; ic++) {
                long k = 2 * kc - 1, j = 2 * jc - 1, i = 2 * ic - 1;
                double z000 = z[kc][jc][ic], z001 = z[kc][jc][ic + 1];
                double z010 = z[kc][jc + 1][ic], z011 = z[kc][jc + 1][ic + 1];
                double z100 = z[kc + 1][jc][ic], z101 = z[kc + 1][jc][ic + 1];
                double z110 = z[kc + 1][jc + 1][ic], z111 = z[kc + 1][jc + 1][ic + 1];
                u[k][j][i] += z000;
                u[k][j][i + 1] += 0.5 * (z000 + z001);
                u[k][j + 1][i] += 0.5 * (z000 + z010);
                u[k][j + 1][i + 1] += 0.25 * (z000 + z001 + z010 + z011);
                u[k + 1][j][i] += 0.5 * (z000 + z100);
                u[k + 1][j][i + 1] += 0.25 * (z000 + z001 + z100 + z101);
                u[k + 1][j + 1][i] += 0.25 * (z000 + z010 + z100 + z110);
                u[k + 1][j + 1][i + 1] += 0.125 * (z000 + z001 + z010 + z011 + z100 + z101 +
                                                   z110 + z111);
            }
    comm3(n1, n2, n3, u);
}

static void zero3(long n1, long n2, long n3, double u[][n2 + 2][n1 + 2])
{
    for (long k = 0; k <= n3 + 1; k++)
        for (long j = 0; j <= n2 + 1; j++)
            for (long i = 0; i <= n1 + 1; i++)
                u[k][j][i] = 0.0;
}

/* Root mean square over the interior, and the interior sum into *sum. */
static double norm2u3(long n1, long n2, long n3, double r[][n2 + 2][n1 + 2], double *sum)
{
    double s = 0.0, t = 0.0;
    for (long k = 1; k <= n3; k++)
        for (long j = 1; j <= n2; j++)
            for (long i = 1; i <= n1; i++) {
                s += r[k][j][i] * r[k][j][i];
                t += r[k][j][i];
            }
    if (sum)
        *sum = t;
    return sqrt(s / ((double)n1 * (double)n2 * (double)n3));
}

/* One V-cycle on the levels lev[0] (finest) .. lev[nlev-1]; lev[0].r holds v - A u. */
static void mg3p(struct level *lev, int nlev, double *v)
{
    for (int l = 0; l + 1 < nlev; l++)
        rprj3(lev[l].n1, lev[l].n2, lev[l].n3, (void *)lev[l].r, lev[l + 1].n1, lev[l + 1].n2,
              lev[l + 1].n3, (void *)lev[l + 1].r);
    struct level *c = &lev[nlev - 1];
    zero3(c->n1, c->n2, c->n3, (void *)c->u);
    psinv(c->n1, c->n2, c->n3, (void *)c->r, (void *)c->u);
    for (int l = nlev - 2; l >= 1; l--) {
        struct level *f = &lev[l];
        zero3(f->n1, f->n2, f->n3, (void *)f->u);
        interp(lev[l + 1].n1, lev[l + 1].n2, lev[l + 1].n3, (void *)lev[l + 1].u, f->n1,
               f->n2, f->n3, (void *)f->u);
        resid(f->n1, f->n2, f->n3, (void *)f->u, (void *)f->r, (void *)f->r);
        psinv(f->n1, f->n2, f->n3, (void *)f->r, (void *)f->u);
    }
    struct level *f = &lev[0];
    if (nlev > 1)
        interp(lev[1].n1, lev[1].n2, lev[1].n3, (void *)lev[1].u, f->n1, f->n2, f->n3,
               (void *)f->u);
    resid(f->n1, f->n2, f->n3, (void *)f->u, (void *)v, (void *)f->r);
    psinv(f->n1, f->n2, f->n3, (void *)f->r, (void *)f->u);
}

int main(int argc, char **argv)
{
    struct nas_args args = nas_parse(argc, argv, 64, 6);
    int iters = args.iters;

    /* Sides c * 2^(nlev-1), c in 2..5, the largest total within --mb (ties: more levels). */
    double budget = (double)args.mb * 1048576.0;
    long c1 = 2, c2 = 2, c3 = 2;
    int nlev = 1;
    double best = 0.0;
    for (int l = 1; l < MAXLEV; l++)
        for (long a = 2; a <= 5; a++)
            for (long b = a; b <= 5; b++)
                for (long c = b; c <= 5; c++) {
                    double t = total_bytes(c, b, a, l);
                    if (t <= budget && t >= best) {
                        best = t;
                        c1 = c, c2 = b, c3 = a, nlev = l;
                    }
                }
    if (best == 0.0)
        nas_usage(argv[0], "--mb too small");

    struct level lev[MAXLEV];
    char name[32];
    for (int l = 0; l < nlev; l++) {
        long s = 1L << (nlev - 1 - l);
        lev[l].n1 = c1 * s, lev[l].n2 = c2 * s, lev[l].n3 = c3 * s;
        size_t bytes = grid_bytes(lev[l].n1, lev[l].n2, lev[l].n3);
        snprintf(name, sizeof name, "u.%d", l);
        lev[l].u = nas_array(&args, name, bytes);
        snprintf(name, sizeof name, "r.%d", l);
        lev[l].r = nas_array(&args, name, bytes);
    }
    long n1 = lev[0].n1, n2 = lev[0].n2, n3 = lev[0].n3;
    double (*v)[n2 + 2][n1 + 2] = nas_array(&args, "v", grid_bytes(n1, n2, n3));
    double (*u)[n2 + 2][n1 + 2] = (void *)lev[0].u;
    double (*r)[n2 + 2][n1 + 2] = (void *)lev[0].r;
    printf("MG grid %ld x %ld x %ld levels %d iterations %d\n", n1, n2, n3, nlev, iters);

    nas_phase("init");
    zero3(n1, n2, n3, v);
    zero3(n1, n2, n3, u);
    uint64_t seed = NAS_RAND_SEED;
    long placed = 0;
    while (placed < 2 * NPOINTS) {
        long i = 1 + (long)(nas_randlc(&seed, NAS_RAND_A) * (double)n1);
        long j = 1 + (long)(nas_randlc(&seed, NAS_RAND_A) * (double)n2);
        long k = 1 + (long)(nas_randlc(&seed, NAS_RAND_A) * (double)n3);
        if (v[k][j][i] != 0.0)
            continue;
        v[k][j][i] = placed < NPOINTS ? 1.0 : -1.0;
        placed++;
    }
    comm3(n1, n2, n3, v);
    resid(n1, n2, n3, u, v, r);
    double rnm = norm2u3(n1, n2, n3, r, NULL);
    printf("initial residual %.12e\n", rnm);

    int slow = 0;
    double worst = 0.0, usum = 0.0, rnm0 = rnm;
    for (int it = 1; it <= iters; it++) {
        nas_phase("vcycle");
        mg3p(lev, nlev, (void *)v);
        nas_phase("resid");
        resid(n1, n2, n3, u, v, r);
        double rnew = norm2u3(n1, n2, n3, r, NULL);
        double ratio = rnew / rnm;
        printf("iteration %d residual %.12e ratio %.6f\n", it, rnew, ratio);
        if (!(ratio <= 1.0 / MIN_DROP) && !(rnew <= FLOOR * rnm0))
            slow++;
        if (ratio > worst && !(rnew <= FLOOR * rnm0))
            worst = ratio;
        rnm = rnew;
    }
    nas_phase("verify");
    double unorm = norm2u3(n1, n2, n3, u, &usum);
    double umean = usum / ((double)n1 * (double)n2 * (double)n3);
    printf("solution norm %.12e mean %.3e\n", unorm, fabs(umean) < 1e-14 ? 0.0 : umean);

    if (slow)
        return nas_verdict(0, "(%d of %d V-cycles reduced the residual by less than %.1fx; "
                           "worst ratio %.4f)", slow, iters, MIN_DROP, worst);
    if (!(fabs(umean) <= 1e-9 * unorm) || !(unorm > 0.0))
        return nas_verdict(0, "(mean of u %.3e against norm %.3e)", umean, unorm);
    return nas_verdict(1, "");
}
