/* trap: loops split into strips (continue, break in a switch or inner loop, the index
 * read after the loop and in the body, unsigned indices, steps of 3 and -2, unbraced
 * bodies, a split loop inside a hinted one) and loops that must not be (a break that
 * leaves the loop, also from a statement expression in a nested header; an index
 * changed through a pointer; an unsigned index counting down to wrap around; a bound a
 * cleanup attribute changes) and a range of all of long, left by a return.  Bounds
 * read from a struct through a pointer: split where the body only calls a helper that
 * computes and counts into a private static array; not where a store through a
 * `long *`, a called function, or a struct assignment to an array whose address was
 * taken changes the bound, nor where a union's other member, a function in a cycle of
 * calls, a struct assignment to an array with a pointer into its member, a struct
 * written whole by name, or a store through a pointer kept in a static array does */
#include <stdio.h>
#include <stdlib.h>

#define N (3 * 65536 + 17)

static double a[N], b[N];

static double with_continue(long n)
{
    double s = 0;
    long i;
    for (i = 0; i < n; i++) {
        if (i % 7 == 3)
            continue;
        switch (i % 5) {
        case 0:
            s += a[i];
            break;
        default:
            s -= 0.5 * a[i];
            break;
        }
        for (int r = 0; r < 4; r++)
            if (r == (int)(i % 4))
                break;
        s += b[i] * (double)(i & 15);
    }
    return s + (double)i;   /* the index after the loop */
}

static double unsigned_steps(unsigned long n)
{
    double s = 0;
    for (unsigned long k = 0; k < n; k++)
        s += a[k] * (double)(k % 3);
    for (unsigned u = 5; u < (unsigned)n; u += 3)
        s += b[u];
    return s;
}

static double down_by_two(long n)
{
    double s = 0;
    long j;
    for (j = n - 1; j >= 1; j -= 2)
        s += a[j] - b[j - 1];
    return s + (double)j;
}

static double pointer_walk(const double *p, const double *e)
{
    double s = 0;
    for (const double *q = p; q < e; q++)
        s += *q * 0.25;
    return s;
}

/* A break leaves the loop: not split. */
static long first_over(long n, double t)
{
    long i;
    for (i = 0; i < n; i++)
        if (a[i] > t)
            break;
    return i;
}

/* A statement expression's break in a nested switch leaves the loop. */
static double stmt_expr_break(long n)
{
    double s = 0;
    long i;
    for (i = 0; i < n; i++) {
        switch (({ if (i == n / 2) break; (int)(i & 1); })) {
        case 0:
            s += a[i];
            break;
        default:
            s -= b[i];
        }
    }
    return s + (double)i;
}

/* The index changes through a pointer to it as well as by its increment. */
static double index_by_pointer(long n)
{
    double s = 0;
    long i, *pi = &i;
    for (i = 0; i < n; i++) {
        s += a[i];
        if (a[i] > 0.999)
            *pi += 100;
    }
    return s + (double)i;
}

/* An unsigned index counting down until it wraps around past the bound. */
static double unsigned_countdown(unsigned long n)
{
    double s = 0;
    unsigned long i;
    for (i = n - 1; i < n; i--)
        s += a[i];
    return s + (double)(i == (unsigned long)-1);
}

/* The whole range of long (rest + 1 wraps to 0), left by a return; nested, so that the
 * nest's entry hints it. */
static double full_range(long lo, long hi)
{
    double s = 0;
    for (long k = 0; k < 2; k++)
        for (long i = lo - 1 + k; i <= hi; i++) {
            s += a[i - lo + 1];
            if (i - lo == 100000)
                return s;
        }
    return -1;
}

/* A cleanup attribute calls tick at the end of every iteration: it lowers the bound. */
static long bound, ticks;
static void tick(int *p)
{
    (void)p;
    if (++ticks % 4096 == 7)
        bound -= 1000;
}

static double cleanup_bound(void)
{
    double s = 0;
    long i;
    for (i = 0; i < bound; i++) {
        int guard __attribute__((cleanup(tick))) = 0;
        s += a[i] + guard;
    }
    return s + (double)i;
}

static double nested(long rows, long cols)
{
    double (*m)[cols] = (double (*)[cols])a;
    double s = 0;
    for (long r = 0; r < rows; r++) {
        for (long c = 0; c < cols; c++) {
            if (c == r)
                continue;
            s += m[r][c];
        }
        s *= 0.999;
    }
    return s;
}

struct rec {
    long n;
    double scale;
};

static long hist[8];

static int bin_of(double v)
{
    int k = (int)(v * 8.0);
    return k < 0 ? 0 : k > 7 ? 7 : k;
}

/* Split: bin_of writes nothing of the caller's, hist is private (only subscripted). */
static double member_bound(const struct rec *r)
{
    double s = 0;
    long i;
    for (i = 0; i < r->n; i++) {
        s += a[i] * r->scale;
        hist[bin_of(a[i])]++;
    }
    return s + (double)i;
}

