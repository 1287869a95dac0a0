#include "stores/common/store_keys.h"

#include <cstdlib>
#include <cstring>

#include "base/env.h"

namespace sluice {
namespace {

Status CheckComponents(std::string_view key, std::string_view what, std::string_view root,
                       bool allow_trailing_slash) {
  auto bad = [&](std::string_view why) {
    return InvalidArgumentError(std::string(what) + " '" + std::string(key) + "' under " +
                                std::string(root) + " " + std::string(why));
  };
  for (char c : key) {
    if (c == '\0' || c == '\n' || c == '\r') {
      return InvalidArgumentError(std::string(what) + " under " + std::string(root) +
                                  " holds a NUL or line break");
    }
  }
  if (key.front() == '/') return bad("starts with '/'");
  std::string_view rest = key;
  if (allow_trailing_slash && rest.back() == '/') rest.remove_suffix(1);
  size_t start = 0;
  while (true) {
    size_t end = rest.find('/', start);
    std::string_view part = rest.substr(start, end == std::string_view::npos ? rest.npos : end - start);
    if (part.empty()) return bad("has an empty path component");
    if (part == "." || part == "..") return bad("has a '.' or '..' component");
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return Status::Ok();
}

}  // namespace

Status ValidateKey(std::string_view key, std::string_view root) {
  if (key.empty()) {
    return InvalidArgumentError("empty object key under " + std::string(root));
  }
  return CheckComponents(key, "object key", root, /*allow_trailing_slash=*/false);
}

Status ValidatePrefix(std::string_view prefix, std::string_view root) {
  if (prefix.empty()) return Status::Ok();
  return CheckComponents(prefix, "list prefix", root, /*allow_trailing_slash=*/true);
}

std::string JoinKey(std::string_view base, std::string_view key) {
  if (base.empty()) return std::string(key);
  std::string out(base);
  if (out.back() != '/') out += '/';
  out += key;
  return out;
}

Result<BucketPath> SplitBucketPath(std::string_view url, std::string_view rest) {
  for (char c : rest) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return InvalidArgumentError("malformed store URL '" + std::string(url) +
                                  "': holds a space or control character");
    }
  }
  size_t slash = rest.find('/');
  BucketPath out;
  out.bucket = std::string(rest.substr(0, slash));
  if (out.bucket.empty()) {
    return InvalidArgumentError("malformed store URL '" + std::string(url) +
                                "': no bucket or container name");
  }
  if (out.bucket.find_first_of("?#@") != std::string::npos) {
    return InvalidArgumentError("malformed store URL '" + std::string(url) +
                                "': bucket name holds '?', '#' or '@'");
  }
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.front() == '/') path.remove_prefix(1);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    out.path = std::string(path);
  }
  return out;
}

std::string UrlForErrors(std::string_view url) {
  return std::string(url.substr(0, url.find_first_of("?#")));
}

std::optional<std::string> GetEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

Result<std::string> ReadLocalFileRange(const std::string& path, uint64_t offset,
                                       uint64_t length) {
  Env* env = Env::Default();
  SLUICE_ASSIGN_OR_RETURN(OwnedFd fd, env->Open(path, OpenMode::kRead));
  std::string out(length, '\0');
  SLUICE_ASSIGN_OR_RETURN(size_t done, env->PReadFull(fd.get(), path, out.data(), length, offset));
  if (done < length) {
    return IoError("cannot read " + path + " at offset " + std::to_string(offset + done) +
                   ": file shrank");
  }
  return out;
}

std::vector<std::string> SplitAny(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find_first_of(separators, i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

}  // namespace sluice
