#include "engine/planner/size_check.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>

#include "engine/planner/mosaic_error.h"

namespace sluice::planner {

Status CheckProduct(std::initializer_list<int64_t> dims) {
  __int128 product = 1;
  for (int64_t d : dims) {
    if (d < 0) return MosaicValueError("negative dimension " + std::to_string(d));
    product *= d;
    if (product > kMaxPlanElements) {
      return MosaicValueError("plan too large: more than " + std::to_string(kMaxPlanElements) +
                              " sample ids");
    }
  }
  return Status::Ok();
}

Status CheckCanonicalNodes(int64_t c, int64_t n) {
  if (c > 4 * n + (int64_t{1} << 20)) {
    return MosaicValueError("num_canonical_nodes (" + std::to_string(c) + ") is far larger than the number of samples (" +
                            std::to_string(n) + ")");
  }
  return Status::Ok();
}

namespace {
// Tests only (SetProcessMemoryLimitForTesting); 0: none set.
std::atomic<uint64_t> limit_for_testing{0};
}  // namespace

void SetProcessMemoryLimitForTesting(uint64_t limit) { limit_for_testing.store(limit); }

uint64_t ProcessMemoryLimit() {
  if (const uint64_t set = limit_for_testing.load(); set != 0) return set;
  uint64_t limit = 0;
  auto least = [&limit](uint64_t v) {
    if (v > 0) limit = limit == 0 ? v : std::min(limit, v);
  };
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) least(uint64_t(pages) * uint64_t(page));
  // cgroup v2: "max" or a byte count (a container's limit, below the machine's).
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  std::string text;
  if (cgroup >> text && !text.empty() && text != "max" && text.find_first_not_of("0123456789") == std::string::npos &&
      text.size() < 20) {
    least(std::stoull(text));
  }
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) least(uint64_t(rl.rlim_cur));
  return limit;
}

Status CheckPlanMemory(std::string_view what, std::string_view unit, int64_t items, int64_t bytes_each,
                       uint64_t limit, std::string_view remedy) {
  const unsigned __int128 need = static_cast<unsigned __int128>(std::max<int64_t>(items, 0)) * uint64_t(std::max<int64_t>(bytes_each, 0));
  if (limit == 0 || need <= limit) return Status::Ok();
  const std::string u(unit);
  return InvalidArgumentError(std::string(what) + " holds " + std::to_string(items) + " " + u + "s at once: about " +
                              std::to_string(uint64_t(std::min<unsigned __int128>(need, UINT64_MAX))) + " bytes (" +
                              std::to_string(bytes_each) + " a " + u + "), more than the " + std::to_string(limit) +
                              " bytes this process may use; " + std::string(remedy));
}

}  // namespace sluice::planner
