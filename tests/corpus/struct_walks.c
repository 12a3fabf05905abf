/* trap: pointer walks over structs (s->x, bit-fields, backward, != end, early exit, p[k] rows) */
#include <stdio.h>
#include <stdlib.h>

struct rec { double v; int id; unsigned flag : 3; char tag[5]; };

static double scan(const struct rec *b, const struct rec *e, double stop) {
  double s = 0;
  for (const struct rec *r = b; r != e; ++r) {
    if (r->v > stop) break; /* early exit: the walk ends before e */
    s += r->v + r->flag + r->tag[r->id % 5];
  }
  return s;
}

int main(int argc, char **argv) {
  (void)argv;
  long n = 20011 + argc;
  struct rec *a = malloc(sizeof(struct rec) * (size_t)n);
  long k = 0;
  for (struct rec *r = a; r < a + n; r++) {
    r->v = (double)(k % 977);
    r->id = (int)k;
    r->flag = (unsigned)(k & 7);
    for (int t = 0; t < 5; t++) r->tag[t] = (char)('a' + (k + t) % 26);
    k++;
  }
  double s = 0;
  for (struct rec *r = a + n - 1; r >= a + 1; r -= 3) s += r->v * 0.5 - r[-1].id;
  printf("%.2f %.2f %.2f\n", s, scan(a, a + n, 1e9), scan(a, a + n, 500.0));
  /* rows of doubles walked by pointer, columns by index */
  int cols = 1000 + argc;
  double *m = malloc(sizeof(double) * (size_t)(cols * 300));
  for (long i = 0; i < (long)cols * 300; i++) m[i] = (double)(i % 101);
  double t = 0;
  for (const double *row = m; row < m + (long)cols * 300; row += cols)
    for (int j = 0; j < cols; j += 7) t += row[j] - row[cols - 1 - j];
  printf("%.2f\n", t);
  free(m);
  free(a);
  return 0;
}
