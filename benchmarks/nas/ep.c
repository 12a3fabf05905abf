/* EP: the "embarrassingly parallel" Monte Carlo kernel of the NAS Parallel Benchmarks,
 * in the form the paper ran (EMBAR: one large array of random numbers referenced again
 * and again).
 *
 * Each of --iters batches fills the array x (2 * NP doubles, --mb of them) with the next
 * uniform numbers of the NPB generator, then reads it as NP pairs: a pair (x1, x2)
 * mapped to [-1, 1]^2 is accepted when t = x1^2 + x2^2 <= 1 and turned into two
 * independent Gaussian deviates by the Marsaglia polar method, X = x1 sqrt(-2 ln t / t),
 * Y = x2 sqrt(-2 ln t / t); the deviates are summed (sx, sy) and counted in square
 * annuli l <= max(|X|, |Y|) < l + 1 (q[l]).
 *
 * Verification (no NPB tables): the annulus counts sum to the accepted pairs; a second,
 * independent accumulation regenerates the same random sequence straight from the
 * generator (no array) and must give the same counts and sums; and the results must be
 * statistically sane (acceptance within 6 sigma of pi/4, sums within 6 sigma of 0). */
#include "nas_common.h"
#include <math.h>

#define NQ 10

struct tally {
    long q[NQ];
    long accepted;
    double sx, sy;
};

/* One pair into the tally (shared by the array pass and the independent recomputation,
 * so both apply exactly the same arithmetic). */
static inline void tally_pair(struct tally *t, double u1, double u2)
{
    double x1 = 2.0 * u1 - 1.0, x2 = 2.0 * u2 - 1.0;
    double t1 = x1 * x1 + x2 * x2;
    if (t1 > 0.0 && t1 <= 1.0) {
        double t2 = sqrt(-2.0 * log(t1) / t1);
        double t3 = x1 * t2, t4 = x2 * t2;
        double big = fabs(t3) > fabs(t4) ? fabs(t3) : fabs(t4);
        int l = big < NQ - 1 ? (int)big : NQ - 1;
        t->q[l]++;
        t->accepted++;
        t->sx += t3;
        t->sy += t4;
    }
}

int main(int argc, char **argv)
{
    struct nas_args args = nas_parse(argc, argv, 64, 8);
    int iters = args.iters;
    long np = (long)(args.mb * 1048576 / (2 * sizeof(double)));

    double *x = nas_array(&args, "x", (size_t)np * 2 * sizeof(double));
    printf("EP pairs per batch %ld batches %d\n", np, iters);

    struct tally t = { { 0 }, 0, 0.0, 0.0 };
    uint64_t seed = NAS_RAND_SEED;
    for (int it = 1; it <= iters; it++) {
        nas_phase("generate");
        for (long i = 0; i < 2 * np; i++)
            x[i] = nas_randlc(&seed, NAS_RAND_A);

        nas_phase("gauss");
        for (long i = 0; i < np; i++)
            tally_pair(&t, x[2 * i], x[2 * i + 1]);
        printf("batch %d accepted %ld sx %.12e sy %.12e\n", it, t.accepted, t.sx, t.sy);
    }

    nas_phase("verify");
    struct tally v = { { 0 }, 0, 0.0, 0.0 };
    uint64_t vseed = NAS_RAND_SEED;
    for (long i = 0; i < (long)iters * np; i++) {
        double u1 = nas_randlc(&vseed, NAS_RAND_A);
        double u2 = nas_randlc(&vseed, NAS_RAND_A);
        tally_pair(&v, u1, u2);
    }

    long counted = 0;
    int same = v.accepted == t.accepted && fabs(v.sx - t.sx) <= 1e-9 * (1.0 + fabs(t.sx))
               && fabs(v.sy - t.sy) <= 1e-9 * (1.0 + fabs(t.sy));
    for (int l = 0; l < NQ; l++) {
        printf("annulus %d count %ld\n", l, t.q[l]);
        counted += t.q[l];
        same = same && v.q[l] == t.q[l];
    }
    printf("sums sx %.12e sy %.12e accepted %ld\n", t.sx, t.sy, t.accepted);

    double pairs = (double)iters * (double)np, p = atan(1.0);
    double accept_sigma = sqrt(pairs * p * (1.0 - p));
    double sum_sigma = sqrt((double)t.accepted);
    if (counted != t.accepted)
        return nas_verdict(0, "(annulus counts sum to %ld, not %ld)", counted, t.accepted);
    if (!same)
        return nas_verdict(0, "(the recomputation from the generator disagrees)");
    if (!(fabs((double)t.accepted - pairs * p) <= 6 * accept_sigma))
        return nas_verdict(0, "(acceptance %ld of %.0f pairs is not near pi/4)", t.accepted,
                           pairs);
    if (!(fabs(t.sx) <= 6 * sum_sigma && fabs(t.sy) <= 6 * sum_sigma))
        return nas_verdict(0, "(Gaussian sums far from zero)");
    return nas_verdict(1, "");
}
