/* trap: references written inside a macro's body (a row pointer A[r][k] in a braced or one-statement macro body, a member p->v[k]): the call's text is not the reference, and hints repeating it would run the body again */
#include <stdio.h>
#include <stdlib.h>

#define BODY(k) { n += 1; s += A[r][k]; }   /* braced: the loop's own braces around it */
#define SUM(k) t += A[r][k]                   /* one statement: the loop body itself */
#define MSUM(k) t += p->v[k]

struct vec { long n; double *v; };

static double member(long len) {
  struct vec *p = malloc(sizeof *p);
  p->n = len;
  p->v = malloc((size_t)len * sizeof *p->v);
  for (long k = 0; k < len; k++) p->v[k] = (double)k;
  double t = 0;
  for (long k = 0; k < len; k++)
    MSUM(k);
  free(p->v);
  free(p);
  return t;
}

int main(int argc, char **argv) {
  long len = argc > 1 ? atol(argv[1]) : 300000, r = 1;
  double **A = malloc(2 * sizeof *A);
  for (long i = 0; i < 2; i++) {
    A[i] = malloc((size_t)len * sizeof **A);
    for (long k = 0; k < len; k++) A[i][k] = (double)(i * 10 + k);
  }
  long n = 0;
  double s = 0, t = 0;
  for (long k = 0; k < len; k++) {
    BODY(k)
  }
  for (long k = 0; k < len; k++)
    SUM(k);
  printf("%ld %.1f %.1f %.1f\n", n, s, t, member(len));
  for (long i = 0; i < 2; i++) free(A[i]);
  free(A);
  return 0;
}
