/* FT: a 3-D FFT PDE solver after the NAS Parallel Benchmarks' FT.
 *
 * A complex field u(z, y, x) of NZ x NY x NX points (each dimension 2^a 3^b 5^c, the
 * product chosen so the arrays fill --mb) is filled with numbers from the NPB generator
 * and transformed forward; each of --iters time steps multiplies the spectrum by the
 * heat-equation factor exp(-4 alpha pi^2 |k|^2) (evolve), transforms a copy back
 * (inverse) and takes NPB's 1024-point checksum.  A 3-D transform is three passes of 1-D
 * transforms over the whole array, one per dimension, in blocks of FFTB lines copied
 * into a small buffer (as NPB does); the forward transform goes x, y, z and the inverse
 * z, y, x, so the phases traverse the data in different orders.  The 1-D transform is a
 * Stockham autosort FFT with radix 2, 3, 4 and 5 butterflies.
 *
 * Main arrays: u0 (the spectrum), u1 (a working copy), u2 (the field after the inverse
 * transform), all complex, and twiddle (the evolution factors): 56 bytes a point.
 *
 * Verification (no NPB tables): before the time steps, the inverse transform of the
 * unevolved spectrum must reproduce the initial field (regenerated from the generator,
 * not stored) to within 1e-10, and Parseval's identity must hold for the forward
 * transform; after every time step Parseval must hold between the evolved spectrum and
 * the field the inverse produced. */
#include "nas_common.h"
#include <complex.h>
#include <math.h>

#define FFTB 16          /* lines transformed together (NPB's fftblock) */
#define ALPHA 1.0e-6     /* NPB's diffusion constant */
#define MAXFAC 64
#define TOL 1e-10
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* One dimension's transform: its length, radices and roots of unity w[k] = e^(-2 pi i k/n). */
struct fft_plan {
    long n;
    int nfac;
    int fac[MAXFAC];
    double complex *w;
};

static inline double complex cmul(double complex a, double complex b)
{
    return CMPLX(creal(a) * creal(b) - cimag(a) * cimag(b),
                 creal(a) * cimag(b) + cimag(a) * creal(b));
}

static int smooth(long n)
{
    while (n % 2 == 0)
        n /= 2;
    while (n % 3 == 0)
        n /= 3;
    while (n % 5 == 0)
        n /= 5;
    return n == 1;
}

static void plan_init(struct fft_plan *p, long n)
{
    p->n = n;
    p->nfac = 0;
    long rest = n;
    static const int radices[] = { 4, 2, 3, 5 };
    for (int k = 0; k < 4; k++)
        while (rest % radices[k] == 0) {
            p->fac[p->nfac++] = radices[k];
            rest /= radices[k];
        }
    p->w = malloc((size_t)n * sizeof *p->w);
    if (!p->w) {
        fprintf(stderr, "ft: no memory for the roots of unity\n");
        exit(2);
    }
    for (long k = 0; k < n; k++) {
        double t = 2.0 * M_PI * (double)k / (double)n;
        p->w[k] = CMPLX(cos(t), -sin(t));
    }
}

/* Transform NB lines of length n held as a[n][FFTB] (sign -1 forward, +1 inverse,
 * unnormalized), using b as scratch; returns the array holding the result. */
