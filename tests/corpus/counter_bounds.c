/* trap: bounds and subscripts that read __COUNTER__ (directly or through macros): every repetition of the text in a hint advances the counter and changes what the program's later uses get */
#include <stdio.h>
#include <stdlib.h>

#define NEXT (__COUNTER__ + 1)
#define M (1000 * NEXT)
#define OFF M

int main(void) {
  int *a = calloc(300000, sizeof *a);
  long s = 0;
  for (int i = 0; i < 300000; i++) a[i] = i % 13;
  for (int i = 0; i < M; i++) s += a[i];
  for (int i = 0; i < M; i++) s += a[i + OFF];
  for (int i = 0; i < 1000 * (__COUNTER__ + 5); i++) s += 3 * a[i];
  for (int i = M; i < 200000; i++) s += a[i];
  printf("s=%ld next=%d\n", s, __COUNTER__);
  free(a);
  return 0;
}
