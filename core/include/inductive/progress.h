// inductive/progress.h - the one shape of progress reports across core: the stage a long call is in and the
// fraction of that stage done (0..1), called on the calling thread. To stop the call, throw from it (by convention
// Error{kCancelled}, as the bindings do when a JS callback returns false): core lets the exception through and
// leaves what it was computing unchanged. Per-epoch reports of trainers (GraphitEpoch, GraphitCvProgress) carry
// more than a fraction and have their own structs.
#pragma once

#include <functional>

namespace inductive {

using ProgressFn = std::function<void(const char* stage, double fraction)>;

}  // namespace inductive
