/* trap: long double, char, short, _Bool and float element sizes (element size != 8 in address arithmetic) */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

int main(void) {
  int n = 6001;
  long double *ld = malloc((size_t)n * sizeof *ld);
  char *ch = malloc((size_t)n);
  short *sh = malloc((size_t)n * sizeof *sh);
  _Bool *bo = malloc((size_t)n * sizeof *bo);
  float *fl = malloc((size_t)n * sizeof *fl);
  int8_t *i8 = malloc((size_t)n);
  for (int i = 0; i < n; i++) {
    ld[i] = i / 3.0L;
    ch[i] = (char)(i % 120);
    sh[i] = (short)(i * 5 % 30000);
    bo[i] = (i % 3) == 0;
    fl[i] = (float)i * 0.25f;
    i8[i] = (int8_t)(i % 200 - 100);
  }
  long double lds = 0;
  for (int i = n - 1; i >= 0; i--) lds += ld[i];
  long cs = 0, ss = 0, bs = 0, is = 0;
  for (int i = 0; i < n; i++) cs += ch[i];
  for (int i = 0; i < n; i += 2) ss += sh[i];
  for (int i = 0; i < n; i++) bs += bo[i];
  for (int i = 0; i < n; i++) is += i8[i] * (i & 3);
  double fs = 0;
  for (int j = 0; j < 100; j++)
    for (int i = j; i < n; i += 100) fs += fl[i];
  /* 2-D long double with a VM type */
  int r = 50, c = n / 50;
  long double (*L)[c] = (long double (*)[c])ld;
  long double cols = 0;
  for (int j = 0; j < c; j++) for (int i = 0; i < r; i++) cols += L[i][j];
  printf("%.6Lf %ld %ld %ld %ld %.2f %.6Lf\n", lds, cs, ss, bs, is, fs, cols);
  free(ld); free(ch); free(sh); free(bo); free(fl); free(i8);
  return 0;
}
