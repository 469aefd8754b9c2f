// inductive/atomic_file.h - outputs are written whole or not at all.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace inductive {

// Writes to "<path>.tmp-<pid>-<n>" in the same directory, fsyncs, then renames over `path`. On any failure the
// temp file is removed, `path` is untouched, and Error{kIo} says which step failed and why (strerror). Temp files
// of `path` left by processes that no longer run (killed mid-write) are removed first.
void write_file_atomic(const std::string& path, const uint8_t* data, size_t size);
inline void write_file_atomic(const std::string& path, const std::vector<uint8_t>& bytes) {
  write_file_atomic(path, bytes.data(), bytes.size());
}

// Several outputs of one command, all or nothing: every temp file is written before any is renamed, so a
// failure (e.g. an unwritable second path) leaves none of them behind.
void write_files_atomic(const std::vector<std::pair<std::string, std::vector<uint8_t>>>& files);

}  // namespace inductive
