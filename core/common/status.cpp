#include "common/status.h"

namespace dpx::core {

const char* statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotApplicable:
      return "not applicable";
    case StatusCode::kNumericalIssue:
      return "numerical issue";
    case StatusCode::kNoConvergence:
      return "no convergence";
    case StatusCode::kCancelled:
      return "cancelled";
    case StatusCode::kIoError:
      return "i/o error";
    case StatusCode::kParseError:
      return "parse error";
    case StatusCode::kUnimplemented:
      return "unimplemented";
  }
  return "unknown";
}

}  // namespace dpx::core
