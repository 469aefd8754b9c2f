// inductive/error.h - the one error type of the library.
//
// Bad input throws inductive::Error; nothing in core aborts on user input or returns NaN for it.
// Messages follow "where: what: got X, expected Y" so a user can fix the input without reading code.
// Internal invariants use INDUCTIVE_ASSERT (debug builds only).
#pragma once

#include <cassert>
#include <sstream>
#include <stdexcept>
#include <string>

namespace inductive {

enum class ErrorCode : int {
  kInvalidArgument = 1,     // a value out of range, NaN/Inf, empty input, inconsistent options
  kShapeMismatch = 2,       // arrays whose shapes do not agree
  kBadModelFile = 3,        // a model/array file that is truncated, corrupt or lies about itself
  kUnsupportedVersion = 4,  // a model file written by a newer (or impossible) format version
  kBackend = 5,             // a backend that is absent or failed (e.g. CUDA requested, no device)
  kIo = 6,                  // the operating system refused a read or a write
  kInternal = 7,            // a bug in inductive; please report it
  kCancelled = 8,           // the caller asked a long call to stop (its progress callback said so); nothing changed
};

// Stable lower-case names used by the CLI and by JS (`InductiveError.code`).
const char* error_code_name(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

namespace detail {
// Builds a message from any streamable pieces: error_message("sinkhorn: eps ", eps, " <= 0").
template <typename... Parts>
std::string error_message(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}
}  // namespace detail

}  // namespace inductive

// Throws inductive::Error{code, message pieces...} unless `cond` holds.
#define INDUCTIVE_CHECK(cond, code, ...)                                                            \
  do {                                                                                              \
    if (!(cond)) throw ::inductive::Error((code), ::inductive::detail::error_message(__VA_ARGS__)); \
  } while (0)

#define INDUCTIVE_FAIL(code, ...) throw ::inductive::Error((code), ::inductive::detail::error_message(__VA_ARGS__))

// Internal invariant: a violation is a bug, not bad input.
#define INDUCTIVE_ASSERT(cond) assert(cond)
