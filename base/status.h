// Status and Result<T>: the error model of every layer below the C ABI.
//
// A Status is either OK or a code plus a message that says what failed and
// where (file, shard, offset, column, what was expected). Messages never hold
// secrets. Status and Result are values: copyable, movable, not thread-safe
// for concurrent mutation, safe to read from several threads.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sluice {

// Stable numbering: the C ABI maps these one to one onto SLUICE_E* codes.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // the caller's input is wrong (config, name, value)
  kNotFound = 2,         // a file, object, column or sample does not exist
  kCorrupt = 3,          // stored bytes are malformed or truncated
  kHashMismatch = 4,     // stored bytes do not match their recorded hash
  kUnimplemented = 5,    // valid but not supported (unknown encoding, ...)
  kIoError = 6,          // the operating system or a store failed
  kOutOfRange = 7,       // an index or offset past the end
  kPermissionDenied = 8, // credentials rejected
  kUnavailable = 9,      // retries exhausted, server gone
  kDeadlineExceeded = 10,
  kCancelled = 11,
  kInternal = 12,        // a bug in Sluice
};

// What a caller may have to tell apart beyond the code, without reading the
// message: a fact about the failure's cause that survives WithContext.
enum class StatusMark : unsigned char {
  kNone = 0,
  // The object or file is not the one its index or listing described (another
  // size or version): downloading it again cannot heal it.
  kSourceChanged = 1,
};

// Short lower-case name of a code, e.g. "corrupt". Never null; static storage.
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}
  // An operating-system failure: `os_error` is its errno (see ErrnoStatus).
  Status(StatusCode code, std::string message, int os_error)
      : code_(code), message_(std::move(message)), os_error_(os_error) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The errno of a failed system call (ErrnoStatus), kept through
  // WithContext; 0 for every other status. Lets a caller tell EEXIST or
  // ELOOP from other failures without reading the message.
  int os_error() const { return os_error_; }
  StatusMark mark() const { return mark_; }

  // Returns a copy carrying `mark` (OK stays OK, unmarked).
  Status WithMark(StatusMark mark) const;

  // "corrupt: shard.00003.mds: offset 812 past end of file (size 640)".
  std::string ToString() const;

  // Returns a copy with "context: " prepended to the message (OK stays OK).
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  int os_error_ = 0;
  StatusMark mark_ = StatusMark::kNone;
};

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status CorruptError(std::string message);
Status HashMismatchError(std::string message);
Status UnimplementedError(std::string message);
Status IoError(std::string message);
Status OutOfRangeError(std::string message);
Status InternalError(std::string message);
Status PermissionDeniedError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status CancelledError(std::string message);

// Predicates on a Status's code (false for OK).
inline bool IsNotFound(const Status& s) { return s.code() == StatusCode::kNotFound; }
inline bool IsCorrupt(const Status& s) { return s.code() == StatusCode::kCorrupt; }
inline bool IsCancelled(const Status& s) { return s.code() == StatusCode::kCancelled; }
inline bool IsDeadlineExceeded(const Status& s) {
  return s.code() == StatusCode::kDeadlineExceeded;
}

// A value or the Status that explains why there is none. Accessing value()
// of an error Result is a bug (asserts in debug builds).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit
  Result(Status status) : v_(std::move(status)) {      // NOLINT: implicit
    assert(!std::get<Status>(v_).ok() && "Result from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { assert(ok()); return std::get<T>(v_); }
  const T& value() const& { assert(ok()); return std::get<T>(v_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace sluice

#define SLUICE_CONCAT_INNER_(a, b) a##b
#define SLUICE_CONCAT_(a, b) SLUICE_CONCAT_INNER_(a, b)

// Returns the Status of `expr` from the enclosing function when it is not OK.
#define SLUICE_RETURN_IF_ERROR(expr)                     \
  do {                                                   \
    ::sluice::Status sluice_status_ = (expr);            \
    if (!sluice_status_.ok()) return sluice_status_;     \
  } while (0)

// `lhs` = the value of Result `expr`, or return its Status.
#define SLUICE_ASSIGN_OR_RETURN(lhs, expr) \
  SLUICE_ASSIGN_OR_RETURN_IMPL_(SLUICE_CONCAT_(sluice_result_, __LINE__), lhs, expr)
#define SLUICE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(tmp).value()
