// inductive/gzip.h - gzip (RFC 1952) inflating, written for this library so that the native and the WebAssembly
// builds read .gz datasets with the same code (Debian's zlib is native-only and Emscripten's zlib port needs a
// network download at build time), and dataset files read whole and inflated when they are gzip.
// A corrupt stream is Error{kBadModelFile} naming `what`; an unreadable file Error{kIo} (inductive/files.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace inductive {

bool is_gzip(const uint8_t* bytes, size_t size);
// Default bound on inflated sizes: 4 GiB, or the whole address space of a 32-bit (wasm) build.
inline constexpr size_t kMaxGunzipOutput =
    static_cast<size_t>(std::min<unsigned long long>(1ull << 32, std::numeric_limits<size_t>::max()));
// Inflates every member of a gzip stream; checks CRC-32 and sizes. `max_output` bounds the result (bombs).
std::vector<uint8_t> gunzip(const uint8_t* bytes, size_t size, const std::string& what,
                            size_t max_output = kMaxGunzipOutput);
// Reads a whole file, inflating it when it is gzip. A file that is absent but present compressed as path + ".gz"
// (data/ vendors the larger TU datasets so) reads as the file it holds, so readers ask for the usual names.
std::vector<uint8_t> read_dataset_bytes(const std::string& path);
// Whether read_dataset_bytes(path) finds a file (path, or path + ".gz").
bool dataset_file_exists(const std::string& path);

}  // namespace inductive
