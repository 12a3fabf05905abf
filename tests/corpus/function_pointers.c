/* trap: loops in functions called through pointers (tables, callbacks, qsort comparators) */
#include <stdio.h>
#include <stdlib.h>

typedef double (*kernel)(const double *, int);

static double k_sum(const double *a, int n) { double s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
static double k_alt(const double *a, int n) { double s = 0; for (int i = n - 1; i >= 0; i -= 2) s -= a[i]; return s; }
static double k_max(const double *a, int n) {
  double m = a[0];
  for (int i = 1; i < n; i++) if (a[i] > m) m = a[i];
  return m;
}
static void apply(double *a, int n, double (*f)(double)) { for (int i = 0; i < n; i++) a[i] = f(a[i]); }
static double half(double v) { return v / 2; }
static double inc(double v) { return v + 1; }
static int cmp(const void *x, const void *y) {
  const int *p = x, *q = y;
  int s = 0;
  for (int i = 0; i < 4; i++) s += p[i] - q[i]; /* a loop inside a comparator */
  return (s > 0) - (s < 0);
}

int main(void) {
  int n = 40000;
  double *a = malloc((size_t)n * sizeof *a);
  for (int i = 0; i < n; i++) a[i] = (i * 19) % 1000;
  kernel ks[] = {k_sum, k_alt, k_max};
  double (*fs[])(double) = {half, inc};
  double r = 0;
  for (int rep = 0; rep < 6; rep++) {
    apply(a, n, fs[rep % 2]);
    for (unsigned k = 0; k < sizeof ks / sizeof ks[0]; k++) r += ks[k](a + rep, n - rep);
  }
  int (*quads)[4] = malloc(1000 * sizeof *quads);
  for (int i = 0; i < 1000; i++) for (int j = 0; j < 4; j++) quads[i][j] = (i * 7 + j * 3) % 100;
  qsort(quads, 1000, sizeof *quads, cmp);
  unsigned long q = 0;
  for (int i = 0; i < 1000; i++) q = q * 3 + (unsigned)(quads[i][0] + quads[i][3]);
  printf("%.4f %lu\n", r, q);
  free(a); free(quads);
  return 0;
}
