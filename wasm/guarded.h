// wasm/guarded.h - how every binding reports failure: as data, not as a thrown JS Error.
//
// Every entry point runs under `guarded`, which catches everything and records {code, message} for
// lastErrorCode()/lastErrorMessage(). We return a status instead of throwing a JS Error from C++ because a JS
// throw unwinds through wasm frames without running C++ destructors (the exception object and any string
// alive at that point leak), whereas returning from the catch block cleans up normally.
#pragma once

#include <emscripten/val.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>

#include "inductive/error.h"
#include "inductive/progress.h"

namespace inductive::wasm {

// The last failure, read by the TS layer right after a call reports one. Static storage: no growth per error.
struct LastError {
  std::string code, message;
};
inline LastError& last_error() {
  static LastError e;
  return e;
}

// Runs `body`; returns true on success, false after recording why it failed.
template <typename F>
bool guarded(F&& body) {
  LastError& e = last_error();
  try {
    body();
    return true;
  } catch (const inductive::Error& err) {
    e.code = inductive::error_code_name(err.code());
    e.message = err.what();
  } catch (const std::length_error&) {
    // A container asked for more elements than a 32-bit address space holds (e.g. the k-mer features of 10^6
    // sequences): the same limit as bad_alloc below, reached before any allocation.
    e.code = "out_of_memory";
    e.message = "inductive: the input needs more memory than wasm can address (2 GiB); use smaller inputs";
  } catch (const std::bad_alloc&) {
    // Not a core ErrorCode: wasm memory is capped (2 GiB), so this is a limit the caller can act on.
    e.code = "out_of_memory";
    e.message = "inductive: out of wasm memory (the heap cannot grow past 2 GiB); use smaller inputs";
  } catch (const std::exception& err) {
    e.code = "internal";
    e.message = std::string("inductive: unexpected error: ") + err.what();
  } catch (...) {
    e.code = "internal";
    e.message = "inductive: unexpected non-standard exception";
  }
  return false;
}

// A core progress callback that reports to the JS function `progress(stage, fraction)` (undefined: none) and stops
// the call when it returns false. Stopping throws a C++ Error{kCancelled} from inside the core, so the core unwinds
// normally (destructors run, nothing half-built is kept) and the call fails with code "cancelled", leaving the
// handles it was given as they were. The TS layer never lets a JS exception escape `progress` (see above).
inline inductive::ProgressFn js_progress(emscripten::val progress, std::string where) {
  return [progress, where](const char* stage, double fraction) {
    if (progress.isUndefined()) return;
    const emscripten::val answer = progress(std::string(stage), fraction);  // Embind passes strings, not char*
    if (answer.isFalse()) throw inductive::Error(inductive::ErrorCode::kCancelled, where + ": cancelled");
  };
}

// A byte offset in wasm memory, as the TS layer passes it, to a typed pointer.
template <typename T>
T* ptr(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

}  // namespace inductive::wasm
