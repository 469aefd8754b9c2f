// inductive/version.h - library version (from the root package.json) and build kind.
#pragma once

namespace inductive {

// "0.1.0"
const char* version() noexcept;
// "native", "native-cuda" or "wasm": which build produced a file (recorded as the model file's producer).
const char* build_kind() noexcept;
// "inductive <version> <build kind>"
const char* producer() noexcept;

}  // namespace inductive
