/* trap: a nest's global bound changed where a careless analysis does not look: in the
   body's #include'd text (its offsets index another file), through a block-scope
   `extern` redeclaration (another declaration of the same object), and by GNU atomic
   builtins through a pointer (libclang shows them as no call).  The index array holds
   the 10 elements the loops read, so a look-ahead to the bound as it was at the nest's
   entry (1,000) reads past it. */
#include <stdio.h>
#include <stdlib.h>

int n_items;
int *idx;
double *vals;
int *bound_ptr;

__attribute__((noinline)) static double by_include(void)
{
  double s = 0;
  for (int i = 0; i < n_items; i++) {
    if (i == 0) {
#include "hidden_writes.inc"
    }
    s += vals[idx[i]];
  }
  return s;
}

__attribute__((noinline)) static double by_redeclaration(void)
{
  double s = 0;
  for (int i = 0; i < n_items; i++) {
    if (i == 0) {
      extern int n_items;
      n_items = 10;
    }
    s += vals[idx[i]];
  }
  return s;
}

__attribute__((noinline)) static double by_atomic_store(void)
{
  double s = 0;
  for (int i = 0; i < n_items; i++) {
    if (i == 0)
      __atomic_store_n(bound_ptr, 10, __ATOMIC_RELAXED);
    s += vals[idx[i]];
  }
  return s;
}

__attribute__((noinline)) static double by_atomic_sub(void)
{
  double s = 0;
  for (int i = 0; i < n_items; i++) {
    if (i == 0)
      __atomic_fetch_sub(bound_ptr, 990, __ATOMIC_RELAXED);
    s += vals[idx[i]];
  }
  return s;
}

int main(void)
{
  vals = calloc(1000, sizeof *vals);
  idx = calloc(10, sizeof *idx);
  if (!vals || !idx)
    return 1;
  for (int k = 0; k < 10; k++) {
    idx[k] = 99 * k;
    vals[99 * k] = k + 0.5;
  }
  bound_ptr = &n_items;
  double (*const ways[])(void) = {by_include, by_redeclaration, by_atomic_store,
                                  by_atomic_sub};
  for (int w = 0; w < 4; w++) {
    n_items = 1000;
    const double s = ways[w]();
    printf("way %d sum %.1f bound %d\n", w, s, n_items);
  }
  free(idx);
  free(vals);
  return 0;
}