/* Not split: *cnt is r->n, lowered through a long pointer. */
static double member_bound_stored(struct rec *r, long *cnt)
{
    double s = 0;
    long i;
    for (i = 0; i < r->n; i++) {
        s += a[i];
        if (a[i] > 0.999)
            *cnt -= 500;
    }
    return s + (double)i;
}

static void shrink(struct rec *r)
{
    r->n -= 300;
}

/* Not split: the function called changes the bound. */
static double member_bound_called(struct rec *r)
{
    double s = 0;
    long i;
    for (i = 0; i < r->n; i++) {
        s += b[i];
        if (b[i] > 0.998)
            shrink(r);
    }
    return s + (double)i;
}

static struct rec recs[2];

/* Not split: recs[0] is *r (its address was taken), assigned whole in the body. */
static double member_bound_assigned(const struct rec *r)
{
    double s = 0;
    long i;
    for (i = 0; i < r->n; i++) {
        s += a[i];
        if (i == 40000)
            recs[0] = recs[1];
    }
    return s + (double)i;
}

union word {
    long n;
    double f;
};

/* Not split: the double stored is the bound's bytes. */
static double member_bound_union(union word *u)
{
    double s = 0;
    long i;
    for (i = 0; i < u->n; i++) {
        s += a[i];
        if (i == 30000)
            u->f = 0.0;
    }
    return s + (double)i;
}

struct in { long n; };
struct box { struct in in[1]; };
static struct box boxes[2];
static struct in *inner;

static void cycle_b(int k);
static void cycle_a(int k)
{
    cycle_b(k);
    if (k == 0)
        inner->n = 20000;
}
static void cycle_b(int k)
{
    if (k > 0)
        cycle_a(k - 1);
}

/* Not split: cycle_a (asked about first) and cycle_b store through inner. */
static double member_bound_cycle(void)
{
    double s = 0;
    long i;
    for (i = 0; i < inner->n; i++) {
        s += a[i];
        if (i == 100)
            cycle_a(1);
    }
    for (i = 0; i < inner->n + 50000; i++) {
        s += b[i];
        if (i == 100)
            cycle_b(1);
    }
    return s + (double)i;
}

/* Not split: inner points into boxes[0], assigned whole. */
static double member_bound_box(void)
{
    double s = 0;
    long i;
    for (i = 0; i < inner->n; i++) {
        s += a[i];
        if (i == 5000)
            boxes[0] = boxes[1];
    }
    return s + (double)i;
}

static struct rec whole_rec, short_rec = {9000, 1.0};
static long *held[1];

/* Not split: r is &whole_rec, written whole by name. */
static double member_bound_whole(const struct rec *r)
{
    double s = 0;
    long i;
    for (i = 0; i < r->n; i++) {
        s += a[i];
        if (i == 3000)
            whole_rec = short_rec;
    }
    return s + (double)i;
}

/* Not split: held[0] points to r->n. */
static double member_bound_held(struct rec *r)
{
    double s = 0;
    long i;
    held[0] = &r->n;
    for (i = 0; i < r->n; i++) {
        s += b[i];
        if (i == 4000)
            held[0][0] = 6000;
    }
    return s + (double)i;
}

int main(int argc, char **argv)
{
    (void)argv;
    for (long i = 0; i < N; i++) {
        a[i] = (double)((i * 37 + argc) % 1009) / 1009.0;
        b[i] = (double)((i * 11) % 997) / 997.0;
    }
    printf("%.6f\n", with_continue(N - argc));
    printf("%.6f\n", unsigned_steps(N - 5));
    printf("%.6f\n", down_by_two(N - 2));
    printf("%.6f\n", pointer_walk(a + 3, a + N - 1));
    printf("%ld\n", first_over(N, 0.9985));
    printf("%.6f\n", nested(300, (N - 1) / 300));
    printf("%.6f %.6f %.6f\n", stmt_expr_break(N - argc), index_by_pointer(N),
           unsigned_countdown(N - 1));
    bound = N - argc;
    printf("%.6f %.6f\n", full_range(-0x7fffffffffffffffL - 1 + 1, 0x7fffffffffffffffL),
           cleanup_bound());
    struct rec r = {N - argc, 0.5};
    printf("%.6f", member_bound(&r));
    for (int k = 0; k < 8; k++)
        printf(" %ld", hist[k]);
    printf("\n%.6f", member_bound_stored(&r, &r.n));
    r.n = N - argc;
    printf(" %.6f\n", member_bound_called(&r));
    recs[0].n = N - argc;
    recs[1].n = 50000 + argc;
    printf("%.6f\n", member_bound_assigned(&recs[0]));
    union word w = {N - argc};
    inner = boxes[0].in;
    boxes[0].in[0].n = N - argc;
    boxes[1].in[0].n = 7000 + argc;
    printf("%.6f %.6f", member_bound_union(&w), member_bound_box());
    boxes[0].in[0].n = N - 100;
    printf(" %.6f\n", member_bound_cycle());
    whole_rec.n = N - argc;
    printf("%.6f", member_bound_whole(&whole_rec));
    whole_rec.n = N - argc;
    printf(" %.6f\n", member_bound_held(&whole_rec));
    return 0;
}
