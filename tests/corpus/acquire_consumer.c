/* trap: a consumer thread waits on an acquire counter before reading b[i] and a[b[i]]: a look-ahead load of b[i + d] (or of a row pointer) would race with the producer's writes */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define N 200000
static int b[N];
static double a[N];
static double *rows[N / 100];
static atomic_int produced;
static volatile int published;

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < N; i++) {
    b[i] = (int)((i * 7919L) % N);
    a[i] = (double)(i % 1000);
    if (i % 100 == 99) rows[i / 100] = &a[i - 99];
    atomic_store_explicit(&produced, i + 1, memory_order_release);
  }
  published = 1;
  return NULL;
}

static void wait_for(int i) {
  while (atomic_load_explicit(&produced, memory_order_acquire) <= i)
    ;
}

int main(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, producer, NULL) != 0) return 1;
  double s = 0;
  for (int i = 0; i < N; i++) {
    while (atomic_load_explicit(&produced, memory_order_acquire) <= i)
      ;
    s += b[i] % 7;
  }
  double g = 0;
  for (int i = 0; i < N; i++) {
    wait_for(N - 1);          /* every element written: a[b[i]] then only reads */
    g += a[b[i]] * 0.5;
  }
  double r = 0;
  for (int k = 0; k < N / 100; k++) {
    wait_for(k * 100 + 99);
    for (int j = 0; j < 100; j++) r += rows[k][j];
  }
  pthread_join(t, NULL);
  printf("%.1f %.1f %.1f %d\n", s, g, r, published);
  return 0;
}
