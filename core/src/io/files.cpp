// Reading files (see inductive/files.h).
#include "inductive/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "inductive/error.h"

namespace inductive {

std::vector<uint8_t> read_file_bytes(const std::string& path, const char* what) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) INDUCTIVE_FAIL(ErrorCode::kIo, path, ": cannot open ", what, " (", std::strerror(errno), ")");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, &std::fclose);
  std::vector<uint8_t> bytes;
  for (;;) {
    const size_t old = bytes.size();
    bytes.resize(old + (size_t(1) << 20));
    const size_t got = std::fread(bytes.data() + old, 1, size_t(1) << 20, f);
    bytes.resize(old + got);
    if (got == 0) break;
  }
  // fopen succeeds on a directory; the read is what fails (EISDIR).
  if (std::ferror(f)) INDUCTIVE_FAIL(ErrorCode::kIo, path, ": cannot read ", what, " (", std::strerror(errno), ")");
  return bytes;
}

std::string read_file_text(const std::string& path, const char* what) {
  const std::vector<uint8_t> bytes = read_file_bytes(path, what);
  return std::string(bytes.begin(), bytes.end());
}

bool file_exists(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f != nullptr) std::fclose(f);
  return f != nullptr;
}

}  // namespace inductive
