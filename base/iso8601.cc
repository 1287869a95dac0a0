#include "base/iso8601.h"

#include <ctime>
#include <string>

namespace sluice {
namespace {

// n digits at s[pos...] into *out.
bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

bool At(std::string_view s, size_t pos, char c) { return pos < s.size() && s[pos] == c; }

}  // namespace

Result<int64_t> ParseIso8601(std::string_view text, Iso8601Forms forms) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  bool ok = Digits(text, 0, 4, &year) && At(text, 4, '-') && Digits(text, 5, 2, &month) &&
            At(text, 7, '-') && Digits(text, 8, 2, &day) && (At(text, 10, 'T') || At(text, 10, ' ')) &&
            Digits(text, 11, 2, &hour) && At(text, 13, ':') && Digits(text, 14, 2, &minute) &&
            At(text, 16, ':') && Digits(text, 17, 2, &second);
  bool bare = false;
  int offset_s = 0;
  if (ok) {
    std::string_view zone = text.substr(19);
    if (!zone.empty() && zone[0] == '.') {
      size_t n = 1;
      while (n < zone.size() && zone[n] >= '0' && zone[n] <= '9') ++n;
      zone.remove_prefix(n);
    }
    int oh = 0, om = 0;
    if (zone.empty()) {
      bare = true;
    } else if (zone == "Z" || zone == "+00:00") {
    } else if (forms.offsets && zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') &&
               Digits(zone, 1, 2, &oh) && zone[3] == ':' && Digits(zone, 4, 2, &om) && oh <= 23 &&
               om <= 59) {
      offset_s = (oh * 3600 + om * 60) * (zone[0] == '-' ? -1 : 1);
    } else {
      ok = false;
    }
  }
  if (!ok || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second > 60) {
    return InvalidArgumentError(std::string("not an ISO 8601 ") +
                                (forms.offsets || forms.local_when_bare ? "" : "UTC ") + "time (" +
                                std::to_string(text.size()) + " characters)");
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  if (bare && forms.local_when_bare) {
    tm.tm_isdst = -1;  // the zone's rule for that date
    const std::time_t t = std::mktime(&tm);
    if (t == std::time_t(-1)) {
      return InvalidArgumentError("a local time (" + std::to_string(text.size()) +
                                  " characters) the time zone cannot represent");
    }
    return static_cast<int64_t>(t);
  }
  return static_cast<int64_t>(timegm(&tm)) - offset_s;
}

}  // namespace sluice
