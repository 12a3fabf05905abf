/* CG: conjugate gradient on a sparse symmetric positive definite matrix in CSR form,
 * inside an inverse power iteration, after the NAS Parallel Benchmarks' CG.
 *
 * The matrix: N rows (a power of two); row i holds the diagonal and the columns i ^ m for
 * M random masks m (distinct, in [1, N)), so the pattern is symmetric and the columns of
 * one row are spread over the whole vector.  The off-diagonal value of the pair {i, j}
 * is a pseudo-random number in (0, 1) that depends only on the pair, and the diagonal is
 * the row's off-diagonal sum plus SHIFT: A = (D + W) + SHIFT * I with D + W a signless
 * Laplacian, so A is symmetric positive definite.  M is chosen so the matrix fills --mb.
 *
 * Each outer iteration (NPB's): solve A z = x by CG (at most CG_ITERS iterations, NPB's
 * 25), zeta = (x . x) / (x . z) (an estimate of A's smallest eigenvalue that improves with
 * every iteration), x = z / ||z||.
 * Every matrix-vector product streams the whole matrix (a, colidx) and gathers p[colidx]
 * indirectly: the matrix is the out-of-core data, the vectors are small.
 *
 * Verification (no NPB tables): after each solve the residual x - A z is recomputed with
 * a different product, the transposed one (scatter: w[colidx[k]] += a[k] * z[i]), which
 * equals A z only if the matrix is symmetric and both products are right.  That true
 * residual and CG's own recurrence residual must both be below RTOL * ||x||. */
#include "nas_common.h"
#include <math.h>

#define CG_ITERS 25
#define SHIFT 1.0
#define RTOL 1e-9

/* The off-diagonal value of the symmetric pair {lo, hi}, lo < hi, in (0, 1). */
static double pair_value(long lo, long hi)
{
    uint64_t z = ((uint64_t)lo << 32 ^ (uint64_t)hi) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

int main(int argc, char **argv)
{
    struct nas_args args = nas_parse(argc, argv, 64, 2);
    int iters = args.iters;

    /* Sizes: per row, M + 1 entries of 12 bytes (value, column), a row pointer and five
     * vectors (x, z, p, q, r); N the largest power of two leaving at least 128 entries. */
    double bytes = (double)args.mb * 1048576.0;
    long n = 64;
    while ((double)n * 2 * (128 * 12 + 48) <= bytes)
        n *= 2;
    long m = (long)((bytes / (double)n - 48) / 12) - 1;
    if (m >= n)
        m = n - 1;
    if (m > (1L << 20))
        nas_usage(argv[0], "--mb too large");
    long nnz = n * (m + 1);

    long *rowstr = nas_array(&args, "rowstr", (size_t)(n + 1) * sizeof(long));
    int *colidx = nas_array(&args, "colidx", (size_t)nnz * sizeof(int));
    double *a = nas_array(&args, "a", (size_t)nnz * sizeof(double));
    double *x = nas_array(&args, "x", (size_t)n * sizeof(double));
    double *z = nas_array(&args, "z", (size_t)n * sizeof(double));
    double *p = nas_array(&args, "p", (size_t)n * sizeof(double));
    double *q = nas_array(&args, "q", (size_t)n * sizeof(double));
    double *r = nas_array(&args, "r", (size_t)n * sizeof(double));
    long *mask = malloc((size_t)m * sizeof(long));
    if (!mask)
        nas_usage(argv[0], "no memory for the masks");
    printf("CG rows %ld nonzeros %ld iterations %d\n", n, nnz, iters);

    nas_phase("makea");
    uint64_t seed = NAS_RAND_SEED;
    for (long k = 0; k < m; k++) {
        long v;
        int fresh;
        do {
            v = 1 + (long)(nas_randlc(&seed, NAS_RAND_A) * (double)(n - 1));
            fresh = v < n;
            for (long l = 0; l < k && fresh; l++)
                fresh = mask[l] != v;
        } while (!fresh);
        mask[k] = v;
    }
    for (long i = 0; i < n; i++) {
        long start = i * (m + 1);
        double offsum = 0.0;
        rowstr[i] = start;
        for (long k = 0; k < m; k++) {
            long j = i ^ mask[k];
            double v = i < j ? pair_value(i, j) : pair_value(j, i);
            colidx[start + k + 1] = (int)j;
            a[start + k + 1] = v;
            offsum += v;
        }
        colidx[start] = (int)i;
        a[start] = offsum + SHIFT;
    }
    rowstr[n] = nnz;
    for (long i = 0; i < n; i++)
        x[i] = 1.0;

    int failures = 0;
    for (int it = 1; it <= iters; it++) {
        nas_phase("cg");
        double rho = 0.0;
        for (long i = 0; i < n; i++) {
            q[i] = 0.0;
            z[i] = 0.0;
            r[i] = x[i];
            p[i] = r[i];
            rho += r[i] * r[i];
        }
        double xnorm = sqrt(rho);
        int cgit;
        for (cgit = 1; cgit <= CG_ITERS; cgit++) {
            for (long i = 0; i < n; i++) {
                double sum = 0.0;
                for (long k = rowstr[i]; k < rowstr[i + 1]; k++)
                    sum += a[k] * p[colidx[k]];
                q[i] = sum;
            }
            double d = 0.0;
            for (long i = 0; i < n; i++)
                d += p[i] * q[i];
            double alpha = rho / d;
            double rho0 = rho;
            rho = 0.0;
            for (long i = 0; i < n; i++) {
                z[i] += alpha * p[i];
                r[i] -= alpha * q[i];
                rho += r[i] * r[i];
            }
            double beta = rho / rho0;
            for (long i = 0; i < n; i++)
                p[i] = r[i] + beta * p[i];
            if (sqrt(rho) <= 0.01 * RTOL * xnorm)
                break;
        }

        /* The true residual x - A z with the transposed product (into q). */
        nas_phase("residual");
        for (long i = 0; i < n; i++)
            q[i] = 0.0;
        for (long i = 0; i < n; i++)
            for (long k = rowstr[i]; k < rowstr[i + 1]; k++)
                q[colidx[k]] += a[k] * z[i];
        double rnorm = 0.0, xz = 0.0, znorm = 0.0;
        for (long i = 0; i < n; i++) {
            double d = x[i] - q[i];
            rnorm += d * d;
            xz += x[i] * z[i];
            znorm += z[i] * z[i];
        }
        rnorm = sqrt(rnorm);
        znorm = sqrt(znorm);
        double zeta = xnorm * xnorm / xz;
        for (long i = 0; i < n; i++)
            x[i] = z[i] / znorm;
        printf("iteration %d cg %d zeta %.12e rnorm %.12e\n", it, cgit < CG_ITERS ? cgit : CG_ITERS,
               zeta, rnorm / xnorm);
        failures += !(rnorm <= RTOL * xnorm) || !(sqrt(rho) <= RTOL * xnorm);
    }
    free(mask);

    if (failures)
        return nas_verdict(0, "(%d of %d solves left a residual above %.0e)", failures, iters,
                           RTOL);
    return nas_verdict(1, "");
}
