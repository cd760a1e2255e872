#include "kazeia/status.h"

namespace kazeia {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kInvalidFile: return "invalid file";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kIo: return "i/o error";
    case ErrorCode::kOutOfRange: return "out of range";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kCancelled: return "cancelled";
  }
  return "unknown error";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(error_code_name(code_)) + ": " + message_;
}

}  // namespace kazeia
