// What first touching fresh anonymous memory costs on this machine, in huge
// pages or in 4 KiB ones (issue 41, zero41s): a 2 MiB-aligned block of
// BYTES advised MADV_HUGEPAGE (huge), MADV_NOHUGEPAGE (nohuge) or not at
// all (default), then filled PASSES times by memset; each pass prints its
// wall and CPU seconds (system among them) and minor faults. The first pass
// is the first touch (fault, zeroing, and in a VM whatever the host does
// for memory it had taken back); the next ones are memory speed. With
// POPULATE set in the environment the block is first populated by
// MADV_POPULATE_WRITE (faults without the trap per page).
//
//     gcc -O2 -o /tmp/fresh_pages bench/python/fresh_pages.c
//     /tmp/fresh_pages 2.1e9 huge 2; /tmp/fresh_pages 2.1e9 nohuge 2
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static double seconds(struct timeval t) { return t.tv_sec + t.tv_usec * 1e-6; }

static void report(const char *what, struct rusage *a, struct rusage *b, double wall, size_t n) {
  const double sys = seconds(b->ru_stime) - seconds(a->ru_stime);
  const double cpu = seconds(b->ru_utime) - seconds(a->ru_utime) + sys;
  printf("%s: %.3f s wall, %.3f s CPU (system %.3f), %ld minor faults, %.2f GB/s\n", what, wall,
         cpu, sys, b->ru_minflt - a->ru_minflt, n / wall / 1e9);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s BYTES huge|nohuge|default [PASSES]\n", argv[0]);
    return 2;
  }
  const size_t n = (size_t)atof(argv[1]);
  const char *mode = argv[2];
  const int passes = argc > 3 ? atoi(argv[3]) : 1;
  const size_t huge = (size_t)2 << 20;
  char *p = aligned_alloc(huge, (n + huge - 1) / huge * huge);
  if (p == NULL) return 1;
  if (!strcmp(mode, "huge")) madvise(p, n, MADV_HUGEPAGE);
  if (!strcmp(mode, "nohuge")) madvise(p, n, MADV_NOHUGEPAGE);
  struct rusage a, b;
  if (getenv("POPULATE")) {
    getrusage(RUSAGE_SELF, &a);
    const double t0 = now();
    const int rc = madvise(p, n, MADV_POPULATE_WRITE);
    const double t1 = now();
    getrusage(RUSAGE_SELF, &b);
    report(rc == 0 ? "populate" : "populate (refused)", &a, &b, t1 - t0, n);
  }
  for (int k = 0; k < passes; k++) {
    getrusage(RUSAGE_SELF, &a);
    const double t0 = now();
    memset(p, k + 1, n);
    const double t1 = now();
    getrusage(RUSAGE_SELF, &b);
    char what[64];
    snprintf(what, sizeof what, "%s, pass %d", mode, k);
    report(what, &a, &b, t1 - t0, n);
  }
  return p[n / 2] == 0;
}
