/* trap: unsigned indices against signed constants (size_t k; k < 7), which compare as written, beside a signed index against an unsigned constant (int i from -5; i < 10u), where C converts i and the loop does not run at all */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)atol(argv[1]) : 200000;
  double *a = malloc(7 * n * sizeof *a);
  if (a == NULL) return 1;
  for (size_t k = 0; k < 7; k++)
    for (size_t i = 0; i < n; i++)
      a[k * n + i] = (double)((k * 31 + i) % 17);
  double s = 0;
  for (size_t k = 0; k < 7; k++)
    for (size_t i = 0; i < n; i++)
      s += a[k * n + i] * (double)(k + 1);
  for (unsigned k = 0; k < 100000; k++)
    s += a[k];
  long ran = 0;
  for (int i = -5; i < 10u; i++) {   /* -5 becomes huge: no iteration */
    s += a[i + 5];
    ran++;
  }
  for (unsigned short k = 3; k < 60000; k += 7)
    s -= a[k];
  printf("%.3f %ld\n", s, ran);
  free(a);
  return 0;
}
