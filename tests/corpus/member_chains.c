/* trap: bases read through chains of pointers -- S->g->v[i], s.g->v[i], a link replaced
   and freed by a call or a store inside the loop, a NULL link behind a loop that runs no
   iteration, g->rows[i][j] with rows reallocated by a call */
#include <stdio.h>
#include <stdlib.h>

struct grid { long n; double *v; double **rows; long m; };
struct sim { struct grid *g; struct grid *spare; };

/* A call that frees the current grid's data and installs a fresh copy. */
static void regrid(struct sim *S, long upto)
{
  struct grid *g = S->g;
  double *nv = malloc((size_t)g->n * sizeof *nv);
  for (long k = 0; k < g->n; k++) nv[k] = g->v[k] + (k < upto ? 0.0 : 1.0);
  free(g->v);
  g->v = nv;
}

static double sum_chain(struct sim *S)
{
  double s = 0;
  for (long i = 0; i < S->g->n; i++) s += S->g->v[i];
  return s;
}

static double sum_dot_chain(struct sim s)
{
  double t = 0;
  for (long i = 0; i < s.g->n; i++) t += s.g->v[i] * 0.5;
  return t;
}

static double sum_with_regrid(struct sim *S)
{
  double s = 0;
  for (long i = 0; i < S->g->n; i++) {
    s += S->g->v[i];
    if (i % 1000 == 999) regrid(S, i);
  }
  return s;
}

static double sum_with_swap(struct sim *S)
{
  double s = 0;
  for (long i = 0; i < S->g->n; i++) {
    s += S->g->v[i];
    if (i == S->g->n / 2) { struct grid *t = S->g; S->g = S->spare; S->spare = t; }
  }
  return s;
}

static double sum_rows(struct sim *S, long n)
{
  double s = 0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < S->g->m; j++) s += S->g->rows[i][j];
  return s;
}

static double sum_rows_realloc(struct sim *S, long n)
{
  double s = 0;
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < S->g->m; j++) s += S->g->rows[i][j];
    if (i == 1) {
      double **r = malloc((size_t)n * sizeof *r);
      for (long k = 0; k < n; k++) r[k] = S->g->rows[k];
      free(S->g->rows);
      S->g->rows = r;
    }
  }
  return s;
}

static double empty_when_null(struct sim *S, long n)
{
  double s = 0;
  for (long i = 0; i < n; i++) s += S->g->v[i];   /* S->g is NULL and n is 0 */
  return s;
}

int main(void)
{
  long n = 70001, m = 1031, rows = 9;
  struct grid a = {n, malloc((size_t)n * sizeof(double)), malloc((size_t)rows * sizeof(double *)), m};
  struct grid b = {n - 7, malloc((size_t)n * sizeof(double)), NULL, 0};
  for (long i = 0; i < n; i++) { a.v[i] = (double)(i % 97); b.v[i] = (double)(i % 89) * 2; }
  for (long i = 0; i < rows; i++) {
    a.rows[i] = malloc((size_t)m * sizeof(double));
    for (long j = 0; j < m; j++) a.rows[i][j] = (double)((i * 7 + j) % 13);
  }
  struct sim S = {&a, &b};
  printf("chain %.1f\n", sum_chain(&S));
  printf("dot chain %.1f\n", sum_dot_chain(S));
  printf("rows %.1f\n", sum_rows(&S, rows));
  printf("rows realloc %.1f\n", sum_rows_realloc(&S, rows));
  printf("regrid %.1f\n", sum_with_regrid(&S));
  printf("swap %.1f\n", sum_with_swap(&S));
  struct sim E = {NULL, NULL};
  printf("empty %.1f\n", empty_when_null(&E, 0));
  for (long i = 0; i < rows; i++) free(a.rows[i]);
  free(a.rows);
  free(a.v);
  free(b.v);
  return 0;
}
