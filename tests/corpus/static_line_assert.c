/* trap: static locals, __LINE__, __func__ and assert inside loop bodies (a duplicated body would change them) */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

static int counter(void) {
  static int calls;
  return ++calls;
}

static long body(const int *a, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) {
    static long seen;      /* one object, however the loop is split */
    seen += a[i];
    assert(a[i] >= 0 && a[i] < 1000);
    s += seen % 1009 + __LINE__;
  }
  return s;
}

int main(void) {
  int n = 20000;
  int *a = malloc((size_t)n * sizeof *a);
  for (int i = 0; i < n; i++) a[i] = (i * 37) % 1000;
  long s = body(a, n) + body(a, n / 3);
  int lines[4] = {0, 0, 0, 0};
  for (int i = 0; i < n; i += 7) {
    static int first_line = __LINE__;
    lines[i & 3] = __LINE__ - first_line;
    s += counter() * (long)a[i] % 97;
    assert(i < n);
  }
  printf("%ld %d %d %d %d %s %d\n", s, lines[0], lines[1], lines[2], lines[3], __func__, counter());
  free(a);
  return 0;
}
