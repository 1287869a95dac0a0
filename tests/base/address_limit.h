// Test helper: runs a body in a forked child whose address space may grow by
// only so much, to show that a hostile input gives an error rather than an
// allocation the machine cannot make (or an abort when it fails).
//
// RLIMIT_AS cannot work under AddressSanitizer or ThreadSanitizer (their
// shadow memory reserves terabytes): callers skip with kAddressLimitWorks.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <string>

namespace sluice::testing {

// ASan and TSan reserve terabytes of shadow memory, so RLIMIT_AS cannot
// stand for memory there. GCC says so by __SANITIZE_*__, clang by
// __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLUICE_TESTING_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SLUICE_TESTING_SANITIZED 1
#endif
#endif
#ifdef SLUICE_TESTING_SANITIZED
inline constexpr bool kAddressLimitWorks = false;
#else
inline constexpr bool kAddressLimitWorks = true;
#endif

// Bytes of address space this process uses now (/proc/self/statm).
inline uint64_t AddressSpaceBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

// fork(); the child limits its address space to its current size plus
// `headroom` bytes, runs `body` and sends back what it returns. Returns that
// text, "child threw <what>" when `body` threw, or "child exited with N" /
// "child killed by signal N" when the child ended otherwise (an exception
// escaping another thread aborts: signal 6).
inline std::string RunWithAddressLimit(uint64_t headroom, const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(fds[0]);
    const rlim_t limit = AddressSpaceBytes() + headroom;
    const rlimit rl{limit, limit};
    if (::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(97);
    // Never unwind into the test framework's copy in this child.
    std::string out;
    try {
      out = body();
    } catch (const std::exception& e) {
      out = std::string("child threw ") + e.what();
    } catch (...) {
      out = "child threw";
    }
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) ::_exit(98);
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return "child killed by signal " + std::to_string(WTERMSIG(status));
  if (WEXITSTATUS(status) != 0) return "child exited with " + std::to_string(WEXITSTATUS(status));
  return out;
}

}  // namespace sluice::testing
