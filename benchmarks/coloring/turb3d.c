/* turb3d: the time step of SPEC CFP95's 125.turb3d, written from its published
 * description (isotropic homogeneous turbulence in a periodic cube by a pseudospectral
 * method: the nonlinear terms formed pointwise in physical space, three-dimensional FFTs
 * done one dimension at a time, the viscous decay applied in wave space), with OpenMP
 * loops as a parallelizing compiler makes them: the x and y FFTs and the pointwise loops
 * share out z planes, the z FFTs share out y rows, so the same arrays are partitioned two
 * ways in one step (the paper's overlapping partitions).  Each line is copied into a
 * buffer, transformed and copied back, as vectorized FFT codes do.  Six N^3 complex
 * fields (N = 64: 4 MiB each, 24 MiB in all, the paper's Table 1 size) carved out of one
 * block back to back, initialised in parallel.  Every line is transformed alone, so the
 * result is the same for any number of threads.
 * usage: turb3d [N: a power of two, 8..256 [STEPS]]; prints the energy and a checksum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NMAX 256

/* An in-place radix-2 FFT of N complex values (re, im interleaved); SIGN -1 forward. */
static void fft(double *a, int n, int sign)
{
    for (int i = 1, j = 0; i < n; i++) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j) {
            double t0 = a[2 * i], t1 = a[2 * i + 1];
            a[2 * i] = a[2 * j];
            a[2 * i + 1] = a[2 * j + 1];
            a[2 * j] = t0;
            a[2 * j + 1] = t1;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        const double ang = sign * 2 * M_PI / len;
        for (int i = 0; i < n; i += len)
            for (int k = 0; k < len / 2; k++) {
                const double wr = cos(ang * k), wi = sin(ang * k);
                double *x = a + 2 * (i + k), *y = a + 2 * (i + k + len / 2);
                const double yr = y[0] * wr - y[1] * wi, yi = y[0] * wi + y[1] * wr;
                y[0] = x[0] - yr;
                y[1] = x[1] - yi;
                x[0] += yr;
                x[1] += yi;
            }
    }
}

