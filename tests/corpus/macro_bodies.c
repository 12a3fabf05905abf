/* trap: loop bodies written as macros: an unbraced multi-statement macro (only its first statement loops), one with its own semicolon, loops inside macro arguments that are stringified or pasted */
#include <stdio.h>
#include <stdlib.h>

#define BUMP(i) A[i] += 1; C[i] += 2
#define BUMP3(i) A[i] += 3; C[i] += 5; D[i] -= 1
#define SET(p, i, v) (p)[i] = (v)
#define SETS(p, i, v) (p)[i] = (v);
#define TWICE(stmt) stmt stmt
#define SHOW(code) code; printf("ran: %s\n", #code)
#define FIRST_OF(a, b) a
#define BLOCK(i) { A[i] ^= 7; C[i] ^= 9; }

int main(void) {
  int n = 300000, k;
  int *A = calloc((size_t)n + 1, sizeof *A), *C = calloc((size_t)n + 1, sizeof *C);
  int *D = calloc((size_t)n + 1, sizeof *D);
  long s = 0;
  for (k = 0; k < n; k++) BUMP(k);
  for (k = 0; k < n; k++) BUMP3(k);
  for (k = 0; k < n; k++)
    for (int j = 0; j < 2; j++) BUMP(k);
  for (k = 0; k < n; k++) SET(A, k, A[k] + k % 7);
  for (k = 0; k < n; k++) SETS(D, k, D[k] + 1)
  for (k = 0; k < n; k += 2) BLOCK(k)
  TWICE(for (k = 0; k < n; k++) s += A[k];)
  SHOW(for (k = 0; k < n; k++) s += C[k] * 3);
  FIRST_OF(for (k = 0; k < n; k++) s -= D[k], for (k = 0; k < n; k++) s += 1000000);
  printf("A[0]=%d A[n]=%d C[0]=%d C[n]=%d D[0]=%d D[n]=%d s=%ld\n",
         A[0], A[n], C[0], C[n], D[0], D[n], s);
  unsigned long h = 0;
  for (k = 0; k <= n; k++) h = h * 31u + (unsigned long)(A[k] + 7 * C[k] + 13 * D[k]);
  printf("hash %lu\n", h);
  free(A); free(C); free(D);
  return 0;
}
