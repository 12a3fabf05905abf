/* trap: a local pointer declared as a row pointer (`double *row = A[i]`) stands for A[i] in the hints; rows swapped under it, a pointer changed after its declaration, and one declared in a branch must still print what the original prints */
#include <stdio.h>
#include <stdlib.h>

#define N 96
#define M 4096

int main(void) {
  double **A = malloc(N * sizeof *A);
  for (int i = 0; i < N; i++) {
    A[i] = malloc(M * sizeof **A);
    for (int j = 0; j < M; j++) A[i][j] = (i * 31 + j) % 17;
  }
  double s = 0, t = 0;
  for (int i = 0; i < N; i++) {
    double *row = A[i];
    for (int j = 0; j < M; j++) s += row[j] * (j & 3);
  }
  for (int i = 0; i + 1 < N; i++) {
    double *row = A[i];
    A[i] = A[i + 1];           /* the row array changes after the alias was taken */
    A[i + 1] = row;
    for (int j = 0; j < M; j++) t += row[j] - A[i][j] / 2;
  }
  for (int i = 0; i < N; i++) {
    double *p = A[i];
    p += i % 5;                /* no longer A[i] */
    for (int j = 0; j + 5 < M; j++) s += p[j];
    if (i & 1) {
      const double *odd = A[i];
      for (int j = 0; j < M; j += 3) t -= odd[j];
    }
  }
  printf("%.1f %.1f\n", s, t);
  for (int i = 0; i < N; i++) free(A[i]);
  free(A);
  return 0;
}
