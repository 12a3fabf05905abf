/* trap: zero-trip loops, and loops whose condition has side effects (i < n && f(i)) or calls functions */
#include <stdio.h>
#include <stdlib.h>

static int calls;
static const int *g_arr;
static int keep_going(int i) { calls++; return g_arr[i] != 777; }
static int next(unsigned *state) { *state = (*state * 1103515245u + 12345u) & 0x7fffffffu; return (int)(*state % 1000u); }

int main(int argc, char **argv) {
  (void)argv;
  int n = 40000;
  int *a = malloc((size_t)n * sizeof *a);
  for (int i = 0; i < n; i++) a[i] = (i * 13) % 1000;
  g_arr = a;
  long s = 0;
  int i;
  for (i = 0; i < n && keep_going(i); i++) s += a[i];
  printf("%ld %d %d\n", s, i, calls);
  /* zero-trip with a symbolic bound */
  int z = argc - 1; /* 0 when run without arguments */
  int *e = malloc(sizeof *e);
  e[0] = 5;
  for (int k = 0; k < z; k++) s += e[k + 100];
  for (int k = z; k > 0; k--) s += e[k - 1 + 100];
  for (int k = 10; k < 10; k++) s += a[k * 1000000];
  /* condition reads and advances a generator: order of calls is the program's output */
  unsigned st = 1;
  long r = 0;
  for (int k = 0; k < n && next(&st) != 999; k++) r += a[k] ^ (long)(st & 0xffff);
  /* condition with a comma expression and post-increment in the subscript */
  int j = 0;
  long c = 0;
  while (c += a[j++], j < n / 2 && a[j] != 0) {}
  /* printf in the condition: observable side effect */
  int p = 0;
  while (p < 5 && printf("p%d ", p) > 0) p++;
  printf("\n%ld %ld %u %ld %d\n", s, r, st, c, j);
  free(a); free(e);
  return 0;
}
