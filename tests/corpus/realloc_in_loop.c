/* trap: the array base changes inside the loop (realloc, pointer swap), so addresses cannot be hoisted */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  size_t cap = 16, len = 0;
  int *v = malloc(cap * sizeof *v);
  for (int i = 0; i < 50000; i++) {
    if (len == cap) { cap *= 2; v = realloc(v, cap * sizeof *v); }
    v[len++] = (i * 37) % 1009;
  }
  long s = 0;
  for (size_t i = 0; i < len; i++) s += v[i];
  /* ping-pong buffers swapped every iteration of the outer loop */
  int n = 4096;
  double *cur = malloc((size_t)n * sizeof *cur), *nxt = malloc((size_t)n * sizeof *nxt);
  for (int i = 0; i < n; i++) cur[i] = i % 17;
  for (int t = 0; t < 20; t++) {
    nxt[0] = cur[0];
    nxt[n - 1] = cur[n - 1];
    for (int i = 1; i < n - 1; i++) nxt[i] = (cur[i - 1] + cur[i] + cur[i + 1]) / 3;
    double *tmp = cur; cur = nxt; nxt = tmp;
  }
  double d = 0;
  for (int i = 0; i < n; i++) d += cur[i] * (i % 3);
  /* shrink while walking: the loop re-reads the current base each time */
  size_t m = len;
  long w = 0;
  for (size_t i = 0; i < m; i++) {
    w += v[i];
    if (i == m / 2) { m = m / 2 + 10; v = realloc(v, m * sizeof *v); }
  }
  /* memmove inside the loop shifts the data being walked */
  int buf[1000];
  for (int i = 0; i < 1000; i++) buf[i] = i;
  long b = 0;
  for (int i = 0; i < 900; i++) {
    b += buf[i];
    if (i % 100 == 0) memmove(buf + i + 1, buf + i + 2, (size_t)(1000 - i - 2) * sizeof buf[0]);
  }
  printf("%ld %.6f %ld %ld\n", s, d, w, b);
  free(v); free(cur); free(nxt);
  return 0;
}
