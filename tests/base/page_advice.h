// Test helper: how the kernel was told to map an address, read from
// /proc/self/smaps: the VmFlags of the mapping that holds it ("hg": advised
// MADV_HUGEPAGE, "nh": MADV_NOHUGEPAGE), for tests of a buffer's page-size
// advice that look at what the kernel recorded, not at the code's call.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::testing {

// Whether the kernel takes huge-page advice at all (built with
// transparent huge pages); where it does not, madvise refuses it and no
// flag is recorded.
inline bool KernelTakesHugePageAdvice() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  return f.good();
}

// The VmFlags tokens of the mapping holding `p` (empty if none does).
inline std::vector<std::string> VmFlagsAt(const void* p) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long begin = 0, end = 0;
    // A mapping's header: "begin-end perms ..."; its fields follow.
    if (std::sscanf(line.c_str(), "%llx-%llx ", &begin, &end) == 2 &&
        line.find(':') > line.find(' ')) {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) {
      std::istringstream tokens(line.substr(8));
      std::vector<std::string> flags;
      for (std::string t; tokens >> t;) flags.push_back(t);
      return flags;
    }
  }
  return {};
}

inline bool HasVmFlag(const void* p, const std::string& flag) {
  for (const std::string& f : VmFlagsAt(p)) {
    if (f == flag) return true;
  }
  return false;
}

}  // namespace sluice::testing
