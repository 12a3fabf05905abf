/* trap: aliasing pointer arguments -- the same array passed twice, and overlapping (shifted) views */
#include <stdio.h>
#include <stdlib.h>

static void add_into(double *dst, const double *src, int n) {
  for (int i = 0; i < n; i++) dst[i] += src[i];
}

static void shift_mix(unsigned *x, unsigned *y, int n) {
  for (int i = 0; i < n; i++) y[i] = x[i] * 3u + (y[i] & 7u);
}

static void stencil(double *out, const double *in, int n) {
  for (int i = 1; i < n - 1; i++) out[i] = 0.25 * in[i - 1] + 0.5 * in[i] + 0.25 * in[i + 1];
}

int main(void) {
  enum { N = 20000 };
  double *a = malloc(N * sizeof *a);
  unsigned *b = malloc(N * sizeof *b);
  for (int i = 0; i < N; i++) { a[i] = (i % 97) * 0.5; b[i] = (unsigned)(i * 31) % 1001u; }
  add_into(a, a, N);              /* exactly the same array twice */
  add_into(a + 1, a, N - 1);      /* dst overlaps src one ahead: a loop-carried dependence */
  add_into(a, a + 3, N - 3);      /* dst behind src */
  shift_mix(b, b + 1, N - 1);     /* each write feeds the next read */
  shift_mix(b + 2, b, N - 2);
  stencil(a, a, N);               /* in-place stencil: order matters */
  double s = 0;
  unsigned long h = 0;
  for (int i = 0; i < N; i++) { s += a[i] * (1 + (i & 3)); h = h * 131 + b[i]; }
  printf("%.6e %lu\n", s, h);
  free(a); free(b);
  return 0;
}
