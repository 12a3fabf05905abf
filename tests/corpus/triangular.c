/* trap: triangular loops (j < i, j <= i, j from i) whose inner bounds depend on the outer index */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int n = 400;
  double *L = malloc((size_t)n * n * sizeof *L);
  double *b = malloc((size_t)n * sizeof *b);
  double *x = malloc((size_t)n * sizeof *x);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++) L[i * n + j] = 1.0 / (1 + i + j);
    L[i * n + i] = 2.0 + i % 5;
    for (int j = i + 1; j < n; j++) L[i * n + j] = -1; /* never read */
    b[i] = i % 7;
  }
  /* forward substitution */
  for (int i = 0; i < n; i++) {
    double s = b[i];
    for (int j = 0; j < i; j++) s -= L[i * n + j] * x[j];
    x[i] = s / L[i * n + i];
  }
  double cs = 0;
  for (int i = 0; i < n; i++) cs += x[i] * (i + 1);
  printf("%.10e\n", cs);
  /* upper triangle by columns, j from i to n, static 2-D array */
  static double U[300][300];
  for (int i = 0; i < 300; i++) for (int j = i; j < 300; j++) U[i][j] = (i + 1) * 0.001 + j;
  double us = 0;
  for (int j = 0; j < 300; j++) for (int i = 0; i <= j; i++) us += U[i][j];
  /* anti-triangular: j < n - i */
  long at = 0;
  for (int i = 0; i < 300; i++) for (int j = 0; j < 300 - i; j++) at += (long)U[i][j + i];
  printf("%.6f %ld\n", us, at);
  free(L); free(b); free(x);
  return 0;
}
