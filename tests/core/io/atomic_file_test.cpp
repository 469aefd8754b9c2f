// Atomic writes (inductive/atomic_file.h): the output is the old file or the new one, never a mix, and the temp
// files of writers that were killed mid-write do not pile up next to it.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "inductive/atomic_file.h"

namespace inductive {
namespace {

bool exists(const std::string& path) { return std::ifstream(path).good(); }

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void touch(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(AtomicFile, ReplacesWholeAndRemovesTheTempFilesOfDeadWritersOnly) {
#if defined(__EMSCRIPTEN__)
  GTEST_SKIP() << "no processes to ask about under Node";
#else
  char dir_template[] = "/tmp/inductive-atomic-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::string out = dir + "/model.safetensors";
  write_file_atomic(out, std::vector<uint8_t>{'o', 'l', 'd'});
  EXPECT_EQ(read(out), "old");
  // A writer killed mid-write left its temp file (pid 2^22 + 1 is above Linux's pid_max default: never running);
  // another one is being written by a live process (this one).
  const std::string dead = out + ".tmp-4194305-0", live = out + ".tmp-" + std::to_string(::getpid()) + "-99";
  const std::string other = dir + "/other.safetensors.tmp-4194305-0";  // another output's: not ours to remove
  touch(dead, "torn");
  touch(live, "in progress");
  touch(other, "torn");
  write_file_atomic(out, std::vector<uint8_t>{'n', 'e', 'w'});
  EXPECT_EQ(read(out), "new");
  EXPECT_FALSE(exists(dead));
  EXPECT_TRUE(exists(live));
  EXPECT_TRUE(exists(other));
  for (const std::string& f : {out, live, other}) std::remove(f.c_str());
  ::rmdir(dir.c_str());
#endif
}

}  // namespace
}  // namespace inductive
