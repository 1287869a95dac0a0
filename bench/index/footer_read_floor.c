// The floor under a Parquet folder's first open (issue 38): what the
// kernel alone costs to list a folder and read each file's tail, with no
// decoding and nothing written. The engine's first open does this and
// more (decodes each footer, writes listing.json, the footer store and the
// index), so its wall over this program's is the engine's overhead.
//
//   cc -O2 -pthread -o footer_read_floor bench/index/footer_read_floor.c
//   ./footer_read_floor FOLDER [THREADS=16]
//
// Lists FOLDER (readdir, one fstatat a name, as the engine's listing),
// sorts the regular files' names, then reads the last 64 KiB of each
// (open, fstat, pread, close) on THREADS threads taking files in order.
// Prints the files, the bytes read and each phase's wall seconds.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { kTail = 64 << 10 };

static char** names;
static size_t count;
static int folder;
static atomic_size_t next_file;
static atomic_ullong bytes_read;

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int ByName(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

static void* ReadTails(void* unused) {
  (void)unused;
  char* buf = malloc(kTail);
  if (buf == NULL) return NULL;
  for (;;) {
    const size_t i = atomic_fetch_add(&next_file, 1);
    if (i >= count) break;
    const int fd = openat(folder, names[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st;
    if (fstat(fd, &st) == 0) {
      const off_t at = st.st_size > kTail ? st.st_size - kTail : 0;
      const ssize_t n = pread(fd, buf, kTail, at);
      if (n > 0) atomic_fetch_add(&bytes_read, (unsigned long long)n);
    }
    close(fd);
  }
  free(buf);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FOLDER [THREADS]\n", argv[0]);
    return 2;
  }
  const int threads = argc > 2 ? atoi(argv[2]) : 16;
  if (threads < 1 || threads > 1024) {
    fprintf(stderr, "THREADS must be 1 to 1024\n");
    return 2;
  }
  const double t0 = Now();
  folder = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = folder < 0 ? NULL : fdopendir(dup(folder));
  if (dir == NULL) {
    perror(argv[1]);
    return 1;
  }
  size_t room = 0;
  for (struct dirent* e; (e = readdir(dir)) != NULL;) {
    struct stat st;
    if (fstatat(folder, e->d_name, &st, 0) != 0 || !S_ISREG(st.st_mode)) continue;
    if (count == room) {
      room = room ? room * 2 : 4096;
      char** grown = realloc(names, room * sizeof *names);
      if (grown == NULL) {
        perror("realloc");
        return 1;
      }
      names = grown;
    }
    names[count++] = strdup(e->d_name);
  }
  closedir(dir);
  qsort(names, count, sizeof *names, ByName);
  const double t1 = Now();
  pthread_t* ids = calloc((size_t)threads, sizeof *ids);
  for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, ReadTails, NULL);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  const double t2 = Now();
  printf("%zu files, %llu bytes of tails; list %.2f s, tails %.2f s, whole %.2f s\n", count,
         (unsigned long long)atomic_load(&bytes_read), t1 - t0, t2 - t1, t2 - t0);
  return 0;
}
