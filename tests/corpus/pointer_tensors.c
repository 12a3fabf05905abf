/* trap: 3-D arrays of pointers to pointers -- T[i][j][k] of double ***T allocated in one
   block (Numerical Recipes' f3tensor) and as jagged rows of different lengths, a row
   pointer replaced inside the loop, NULL rows behind loops of zero iterations, and a
   fourth level (double ****) */
#include <stdio.h>
#include <stdlib.h>

static double ***tensor(long n, long m, long l)
{
  double ***t = malloc((size_t)n * sizeof *t);
  t[0] = malloc((size_t)(n * m) * sizeof **t);
  t[0][0] = malloc((size_t)(n * m * l) * sizeof ***t);
  for (long j = 1; j < m; j++) t[0][j] = t[0][j - 1] + l;
  for (long i = 1; i < n; i++) {
    t[i] = t[i - 1] + m;
    t[i][0] = t[i - 1][0] + m * l;
    for (long j = 1; j < m; j++) t[i][j] = t[i][j - 1] + l;
  }
  return t;
}

static double sum3(double ***t, long n, long m, long l)
{
  double s = 0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < m; j++)
      for (long k = 0; k < l; k++) s += t[i][j][k] * (double)(k + 1);
  return s;
}

static void scale3(double ***t, long n, long m, long l, double f)
{
  for (long i = 0; i < n; i++)
    for (long j = 0; j < m; j++)
      for (long k = l - 1; k >= 0; k--) t[i][j][k] *= f;
}

/* jagged: row (i, j) has j * 1000 + 1 elements; rows of i == 2 are NULL with length 0 */
static double jagged(double ***t, long n, long m)
{
  double s = 0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < m; j++) {
      long len = i == 2 ? 0 : j * 1000 + 1;
      for (long k = 0; k < len; k++) s += t[i][j][k];
    }
  return s;
}

/* the row pointer is replaced while the rows are walked */
static double swapped(double ***t, long n, long m, long l, double *spare)
{
  double s = 0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < m; j++) {
      for (long k = 0; k < l; k++) s += t[i][j][k];
      if (j == 1) t[i][j + 1] = spare;
    }
  return s;
}

static double sum4(double ****q, long n, long l)
{
  double s = 0;
  for (long a = 0; a < n; a++)
    for (long b = 0; b < n; b++)
      for (long c = 0; c < n; c++)
        for (long k = 0; k < l; k++) s += q[a][b][c][k];
  return s;
}

int main(void)
{
  long n = 5, m = 7, l = 3001;
  double ***t = tensor(n, m, l);
  for (long i = 0; i < n * m * l; i++) t[0][0][i] = (double)(i % 101) * 0.5;
  printf("sum3 %.1f\n", sum3(t, n, m, l));
  scale3(t, n, m, l, 2.0);
  printf("scaled %.1f\n", sum3(t, n, m, l));
  double *spare = calloc((size_t)l, sizeof *spare);
  for (long k = 0; k < l; k++) spare[k] = 1.0;
  printf("swapped %.1f\n", swapped(t, n, m, l, spare));

  long jn = 4, jm = 6;
  double ***g = malloc((size_t)jn * sizeof *g);
  for (long i = 0; i < jn; i++) {
    g[i] = malloc((size_t)jm * sizeof **g);
    for (long j = 0; j < jm; j++) {
      long len = i == 2 ? 0 : j * 1000 + 1;
      g[i][j] = len ? malloc((size_t)len * sizeof ***g) : NULL;
      for (long k = 0; k < len; k++) g[i][j][k] = (double)((i + j + k) % 7);
    }
  }
  printf("jagged %.1f\n", jagged(g, jn, jm));

  long qn = 2;
  double ****q = malloc((size_t)qn * sizeof *q);
  for (long a = 0; a < qn; a++) q[a] = tensor(qn, qn, l);
  for (long a = 0; a < qn; a++)
    for (long i = 0; i < qn * qn * l; i++) q[a][0][0][i] = (double)((a + i) % 11);
  printf("sum4 %.1f\n", sum4(q, qn, l));

  for (long a = 0; a < qn; a++) { free(q[a][0][0]); free(q[a][0]); free(q[a]); }
  free(q);
  for (long i = 0; i < jn; i++) {
    for (long j = 0; j < jm; j++) free(g[i][j]);
    free(g[i]);
  }
  free(g);
  free(spare);
  free(t[0][0]);
  free(t[0]);
  free(t);
  return 0;
}
