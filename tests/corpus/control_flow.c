/* trap: break/continue/goto out of and into loop bodies, labels inside nests */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  enum { N = 300, M = 211 };
  int *a = malloc(N * M * sizeof *a);
  for (int i = 0; i < N * M; i++) a[i] = (i * 2654435761u) >> 20 & 1023;
  unsigned long s = 0;
  /* continue and break in the inner loop, goto out of the whole nest */
  for (int i = 0; i < N; i++) {
    for (int j = 0; j < M; j++) {
      int v = a[i * M + j];
      if (v % 5 == 0) continue;
      if (v > 1020) break;
      s += (unsigned long)v * (unsigned)(j + 1);
      if (s > 4000000000ul) goto done;
    }
  }
done:
  printf("a %lu\n", s);
  /* goto into the middle of a loop body */
  int i = 0;
  unsigned long t = 0;
  goto inside;
  for (i = 0; i < N * M; i++) {
    t += (unsigned)a[i];
  inside:
    t ^= (unsigned long)a[i] << (i & 7);
  }
  printf("b %lu\n", t);
  /* a loop built from labels and gotos, with a goto back into a nested for */
  int k = 0, j;
  unsigned long u = 0;
top:
  if (k >= N) goto end;
  for (j = 0; j < M; j += 2) {
    u += (unsigned)a[k * M + j];
    if (j == 100 && (k & 1)) { k++; goto top; }
  }
  k += 3;
  goto top;
end:
  printf("c %lu\n", u);
  /* labelled re-entry: retry the same row once with an offset */
  unsigned long w = 0;
  for (int r = 0; r < N; r++) {
    int pass = 0;
  again:
    for (int c = pass; c < M; c++) w = w * 33 + (unsigned)a[r * M + c];
    if (!pass && (r % 7) == 0) { pass = 5; goto again; }
  }
  printf("d %lu\n", w);
  free(a);
  return 0;
}
