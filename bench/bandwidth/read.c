// A STREAM-like read: the bandwidth at which this machine reads a buffer of
// a model's weight size, the bound of memory-bound decode (bench/bandwidth).
//
//   read BYTES [THREADS] [PASSES]
//
// Fills BYTES of floats (first touch by the threads that read them), then
// sums them PASSES times with THREADS OpenMP threads, each pass timed; prints
// the best and the median GB/s (1e9 bytes/s). Summing is the work a decode's
// matvec does per weight (one fused multiply-add of a loaded value): the
// compiler vectorizes it with the host's widest loads (-march=native).
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: read BYTES [THREADS] [PASSES]\n");
    return 2;
  }
  size_t bytes = strtoull(argv[1], NULL, 10);
  int threads = argc > 2 ? atoi(argv[2]) : 2, passes = argc > 3 ? atoi(argv[3]) : 11;
  if (bytes < 4096 || threads < 1 || passes < 1) {
    fprintf(stderr, "read: BYTES >= 4096, THREADS >= 1, PASSES >= 1\n");
    return 2;
  }
  omp_set_num_threads(threads);
  size_t n = bytes / sizeof(float);
  float *a = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  if (!a) {
    fprintf(stderr, "read: cannot allocate %zu bytes\n", bytes);
    return 1;
  }
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i)
    a[i] = (float)(i % 1024) * 0.001f;
  double *gbs = malloc(sizeof(double) * (size_t)passes), sink = 0;
  for (int p = 0; p < passes; ++p) {
    double t0 = now();
    float total = 0;
#pragma omp parallel for schedule(static) reduction(+ : total)
    for (size_t i = 0; i < n; ++i)
      total += a[i];
    double t = now() - t0;
    sink += total;
    gbs[p] = (double)(n * sizeof(float)) / t / 1e9;
  }
  qsort(gbs, (size_t)passes, sizeof(double), cmp);
  printf("read %zu bytes, %d threads, %d passes: best %.1f GB/s, median %.1f GB/s (checksum %.3g)\n",
         n * sizeof(float), threads, passes, gbs[passes - 1], gbs[passes / 2], sink);
  free(gbs);
  free(a);
  return 0;
}
