/* trap: a gather whose index stream runs across an outer loop, s += a[b[i * 4 + j]] with
   j running 4 times: the index b is pipelined across i while the gather stays with j, so
   the index runs twice a stream's distance ahead; indices at the ends of the tables */
#include <stdio.h>
#include <stdlib.h>

static double gather(long n, const int *b, const double *a)
{
  double s = 0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < 4; j++)
      s += a[b[i * 4 + j]];
  return s;
}

int main(void)
{
  const long n = 1 << 16, m = 4 * n;
  int *b = malloc(m * sizeof *b);
  double *a = malloc(m * sizeof *a);
  if (!a || !b)
    return 1;
  for (long k = 0; k < m; k++) {
    a[k] = (double)(k % 97);
    b[k] = (int)((k * 7919) % m);
  }
  b[0] = 0;
  b[m - 1] = (int)(m - 1);
  printf("%.1f\n", gather(n, b, a));
  free(a);
  free(b);
  return 0;
}
