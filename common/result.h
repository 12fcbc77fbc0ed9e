// SPDX-License-Identifier: Apache-2.0
// Errors as values at module boundaries; harness/main.cc is the one place that
// turns them into messages and exit codes.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ingero {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the run itself failed (worker died, workload error)
inline constexpr int kExitBadInput = 2;  // the user asked for something invalid
inline constexpr int kExitInterrupted = 130;

struct Error {
  int exit_code = kExitFailure;
  std::string message;  // what is wrong, naming the offending input
  std::string hint;     // how to fix it; may be empty

  static Error bad_input(std::string message, std::string hint = {}) {
    return Error{kExitBadInput, std::move(message), std::move(hint)};
  }
  static Error failure(std::string message, std::string hint = {}) {
    return Error{kExitFailure, std::move(message), std::move(hint)};
  }
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}       // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}    // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void> equivalent.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace ingero
