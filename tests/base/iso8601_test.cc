#include "base/iso8601.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace sluice {
namespace {

constexpr int64_t kInstant = 1795705445;  // 2026-11-26T15:04:05Z

const Iso8601Forms kAws{};  // UTC only: "Z", "+00:00" or no zone
const Iso8601Forms kDatabricks{.offsets = true, .local_when_bare = true};
const Iso8601Forms kAzureCli{.local_when_bare = true};

std::string Error(std::string_view text, Iso8601Forms forms) {
  auto t = ParseIso8601(text, forms);
  return t.ok() ? "parsed as " + std::to_string(*t) : t.status().message();
}

// The process's time zone set to `tz` for the test's life.
class LocalZone {
 public:
  explicit LocalZone(const char* tz) {
    if (const char* old = std::getenv("TZ")) old_ = old;
    setenv("TZ", tz, 1);
    tzset();
  }
  ~LocalZone() {
    if (old_) {
      setenv("TZ", old_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  std::optional<std::string> old_;
};

TEST(ParseIso8601, TheUtcFormsEveryCallerAccepts) {
  for (const Iso8601Forms& forms : {kAws, kDatabricks, kAzureCli}) {
    EXPECT_EQ(*ParseIso8601("2026-11-26T15:04:05Z", forms), kInstant);
    EXPECT_EQ(*ParseIso8601("2026-11-26T15:04:05+00:00", forms), kInstant);
    EXPECT_EQ(*ParseIso8601("2026-11-26 15:04:05Z", forms), kInstant);
    EXPECT_EQ(*ParseIso8601("2026-11-26T15:04:05.123Z", forms), kInstant);
    EXPECT_EQ(*ParseIso8601("2026-11-26T15:04:05.123456789+00:00", forms), kInstant);
    EXPECT_EQ(*ParseIso8601("2026-11-26T15:04:05.Z", forms), kInstant);  // as before: no digits
  }
  // A leap second is the next minute's first, as timegm counts it.
  EXPECT_EQ(*ParseIso8601("2016-12-31T23:59:60Z"), 1483228800);
  EXPECT_EQ(*ParseIso8601("1970-01-01T00:00:00Z"), 0);
  // The day of the month is checked against 31 only (timegm rolls on).
  EXPECT_EQ(*ParseIso8601("2026-02-31T00:00:00Z"), *ParseIso8601("2026-03-03T00:00:00Z"));
}

TEST(ParseIso8601, WithoutAZoneItIsUtcForAwsAndTheLocalTimeForTheClis) {
  LocalZone zone("UTC+3");  // POSIX: three hours west of UTC
  EXPECT_EQ(*ParseIso8601("2026-11-26T15:04:05", kAws), kInstant);
  EXPECT_EQ(*ParseIso8601("2026-11-26 15:04:05.5", kAws), kInstant);
  EXPECT_EQ(*ParseIso8601("2026-11-26T12:04:05", kDatabricks), kInstant);
  EXPECT_EQ(*ParseIso8601("2026-11-26 12:04:05", kDatabricks), kInstant);
  EXPECT_EQ(*ParseIso8601("2026-11-26 12:04:05.123456", kAzureCli), kInstant);
  EXPECT_EQ(*ParseIso8601("2026-11-26T12:04:05", kAzureCli), kInstant);
  // A zone given wins over the local one.
  EXPECT_EQ(*ParseIso8601("2026-11-26T15:04:05Z", kDatabricks), kInstant);
}

TEST(ParseIso8601, OtherOffsetsOnlyWhereTheCallerTakesThem) {
  EXPECT_EQ(*ParseIso8601("2026-11-26T16:04:05+01:00", kDatabricks), kInstant);
  EXPECT_EQ(*ParseIso8601("2026-11-26T09:34:05.25-05:30", kDatabricks), kInstant);
  EXPECT_EQ(*ParseIso8601("2026-11-27T14:03:05+22:59", kDatabricks), kInstant);
  EXPECT_EQ(*ParseIso8601("2026-11-26T15:04:05-00:00", kDatabricks), kInstant);
  EXPECT_EQ(Error("2026-11-26T16:04:05+01:00", kAws),
            "not an ISO 8601 UTC time (25 characters)");
  EXPECT_EQ(Error("2026-11-26T15:04:05-00:00", kAws),
            "not an ISO 8601 UTC time (25 characters)");
  EXPECT_EQ(Error("2026-11-26T16:04:05+01:00", kAzureCli),
            "not an ISO 8601 time (25 characters)");
}

TEST(ParseIso8601, RefusesEveryOtherFormGivingItsLengthOnly) {
  for (const char* text : {"", "26/11/2026", "2026-11-26", "2026-11-26T15:04", "2026-11-26T15:04:5Z",
                           "2026-1-26T15:04:05Z", "2026-11-26t15:04:05Z", "2026-11-26T15:04:05z",
                           " 2026-11-26T15:04:05Z", "2026-11-26T15:04:05Z ", "2026-11-26T15:04:05ZZ",
                           "2026-11-26T15:04:05.12a", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
                           "2026-11-00T00:00:00Z", "2026-11-32T00:00:00Z", "2026-11-26T24:00:00Z",
                           "2026-11-26T15:60:00Z", "2026-11-26T15:04:61Z", "2026-11-26T15:04:05+0100",
                           "2026-11-26T15:04:05+01", "2026-11-26T15:04:05+24:00", "2026-11-26T15:04:05+01:60",
                           "2026-11-26T15:04:05 +01:00", "+2026-11-26T15:04:05Z", "2026-11-26T15:04:05UTC"}) {
    const std::string length = std::to_string(std::string_view(text).size()) + " characters)";
    EXPECT_EQ(Error(text, kAws), "not an ISO 8601 UTC time (" + length) << text;
    EXPECT_EQ(Error(text, kDatabricks), "not an ISO 8601 time (" + length) << text;
    EXPECT_EQ(Error(text, kAzureCli), "not an ISO 8601 time (" + length) << text;
  }
}

}  // namespace
}  // namespace sluice
