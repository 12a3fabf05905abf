/* trap: a loop body #include'd from another file (include_body.inc): its references' offsets index that file, and hints repeating this file's text at them took unrelated words */
#include <stdio.h>
#include <stdlib.h>
#define N 150000

int main(void) {
  int *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  int **rows = malloc(4 * sizeof *rows);
  for (int r = 0; r < 4; r++) rows[r] = calloc(N, sizeof **rows);
  long s = 0;
  for (int i = 0; i < N; i++) {
    a[i] = i;
    b[i] = (int)((i * 7919L) % N);
    rows[i % 4][i] = i % 9;
  }
  for (int i = 0; i < N; i++) {
#include "include_body.inc"
  }
  printf("s=%ld\n", s);
  for (int r = 0; r < 4; r++) free(rows[r]);
  free(rows);
  free(a);
  free(b);
  return 0;
}
