/* trap: arrays of 4096+1 bytes and arrays ending exactly at a PROT_NONE guard page (look-ahead loads would fault) */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void) {
  long pg = sysconf(_SC_PAGESIZE);
  /* malloc'd 4096+1 bytes, walked to the last byte */
  size_t n = 4096 + 1;
  unsigned char *a = malloc(n);
  for (size_t i = 0; i < n; i++) a[i] = (unsigned char)(i * 7);
  unsigned long s = 0;
  for (size_t i = 0; i < n; i++) s = s * 31 + a[i];
  /* array that ends exactly where a guard page begins */
  char *map = mmap(NULL, (size_t)pg * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return 2;
  if (mprotect(map + pg * 3, (size_t)pg, PROT_NONE) != 0) return 3;
  size_t m = (size_t)pg * 3 / sizeof(double);
  double *d = (double *)map;
  for (size_t i = 0; i < m; i++) d[i] = (double)(i % 33);
  double t = 0;
  for (size_t i = 0; i < m; i++) t += d[i];
  /* an index array ending at the guard page, gathering from a 4097-byte table */
  int *idx = (int *)(map + pg * 3) - 1000;
  for (int i = 0; i < 1000; i++) idx[i] = (i * 61) % 4097;
  unsigned long g = 0;
  for (int i = 0; i < 1000; i++) g += a[idx[i]];
  /* 2-D rows of exactly one page plus one element */
  int rows = 16, cols = 4096 / (int)sizeof(int) + 1;
  int *M = malloc((size_t)rows * cols * sizeof *M);
  for (int i = 0; i < rows * cols; i++) M[i] = i & 255;
  long ms = 0;
  for (int j = 0; j < cols; j++) for (int i = 0; i < rows; i++) ms += M[i * cols + j] * (long)(j % 5);
  printf("%lu %.1f %lu %ld\n", s, t, g, ms);
  munmap(map, (size_t)pg * 4);
  free(a); free(M);
  return 0;
}