static double complex (*fft_lines(const struct fft_plan *p, int sign, int nb,
                                  double complex (*a)[FFTB],
                                  double complex (*b)[FFTB]))[FFTB]
{
    long n = p->n, ns = 1;
    double complex (*src)[FFTB] = a, (*dst)[FFTB] = b;
    double complex ji = sign < 0 ? -I : I;
    for (int f = 0; f < p->nfac; f++) {
        int radix = p->fac[f];
        long m = n / radix, step = n / (ns * radix);
        for (long j = 0; j < m; j++) {
            long jn = j % ns, out = (j / ns) * ns * radix + jn;
            double complex tw[5];
            for (int r = 0; r < radix; r++) {
                double complex t = p->w[jn * r * step];
                tw[r] = sign < 0 ? t : conj(t);
            }
            for (int l = 0; l < nb; l++) {
                double complex v[5];
                for (int r = 0; r < radix; r++)
                    v[r] = r ? cmul(src[j + r * m][l], tw[r]) : src[j][l];
                if (radix == 2) {
                    dst[out][l] = v[0] + v[1];
                    dst[out + ns][l] = v[0] - v[1];
                } else if (radix == 4) {
                    double complex s02 = v[0] + v[2], d02 = v[0] - v[2];
                    double complex s13 = v[1] + v[3], d13 = cmul(ji, v[1] - v[3]);
                    dst[out][l] = s02 + s13;
                    dst[out + ns][l] = d02 + d13;
                    dst[out + 2 * ns][l] = s02 - s13;
                    dst[out + 3 * ns][l] = d02 - d13;
                } else if (radix == 3) {
                    double complex s = v[1] + v[2];
                    double complex t = v[0] - 0.5 * s;
                    double complex u = cmul(ji, 0.86602540378443864676 * (v[1] - v[2]));
                    dst[out][l] = v[0] + s;
                    dst[out + ns][l] = t + u;
                    dst[out + 2 * ns][l] = t - u;
                } else {
                    for (int s = 0; s < radix; s++) {
                        double complex y = 0;
                        for (int r = 0; r < radix; r++) {
                            double complex t = p->w[(r * s % radix) * (n / radix)];
                            y += cmul(v[r], sign < 0 ? t : conj(t));
                        }
                        dst[out + s * ns][l] = y;
                    }
                }
            }
        }
        ns *= radix;
        double complex (*t)[FFTB] = src;
        src = dst;
        dst = t;
    }
    return src;
}

/* 1-D transforms along x (contiguous), out[k][j][i] = scale * FFT_x(in[k][j][.])[i]. */
static void cffts1(int sign, double scale, long nz, long ny, long nx,
                   double complex (*in)[ny][nx], double complex (*out)[ny][nx],
                   const struct fft_plan *p, double complex (*y0)[FFTB],
                   double complex (*y1)[FFTB])
{
    for (long k = 0; k < nz; k++)
        for (long jj = 0; jj < ny; jj += FFTB) {
            int nb = ny - jj < FFTB ? (int)(ny - jj) : FFTB;
            for (int j = 0; j < nb; j++)
                for (long i = 0; i < nx; i++)
                    y0[i][j] = in[k][jj + j][i];
            double complex (*y)[FFTB] = fft_lines(p, sign, nb, y0, y1);
            for (int j = 0; j < nb; j++)
                for (long i = 0; i < nx; i++)
                    out[k][jj + j][i] = scale * y[i][j];
        }
}

/* 1-D transforms along y, in place. */
static void cffts2(int sign, long nz, long ny, long nx, double complex (*x)[ny][nx],
                   const struct fft_plan *p, double complex (*y0)[FFTB],
                   double complex (*y1)[FFTB])
{
    for (long k = 0; k < nz; k++)
        for (long ii = 0; ii < nx; ii += FFTB) {
            int nb = nx - ii < FFTB ? (int)(nx - ii) : FFTB;
            for (long j = 0; j < ny; j++)
                for (int i = 0; i < nb; i++)
                    y0[j][i] = x[k][j][ii + i];
            double complex (*y)[FFTB] = fft_lines(p, sign, nb, y0, y1);
            for (long j = 0; j < ny; j++)
                for (int i = 0; i < nb; i++)
                    x[k][j][ii + i] = y[j][i];
        }
}

