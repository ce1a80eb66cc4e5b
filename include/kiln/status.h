#pragma once
// The one error channel for anything a user or a model can trigger.
//
// Functions that can fail on user input return Status or Result<T>. Messages name the thing that is
// wrong (node, op, tensor, dtype, shape) so that the CLI can print them as they are. Internal
// invariants use assert; they are never reachable from user input.

#include <fmt/format.h>

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kiln {

enum class StatusCode {
  kOk,
  kInvalidArgument,  // a bad flag, a wrong input shape/dtype/name
  kInvalidModel,     // the model violates ONNX (bad graph, bad attribute, shape mismatch)
  kUnsupported,      // valid, but kiln cannot do it (op, opset, dtype)
  kNotFound,         // a file or name that does not exist
  kIoError,          // reading or writing failed
  kCorrupt,          // a file is truncated or damaged
  kInternal,         // a bug in kiln
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidModel: node 'conv1' (Conv): ..." — the form the CLI prints.
  std::string to_string() const;

  // Prepends context, e.g. the node a shape error came from: "while importing 'm.onnx': ...".
  Status with_context(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename... Args>
Status make_status(StatusCode code, fmt::format_string<Args...> f, Args&&... args) {
  return Status(code, fmt::format(f, std::forward<Args>(args)...));
}
#define KILN_DEFINE_STATUS_MAKER(fn, code)                                        \
  template <typename... Args>                                                     \
  Status fn(fmt::format_string<Args...> f, Args&&... args) {                      \
    return Status(StatusCode::code, fmt::format(f, std::forward<Args>(args)...)); \
  }
KILN_DEFINE_STATUS_MAKER(invalid_argument, kInvalidArgument)
KILN_DEFINE_STATUS_MAKER(invalid_model, kInvalidModel)
KILN_DEFINE_STATUS_MAKER(unsupported, kUnsupported)
KILN_DEFINE_STATUS_MAKER(not_found, kNotFound)
KILN_DEFINE_STATUS_MAKER(io_error, kIoError)
KILN_DEFINE_STATUS_MAKER(corrupt, kCorrupt)
KILN_DEFINE_STATUS_MAKER(internal_error, kInternal)
#undef KILN_DEFINE_STATUS_MAKER

// A value or the Status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).is_ok() && "Result built from an OK status");
  }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOk;
    return is_ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & {
    assert(is_ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(is_ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(is_ok());
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

#define KILN_RETURN_IF_ERROR(expr)                  \
  do {                                              \
    ::kiln::Status kiln_status_ = (expr);           \
    if (!kiln_status_.is_ok()) return kiln_status_; \
  } while (0)

#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.is_ok()) return tmp.status();           \
  lhs = std::move(tmp).value()

// KILN_ASSIGN_OR_RETURN(auto x, f()); — returns f()'s Status when it failed.
#define KILN_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(kiln_result_, __LINE__), lhs, expr)
