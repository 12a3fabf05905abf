/* trap: volatile arrays (every access is observable) and restrict-qualified arrays used correctly */
#include <stdio.h>
#include <stdlib.h>

static volatile int vbuf[5000];

static void triad(int n, double *restrict a, const double *restrict b, const double *restrict c, double k) {
  for (int i = 0; i < n; i++) a[i] = b[i] + k * c[i];
}

static long vsum(volatile const int *v, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) s += v[i];
  return s;
}

int main(void) {
  for (int i = 0; i < 5000; i++) vbuf[i] = i % 77;
  long vs = vsum(vbuf, 5000);
  /* read-modify-write through volatile, backwards */
  for (int i = 4999; i > 0; i--) vbuf[i - 1] += vbuf[i] & 1;
  vs += vsum(vbuf, 5000);
  volatile double *vd = malloc(3000 * sizeof *vd);
  for (int i = 0; i < 3000; i++) vd[i] = i * 0.5;
  double vsd = 0;
  for (int i = 0; i < 3000; i += 2) vsd += vd[i] - vd[i + 1];
  int n = 50000;
  double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), *c = malloc((size_t)n * sizeof *c);
  for (int i = 0; i < n; i++) { b[i] = i % 101; c[i] = (i % 7) * 0.5; }
  triad(n, a, b, c, 3.0);
  triad(n / 2, b, a + n / 2, c, -1.0); /* disjoint halves: still restrict-correct */
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] + b[i];
  printf("%ld %.2f %.4f\n", vs, vsd, s);
  free((void *)vd); free(a); free(b); free(c);
  return 0;
}
