/* trap: bases read from memory, A[i][j] of double **A and p->q[k]: the hints load the row
 * pointer themselves, so a loop that leaves early or reads a row conditionally must not
 * make them read A[n] (one past the row array), and rows swapped or repointed inside the
 * loop must not change what is read */
#include <stdio.h>
#include <stdlib.h>

struct vec { long n; double *q; };

int main(void) {
  long n = 37, m = 5003;
  double **A = malloc((size_t)n * sizeof *A);   /* exactly n row pointers */
  for (long i = 0; i < n; i++) {
    A[i] = malloc((size_t)m * sizeof **A);
    for (long j = 0; j < m; j++) A[i][j] = (double)((i * 131 + j * 7) % 1013);
  }
  double s = 0;
  /* leaves the inner loop before reading the row at i == n */
  for (long i = 0; i <= n; i++)
    for (long j = 0; j < m; j++) {
      if (i == n) break;
      s += A[i][j];
    }
  /* reads the row only while i < n */
  for (long i = 0; i <= n; i++)
    for (long j = 0; j < m; j++)
      if (i < n) s += 0.5 * A[i][j];
  /* skips missing rows in the outer loop: the inner loop only runs on real rows */
  double *saved = A[3];
  A[3] = NULL;
  for (long i = 0; i < n; i++) {
    if (!A[i]) continue;
    for (long j = 0; j < m; j++) s += A[i][j] * (double)(j & 3);
  }
  A[3] = saved;
  /* rows swapped inside the inner loop, halfway along */
  for (long i = 0; i + 1 < n; i++)
    for (long j = 0; j < m; j++) {
      A[i][j] += 1.0;
      if (j == m / 2) { double *t = A[i]; A[i] = A[i + 1]; A[i + 1] = t; }
    }
  /* jagged (triangular) rows */
  for (long i = 0; i < n; i++)
    for (long j = 0; j <= i * 100; j++) s += A[i][j] * 0.25;
  /* a pointer member, repointed halfway */
  struct vec v = { m, A[0] };
  struct vec *p = &v;
  for (long k = 0; k < p->n; k++) {
    s += p->q[k];
    if (k == m / 2) p->q = A[1];
  }
  /* rows of no columns: the loop never reads a row pointer, nor may the hints (the row
   * array has a single element, never set) */
  long none = (long)(s < 0);
  double **E = malloc(sizeof *E);
  for (long i = 0; i < n; i++)
    for (long j = 0; j < none; j++) s += E[i][j];
  free(E);
  /* shrinking rows: past row n the rows are empty and the row pointers do not exist (A
   * has exactly n), so a row ahead is read only when its own loop runs */
  for (long i = 0; i < n + 6; i++)
    for (long j = 0; j < (n - i) * 100; j++) s += A[i][j] * 0.125;
  /* rows in a struct with member bounds: exactly g.n row pointers; with no columns the
   * row pointers (one, never set) are not read at all */
  struct mat { long n, m; double **rows; } g = { n, m, A }, *pg = &g;
  for (long i = 0; i < pg->n; i++)
    for (long j = 0; j < pg->m; j += 5) s += pg->rows[i][j];
  struct mat e = { n, none, malloc(sizeof(double *)) }, *pe = &e;
  for (long i = 0; i < pe->n; i++)
    for (long j = 0; j < pe->m; j++) s += pe->rows[i][j];
  free(e.rows);
  /* the rows ahead are read no further than the last row (A has exactly n pointers) */
  long h = 0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < m; j++) h = (h * 31 + (long)A[i][j]) % 1000000007;
  for (long i = n - 1; i >= 0; i--)
    for (long j = 0; j < m; j += 3) h = (h * 7 + (long)A[i][j]) % 1000000007;
  printf("%.2f %ld\n", s, h);
  for (long i = 0; i < n; i++) free(A[i]);
  free(A);
  return 0;
}
