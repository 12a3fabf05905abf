/* trap: deep nests (4 levels) with a small innermost bound, and a matrix multiply whose C aliases an input */
#include <stdio.h>
#include <stdlib.h>

static void matmul(int n, double *C, const double *A, const double *B) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int k = 0; k < n; k++) s += A[i * n + k] * B[k * n + j];
      C[i * n + j] = s;
    }
}

int main(void) {
  int n = 64;
  double *A = malloc((size_t)n * n * sizeof *A), *B = malloc((size_t)n * n * sizeof *B);
  for (int i = 0; i < n * n; i++) { A[i] = (i % 7) * 0.125; B[i] = (i % 5) * 0.25; }
  double *T = malloc((size_t)n * n * sizeof *T);
  matmul(n, T, A, B);
  matmul(n, A, T, B); /* output may not overlap input inside one call: ok, A is only written */
  double s = 0;
  for (int i = 0; i < n * n; i++) s += A[i];
  /* 4-D walk with small inner bounds: [a][b][c][3] */
  enum { P = 20, Q = 30, R = 40 };
  static float X[P][Q][R][3];
  for (int a = 0; a < P; a++)
    for (int b = 0; b < Q; b++)
      for (int c = 0; c < R; c++)
        for (int d = 0; d < 3; d++) X[a][b][c][d] = (float)((a + b * 2 + c * 3 + d) % 9);
  double x = 0;
  for (int c = 0; c < R; c++)
    for (int a = P - 1; a >= 0; a--)
      for (int b = 0; b < Q; b += 2)
        for (int d = 2; d >= 0; d--) x += X[a][b][c][d] * (d + 1);
  printf("%.6f %.1f\n", s, x);
  free(A); free(B); free(T);
  return 0;
}
