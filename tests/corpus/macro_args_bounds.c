/* trap: a loop condition and references written in a macro's arguments (COND(i, N), SET(p, i, v)): their extents are empty, at the call, and hints repeating that text repeated nothing (a bound of `()`, the transformed text did not compile) */
#include <stdio.h>
#include <stdlib.h>

#define N 150000
#define COND(i, n) i < n
#define STEP(i) i++
#define ID(x) x
#define SET(p, i, v) (p)[i] = (v)

int main(void) {
  int *a = calloc(N + 1, sizeof *a);
  double **rows = malloc(4 * sizeof *rows);
  long s = 0;
  int i, n = N;
  for (int r = 0; r < 4; r++) {
    rows[r] = calloc(N, sizeof **rows);
    for (i = 0; i < n; i++) rows[r][i] = r + i % 5;
  }
  for (i = 0; COND(i, N); STEP(i)) a[i] = i % 11;
  for (i = 0; COND(i, n); i++) s += a[i];
  for (i = ID(3); i < ID(n); i++) s += ID(a[i]);
  for (i = 0; i < n; i++) SET(a, i, a[i] + 1);
  for (int r = 0; r < 4; r++)
    for (i = 0; i < n; i++) s += ID((long)rows[r][i]);
  printf("s=%ld a[0]=%d a[n-1]=%d\n", s, a[0], a[n - 1]);
  for (int r = 0; r < 4; r++) free(rows[r]);
  free(rows);
  free(a);
  return 0;
}
