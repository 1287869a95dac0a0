// Python repr(float) on top of std::to_chars' shortest round-trip digits.
// CPython's repr uses David Gay's shortest mode; both pick the shortest
// digit string that round-trips and, among those, the one closest to the
// exact value, so the digits agree and only the layout needs CPython's rules.
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "formats/json/py_json.h"

namespace sluice {

std::string PyFloatRepr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";

  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  // "[-]d[.ddd]e(+|-)XX"
  std::string_view s(buf, static_cast<size_t>(res.ptr - buf));
  const bool negative = s.front() == '-';
  if (negative) s.remove_prefix(1);
  const size_t e_pos = s.find('e');
  std::string digits(1, s[0]);
  if (e_pos > 1) digits.append(s.substr(2, e_pos - 2));  // skip the '.'
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string_view exp_text = s.substr(e_pos + 1);
  const bool exp_negative = exp_text.front() == '-';
  exp_text.remove_prefix(1);  // to_chars always writes the sign
  int exp = 0;
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);
  if (exp_negative) exp = -exp;

  std::string out;
  if (negative) out.push_back('-');
  const int n = static_cast<int>(digits.size());
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out.append("0.");
      out.append(static_cast<size_t>(-exp - 1), '0');
      out.append(digits);
    } else if (n <= exp + 1) {
      out.append(digits);
      out.append(static_cast<size_t>(exp + 1 - n), '0');
      out.append(".0");
    } else {
      out.append(digits, 0, static_cast<size_t>(exp + 1));
      out.push_back('.');
      out.append(digits, static_cast<size_t>(exp + 1));
    }
  } else {
    out.push_back(digits[0]);
    if (n > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    out.push_back('e');
    out.push_back(exp < 0 ? '-' : '+');
    const int mag = exp < 0 ? -exp : exp;
    if (mag < 10) out.push_back('0');
    out.append(std::to_string(mag));
  }
  return out;
}

}  // namespace sluice
