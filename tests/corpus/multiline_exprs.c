/* trap: bounds, subscripts and row pointers written across lines, with // and block comments and backslash continuations inside: text copied into a one-line hint must not comment out code or move line numbers */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int n = 200000, m = 64;
  double *a = malloc((size_t)n * sizeof *a);
  int *b = malloc((size_t)n * sizeof *b);
  double **rows = malloc((size_t)m * sizeof *rows);
  for (int i = 0; i < n; i++) { a[i] = i % 17; b[i] = (int)((i * 7919L) % n); }
  for (int r = 0; r < m; r++) rows[r] = a + (size_t)r * (size_t)(n / m);
  double s = 0;
  for (int i = 0; i < n - // stop one short
                  1; i++)
    s += a[b[i // the index
              ]];
  for (int i = 0; i < n /* all */ - 2; \
       i++)
    s += a[i +
           1] * 2;
  for (int r = 0; r < m; r++)
    for (int j = 0; j < n / m; j++)
      s += rows[r // row
                ][j];
  assert(s > 0);
  printf("%s:%d %.1f\n", __FILE__, __LINE__, s);
  free(a); free(b); free(rows);
  return 0;
}
