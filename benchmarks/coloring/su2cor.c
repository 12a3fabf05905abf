/* su2cor: the gauge-field update of SPEC CFP95's 103.su2cor, written from its published
 * description (quantum chromodynamics on a four-dimensional lattice: the gauge field's
 * SU(2) link matrices updated by a Monte Carlo sweep, site by site in checkerboard order,
 * each link from the "staple" of its neighbours, which the program finds through
 * neighbour tables), with OpenMP loops over one colour's sites as a parallelizing
 * compiler makes them.  The lattice is L^3 x 2L sites (L = 16: 131,072 sites); per site
 * four links of four doubles (an SU(2) matrix as a unit quaternion, 16 MiB in all), the
 * up and down neighbour tables (4 MiB), the staples (4 MiB), the plaquettes (1 MiB) and
 * the checkerboard's site list (0.5 MiB): 25.5 MiB (the paper's Table 1: 23 MB), carved
 * out of one block back to back and initialised in parallel.  Every access to the links goes through the site list or the neighbour
 * tables: which pages a thread touches is known only at run time (the paper's su2cor,
 * whose arrays no summary described).  A site's new links depend only on sites of the
 * other colour, so the result is the same for any number of threads.
 * usage: su2cor [L [SWEEPS]]; prints the mean plaquette and a checksum. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* q = a b for quaternions (a0, a1, a2, a3): the product of the SU(2) matrices */
