/* trap: negative-step and non-unit-step loops, steps from variables, strides crossing pages */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  (void)argv;
  int n = 100003;
  int step = 6 + argc; /* 7, unknown at compile time */
  float *a = malloc((size_t)n * sizeof *a);
  for (int i = n - 1; i >= 0; i--) a[i] = (float)(i % 1000) * 0.5f;
  double s = 0;
  for (int i = n - 1; i >= 0; i -= 3) s += a[i];
  for (int i = 0; i < n; i += step) s -= a[i] * 0.5;
  for (int i = n - 1; i > 0; i -= step) s += a[i - 1];
  for (long i = 5; i < n; i += 1031) s += a[i] * 2; /* stride > 1 page */
  for (int i = n; i > 0; i--) s += a[i - 1] * 1e-3;
  printf("%.6f\n", s);
  /* descending outer, ascending inner with a step that does not divide the bound */
  int r = 97, c = 1000;
  long t = 0;
  for (int i = r - 1; i >= 0; i -= 2)
    for (int j = 3; j < c; j += 4) t += (long)a[i * c + j];
  /* step that changes sign halfway (bounded) */
  int i = 0, d = 5;
  long u = 0;
  while (i >= 0 && i < n) {
    u += (long)a[i];
    if (i > 50000) d = -7;
    i += d;
  }
  printf("%ld %ld %d\n", t, u, i);
  free(a);
  return 0;
}
