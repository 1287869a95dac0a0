#include "stores/signing/uri_encoding.h"

#include <vector>

namespace sluice {

namespace {

bool IsUnreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '.' || c == '_' || c == '~';
}

std::string Encode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (IsUnreserved(c) || (keep_slash && c == '/')) {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string UriEncode(std::string_view s) { return Encode(s, /*keep_slash=*/false); }

std::string EncodeUriPath(std::string_view path) { return Encode(path, /*keep_slash=*/true); }

std::string PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = HexValue(s[i + 1]);
      int lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += char(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

Result<std::string> StrictPercentDecode(std::string_view s) {
  for (size_t i = s.find('%'); i != std::string_view::npos; i = s.find('%', i + 3)) {
    if (i + 2 >= s.size() || HexValue(s[i + 1]) < 0 || HexValue(s[i + 2]) < 0) {
      return InvalidArgumentError("malformed percent escape in '" + std::string(s) + "'");
    }
  }
  return PercentDecode(s);
}

std::string NormalizeUriPath(std::string_view path) {
  std::vector<std::string_view> kept;
  bool trailing_slash = false;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    std::string_view seg = path.substr(pos, end - pos);
    const bool is_last = end == path.size();
    if (seg.empty() || seg == ".") {
      // An empty or "." last segment means the path names a folder.
      if (is_last) trailing_slash = true;
    } else if (seg == "..") {
      if (!kept.empty()) kept.pop_back();
      if (is_last) trailing_slash = true;
    } else {
      kept.push_back(seg);
      if (is_last) trailing_slash = false;
    }
    pos = end + 1;
  }
  std::string out = "/";
  for (size_t i = 0; i < kept.size(); ++i) {
    if (i > 0) out += '/';
    out += kept[i];
  }
  if (trailing_slash && !kept.empty()) out += '/';
  return out;
}

}  // namespace sluice
