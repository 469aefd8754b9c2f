// inductive/progress.h - the one progress-and-cancel convention across core, in two shapes of one kind:
//   ProgressFn         (stage, fraction): the stage a long call is in and the fraction of it done (0..1);
//   EventFn<Event>     a structured report, for calls whose progress is more than a fraction: a trainer's epoch
//                      (OtkeEpoch, GraphitEpoch), a protocol's step (GraphitCvProgress), a solver's gap check
//                      (SolverProgress), a path's point (PathPoint).
// Both are called on the calling thread. To stop the call, throw from the callback, by convention
// Error{kCancelled} (as the bindings do when a JS callback returns false): core lets the exception through and
// leaves what it was computing unchanged. One exception, for a result worth keeping: the ERM solver, whose iterate
// is certified at every check, catches its own callback's Error{kCancelled} and returns that iterate with
// cancelled = true.
#pragma once

#include <functional>

namespace inductive {

using ProgressFn = std::function<void(const char* stage, double fraction)>;

template <typename Event>
using EventFn = std::function<void(const Event& event)>;

}  // namespace inductive