/* 1-D transforms along z (a plane apart), in place. */
static void cffts3(int sign, long nz, long ny, long nx, double complex (*x)[ny][nx],
                   const struct fft_plan *p, double complex (*y0)[FFTB],
                   double complex (*y1)[FFTB])
{
    for (long j = 0; j < ny; j++)
        for (long ii = 0; ii < nx; ii += FFTB) {
            int nb = nx - ii < FFTB ? (int)(nx - ii) : FFTB;
            for (long k = 0; k < nz; k++)
                for (int i = 0; i < nb; i++)
                    y0[k][i] = x[k][j][ii + i];
            double complex (*y)[FFTB] = fft_lines(p, sign, nb, y0, y1);
            for (long k = 0; k < nz; k++)
                for (int i = 0; i < nb; i++)
                    x[k][j][ii + i] = y[k][i];
        }
}

/* The grid: 5-smooth dimensions nx >= ny >= nz, nx <= 4 nz, with the largest number of
 * points not above TARGET. */
static void choose_grid(double target, long *nx, long *ny, long *nz)
{
    long list[512];
    int count = 0;
    for (long v = 2; v <= 1L << 16 && count < 512; v++)
        if (smooth(v))
            list[count++] = v;
    long best = 0;
    *nx = *ny = *nz = 2;
    for (int c = 0; c < count; c++)
        for (int b = c; b < count; b++) {
            double rest = target / ((double)list[c] * (double)list[b]);
            if (rest < (double)list[b])
                break;
            for (int a = count - 1; a >= b; a--) {
                if ((double)list[a] > rest)
                    continue;
                long pts = list[a] * list[b] * list[c];
                if (list[a] <= 2 * list[c] && pts > best) {
                    best = pts;
                    *nx = list[a];
                    *ny = list[b];
                    *nz = list[c];
                }
                break;
            }
        }
}

/* The initial field, element by element in memory order, from the NPB generator. */
static inline double complex initial_value(uint64_t *seed)
{
    double re = nas_randlc(seed, NAS_RAND_A);
    double im = nas_randlc(seed, NAS_RAND_A);
    return CMPLX(re, im);
}

static inline double norm2(double complex v)
{
    return creal(v) * creal(v) + cimag(v) * cimag(v);
}

