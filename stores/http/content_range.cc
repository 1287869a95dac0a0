#include "stores/http/content_range.h"

#include "stores/http/http_text.h"

namespace sluice {

using http_detail::ParseDecimal;
using http_detail::TrimOws;

std::optional<ContentRange> ParseContentRange(std::string_view value) {
  value = TrimOws(value);
  if (value.substr(0, 6) != "bytes ") return std::nullopt;
  value.remove_prefix(6);
  size_t dash = value.find('-');
  size_t slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) {
    return std::nullopt;
  }
  auto first = ParseDecimal(value.substr(0, dash));
  auto last = ParseDecimal(value.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *last < *first) return std::nullopt;
  ContentRange out{*first, *last, std::nullopt};
  std::string_view total = value.substr(slash + 1);
  if (total != "*") {
    out.total = ParseDecimal(total);
    if (!out.total || *out.total <= *last) return std::nullopt;
  }
  return out;
}

}  // namespace sluice
