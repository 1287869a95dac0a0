// The floor under a cached cold epoch's receive and cache write (issue
// 41): what the kernel alone costs to receive HTTP objects from a loopback
// server and put them into files, each way a cache could be written, with
// no engine and no consumer. A cached epoch must put every byte into the
// page cache (so the next epoch reads it from memory); this program says
// what that costs beside the receive alone.
//
//   cc -O2 -pthread -o cache_write_floor bench/http/cache_write_floor.c
//   ./cache_write_floor PORT MODE PARALLEL OUTDIR /path1 /path2 ...
//
// GETs each path from 127.0.0.1:PORT (HTTP/1.1, a connection a GET, the
// answer's Content-Length read) on PARALLEL threads taking paths in order,
// the body by MODE:
//   null       read into a 1 MiB buffer, nothing written (curl > /dev/null)
//   write      read into the buffer, written to OUTDIR/<k>.bin in 16 KiB
//              writes (the engine's kPageCacheWriteBlock)
//   write1m    the same, each read written in one call (up to 1 MiB)
//   splice     socket -> pipe -> file with splice(2), up to 1 MiB a call:
//              the socket's pages are moved to the pipe, not copied to
//              user memory; the one copy is the page cache's
//   splice16k  the same through a 16 KiB pipe
// Files are left in OUTDIR (the caller deletes them, as a cache folder
// is). Prints the wall seconds and this process's CPU seconds.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum Mode { kNull, kWrite, kWrite1m, kSplice, kSplice16k };
enum { kBuffer = 1 << 20, kBlock = 16 << 10, kHeaders = 64 << 10 };

static int port;
static enum Mode mode;
static const char* outdir;
static char** paths;
static int count;
static atomic_int next_path;

static void die(const char* what) {
  perror(what);
  exit(1);
}

static void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) die("write");
    p += w;
    n -= (size_t)w;
  }
}

static void* worker(void* unused) {
  (void)unused;
  char* buf = malloc(kBuffer + 1);
  if (!buf) die("malloc");
  const int splicing = mode == kSplice || mode == kSplice16k;
  const size_t chunk = mode == kSplice16k ? kBlock : kBuffer;
  int pfd[2] = {-1, -1};
  if (splicing) {
    if (pipe(pfd) < 0) die("pipe");
    if (fcntl(pfd[1], F_SETPIPE_SZ, (int)chunk) < 0) die("F_SETPIPE_SZ");
  }
  for (int k; (k = atomic_fetch_add(&next_path, 1)) < count;) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || connect(s, (struct sockaddr*)&a, sizeof a) < 0) die("connect");
    char req[4096];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                     paths[k]);
    write_all(s, req, (size_t)n);
    size_t have = 0;
    char* end = NULL;
    while (!end) {
      if (have == kHeaders) die("headers too long");
      ssize_t r = read(s, buf + have, kHeaders - have);
      if (r <= 0) die("reading the headers");
      have += (size_t)r;
      buf[have] = 0;
      end = strstr(buf, "\r\n\r\n");
    }
    if (strncmp(buf, "HTTP/1.1 200", 12) != 0) die("not a 200");
    const char* cl = strcasestr(buf, "\r\ncontent-length:");
    if (!cl) die("no Content-Length");
    const long long length = atoll(cl + 17);
    const size_t first = have - (size_t)(end + 4 - buf);
    int out = -1;
    if (mode != kNull) {
      char name[4096];
      snprintf(name, sizeof name, "%s/%d.bin", outdir, k);
      out = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out < 0) die(name);
      write_all(out, end + 4, first);
    }
    for (long long got = (long long)first; got < length;) {
      if (splicing) {
        ssize_t r = splice(s, NULL, pfd[1], NULL, chunk, SPLICE_F_MOVE | SPLICE_F_MORE);
        if (r <= 0) die("splice from the socket");
        for (ssize_t left = r; left > 0;) {
          ssize_t w = splice(pfd[0], NULL, out, NULL, (size_t)left, SPLICE_F_MOVE);
          if (w <= 0) die("splice into the file");
          left -= w;
        }
        got += r;
        continue;
      }
      ssize_t r = read(s, buf, kBuffer);
      if (r <= 0) die("reading the body");
      if (mode == kWrite1m) write_all(out, buf, (size_t)r);
      if (mode == kWrite) {
        for (ssize_t o = 0; o < r; o += kBlock) {
          write_all(out, buf + o, (size_t)(r - o < kBlock ? r - o : kBlock));
        }
      }
      got += r;
    }
    close(s);
    if (out >= 0) close(out);
  }
  free(buf);
  return NULL;
}

int main(int argc, char** argv) {
  static const char* const kModes[] = {"null", "write", "write1m", "splice", "splice16k"};
  if (argc < 6) {
    fprintf(stderr, "usage: %s PORT null|write|write1m|splice|splice16k PARALLEL OUTDIR PATH...\n",
            argv[0]);
    return 2;
  }
  port = atoi(argv[1]);
  int m = 0;
  while (m < 5 && strcmp(argv[2], kModes[m]) != 0) ++m;
  if (m == 5) {
    fprintf(stderr, "unknown mode %s\n", argv[2]);
    return 2;
  }
  mode = (enum Mode)m;
  int parallel = atoi(argv[3]);
  if (parallel < 1 || parallel > 64) parallel = 4;
  outdir = argv[4];
  paths = argv + 5;
  count = argc - 5;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t threads[64];
  for (int i = 0; i < parallel; ++i) pthread_create(&threads[i], NULL, worker, NULL);
  for (int i = 0; i < parallel; ++i) pthread_join(threads[i], NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("%.3f %.3f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
         (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
  return 0;
}
