// bench/bench_memory.h - the process's resident memory as Linux reports it (/proc/self/status), for the benchmarks'
// memory columns: the current resident set (VmRSS), its high-water mark (VmHWM), and a reset of the mark
// (/proc/self/clear_refs, "5") so that a mark can be taken per phase. -1 where /proc is not there (wasm, non-Linux).
#pragma once

#include <cstring>
#include <fstream>
#include <string>

namespace inductive::bench {

inline long proc_status_kb(const char* key) {
#if defined(__EMSCRIPTEN__)
  (void)key;  // under NODERAWFS /proc/self is Node's own process, not the wasm instance's memory
  return -1;
#else
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, std::strlen(key), key) == 0) return std::stol(line.substr(std::strlen(key) + 1));
  return -1;
#endif
}

inline void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Peak resident set since the start or the last reset_peak_rss(), in bytes (-1: unknown).
inline double peak_rss_bytes() {
  const long kb = proc_status_kb("VmHWM:");
  return kb < 0 ? -1.0 : 1024.0 * static_cast<double>(kb);
}

}  // namespace inductive::bench
