// libFuzzer target: read_model on arbitrary bytes.
//
// Contract under test: read_model either returns a view that stays within the bytes it was given, or throws
// inductive::Error. Anything else (another exception type, a crash, a sanitizer report, a leak) is a bug. A file that
// reads must also survive a rewrite: write_model(view) reads back to an equal view, and rewriting that gives the
// same bytes again (the writer is deterministic).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "inductive/model_file.h"
#include "inductive/model_kinds.h"

namespace {

using inductive::ModelContents;
using inductive::ModelView;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "model_file_fuzz: %s\n", what.c_str());
  std::abort();
}

ModelContents contents_of(const ModelView& v) {
  ModelContents c;
  c.model = v.model;
  c.config = v.config;
  c.format_version = v.format_version;
  c.producer = v.producer;
  for (const auto& t : v.tensors) c.tensors.push_back({t.name, t.dtype, t.shape, v.data + t.begin});
  return c;
}

// Same metadata and the same tensors (by name: the writer reorders them) with the same bytes.
void expect_equal(const ModelView& a, const ModelView& b) {
  if (a.format_version != b.format_version || a.model != b.model || a.producer != b.producer) {
    finding("metadata changed in a rewrite");
  }
  if (a.config != b.config) finding("config changed in a rewrite: " + a.config.dump() + " vs " + b.config.dump());
  if (a.tensors.size() != b.tensors.size() || a.data_size != b.data_size) finding("tensor set changed in a rewrite");
  for (const auto& t : a.tensors) {
    const auto* u = b.find(t.name);
    if (u == nullptr || u->dtype != t.dtype || u->shape != t.shape || u->end - u->begin != t.end - t.begin) {
      finding("tensor '" + t.name + "' changed in a rewrite");
    }
    if (t.end > t.begin && std::memcmp(a.data + t.begin, b.data + u->begin, t.end - t.begin) != 0) {
      finding("tensor '" + t.name + "' data changed in a rewrite");
    }
  }
}

}  // namespace

// Files of core's kinds (otke, graphit) are checked against their schemas too: the fuzzer reaches that code.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  inductive::register_core_model_kinds();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Own the bytes in an allocation like read_file_bytes returns, so ASan sees its exact bounds and alignment holds.
  const std::vector<uint8_t> bytes(data, data + size);
  ModelView view;
  try {
    view = inductive::read_model(bytes.data(), bytes.size());
  } catch (const inductive::Error&) {
    return 0;
  }
  for (const auto& t : view.tensors) {
    try {  // the typed accessors may refuse misaligned data; that is an Error, not a bug
      const uint8_t* p = t.dtype == inductive::DType::kF32
                             ? reinterpret_cast<const uint8_t*>(view.f32(t.name, t.shape))
                             : reinterpret_cast<const uint8_t*>(view.i32(t.name, t.shape));
      volatile uint8_t sink = 0;
      for (uint64_t i = 0; i < t.end - t.begin; ++i) sink = sink ^ p[i];  // ASan: every byte is inside `bytes`
    } catch (const inductive::Error&) {
    }
  }
  (void)inductive::describe_model(view).size();

  std::vector<uint8_t> again;
  try {
    again = inductive::write_model(contents_of(view));
  } catch (const inductive::Error& e) {
    finding(std::string("a file that reads cannot be rewritten: ") + e.what());
  }
  const ModelView back = inductive::read_model(again.data(), again.size());  // an Error here escapes: a finding
  expect_equal(view, back);
  if (inductive::write_model(contents_of(back)) != again) finding("rewriting is not deterministic");
  return 0;
}
