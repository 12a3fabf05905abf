/* swim: the shallow water model of SPEC CFP95's 102.swim, written from its published
 * description (Sadourny's finite-difference scheme on a periodic staggered grid: mass
 * fluxes, vorticity and height from u, v, p; the new time level from them; a time
 * filter), with OpenMP loops over rows as a parallelizing compiler makes them.
 * Fourteen (N+1) x (N+1) arrays of floats (the paper's Table 1: N = 512, 14 MB) carved
 * out of one block back to back, initialised in parallel.
 * usage: swim [N [STEPS]]; prints checksums of p, u and v. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 512, steps = argc > 2 ? atoi(argv[2]) : 10;
    if (n < 8 || steps < 1) {
        fprintf(stderr, "usage: swim [N >= 8 [STEPS >= 1]]\n");
        return 2;
    }
    const int m = n + 1; /* points per row, the last a periodic copy of the first */
    size_t plane = (size_t)m * (size_t)m;
    float *pool = malloc(14 * plane * sizeof *pool);
    if (!pool) {
        fprintf(stderr, "swim: out of memory\n");
        return 1;
    }
    float (*u)[m] = (float (*)[m])(pool + 0 * plane), (*v)[m] = (float (*)[m])(pool + 1 * plane);
    float (*p)[m] = (float (*)[m])(pool + 2 * plane), (*unew)[m] = (float (*)[m])(pool + 3 * plane);
    float (*vnew)[m] = (float (*)[m])(pool + 4 * plane), (*pnew)[m] = (float (*)[m])(pool + 5 * plane);
    float (*uold)[m] = (float (*)[m])(pool + 6 * plane), (*vold)[m] = (float (*)[m])(pool + 7 * plane);
    float (*pold)[m] = (float (*)[m])(pool + 8 * plane), (*cu)[m] = (float (*)[m])(pool + 9 * plane);
    float (*cv)[m] = (float (*)[m])(pool + 10 * plane), (*z)[m] = (float (*)[m])(pool + 11 * plane);
    float (*h)[m] = (float (*)[m])(pool + 12 * plane), (*psi)[m] = (float (*)[m])(pool + 13 * plane);
    const float dt = 90, dx = 1e5f, dy = 1e5f, a = 1e6f, alpha = 0.001f;
    const float fsdx = 4 / dx, fsdy = 4 / dy, tdts8 = dt / 8, tdtsdx = dt / dx,
                tdtsdy = dt / dy;
    const float pi = 3.14159265f, di = 2 * pi / n, dj = 2 * pi / n;

    #pragma omp parallel for
    for (int j = 0; j < m; j++)
        for (int i = 0; i < m; i++) {
            psi[j][i] = a * sinf((i + 0.5f) * di) * sinf((j + 0.5f) * dj);
            p[j][i] = 50000 + 2500 * (cosf(2 * i * di) + cosf(2 * j * dj));
            u[j][i] = v[j][i] = unew[j][i] = vnew[j][i] = pnew[j][i] = 0;
            cu[j][i] = cv[j][i] = z[j][i] = h[j][i] = 0;
        }
    #pragma omp parallel for
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            u[j][i + 1] = -(psi[j + 1][i + 1] - psi[j][i + 1]) / dy;
            v[j + 1][i] = (psi[j + 1][i + 1] - psi[j + 1][i]) / dx;
        }
    #pragma omp parallel for
    for (int j = 0; j < m; j++)
        for (int i = 0; i < m; i++) {
            uold[j][i] = u[j][i];
            vold[j][i] = v[j][i];
            pold[j][i] = p[j][i];
        }

    for (int s = 0; s < steps; s++) {
        /* mass fluxes, vorticity, height */
        #pragma omp parallel for
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                cu[j][i + 1] = 0.5f * (p[j][i + 1] + p[j][i]) * u[j][i + 1];
                cv[j + 1][i] = 0.5f * (p[j + 1][i] + p[j][i]) * v[j + 1][i];
                z[j + 1][i + 1] = (fsdx * (v[j + 1][i + 1] - v[j + 1][i]) -
                                   fsdy * (u[j + 1][i + 1] - u[j][i + 1])) /
                                  (p[j][i] + p[j][i + 1] + p[j + 1][i + 1] + p[j + 1][i]);
                h[j][i] = p[j][i] + 0.25f * (u[j][i + 1] * u[j][i + 1] + u[j][i] * u[j][i] +
                                             v[j + 1][i] * v[j + 1][i] + v[j][i] * v[j][i]);
            }
        for (int k = 0; k < n; k++) { /* periodic boundaries */
            cu[k][0] = cu[k][n];
            cv[n][k + 1] = cv[0][k + 1];
            z[k + 1][0] = z[k + 1][n];
            z[0][k + 1] = z[n][k + 1];
            h[k][n] = h[k][0];
            h[n][k] = h[0][k];
        }
        cu[n][0] = cu[0][n];
        cv[0][n] = cv[n][0];
        z[0][0] = z[n][n];
        h[n][n] = h[0][0];
        /* the new time level */
        #pragma omp parallel for
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                unew[j][i + 1] = uold[j][i + 1] +
                                 tdts8 * (z[j + 1][i + 1] + z[j][i + 1]) *
                                     (cv[j + 1][i + 1] + cv[j + 1][i] + cv[j][i] + cv[j][i + 1]) -
                                 tdtsdx * (h[j][i + 1] - h[j][i]);
                vnew[j + 1][i] = vold[j + 1][i] -
                                 tdts8 * (z[j + 1][i + 1] + z[j + 1][i]) *
                                     (cu[j + 1][i + 1] + cu[j + 1][i] + cu[j][i] + cu[j][i + 1]) -
                                 tdtsdy * (h[j + 1][i] - h[j][i]);
                pnew[j][i] = pold[j][i] - tdtsdx * (cu[j][i + 1] - cu[j][i]) -
                             tdtsdy * (cv[j + 1][i] - cv[j][i]);
            }
        for (int k = 0; k < n; k++) {
            unew[k][0] = unew[k][n];
            vnew[n][k + 1] = vnew[0][k + 1];
            pnew[k][n] = pnew[k][0];
            pnew[n][k] = pnew[0][k];
        }
        unew[n][0] = unew[0][n];
        vnew[0][n] = vnew[n][0];
        pnew[n][n] = pnew[0][0];
        /* the time filter */
        #pragma omp parallel for
        for (int j = 0; j < m; j++)
            for (int i = 0; i < m; i++) {
                uold[j][i] = u[j][i] + alpha * (unew[j][i] - 2 * u[j][i] + uold[j][i]);
                vold[j][i] = v[j][i] + alpha * (vnew[j][i] - 2 * v[j][i] + vold[j][i]);
                pold[j][i] = p[j][i] + alpha * (pnew[j][i] - 2 * p[j][i] + pold[j][i]);
                u[j][i] = unew[j][i];
                v[j][i] = vnew[j][i];
                p[j][i] = pnew[j][i];
            }
    }
    double sp = 0, su = 0, sv = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            sp += p[j][i];
            su += fabsf(u[j][i]);
            sv += fabsf(v[j][i]);
        }
    printf("pcheck %.6e\nucheck %.6e\nvcheck %.6e\n", sp, su, sv);
    free(pool);
    return 0;
}
