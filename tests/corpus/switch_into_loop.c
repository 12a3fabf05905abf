/* trap: case labels inside a loop body (Duff's device): the switch jumps past nest entry, where hint variables are initialised */
/* cflags: -Werror=jump-misses-init */
#include <stdio.h>
#include <stdlib.h>

static long duff(const int *a, int n, int start) {
  long s = 0;
  int i = 0;
  switch (start % 3) {
    for (i = 0; i < n; i++) {
    case 0: s += a[i];
    case 1: s ^= a[i] * 3;
    default: s -= i;
    }
  }
  return s;
}

static long inner_switch(const int *a, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) {
    switch (a[i] & 3) {   /* a switch inside the nest: its labels are the nest's own */
    case 0: s += a[i]; break;
    case 1: s -= a[i]; break;
    default: s ^= i;
    }
  }
  return s;
}

int main(int argc, char **argv) {
  (void)argv;
  int n = 400000;
  int *a = malloc((size_t)n * sizeof *a);
  for (int i = 0; i < n; i++) a[i] = (i * 2654435761u) >> 7;
  long s = 0;
  for (int start = argc - 1; start < argc + 2; start++) s += duff(a, n, start);
  printf("%ld %ld\n", s, inner_switch(a, n));
  free(a);
  return 0;
}
