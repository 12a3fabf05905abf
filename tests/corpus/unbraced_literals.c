/* trap: unbraced loop bodies whose last token is the `}` of a compound literal or a vector literal (a `for`, an `if` without `else`, a label, a `case`): the `;` after it belongs to the body */
#include <stdio.h>
#include <stdlib.h>

struct pt { double x, y; };
typedef int v4 __attribute__((vector_size(16)));

static void bump(struct pt *v, long n) {
  long i = 0;
  if (n == -1)
    goto again; /* never taken: the label is used */
  for (i = 0; i < n; i++)
  again:
    v[i] = (struct pt){ v[i].x + 1, v[i].y };
}

int main(void) {
  long n = 1 << 18;
  double *a = malloc((size_t)n * sizeof *a);
  struct pt *v = malloc((size_t)n * sizeof *v);
  v4 *w = malloc((size_t)(n / 4) * sizeof *w);
  if (!a || !v || !w)
    return 1;
  for (long i = 0; i < n; i++) a[i] = (double)(i % 17);
  for (long i = 0; i < n; i++) v[i] = (struct pt){ a[i], 1 };
  for (long i = 0; i < n; i++) if (i & 1) v[i] = (struct pt){ 2 * a[i], -1 };
  for (long i = 0; i < n / 4; i++) w[i] = (v4){ (int)i, 1, 2, (int)a[i] };
  bump(v, n);
  for (long i = 0; i < n; i++)
    switch (i % 3) {
    case 0: v[i] = (struct pt){ 0, v[i].y }; break;
    default: v[i] = (struct pt){ v[i].x, 0 };
    }
  double s = 0;
  long t = 0;
  for (long i = 0; i < n; i++) s += v[i].x * 3 + v[i].y;
  for (long i = 0; i < n / 4; i++) t += w[i][0] + w[i][3];
  printf("%.17g %ld\n", s, t);
  return 0;
}
