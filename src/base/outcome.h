// Either a value or an error of a protocol's own kind (S3's, SQS's): what handlers return where
// a Status would lose the names and details the protocol gives its errors.
#pragma once

#include <utility>
#include <variant>

namespace tf {

template <typename T, typename E>
class Outcome {
 public:
  Outcome(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Outcome(E error) : v_(std::move(error)) {}  // NOLINT: implicit by design
  bool ok() const { return std::holds_alternative<T>(v_); }
  const E& error() const { return std::get<E>(v_); }
  T& value() { return std::get<T>(v_); }
  T* operator->() { return &std::get<T>(v_); }
  T& operator*() { return std::get<T>(v_); }

 private:
  std::variant<E, T> v_;
};

}  // namespace tf
