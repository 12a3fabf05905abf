/* trap: rows of compressed sparse row matrices, for (k = R[i]; k < R[i + 1]; k++) with
   x[col[k]] -- look-ahead across rows must stay inside what the rows read: column arrays
   sized exactly, empty rows, a row pointer array that is not monotone (later rows start
   before earlier ones end), a last row ending below the current index, an offset
   R[i - 1] .. R[i], a row loop over a sub-range, an early exit, and a store into R */
#include <stdio.h>
#include <stdlib.h>

static double spmv(long n, const int *rp, const int *col, const double *x, double *y)
{
  double t = 0;
  for (long i = 0; i < n; i++) {
    double s = 0;
    for (long k = rp[i]; k < rp[i + 1]; k++) s += x[col[k]];
    y[i] = s;
    t += s;
  }
  return t;
}

static double spmv_offset(long lo, long hi, const long *rp, const unsigned *col,
                          const double *x)
{
  double s = 0;
  for (long i = lo; i <= hi; i++)
    for (long k = rp[i - 1]; k < rp[i]; k++) s += x[col[k]] * 0.5;
  return s;
}

static double first_big(long n, const int *rp, const int *col, const double *x)
{
  double s = 0;
  for (long i = 0; i < n; i++) {
    for (long k = rp[i]; k < rp[i + 1]; k++) {
      s += x[col[k]];
      if (s > 1e15) return s;
    }
  }
  return s;
}

static void relabel(long n, int *rp, const int *col, double *x)
{
  for (long i = 0; i < n; i++) {
    for (long k = rp[i]; k < rp[i + 1]; k++) x[col[k]] += 1.0;
    rp[i] = rp[i];   /* a store of R's element type: the rows may change */
  }
}

int main(void)
{
  long n = 20000, nx = 50000;
  int *rp = malloc((size_t)(n + 1) * sizeof *rp);
  long nnz = 0;
  rp[0] = 0;
  for (long i = 0; i < n; i++) {
    nnz += (i % 7 == 3) ? 0 : (i * 13) % 9 + 1;   /* some rows empty */
    rp[i + 1] = (int)nnz;
  }
  int *col = malloc((size_t)nnz * sizeof *col);   /* exactly sized */
  for (long k = 0; k < nnz; k++) col[k] = (int)((k * 7919) % nx);
  double *x = malloc((size_t)nx * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  for (long j = 0; j < nx; j++) x[j] = (double)(j % 101) * 0.25;
  printf("spmv %.2f\n", spmv(n, rp, col, x, y));
  printf("y %.2f %.2f\n", y[1], y[n - 1]);

  /* not monotone: row 1 restarts at 0, the last row ends at 5 (below most indices) */
  int bad[6] = {0, 40, 0, 60, 10, 5};
  int *bcol = malloc(60 * sizeof *bcol);
  for (int k = 0; k < 60; k++) bcol[k] = (k * 37) % (int)nx;
  printf("not monotone %.2f\n", spmv(5, bad, bcol, x, y));

  long *lrp = malloc((size_t)(n + 1) * sizeof *lrp);
  unsigned *ucol = malloc((size_t)nnz * sizeof *ucol);
  for (long i = 0; i <= n; i++) lrp[i] = rp[i];
  for (long k = 0; k < nnz; k++) ucol[k] = (unsigned)col[k];
  printf("offset %.2f\n", spmv_offset(1, n, lrp, ucol, x));
  printf("sub-range %.2f\n", spmv_offset(n / 2, n / 2 + 100, lrp, ucol, x));
  printf("empty range %.2f\n", spmv_offset(5, 4, lrp, ucol, x));
  printf("first big %.2f\n", first_big(n, rp, col, x));
  relabel(n, rp, col, x);
  printf("relabel %.2f\n", spmv(n, rp, col, x, y));

  free(lrp);
  free(ucol);
  free(bcol);
  free(col);
  free(rp);
  free(x);
  free(y);
  return 0;
}
