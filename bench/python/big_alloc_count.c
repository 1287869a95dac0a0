// Preloaded by single_pass_buffers.py: counts aligned_alloc calls of 4 MiB
// or more (UninitializedBuffer's fresh large buffers) and prints the count
// and their bytes at exit ("BIGALLOC <count> <bytes>" on stderr).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
static atomic_long big, bytes;
static void *(*real)(size_t, size_t);
void *aligned_alloc(size_t a, size_t n) {
  if (!real) real = dlsym(RTLD_NEXT, "aligned_alloc");
  if (n >= (4u << 20)) { atomic_fetch_add(&big, 1); atomic_fetch_add(&bytes, (long)n); }
  return real(a, n);
}
__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "BIGALLOC %ld %ld\n", (long)big, (long)bytes);
}
