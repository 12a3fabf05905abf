/* trap: column traversal of row-major matrices (stride of a row per iteration, rows longer than a page) */
#include <stdio.h>
#include <stdlib.h>

#define R 180
#define C 1030

static double S[R][C];

int main(void) {
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) S[i][j] = (i * C + j) % 251;
  double col[C];
  for (int j = 0; j < C; j++) {
    col[j] = 0;
    for (int i = 0; i < R; i++) col[j] += S[i][j];
  }
  double cs = 0;
  for (int j = 0; j < C; j++) cs += col[j] * (j % 3);
  /* heap, short elements, columns from the right, rows from the bottom */
  int r = 97, c = 2053;
  short *M = malloc((size_t)r * c * sizeof *M);
  for (int i = 0; i < r * c; i++) M[i] = (short)(i % 32749);
  long ms = 0;
  for (int j = c - 1; j >= 0; j--)
    for (int i = r - 1; i >= 0; i--) ms += M[i * c + j] * (long)(j & 7);
  /* column update in place, each column depends on the previous one */
  for (int j = 1; j < C; j++)
    for (int i = 0; i < R; i++) S[i][j] = S[i][j] * 0.5 + S[i][j - 1] * 0.25;
  double last = 0;
  for (int i = 0; i < R; i++) last += S[i][C - 1];
  printf("%.3f %ld %.6f\n", cs, ms, last);
  free(M);
  return 0;
}
