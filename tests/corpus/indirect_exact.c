/* trap: indirect references a[b[i]] where b has exactly n elements and the loop ends at n (look-ahead of b must be clamped) */
#include <stdio.h>
#include <stdlib.h>

static double gather(const double *a, const int *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[b[i]];
  return s;
}

int main(void) {
  int n = 30011, m = 5003;
  int *b = malloc((size_t)n * sizeof *b);   /* exactly n elements */
  double *a = malloc((size_t)m * sizeof *a); /* exactly m elements */
  for (int i = 0; i < n; i++) b[i] = (int)((i * 7919L) % m);
  for (int i = 0; i < m; i++) a[i] = i * 0.5;
  double s = gather(a, b, n);
  s += gather(a, b + n - 10, 10); /* the tail: 10 elements left in b */
  s += gather(a, b, 1);
  s += gather(a, b, 0);
  /* reverse indirect */
  for (int i = n - 1; i >= 0; i--) s -= 0.25 * a[b[i]];
  /* scatter with read-modify-write: histogram */
  int *h = calloc((size_t)m, sizeof *h);
  for (int i = 0; i < n; i++) h[b[i]]++;
  long hs = 0;
  for (int i = 0; i < m; i++) hs += (long)h[i] * (i & 15);
  /* two-level indirection into exactly sized arrays */
  int k = 997;
  int *c = malloc((size_t)k * sizeof *c);
  for (int i = 0; i < k; i++) c[i] = (i * 13) % n;
  double t = 0;
  for (int i = 0; i < k; i++) t += a[b[c[i]]];
  /* the body writes the index array ahead of the read */
  for (int i = 0; i + 1 < n; i++) { t += a[b[i]]; b[i + 1] = (b[i + 1] + b[i]) % m; }
  /* index array of unsigned char, 256-element table */
  unsigned char *u = malloc(4097);
  for (int i = 0; i < 4097; i++) u[i] = (unsigned char)(i * 31);
  int tab[256];
  for (int i = 0; i < 256; i++) tab[i] = i * i;
  long ts = 0;
  for (int i = 0; i < 4097; i++) ts += tab[u[i]];
  printf("%.4f %ld %.4f %ld\n", s, hs, t, ts);
  free(a); free(b); free(c); free(h); free(u);
  return 0;
}
