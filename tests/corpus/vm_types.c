/* trap: variably modified types -- double (*A)[m] from malloc, VLA parameters A[n][m], [static n] */
#include <stdio.h>
#include <stdlib.h>

static void fill(int n, int m, double A[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) A[i][j] = (i * 31 + j * 7) % 113 * 0.5;
}

static double smooth(int n, int m, double B[n][m], double A[n][m]) {
  double s = 0;
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++) {
      B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
      s += B[i][j];
    }
  return s;
}

static double colsum(int n, int m, const double A[static n][m], int j) {
  double s = 0;
  for (int i = 0; i < n; i++) s += A[i][j];
  return s;
}

int main(int argc, char **argv) {
  (void)argv;
  int n = 150 + argc, m = 257 - argc; /* sizes not known at compile time */
  double (*A)[m] = malloc(sizeof(double[n][m]));
  double (*B)[m] = calloc((size_t)n, sizeof *B);
  fill(n, m, A);
  double s = smooth(n, m, B, A);
  double c = 0;
  for (int j = 0; j < m; j += 5) c += colsum(n, m, (const double (*)[m])B, j);
  /* a small stack VLA, column-major traversal */
  int k = 40 + argc;
  long V[k][k + 3];
  for (int j = 0; j < k + 3; j++)
    for (int i = 0; i < k; i++) V[i][j] = i - j;
  long v = 0;
  for (int i = k - 1; i >= 0; i--)
    for (int j = 0; j < k + 3; j++) v += V[i][j] * (i + 1);
  /* pointer to a VLA row walking */
  double t = 0;
  for (double (*row)[m] = A; row < A + n; row++) t += (*row)[m - 1] - (*row)[0];
  printf("%.6f %.6f %ld %.3f\n", s, c, v, t);
  free(A); free(B);
  return 0;
}
