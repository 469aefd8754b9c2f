// inductive/files.h - the one place core reads files (native builds, and wasm builds with a file system). Writing
// is inductive/atomic_file.h's; gzip-aware dataset reading is inductive/gzip.h's read_dataset_bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace inductive {

// The whole file. Error{kIo} "<path>: cannot open <what> (<reason>)" when it cannot be opened, "<path>: cannot read
// <what> (<reason>)" when reading fails (a directory opens but does not read). The buffer comes from operator new,
// so it is aligned for the float views read_model hands out.
std::vector<uint8_t> read_file_bytes(const std::string& path, const char* what = "file");
std::string read_file_text(const std::string& path, const char* what = "file");

// Whether `path` names something this process can open for reading (optional inputs, checkpoints, caches).
bool file_exists(const std::string& path);

}  // namespace inductive
