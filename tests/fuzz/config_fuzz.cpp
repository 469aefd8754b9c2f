// libFuzzer target: the JSON config sections of model files (OtkeConfig::from_json, GraphitConfig::from_json), which
// read whatever a downloaded file's header says. Malformed JSON is the JSON parser's business; on parsed JSON the
// strict readers must either throw inductive::Error (nothing else escapes) or return a config that validates and
// survives to_json -> from_json unchanged.
#include <nlohmann/json.hpp>

#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/graphit.h"
#include "inductive/otke.h"

namespace {

template <typename Config>
void round_trip(const nlohmann::json& j, const char* what) {
  Config c;
  try {
    c = Config::from_json(j);
  } catch (const inductive::Error&) {
    return;
  }
  c.validate();  // from_json promised a valid config: an Error here is a finding (uncaught)
  const nlohmann::json again = c.to_json();
  if (Config::from_json(again).to_json() != again) inductive::fuzz::finding(what, "to_json -> from_json changed it");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  round_trip<inductive::OtkeConfig>(j, "config_fuzz (otke)");
  round_trip<inductive::GraphitConfig>(j, "config_fuzz (graphit)");
  return 0;
}
