#include "stores/hf/hf_url.h"

#include <algorithm>
#include <cctype>

#include "stores/common/store_keys.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

Status Malformed(std::string_view url, std::string_view why) {
  return InvalidArgumentError("malformed Hugging Face URL '" + std::string(url) + "': " +
                              std::string(why) +
                              " (expected hf://[datasets/|spaces/|models/]ORG/NAME[@REVISION][/PATH])");
}

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Length of a special ref ("refs/convert/<word>", "refs/pr/<digits>") at the
// start of `s`, else 0: these hold '/' and are matched before the path.
size_t SpecialRefLength(std::string_view s) {
  for (std::string_view head : {std::string_view("refs/convert/"), std::string_view("refs/pr/")}) {
    if (s.substr(0, head.size()) != head) continue;
    const bool digits = head == "refs/pr/";
    size_t n = head.size();
    while (n < s.size() && (digits ? std::isdigit(static_cast<unsigned char>(s[n])) != 0
                                   : IsWordChar(s[n]))) {
      ++n;
    }
    if (n > head.size()) return n;
  }
  return 0;
}

}  // namespace

std::string HfRepoPath::UrlPrefix() const {
  if (repo_type == "dataset") return "datasets/";
  if (repo_type == "space") return "spaces/";
  return "";
}

Result<HfRepoPath> ParseHfUrl(std::string_view url) {
  constexpr std::string_view kScheme = "hf://";
  if (url.substr(0, kScheme.size()) != kScheme) return Malformed(url, "not an hf:// URL");
  for (char c : url) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '?' || c == '#') {
      return Malformed(url, "control character, '?' or '#'");
    }
  }
  std::string_view body = url.substr(kScheme.size());
  while (!body.empty() && body.front() == '/') body.remove_prefix(1);
  while (!body.empty() && body.back() == '/') body.remove_suffix(1);
  HfRepoPath out;
  out.repo_type = "model";
  const size_t first_slash = body.find('/');
  const std::string_view first = body.substr(0, first_slash);
  if (first == "datasets" || first == "spaces" || first == "models") {
    out.repo_type = std::string(first.substr(0, first.size() - 1));
    if (first_slash == std::string_view::npos) return Malformed(url, "the repository must be ORG/NAME");
    body.remove_prefix(first_slash + 1);
  } else if (first == "buckets" || first == "kernels") {
    return UnimplementedError("Hugging Face " + std::string(first) + " are not supported, only " +
                              "datasets, models and spaces: '" + std::string(url) + "'");
  }
  // '@' separates the revision only right after ORG/NAME.
  const size_t at = body.find('@');
  std::string_view rest;  // the path in the repository
  if (at == std::string_view::npos ||
      std::count(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(at), '/') > 1) {
    const size_t s1 = body.find('/');
    if (s1 == std::string_view::npos || s1 == 0) {
      return Malformed(url, "the repository must be ORG/NAME");
    }
    const size_t s2 = body.find('/', s1 + 1);
    out.repo_id = std::string(body.substr(0, s2));
    if (s2 != std::string_view::npos) rest = body.substr(s2 + 1);
    out.revision = "main";
  } else {
    out.repo_id = std::string(body.substr(0, at));
    std::string_view rev_and_path = body.substr(at + 1);
    size_t rev_len = SpecialRefLength(rev_and_path);
    if (rev_len == 0) rev_len = std::min(rev_and_path.find('/'), rev_and_path.size());
    out.revision = PercentDecode(rev_and_path.substr(0, rev_len));
    if (out.revision.empty()) return Malformed(url, "empty revision after '@'");
    rest = rev_and_path.substr(rev_len);
    if (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);
  }
  const size_t slash = out.repo_id.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == out.repo_id.size() ||
      out.repo_id.find('/', slash + 1) != std::string::npos) {
    return Malformed(url, "the repository must be ORG/NAME");
  }
  if (!ValidatePrefix(out.repo_id, url).ok() || !ValidatePrefix(rest, url).ok()) {
    return Malformed(url, "empty, '.' or '..' path component");
  }
  out.path = std::string(rest);
  return out;
}

}  // namespace sluice
