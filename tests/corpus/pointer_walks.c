/* trap: pointer walks (p = a; p < a + n; p++), backward walks, two pointers meeting, end pointers */
#include <stdio.h>
#include <stdlib.h>

static long sum_range(const int *b, const int *e) {
  long s = 0;
  for (const int *p = b; p != e; ++p) s += *p;
  return s;
}

int main(void) {
  int n = 30001;
  int *a = malloc((size_t)n * sizeof *a);
  int *p;
  int k = 0;
  for (p = a; p < a + n; p++) *p = (k++ * 17) % 1000;
  long s = 0;
  for (p = a + n; p > a;) s += *--p * 3;
  printf("%ld\n", s);
  /* two pointers walking towards each other, swapping */
  for (int *lo = a, *hi = a + n - 1; lo < hi; lo++, hi--) { int t = *lo; *lo = *hi; *hi = t; }
  printf("%ld %d %d\n", sum_range(a, a + n), a[0], a[n - 1]);
  /* stride-2 pointer walk that stops exactly at the end (n-1 is even) */
  long t = 0;
  for (const int *q = a; q < a + (n - 1); q += 2) t += q[0] - q[1];
  printf("%ld\n", t);
  /* walk over chars of a string until the terminator */
  char *str = malloc(5000);
  for (int i = 0; i < 4999; i++) str[i] = (char)('a' + i % 26);
  str[4999] = '\0';
  unsigned h = 0;
  for (const char *c = str; *c; c++) h = h * 31u + (unsigned char)*c;
  printf("%u\n", h);
  /* pointer to pointer rows */
  int rows = 64, cols = 300;
  int **R = malloc((size_t)rows * sizeof *R);
  for (int i = 0; i < rows; i++) R[i] = a + i * cols;
  long u = 0;
  for (int **rp = R; rp < R + rows; rp++)
    for (int *cp = *rp; cp < *rp + cols; cp++) u += *cp ^ (int)(rp - R);
  printf("%ld\n", u);
  free(R); free(str); free(a);
  return 0;
}
