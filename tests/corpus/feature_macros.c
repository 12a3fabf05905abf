/* trap: a feature test macro before the includes (_GNU_SOURCE): with the runtime's header included first, the C library had read its features already, memmem() and mempcpy() were undeclared, implicitly int, and their pointers cut to 32 bits */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  int n = 200000;
  char *text = malloc((size_t)n + 1);
  for (int i = 0; i < n; i++) text[i] = (char)('a' + i % 23);
  text[n] = '\0';
  long s = 0;
  for (int i = 0; i < n; i++) s += text[i];
  const char *hit = memmem(text, (size_t)n, "wab", 3);
  char copy[8];
  char *end = mempcpy(copy, text + 20, 3);
  *end = '\0';
  printf("s=%ld at=%ld copy=%s\n", s, hit ? (long)(hit - text) : -1L, copy);
  free(text);
  return 0;
}
