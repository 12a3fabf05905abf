/* trap: arrays indexed through macros (#define A(i,j) a[(i)*n+(j)]), the usual way to write 2-D arrays in C: the references' hints come from the macros' declarations, never from the text at the call, and a macro with a side effect in its argument is evaluated once */
#include <stdio.h>
#include <stdlib.h>

#define A(i, j) a[(i) * n + (j)]
#define B(i, j) b[(i) * n + (j)]
#define AT(p, i, j) (p)[(i) * n + (j)]
#define NEXT(k) a[(k)++]

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 700;
  double *a = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double *b = malloc(sizeof(double) * (size_t)n * (size_t)n);
  if (a == NULL || b == NULL) return 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A(i, j) = (double)((i * 7 + j * 3) % 11);
      B(i, j) = 0;
    }
  for (int it = 0; it < 3; it++)
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B(i, j) = 0.25 * (A(i - 1, j) + A(i + 1, j) + AT(a, i, j - 1) + AT(a, i, j + 1));
  double s = 0, t = 0;
  for (int j = 0; j < n; j++)          /* by columns */
    for (int i = 0; i < n; i++)
      s += B(i, j) * (i + 1);
  int k = 0;
  for (int i = 0; i < n; i++)
    t += NEXT(k);
  printf("%.3f %.3f %d\n", s, t, k);
  free(a);
  free(b);
  return 0;
}
