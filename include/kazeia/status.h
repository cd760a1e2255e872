// Status and Result<T>: errors are values everywhere in Kazeia.
//
// A library function that can fail on input it does not control (a model
// file, an HTTP request, a tool's output) returns Status or Result<T> and
// never aborts. Messages name what failed and, where it applies, the expected
// and the actual value: "tensor 'blk.0.attn_q.weight': data offset 4096 +
// size 8192 exceeds file size 10000".
//
// This header is part of the public API and depends on the standard library
// only, so every layer (and every binding) shares one error type.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace kazeia {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // caller passed something unusable
  kInvalidFile,      // a file's content is malformed or inconsistent
  kUnsupported,      // well-formed, but not something we implement
  kNotFound,         // a file, key, tensor or token that does not exist
  kIo,               // the operating system refused (open, mmap, read)
  kOutOfRange,       // an index, size or context length past its limit
  kInternal,         // a bug: an invariant of our own code failed
  kTimeout,
  kCancelled,
};

const char* error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid file: tensor 'x': ..." — the code's name, then the message.
  std::string to_string() const;

  // Prefix the message with context, e.g. with_context("loading model.gguf").
  Status with_context(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status InvalidFile(std::string m) { return {ErrorCode::kInvalidFile, std::move(m)}; }
inline Status Unsupported(std::string m) { return {ErrorCode::kUnsupported, std::move(m)}; }
inline Status NotFound(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
inline Status IoError(std::string m) { return {ErrorCode::kIo, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {ErrorCode::kOutOfRange, std::move(m)}; }
inline Status Internal(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }

// Result<T> holds either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Internal("Result constructed from an ok Status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T value_or(T fallback) const& { return ok() ? *value_ : std::move(fallback); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace kazeia

// Propagation helpers. These two are the only macros in the error API: C++
// has no other way to return early from the caller.
#define KZ_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::kazeia::Status kz_status_ = (expr);         \
    if (!kz_status_.ok()) return kz_status_;      \
  } while (0)

#define KZ_CONCAT_INNER_(a, b) a##b
#define KZ_CONCAT_(a, b) KZ_CONCAT_INNER_(a, b)
#define KZ_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto KZ_CONCAT_(kz_result_, __LINE__) = (expr);                        \
  if (!KZ_CONCAT_(kz_result_, __LINE__).ok())                            \
    return KZ_CONCAT_(kz_result_, __LINE__).status();                    \
  lhs = std::move(KZ_CONCAT_(kz_result_, __LINE__)).value()
