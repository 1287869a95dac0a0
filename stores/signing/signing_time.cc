#include "stores/signing/signing_time.h"

#include <chrono>
#include <cstdio>

namespace sluice {

namespace {

struct CivilTime {
  int year, month, day, hour, minute, second, weekday;  // weekday 0 = Sunday
};

CivilTime ToCivil(int64_t unix_seconds) {
  using namespace std::chrono;
  const sys_seconds tp{seconds{unix_seconds}};
  const sys_days day = floor<days>(tp);
  const year_month_day ymd{day};
  const int64_t secs_of_day = (tp - day).count();
  return CivilTime{int(ymd.year()),
                   int(unsigned(ymd.month())),
                   int(unsigned(ymd.day())),
                   int(secs_of_day / 3600),
                   int(secs_of_day / 60 % 60),
                   int(secs_of_day % 60),
                   int(weekday{day}.c_encoding())};
}

}  // namespace

bool IsSigningTimeValid(int64_t unix_seconds) {
  return unix_seconds >= 0 && unix_seconds <= kMaxSigningTime;
}

std::string FormatAmzDate(int64_t unix_seconds) {
  const CivilTime t = ToCivil(unix_seconds);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d%02d%02dT%02d%02d%02dZ", t.year, t.month, t.day,
                t.hour, t.minute, t.second);
  return buf;
}

std::string FormatHttpDate(int64_t unix_seconds) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const CivilTime t = ToCivil(unix_seconds);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[t.weekday],
                t.day, kMonths[t.month - 1], t.year, t.hour, t.minute, t.second);
  return buf;
}

}  // namespace sluice
