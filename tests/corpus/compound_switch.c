/* trap: compound literals and switch statements (fallthrough, break, continue) inside loop bodies; non-zero exit status */
#include <stdio.h>
#include <stdlib.h>

struct pt { int x, y; };
static int manh(struct pt p) { return abs(p.x) + abs(p.y); }

int main(void) {
  int n = 30000;
  int *a = malloc((size_t)n * sizeof *a);
  for (int i = 0; i < n; i++) a[i] = (int[]){3, 1, 4, 1, 5, 9, 2, 6}[i & 7] * (i % 10);
  long s = 0;
  for (int i = 0; i < n; i++) {
    switch (a[i] % 6) {
    case 0: s += a[i]; /* fallthrough */
    case 1: s += 1; break;
    case 2: continue;
    case 3: s -= a[i]; break;
    default:
      for (int k = 0; k < 3; k++) s += (int[3]){i & 1, i & 2, i & 4}[k];
    }
    s += manh((struct pt){a[i] - 20, i % 7 - 3});
  }
  /* compound literal array walked by pointer, inside an outer loop */
  long t = 0;
  for (int r = 0; r < 1000; r++)
    for (const short *p = (const short[]){1, 2, 3, 5, 8, 13}, *e = p + 6; p < e; p++) t += *p * a[r];
  /* switch whose break leaves the switch, and a goto leaving the loop */
  int i = 0;
  for (;; i++) {
    switch (a[i]) {
    case 54: goto out;
    default: break;
    }
    if (i >= n - 1) break;
  }
out:
  printf("%ld %ld %d\n", s, t, i);
  free(a);
  return (int)(s & 7) + 3; /* a deterministic non-zero exit status */
}
