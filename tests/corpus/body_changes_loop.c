/* trap: loop bound and index variable changed inside the loop body */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int n = 50000;
  int *a = malloc((size_t)n * sizeof *a);
  for (int i = 0; i < n; i++) a[i] = (i * 7 + 3) % 101;
  unsigned long s = 0;
  /* index skips ahead inside the body */
  for (int i = 0; i < n; i++) {
    s += (unsigned)a[i];
    if (a[i] % 13 == 0) i += 4;
  }
  printf("skip %lu\n", s);
  /* bound shrinks inside the body */
  int lim = n;
  s = 0;
  for (int i = 0; i < lim; i++) {
    s = s * 3 + (unsigned)a[i];
    if (a[i] == 100) lim -= 7;
  }
  printf("shrink %lu %d\n", s, lim);
  /* index goes backwards sometimes (bounded) */
  s = 0;
  int back = 0;
  for (int i = 0; i < n; i++) {
    s += (unsigned)a[i] * (unsigned)(i & 15);
    if (a[i] == 50 && back < 1000) { i -= 2; back++; if (i < -1) i = -1; }
  }
  printf("back %lu %d\n", s, back);
  /* bound read from memory that the body writes */
  int *cnt = malloc(2 * sizeof *cnt);
  cnt[0] = 100;
  s = 0;
  for (int i = 0; i < cnt[0]; i++) {
    s += (unsigned)a[i];
    if (i % 10 == 0 && cnt[0] + 37 <= n) cnt[0] += 37;
  }
  printf("membound %lu %d\n", s, cnt[0]);
  /* inner index reset by the inner body */
  s = 0;
  for (int i = 0; i < 200; i++)
    for (int j = 0, resets = 0; j < 200; j++) {
      s += (unsigned)a[i * 200 + j];
      if (a[i * 200 + j] == 0 && resets++ < 2) j = j / 2;
    }
  printf("reset %lu\n", s);
  free(a); free(cnt);
  return 0;
}
