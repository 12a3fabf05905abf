/* trap: globals in loop bounds and bases are invariant in a nest only when the nest
   neither writes them, nor calls anything, nor stores through memory what may be them:
   a bound shrunk through a pointer inside the nest, a bound shrunk by a call inside the
   nest, a base swapped through a pointer to it, and a plain global bound with calls
   elsewhere in the function (hinted).  The index arrays hold exactly the elements the
   loops read: a look-ahead load must take the bound as it is now, never as it was. */
#include <stdio.h>
#include <stdlib.h>

int n_items;
int *idx;
double *vals, *other;
int *shrink_ptr;
double **swap_ptr;

static void shrink(void)
{
  n_items -= 50;
}

static double gather_global(void)
{
  double s = 0;
  for (int i = 0; i < n_items; i++)
    s += vals[idx[i]];
  printf("partial %.1f\n", s);
  return s;
}

static double gather_shrinking(void)
{
  double s = 0;
  for (int i = 0; i < n_items; i++) {
    s += vals[idx[i]];
    if (i % 100 == 0)
      *shrink_ptr -= 50;
  }
  return s;
}

static double gather_call(void)
{
  double s = 0;
  for (int i = 0; i < n_items; i++) {
    s += vals[idx[i]];
    if (i % 100 == 0)
      shrink();
  }
  return s;
}

static double sum_swapped(int n)
{
  double s = 0;
  for (int i = 0; i < n; i++) {
    s += vals[i];
    if (i == n / 2)
      *swap_ptr = other;
  }
  return s;
}

/* How many elements a loop shrinking its bound by 50 every 100 iterations reads. */
static int reads_while_shrinking(int n)
{
  int i = 0;
  for (; i < n; i++)
    if (i % 100 == 0)
      n -= 50;
  return i;
}

int main(void)
{
  const int n = 200000;
  vals = malloc(n * sizeof *vals);
  other = malloc(n * sizeof *other);
  if (!vals || !other)
    return 1;
  for (int k = 0; k < n; k++) {
    vals[k] = k % 13;
    other[k] = k % 7;
  }
  shrink_ptr = &n_items;
  swap_ptr = &vals;
  double t = 0;
  for (int round = 0; round < 3; round++) {
    n_items = n;
    const int reads = round == 0 ? n : reads_while_shrinking(n);
    idx = malloc(reads * sizeof *idx);
    if (!idx)
      return 1;
    for (int k = 0; k < reads; k++)
      idx[k] = (int)((k * 2654435761u) % n);
    t += round == 0 ? gather_global() : round == 1 ? gather_shrinking() : gather_call();
    printf("round %d bound %d sum %.1f\n", round, n_items, t);
    free(idx);
  }
  double *keep = vals;
  t += sum_swapped(n);
  printf("swapped %d total %.1f\n", vals == other, t);
  free(keep);
  free(other);
  return 0;
}
