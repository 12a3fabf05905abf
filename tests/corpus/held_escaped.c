/* trap: an index held in a local (`int j = idx[b]; x[j]`) is an indirect reference, and locals whose address is taken are invariant only where nothing may write them: a bound lowered through a pointer mid-loop, a struct's array swapped by a call, and a held index overwritten must still print what the original prints (a look-ahead past the lowered bound reads outside idx) */
#include <stdio.h>
#include <stdlib.h>

struct vec { double *v; int n; };

static double other[1 << 14];

static void swap_in(struct vec *s, int i)
{
    if (i == 100)
        s->v = other;
}

int main(void) {
    int n = 1 << 14;
    int *pn = &n;
    int *idx = malloc(1000 * sizeof *idx);   /* only 1000: n is lowered to 1000 below */
    double *x = malloc((size_t)n * sizeof *x);
    struct vec s;
    struct vec *ps = &s;
    s.v = malloc((size_t)n * sizeof *s.v);
    s.n = n;
    for (int i = 0; i < n; i++) { x[i] = i * 0.5; s.v[i] = i; other[i] = -i; }
    for (int i = 0; i < 1000; i++) idx[i] = (int)((i * 7919L) % n);
    double t = 0;
    /* n lowered through a pointer on the first iteration: the loop reads idx[0..999] */
    for (int i = 0; i < n; i++) {
        int j = idx[i];
        t += x[j];
        if (i == 0) *pn = 1000;
    }
    /* the held index replaced on odd iterations */
    int k;
    for (int i = 0; i < n; i++) { k = idx[i]; if (i & 1) k = i; t += x[k]; }
    /* s.v swapped by a call mid-loop; then read where nothing may change it */
    double *keep = s.v;
    for (int i = 0; i < n; i++) { t += ps->v[i]; swap_in(&s, i); }
    for (int i = 0; i < n; i++) t += s.v[i];
    printf("%.3f %d\n", t, n);
    free(keep); free(x); free(idx);
    return 0;
}
