// Status and Result<T>: how every fallible call in tensorfleet reports its outcome.
//
// The codes are few on purpose; each tells the caller what to do next:
//   kInvalidArgument     the request is wrong; do not retry it unchanged.
//   kNotFound            the named thing does not exist.
//   kAlreadyExists       a create collided with something that exists.
//   kFailedPrecondition  the system is not in a state that allows this; fix the state first.
//   kAborted             a lost lease, stale receipt or conflict; retry at a higher level.
//   kUnavailable         busy or down (database gone, shutting down); retry the same call.
//   kResourceExhausted   a quota or size limit was hit.
//   kUnauthenticated     no valid credential.
//   kPermissionDenied    a valid credential that may not do this.
//   kDeadlineExceeded    the operation ran out of time.
//   kInternal            a bug or an invariant broken; not the caller's fault.
// They map to HTTP statuses in exactly one place (api/errors.cc).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tf {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kAborted,
  kUnavailable,
  kResourceExhausted,
  kUnauthenticated,
  kPermissionDenied,
  kDeadlineExceeded,
  kInternal,
};

// "invalid_argument", "not_found", ...: the code as it appears on the wire.
std::string_view StatusCodeName(StatusCode code);
// The inverse of StatusCodeName; kInternal for a name it does not know.
StatusCode StatusCodeFromName(std::string_view name);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "not_found: queue 'jobs' does not exist"
  std::string ToString() const;

  // Returns this status with "context: " put before the message.
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}
inline Status Aborted(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status Unauthenticated(std::string m) {
  return {StatusCode::kUnauthenticated, std::move(m)};
}
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status DeadlineExceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

// Either a value or a non-OK status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "Result constructed from an OK status without a value");
    if (status_.ok()) status_ = Internal("Result built from OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace tf

#define TF_CONCAT_INNER(a, b) a##b
#define TF_CONCAT(a, b) TF_CONCAT_INNER(a, b)

// Returns from the current function if `expr` (a Status) is not OK.
#define TF_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::tf::Status tf_status_ = (expr);        \
    if (!tf_status_.ok()) return tf_status_; \
  } while (0)

// TF_ASSIGN_OR_RETURN(auto x, ResultReturningCall());
#define TF_ASSIGN_OR_RETURN(lhs, expr) \
  TF_ASSIGN_OR_RETURN_IMPL(TF_CONCAT(tf_result_, __LINE__), lhs, expr)
#define TF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
