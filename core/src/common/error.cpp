#include "inductive/error.h"

namespace inductive {

const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kShapeMismatch:
      return "shape_mismatch";
    case ErrorCode::kBadModelFile:
      return "bad_model_file";
    case ErrorCode::kUnsupportedVersion:
      return "unsupported_version";
    case ErrorCode::kBackend:
      return "backend";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kInternal:
      return "internal";
    case ErrorCode::kCancelled:
      return "cancelled";
  }
  return "internal";
}

}  // namespace inductive