int main(int argc, char **argv)
{
    struct nas_args args = nas_parse(argc, argv, 64, 6);
    int iters = args.iters;
    long nx, ny, nz;
    choose_grid((double)args.mb * 1048576.0 / 56.0, &nx, &ny, &nz);
    if (nx < 8 || ny < 8 || nz < 8)
        nas_usage(argv[0], "--mb too small for a 3-D grid");
    double ntotal = (double)nx * (double)ny * (double)nz;
    size_t cbytes = (size_t)nx * (size_t)ny * (size_t)nz * sizeof(double complex);

    double complex (*u0)[ny][nx] = nas_array(&args, "u0", cbytes);
    double complex (*u1)[ny][nx] = nas_array(&args, "u1", cbytes);
    double complex (*u2)[ny][nx] = nas_array(&args, "u2", cbytes);
    double (*twiddle)[ny][nx] = nas_array(&args, "twiddle", cbytes / 2);
    printf("FT grid %ld x %ld x %ld iterations %d\n", nx, ny, nz, iters);

    struct fft_plan px, py, pz;
    plan_init(&px, nx);
    plan_init(&py, ny);
    plan_init(&pz, nz);
    long nmax = nx > ny ? nx : ny;
    nmax = nmax > nz ? nmax : nz;
    double complex (*y0)[FFTB] = malloc((size_t)nmax * sizeof *y0);
    double complex (*y1)[FFTB] = malloc((size_t)nmax * sizeof *y1);
    if (!y0 || !y1)
        nas_usage(argv[0], "no memory for the line buffers");

    nas_phase("init");
    uint64_t seed = NAS_RAND_SEED;
    double e_in = 0.0;
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++) {
                u1[k][j][i] = initial_value(&seed);
                e_in += norm2(u1[k][j][i]);
            }
    double ap = -4.0 * ALPHA * M_PI * M_PI;
    for (long k = 0; k < nz; k++) {
        long kk = (k + nz / 2) % nz - nz / 2;
        for (long j = 0; j < ny; j++) {
            long jj = (j + ny / 2) % ny - ny / 2;
            for (long i = 0; i < nx; i++) {
                long ii = (i + nx / 2) % nx - nx / 2;
                twiddle[k][j][i] = exp(ap * (double)(ii * ii + jj * jj + kk * kk));
            }
        }
    }

    nas_phase("forward");
    cffts1(-1, 1.0, nz, ny, nx, u1, u0, &px, y0, y1);
    cffts2(-1, nz, ny, nx, u0, &py, y0, y1);
    cffts3(-1, nz, ny, nx, u0, &pz, y0, y1);

    /* Round trip: the inverse of the unevolved spectrum against the regenerated field. */
    nas_phase("roundtrip");
    double e_spec = 0.0;
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++) {
                u1[k][j][i] = u0[k][j][i];
                e_spec += norm2(u0[k][j][i]);
            }
    cffts3(1, nz, ny, nx, u1, &pz, y0, y1);
    cffts2(1, nz, ny, nx, u1, &py, y0, y1);
    cffts1(1, 1.0 / ntotal, nz, ny, nx, u1, u2, &px, y0, y1);
    seed = NAS_RAND_SEED;
    double roundtrip_err = 0.0;
    for (long k = 0; k < nz; k++)
        for (long j = 0; j < ny; j++)
            for (long i = 0; i < nx; i++) {
                double e = cabs(u2[k][j][i] - initial_value(&seed));
                roundtrip_err = e > roundtrip_err ? e : roundtrip_err;
            }
    double parseval_forward = fabs(e_spec - ntotal * e_in) / (ntotal * e_in);
    printf("energy %.12e spectrum %.12e\n", e_in, e_spec);

    double parseval_worst = 0.0;
    for (int it = 1; it <= iters; it++) {
        nas_phase("evolve");
        double e_evolved = 0.0;
        for (long k = 0; k < nz; k++)
            for (long j = 0; j < ny; j++)
                for (long i = 0; i < nx; i++) {
                    u0[k][j][i] = u0[k][j][i] * twiddle[k][j][i];
                    u1[k][j][i] = u0[k][j][i];
                    e_evolved += norm2(u0[k][j][i]);
                }

        nas_phase("inverse");
        cffts3(1, nz, ny, nx, u1, &pz, y0, y1);
        cffts2(1, nz, ny, nx, u1, &py, y0, y1);
        cffts1(1, 1.0 / ntotal, nz, ny, nx, u1, u2, &px, y0, y1);

        nas_phase("checksum");
        double complex chk = 0;
        for (long j = 1; j <= 1024; j++)
            chk += u2[(5 * j) % nz][(3 * j) % ny][j % nx];
        double e_out = 0.0;
        for (long k = 0; k < nz; k++)
            for (long j = 0; j < ny; j++)
                for (long i = 0; i < nx; i++)
                    e_out += norm2(u2[k][j][i]);
        double want = e_evolved / ntotal;
        double dev = fabs(e_out - want) / want;
        parseval_worst = dev > parseval_worst ? dev : parseval_worst;
        printf("iteration %d checksum %.12e %.12e energy %.12e\n", it, creal(chk), cimag(chk),
               e_out);
    }
    free(y0);
    free(y1);
    free(px.w);
    free(py.w);
    free(pz.w);

    if (!(roundtrip_err <= TOL))
        return nas_verdict(0, "(inverse of forward differs from the input by %.3e)",
                           roundtrip_err);
    if (!(parseval_forward <= TOL))
        return nas_verdict(0, "(forward transform breaks Parseval by %.3e)", parseval_forward);
    if (!(parseval_worst <= TOL))
        return nas_verdict(0, "(a time step breaks Parseval by %.3e)", parseval_worst);
    return nas_verdict(1, "");
}
