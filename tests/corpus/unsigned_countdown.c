/* trap: unsigned countdown loops (i-- > 0, i != (size_t)-1) where i-1 wraps, and unsigned zero-trip */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

int main(void) {
  size_t n = 40000;
  double *a = malloc(n * sizeof *a);
  for (unsigned i = (unsigned)n; i-- > 0;) a[i] = i * 0.125;
  double s = 0;
  for (size_t i = n - 1; i != (size_t)-1; i--) s += a[i] * (double)(i & 7);
  printf("%.9f\n", s);
  unsigned char small[200];
  for (unsigned char c = 200; c-- > 0;) small[c] = (unsigned char)(c * 3);
  unsigned long h = 0;
  for (size_t i = sizeof small; i > 0; i--) h = h * 31 + small[i - 1];
  printf("%lu\n", h);
  /* zero-trip forms with n = 0: nothing may be read */
  size_t z = 0;
  double *e = malloc(1 * sizeof *e);
  e[0] = 42;
  for (size_t i = z; i-- > 0;) s += e[i + 1000];
  for (size_t i = z - 1; i != (size_t)-1; i--) s += e[i];
  /* 2-D unsigned countdown over a VM type */
  unsigned r = 120, c = 131;
  uint16_t (*M)[c] = malloc(sizeof(uint16_t[r][c]));
  for (unsigned i = r; i-- > 0;)
    for (unsigned j = c; j-- > 0;) M[i][j] = (uint16_t)(i * 7u + j * 13u);
  unsigned long t = 0;
  for (unsigned j = c; j-- > 0;)
    for (unsigned i = r; i-- > 0;) t = t * 7 + M[i][j];
  printf("%.9f %lu\n", s, t);
  free(a); free(e); free(M);
  return 0;
}
