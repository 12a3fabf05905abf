/* trap: a[c[b[i]]++] through a small table c: the body rewrites b ahead of the loop, so
 * the look-ahead sees index values outside c (its load must be bounds-checked) */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int n = 40009, nb = 37;
  int *key = malloc((size_t)n * sizeof *key);
  int *out = malloc((size_t)n * sizeof *out);
  long pos[37], count[37] = {0};
  for (int i = 0; i < n; i++) key[i] = 100000 + i; /* outside pos until rewritten */
  for (int i = 0; i < n; i++) count[(i * 7L) % nb]++;
  pos[0] = 0;
  for (int k = 1; k < nb; k++) pos[k] = pos[k - 1] + count[k - 1];
  key[0] = 0;
  for (int i = 0; i < n; i++) {
    out[pos[key[i]]++] = i;
    if (i + 1 < n) key[i + 1] = (int)(((i + 1) * 7L) % nb);
  }
  /* the same fill with the table indexed by a pre-increment */
  long fill[37];
  for (int k = 0; k < nb; k++) fill[k] = pos[k] - count[k] - 1;
  int *out2 = malloc((size_t)n * sizeof *out2);
  for (int i = 0; i < n; i++) out2[++fill[key[i]]] = i;
  long s = 0;
  for (int i = 0; i < n; i++) s = (s * 31 + out[i] + 7 * out2[i]) % 1000000007;
  printf("%ld\n", s);
  free(key); free(out); free(out2);
  return 0;
}