/* The three-dimensional transform of F, one dimension at a time. */
static void fft3(int n, double (*f)[n][n][2], int sign)
{
    #pragma omp parallel for
    for (int k = 0; k < n; k++) /* x lines: z planes shared out */
        for (int j = 0; j < n; j++) {
            double line[2 * NMAX];
            for (int i = 0; i < n; i++) {
                line[2 * i] = f[k][j][i][0];
                line[2 * i + 1] = f[k][j][i][1];
            }
            fft(line, n, sign);
            for (int i = 0; i < n; i++) {
                f[k][j][i][0] = line[2 * i];
                f[k][j][i][1] = line[2 * i + 1];
            }
        }
    #pragma omp parallel for
    for (int k = 0; k < n; k++) /* y lines: z planes shared out */
        for (int i = 0; i < n; i++) {
            double line[2 * NMAX];
            for (int j = 0; j < n; j++) {
                line[2 * j] = f[k][j][i][0];
                line[2 * j + 1] = f[k][j][i][1];
            }
            fft(line, n, sign);
            for (int j = 0; j < n; j++) {
                f[k][j][i][0] = line[2 * j];
                f[k][j][i][1] = line[2 * j + 1];
            }
        }
    #pragma omp parallel for
    for (int j = 0; j < n; j++) /* z lines: y rows shared out */
        for (int i = 0; i < n; i++) {
            double line[2 * NMAX];
            for (int k = 0; k < n; k++) {
                line[2 * k] = f[k][j][i][0];
                line[2 * k + 1] = f[k][j][i][1];
            }
            fft(line, n, sign);
            for (int k = 0; k < n; k++) {
                f[k][j][i][0] = line[2 * k];
                f[k][j][i][1] = line[2 * k + 1];
            }
        }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64, steps = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 8 || n > NMAX || (n & (n - 1)) || steps < 1) {
        fprintf(stderr, "usage: turb3d [N: a power of two, 8..%d [STEPS >= 1]]\n", NMAX);
        return 2;
    }
    const size_t field = (size_t)n * n * n * 2;
    double *pool = malloc(6 * field * sizeof *pool);
    if (!pool) {
        fprintf(stderr, "turb3d: out of memory\n");
        return 1;
    }
    double (*u)[n][n][2] = (double (*)[n][n][2])(pool + 0 * field);
    double (*v)[n][n][2] = (double (*)[n][n][2])(pool + 1 * field);
    double (*w)[n][n][2] = (double (*)[n][n][2])(pool + 2 * field);
    double (*nu)[n][n][2] = (double (*)[n][n][2])(pool + 3 * field);
    double (*nv)[n][n][2] = (double (*)[n][n][2])(pool + 4 * field);
    double (*nw)[n][n][2] = (double (*)[n][n][2])(pool + 5 * field);
    const double h = 2 * M_PI / n, dt = 0.01, visc = 0.05;

    #pragma omp parallel for
    for (int k = 0; k < n; k++) /* a Taylor-Green vortex */
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                const double x = i * h, y = j * h, z = k * h;
                u[k][j][i][0] = sin(x) * cos(y) * cos(z);
                v[k][j][i][0] = -cos(x) * sin(y) * cos(z);
                w[k][j][i][0] = 0.1 * sin(2 * z);
                u[k][j][i][1] = v[k][j][i][1] = w[k][j][i][1] = 0;
                nu[k][j][i][0] = nv[k][j][i][0] = nw[k][j][i][0] = 0;
                nu[k][j][i][1] = nv[k][j][i][1] = nw[k][j][i][1] = 0;
            }

    for (int step = 0; step < steps; step++) {
        /* the nonlinear terms, pointwise in physical space (a rotational form's products) */
        #pragma omp parallel for
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) {
                    nu[k][j][i][0] = v[k][j][i][0] * w[k][j][i][0];
                    nv[k][j][i][0] = w[k][j][i][0] * u[k][j][i][0];
                    nw[k][j][i][0] = u[k][j][i][0] * v[k][j][i][0];
                    nu[k][j][i][1] = nv[k][j][i][1] = nw[k][j][i][1] = 0;
                }
        fft3(n, u, -1);
        fft3(n, v, -1);
        fft3(n, w, -1);
        fft3(n, nu, -1);
        fft3(n, nv, -1);
        fft3(n, nw, -1);
        /* in wave space: the nonlinear kick and the viscous decay of each mode */
        #pragma omp parallel for
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) {
                    const int kx = i <= n / 2 ? i : i - n, ky = j <= n / 2 ? j : j - n;
                    const int kz = k <= n / 2 ? k : k - n;
                    const double decay = exp(-visc * (kx * kx + ky * ky + kz * kz) * dt);
                    for (int c = 0; c < 2; c++) {
                        u[k][j][i][c] = (u[k][j][i][c] + dt * 0.01 * nu[k][j][i][c]) * decay;
                        v[k][j][i][c] = (v[k][j][i][c] + dt * 0.01 * nv[k][j][i][c]) * decay;
                        w[k][j][i][c] = (w[k][j][i][c] + dt * 0.01 * nw[k][j][i][c]) * decay;
                    }
                }
        fft3(n, u, 1);
        fft3(n, v, 1);
        fft3(n, w, 1);
        /* back in physical space: the inverse transform's 1/N^3 */
        const double scale = 1.0 / ((double)n * n * n);
        #pragma omp parallel for
        for (int k = 0; k < n; k++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++)
                    for (int c = 0; c < 2; c++) {
                        u[k][j][i][c] *= scale;
                        v[k][j][i][c] *= scale;
                        w[k][j][i][c] *= scale;
                    }
    }
    double energy = 0, check = 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                const double a = u[k][j][i][0], b = v[k][j][i][0], c = w[k][j][i][0];
                energy += a * a + b * b + c * c;
                check += (i + 1) * a * a + (j + 1) * b * b + (k + 1) * c * c;
            }
    printf("energy %.10f\nchecksum %.10f\n", energy / 2 / ((double)n * n * n), check);
    free(pool);
    return 0;
}
