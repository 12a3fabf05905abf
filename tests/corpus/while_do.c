/* trap: while and do-while loops with the index updated in different places, including the condition */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int n = 60000;
  unsigned *a = malloc((size_t)n * sizeof *a);
  int i = 0;
  while (i < n) { a[i] = (unsigned)i * 2654435761u; i++; }
  unsigned long s = 0;
  i = 0;
  do { s += a[i] >> 7; } while (++i < n);
  i = n;
  while (i--) s ^= a[i] << (i & 3);
  printf("%lu\n", s);
  /* do-while that runs exactly once though the range is empty */
  int k = 5;
  do { s += a[k]; k++; } while (k < 3);
  /* while with an index-dependent early exit and in-condition read */
  i = 0;
  while (i < n && a[i] % 1000 != 999) i++;
  printf("%lu %d\n", s, i);
  /* nested do-while over rows */
  int r = 0;
  unsigned long t = 0;
  do {
    int c = 0;
    do { t += a[r * 300 + c] & 0xff; c += 1 + (r & 1); } while (c < 300);
    r++;
  } while (r < 200);
  printf("%lu\n", t);
  free(a);
  return 0;
}
