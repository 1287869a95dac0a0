#include "formats/json/py_number_text.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace sluice {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view Strip(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Consumes `digit (["_"] digit)*` at s[pos], appending the digits to `out`.
// False when there is no digit at `pos` or an underscore is misplaced.
bool TakeDigitPart(std::string_view s, size_t& pos, std::string& out) {
  if (pos >= s.size() || !IsDigit(s[pos])) return false;
  out.push_back(s[pos++]);
  while (pos < s.size()) {
    if (IsDigit(s[pos])) {
      out.push_back(s[pos++]);
    } else if (s[pos] == '_' && pos + 1 < s.size() && IsDigit(s[pos + 1])) {
      ++pos;
    } else {
      break;
    }
  }
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// For a well-formed `clean` ("ddd.ddde-dd") that from_chars found out of
// range: true when it is too large (Python gives inf), false when too small
// (Python gives 0.0).
bool OverflowsToInfinity(std::string_view clean) {
  size_t e = clean.find('e');
  std::string_view mant = clean.substr(0, e);
  int64_t exp = 0;
  if (e != std::string_view::npos) {
    size_t p = e + 1;
    bool neg = false;
    if (clean[p] == '+' || clean[p] == '-') neg = clean[p++] == '-';
    for (; p < clean.size(); ++p) {
      if (exp < 1000000000) exp = exp * 10 + (clean[p] - '0');
    }
    if (neg) exp = -exp;
  }
  // Decimal exponent of the first nonzero digit.
  int64_t int_digits = static_cast<int64_t>(mant.find('.') == std::string_view::npos
                                                ? mant.size() : mant.find('.'));
  int64_t k = 0;  // index of the first nonzero digit, dot skipped
  for (char c : mant) {
    if (c == '.') continue;
    if (c != '0') break;
    ++k;
  }
  return int_digits - 1 - k + exp > 0;
}

// Sign and digits (underscores dropped) of Python int() text; false when
// `text` is not one.
bool SplitPyInt(std::string_view text, bool& negative, std::string& digits) {
  std::string_view s = Strip(text);
  negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  size_t pos = 0;
  return TakeDigitPart(s, pos, digits) && pos == s.size();
}

}  // namespace

std::optional<int64_t> ParsePyIntText(std::string_view text) {
  bool negative = false;
  std::string digits;
  if (!SplitPyInt(text, negative, digits)) return std::nullopt;
  if (digits.size() > kPyIntMaxStrDigits) return std::nullopt;  // leading zeros count
  // Accumulate as a negative number so INT64_MIN fits.
  int64_t v = 0;
  for (char c : digits) {
    int d = c - '0';
    if (v < (std::numeric_limits<int64_t>::min() + d) / 10) return std::nullopt;
    v = v * 10 - d;
  }
  if (!negative) {
    if (v == std::numeric_limits<int64_t>::min()) return std::nullopt;
    v = -v;
  }
  return v;
}

std::optional<std::string> ParsePyIntDigits(std::string_view text) {
  bool negative = false;
  std::string digits;
  if (!SplitPyInt(text, negative, digits)) return std::nullopt;
  if (digits.size() > kPyIntMaxStrDigits) return std::nullopt;
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return std::string("0");  // -0 is 0
  digits.erase(0, first);
  if (negative) digits.insert(digits.begin(), '-');
  return digits;
}

std::optional<double> ParsePyFloatText(std::string_view text) {
  std::string_view s = Strip(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (EqualsIgnoreCase(s, "inf") || EqualsIgnoreCase(s, "infinity")) {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (EqualsIgnoreCase(s, "nan")) {
    return std::copysign(std::numeric_limits<double>::quiet_NaN(), negative ? -1.0 : 1.0);
  }
  // number ::= [digitpart] "." digitpart | digitpart ["."]; then [exponent].
  std::string clean;  // without sign and underscores, for from_chars
  size_t pos = 0;
  bool int_part = TakeDigitPart(s, pos, clean);
  if (pos < s.size() && s[pos] == '.') {
    clean.push_back('.');
    ++pos;
    bool frac_part = TakeDigitPart(s, pos, clean);
    if (!int_part && !frac_part) return std::nullopt;
  } else if (!int_part) {
    return std::nullopt;
  }
  if (pos < s.size() && (s[pos] == 'e' || s[pos] == 'E')) {
    clean.push_back('e');
    ++pos;
    if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) clean.push_back(s[pos++]);
    if (!TakeDigitPart(s, pos, clean)) return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), v,
                                   std::chars_format::general);
  // Out of range: from_chars reports it without a value; Python gives inf or
  // 0.0 (with the sign).
  if (ec == std::errc::result_out_of_range) {
    v = OverflowsToInfinity(clean) ? std::numeric_limits<double>::infinity() : 0.0;
  } else if (ec != std::errc() || end != clean.data() + clean.size()) {
    return std::nullopt;
  }
  return negative ? -v : v;
}

}  // namespace sluice
