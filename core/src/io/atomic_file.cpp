// Atomic writes: temp file in the same directory, fsync, rename. A crash or a full disk leaves either the old
// file or the new one at `path`, never a truncated mix.
#include "inductive/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "inductive/error.h"

namespace inductive {

namespace {

// Removes "<path>.tmp-<pid>-<n>" files left by processes that no longer run: a process killed (kill -9, power
// loss) between creating its temp file and renaming it cannot remove it itself. Those of live processes (another
// run writing the same output) are left alone. Best effort: failures are ignored.
void remove_stale_temps(const std::string& path) {
#if !defined(__EMSCRIPTEN__)
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string prefix = (slash == std::string::npos ? path : path.substr(slash + 1)) + ".tmp-";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (pid <= 0 || end == nullptr || *end != '-') continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
#else
  (void)path;
#endif
}

// Writes `data` to a fresh temporary file next to `path` (fsynced) and returns its name.
std::string write_temp(const std::string& path, const uint8_t* data, size_t size) {
  INDUCTIVE_CHECK(!path.empty(), ErrorCode::kInvalidArgument, "write: empty output path");
  remove_stale_temps(path);
  static std::atomic<unsigned> counter{0};
  const std::string tmp =
      path + ".tmp-" + std::to_string(static_cast<long>(::getpid())) + "-" + std::to_string(counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    INDUCTIVE_FAIL(ErrorCode::kIo, "write '", path, "': cannot create temporary file: ", std::strerror(errno));
  auto fail = [&](const char* step) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    INDUCTIVE_FAIL(ErrorCode::kIo, "write '", path, "': ", step, " failed: ", std::strerror(e));
  };
  size_t done = 0;
  while (done < size) {
    const ssize_t w = ::write(fd, data + done, size - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    done += static_cast<size_t>(w);
  }
#if !defined(__EMSCRIPTEN__)
  if (::fsync(fd) != 0) fail("fsync");
#endif
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    INDUCTIVE_FAIL(ErrorCode::kIo, "write '", path, "': close failed: ", std::strerror(e));
  }
  return tmp;
}

void rename_into_place(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    INDUCTIVE_FAIL(ErrorCode::kIo, "write '", path, "': rename failed: ", std::strerror(e));
  }
}

}  // namespace

void write_file_atomic(const std::string& path, const uint8_t* data, size_t size) {
  rename_into_place(write_temp(path, data, size), path);
}

void write_files_atomic(const std::vector<std::pair<std::string, std::vector<uint8_t>>>& files) {
  std::vector<std::string> temps;
  try {
    for (const auto& [path, bytes] : files) temps.push_back(write_temp(path, bytes.data(), bytes.size()));
  } catch (...) {
    for (const std::string& t : temps) ::unlink(t.c_str());
    throw;
  }
  // Every file is fully on disk: only renames remain, which fail only if the directory vanished meanwhile.
  for (size_t i = 0; i < files.size(); ++i) rename_into_place(temps[i], files[i].first);
}

}  // namespace inductive
