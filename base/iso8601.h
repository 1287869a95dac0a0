// ISO 8601 date-times as credential documents and CLIs write them, as unix
// seconds: the one parser behind every caller (AWS, GCS and Azure
// documents, the Databricks and Azure CLIs), each naming the forms it
// accepts. Pure functions; thread-safe (a local time reads the process's
// time zone, as mktime does).
//
// The core form is "YYYY-MM-DDTHH:MM:SS" (or a space for the T), with
// optional fractional seconds (".fff", any number of digits, ignored), then
// a zone: "Z" or "+00:00" always; another offset ("+01:00", "-05:30") only
// with `offsets`. Without a zone the time is UTC, or with `local_when_bare`
// the local time (as Python's datetime.fromisoformat reads a naive time).
#pragma once

#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace sluice {

struct Iso8601Forms {
  bool offsets = false;          // accept any "+HH:MM" / "-HH:MM" zone, not only "+00:00"
  bool local_when_bare = false;  // no zone: the local time, not UTC
};

// kInvalidArgument when `text` is not one of the forms: the message gives
// the text's length, never the text (callers parse fields of credential
// documents, whose values never go into error text).
Result<int64_t> ParseIso8601(std::string_view text, Iso8601Forms forms = {});

}  // namespace sluice
