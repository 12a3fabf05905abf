/* trap: references through struct members -- s.a[i], p->v[i].x, arrays of structs, flexible array members */
#include <stdio.h>
#include <stdlib.h>

struct pt { double x, y; int tag; };
struct bag { int n; double a[3000]; struct pt v[2000]; };
struct flex { size_t n; float d[]; };

static double walk(struct bag *p) {
  double s = 0;
  for (int i = 0; i < 2000; i++) s += p->v[i].x * p->v[i].y + p->v[i].tag;
  for (int i = 0; i < p->n; i++) s += p->a[i];
  return s;
}

int main(void) {
  static struct bag s;
  s.n = 3000;
  for (int i = 0; i < s.n; i++) s.a[i] = i * 0.25;
  for (int i = 0; i < 2000; i++) { s.v[i].x = i; s.v[i].y = 1.0 / (i + 1); s.v[i].tag = i % 3; }
  double r = walk(&s);
  /* array of structs, member of every 3rd element, written backwards */
  int n = 4099;
  struct pt *arr = malloc((size_t)n * sizeof *arr);
  for (int i = n - 1; i >= 0; i--) { arr[i].x = i; arr[i].y = -i; arr[i].tag = i & 1; }
  double q = 0;
  for (int i = 0; i < n; i += 3) q += arr[i].x + arr[i].tag;
  for (struct pt *p = arr; p < arr + n; p++) p->y += p->x;
  for (int i = 0; i < n; i++) q += arr[i].y;
  /* flexible array member, exactly sized */
  size_t m = 1025;
  struct flex *f = malloc(sizeof *f + m * sizeof f->d[0]);
  f->n = m;
  for (size_t i = 0; i < f->n; i++) f->d[i] = (float)(i % 10);
  float fs = 0;
  for (size_t i = 0; i < f->n; i++) fs += f->d[i];
  /* nested arrays inside an array of structs */
  struct row { short c[37]; } *rows = malloc(200 * sizeof *rows);
  for (int i = 0; i < 200; i++) for (int j = 0; j < 37; j++) rows[i].c[j] = (short)(i - j);
  long rs = 0;
  for (int j = 0; j < 37; j++) for (int i = 0; i < 200; i++) rs += rows[i].c[j] * j;
  printf("%.4f %.4f %.1f %ld\n", r, q, (double)fs, rs);
  free(arr); free(f); free(rows);
  return 0;
}
