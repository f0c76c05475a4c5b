// Errors as values for the core API (the habit of Google's DP accounting library and Eigen's
// info()): no exception crosses a public core function, every failure says which parameter,
// which bound and why, so the CLI prints it as one line and the GUI shows it inline.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace dpx::core {

enum class StatusCode {
  kOk,
  kInvalidArgument,  // a value outside its accepted range, or an inconsistent combination
  kNotApplicable,    // the quantity is not defined for this accountant / these parameters
  kNumericalIssue,   // the result would not be a finite double (e.g. exceeds 1e300)
  kNoConvergence,    // an iterative method did not reach its tolerance
  kCancelled,        // the caller's cancellation token fired
  kIoError,          // a file could not be read or written
  kParseError,       // malformed input; the message names line/byte and reason
  kUnimplemented,
};

const char* statusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : m_code(code), m_message(std::move(message)) {}

  static Status ok() { return {}; }
  static Status invalidArgument(std::string message) { return {StatusCode::kInvalidArgument, std::move(message)}; }
  static Status notApplicable(std::string message) { return {StatusCode::kNotApplicable, std::move(message)}; }
  static Status numericalIssue(std::string message) { return {StatusCode::kNumericalIssue, std::move(message)}; }
  static Status noConvergence(std::string message) { return {StatusCode::kNoConvergence, std::move(message)}; }
  static Status cancelled(std::string message = "cancelled") { return {StatusCode::kCancelled, std::move(message)}; }
  static Status ioError(std::string message) { return {StatusCode::kIoError, std::move(message)}; }
  static Status parseError(std::string message) { return {StatusCode::kParseError, std::move(message)}; }
  static Status unimplemented(std::string message) { return {StatusCode::kUnimplemented, std::move(message)}; }

  bool isOk() const { return m_code == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return m_code; }
  const std::string& message() const { return m_message; }
  // Lets DPX_RETURN_IF_ERROR treat a Status and a Result alike.
  const Status& status() const { return *this; }

  // "context: message", so callers can say where a lower-level failure happened.
  Status withContext(const std::string& context) const {
    if (isOk()) return *this;
    return {m_code, context + ": " + m_message};
  }

 private:
  StatusCode m_code = StatusCode::kOk;
  std::string m_message;
};

// A value or the status saying why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_data(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : m_data(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(m_data).isOk() && "a Result holding a status must hold an error");
  }

  bool isOk() const { return std::holds_alternative<T>(m_data); }
  explicit operator bool() const { return isOk(); }

  const T& value() const& {
    assert(isOk());
    return std::get<T>(m_data);
  }
  T& value() & {
    assert(isOk());
    return std::get<T>(m_data);
  }
  T&& value() && {
    assert(isOk());
    return std::get<T>(std::move(m_data));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  T valueOr(T fallback) const { return isOk() ? std::get<T>(m_data) : std::move(fallback); }

  Status status() const { return isOk() ? Status::ok() : std::get<Status>(m_data); }

 private:
  std::variant<T, Status> m_data;
};

}  // namespace dpx::core

// Propagate a failed Status/Result from the current function.
#define DPX_RETURN_IF_ERROR(expr)                         \
  do {                                                    \
    if (auto dpx_status_ = (expr); !dpx_status_.isOk()) { \
      return ::dpx::core::Status(dpx_status_.status());   \
    }                                                     \
  } while (false)

// `lhs = value of expr`, or return its failed status from the current function:
//   DPX_ASSIGN_OR_RETURN(const double sigma, calibrate(...));
//   DPX_ASSIGN_OR_RETURN(config.knobs, knobsFromParser(parser));
#define DPX_ASSIGN_OR_RETURN(lhs, expr) DPX_ASSIGN_OR_RETURN_IMPL_(DPX_STATUS_CONCAT_(dpx_result_, __LINE__), lhs, expr)
#define DPX_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr)              \
  auto result = (expr);                                            \
  if (!result.isOk()) return ::dpx::core::Status(result.status()); \
  lhs = std::move(result).value()
#define DPX_STATUS_CONCAT_(a, b) DPX_STATUS_CONCAT_INNER_(a, b)
#define DPX_STATUS_CONCAT_INNER_(a, b) a##b
