#include "base/status.h"

namespace sluice {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kCorrupt: return "corrupt";
    case StatusCode::kHashMismatch: return "hash mismatch";
    case StatusCode::kUnimplemented: return "unimplemented";
    case StatusCode::kIoError: return "i/o error";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kPermissionDenied: return "permission denied";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kDeadlineExceeded: return "deadline exceeded";
    case StatusCode::kCancelled: return "cancelled";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  Status out(code_, std::string(context) + ": " + message_, os_error_);
  out.mark_ = mark_;
  return out;
}

Status Status::WithMark(StatusMark mark) const {
  Status out = *this;
  if (!ok()) out.mark_ = mark;
  return out;
}

Status InvalidArgumentError(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
Status NotFoundError(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
Status CorruptError(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
Status HashMismatchError(std::string m) { return {StatusCode::kHashMismatch, std::move(m)}; }
Status UnimplementedError(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
Status OutOfRangeError(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
Status InternalError(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
Status PermissionDeniedError(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
Status UnavailableError(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
Status DeadlineExceededError(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
Status CancelledError(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }

}  // namespace sluice