static void qmul(const double *a, const double *b, double *q)
{
    q[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    q[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    q[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    q[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* q = a b^-1 (the inverse of a unit quaternion is its conjugate) */
static void qmul_inv(const double *a, const double *b, double *q)
{
    const double c[4] = {b[0], -b[1], -b[2], -b[3]};
    qmul(a, c, q);
}

/* q = a^-1 b */
static void qinv_mul(const double *a, const double *b, double *q)
{
    const double c[4] = {a[0], -a[1], -a[2], -a[3]};
    qmul(c, b, q);
}

/* a pseudo-random number in [-1, 1) from the site, link and sweep: the same in any thread */
static double noise(uint64_t s, int mu, int sweep, int k)
{
    uint64_t x = s * 0x9e3779b97f4a7c15ull ^ (uint64_t)(mu * 4 + k) << 40 ^ (uint64_t)sweep << 52;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 33;
    return (double)(x >> 11) / 4503599627370496.0 - 1.0;
}

int main(int argc, char **argv)
{
    int l = argc > 1 ? atoi(argv[1]) : 16, sweeps = argc > 2 ? atoi(argv[2]) : 4;
    if (l < 2 || l % 2 || l > 64 || sweeps < 1) {
        fprintf(stderr, "usage: su2cor [L: even, 2..64 [SWEEPS >= 1]]\n");
        return 2;
    }
    const int t = 2 * l;
    const long v = (long)l * l * l * t, half = v / 2;
    const size_t bytes = (size_t)v * (16 + 4 + 1) * sizeof(double) + (size_t)v * 9 * sizeof(int);
    char *pool = malloc(bytes);
    if (!pool) {
        fprintf(stderr, "su2cor: out of memory\n");
        return 1;
    }
    double (*u)[4][4] = (double (*)[4][4])pool;            /* link (site, direction) */
    double (*stap)[4] = (double (*)[4])(u + v);             /* the staple of one link */
    double *plaq = (double *)(stap + v);                    /* a site's plaquettes */
    int (*up)[4] = (int (*)[4])(plaq + v);                  /* the neighbour +mu */
    int (*dn)[4] = (int (*)[4])(up + v);                    /* the neighbour -mu */
    int *sites = (int *)(dn + v);                           /* even sites, then odd */

    const int dim[4] = {l, l, l, t};
    #pragma omp parallel for
    for (long s = 0; s < v; s++) {
        long c[4] = {s % l, s / l % l, s / ((long)l * l) % l, s / ((long)l * l * l)};
        long stride = 1;
        for (int mu = 0; mu < 4; mu++) {
            long p = (c[mu] + 1) % dim[mu] - c[mu], m = (c[mu] + dim[mu] - 1) % dim[mu] - c[mu];
            up[s][mu] = (int)(s + p * stride);
            dn[s][mu] = (int)(s + m * stride);
            stride *= dim[mu];
            /* a cold start near the identity */
            double a = 1.0, b = 0.1 * noise((uint64_t)s, mu, -1, 1), d = 0.1 * noise((uint64_t)s, mu, -1, 2);
            double e = 0.1 * noise((uint64_t)s, mu, -1, 3), n = sqrt(a * a + b * b + d * d + e * e);
            u[s][mu][0] = a / n;
            u[s][mu][1] = b / n;
            u[s][mu][2] = d / n;
            u[s][mu][3] = e / n;
            stap[s][mu] = 0;
        }
        plaq[s] = 0;
    }
    for (long s = 0, even = 0, odd = half; s < v; s++) { /* the checkerboard's site list */
        long c = s % l + s / l % l + s / ((long)l * l) % l + s / ((long)l * l * l);
        if (c % 2 == 0)
            sites[even++] = (int)s;
        else
            sites[odd++] = (int)s;
    }

    for (int sweep = 0; sweep < sweeps; sweep++) {
        for (int mu = 0; mu < 4; mu++)
            for (int colour = 0; colour < 2; colour++) {
                /* each site of one colour: its link mu from the staples around it */
                #pragma omp parallel for
                for (long k = 0; k < half; k++) {
                    const long s = sites[colour * half + k];
                    double st[4] = {0, 0, 0, 0}, a[4], b[4];
                    for (int nu = 0; nu < 4; nu++) {
                        if (nu == mu)
                            continue;
                        /* forward: U_nu(s+mu) U_mu(s+nu)^-1 U_nu(s)^-1 */
                        qmul_inv(u[up[s][mu]][nu], u[up[s][nu]][mu], a);
                        qmul_inv(a, u[s][nu], b);
                        for (int c = 0; c < 4; c++)
                            st[c] += b[c];
                        /* backward: U_nu(s+mu-nu)^-1 U_mu(s-nu)^-1 U_nu(s-nu), the
                         * first two as (U_mu(s-nu) U_nu(s+mu-nu))^-1 */
                        const long sd = dn[s][nu];
                        qmul(u[sd][mu], u[up[sd][mu]][nu], a);
                        qinv_mul(a, u[sd][nu], b);
                        for (int c = 0; c < 4; c++)
                            st[c] += b[c];
                    }
                    /* the new link: the staple's direction (conjugated) with a random kick */
                    double q[4] = {st[0], -st[1], -st[2], -st[3]}, n = 0;
                    for (int c = 0; c < 4; c++) {
                        q[c] += 0.5 * noise((uint64_t)s, mu, sweep, c);
                        n += q[c] * q[c];
                    }
                    n = sqrt(n);
                    for (int c = 0; c < 4; c++) {
                        stap[s][c] = st[c];
                        u[s][mu][c] = n > 0 ? q[c] / n : (c == 0);
                    }
                }
            }
        /* the measurement: each site's six plaquettes (their traces) */
        #pragma omp parallel for
        for (long s = 0; s < v; s++) {
            double sum = 0, a[4], b[4];
            for (int mu = 0; mu < 4; mu++)
                for (int nu = mu + 1; nu < 4; nu++) {
                    qmul(u[s][mu], u[up[s][mu]][nu], a);
                    qmul_inv(a, u[up[s][nu]][mu], b);
                    qmul_inv(b, u[s][nu], a);
                    sum += a[0];
                }
            plaq[s] = sum / 6;
        }
    }
    double mean = 0, check = 0;
    for (long s = 0; s < v; s++) {
        mean += plaq[s];
        for (int mu = 0; mu < 4; mu++)
            check += u[s][mu][0] + 0.5 * u[s][mu][1] + 0.25 * u[s][mu][2] + 0.125 * u[s][mu][3];
    }
    printf("plaquette %.10f\nchecksum %.10f\n", mean / (double)v, check);
    free(pool);
    return 0;
}
